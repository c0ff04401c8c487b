"""Gradient clipping: `clip_by_norm`, `global_norm`, `clip_by_global_norm` (TF1)."""

from __future__ import annotations

from ..graph.graph import name_scope
from ..graph.indexed_slices import IndexedSlices
from ..kernels import math_ops as m
from ..kernels.array_ops import size
from ..kernels.common import convert_to_tensor
from ..kernels.reduction_ops import reduce_sum

__all__ = ["clip_by_norm", "global_norm", "clip_by_global_norm", "clip_by_average_norm"]


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t · clip_norm / max(‖t‖₂, clip_norm) (the L2 norm over `axes`, default all)."""
    sparse = t if isinstance(t, IndexedSlices) else None
    with name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        t = sparse.values if sparse is not None else convert_to_tensor(t)  # TF1: an IndexedSlices' values
        clip_norm = convert_to_tensor(clip_norm, dtype=t.dtype)
        l2sum = reduce_sum(m.square(t), axis=axes, keepdims=True)
        pos = m.greater(l2sum, 0.0)
        l2sum_safe = m.where(pos, l2sum, m.ones_like_t(l2sum))
        l2norm = m.where(pos, m.sqrt(l2sum_safe), l2sum)
        out = m.truediv(t * clip_norm, m.maximum(l2norm, clip_norm), name=scope)
        return IndexedSlices(out, sparse.indices, sparse.dense_shape) if sparse is not None else out


def global_norm(t_list, name=None):
    """sqrt(sum of the squared L2 norms of the tensors in `t_list`; None entries are skipped)."""
    ts = [t.values if isinstance(t, IndexedSlices) else convert_to_tensor(t) for t in t_list if t is not None]
    if not ts:
        raise ValueError("global_norm needs at least one tensor")
    with name_scope(name, "global_norm", ts) as scope:
        total = None
        for t in ts:
            s = reduce_sum(m.square(t))
            total = s if total is None else total + s
        return m.sqrt(total, name=scope)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """(list scaled by clip_norm / max(global_norm, clip_norm), the global norm)."""
    t_list = list(t_list)
    with name_scope(name, "clip_by_global_norm", [t for t in t_list if t is not None]) as scope:
        norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
        clip_norm = convert_to_tensor(clip_norm, dtype=norm.dtype)
        scale = clip_norm * m.minimum(1.0 / norm, 1.0 / clip_norm)
        out = []
        for t in t_list:
            if t is None:
                out.append(None)
            else:  # an IndexedSlices stays sparse: its values are scaled (TF1)
                sparse = t if isinstance(t, IndexedSlices) else None
                t = sparse.values if sparse is not None else convert_to_tensor(t)
                t = m.multiply(t, m.cast(scale, t.dtype) if t.dtype != scale.dtype else scale)
                out.append(IndexedSlices(t, sparse.indices, sparse.dense_shape) if sparse is not None else t)
        del scope
        return out, norm


def clip_by_average_norm(t, clip_norm, name=None):
    """clip_by_norm of t by clip_norm scaled to the average over its elements."""
    with name_scope(name, "clip_by_average_norm", [t, clip_norm]):
        t = convert_to_tensor(t)
        n = m.cast(size(t), t.dtype)
        return clip_by_norm(t, clip_norm * m.sqrt(n))
