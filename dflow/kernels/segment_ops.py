"""Segment reductions beyond unsorted_segment_sum (scatter_ops): unsorted_segment_max/min/prod as
ops; the sorted segment_* and the means as composites of them and of unsorted_segment_sum.

Empty segments follow TF1: unsorted max gives the dtype's lowest value, min its highest, prod 1,
mean and sqrt_n 0; the sorted segment_* give 0 for an empty segment. Negative ids are dropped (as
unsorted_segment_sum); ids >= num_segments raise InvalidArgumentError. The sorted ops take
num_segments = segment_ids[-1] + 1 (computed first in a run) and do not check the order.
Gradients follow TF 1.15's math_grad: max/min share the gradient among the tied maxima; prod
handles zeros (one zero: the product of the others; two or more: 0).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.registry import def_grad
from .array_ops import size
from .common import apply_op, convert_to_tensor
from .creation_ops import ones_like, zeros_like
from .gather_ops import gather
from .manip_ops import expand_dims
from .math_ops import cast, equal, greater, logical_and, maximum, multiply, realdiv, rsqrt, where
from .numpy_kernels import numpy_op
from .scatter_ops import _seg_infer, unsorted_segment_sum

__all__ = ["unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_mean",
           "unsorted_segment_sqrt_n", "segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod"]

_INIT = {"max": lambda d: np.finfo(d).min if d.kind == "f" else np.iinfo(d).min,
         "min": lambda d: np.finfo(d).max if d.kind == "f" else np.iinfo(d).max,
         "prod": lambda d: 1}
_UFUNC = {"max": np.maximum, "min": np.minimum, "prod": np.multiply}


def _segment_kernel(kind):
    def kernel(xp, data, ids, num):
        num, ids = int(num), np.asarray(ids)
        rest = data.shape[ids.ndim:]
        flat, ids = data.reshape((-1,) + rest), ids.reshape(-1)
        if np.any(ids >= num):
            raise InvalidArgumentError(None, None, f"segment_ids contains {int(ids.max())}, not in [0, {num})")
        out = np.full((num,) + rest, _INIT[kind](data.dtype), dtype=data.dtype)
        keep = ids >= 0
        _UFUNC[kind].at(out, ids[keep], flat[keep])
        return out

    return kernel


def _segment_shapes(sd, si, num, **attrs):
    return [(int(num),) + tuple(sd[len(si):])]


for _kind in ("max", "min", "prod"):
    numpy_op(f"UnsortedSegment{_kind.capitalize()}", _seg_infer, _segment_kernel(_kind), _segment_shapes, host_inputs=(2,))


def _unsorted(kind, data, segment_ids, num_segments, name):
    data, ids = convert_to_tensor(data, name="data"), convert_to_tensor(segment_ids, name="segment_ids")
    num = convert_to_tensor(num_segments, dtype=ids.dtype, name="num_segments")
    return apply_op(f"UnsortedSegment{kind}", [data, ids, num], name=name)


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """out[k] = max of data[i] over segment_ids[i] == k; [num_segments] + data.shape[ids.ndim:];
    an empty segment holds the dtype's lowest value."""
    return _unsorted("Max", data, segment_ids, num_segments, name)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """out[k] = min of data[i] over segment_ids[i] == k; an empty segment holds the dtype's highest."""
    return _unsorted("Min", data, segment_ids, num_segments, name)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """out[k] = product of data[i] over segment_ids[i] == k; an empty segment holds 1."""
    return _unsorted("Prod", data, segment_ids, num_segments, name)


def _counts(data, ids, num):
    """Entries per segment, shaped to broadcast against a segment reduction of `data`."""
    ones = cast(ones_like(ids), data.dtype)
    n = unsorted_segment_sum(ones, ids, num)
    extra = (data.shape.ndims - ids.shape.ndims) if data.shape.ndims is not None and ids.shape.ndims else 0
    for _ in range(extra):
        n = expand_dims(n, -1)
    return n


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of each segment (0 for an empty one)."""
    with name_scope(name, "UnsortedSegmentMean", [data, segment_ids, num_segments]):
        data, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
        n = _counts(data, ids, num_segments)
        return realdiv(unsorted_segment_sum(data, ids, num_segments), maximum(n, cast(1, data.dtype)))


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """Each segment's sum divided by sqrt(its size) (0 for an empty one)."""
    with name_scope(name, "UnsortedSegmentSqrtN", [data, segment_ids, num_segments]):
        data, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
        n = _counts(data, ids, num_segments)
        return multiply(unsorted_segment_sum(data, ids, num_segments), rsqrt(maximum(n, cast(1, data.dtype))))


def _sorted(fn, default_name, data, segment_ids, name, empty_zero):
    with name_scope(name, default_name, [data, segment_ids]):
        data, ids = convert_to_tensor(data, name="data"), convert_to_tensor(segment_ids, name="segment_ids")
        if ids.shape.ndims not in (None, 1):
            raise ValueError(f"{default_name}: segment_ids must be a vector, got shape {ids.shape} ({ids.name!r})")
        num = (ids[-1] + 1) * cast(greater(size(ids), 0), ids.dtype)
        out = fn(data, ids, num)
        if not empty_zero:
            return out
        return where(greater(_counts(data, ids, num), cast(0, data.dtype)), out, zeros_like(out))


def segment_sum(data, segment_ids, name=None):
    """Sums over sorted `segment_ids` (a vector, one id per row of data): [ids[-1] + 1] + data.shape[1:]."""
    return _sorted(unsorted_segment_sum, "SegmentSum", data, segment_ids, name, False)


def segment_mean(data, segment_ids, name=None):
    """Means over sorted `segment_ids` (0 for an empty segment)."""
    return _sorted(unsorted_segment_mean, "SegmentMean", data, segment_ids, name, False)


def segment_max(data, segment_ids, name=None):
    """Maxima over sorted `segment_ids` (0 for an empty segment, as TF1's SegmentMax)."""
    return _sorted(unsorted_segment_max, "SegmentMax", data, segment_ids, name, True)


def segment_min(data, segment_ids, name=None):
    """Minima over sorted `segment_ids` (0 for an empty segment)."""
    return _sorted(unsorted_segment_min, "SegmentMin", data, segment_ids, name, True)


def segment_prod(data, segment_ids, name=None):
    """Products over sorted `segment_ids` (1 for an empty segment, as TF1)."""
    return _sorted(unsorted_segment_prod, "SegmentProd", data, segment_ids, name, False)


# ---- gradients ------------------------------------------------------------------------------------


def _gather_valid(values, ids, data):
    """values[ids] for ids >= 0 (rows of dropped ids read segment 0) and the mask of kept rows,
    shaped like data."""
    clipped = maximum(ids, cast(0, ids.dtype))
    keep = greater(ids, cast(-1, ids.dtype))
    for _ in range((data.shape.ndims or 0) - (ids.shape.ndims or 0)):
        keep = expand_dims(keep, -1)
    return gather(values, clipped), logical_and(keep, ones_like(data, dtype=dtypes.bool))


@def_grad("UnsortedSegmentMax", "UnsortedSegmentMin")
def _min_max_grad(op, g):
    data, ids, num = op.inputs
    picked, keep = _gather_valid(op.outputs[0], ids, data)
    selected = logical_and(equal(data, picked), keep)
    n = unsorted_segment_sum(cast(selected, g.dtype), ids, num)
    share, _ = _gather_valid(realdiv(g, maximum(n, cast(1, g.dtype))), ids, data)
    return [where(selected, share, zeros_like(share)), None, None]


@def_grad("UnsortedSegmentProd")
def _prod_grad(op, g):
    data, ids, num = op.inputs
    is_zero = equal(data, zeros_like(data))
    zeros = unsorted_segment_sum(cast(is_zero, dtypes.int32), ids, num)
    g = where(greater(zeros, 1), zeros_like(g), g)
    non_zero_prod = unsorted_segment_prod(where(is_zero, ones_like(data), data), ids, num)
    prod, keep = _gather_valid(op.outputs[0], ids, data)
    nz_prod, _ = _gather_valid(non_zero_prod, ids, data)
    safe = where(is_zero, ones_like(data), data)
    partial = where(is_zero, nz_prod, realdiv(prod, safe))
    gg, _ = _gather_valid(g, ids, data)
    return [where(keep, multiply(gg, partial), zeros_like(data)), None, None]

