"""`tf.summary.histogram`: the `HistogramSummary` op, bucketed as TF1's `Histogram` class.

TF's default buckets: limits 1e-12 growing by 10% up to 1e20, mirrored for negatives, with 0 in
the middle and ±DBL_MAX at the ends. A value v goes to the first bucket whose limit is > v (TF's
`upper_bound`). The proto lists min, max, num, sum, sum of squares, and the buckets with each run
of empty buckets collapsed into one (TF's `EncodeToProto(preserve_zero_buckets=False)`).

On Dask the op streams: each chunk gives (bucket counts, NaN and infinity counts, min, max, num,
sum, sum of squares), those are summed as a tree (`da.reduction`) and one last task writes the proto,
so a histogram of a 4 GB array holds a few chunks and some 1550-entry count vectors at a time.
A NaN or infinity fails the run with TF1's InvalidArgumentError naming the tag.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from tensorboard.compat.proto import summary_pb2

from ..errors import InvalidArgumentError
from ..graph.evaluate import OpTask
from ..graph.keys import GraphKeys
from ..graph.registry import not_differentiable, register_op
from ..kernels.common import REAL, apply_op, check_dtype, constant, convert_to_tensor
from .common import (
    collect,
    host,
    scalar_string_infer,
    serialized,
    summary_of,
    summary_scope,
    tag_text,
)

__all__ = ["histogram", "default_bucket_limits"]

_DBL_MAX = sys.float_info.max


def _default_limits():
    pos, v = [], 1.0e-12
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    pos.append(_DBL_MAX)
    return np.array([-x for x in reversed(pos)] + [0.0] + pos, dtype=np.float64)


_LIMITS = _default_limits()


def default_bucket_limits():
    """TF's default histogram bucket limits (a copy)."""
    return _LIMITS.copy()


# ---- statistics of a chunk, their sum, the proto --------------------------------------------------


def _slab_stats(v):
    """The statistics of a 1-D float64 array (see `_chunk_stats`)."""
    finite = np.isfinite(v)
    bad = int(v.size - np.count_nonzero(finite))
    nan = int(np.count_nonzero(np.isnan(v))) if bad else 0
    if bad:
        v = v[finite]
    idx = np.minimum(np.searchsorted(_LIMITS, v, side="right"), len(_LIMITS) - 1)
    counts = np.bincount(idx, minlength=len(_LIMITS)).astype(np.float64)
    if not v.size:
        return (counts, nan, bad - nan, _DBL_MAX, -_DBL_MAX, 0, 0.0, 0.0)
    return (counts, nan, bad - nan, float(v.min()), float(v.max()), int(v.size), float(v.sum()), float(np.dot(v, v)))


_SLAB = 1 << 20  # elements converted to float64 at a time: a task's scratch stays ~25 MB whatever its chunk
_SCRATCH_PER_ELEMENT = 25


def _chunk_stats(x):
    """(bucket counts, NaN count, infinity count, min, max, num, sum, sum of squares) of one array
    (the counts first: dask takes an intermediate's dtype from its first element)."""
    flat = host(x).reshape(-1)
    if flat.size <= _SLAB:
        return _slab_stats(flat.astype(np.float64, copy=False))
    return _add_stats([_slab_stats(flat[i:i + _SLAB].astype(np.float64)) for i in range(0, flat.size, _SLAB)])


def _add_stats(parts):
    counts, nan, inf, lo, hi, num, s, ss = parts[0]
    counts = counts.copy()
    for p in parts[1:]:
        counts += p[0]
        nan, inf, lo, hi = nan + p[1], inf + p[2], min(lo, p[3]), max(hi, p[4])
        num, s, ss = num + p[5], s + p[6], ss + p[7]
    return (counts, nan, inf, lo, hi, num, s, ss)


def _encode(tag, stats):
    counts, nan, inf, lo, hi, num, s, ss = stats
    if nan:
        raise InvalidArgumentError(None, None, f"Nan in summary histogram for: {tag}")
    if inf:
        raise InvalidArgumentError(None, None, f"Infinity in summary histogram for: {tag}")
    histo = summary_pb2.HistogramProto(min=lo, max=hi, num=num, sum=s, sum_squares=ss)
    limits, buckets = [], []
    i, n = 0, len(counts)
    while i < n:
        end, count = _LIMITS[i], counts[i]
        i += 1
        if count <= 0.0:  # a run of empty buckets is collapsed into one
            while i < n and counts[i] <= 0.0:
                end, count = _LIMITS[i], counts[i]
                i += 1
        limits.append(float(end))
        buckets.append(float(count))
    if not limits:
        limits, buckets = [_DBL_MAX], [0.0]
    histo.bucket_limit.extend(limits)
    histo.bucket.extend(buckets)
    return serialized(summary_of([summary_pb2.Summary.Value(tag=tag, histo=histo)]))


# ---- the op ------------------------------------------------------------------------------------------


def _infer(inputs, attrs):
    check_dtype(inputs[1], REAL, "HistogramSummary", arg="values")
    return scalar_string_infer("HistogramSummary", (0,))(inputs, attrs)


def _eager(xp, tag, values):
    return _encode(tag_text(tag), _chunk_stats(values))


def _leaves(parts):
    if isinstance(parts, list):
        for p in parts:
            yield from _leaves(p)
    else:
        yield parts


def _chunk(x, axis, keepdims):
    return _chunk_stats(x)


def _combine(parts, axis, keepdims):
    return _add_stats(list(_leaves(parts)))


def _aggregate(parts, axis, keepdims):
    out = np.empty((), dtype=object)
    out[()] = _add_stats(list(_leaves(parts)))
    return out


def _finish(tag, stats):
    return _encode(tag_text(tag), host(stats).reshape(()).item())


def _lower(ctx, tag, values):
    x = ctx.as_dask(values)
    if x.ndim == 0:
        x = x.reshape((1,))
    stats = ctx.da.reduction(x, _chunk, _aggregate, combine=_combine, axis=tuple(range(x.ndim)), keepdims=False,
                             dtype=object, concatenate=False, meta=np.empty((), dtype=object),
                             name=ctx.name("-histogram"))
    # a chunk's task holds, per element of a slab, its float64 copy, bucket indices (int64, twice)
    # and a finiteness flag: ~25 bytes, told to the memory projection in 8-byte output chunks
    dims = [max(c) if c else 0 for c in x.chunks]
    largest = _SLAB if any(d != d for d in dims) else int(np.prod(dims))  # unknown chunk sizes: a whole slab
    ctx.set_scratch(max(1, math.ceil(min(largest, _SLAB) * _SCRATCH_PER_ELEMENT / 8)))
    return ctx.delayed(OpTask(_finish, ctx.op.type, ctx.op.name), tag, stats, shape=(), dtype=object)


register_op("HistogramSummary", _infer, eager=_eager, lower=_lower)
not_differentiable("HistogramSummary")


def histogram(name, values, collections=None, family=None):
    """A histogram of the values of a real tensor of any shape (TF1's `tf.summary.histogram`),
    in TF's default buckets; TensorBoard's histogram and distribution dashboards draw it. A
    chunked tensor is bucketed chunk by chunk. NaN or infinity fails the run."""
    with summary_scope(name, family, values=[values], default_name="HistogramSummary") as (tag, scope):
        values = convert_to_tensor(values, name="values")
        val = apply_op("HistogramSummary", [constant(tag, name="tag"), values], name=scope)
        collect(val, collections, [GraphKeys.SUMMARIES])
    return val

