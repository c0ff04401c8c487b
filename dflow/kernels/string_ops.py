"""String tensors' own ops: as_string, string_join (`tf.strings.join`), and `tf.strings`' length
and to_number.

A string tensor's value is a numpy object array of `bytes` (TF1's; `common.to_bytes_array` makes
one from str/bytes/U/S values, str encoded as UTF-8). Identity, Equal, NotEqual and Add
(concatenation) take strings in their own modules; other arithmetic refuses them at build time
with TF1's TypeError. The kernels here are elementwise, so the Dask path runs them per chunk and
fuses them with their neighbours like any elementwise op; they format or join element by element
in Python (np.frompyfunc): strings are host objects, there is no vectorized form to reach for.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape
from .common import ANY, STRING, apply_op, check_dtype, convert_to_tensor

__all__ = ["as_string", "string_join", "string_length", "string_to_number"]


def _objects(out):
    """A frompyfunc result (an array, or a bare object for 0-d inputs) as an object array."""
    if isinstance(out, np.ndarray):
        return out.astype(object, copy=False)
    arr = np.empty((), dtype=object)
    arr[()] = out
    return arr


def _host(x):
    """A chunk as a numpy array (string kernels format on the host; cupy inputs are copied)."""
    return x.get() if hasattr(x, "get") and not isinstance(x, np.ndarray) else np.asarray(x)


# ---- as_string -----------------------------------------------------------------------------------

_FILLS = (" ", "+", "-", "0", "#")  # printf flags TF1 accepts as `fill`


def _as_string_format(dtype, precision, scientific, shortest, width, fill):
    """TF1's printf format for `dtype` (as_string_op.cc), InvalidArgumentError for attrs it refuses."""
    if scientific and shortest:
        raise InvalidArgumentError(None, None, "AsString: Cannot select both scientific and shortest notation")
    if len(fill) > 1:
        raise InvalidArgumentError(None, None, "AsString: Fill string must be one or fewer characters")
    if fill and fill not in _FILLS:
        raise InvalidArgumentError(None, None, f'AsString: Fill argument not supported: "{fill}"')
    kind = dtype.np_dtype.kind
    if kind in "iu" or kind == "b":
        if precision > -1:
            raise InvalidArgumentError(None, None, f"AsString: precision not supported for datatype {dtype.name}")
        if scientific or shortest:
            raise InvalidArgumentError(None, None, "AsString: scientific and shortest format not supported for "
                                       f"datatype {dtype.name}")
    fmt = "%" + fill + (str(width) if width > -1 else "") + (f".{precision}" if precision > -1 else "")
    if kind in "iu":
        return fmt + "d"
    if kind in "fc":
        fmt += "g" if shortest else "e" if scientific else "f"
        return f"({fmt},{fmt})" if kind == "c" else fmt
    return fmt  # bool: "true"/"false"


def _as_string_infer(inputs, attrs):
    (x,) = inputs
    check_dtype(x, ANY, "AsString", arg="input")
    _as_string_format(x.dtype, attrs["precision"], attrs["scientific"], attrs["shortest"], attrs["width"],
                      attrs["fill"])
    return x.shape, dtypes.string


def _as_string_eager(xp, x, precision, scientific, shortest, width, fill):
    x = _host(x)
    fmt = _as_string_format(dtypes.as_dtype(x.dtype), precision, scientific, shortest, width, fill)
    kind = x.dtype.kind
    if kind == "b":
        def one(v):
            return b"true" if v else b"false"
    elif kind == "c":
        def one(v):
            return (fmt % (float(v.real), float(v.imag))).encode()
    elif kind == "f":
        bare = fmt.replace("0", "") if "0" in fill else fmt  # printf pads inf/nan with spaces, not zeros

        def one(v):
            v = float(v)
            return ((fmt if v == v and v not in (np.inf, -np.inf) else bare) % v).encode()
    else:
        def one(v):
            return (fmt % int(v)).encode()
    return _objects(np.frompyfunc(one, 1, 1)(x))


register_op("AsString", _as_string_infer, eager=_as_string_eager, elementwise=True)


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):  # noqa: A002
    """Each element of a numeric or bool tensor formatted as a string (TF1's `tf.as_string`).

    printf formatting: `%{fill}{width}.{precision}{f|e|g}` for floats (`scientific`: e, `shortest`:
    g), `%{fill}{width}d` for integers, "true"/"false" for bools, "(re,im)" for complex. `fill` is
    one of " ", "+", "-", "0", "#" (a printf flag, as TF1). InvalidArgumentError for attrs TF1
    refuses (both scientific and shortest; precision or notation for integers; another fill)."""
    x = convert_to_tensor(input)
    attrs = {"precision": int(precision), "scientific": bool(scientific), "shortest": bool(shortest),
             "width": int(width), "fill": str(fill)}
    return apply_op("AsString", [x], attrs, name=name, default_name="AsString")


# ---- string_join ---------------------------------------------------------------------------------


def _join_infer(inputs, attrs):
    if not inputs:
        raise ValueError("StringJoin: expects at least one input")
    shape = TensorShape([])
    for i, t in enumerate(inputs):
        check_dtype(t, STRING, "StringJoin", arg=f"inputs[{i}]")
        if t.shape.ndims == 0:
            continue
        if shape.ndims == 0:
            shape = t.shape
            continue
        try:
            shape = shape.merge_with(t.shape)
        except ValueError:
            raise ValueError(f"StringJoin: inputs must be scalars or all of one shape; got shapes {inputs[0].shape} "
                             f"and {t.shape} ({inputs[0].name!r}, {t.name!r})") from None
    return shape, dtypes.string


def _join_eager(xp, *parts, separator):
    parts = [_host(p) for p in parts]
    shapes = {p.shape for p in parts if p.ndim}
    if len(shapes) > 1:
        raise ValueError(f"StringJoin: inputs must be scalars or all of one shape; got shapes {sorted(shapes)}")
    sep = separator.encode() if isinstance(separator, str) else bytes(separator)
    return _objects(np.frompyfunc(lambda *p: sep.join(p), len(parts), 1)(*parts))


register_op("StringJoin", _join_infer, eager=_join_eager, elementwise=True)


def string_join(inputs, separator="", name=None):
    """The elementwise concatenation of a list of string tensors, `separator` between them (TF1's
    `tf.string_join`, `tf.strings.join`). Scalars are broadcast; the other inputs must have one
    shape (ValueError when the graph is built)."""
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(f"string_join: inputs must be a list of string tensors, got {type(inputs).__name__}")
    tensors = [convert_to_tensor(v, dtype=dtypes.string) if not hasattr(v, "dtype") else convert_to_tensor(v)
               for v in inputs]
    return apply_op("StringJoin", tensors, {"separator": str(separator)}, name=name, default_name="StringJoin")


# ---- length, to_number ---------------------------------------------------------------------------


def _length_infer(inputs, attrs):
    check_dtype(inputs[0], STRING, "StringLength", arg="input")
    if attrs["unit"] not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"StringLength: unit must be 'BYTE' or 'UTF8_CHAR', got {attrs['unit']!r}")
    return inputs[0].shape, dtypes.int32


def _length_eager(xp, x, unit):
    count = len if unit == "BYTE" else (lambda b: len(b.decode("utf-8")))
    return np.asarray(np.frompyfunc(count, 1, 1)(_host(x)), dtype=np.int32)


register_op("StringLength", _length_infer, eager=_length_eager, elementwise=True)


def string_length(input, name=None, unit="BYTE"):  # noqa: A002 - TF1 signature
    """The length of each string (int32): bytes, or Unicode characters with unit="UTF8_CHAR"."""
    return apply_op("StringLength", [convert_to_tensor(input, dtype=dtypes.string)], {"unit": unit}, name=name,
                    default_name="StringLength")


def _to_number_infer(inputs, attrs):
    check_dtype(inputs[0], STRING, "StringToNumber", arg="string_tensor")
    if attrs["out_type"] not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise TypeError(f"StringToNumber: out_type must be float32, float64, int32 or int64, got "
                        f"{attrs['out_type'].name}")
    return inputs[0].shape, attrs["out_type"]


def _to_number_eager(xp, x, out_type):
    parse = float if out_type.is_floating else int

    def one(b):
        try:
            return parse(b.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise InvalidArgumentError(None, None, f"StringToNumberOp could not correctly convert string: "
                                       f"{b.decode('utf-8', 'replace')}") from None

    return np.asarray(np.frompyfunc(one, 1, 1)(_host(x)), dtype=out_type.np_dtype)


register_op("StringToNumber", _to_number_infer, eager=_to_number_eager, elementwise=True)


def string_to_number(string_tensor, out_type=dtypes.float32, name=None):
    """Each string parsed as a number of `out_type` (TF1's `tf.string_to_number`); a string that is
    not one fails the run with InvalidArgumentError."""
    return apply_op("StringToNumber", [convert_to_tensor(string_tensor, dtype=dtypes.string)],
                    {"out_type": dtypes.as_dtype(out_type)}, name=name, default_name="StringToNumber")


not_differentiable("AsString", "StringJoin", "StringLength", "StringToNumber")
