"""The compiler: (graph, fetches, feed signature) -> Plan.

1. Prune to the ops the fetches need (data inputs and control inputs), stopping at fed tensors.
2. Choose the mode: small plans over in-memory feeds run in-process through each op's eager
   kernel (no Dask round trip); everything else lowers to one Dask graph.
3. Lower in topological order. Values known from the feed signature alone (constants, shapes,
   small arithmetic on them) are folded on the host; elementwise ops become fusion `Expr`s;
   every other op goes through its OpDef's `lower`.
"""

from __future__ import annotations

import itertools

import array_api_compat
import array_api_compat.numpy as np_xp
import dask.array as da
import numpy as np
from dask.highlevelgraph import HighLevelGraph

from ..errors import InvalidArgumentError, OpError, ResourceExhaustedError, UnimplementedError
from ..graph.ops import Operation, Tensor
from ..io.chunks import ROW_CHUNK_BYTES, dask_chunks, row_chunks
from .fusion import Const, Expr, Ext, fused_scratch_chunks
from .memory import MemoryReport, format_bytes, suggest_chunks
from .plan import DaskPlan, EagerPlan, FeedSlot, FeedSpec, Spill
from .state import reads_input, resolve_state

_FOLD_MAX_ELEMENTS = 1 << 16
_names = itertools.count()
_dask_xp = array_api_compat.array_namespace(da.zeros(1))


class HostDecision:
    """What compile_plan returns when the Session must decide on the host first (a cond's branch,
    a while loop's result) before a plan can be built."""

    kind = "host"

    def __init__(self, op):
        self.op = op


def inputs_of(op, resolved):
    """An op's data inputs, where a cond resolved to a branch reads that branch's outputs."""
    if op._opdef.state == "host" and op in resolved:
        return op._attrs["true_outputs" if resolved[op] else "false_outputs"]
    return op._inputs


def prune(fetch_elements, fed, resolved=None):
    """The ops needed to compute `fetch_elements` given the fed tensors, in topological order."""
    resolved = resolved or {}
    needed = set()
    stack = []
    for e in fetch_elements:
        if isinstance(e, Tensor):
            if e not in fed:
                stack.append(e._op)
        else:
            stack.append(e)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        for t in (inputs_of(op, resolved) if resolved else op._inputs):
            if t not in fed and t._op not in needed:
                stack.append(t._op)
        for c in op._control_inputs:
            if c not in needed:
                stack.append(c)
    return sorted(needed, key=lambda o: o._id)


def check_feeds_complete(ops, fed):
    missing = [op.outputs[0] for op in ops if op.op_def.must_feed and op.outputs[0] not in fed]
    if missing:
        lines = "; ".join(f"placeholder tensor {t.name!r} with dtype {t.dtype.name} and shape {t.shape}"
                          for t in missing)
        raise InvalidArgumentError(None, missing[0].op, f"You must feed a value for {lines}")


def compile_plan(fetch_elements, feeds, options, resolved=None):
    """Builds the Plan for these fetches; `feeds` maps Tensor -> FeedSpec (kind, shape, dtype, chunks).

    `resolved` maps cond ops to the branch taken (True/False). Returns a HostDecision instead
    when an unresolved cond or a while loop is needed first.
    """
    resolved = resolved or {}
    fed = set(feeds)
    ops = prune(fetch_elements, fed, resolved)
    pending = [op for op in ops if op._opdef.state == "host" and op not in resolved]
    if pending:
        return HostDecision(pending[0])  # topological: it depends on no other pending decision
    check_feeds_complete(ops, fed)
    if options.config is not None or any(op._device for op in ops):
        from .placement import check_placement

        check_placement(ops, options.config, options.gpus)  # refuses ops on missing devices
    state = resolve_state(ops, fed, fetch_elements, lambda op: inputs_of(op, resolved))
    if _use_eager(ops, feeds, options):
        return EagerPlan(ops, fetch_elements, fed, state, resolved)
    return _lower_dask(ops, fetch_elements, feeds, options, state, resolved)


def _use_eager(ops, feeds, options):
    limit = options.small_plan_bytes
    if not limit or any(op.op_def.state == "sink" for op in ops):
        return False
    total = 0
    for spec in feeds.values():
        if spec.kind != "numpy":
            return False
        total += spec.nbytes
    if total > limit:
        return False
    for op in ops:
        for t in op.outputs:
            n = t.shape.num_elements()
            if n is not None and n * t.dtype.size > limit:
                return False
    return True


class LowerContext:
    """What a lowering sees besides its inputs: the op, dask helpers and per-run parameters."""

    da = da
    xp = _dask_xp

    def __init__(self, options, params):
        self.options = options
        self.op = None
        self.scratch_chunks = None
        self._params = params  # param key -> (spec, placeholder dask array)
        self.hooks = {"before_run": [], "on_success": [], "on_failure": []}

    def before_run(self, fn):
        """`fn(run)` runs on the client before the run's tasks (it may raise to refuse the run)."""
        self.hooks["before_run"].append(fn)

    def on_success(self, fn):
        """`fn(run)` runs on the client after every task succeeded, before variables commit."""
        self.hooks["on_success"].append(fn)

    def on_failure(self, fn):
        """`fn(run)` runs on the client when the run failed (clean-up)."""
        self.hooks["on_failure"].append(fn)

    def delayed(self, fn, *args, shape=(), dtype=object, meta=None):
        """A dask array of `fn(*args)` computed in one task; dask-array args arrive whole.

        Use this instead of `dask.delayed(fn)(array)`: delayed optimizes array arguments, which
        fuses away the placeholder keys of feeds and per-run values (they would never be set).
        """
        import dask

        dargs = []
        for a in args:
            if isinstance(a, da.Array):
                whole = a.rechunk(tuple((d,) for d in a.shape)) if a.ndim and a.npartitions > 1 else a
                a = whole.to_delayed(optimize_graph=False).reshape(-1)[0]
            dargs.append(a)
        task = dask.delayed(fn, pure=False)(*dargs)
        return da.from_delayed(task, shape, dtype=dtype, meta=meta)

    def set_scratch(self, chunks):
        """Tells the memory projection how many output-chunk-sized buffers this op's tasks hold
        besides their output (default 1)."""
        self.scratch_chunks = chunks

    def run_token(self):
        """A 0-d int64 dask array holding a number unique to each run of the session."""
        return self.run_param(("run_token",))

    def as_dask(self, x):
        if isinstance(x, da.Array):
            return x
        x = np.asarray(x)
        return da.from_array(x, chunks=self.default_chunks(x.shape, x.dtype)) if x.ndim else da.asarray(x)

    def host_value(self, x, what):
        if isinstance(x, da.Array):
            raise UnimplementedError(None, self.op, f"{self.op.type} op {self.op.name!r}: {what} depends on "
                                     "data computed in this run; it must be known from constants and the "
                                     "shapes of the feeds.")
        return np.asarray(x)

    def known_shape(self, x):
        shape = tuple(x.shape)
        if any(isinstance(d, float) and d != d for d in shape):
            raise UnimplementedError(None, self.op, f"{self.op.type} op {self.op.name!r}: the shape of its "
                                     "input is data-dependent here.")
        return shape

    def default_chunks(self, shape, dtype):
        return normalize_chunks(self.options.chunks, shape, dtype, self.options.chunk_limit)

    def run_param(self, spec, shape=(), dtype=np.int64, chunks=None):
        """A dask array whose value the session supplies each run (a random op's counter, a
        variable's value at the start of the run); chunked like a feed."""
        if spec not in self._params:
            from ..graph.dtypes import as_dtype

            shape = tuple(int(d) for d in shape)
            chunks = normalize_chunks(chunks or self.options.chunks, shape, dtype, self.options.chunk_limit)
            slot_spec = FeedSpec("numpy", shape, as_dtype(np.dtype(dtype)), chunks)
            arr = _placeholder_array(f"dflow-param-{spec[0]}", slot_spec)
            self._params[spec] = FeedSlot(spec, arr.name, slot_spec), arr
        return self._params[spec][1]

    def name(self, suffix=""):
        base = self.op.name.replace("/", ".") if self.op is not None else "dflow"
        return f"{base}{suffix}-{next(_names)}"


def normalize_chunks(chunks, shape, dtype, limit=None):
    """Dask chunks for `shape`; a per-dimension tuple of the wrong length falls back to "auto".
    `limit`: bytes per "auto" chunk (None: dask's array.chunk-size, 128 MiB)."""
    if isinstance(chunks, (tuple, list)) and len(chunks) != len(shape):
        chunks = "auto"
    return da.core.normalize_chunks(chunks, tuple(shape), limit=limit, dtype=np.dtype(dtype))


def _feed_placeholder(t, spec):
    return _placeholder_array(f"feed-{t.name.replace('/', '.').replace(':', '_')}", spec)


def _placeholder_array(prefix, spec):
    """A dask array whose chunk keys hold None until a run sets them to data."""
    name = f"{prefix}-{next(_names)}"
    blocks = itertools.product(*[range(len(c)) for c in spec.chunks])
    layer = {(name,) + b: None for b in blocks}
    arr = da.Array(HighLevelGraph.from_collections(name, layer, dependencies=()), name, spec.chunks,
                   dtype=spec.dtype.np_dtype, meta=np.empty((0,) * len(spec.shape), dtype=spec.dtype.np_dtype))
    return arr


def _lower_dask(ops, fetch_elements, feeds, options, state, resolved=None):
    params = {}
    ctx = LowerContext(options, params)
    env = {}
    slots = []
    for t, spec in feeds.items():
        arr = _feed_placeholder(t, spec)
        env[t] = arr
        slots.append(FeedSlot(t, arr.name, spec))
    commit_tensors = {var: a.outputs[0] for var, a in state.commits.items()}
    fetched = {e for e in fetch_elements if isinstance(e, Tensor)} | set(commit_tensors.values())
    stateless = state.empty
    consumers = {}
    resolved = resolved or {}
    for op in ops:
        for i, t in enumerate(inputs_of(op, resolved)):
            if not stateless:
                t = _source(state, op, i, t)
            if t is not None:
                consumers[t] = consumers.get(t, 0) + 1

    succ = {}  # op -> ops reading its outputs (data edges), for the staging decision
    for op in ops:
        for t in inputs_of(op, resolved):
            succ.setdefault(t._op, []).append(op)
    memory = MemoryReport(workers=options.workers)
    fusion_log = []  # fused chains materialized while lowering: (root name, leaves, array)
    ctx.fusion_log = fusion_log
    level = {}  # tensor -> stage it becomes available in
    boundaries = []  # (stage level, FeedSlot, dask array computed in that stage)
    stage_bytes = options.stage_bytes
    staged = set()  # tensors later stages read from an earlier stage (a result or a spill)
    for op in ops:
        outs = op._outputs
        if outs and all(t in env for t in outs):
            continue  # every output fed
        opdef = op._opdef
        if opdef.state == "variable" and op._name not in state.start_vars:
            continue  # only assigned in this run: its current value is never read
        ctx.op, ctx.scratch_chunks = op, None
        if opdef.state == "host":  # a resolved cond: its outputs are the taken branch's
            for t, b in zip(outs, inputs_of(op, resolved)):
                env[t] = env[b]
            continue
        if stateless:
            vals = [env[t] for t in op._inputs]
        else:
            vals = [env.get(_source(state, op, i, t)) for i, t in enumerate(op._inputs)]
        if stage_bytes and op.type in ("Sum", "Mean") and _one_pass_moment(ctx, op, env, level, stage_bytes,
                                                                           boundaries, memory):
            staged.add(op.outputs[0])  # finished from an earlier stage's partials: cheap to redo
            continue
        try:
            outs_vals = _lower_op(ctx, op, opdef, vals, consumers, fetched)
        except OpError:
            raise
        except (ValueError, TypeError, IndexError) as e:
            raise InvalidArgumentError(None, op, f"{op.type} op {op.name!r} cannot run on these inputs: "
                                       f"{e}") from e
        lvl = max((level.get(t, 0) for t in op._inputs), default=0) if stage_bytes else 0
        if not opdef.elementwise:
            memory.add(op._name, op.type, [v._array if isinstance(v, Expr) else v for v in vals
                                           if isinstance(v, (da.Array, Expr))],
                       [v for v in outs_vals if isinstance(v, da.Array)], stage=lvl,
                       scratch_chunks=ctx.scratch_chunks)
        for t, v in zip(outs, outs_vals):
            if t in env:
                continue
            if stage_bytes and _is_stage_boundary(opdef, vals, v, stage_bytes) and _value_meets_source(
                    op, [t_in._op for t_in, val in zip(inputs_of(op, resolved), vals)
                         if (_nbytes(val) or 0) >= stage_bytes], succ, stage_bytes):
                # the result keeps its chunks: later stages read it without rechunking
                spec = FeedSpec("numpy", tuple(int(d) for d in v.shape), t.dtype,
                                tuple(tuple(int(c) for c in dim) for dim in v.chunks))
                ph = _placeholder_array(f"stage-{t.name.replace('/', '.').replace(':', '_')}", spec)
                boundaries.append((lvl, FeedSlot(t, ph.name, spec), v))
                env[t], level[t] = ph, lvl + 1
                staged.add(t)
                if options.spill:
                    _spill_costly_inputs(ctx, op, vals, env, level, stage_bytes, boundaries, resolved, staged)
            else:
                env[t], level[t] = v, lvl

    outputs = []
    for e in fetch_elements:
        if isinstance(e, Tensor):
            v = env[e]
            try:
                outputs.append(v.materialize(ctx.fusion_log) if isinstance(v, Expr) else v)
            except (ValueError, TypeError) as err:  # e.g. run-time shapes that do not broadcast
                raise InvalidArgumentError(None, e.op, f"{e.op.type} op {e.op.name!r} cannot run on these "
                                           f"inputs: {err}") from err
        else:
            outputs.append(None)
    # Ops reached only through control inputs, and fetched ops, still run: their values are
    # computed and dropped.
    run_only = [c for op in ops for c in op.control_inputs] + [e for e in fetch_elements if isinstance(e, Operation)]
    extra = []
    for op in run_only:
        for t in op.outputs:
            v = env.get(t)
            if isinstance(v, Expr):
                v = v.materialize(ctx.fusion_log)
            if isinstance(v, da.Array):
                extra.append(v)
    commits = {}
    for var, t in commit_tensors.items():
        v = env[t]
        commits[var] = ctx.as_dask(v.materialize(ctx.fusion_log) if isinstance(v, Expr) else v)
    stored = {}  # variables the session holds on disk: their new value is written in their layout
    for var, arr in commits.items():
        layout = stored_layout(options, arr.shape, arr.dtype) if _nbytes(arr) is not None else None
        if layout:
            commits[var] = arr if arr.chunks == layout else arr.rechunk(layout)
            stored[var] = stored_chunk_shape(arr.shape, arr.dtype, options)
    for root, leaves, arr in fusion_log:
        memory.add(root, "fused", leaves, [arr], fused=True, scratch_chunks=fused_scratch_chunks(leaves, arr))
    memory.stage_results = sum(int(np.prod(a.shape)) * a.dtype.itemsize for _, _, a in boundaries)
    _apply_budget(memory, options)
    plan = DaskPlan(fetch_elements, outputs, extra, slots, params, commits, state, ctx.hooks, boundaries, stored)
    plan.memory = memory
    plan.num_workers = memory.workers
    return plan


def _spill_costly_inputs(ctx, op, vals, env, level, stage_bytes, boundaries, resolved, staged):
    """At a stage boundary, the large inputs that later stages read again are recomputed there:
    cheap for a Zarr read or a feed and the elementwise ops on them, but not for a matmul, a
    py_func or a random draw. Those are spilled instead: the boundary's stage writes them to a
    temporary Zarr array (a StoredValue in the session's scratch directory) as it computes them,
    and later stages read that array. The spills are deleted when the run ends."""
    for t_in, val in zip(inputs_of(op, resolved), vals):
        if t_in in staged or (_nbytes(val) or 0) < stage_bytes or not _costly(t_in.op, stage_bytes, staged):
            continue
        arr = val.materialize(ctx.fusion_log) if isinstance(val, Expr) else val
        if not isinstance(arr, da.Array) or not arr.ndim:
            continue
        grid = tuple(max(c) for c in arr.chunks)
        regular = dask_chunks(tuple(int(d) for d in arr.shape), grid)
        if arr.chunks != regular:
            arr = arr.rechunk(regular)
        spec = FeedSpec("numpy", tuple(int(d) for d in arr.shape), t_in.dtype, regular)
        ph = _placeholder_array(f"spill-{t_in.name.replace('/', '.').replace(':', '_')}", spec)
        lvl = level.get(t_in, 0)
        boundaries.append((lvl, FeedSlot(Spill(t_in), ph.name, spec), arr))
        env[t_in], level[t_in] = ph, lvl + 1
        staged.add(t_in)


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
        if d.elementwise or d.shape_only:
            stack.extend(t.op for t in o._inputs if t not in staged and not _statically_small(t, stage_bytes))
        elif o.type not in _CHEAP_SOURCES and d.state != "variable":
            return True
    return False


_CHEAP_SOURCES = {"ZarrSource", "Placeholder", "PlaceholderWithDefault", "Const", "Identity", "StopGradient"}


def _one_pass_moment(ctx, op, env, level, stage_bytes, boundaries, memory):
    """Lowers `reduce_mean(square(X - m))` with m from a later stage than X in X's own stage (see
    moments.py): X is read once for m and the squares together. False if the pattern does not apply."""
    from ..graph.dtypes import float64
    from ..kernels.reduction_ops import _host_ints, _normalize_axes
    from . import moments

    found = moments.match(op)
    if found is None:
        return False
    a, m, axis_t = found
    if level.get(m, 0) < level.get(a, 0):
        a, m = m, a  # square(m - x): the same deviation
    if a not in env or m not in env or axis_t not in env or level.get(m, 0) <= level.get(a, 0):
        return False
    n = a.shape.num_elements()
    axis_val = env[axis_t]
    if n is None or n * a.dtype.size < stage_bytes or isinstance(axis_val, (da.Array, Expr)):
        return False
    a_val, m_val = (v.materialize(ctx.fusion_log) if isinstance(v, Expr) else v for v in (env[a], env[m]))
    try:
        axes = _normalize_axes(_host_ints(np.asarray(axis_val)), a_val.ndim, op.type)
    except OpError:
        return False
    out_t = op.outputs[0]
    if not moments.applies(a_val, m_val, axes, out_t.dtype.np_dtype, stage_bytes // 16):
        return False
    ctx.op = op
    stats = moments.chunk_stats(a_val, axes, ctx.name("-moments"))
    memory.add(op._name, "Moments", [a_val], [stats], stage=level.get(a, 0))
    spec = FeedSpec("numpy", tuple(int(d) for d in stats.shape), float64,
                    tuple(tuple(int(c) for c in dim) for dim in stats.chunks))
    ph = _placeholder_array(f"stage-{op.name.replace('/', '.')}-moments", spec)
    boundaries.append((level.get(a, 0), FeedSlot(moments.Partials(op), ph.name, spec), stats))
    env[out_t] = moments.finish(ph, m_val, op.type, axes, op._attrs["keep_dims"], out_t.dtype.np_dtype)
    level[out_t] = max(level.get(a, 0) + 1, level.get(m, 0))
    return True


def stored_chunk_shape(shape, dtype, options):
    """The Zarr chunks of a variable held on disk (StoredValue): rows of about 16 MiB, or a 16th
    of the memory budget if smaller. Plans read and write such a variable in exactly these chunks."""
    target = min(ROW_CHUNK_BYTES, max(1, (options.memory_budget or ROW_CHUNK_BYTES) // 16))
    return row_chunks(tuple(int(s) for s in shape), np.dtype(dtype).itemsize, target)


def stored_layout(options, shape, dtype):
    """Dask chunks of a variable's value if the session holds it on disk, else None."""
    shape = tuple(int(s) for s in shape)
    if not options.store_bytes or not shape or \
            int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize < options.store_bytes:
        return None
    return dask_chunks(shape, stored_chunk_shape(shape, dtype, options))


def _apply_budget(memory, options):
    """Refuses a plan whose largest task cannot fit the budget; caps concurrency to fit it."""
    budget = options.memory_budget
    big = memory.largest
    if not budget or big is None:
        return
    if big.total > budget:
        raise ResourceExhaustedError(
            None, None, f"{big.op_type} op {big.op!r} needs a projected {format_bytes(big.total)} per task "
            f"(inputs {format_bytes(big.inputs)}, output {format_bytes(big.output)}, scratch "
            f"{format_bytes(big.scratch)}), over the memory budget of {format_bytes(budget)}; "
            + suggest_chunks(big, budget) + ".")
    fits = max(1, (budget - memory.stage_results) // big.total)
    memory.workers = int(min(memory.workers, fits))


def _nbytes(v):
    if isinstance(v, Expr):
        v = v._array
    if not isinstance(v, da.Array) or any(d != d for d in v.shape):
        return None
    return int(np.prod(v.shape, dtype=np.int64)) * v.dtype.itemsize


def _value_meets_source(op, sources, succ, stage_bytes):
    """True if an op depending on `op`'s value also depends on one of its large `sources` by another
    path (as `X - mean(X)`): only then does computing `op` first save holding the source. Ops that
    read only shapes (OnesLike of a loss, in a gradient) are not value dependencies."""
    fwd, stack = set(), [c for c in succ.get(op, ()) if not c._opdef.shape_only]
    while stack:
        o = stack.pop()
        if o not in fwd:
            fwd.add(o)
            stack.extend(c for c in succ.get(o, ()) if not c._opdef.shape_only)
    if not fwd:
        return False
    # the large inputs' own sources: back through elementwise producers (a fused chain feeding only
    # this reduction still reads X, which other ops may read too)
    roots, stack = set(), list(sources)
    while stack:
        o = stack.pop()
        if o not in roots:
            roots.add(o)
            if o._opdef.elementwise:  # follow only inputs that may be large (not a bias, not a scalar)
                stack.extend(t._op for t in o._inputs if not _statically_small(t, stage_bytes))
    dep, stack = set(), [c for p in roots for c in succ.get(p, ()) if c is not op and not c._opdef.shape_only]
    while stack:
        o = stack.pop()
        if o not in dep and o is not op:
            dep.add(o)
            if o in fwd:
                return True
            stack.extend(c for c in succ.get(o, ()) if not c._opdef.shape_only)
    return False


def _statically_small(t, stage_bytes):
    n = t.shape.num_elements()
    return n is not None and n * t.dtype.size < stage_bytes


def _is_stage_boundary(opdef, vals, out, stage_bytes):
    """A small result of a large dask input (a reduction): later ops read it from an earlier stage,
    so their large inputs are re-read instead of held between the two passes."""
    if opdef.elementwise or not isinstance(out, da.Array) or out.dtype == object:
        return False
    out_bytes = _nbytes(out)
    if out_bytes is None or out_bytes > stage_bytes // 16:
        return False
    # a global reduction: fewer output chunks than the large input has (a row-wise result such as
    # X @ w keeps X's chunks and is computed chunk by chunk alongside X: no second pass needed)
    for v in vals:
        arr = v._array if isinstance(v, Expr) else v
        if (_nbytes(v) or 0) >= stage_bytes and isinstance(arr, da.Array) and out.npartitions < arr.npartitions:
            return True
    return False


def _source(state, op, i, t):
    if not reads_input(op, i):
        return None
    src = state.sources.get((op, i))
    return src.outputs[0] if src is not None else t


def _lower_op(ctx, op, opdef, vals, consumers, fetched):
    host = all(not isinstance(v, (da.Array, Expr)) for v in vals)
    if host and not (opdef.stateful or opdef.run_state) and opdef.eager is not None and _small(op):
        out = opdef.eager(np_xp, *[np.asarray(v) for v in vals], **op._attrs)
        return [np.asarray(o) for o in out] if isinstance(out, (list, tuple)) else [np.asarray(out)]
    if opdef.elementwise and len(op.outputs) == 1 and _fusable(vals):
        args = []
        for t, v in zip(op.inputs, vals):
            if isinstance(v, Expr):
                if consumers.get(t, 0) > 1 or t in fetched:
                    args.append(Ext(v.materialize(ctx.fusion_log)))
                else:
                    args.append(v)
            elif isinstance(v, da.Array):
                args.append(Ext(v))
            else:
                v = np.asarray(v)
                args.append(Const(v) if v.ndim == 0 else Ext(ctx.as_dask(v)))
        out_t = op.outputs[0]
        return [Expr(opdef.eager, op._attrs, args, op.name, out_t.shape, out_t.dtype)]
    vals = [v.materialize(ctx.fusion_log) if isinstance(v, Expr) else v for v in vals]
    if opdef.lower is not None:
        out = opdef.lower(ctx, *vals, **op._attrs)
    else:
        out = opdef.eager(_dask_xp, *[ctx.as_dask(v) for v in vals], **op._attrs)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _fusable(vals):
    return any(isinstance(v, (da.Array, Expr)) for v in vals)


def _small(op):
    for t in op.outputs:
        n = t.shape.num_elements()
        if n is None or n > _FOLD_MAX_ELEMENTS:
            return op.op_def.fold is not None
    return True
