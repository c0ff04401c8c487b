"""The compiler: (fetches, feed signature, host decisions) -> Plan, or a HostDecision.

1. Build the Program (`program.py`): the pruned ops, resolved state and the steps to run. An
   undecided host op (cond, while loop) returns a HostDecision for the session to settle.
2. Choose the mode: small plans over in-memory feeds run in process (`EagerPlan`); everything else
   is lowered to Dask.
3. Lower (`lower_dask`), step by step in topological order. Values known on the host (constants,
   shapes of arrays whose sizes are known, small integer arithmetic on them, host decisions) are
   folded; elementwise ops become fusion `Expr`s (`fusion.py`); every other op goes through its
   OpDef's `lower`, or its eager kernel run with the dask namespace. A lowering that needs on the
   host a value computed in this run (`ctx.host_value`), or chunks of a value of unknown rank,
   stops the lowering with a HostDecision for that tensor.
4. Stage (`staging.py`) as the steps are lowered; registered rewrites (one-pass moments) apply.
5. Project memory (`memory.py`) and apply the budget; build the DaskPlan (`plan.py`).
"""

from __future__ import annotations

import dataclasses
import itertools

import array_api_compat
import array_api_compat.numpy as np_xp
import dask.array as da
import numpy as np
from dask.highlevelgraph import HighLevelGraph

from .. import dask_compat
from ..errors import (
    OpError,
    ResourceExhaustedError,
    UnimplementedError,
    kernel_failure,
    raise_kernel_failure,
)
from ..graph.dtypes import as_dtype
from ..graph.evaluate import FOLD_MAX_ELEMENTS, foldable, input_failure, quiet, value_shape
from ..graph.ops import Tensor
from ..graph.registry import OpState
from . import moments  # noqa: F401 - registers its rewrite
from .fusion import (
    Const,
    Expr,
    Ext,
    compile_expr,
    fused_scratch_chunks,
    monotone_in,
    unknown_size_leaves,
)
from .host import HostDecision
from .memory import (
    MemoryReport,
    check_chunk_grid,
    check_elements,
    check_held,
    format_bytes,
    suggest_chunks,
)
from .plan import DaskPlan, EagerPlan, FeedSlot, FeedSpec
from .program import Program
from .staging import Stager, rewrite_for

_names = itertools.count()
_dask_xp = array_api_compat.array_namespace(da.zeros(1))


class NeedValues(Exception):
    """Raised inside a lowering: these tensors' values are needed on the host first."""

    def __init__(self, tensors, constant, why):
        super().__init__(why)
        self.tensors = tensors
        self.constant = constant
        self.why = why


class Whole:
    """A value of unknown rank in one task (a py_func output without a static shape)."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


def compile_plan(fetch_elements, feeds, options, decisions=None):
    """Builds the Plan for these fetches; `feeds` maps Tensor -> FeedSpec (kind, shape, dtype,
    chunks); `decisions` maps decided cond ops to their branch and tensors to host values.
    Returns a HostDecision instead when the session must decide something on the host first."""
    decisions = decisions or {}
    constants = {t: v for t, v in decisions.items() if isinstance(t, Tensor)}
    program = Program(fetch_elements, set(feeds) | set(constants), decisions, options)
    if program.pending is not None:
        return HostDecision(op=program.pending)
    _refuse_impossible(program, feeds, options)
    if _use_eager(program, feeds, options):
        plan = EagerPlan(program)
        plan.allocation_limit = options.memory_budget  # a run-time shape over it: the session goes to Dask
        return plan
    try:
        plan = lower_dask(program, feeds, constants, options)
    except NeedValues as need:
        return HostDecision(tensors=_with_siblings(need.tensors, set(feeds) | set(constants)), constant=need.constant,
                            why=need.why)
    if plan.kind == "dask":  # on a cluster, a plan this small runs as one task (one scheduler hop)
        budget = options.memory_budget
        limit = ONE_TASK_BYTES if budget is None else min(ONE_TASK_BYTES, budget // 16)
        plan.small = not plan.stages and _use_eager(program, feeds, dataclasses.replace(options, small_plan_bytes=limit))
    return plan


def _with_siblings(tensors, settled):
    """The tensors computed first, with the other small outputs of their ops: the run that follows
    gets them all from that one execution, so one op's outputs agree even when it draws random
    numbers (a sampled crop's begin, size and box)."""
    out = list(tensors)
    for t in tensors:
        for o in t.op.outputs:
            if o not in out and o not in settled and o.shape.is_fully_defined() and \
                    o.shape.num_elements() <= FOLD_MAX_ELEMENTS:
                out.append(o)
    return out


def _refuse_impossible(program, feeds, options):
    """Refuses, from static shapes and before anything is lowered or allocated, what cannot exist:
    a tensor of more than 2**63 - 1 elements (InvalidArgumentError) and a fetched tensor, or a
    variable's new value kept in memory, larger than the budget or the machine
    (ResourceExhaustedError). Linear in the program; see memory.py for the limits."""
    for step in program.steps:
        for t in step.outputs:
            if t is not None and t.shape.is_fully_defined():
                check_elements(t.op, t.shape.as_list())
    for t in program.fetch_tensors:
        if t is not None and t not in feeds and t.shape.is_fully_defined() and np.dtype(t.dtype.np_dtype).kind != "O":
            check_held(t.op, f"fetched {t.name!r}", t.shape.as_list(), t.dtype.np_dtype, options.memory_budget,
                       options.machine_memory)
    for var, t in program.commit_tensors.items():
        shape = t.shape
        if shape.is_fully_defined() and np.dtype(t.dtype.np_dtype).kind != "O" and options.local and \
                options.storage.layout(shape.as_list(), t.dtype.np_dtype) is None:
            check_held(t.op, f"the new value of variable {var!r}", shape.as_list(), t.dtype.np_dtype,
                       options.memory_budget, options.machine_memory)

# A plan on a cluster whose feeds and tensors are all below this runs as one task on one worker
ONE_TASK_BYTES = 64 << 20



# A read from storage (a Zarr source) larger than this keeps the plan on Dask even under a larger
# small_plan_bytes: there it stays lazy and reads only the chunks the fetches touch.
EAGER_STORAGE_READ_BYTES = 1 << 20


def _use_eager(program, feeds, options):
    """Whether the plan runs in this process: numpy feeds of at most `small_plan_bytes` in all, no
    tensor of known size above it (a variable kept in memory and read only by row gathers and
    scatters is not counted, nor a scatter's value), no sink, and no storage read above
    EAGER_STORAGE_READ_BYTES."""
    limit = options.small_plan_bytes
    if not limit or any(op._opdef.state is OpState.SINK for op in program.ops):
        return False
    total = 0
    for spec in feeds.values():
        if spec.kind != "numpy":
            return False
        total += spec.nbytes
    if total > limit:
        return False
    in_program = None
    for op in program.ops:
        if op._opdef.traits.row_patch:
            continue  # a row scatter's value is its rows (storage/patch.py); a reader's output is counted
        if op._opdef.state is OpState.VARIABLE:
            # an embedding read only by row gathers and scatters stays in memory: the plan touches rows
            in_program = in_program or set(program.ops)
            t = op._outputs[0]
            if options.storage.layout(t.shape.as_list(), t.dtype.np_dtype) is None and all(
                    (c._opdef.traits.reads_rows or c._opdef.traits.row_patch) and c._inputs[0] is t
                    for c in t.consumers() if c in in_program):
                continue
        reads_storage = op._opdef.traits.stateful and op._opdef.traits.cheap_source
        cap = min(limit, EAGER_STORAGE_READ_BYTES) if reads_storage else limit
        for t in op._outputs:
            n = t.shape.num_elements()
            if n is not None and n * t.dtype.size > cap:
                return False
    return True


class _RowsOffer:
    """An array made by tasks over its rows that can take an epilogue and a tail (`offer_rows`):
    the tensor it is (None for one with its epilogue built in: the chain's result, found by
    `_tensor_of`), its build, the dask inputs of its tasks, its window axes, the epilogue built
    in, whether that epilogue may run after a max pool, whether a tail was built."""

    __slots__ = ("tensor", "build", "inputs", "window_axes", "epilogue", "after_max", "tail")

    def __init__(self, tensor, build, inputs, window_axes, epilogue=None, after_max=False):
        self.tensor, self.build, self.inputs, self.window_axes = tensor, build, inputs, window_axes
        self.epilogue, self.after_max, self.tail = epilogue, after_max, False


class LowerContext:
    """What a lowering sees besides its inputs: the op, dask helpers and per-run parameters."""

    da = da
    xp = _dask_xp

    def __init__(self, options, params):
        self.options = options
        self.op = None
        self.inputs = ()  # (tensor, value) of the op being lowered
        self.scratch_chunks = None
        self.fusion_log = []  # fused chains materialized while lowering: (root name, leaves, array)
        self._params = params  # param key -> (FeedSlot, placeholder dask array)
        self.hooks = {"before_run": [], "on_success": [], "publish": [], "on_failure": []}
        self.owners = {}  # dask array name -> the op whose output it is (a failing task names its op)
        self.row_patches = {}  # op -> (0-d task of (indices, rows), add): see `row_patch`
        self.program = None
        self._offers = {}  # dask array name -> _RowsOffer: see `offer_rows`
        self.task_inputs = None  # an op's tasks read these instead of its inputs (`row_tail`)
        self._fills = {}  # dask array name -> the host scalar every element of it is (`note_fill`)

    def note_fill(self, arr, value):
        """Declares every element of dask array `arr` (this op's output) to be host scalar `value`
        (a Fill): a reduction of it can be computed from the value and the shape (`fill_of`)."""
        self._fills[arr.name] = np.asarray(value)

    def fill_of(self, x):
        """The host scalar every element of dask array `x` is (a Fill's), or None."""
        return self._fills.get(getattr(x, "name", None))

    def before_run(self, fn):
        """`fn(run)` runs on the client before the run's tasks (it may raise to refuse the run)."""
        self.hooks["before_run"].append(fn)

    def on_success(self, fn):
        """`fn(run)` runs on the client after every task succeeded, before variables commit."""
        self.hooks["on_success"].append(fn)

    def on_publish(self, fn):
        """`fn(run)` returns a `storage.files.Publication` (an output written under a temporary
        name); after every task and success hook, the run's publications go in place together
        (`files.publish`: all or none), before variables commit. A failed publication fails the run."""
        self.hooks["publish"].append(fn)

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
            if isinstance(a, Whole):
                a = a.array
            if isinstance(a, da.Array):
                whole = a.rechunk(tuple((d,) for d in a.shape)) if a.ndim and a.npartitions > 1 else a
                a = whole.to_delayed(optimize_graph=False).reshape(-1)[0]
            dargs.append(a)
        task = dask.delayed(fn, pure=False)(*dargs)
        return da.from_delayed(task, shape, dtype=dtype, meta=meta)

    def row_patch(self, indices_rows, add):
        """Declares this op's new variable value as its input 0 with rows changed: `indices_rows`
        is a 0-d task computing (flat indices, rows). Where the session can apply them in place
        (a local scheduler, a variable kept in memory, input 0 its value at the start of the run)
        the commit takes them instead of the whole value (storage/patch.py)."""
        self.row_patches[self.op] = (indices_rows, add)

    def whole(self, arr):
        """Marks a one-task 0-d dask array as a whole value of unknown rank (see `Whole`)."""
        return Whole(arr)

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

    def _tensor_of(self, x):
        """The input tensor whose value `x` is (an elementwise chain's input arrives built)."""
        return next((t for t, v in self.inputs if t is not None and (v is x or isinstance(v, Expr) and v._array is x)),
                    None)

    def host_value(self, x, what):
        """`x` as a numpy value known now. If it is computed in this run, the lowering stops and
        the session computes that tensor first (a host decision; the plan is cached per value)."""
        if isinstance(x, da.Array):
            t = self._tensor_of(x)
            why = (f"{self.op.type} op {self.op.name!r}: {what} depends on data computed in this run "
                   "and could not be computed first.")
            if t is not None and (t.dtype.is_integer or t.dtype.is_bool) and \
                    (t.shape.num_elements() or 0) <= FOLD_MAX_ELEMENTS:
                raise NeedValues([t], True, why)
            raise UnimplementedError(None, self.op, why)
        return np.asarray(x)

    def host_values(self, *pairs):
        """host_value of each (x, what), the ones computed in this run asked for together: values
        of one run, so that outputs of one random op (a crop's begin and size) agree."""
        out, needed = [], []
        for x, what in pairs:
            try:
                out.append(self.host_value(x, what))
            except NeedValues as e:
                needed.append(e)
        if needed:
            raise NeedValues([t for e in needed for t in e.tensors], all(e.constant for e in needed), needed[0].why)
        return out

    def known_shape(self, x):
        shape = tuple(x.shape)
        if any(isinstance(d, float) and d != d for d in shape):
            t = self._tensor_of(x)
            why = f"{self.op.type} op {self.op.name!r}: the shape of its input is data-dependent here."
            if t is not None:
                raise NeedValues([t], False, why)  # computed first, then fed with its sizes known
            raise UnimplementedError(None, self.op, why)
        return shape

    def default_chunks(self, shape, dtype):
        """Chunks for a value this op makes from a shape (Fill, a host value). Refuses a shape of
        more than 2**63 - 1 elements, and a chunk grid too long to plan: dask keeps one entry per
        chunk along each axis, so a huge lazy shape in small chunks fills the memory before any
        chunk is touched (see memory.py)."""
        if self.op is not None:
            check_elements(self.op, shape)
            check_chunk_grid(self.op, shape, dask_compat.chunk_counts(self.options.chunks, shape, self.options.chunk_limit,
                                                                   _chunk_dtype(dtype)))
        return normalize_chunks(self.options.chunks, shape, dtype, self.options.chunk_limit)

    def run_param(self, spec, shape=(), dtype=np.int64, chunks=None):
        """A dask array whose value the session supplies each run (a random op's counter, a
        variable's value at the start of the run); chunked like a feed."""
        if spec not in self._params:
            shape = tuple(int(d) for d in shape)
            chunks = normalize_chunks(chunks or self.options.chunks, shape, dtype, self.options.chunk_limit)
            slot_spec = FeedSpec("numpy", shape, as_dtype(np.dtype(dtype)), chunks)
            arr = self.placeholder(f"dflow-param-{spec[0]}", slot_spec)
            self._params[spec] = FeedSlot(spec, arr.name, slot_spec), arr
        return self._params[spec][1]

    def placeholder(self, prefix, spec):
        """A dask array whose chunk keys hold None until a run sets them to data."""
        name = f"{prefix}-{next(_names)}"
        blocks = itertools.product(*[range(len(c)) for c in spec.chunks])
        layer = {(name,) + b: dask_compat.empty_slot((name,) + b) for b in blocks}
        np_dtype = spec.dtype.np_dtype
        return da.Array(HighLevelGraph.from_collections(name, layer, dependencies=()), name, spec.chunks,
                        dtype=np_dtype, meta=np.empty((0,) * len(spec.shape), dtype=np_dtype))

    def name(self, suffix=""):
        base = self.op.name.replace("/", ".") if self.op is not None else "dflow"
        return f"{base}{suffix}-{next(_names)}"

    def offer_rows(self, arr, build, window_axes=()):
        """Declares `arr`, this op's single output, as made by tasks over its rows (axis 0) that can
        also run, on slabs of their output rows while in cache, an elementwise chain that is its
        only reader (OpDef `epilogue`; the in-process plans do the same, fusion.epilogue_producers)
        and then an op on whole rows reading that alone (`row_tail`: a pool). `build(epilogue,
        tail, after_max)` gives the array of the tasks with them inside: epilogue = (kernel, slot,
        others), the chain's FusedKernel taking the slab at leaf `slot` and the whole `others`
        (lower-rank dask arrays) as its other leaves; tail = (eager kernel, attrs, row shape);
        after_max: the tail is a max pool and the chain runs on its result instead (exact for a
        chain non-decreasing in the slab whose other leaves are the same across `window_axes`, the
        axes a pool's windows span, and finite: the tasks check that); None where the producer
        cannot. Called while the producer is lowered (its inputs are `self.inputs`)."""
        inputs = [v._array if isinstance(v, Expr) else v for _, v in self.inputs]
        self._offers[arr.name] = _RowsOffer(self.op._outputs[0], build, [v for v in inputs if isinstance(v, da.Array)],
                                            tuple(window_axes))

    def _only_reader(self, t):
        return t is not None and t not in self.program.kept and self.program.reads.get(t, 0) == 1

    def _with_epilogue(self, v):
        """Builds chain `v` inside its producer's tasks (`offer_rows`) when it is the only reader of
        an offered array, keeps its rank and dtype, and its other leaves broadcast into it without
        spanning its rows (a bias: the chain's result then has the array's shape); the producer's
        own array is then never computed."""
        if v._array is not None or not self._offers:
            return
        kernel, leaves = compile_expr(v)
        found = [(i, a) for i, a in enumerate(leaves) if a.name in self._offers]
        if len(found) != 1:
            return
        slot, arr = found[0]
        offer = self._offers[arr.name]
        others = leaves[:slot] + leaves[slot + 1:]
        if offer.epilogue is not None or offer.tail or not self._only_reader(offer.tensor) \
                or np.dtype(v.dtype.np_dtype) != arr.dtype or not v.shape.is_compatible_with(arr.shape) \
                or not all(_broadcasts_into(o.shape, arr.shape) for o in others):
            return
        built = offer.build((kernel, slot, others), None, False)
        if built is None:
            return
        after_max = bool(offer.window_axes) and monotone_in(v, arr) and \
            all(_same_across(o.shape, arr.ndim, offer.window_axes) for o in others) and \
            all(np.isfinite(c).all() for c in kernel.consts)  # (a leaf's finiteness the tasks check)
        v._array = built
        # its tasks read the producer's inputs, not the producer's output
        self.fusion_log.append((v.op_name, offer.inputs + others, built))
        self._offers[built.name] = _RowsOffer(None, offer.build, offer.inputs + others, offer.window_axes,
                                              (kernel, slot, others), after_max)

    def row_tail(self, x, eager, attrs, row_shape, max_axes=None):
        """For a lowering of an op on whole rows (a pool; `max_axes`: a max over windows spanning
        these axes): `x` (its input) built with this op inside its producer's tasks (`offer_rows`),
        when this op is the only reader of `x`: the array of this op's output, or None. The
        producer's output is then never held whole."""
        offer = self._offers.get(getattr(x, "name", None))
        if offer is None or offer.tail:
            return None
        if not self._only_reader(offer.tensor if offer.tensor is not None else self._tensor_of(x)):
            return None
        after_max = offer.after_max and max_axes is not None and set(max_axes) <= set(offer.window_axes)
        built = offer.build(offer.epilogue, (eager, attrs, tuple(row_shape)), after_max)
        if built is not None:
            offer.tail = True
            self.task_inputs = offer.inputs  # for the memory projection of this op's tasks
        return built

    def materialized(self, v):
        if not isinstance(v, Expr):
            return v
        self._with_epilogue(v)
        try:
            return v.materialize(self.fusion_log)
        except ValueError as e:  # leaves whose data-dependent sizes dask cannot pair with the others
            unknown = unknown_size_leaves(v)
            if unknown:
                raise NeedValues(unknown, False, f"op {v.op_name!r}: inputs of data-dependent size: {e}") from e
            raise

    def fused(self, x):
        """For a lowering registered with `takes_fused`: (FusedKernel, leaf dask arrays, the chain's
        dask array) if input `x` is an elementwise chain only this op reads, else None. The
        lowering then runs the kernel in its own tasks (by slabs); the array gives its shape and
        chunks and is computed only if the lowering falls back to it (the memory projection counts
        it either way: an overestimate when the chain is streamed)."""
        if not isinstance(x, Expr):
            return None
        self._with_epilogue(x)
        if x._array is not None:  # built inside its producer's tasks
            return None
        kernel, leaves = compile_expr(x)
        return kernel, leaves, x.materialize(self.fusion_log)


def _same_across(leaf, ndim, axes):
    """Whether a leaf of shape `leaf`, broadcast into a value of rank `ndim`, is the same along `axes`."""
    return all(ax < ndim - len(leaf) or leaf[ax - (ndim - len(leaf))] == 1 for ax in axes)


def _broadcasts_into(leaf, out):
    """A leaf shape of lower rank, known, whose every dim is 1 or the dim of `out` it meets."""
    return len(leaf) < len(out) and all(d == 1 or d == o for d, o in zip(leaf[::-1], out[::-1])) and \
        not any(d != d for d in leaf)


def normalize_chunks(chunks, shape, dtype, limit=None):
    """Dask chunks for `shape`; a per-dimension tuple of the wrong length falls back to "auto".
    `limit`: bytes per "auto" chunk (None: dask's array.chunk-size, 128 MiB)."""
    if isinstance(chunks, (tuple, list)) and len(chunks) != len(shape):
        chunks = "auto"
    return dask_compat.normalize_chunks(chunks, tuple(shape), limit=limit, dtype=_chunk_dtype(dtype))


def _chunk_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "O":  # strings: dask cannot size "auto" chunks of objects; count 64 bytes each
        dtype = np.dtype("S64")
    return dtype


# ---- lowering ---------------------------------------------------------------------------------
def lower_dask(program, feeds, constants, options):
    params = {}
    ctx = LowerContext(options, params)
    ctx.program = program
    env = dict(constants)
    slots = []
    for t, spec in feeds.items():
        if t in constants:
            continue  # a fed value the plan was specialised to (a shape fed as a placeholder)
        arr = ctx.placeholder(f"feed-{t.name.replace('/', '.').replace(':', '_')}", spec)
        env[t] = arr
        slots.append(FeedSlot(t, arr.name, spec))
    stager = Stager(program, options, ctx) if options.stage_bytes else None
    memory = MemoryReport(workers=options.workers, worker_bytes=options.worker_bytes,
                          pickled=options.pickled_results)
    for step in program.steps:
        _lower_step(ctx, program, step, env, stager, memory)
    outputs = [_output(ctx, env, t) if t is not None else None for t in program.fetch_tensors]
    # ops reached only through control inputs, and fetched ops, still run: their values are
    # computed and dropped
    commits, stored, patches = _commit_values(ctx, program, env, options)
    patched = {program.commit_tensors[var] for var in patches}  # run by computing their rows alone
    extra = [v.array if isinstance(v, Whole) else v for v in (ctx.materialized(env.get(t)) for t in program.run_only
                                                               if t not in patched)]
    extra = [v for v in extra if isinstance(v, da.Array)]  # (a py_func's output of unknown rank is a Whole)
    for root, leaves, arr in ctx.fusion_log:
        memory.add(root, "fused", leaves, [arr], fused=True, scratch_chunks=fused_scratch_chunks(leaves, arr))
    boundaries = stager.boundaries if stager else []
    memory.stage_results = sum(int(np.prod(a.shape)) * a.dtype.itemsize for _, _, a in boundaries)
    _apply_budget(memory, options)
    plan = DaskPlan(program.fetch_elements, outputs, extra, slots, params, commits, program.state, ctx.hooks,
                    boundaries, stored, patches)
    memory.check_graph(plan.n_tasks, options.memory_budget)
    plan.memory = memory
    plan.num_workers = memory.workers
    plan.owners = ctx.owners
    return plan


def _lower_step(ctx, program, step, env, stager, memory):
    op, opdef = step.op, step.opdef
    ctx.op, ctx.scratch_chunks, ctx.task_inputs = op, None, None
    if step.select:  # a decided cond: its outputs are the taken branch's
        for t, b in zip(step.outputs, step.inputs):
            env[t] = env[b]
            if stager is not None:
                stager.level[t] = stager.level.get(b, 0)
        return
    vals = [env.get(t) if t is not None else None for t in step.inputs]
    for t, v in zip(step.inputs, vals):
        if isinstance(v, Whole) and not opdef.traits.takes_whole:
            raise NeedValues([t], False, f"{op.type} op {op.name!r} reads {t.name!r}, whose rank is "
                             "unknown (a py_func output without set_shape); it is computed first.")
    rewrite = rewrite_for(op) if stager is not None else None
    if rewrite is not None and rewrite(ctx, op, env, stager, memory):
        return
    ctx.inputs = tuple(zip(step.inputs, vals))
    try:
        outs_vals = _lower_op(ctx, program, op, opdef, vals, step.inputs)
    except NeedValues:
        raise
    except OpError as e:
        raise_kernel_failure(op, e)  # a lowering's own error (a bad attribute value) names its op
    except (ValueError, TypeError, IndexError, NotImplementedError, ArithmeticError) as e:
        # (ArithmeticError: a kernel folded on host values, e.g. an integer division by zero)
        # an input of data-dependent size that this lowering cannot take chunk by chunk: it is
        # computed first and fed, its sizes then known
        arrays = [v._array if isinstance(v, Expr) else v for v in vals]
        unknown = [t for t, v in zip(step.inputs, arrays) if isinstance(v, da.Array) and any(d != d for d in v.shape)]
        if unknown:
            raise NeedValues(unknown, False, f"{op.type} op {op.name!r} cannot take its inputs of "
                             f"data-dependent size chunk by chunk: {e}") from e
        raise input_failure(op, e, [value_shape(v) for v in vals], where=" on these inputs") from e
    finally:
        ctx.inputs = ()
    for v in outs_vals:
        v = v.array if isinstance(v, Whole) else v
        if isinstance(v, da.Array):
            ctx.owners.setdefault(v.name, op)
            if not any(d != d for d in v.shape):  # a run-time shape no static check saw: refused before the plan is built
                check_elements(op, v.shape)
    lvl = stager.stage_of(step.inputs) if stager is not None else 0
    if not opdef.traits.elementwise:
        ins = ctx.task_inputs if ctx.task_inputs is not None else \
            [v._array if isinstance(v, Expr) else v for v in vals if isinstance(v, (da.Array, Expr))]
        memory.add(op._name, op._type, ins,
                   [v for v in outs_vals if isinstance(v, da.Array)], stage=lvl, scratch_chunks=ctx.scratch_chunks)
    for t, v in zip(step.outputs, outs_vals):
        if t in env:
            continue  # fed
        if opdef.traits.takes_whole and t.shape.ndims is None and isinstance(v, da.Array) and v.ndim == 0 \
                and any(isinstance(x, Whole) for x in vals):
            v = Whole(v)  # an identity of a whole value
        if stager is not None:
            stager.place(op, t, v, vals, lvl, env)
        else:
            env[t] = v


def _lower_op(ctx, program, op, opdef, vals, inputs):
    host = all(not isinstance(v, (da.Array, Expr, Whole)) for v in vals)
    if host and foldable(op, vals):  # computed now, on the host (a kernel's error is the op's)
        with quiet():
            out = opdef.eager(np_xp, *[np.asarray(v) for v in vals], **op._attrs)
        return [np.asarray(o) for o in out] if isinstance(out, (list, tuple)) else [np.asarray(out)]
    if opdef.traits.elementwise and len(op._outputs) == 1 and any(isinstance(v, (da.Array, Expr)) for v in vals):
        args = []
        for t, v in zip(inputs, vals):
            if isinstance(v, Expr):
                args.append(v if program.fuses_into_consumer(t) else Ext(ctx.materialized(v), t))
            elif isinstance(v, da.Array):
                args.append(Ext(v, t))
            else:
                v = np.asarray(v)
                args.append(Const(v) if v.ndim == 0 else Ext(ctx.as_dask(v)))
        out_t = op._outputs[0]
        return [Expr(opdef.eager, op._attrs, args, op._name, out_t.shape, out_t.dtype, opdef.traits.monotone)]
    vals = [v.array if isinstance(v, Whole) else
            v if isinstance(v, Expr) and opdef.traits.takes_fused and program.fuses_into_consumer(t) else
            ctx.materialized(v) for t, v in zip(inputs, vals)]
    if opdef.lower is not None:
        out = opdef.lower(ctx, *vals, **op._attrs)
    else:
        out = opdef.eager(_dask_xp, *[ctx.as_dask(v) for v in vals], **op._attrs)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _output(ctx, env, t):
    v = env[t]
    try:
        v = ctx.materialized(v)
    except NeedValues:
        raise
    except (ValueError, TypeError) as err:  # e.g. run-time shapes that do not broadcast
        raise kernel_failure(t.op, err, where=" on these inputs") from err
    if isinstance(v, da.Array) and np.dtype(t.dtype.np_dtype).kind != "O" and not any(d != d for d in v.shape):
        check_held(t.op, f"fetched {t.name!r}", v.shape, v.dtype, ctx.options.memory_budget,
                   ctx.options.machine_memory)  # a run-time shape the static checks could not see
    return v.array if isinstance(v, Whole) else v


def _commit_values(ctx, program, env, options):
    """The new values of the variables assigned in this run, as dask arrays; those the session
    keeps on disk are rechunked to their stored layout (their tasks write them there)."""
    commits, stored, patches = {}, {}, {}
    for var, t in program.commit_tensors.items():
        patch = ctx.row_patches.get(t.op)
        if patch is not None and options.local and (t.op, 0) not in program.state.sources and \
                options.storage.layout(t.shape.as_list(), t.dtype.np_dtype) is None:
            patches[var] = patch  # rows applied to the committed array in place (schedule/store.py)
            continue
        v = env[t]
        if isinstance(v, Whole):
            raise NeedValues([t], False, f"the new value of variable {var!r} has an unknown rank")
        arr = ctx.as_dask(ctx.materialized(v))
        layout = options.storage.layout(arr.shape, arr.dtype) if not any(d != d for d in arr.shape) else None
        if layout:
            arr = arr if arr.chunks == layout else arr.rechunk(layout)
            stored[var] = options.storage.chunk_shape(arr.shape, arr.dtype)
        commits[var] = arr
    return commits, stored, patches


def _apply_budget(memory, options):
    """Refuses a plan whose largest task cannot fit the budget (or, without one, this machine when
    the tasks run here); caps concurrency to fit the budget."""
    budget = options.memory_budget
    big = memory.largest
    limit = budget or (options.machine_memory if options.local else None)
    if not limit or big is None:
        return
    if big.total > limit:
        where = (f"over the memory budget of {format_bytes(budget)}" if budget else
                 f"more than this machine's memory ({format_bytes(limit)})")
        raise ResourceExhaustedError(
            None, None, f"{big.op_type} op {big.op!r} needs a projected {format_bytes(big.total)} per task "
            f"(inputs {format_bytes(big.inputs)}, output {format_bytes(big.output)}, scratch "
            f"{format_bytes(big.scratch)}), {where}; " + suggest_chunks(big, limit) + ".")
    if not budget:
        return
    per = memory.per_worker
    if per + memory.stage_results > budget:  # the task fits, not with its worker process
        raise ResourceExhaustedError(
            None, None, f"{big.op_type} op {big.op!r} needs a projected {format_bytes(big.total)} per task and "
            f"each worker process of the processes scheduler {format_bytes(per - big.total)} more (its interpreter "
            f"and the result it pickles back); with {format_bytes(memory.stage_results)} of stage results that is "
            f"{format_bytes(per + memory.stage_results)}, over the memory budget of {format_bytes(budget)}. Use the "
            "threads scheduler (tasks share this process) or a larger budget.")
    fits = max(1, (budget - memory.stage_results) // per)
    memory.workers = int(min(memory.workers, fits))
