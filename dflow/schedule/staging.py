"""Stages and spills: how a Dask plan avoids holding a large input between two passes over it.

A small result of a large dask input (a reduction such as a column mean) that is read again by ops
which also read that input becomes a stage boundary: an earlier scheduler call computes it and
later stages read it as a placeholder, so the large input is re-read from storage instead of held
("large": `Options.stage_bytes`). At a boundary, a large input that later stages read again is
recomputed there when it is made of sources and elementwise ops, and spilled to local disk (a
StoredValue written by the stage that computes it) when it is costlier (a matmul, a py_func, a
random draw).

Rewrites that only apply across stages (one-pass centered moments, `moments.py`) register against
the op types they match with `register_rewrite`; the lowering asks `rewrite_for(op)`.
"""

from __future__ import annotations

import dask.array as da
import numpy as np

from ..graph.dtypes import as_dtype
from ..graph.registry import OpState
from ..storage.chunks import dask_chunks
from .fusion import Expr
from .plan import FeedSlot, FeedSpec, Spill
from .program import inputs_of

_REWRITES = {}


def register_rewrite(*op_types):
    """Decorator: `fn(ctx, op, env, stager, memory) -> bool` lowers `op` itself when it returns
    True (the op's outputs are then in env)."""

    def deco(fn):
        for t in op_types:
            _REWRITES[t] = fn
        return fn

    return deco


def rewrite_for(op):
    return _REWRITES.get(op._type)


class Stager:
    """Tracks the stage each lowered tensor is available in and the boundaries between stages."""

    def __init__(self, program, options, ctx):
        self.program = program
        self.stage_bytes = options.stage_bytes
        self.spill = options.spill
        self.ctx = ctx
        self.level = {}  # tensor -> the stage it becomes available in
        self.boundaries = []  # (stage, FeedSlot, dask array computed in that stage)
        self.staged = set()  # tensors later stages read from an earlier stage (a result or a spill)
        succ = {}  # op -> ops reading its outputs (data edges)
        for op in program.ops:
            for t in inputs_of(op, program.decisions):
                succ.setdefault(t._op, []).append(op)
        self.succ = succ

    def stage_of(self, tensors):
        return max((self.level.get(t, 0) for t in tensors if t is not None), default=0)

    def add_boundary(self, level, key, arr, prefix):
        """A placeholder for `arr`, computed in stage `level` and read by later ones."""
        spec = FeedSpec("numpy", tuple(int(d) for d in arr.shape), key_dtype(key, arr),
                        tuple(tuple(int(c) for c in dim) for dim in arr.chunks))
        ph = self.ctx.placeholder(prefix, spec)
        self.boundaries.append((level, FeedSlot(key, ph.name, spec), arr))
        return ph

    def place(self, op, t, v, vals, lvl, env):
        """Puts output `t` (value `v`, computed in stage `lvl`) in env: as is, or as a stage boundary."""
        if self._is_boundary(op, v, vals):
            env[t] = self.add_boundary(lvl, t, v, f"stage-{_safe(t.name)}")
            self.level[t] = lvl + 1
            self.staged.add(t)
            if self.spill:
                self._spill_costly_inputs(op, vals, env)
        else:
            env[t], self.level[t] = v, lvl

    def _is_boundary(self, op, v, vals):
        if not _is_stage_boundary(op._opdef, vals, v, self.stage_bytes):
            return False
        big = [t._op for t, val in zip(inputs_of(op, self.program.decisions), vals)
               if (nbytes(val) or 0) >= self.stage_bytes]
        return _value_meets_source(op, big, self.succ, self.stage_bytes)

    def _spill_costly_inputs(self, op, vals, env):
        """At a stage boundary, the large inputs that later stages read again are recomputed there
        if cheap; costlier ones are spilled (see the module doc). Spills are deleted when the run ends."""
        for t_in, val in zip(inputs_of(op, self.program.decisions), vals):
            if t_in in self.staged or (nbytes(val) or 0) < self.stage_bytes or \
                    not _costly(t_in.op, self.stage_bytes, self.staged):
                continue
            arr = val.materialize(self.ctx.fusion_log) if isinstance(val, Expr) else val
            if not isinstance(arr, da.Array) or not arr.ndim:
                continue
            grid = tuple(max(c) for c in arr.chunks)
            regular = dask_chunks(tuple(int(d) for d in arr.shape), grid)
            if arr.chunks != regular:
                arr = arr.rechunk(regular)
            lvl = self.level.get(t_in, 0)
            env[t_in] = self.add_boundary(lvl, Spill(t_in), arr, f"spill-{_safe(t_in.name)}")
            self.level[t_in] = lvl + 1
            self.staged.add(t_in)


def key_dtype(key, arr):
    return key.dtype if hasattr(key, "dtype") and not isinstance(key, Spill) else as_dtype(np.dtype(arr.dtype))


def _safe(name):
    return name.replace("/", ".").replace(":", "_")


def nbytes(v):
    if isinstance(v, Expr):
        v = v._array
    if not isinstance(v, da.Array) or any(d != d for d in v.shape):
        return None
    return int(np.prod(v.shape, dtype=np.int64)) * v.dtype.itemsize


def _costly(op, stage_bytes, staged):
    """Whether recomputing `op`'s output costs more than writing and reading it back: true unless
    it is made only of sources (Zarr reads, feeds, variables, constants, values of earlier stages
    and spills) and elementwise ops."""
    seen, stack = set(), [op]
    while stack:
        o = stack.pop()
        if o in seen:
            continue
        seen.add(o)
        d = o._opdef
        if d.traits.elementwise or d.traits.shape_only:
            stack.extend(t.op for t in o._inputs if t not in staged and not _statically_small(t, stage_bytes))
        elif not d.traits.cheap_source and d.state is not OpState.VARIABLE:
            return True
    return False


def _value_meets_source(op, sources, succ, stage_bytes):
    """True if an op depending on `op`'s value also depends on one of its large `sources` by another
    path (as `X - mean(X)`): only then does computing `op` first save holding the source. Ops that
    read only shapes (OnesLike of a loss, in a gradient) are not value dependencies."""
    fwd, stack = set(), [c for c in succ.get(op, ()) if not c._opdef.traits.shape_only]
    while stack:
        o = stack.pop()
        if o not in fwd:
            fwd.add(o)
            stack.extend(c for c in succ.get(o, ()) if not c._opdef.traits.shape_only)
    if not fwd:
        return False
    # the large inputs' own sources: back through elementwise producers (a fused chain feeding only
    # this reduction still reads X, which other ops may read too)
    roots, stack = set(), list(sources)
    while stack:
        o = stack.pop()
        if o not in roots:
            roots.add(o)
            if o._opdef.traits.elementwise:  # follow only inputs that may be large (not a bias, not a scalar)
                stack.extend(t._op for t in o._inputs if not _statically_small(t, stage_bytes))
    dep, stack = set(), [c for p in roots for c in succ.get(p, ()) if c is not op and not c._opdef.traits.shape_only]
    while stack:
        o = stack.pop()
        if o not in dep and o is not op:
            dep.add(o)
            if o in fwd:
                return True
            stack.extend(c for c in succ.get(o, ()) if not c._opdef.traits.shape_only)
    return False


def _statically_small(t, stage_bytes):
    n = t.shape.num_elements()
    return n is not None and n * t.dtype.size < stage_bytes


def _is_stage_boundary(opdef, vals, out, stage_bytes):
    """A small result of a large dask input (a reduction): later ops read it from an earlier stage,
    so their large inputs are re-read instead of held between the two passes."""
    if opdef.traits.elementwise or not isinstance(out, da.Array) or out.dtype == object:
        return False
    out_bytes = nbytes(out)
    if out_bytes is None or out_bytes > stage_bytes // 16:
        return False
    # a global reduction: fewer output chunks than the large input has (a row-wise result such as
    # X @ w keeps X's chunks and is computed chunk by chunk alongside X: no second pass needed)
    for v in vals:
        arr = v._array if isinstance(v, Expr) else v
        if (nbytes(v) or 0) >= stage_bytes and isinstance(arr, da.Array) and out.npartitions < arr.npartitions:
            return True
    return False
