"""Scatter-shaped ops and the gradients of the index ops built from them.

`StridedSliceGrad` puts a slice's gradient back into zeros of the input's shape;
`unsorted_segment_sum` adds rows into segments (the gradient of `gather`). The gradient rules of
StridedSlice, GatherV2 and TopKV2 live here, next to the ops they are made of.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph.evaluate import namespace
from ..graph.ops import constant_value
from ..graph.registry import def_grad, not_differentiable, register_op
from ..graph.shape import TensorShape, unknown_shape
from . import gather_ops, index_ops
from .common import apply_op, convert_to_tensor

__all__ = ["unsorted_segment_sum"]

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _error(msg):
    return InvalidArgumentError(None, None, f"StridedSliceGrad: {msg}")


def _slice_index(in_shape, begin, end, strides, masks):
    """The numpy index tuple of a strided slice of an array of shape `in_shape`."""
    b, e, s = (list(int(v) for v in np.asarray(a).reshape(-1)) for a in (begin, end, strides))
    return tuple(index_ops._entry_index(kind, i, d, None if d is None else int(in_shape[d]), b, e, s,
                                        masks["begin_mask"], masks["end_mask"], _error)[0]
                 for kind, i, d in index_ops._expand_spec(len(in_shape), len(b), **masks))


def _ssg_infer(inputs, attrs):
    known = constant_value(inputs[0])
    out = TensorShape([int(d) for d in known]) if known is not None else unknown_shape(
        inputs[0].shape.num_elements())
    return out, inputs[4].dtype


def _ssg_eager(xp, in_shape, begin, end, strides, dy, **masks):
    in_shape = tuple(int(d) for d in np.asarray(in_shape))
    z = xp.zeros(in_shape, dtype=dy.dtype)
    z[_slice_index(in_shape, begin, end, strides, masks)] = dy
    return z


def _ssg_lower(ctx, in_shape, begin, end, strides, dy, **masks):
    in_shape = tuple(int(d) for d in ctx.host_value(in_shape, "shape"))
    if any(isinstance(v, ctx.da.Array) for v in (begin, end, strides)):
        # slice bounds computed in the run: place the gradient in one task
        return ctx.delayed(_ssg_whole, in_shape, begin, end, strides, dy, masks, shape=in_shape,
                           dtype=dy.dtype, meta=np.empty((0,) * len(in_shape), dtype=dy.dtype))
    idx = _slice_index(in_shape, begin, end, strides, masks)
    dy = ctx.as_dask(dy)
    new_axes = [j for j, item in enumerate(i for i in idx if not isinstance(i, (int, np.integer))) if item is None]
    if new_axes:
        dy = dy.reshape(tuple(d for j, d in enumerate(dy.shape) if j not in new_axes))
    z = ctx.da.zeros(in_shape, dtype=dy.dtype, chunks=ctx.default_chunks(in_shape, dy.dtype))
    z[tuple(i for i in idx if i is not None)] = dy
    return z


def _ssg_whole(in_shape, begin, end, strides, dy, masks):
    return _ssg_eager(namespace((dy,)), in_shape, begin, end, strides, dy, **masks)


register_op("StridedSliceGrad", _ssg_infer, eager=_ssg_eager, lower=_ssg_lower)


@def_grad("StridedSliceGrad")
def _strided_slice_grad_grad(op, g):
    attrs = {k: op.get_attr(k) for k in _MASKS}
    return [None, None, None, None, apply_op("StridedSlice", [g, *op.inputs[1:4]], attrs)]


# ---- unsorted_segment_sum --------------------------------------------------------------------------


def _seg_infer(inputs, attrs):
    data, ids, num = inputs
    if not ids.dtype.is_integer:
        raise TypeError(f"unsorted_segment_sum: segment_ids must be integers, got {ids.dtype.name}")
    n = constant_value(num)
    if data.shape.ndims is None or ids.shape.ndims is None:
        return unknown_shape(), data.dtype
    rest = data.shape.as_list()[ids.shape.ndims:]
    return TensorShape([None if n is None else int(n)] + rest), data.dtype


def _segment_sum(xp, flat, ids, num):
    """Rows of `flat` ([n, ...]) added into `num` segments by the 1-D `ids`."""
    num = int(num)
    out = np.zeros((num,) + tuple(flat.shape[1:]), dtype=flat.dtype)
    valid = (ids >= 0) & (ids < num)  # TF1 drops negative ids; larger ones are an error
    if np.any(ids >= num):
        raise InvalidArgumentError(None, None, f"segment_ids contains {int(ids.max())}, not in [0, {num})")
    np.add.at(out, ids[valid], np.asarray(flat)[valid])
    return xp.asarray(out)


def _seg_eager(xp, data, ids, num):
    ids_nd = np.ndim(ids)
    rest = tuple(data.shape[ids_nd:])
    flat = xp.reshape(data, (int(np.prod(data.shape[:ids_nd], dtype=np.int64)),) + rest)
    return _segment_sum(xp, flat, np.asarray(ids).reshape(-1), num)


def _seg_partial(data, ids, num):
    return _seg_eager(namespace((data,)), data, ids, num)


def _seg_lower(ctx, data, ids, num):
    num = int(ctx.host_value(num, "num_segments"))
    data, ids = ctx.as_dask(data), ctx.as_dask(ids)
    lead = ids.ndim
    rest = tuple(int(d) for d in data.shape[lead:])
    flat = data.reshape((-1,) + rest) if lead != 1 else data
    ids = ids.reshape(-1) if lead != 1 else ids
    flat = flat.rechunk({0: flat.chunks[0]} | {i: -1 for i in range(1, flat.ndim)})
    ids = ids.rechunk((flat.chunks[0],))
    out_shape = (num,) + rest
    meta = np.empty((0,) * len(out_shape), dtype=data.dtype)
    partials = [ctx.delayed(_seg_partial, flat.blocks[i], ids.blocks[i], num, shape=out_shape,
                            dtype=data.dtype, meta=meta) for i in range(flat.numblocks[0])]
    # one partial sum per row block, added as a tree: memory bounded by a few partials
    # (dtype=: dask's sum of int32 partials would give int64, as numpy's sum does)
    return ctx.da.stack(partials, axis=0).sum(axis=0, dtype=data.dtype) if len(partials) > 1 else partials[0]


register_op("UnsortedSegmentSum", _seg_infer, eager=_seg_eager, lower=_seg_lower)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """out[k] = sum of data[i] over i with segment_ids[i] == k; shape [num_segments] + data.shape[ids.ndim:]."""
    data = convert_to_tensor(data)
    segment_ids = convert_to_tensor(segment_ids)
    num_segments = convert_to_tensor(num_segments, dtype=segment_ids.dtype)
    return apply_op("UnsortedSegmentSum", [data, segment_ids, num_segments], name=name)


@def_grad("UnsortedSegmentSum")
def _seg_grad(op, g):
    return [gather_ops.gather(g, op.inputs[1]), None, None]


not_differentiable("OneHot")
