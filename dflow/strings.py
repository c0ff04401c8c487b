"""`dflow.strings`: TF1's `tf.strings` namespace (1.13+), the string ops of `dflow.kernels.string_ops`,
`text_ops` and `hash_ops`.

`join` is `dflow.string_join`, `as_string` is `dflow.as_string`, `to_number` is
`dflow.string_to_number`, `split` is TF 1.15's `tf.strings.split` (a whole separator, a
SparseTensor); names dflow does not implement are absent (AttributeError), not stubs.
"""

from .graph import dtypes
from .kernels.hash_ops import (
    string_to_hash_bucket,
    string_to_hash_bucket_fast,
    string_to_hash_bucket_strong,
)
from .kernels.string_compose_ops import format, ngrams, unicode_transcode, unsorted_segment_join
from .kernels.string_ops import as_string, string_join, string_length, string_to_number
from .kernels.text_ops import (
    reduce_join,
    regex_full_match,
    regex_replace,
    string_lower,
    string_strip,
    string_upper,
    strings_split,
    substr,
)


def join(inputs, separator="", name=None):
    """The elementwise concatenation of string tensors with `separator` (TF1's `tf.strings.join`)."""
    return string_join(inputs, separator=separator, name=name)


def length(input, name=None, unit="BYTE"):  # noqa: A002 - TF1 signature
    """The length of each string, in bytes or (unit="UTF8_CHAR") Unicode characters (int32)."""
    return string_length(input, name=name, unit=unit)


def to_number(string_tensor, out_type=None, name=None):
    """Each string parsed as a number of `out_type` (default float32)."""
    return string_to_number(string_tensor, out_type=out_type or dtypes.float32, name=name)


split = strings_split
strip = string_strip
lower = string_lower
upper = string_upper
to_hash_bucket = string_to_hash_bucket
to_hash_bucket_fast = string_to_hash_bucket_fast
to_hash_bucket_strong = string_to_hash_bucket_strong

__all__ = ["as_string", "join", "length", "to_number", "split", "strip", "substr", "regex_replace",
           "regex_full_match", "reduce_join", "lower", "upper", "to_hash_bucket", "to_hash_bucket_fast",
           "to_hash_bucket_strong"]
__all__ += ["ngrams", "unsorted_segment_join", "format", "unicode_transcode"]

from .tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)  # a TF1 name dflow lacks says so (docs/tf1_coverage.md)
