"""Files as ops (TF1's `tf.read_file`, `tf.write_file`, `tf.matching_files`, also under `tf.io`).

ReadFile reads a whole file into a scalar string when the op runs; WriteFile (stateful: it runs
when fetched or named in control_dependencies) writes one atomically (a temporary renamed over
the file: a reader never sees half of it), creating missing parent directories as TF does;
MatchingFiles globs one or several patterns, the names sorted (none: an empty vector). They run on
the host in one task. A missing file is NotFoundError, as TF1.
"""

from __future__ import annotations

import glob
import os

import numpy as np

from ..errors import FailedPreconditionError, NotFoundError
from ..graph import dtypes
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape
from ..storage.files import write_file as _atomic_write
from .common import STRING, apply_op, check_dtype, convert_to_tensor
from .string_ops import _host
from .whole_task import lower_whole

__all__ = ["read_file", "write_file", "matching_files"]


def _name(v):
    v = np.asarray(_host(v)).item() if not isinstance(v, (bytes, str)) else v
    return os.fsdecode(v)


def _scalar_string(t, op_type, arg):
    check_dtype(t, STRING, op_type, arg=arg)
    if t.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {t.shape.ndims} for '{op_type}' ({arg} has shape "
                         f"{t.shape})")


def _read_infer(inputs, attrs):
    _scalar_string(inputs[0], "ReadFile", "filename")
    return TensorShape([]), dtypes.string


def _read_eager(xp, filename):
    path = _name(filename)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise FailedPreconditionError(None, None, f"{path}; Is a directory") from None
    out = np.empty((), dtype=object)
    out[()] = data
    return out


register_op("ReadFile", _read_infer, eager=_read_eager, lower=lower_whole(_read_eager), stateful=True)


def _write_infer(inputs, attrs):
    _scalar_string(inputs[0], "WriteFile", "filename")
    _scalar_string(inputs[1], "WriteFile", "contents")
    return TensorShape([]), dtypes.bool


def _write_eager(xp, filename, contents):
    path = _name(filename)
    data = np.asarray(_host(contents)).item()
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    _atomic_write(path, data, f"WriteFile {path!r}")
    return np.asarray(True)


register_op("WriteFile", _write_infer, eager=_write_eager, lower=lower_whole(_write_eager), stateful=True)


def _match_infer(inputs, attrs):
    check_dtype(inputs[0], STRING, "MatchingFiles", arg="pattern")
    if inputs[0].shape.ndims is not None and inputs[0].shape.ndims > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {inputs[0].shape.ndims} for 'MatchingFiles'")
    return TensorShape([None]), dtypes.string


def _match_eager(xp, pattern):
    names = sorted(n for p in np.asarray(_host(pattern), dtype=object).reshape(-1)
                   for n in glob.glob(os.fsdecode(p)))
    out = np.empty(len(names), dtype=object)
    out[:] = [os.fsencode(n) for n in names]
    return out


register_op("MatchingFiles", _match_infer, eager=_match_eager, lower=lower_whole(_match_eager), stateful=True)
not_differentiable("ReadFile", "WriteFile", "MatchingFiles")


def _string(v, name):
    return convert_to_tensor(v, dtype=None if hasattr(v, "dtype") else dtypes.string, name=name)


def read_file(filename, name=None):
    """The whole contents of the file `filename` (a scalar string tensor) as a scalar string,
    read when the op runs. NotFoundError for a missing file."""
    return apply_op("ReadFile", [_string(filename, "filename")], {}, name=name, default_name="ReadFile")


def write_file(filename, contents, name=None):
    """An Operation writing the scalar string `contents` to `filename` (atomically; missing parent
    directories created). It runs when fetched or named in control_dependencies."""
    out = apply_op("WriteFile", [_string(filename, "filename"), _string(contents, "contents")], {}, name=name,
                   default_name="WriteFile")
    return out.op


def matching_files(pattern, name=None):
    """The sorted names of the files matching a glob `pattern` (a scalar or a vector of patterns),
    as a string vector (empty when nothing matches)."""
    return apply_op("MatchingFiles", [_string(pattern, "pattern")], {}, name=name, default_name="MatchingFiles")
