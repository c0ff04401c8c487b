"""TF1's sparse arithmetic beyond sums and products: `tf.sparse_softmax`, `sparse_reduce_max`,
`sparse_reduce_max_sparse`, `sparse_reduce_sum_sparse`, `sparse_segment_sum/mean/sqrt_n` and
`sparse_mask`, as composites of registered ops (segment reductions, gathers), so their gradients
are those ops': the segment ops' with respect to data is an IndexedSlices of the rows read.

A reduction groups each entry by the linear index of its kept coordinates (dense outputs: one
segment per dense element; sparse outputs: the distinct groups, in row-major order).
"""

from __future__ import annotations

import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.indexed_slices import IndexedSlices
from .array_ops import reshape, size, stack, stop_gradient
from .common import apply_op, convert_to_tensor
from .creation_ops import fill, ones_like, zeros_like
from .data_dependent_ops import unique
from .gather_ops import gather
from .math_ops import cast, exp, greater, realdiv, subtract, where
from .reduction_ops import reduce_max
from .scatter_ops import unsorted_segment_sum
from .segment_ops import (
    segment_mean,
    segment_sum,
    unsorted_segment_max,
    unsorted_segment_mean,
    unsorted_segment_sqrt_n,
)
from .sort_ops import setdiff1d
from .sparse_manip_ops import as_sparse, rank_of
from .sparse_ops import SparseTensor

__all__ = ["sparse_softmax", "sparse_reduce_max", "sparse_reduce_max_sparse", "sparse_reduce_sum_sparse",
           "sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n", "sparse_mask"]


def _axes(sp, axis, reduction_axes, what):
    rank = rank_of(sp, what)
    axis = reduction_axes if axis is None else axis
    if axis is None:
        return rank, list(range(rank))
    return rank, sorted({int(a) % rank for a in (axis if isinstance(axis, (list, tuple)) else [axis])})


def _groups(sp, kept):
    """(segment id of each entry, number of segments): the row-major linear index of its kept coordinates."""
    segment = convert_to_tensor(np.int64(0))
    num = convert_to_tensor(np.int64(1))
    for d in kept:
        segment = segment * sp.dense_shape[d] + sp.indices[:, d]
        num = num * sp.dense_shape[d]
    if not kept:
        segment = zeros_like(sp.values, dtype=dtypes.int64)
    return segment, num


def _dense_shape(sp, rank, axes, keepdims):
    one = convert_to_tensor(np.int64(1))
    dims = [one if d in axes else sp.dense_shape[d] for d in range(rank) if keepdims or d not in axes]
    return stack(dims) if dims else convert_to_tensor(np.zeros([0], np.int64))


def sparse_softmax(sp_input, name=None):
    """The softmax of each row (the last dimension) of a SparseTensor over its entries only; the
    result has the same indices. Gradients flow to sp_input.values."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseSoftmax", [sp.indices, sp.values]):
        if not sp.values.dtype.is_floating:
            raise TypeError(f"sparse_softmax: values must be floats, got {sp.values.dtype.name}")
        rank = rank_of(sp, "sparse_softmax")
        if rank < 2:
            raise ValueError(f"sparse_softmax: sp_input must have rank >= 2, got {rank}")
        segment, _ = _groups(sp, range(rank - 1))
        row, pos = unique(segment, out_idx=dtypes.int64)
        n = size(row, out_type=dtypes.int64)
        shift = stop_gradient(gather(unsorted_segment_max(sp.values, pos, n), pos))  # softmax ignores the shift
        e = exp(subtract(sp.values, shift))
        return SparseTensor(sp.indices, realdiv(e, gather(unsorted_segment_sum(e, pos, n), pos)), sp.dense_shape)


def sparse_reduce_max(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The maximum of a SparseTensor's entries over `axis` (all axes: a scalar) as a dense tensor;
    a group with no entry gives 0 (as TF1: only the entries are compared)."""
    sp = as_sparse(sp_input)
    keepdims = keep_dims if keepdims is None else keepdims
    with name_scope(None, "SparseReduceMax", [sp.indices, sp.values]):
        if axis is None and reduction_axes is None:
            total = reduce_max(sp.values)
            rank = sp.dense_shape.shape[0].value
            return reshape(total, [1] * rank) if keepdims and rank is not None else total
        rank, axes = _axes(sp, axis, reduction_axes, "sparse_reduce_max")
        kept = [d for d in range(rank) if d not in axes]
        segment, num = _groups(sp, kept)
        out = unsorted_segment_max(sp.values, segment, num)
        hits = unsorted_segment_sum(ones_like(sp.values), segment, num)
        out = where(greater(hits, 0), out, zeros_like(out))
        return reshape(out, _dense_shape(sp, rank, axes, keepdims))


def _reduce_sparse(sp_input, axis, keepdims, reduction_axes, keep_dims, combine, what):
    sp = as_sparse(sp_input)
    keepdims = keep_dims if keepdims is None else keepdims
    with name_scope(None, what, [sp.indices, sp.values]):
        rank, axes = _axes(sp, axis, reduction_axes, what)
        kept = [d for d in range(rank) if d not in axes]
        segment, _ = _groups(sp, kept)
        groups, pos = unique(segment, out_idx=dtypes.int64)
        order = apply_op("SparseIndexOrder", [reshape(groups, [-1, 1])], name="SparseIndexOrder")
        groups = gather(groups, order)
        n = size(groups, out_type=dtypes.int64)
        values = gather(combine(sp.values, pos, n), order)
        cols, rest = [], groups
        for d in reversed(kept):  # the kept coordinates back from the linear group id
            cols.insert(0, rest % sp.dense_shape[d])
            rest = rest // sp.dense_shape[d]
        zero = zeros_like(groups)
        if keepdims:
            cols = [zero if d in axes else cols[kept.index(d)] for d in range(rank)]
        indices = stack(cols, axis=1) if cols else fill(stack([n, np.int64(0)]), np.int64(0))
        return SparseTensor(indices, values, _dense_shape(sp, rank, axes, keepdims))


def sparse_reduce_max_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The maximum over `axis` as a SparseTensor holding only the groups that have entries."""
    return _reduce_sparse(sp_input, axis, keepdims, reduction_axes, keep_dims, unsorted_segment_max,
                          "SparseReduceMaxSparse")


def sparse_reduce_sum_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The sum over `axis` as a SparseTensor holding only the groups that have entries."""
    return _reduce_sparse(sp_input, axis, keepdims, reduction_axes, keep_dims, unsorted_segment_sum,
                          "SparseReduceSumSparse")


def _segment(kind, data, indices, segment_ids, name, num_segments):
    suffix = "" if num_segments is None else "WithNumSegments"
    with name_scope(name, f"SparseSegment{kind}{suffix}", [data, indices, segment_ids]):
        data = convert_to_tensor(data, name="data")
        indices = convert_to_tensor(indices, name="indices")
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        for t, what in ((indices, "indices"), (ids, "segment_ids")):
            if t.dtype not in (dtypes.int32, dtypes.int64):
                raise TypeError(f"SparseSegment{kind}: {what} must be int32 or int64, got {t.dtype.name}")
            if t.shape.ndims not in (None, 1):
                raise ValueError(f"SparseSegment{kind}: {what} must be a vector, got shape {t.shape}")
        rows = gather(data, indices)
        if num_segments is None:
            if kind == "Sum":
                return segment_sum(rows, ids)
            if kind == "Mean":
                return segment_mean(rows, ids)
            num_segments = (ids[-1] + 1) * cast(greater(size(ids), 0), ids.dtype)
        fn = {"Sum": unsorted_segment_sum, "Mean": unsorted_segment_mean, "SqrtN": unsorted_segment_sqrt_n}[kind]
        return fn(rows, ids, num_segments)


def sparse_segment_sum(data, indices, segment_ids, name=None, num_segments=None, sparse_gradient=False):
    """out[k] = sum of data[indices[i]] over segment_ids[i] == k (sorted ids; [ids[-1] + 1] rows, or
    `num_segments`). The gradient with respect to data is an IndexedSlices of the rows read."""
    return _segment("Sum", data, indices, segment_ids, name, num_segments)


def sparse_segment_mean(data, indices, segment_ids, name=None, num_segments=None, sparse_gradient=False):
    """The mean of data[indices[i]] per segment (0 for an empty segment)."""
    return _segment("Mean", data, indices, segment_ids, name, num_segments)


def sparse_segment_sqrt_n(data, indices, segment_ids, name=None, num_segments=None, sparse_gradient=False):
    """The sum of data[indices[i]] per segment divided by sqrt(its size) (0 for an empty segment)."""
    return _segment("SqrtN", data, indices, segment_ids, name, num_segments)


def sparse_mask(a, mask_indices, name=None):
    """The IndexedSlices `a` without the rows whose index is in `mask_indices`."""
    if not isinstance(a, IndexedSlices):
        raise TypeError(f"sparse_mask: a must be an IndexedSlices, got {type(a).__name__}")
    with name_scope(name, "sparse_mask", [a.values, a.indices]):
        mask = convert_to_tensor(mask_indices, dtype=a.indices.dtype, name="mask_indices")
        out_indices, to_gather = setdiff1d(a.indices, mask)
        return IndexedSlices(gather(a.values, to_gather), out_indices, a.dense_shape)

