"""TF1's string ops on string tensors: split (a SparseTensor), substr, strip, regex_replace,
regex_full_match, reduce_join, lower/upper, and decode_raw (bytes reinterpreted as numbers).

Values are object arrays of bytes (see string_ops.py). The elementwise ones (substr, strip, regex,
lower/upper) run chunk by chunk on Dask like any elementwise op; split, reduce_join and decode_raw
need whole inputs (an output size depends on every string) and run as one task
(whole_task.py). Regular expressions are TF's RE2 syntax as far as Python's `re` shares it; a
rewrite's "\\0" is the whole match, as RE2's. Run-time errors are TF1's InvalidArgumentErrors.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.ops import constant_value
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape
from .common import STRING, apply_op, check_dtype, convert_to_tensor
from .sparse_ops import SparseTensor
from .string_ops import _host, _objects
from .whole_task import lower_whole

# TF1's top-level names (`tf.strings` has the others: strings.py)
__all__ = ["string_split", "substr", "string_strip", "regex_replace", "reduce_join", "decode_raw"]


def _strings(x, name):
    return convert_to_tensor(x, dtype=None if hasattr(x, "dtype") else dtypes.string, name=name)


def _elementwise(op_type, fn, out_dtype=dtypes.string):
    """An elementwise op of one string input: `fn(bytes, **attrs)` per element."""

    def infer(inputs, attrs):
        check_dtype(inputs[0], STRING, op_type, arg="input")
        return inputs[0].shape, out_dtype

    def eager(xp, x, **attrs):
        out = np.frompyfunc(lambda b: fn(b, **attrs), 1, 1)(_host(x))
        return _objects(out) if out_dtype == dtypes.string else np.asarray(out, dtype=out_dtype.np_dtype)

    register_op(op_type, infer, eager=eager, elementwise=True)
    not_differentiable(op_type)


# ---- strip, lower, upper --------------------------------------------------------------------------

_elementwise("StringStrip", lambda b: b.strip())
_elementwise("StringLower", lambda b, encoding: b.decode("utf-8").lower().encode("utf-8") if encoding else b.lower())
_elementwise("StringUpper", lambda b, encoding: b.decode("utf-8").upper().encode("utf-8") if encoding else b.upper())


def string_strip(input, name=None):  # noqa: A002 - TF1 signature
    """Each string without its leading and trailing whitespace (TF1's `tf.string_strip`)."""
    return apply_op("StringStrip", [_strings(input, "input")], {}, name=name, default_name="StringStrip")


def _case(op_type, input, encoding, name):  # noqa: A002
    if encoding not in ("", "utf-8"):
        raise ValueError(f"{op_type}: encoding must be '' or 'utf-8', got {encoding!r}")
    return apply_op(op_type, [_strings(input, "input")], {"encoding": encoding}, name=name, default_name=op_type)


def string_lower(input, encoding="", name=None):  # noqa: A002
    """Each string in lower case (`tf.strings.lower`): ASCII letters, or every letter with
    encoding="utf-8"."""
    return _case("StringLower", input, encoding, name)


def string_upper(input, encoding="", name=None):  # noqa: A002
    """Each string in upper case (`tf.strings.upper`); see `string_lower`."""
    return _case("StringUpper", input, encoding, name)


# ---- regex_replace, regex_full_match ------------------------------------------------------------


def _compile(pattern, op_type):
    try:
        return re.compile(pattern.encode() if isinstance(pattern, str) else pattern)
    except re.error as e:
        raise InvalidArgumentError(None, None, f"{op_type}: Invalid pattern: {pattern}, error: {e}") from None


def _rewrite(rewrite):
    """RE2's rewrite as Python's: \\0 is the whole match."""
    r = rewrite.encode() if isinstance(rewrite, str) else rewrite
    return re.sub(rb"\\0", rb"\\g<0>", r)


def _replace(b, pattern, rewrite, replace_global):
    return _compile(pattern, "RegexReplace").sub(_rewrite(rewrite), b, count=0 if replace_global else 1)


_elementwise("RegexReplace", _replace)
_elementwise("RegexFullMatch", lambda b, pattern: _compile(pattern, "RegexFullMatch").fullmatch(b) is not None,
             dtypes.bool)


def _static_text(v, what, fn):
    """A pattern or rewrite: a str/bytes, or a string tensor known when the graph is built."""
    if isinstance(v, (str, bytes)):
        return v.decode() if isinstance(v, bytes) else v
    value = constant_value(convert_to_tensor(v)) if hasattr(v, "dtype") else None
    if value is None or np.asarray(value).ndim:
        raise TypeError(f"{fn}: `{what}` must be a string or a scalar string known when the graph is built in "
                        f"dflow, got {v!r}")
    value = np.asarray(value).item()
    return value.decode() if isinstance(value, bytes) else str(value)


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """Each string with the matches of `pattern` replaced by `rewrite` (\\1 a group, \\0 the match);
    only the first match unless `replace_global` (TF1's `tf.regex_replace`)."""
    pattern = _static_text(pattern, "pattern", "regex_replace")
    _compile(pattern, "RegexReplace")
    attrs = {"pattern": pattern, "rewrite": _static_text(rewrite, "rewrite", "regex_replace"),
             "replace_global": bool(replace_global)}
    return apply_op("RegexReplace", [_strings(input, "input")], attrs, name=name, default_name="RegexReplace")


def regex_full_match(input, pattern, name=None):  # noqa: A002
    """Whether each whole string matches `pattern` (bool; `tf.strings.regex_full_match`)."""
    pattern = _static_text(pattern, "pattern", "regex_full_match")
    _compile(pattern, "RegexFullMatch")
    return apply_op("RegexFullMatch", [_strings(input, "input")], {"pattern": pattern}, name=name,
                    default_name="RegexFullMatch")


# ---- substr -------------------------------------------------------------------------------------


def _substr_infer(inputs, attrs):
    x, pos, length = inputs
    check_dtype(x, STRING, "Substr", arg="input")
    for t, arg in ((pos, "pos"), (length, "len")):
        if t.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"Substr: {arg} must be int32 or int64, got {t.dtype.name}")
    if pos.dtype != length.dtype:
        raise TypeError(f"Substr: pos and len must have one dtype, got {pos.dtype.name} and {length.dtype.name}")
    if attrs["unit"] not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"Substr: unit must be 'BYTE' or 'UTF8_CHAR', got {attrs['unit']!r}")
    shape = x.shape
    for t in (pos, length):
        if t.shape.ndims:
            try:
                shape = TensorShape(np.broadcast_shapes(tuple(d or 1 for d in shape.as_list()),
                                                        tuple(d or 1 for d in t.shape.as_list()))) \
                    if shape.is_fully_defined() and t.shape.is_fully_defined() else shape.merge_with(t.shape)
            except ValueError:
                raise ValueError(f"Substr: pos and len must be scalars or broadcast with input; got shapes "
                                 f"{x.shape}, {pos.shape}, {length.shape}") from None
    return shape, dtypes.string


def _substr_eager(xp, x, pos, length, unit):
    x, pos, length = _host(x), np.asarray(_host(pos)), np.asarray(_host(length))
    x, pos, length = np.broadcast_arrays(x, pos, length)
    out = np.empty(x.shape, dtype=object)
    for i in np.ndindex(x.shape):
        s = x[i] if unit == "BYTE" else x[i].decode("utf-8")
        p, n = int(pos[i]), int(length[i])
        if p > len(s) or p < -len(s):
            where = int(np.ravel_multi_index(i, x.shape)) if x.ndim else 0
            raise InvalidArgumentError(None, None, f"pos {p} out of range for string {x[i]!r} at index {where}")
        p = p + len(s) if p < 0 else p
        part = s[p:p + max(n, 0)]
        out[i] = part if unit == "BYTE" else part.encode("utf-8")
    return out


register_op("Substr", _substr_infer, eager=_substr_eager, elementwise=True)
not_differentiable("Substr")


def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002 - TF1 signature
    """The substring of `len` bytes (or UTF-8 characters with unit="UTF8_CHAR") from `pos` of each
    string (TF1's `tf.substr`, `tf.strings.substr`); `pos` < 0 counts from the end; pos/len are
    scalars or of the input's shape. InvalidArgumentError when `pos` is past a string's end."""
    pos = convert_to_tensor(pos, name="pos")
    length = convert_to_tensor(len, dtype=pos.dtype if not hasattr(len, "dtype") else None, name="len")
    return apply_op("Substr", [_strings(input, "input"), pos, length], {"unit": unit}, name=name,
                    default_name="Substr")


# ---- string_split --------------------------------------------------------------------------------


def _split_infer(inputs, attrs):
    x = inputs[0]
    check_dtype(x, STRING, "StringSplit", arg="input")
    if x.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {x.shape.ndims} for 'StringSplit' (input has shape "
                         f"{x.shape})")
    return [(TensorShape([None, 2]), dtypes.int64), (TensorShape([None]), dtypes.string),
            (TensorShape([2]), dtypes.int64)]


def _tokens_v1(b, delimiter, skip_empty):
    """TF1's StringSplit: every byte of `delimiter` splits; an empty delimiter splits into bytes."""
    if not delimiter:
        return [b[i:i + 1] for i in range(len(b))]
    parts = re.split(b"[" + re.escape(delimiter) + b"]", b) if b else []
    return [p for p in parts if p] if skip_empty else parts


def _tokens_v2(b, sep, maxsplit):
    """StringSplitV2 (`tf.strings.split`): Python's bytes.split (sep None: runs of whitespace)."""
    return b.split(sep, maxsplit) if sep else b.split(None, maxsplit)


def _split_eager(xp, x, *, version, sep, skip_empty=True, maxsplit=-1):
    x = _host(x)
    if x.ndim != 1:
        raise InvalidArgumentError(None, None, f"input must be a vector, got shape: {list(x.shape)}")
    sep = sep.encode() if isinstance(sep, str) else sep
    rows = [_tokens_v1(b, sep, skip_empty) if version == 1 else _tokens_v2(b, sep or None, maxsplit) for b in x]
    counts = np.asarray([len(r) for r in rows], dtype=np.int64)
    n = int(counts.sum())
    indices = np.stack([np.repeat(np.arange(len(rows), dtype=np.int64), counts),
                        np.arange(n, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)], axis=1)
    values = np.empty(n, dtype=object)
    values[:] = [t for r in rows for t in r]
    return indices.reshape(n, 2), values, np.asarray([len(rows), counts.max() if n else 0], dtype=np.int64)


register_op("StringSplit", _split_infer, eager=_split_eager, lower=lower_whole(_split_eager), num_outputs=3)
not_differentiable("StringSplit")


def string_split(source, delimiter=" ", skip_empty=True, name=None):
    """The tokens of each string of the vector `source`, as a SparseTensor [len(source), most
    tokens] of strings (TF1's `tf.string_split`): every character of `delimiter` separates (an empty
    delimiter splits into bytes); empty tokens are dropped unless `skip_empty=False`."""
    delimiter = delimiter.decode() if isinstance(delimiter, bytes) else str(delimiter)
    outs = apply_op("StringSplit", [_strings(source, "source")],
                    {"version": 1, "sep": delimiter, "skip_empty": bool(skip_empty)}, name=name,
                    default_name="StringSplit")
    return SparseTensor(*outs)


def strings_split(source=None, sep=None, maxsplit=-1, result_type="SparseTensor", name=None, input=None):  # noqa: A002
    """`tf.strings.split` (TF 1.15): each string of a vector split on `sep` (a whole string; None:
    runs of whitespace), at most `maxsplit` times, as a SparseTensor (result_type="RaggedTensor"
    is not in dflow: ValueError)."""
    source = input if source is None else source
    if result_type != "SparseTensor":
        raise ValueError(f"strings.split: result_type {result_type!r} is not available in dflow (RaggedTensor is "
                         "not implemented); use result_type='SparseTensor'")
    sep = "" if sep is None else (sep.decode() if isinstance(sep, bytes) else str(sep))
    outs = apply_op("StringSplit", [_strings(source, "input")], {"version": 2, "sep": sep, "maxsplit": int(maxsplit)},
                    name=name, default_name="StringSplit")
    return SparseTensor(*outs)


# ---- reduce_join ---------------------------------------------------------------------------------


def _reduce_join_infer(inputs, attrs):
    x = inputs[0]
    check_dtype(x, STRING, "ReduceJoin", arg="inputs")
    axes, keep = attrs["axes"], attrs["keep_dims"]
    if x.shape.ndims is None:
        return TensorShape(None), dtypes.string
    rank = x.shape.ndims
    axes = list(range(rank)) if axes is None else axes
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions.")
    axes = {a % rank for a in axes}
    dims = x.shape.as_list()
    return TensorShape([1 if i in axes else d for i, d in enumerate(dims)] if keep else
                       [d for i, d in enumerate(dims) if i not in axes]), dtypes.string


def _reduce_join_eager(xp, x, axes, keep_dims, separator):
    x = _host(x)
    rank = x.ndim
    axes = sorted({a % rank for a in (range(rank) if axes is None else axes)}) if rank else []
    kept = [i for i in range(rank) if i not in axes]
    moved = np.transpose(x, kept + axes).reshape([x.shape[i] for i in kept] + [-1])
    sep = separator.encode()
    out = np.empty(moved.shape[:-1], dtype=object)
    for i in np.ndindex(out.shape):
        out[i] = sep.join(moved[i])
    if keep_dims:
        out = out.reshape([1 if i in axes else d for i, d in enumerate(x.shape)])
    return out


register_op("ReduceJoin", _reduce_join_infer, eager=_reduce_join_eager, lower=lower_whole(_reduce_join_eager))
not_differentiable("ReduceJoin")


def reduce_join(inputs, axis=None, keep_dims=None, separator="", name=None, reduction_indices=None, keepdims=None):
    """The strings joined with `separator` along `axis` (an int, a list, or None: every axis), in
    row-major order (TF1's `tf.reduce_join`, `tf.strings.reduce_join`)."""
    axis = reduction_indices if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    axes = None if axis is None else [int(a) for a in np.atleast_1d(np.asarray(axis)).tolist()]
    return apply_op("ReduceJoin", [_strings(inputs, "inputs")],
                    {"axes": axes, "keep_dims": keep, "separator": str(separator)}, name=name,
                    default_name="ReduceJoin")


# ---- decode_raw ----------------------------------------------------------------------------------

_RAW_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.uint16, dtypes.uint8,
              dtypes.int16, dtypes.int8, dtypes.int64, dtypes.complex64, dtypes.complex128, dtypes.bool)


def _decode_raw_infer(inputs, attrs):
    check_dtype(inputs[0], STRING, "DecodeRaw", arg="bytes")
    out = attrs["out_type"]
    if out not in _RAW_TYPES:
        raise TypeError(f"Value passed to parameter 'out_type' has DataType {out.name} not in list of allowed values: "
                        + ", ".join(d.name for d in _RAW_TYPES))
    shape = inputs[0].shape
    return (TensorShape(None) if shape.ndims is None else shape.concatenate([None])), out


def _decode_raw_eager(xp, x, out_type, little_endian):
    x = _host(x)
    dt = np.dtype(out_type.np_dtype).newbyteorder("<" if little_endian else ">")
    flat = x.reshape(-1)
    sizes = {len(b) for b in flat}
    if len(sizes) > 1:
        first = len(flat[0])
        k = next(i for i, b in enumerate(flat) if len(b) != first)
        raise InvalidArgumentError(None, None, f"DecodeRaw requires input strings to all be the same size, but element "
                                   f"{k} has size {first} != {len(flat[k])}")
    size = sizes.pop() if sizes else 0
    if size % dt.itemsize:
        raise InvalidArgumentError(None, None, f"Input to DecodeRaw has length {size} that is not a multiple of "
                                   f"{dt.itemsize}, the size of {out_type.name}")
    data = b"".join(flat)
    out = np.frombuffer(data, dtype=dt).astype(out_type.np_dtype)
    return out.reshape(x.shape + (size // dt.itemsize,))


register_op("DecodeRaw", _decode_raw_infer, eager=_decode_raw_eager, lower=lower_whole(_decode_raw_eager))
not_differentiable("DecodeRaw")


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):  # noqa: A002
    """Each string's bytes reinterpreted as a vector of `out_type` (TF1's `tf.decode_raw`): the
    output has the input's shape plus one dimension. InvalidArgumentError when the strings differ in
    length or a length is not a multiple of the dtype's size."""
    x = bytes if input_bytes is None else input_bytes
    if out_type is None:
        raise TypeError("decode_raw() missing required argument: 'out_type'")
    return apply_op("DecodeRaw", [_strings(x, "bytes")], {"out_type": dtypes.as_dtype(out_type),
                                                          "little_endian": bool(little_endian)},
                    name=name, default_name="DecodeRaw")
