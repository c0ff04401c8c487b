"""`bitcast` (TF1's Bitcast): the bytes of a tensor read as another numeric type, no copy of values.

TF's shape rule: the same item size keeps the shape; a smaller output type adds a last dimension of
size in_size / out_size; a larger one removes the last dimension, which must be out_size / in_size.
Mismatches name the types by TF's DataType numbers, as TF's messages do ("Cannot bitcast from 4 to
3"). On Dask each block is viewed in place (the last dim gathered when it is consumed). Like TF,
the op has no gradient (tf.gradients raises LookupError through a float input).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.registry import register_op
from ..graph.shape import TensorShape, unknown_shape
from ..graph.tensor_proto import dtype_to_tf
from .common import apply_op, check_dtype, convert_to_tensor

__all__ = ["bitcast"]

_KINDS = "iufc"  # TF's list: the real and complex numbers (and quantized types, which dflow lacks)


def _sizes(src, dst):
    return src.np_dtype.itemsize, dst.np_dtype.itemsize


def _cannot(src, dst):
    return f"Cannot bitcast from {dtype_to_tf(src)} to {dtype_to_tf(dst)}"


def _infer(inputs, attrs):
    (x,) = inputs
    dst = attrs["type"]
    check_dtype(x, _KINDS, "Bitcast", "input")
    if dst.np_dtype.kind not in _KINDS:
        allowed = ", ".join(d.name for d in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int64, dtypes.int32,
                                             dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.int8,
                                             dtypes.int16, dtypes.complex64, dtypes.complex128))
        raise TypeError(f"Value passed to parameter 'type' has DataType {dst.name} not in list of allowed values: "
                        f"{allowed}")
    src_size, dst_size = _sizes(x.dtype, dst)
    s = x.shape
    if src_size == dst_size:
        return TensorShape(s), dst
    if dst_size < src_size:
        return (s.concatenate([src_size // dst_size]) if s.ndims is not None else unknown_shape()), dst
    if s.ndims is None:
        return unknown_shape(), dst
    if s.ndims == 0:
        raise ValueError(f"Shape must be at least rank 1 but is rank 0 (Bitcast of {x.name!r} to {dst.name})")
    last, want = s.as_list()[-1], dst_size // src_size
    if last is not None and last != want:
        raise ValueError(f"{_cannot(x.dtype, dst)} due to shape. {last} does not match {want} (input {x.name!r} "
                         f"of shape {s})")
    return s[:-1], dst


def _view(x, dst):
    """x's bytes as `dst` ([..., k] in, [...] out when dst is k times wider; the reverse when narrower)."""
    src_size, dst_size = x.dtype.itemsize, np.dtype(dst).itemsize
    if dst_size > src_size and (x.ndim == 0 or x.shape[-1] * src_size != dst_size):
        raise InvalidArgumentError(None, None, _cannot(dtypes.as_dtype(x.dtype), dtypes.as_dtype(dst)))
    c = x.reshape(x.shape + (1,)) if dst_size < src_size else x
    c = c.copy() if not c.flags["C_CONTIGUOUS"] else c  # a view needs contiguous bytes
    out = c.view(dst)
    return out[..., 0] if dst_size > src_size else out


def _eager(xp, x, *, type):  # noqa: A002 - TF's attr name
    if hasattr(x, "view") and hasattr(x, "flags"):  # numpy and cupy view the bytes in place
        return _view(x, type.np_dtype)
    return xp.asarray(_view(np.asarray(x), type.np_dtype))  # the array API has no bit views: via the host


def _lower(ctx, x, *, type):  # noqa: A002
    x, dst = ctx.as_dask(x), type.np_dtype
    src_size, dst_size = x.dtype.itemsize, dst.itemsize
    if dst_size == src_size:
        return x.map_blocks(_view, dst, dtype=dst)
    if dst_size < src_size:
        k = src_size // dst_size
        return x.map_blocks(_view, dst, dtype=dst, new_axis=x.ndim, chunks=x.chunks + ((k,),))
    if x.ndim == 0 or x.shape[-1] * src_size != dst_size:
        raise InvalidArgumentError(None, None, _cannot(dtypes.as_dtype(x.dtype), type))
    x = x.rechunk({x.ndim - 1: -1})
    return x.map_blocks(_view, dst, dtype=dst, drop_axis=x.ndim - 1)


register_op("Bitcast", _infer, eager=_eager, lower=_lower)


def bitcast(input, type, name=None):  # noqa: A002 - TF1's signature
    """The bytes of `input` read as `type` (numeric types; TypeError for bool and string). Shapes:
    equal item sizes keep the shape; a narrower `type` appends a dim of size in_size/out_size; a
    wider one drops the last dim, which must be out_size/in_size (ValueError, or
    InvalidArgumentError at run time, otherwise)."""
    x = convert_to_tensor(input, name="input")
    return apply_op("Bitcast", [x], {"type": dtypes.as_dtype(type)}, name=name, default_name="Bitcast")
