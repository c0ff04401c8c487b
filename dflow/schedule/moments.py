"""Centered second moments in the same pass as the statistic they are centered on.

`reduce_mean(square(X - m), axes)` with `m = reduce_mean(X, axes)` (a variance, a std) needs m
before it can start, so a plan that does not hold X reads it twice: once for m, once for the
squares. Per chunk c of X, with n_c rows, mean mu_c and M2_c = sum((x - mu_c)^2),

    sum over c of sum((x - m)^2) = sum over c of [M2_c + n_c (mu_c - m)^2]

holds for any m that is constant along the reduced axes. So the compiler computes (n_c, mu_c, M2_c)
per chunk in the pass that computes m (no dependence on m), merges them up a tree with Chan et al.'s
pairwise formulas (numerically stable: no sum-of-squares cancellation), and finishes with m once it
is known: M2 + N (mu - m)^2, divided by N for a mean. The graph and its gradients are unchanged;
only the plan reads X once less. Accumulation is in float64.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpError
from ..graph.evaluate import namespace
from ..kernels.reduction_ops import _host_ints, _normalize_axes
from .fusion import Expr
from .staging import register_rewrite


def match(op):
    """(a, m, axes tensor) if `op` is Sum/Mean of the squared deviation of `a` from `m`, else None."""
    if op.type not in ("Sum", "Mean") or len(op.inputs) < 2:
        return None
    sq = op.inputs[0].op
    if sq.type == "SquaredDifference":
        a, m = sq.inputs
    elif sq.type == "Square" and sq.inputs[0].op.type == "Sub":
        a, m = sq.inputs[0].op.inputs
    elif sq.type == "Mul" and all(t.op.type == "Sub" for t in sq.inputs) and \
            all(u is v for u, v in zip(sq.inputs[0].op.inputs, sq.inputs[1].op.inputs)):
        a, m = sq.inputs[0].op.inputs  # d * d, or (x - m) * (x - m) written twice
    else:
        return None
    return a, m, op.inputs[1]


def applies(a_val, m_val, axes, op_dtype, small_bytes):
    """Whether the rewrite is valid here: a float dask array `a` of known shape, `m` constant along
    the reduced axes and broadcasting into a's shape, and per-chunk statistics that are small."""
    import dask.array as da

    if not isinstance(a_val, da.Array) or np.dtype(a_val.dtype).kind != "f" or not axes:
        return False
    shape = a_val.shape
    if any(isinstance(d, float) for d in shape) or any(shape[i] == 0 for i in axes):
        return False
    m_shape = tuple(getattr(m_val, "shape", ()))
    if any(isinstance(d, float) for d in m_shape) or len(m_shape) > len(shape):
        return False
    padded = (1,) * (len(shape) - len(m_shape)) + m_shape
    if any(p not in (1, s) for p, s in zip(padded, shape)) or any(padded[i] != 1 for i in axes):
        return False
    if np.dtype(op_dtype) != np.dtype(a_val.dtype):
        return False
    kept = int(np.prod([s for i, s in enumerate(shape) if i not in axes], dtype=np.int64))
    blocks = int(np.prod([len(a_val.chunks[i]) for i in axes], dtype=np.int64))
    return 3 * 8 * kept * blocks <= small_bytes


class Partials:
    """The key of a stage result holding an op's merged (count, mean, M2) (named for `explain`)."""

    def __init__(self, op):
        self.op = op
        self.name = f"{op.outputs[0].name} (count, mean, M2 of its input)"


def chunk_stats(a, axes, name):
    """(3, ...) float64 dask array: count, mean and M2 over `axes` (kept as size 1), merged over chunks."""
    import dask.array as da

    chunks = ((3,),) + tuple((1,) * len(c) if i in axes else c for i, c in enumerate(a.chunks))
    per_block = a.map_blocks(_chunk, axes=axes, new_axis=0, chunks=chunks, dtype=np.float64,
                             meta=np.empty((0,) * (a.ndim + 1), np.float64), name=f"{name}-chunk")
    shifted = tuple(i + 1 for i in axes)
    return da.reduction(per_block, _merge, _merge, combine=_merge, axis=shifted, keepdims=True,
                        dtype=np.float64, concatenate=True, name=f"{name}-merge",
                        meta=np.empty((0,) * (a.ndim + 1), np.float64))


def finish(stats, m, op_type, axes, keep_dims, dtype):
    """The reduction's value from merged statistics and the centre m (host or dask values)."""
    n, mean, m2 = stats[0], stats[1], stats[2]
    dev = mean - m
    total = m2 + n * dev * dev
    out = total / n if op_type == "Mean" else total
    if not keep_dims:
        out = out.squeeze(axis=tuple(axes))
    return out.astype(dtype)


_SLAB_BYTES = 4 << 20  # deviations are squared a slab at a time: scratch stays in cache


def _chunk(x, axes):
    xp = namespace((x,))
    n = int(np.prod([x.shape[i] for i in axes], dtype=np.int64))
    if not n:
        z = xp.zeros(tuple(1 if i in axes else s for i, s in enumerate(x.shape)), dtype=xp.float64)
        return xp.stack([z, z, z])
    # the chunk's own mean in x's dtype is the shift; s1 below corrects for its rounding
    centre = xp.sum(x, axis=axes, keepdims=True) / n
    centre = xp.astype(centre, x.dtype)
    ax = axes[0]
    step = max(1, _SLAB_BYTES // max(1, x.nbytes // max(1, x.shape[ax])))
    s1 = s2 = 0
    for start in range(0, x.shape[ax], step):
        slab = x[(slice(None),) * ax + (slice(start, start + step),)]
        d = slab - centre
        s1 = s1 + xp.sum(d, axis=axes, keepdims=True, dtype=xp.float64)
        xp.multiply(d, d, out=d)
        s2 = s2 + xp.sum(d, axis=axes, keepdims=True, dtype=xp.float64)
    mean = xp.astype(centre, xp.float64) + s1 / n
    m2 = s2 - s1 * s1 / n
    return xp.stack([xp.full_like(mean, n), mean, m2])


def _merge(s, axis, keepdims=True):
    """Merges the (count, mean, M2) entries along `axis` (Chan et al.: exact, no cancellation)."""
    xp = namespace((s,))
    n_i, mean_i, m2_i = s[0], s[1], s[2]
    ax = tuple(a - 1 for a in axis)
    n = xp.sum(n_i, axis=ax, keepdims=True)
    safe = xp.where(n > 0, n, xp.ones_like(n))
    mean = xp.sum(n_i * mean_i, axis=ax, keepdims=True) / safe
    dev = mean_i - mean
    m2 = xp.sum(m2_i, axis=ax, keepdims=True) + xp.sum(n_i * dev * dev, axis=ax, keepdims=True)
    return xp.stack([n, mean, m2])


@register_rewrite("Sum", "Mean")
def one_pass_moment(ctx, op, env, stager, memory):
    """Lowers `reduce_mean(square(X - m))` with m from a later stage than X in X's own stage: X is
    read once for m and the squares together. False if the pattern does not apply."""
    import dask.array as da

    found = match(op)
    if found is None:
        return False
    a, m, axis_t = found
    level = stager.level
    if level.get(m, 0) < level.get(a, 0):
        a, m = m, a  # square(m - x): the same deviation
    if a not in env or m not in env or axis_t not in env or level.get(m, 0) <= level.get(a, 0):
        return False
    n = a.shape.num_elements()
    axis_val = env[axis_t]
    if n is None or n * a.dtype.size < stager.stage_bytes or isinstance(axis_val, (da.Array, Expr)):
        return False
    a_val, m_val = (ctx.materialized(v) for v in (env[a], env[m]))
    try:
        axes = _normalize_axes(_host_ints(np.asarray(axis_val)), a_val.ndim, op.type)
    except OpError:
        return False
    out_t = op.outputs[0]
    if not applies(a_val, m_val, axes, out_t.dtype.np_dtype, stager.stage_bytes // 16):
        return False
    stats = chunk_stats(a_val, axes, ctx.name("-moments"))
    memory.add(op._name, "Moments", [a_val], [stats], stage=level.get(a, 0))
    ph = stager.add_boundary(level.get(a, 0), Partials(op), stats, f"stage-{op.name.replace('/', '.')}-moments")
    env[out_t] = finish(ph, m_val, op.type, axes, op._attrs["keep_dims"], out_t.dtype.np_dtype)
    level[out_t] = max(level.get(a, 0) + 1, level.get(m, 0))
    stager.staged.add(out_t)  # finished from an earlier stage's partials: cheap to redo
    return True
