"""`dflow.math`: TF1's `tf.math` namespace, the same functions as the top level and `tf.nn`.

TF1 code written for 1.13+ calls `tf.math.log`, `tf.math.squared_difference`, `tf.math.reduce_std`
...; each name here is the very function `dflow.<name>` (or `dflow.nn.<name>`), so both spellings
build the same ops. Names dflow does not implement are absent (AttributeError), not stubs.
"""

from . import nn
from .kernels import (
    array_composites,
    array_ops,
    bessel_ndtri_ops,
    complex_ops,
    cumulative_ops,
    data_dependent_ops,
    gather_ops,
    histogram_ops,
    index_ops,
    linalg_ops,
    manip_ops,
    math_composites,
    math_ops,
    reduction_ops,
    scatter_ops,
    segment_ops,
    special_ops,
)

_SOURCES = (math_ops, reduction_ops, manip_ops, index_ops, gather_ops, scatter_ops, array_ops, linalg_ops,
            data_dependent_ops, segment_ops, nn, cumulative_ops, histogram_ops, special_ops, array_composites,
            complex_ops, bessel_ndtri_ops, math_composites)

_NAMES = (
    "abs", "accumulate_n", "acos", "acosh", "add", "add_n", "angle", "argmax", "argmin", "asin", "asinh",
    "atan", "atan2", "atanh", "ceil", "conj", "cos", "cosh", "count_nonzero", "cumprod", "cumsum",
    "digamma", "divide", "divide_no_nan", "equal", "erf", "erfc", "exp", "expm1", "floor", "floordiv",
    "floormod", "greater", "greater_equal", "imag", "in_top_k", "invert_permutation", "is_finite", "is_inf",
    "is_nan", "is_non_decreasing", "is_strictly_increasing", "l2_normalize", "less", "less_equal", "lgamma",
    "log", "log1p", "log_sigmoid", "log_softmax", "logical_and", "logical_not", "logical_or", "logical_xor",
    "maximum", "minimum", "mod", "multiply", "negative", "not_equal", "polyval", "pow", "real", "reciprocal",
    "reduce_all", "reduce_any", "reduce_euclidean_norm", "reduce_logsumexp", "reduce_max", "reduce_mean",
    "reduce_min", "reduce_prod", "reduce_std", "reduce_sum", "reduce_variance", "rint", "round", "rsqrt",
    "scalar_mul", "segment_max", "segment_mean", "segment_min", "segment_prod", "segment_sum", "sigmoid",
    "sign", "sin", "sinh", "softmax", "softplus", "softsign", "sqrt", "square", "squared_difference",
    "subtract", "tan", "tanh", "top_k", "truediv", "truncatediv", "truncatemod", "unsorted_segment_max", "unsorted_segment_mean",
    "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_sqrt_n", "unsorted_segment_sum",
    "xdivy", "xlogy", "zero_fraction",
    "bincount", "confusion_matrix",
    "igamma", "igammac", "betainc", "zeta", "polygamma", "lbeta",
    "bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "ndtri", "erfinv", "erfcinv", "nextafter",
    "multiply_no_nan", "reciprocal_no_nan", "xlog1py", "cumulative_logsumexp", "approx_max_k", "approx_min_k",
)

for _name in _NAMES:
    for _module in _SOURCES:
        _fn = getattr(_module, _name, None)
        if callable(_fn) and not _name.startswith("_"):
            globals()[_name] = _fn
            break

__all__ = sorted(n for n in _NAMES if n in globals())  # noqa: PLE0605 - built from the list above

from .tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)
