"""Plans: what `Session.run` executes for one (fetches, feed signature, host decisions).

- `EagerPlan`: a Program's steps run through their eager kernels in this process, elementwise
  chains fused into one `FusedKernel` each (the kernel the Dask path runs per chunk), every
  intermediate freed after its last use. Used for small plans over in-memory feeds, where a Dask
  round trip would cost more than the work.
- `DaskPlan`: one materialized, culled Dask graph. Feeds and per-run parameters are placeholder
  keys in it; each run copies the graph dict, sets those keys to the new data, and calls the
  scheduler. Nothing is re-lowered or re-optimized on later runs.

A plan runs with `plan.run(rc, feed_values)`: `rc` is a `RunContext` (the executor, the run's
number, per-run values, the scratch store), never the Session.
"""

from __future__ import annotations

import functools
import math
import operator
from dataclasses import dataclass
from typing import Callable, NamedTuple

import dask.array as da
import numpy as np

from ..dask_compat import (
    Task,
    TaskRef,
    alias,
    count_tasks,
    cull,
    culled_graph,
    downstream,
    flatten,
    gather_blocks,
    key_name,
)
from ..errors import OpError, kernel_failure
from ..graph.evaluate import namespace, quiet
from ..kernels.common import allocation_limit, index_checks, run_with_epilogue
from ..kernels.cores import intra_op_threads
from ..storage.files import publish
from ..storage.patch import RowPatch, materialized
from ..storage.values import (
    Part,
    RemoteValue,
    StoredValue,
    block_indices,
    block_slices,
)
from .executor_base import Kept
from .fusion import epilogue_producers, fusion_groups
from .steps import KernelStep, StepCode, bound


@dataclass
class RunContext:
    """What a plan sees of one run: the executor, the run's number and token, and the session's
    per-run values through callables (a plan never holds the Session).

    `param(spec)`: a per-run value (a variable's committed value, a random op's counter);
    `remember(spec, value)`: keep a value shipped to a cluster for later runs; `new_stored(name,
    shape, dtype, chunk_shape)`: an empty StoredValue in the session's scratch directory."""

    executor: object
    number: int
    token: int
    param: Callable
    remember: Callable
    new_stored: Callable
    trace: object = None  # a tracing.RunTrace when the run is traced or has a deadline
    intra_op_threads: int = 0  # threads one in-process kernel may split over (ConfigProto's; 0: per core)

    def eager_ctx(self, op):
        return _EagerCtx(self, op)


class _EagerCtx:
    """The `ctx=` of an eager kernel of a run_state op (a random op's draw counter)."""

    __slots__ = ("rc", "op")

    def __init__(self, rc, op):
        self.rc = rc
        self.op = op

    def run_param(self, spec, shape=(), dtype=np.int64):
        value = self.rc.param(spec)
        return value.to_host() if isinstance(value, (RemoteValue, StoredValue)) else value


@dataclass(frozen=True)
class FeedSpec:
    """The part of a feed that a plan depends on: kind, shape, dtype and chunks."""

    kind: str  # "numpy" | "dask"
    shape: tuple
    dtype: object  # DType
    chunks: tuple

    @property
    def nbytes(self):
        return math.prod(self.shape) * self.dtype.size


@dataclass(eq=False)
class FeedSlot:
    """A placeholder array's keys in a plan and where its data comes from each run (a feed, a
    per-run value, or an earlier stage's result)."""

    tensor: object
    name: str
    spec: FeedSpec

    def pieces(self, value):
        """The placeholder keys of this feed mapped to the run's data (views or aliases)."""
        if isinstance(value, StoredValue):
            if value.chunks == self.spec.chunks:
                return value.pieces(self.name)
            value = value.to_host()
        if isinstance(value, RemoteValue):
            if value.chunks == self.spec.chunks:
                return {(self.name,) + idx: _block_ref((self.name,) + idx, b)
                        for idx, b in zip(block_indices(self.spec.chunks), value.blocks())}
            value = value.to_host()
        if self.spec.kind == "numpy":
            if not self.spec.shape:
                return {(self.name,): value}
            out = {}
            for idx, slc in zip(block_indices(self.spec.chunks), block_slices(self.spec.chunks)):
                key = (self.name,) + idx
                out[key] = _feed_block(key, value[slc])
            return out
        out = dict(value.__dask_graph__())
        for idx, key in zip(block_indices(self.spec.chunks), flatten(value.__dask_keys__())):
            k = (self.name,) + idx
            out[k] = alias(k, key)
        return out


class Spill:
    """The key of a stage result that is a large value written to local disk (a StoredValue) for
    later stages to read, instead of being recomputed there (named for `explain`)."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.name = f"{tensor.name} (spilled to disk)"


class EagerPlan:
    """A Program run in this process (see the module doc)."""

    kind = "eager"
    allocation_limit = None  # bytes: a kernel sized at run time refuses more (compile_plan sets the budget)

    def __init__(self, program):
        self.fetch_elements = program.fetch_elements
        self.state = program.state
        # constants, and what follows from them alone, are computed once (Program.folded)
        folded, program = program.folded()
        # scalars: faster numpy ops (but a string stays a 0-d object array: numpy would make two
        # bytes scalars an S array)
        consts = {t: v[()] if v.ndim == 0 and v.dtype != object else v for t, v in folded.items()}
        steps = []  # KernelSteps
        labels = []  # what a traced run names each step (a fused chain: its last op, the chain in the label)
        groups = fusion_groups(program)
        # chains run inside their producer's kernel (as soon as their inputs are ready); shape-only
        # readers of the producer's output read the chain's result
        epilogues, reroute = epilogue_producers(program, groups)
        absorbed = {producer.op for producer, _, _ in epilogues.values()}
        emit_after = {}
        for root, (_, _, after) in epilogues.items():
            emit_after.setdefault(after, []).append(root)
        for step in program.steps:
            op = step.op
            if op not in absorbed and op not in epilogues:
                group = groups.get(op)
                if step.select:
                    steps.append(KernelStep(op, _select, list(step.inputs), step.outputs, {}, False))
                elif group is None:
                    kernel = bound(step, consts)
                    if kernel is not None:
                        steps.append(KernelStep(op, kernel, kernel.inputs, step.outputs, {}, False))
                    else:
                        steps.append(KernelStep(op, step.opdef.eager, list(step.inputs), step.outputs, op._attrs,
                                          step.opdef.traits.run_state))
                elif group.root is step:
                    steps.append(KernelStep(op, group.kernel.eager, list(group.leaves), step.outputs, {}, False))
                if len(labels) < len(steps):  # (not when inside a fused chain)
                    labels.append((op._name, "fused: " + ", ".join(p[3] for p in group.kernel.program)
                                   if group is not None else op._type))
            for root in emit_after.get(op, ()):
                group, (producer, slot, _) = groups[root], epilogues[root]
                fn = functools.partial(run_with_epilogue, producer.opdef.eager, len(producer.inputs), group.kernel,
                                       slot)
                others = [t for i, t in enumerate(group.leaves) if i != slot]
                steps.append(KernelStep(producer.op, fn, list(producer.inputs) + others, group.root.outputs,
                                  producer.op._attrs, False))
                labels.append((root._name, "fused: " + ", ".join([producer.op._name] +
                                                                [p[3] for p in group.kernel.program])))
        if reroute:
            steps = [s._replace(inputs=[reroute.get(t, t) for t in s.inputs]) for s in steps]
        # a row scatter's value is a RowPatch (storage/patch.py): committed in place, materialized
        # for any step or fetch that reads it as data
        patches = {t for s in steps if s.op._opdef.traits.row_patch for t in s.outputs}
        if patches:
            steps = [s._replace(fn=_reading_patches(s.fn)) if any(t in patches for t in s.inputs) else s
                     for s in steps]
        self._patched_fetches = [e in patches for e in program.fetch_tensors] if patches else None
        self.steps = steps
        self.labels = labels
        self.consts = consts
        self._fetch_tensors = program.fetch_tensors
        # a fetched folded value is the caller's own array, as a computed one is (constants stay
        # read-only, as they always were)
        copied = [t is not None and t in folded and t.op._type != "Const" for t in program.fetch_tensors]
        self._copied_fetches = copied if any(copied) else None
        self.commit_tensors = program.commit_tensors
        # each intermediate is dropped after its last reader (fetched and committed ones are kept)
        last = {}
        for i, step in enumerate(steps):
            for t in step.inputs:
                if t is not None:
                    last[t] = i
        frees = [[] for _ in steps]
        for t, i in last.items():
            if t not in program.kept and t not in consts:
                frees[i].append(t)
        self.frees = [tuple(f) for f in frees]
        # how the steps run: interpreted, then (a plan run often) as generated code (`steps.StepCode`)
        self._runner = StepCode(steps, self.frees, labels,
                               set(program.fetch_tensors) | set(program.commit_tensors.values()))

    def run(self, rc, feed_values):
        env = dict(self.consts)
        env.update(feed_values)
        env[None] = None
        xp = namespace(feed_values.values())
        # kernels are silent where TF1 is (evaluate.quiet); large ones split over the cores
        with quiet(), intra_op_threads(rc.intra_op_threads), index_checks(), \
                allocation_limit(self.allocation_limit):
            self._run_steps(rc, env, xp)
        values = [env[e] if e is not None else None for e in self._fetch_tensors]
        if self._copied_fetches is not None:
            values = [np.array(v) if c else v for v, c in zip(values, self._copied_fetches)]
        if self._patched_fetches is not None:
            values = [materialized(v) if p else v for v, p in zip(values, self._patched_fetches)]
        return values, {var: env[t] for var, t in self.commit_tensors.items()}


    def _run_steps(self, rc, env, xp):
        trace = rc.trace
        self._runner.run(env, xp, rc, trace)
        if trace is not None:
            trace.check_deadline(" (when its last op finished)")


def _reading_patches(fn):
    def run(xp, *args, **attrs):
        return fn(xp, *[materialized(a) for a in args], **attrs)

    return run


def _first_block(r):
    """The (indices, rows) a one-task patch array computed (as the executors return its block)."""
    while isinstance(r, (list, tuple)) and not (len(r) == 2 and isinstance(r[1], np.ndarray)):
        r = r[0]
    return r


def _feed_block(key, block):
    """A numpy feed's block as the graph carries it. A broadcast view (stride 0 along an axis of
    more than one element, as np.broadcast_to makes) is its distinct elements and a task that
    broadcasts them again: a process worker or a cluster receives those, not the bytes the view
    repeats (a 40 GB broadcast feed of one float was pickled to the processes scheduler's workers
    chunk by chunk, 40 GB through pipes)."""
    if isinstance(block, np.ndarray) and any(st == 0 and n > 1 for st, n in zip(block.strides, block.shape)):
        base = block[tuple(slice(0, 1) if st == 0 and n > 1 else slice(None)
                           for st, n in zip(block.strides, block.shape))]
        return Task(key, np.broadcast_to, np.ascontiguousarray(base), block.shape)
    return block


def _block_ref(key, block):
    """A placeholder key's task reading a cluster-held block: the future itself (an alias), or
    the item of a small plan's one result (`Part`)."""
    if isinstance(block, Part):
        return Task(key, operator.getitem, TaskRef(block.future.key), block.index)
    return block


def _none(*_):
    return None


def _token(block):
    return np.empty((0,) * np.ndim(block), dtype=np.int8)


def _select(xp, *values):
    return values


def _merged_culled(arrays, extra_keys=None):
    """One dict graph holding what `arrays` need (plus `extra_keys` tasks, which read only keys of
    `arrays`), culled before it is built: linear in the chunks the plan touches (`culled_graph`)."""
    dsk = culled_graph([a.__dask_graph__() for a in arrays], [a.__dask_keys__() for a in arrays]) if arrays else {}
    dsk.update(extra_keys or {})
    return dsk


class Stage:
    """One scheduler call of a plan: computes small results (reductions of large arrays) that later
    stages read as placeholders, so those stages re-read their large inputs instead of holding them."""

    def __init__(self, slots, arrays):
        self.slots = slots  # FeedSlots the results fill in later stages
        self.keys = [a.__dask_keys__() for a in arrays]
        self.dsk = _merged_culled(arrays)
        self.names = _key_names(self.dsk)


def _culled_if_needed(dsk, keys):
    """A dask feed brings its whole graph; the local schedulers run every task they are given, so
    keep only what this run's keys need (a slice of a Zarr feed reads only its chunks)."""
    if dsk.pop("__dflow_cull__", None) is None:
        return dsk
    return cull(dsk, flatten(keys))


def _key_names(dsk):
    """The names of a graph's keys (a placeholder is referenced if any of its chunks is)."""
    return {k[0] if isinstance(k, tuple) else k for k in dsk}


class StoredCommit(NamedTuple):
    """A variable held on disk between runs (a StoredValue): its new value's blocks (`keys`) are
    written by tasks of the run into a new StoredValue of `shape`, `dtype` and `chunk_shape`."""

    var: str
    keys: list
    shape: tuple
    dtype: object
    chunk_shape: tuple


class PatchCommit(NamedTuple):
    """A variable committed as the rows a row scatter changed: computed like a fetch (`result`:
    its index in the fetched results), applied by the store (`add`: added, not assigned)."""

    var: str
    result: int
    add: bool


class DaskPlan:
    """Task graphs computing the fetches: earlier stages (if any), then the final graph."""

    kind = "dask"
    num_workers = None
    memory = None
    owners = {}  # dask array name -> op (set by the compiler): a failing task names its op
    small = False  # small enough to run as one task on a cluster (compiler.is_small)

    def __init__(self, fetch_elements, outputs, extra, slots, params, commits, state, hooks=None,
                 boundaries=(), stored=None, patches=None):
        self.fetch_elements = list(fetch_elements)
        self.hooks = {"before_run": [], "on_success": [], "publish": [], "on_failure": [], **(hooks or {})}
        self.slots = slots
        self.param_slots = [slot for slot, _ in params.values()]
        self.state = state
        stored = stored or {}
        # variables held on disk between runs: their new value is written chunk by chunk into a
        # new StoredValue by tasks of the run, never gathered here
        stored_arrays = [a for var, a in commits.items() if var in stored]
        self.stored = [StoredCommit(var, a.__dask_keys__(), a.shape, a.dtype, stored[var])
                       for var, a in commits.items() if var in stored]
        commits = {var: a for var, a in commits.items() if var not in stored}
        self.commit_vars = list(commits)
        arrays = []
        self.out_index = []
        for v in outputs:
            if isinstance(v, da.Array):
                self.out_index.append(("dask", len(arrays)))
                arrays.append(v)
            elif v is None:
                self.out_index.append(("none", None))
            else:
                self.out_index.append(("host", np.asarray(v)))
        # row scatters committed as their rows alone: computed like fetches, applied by the store
        self.patches = []
        for var, (a, add) in (patches or {}).items():
            self.patches.append(PatchCommit(var, len(arrays), add))
            arrays.append(a)
        commit_arrays = list(commits.values())
        computed = {id(a) for a in arrays + commit_arrays + stored_arrays}
        # arrays reached only through control inputs: computed, then reduced to empty tokens per
        # chunk, so the barrier waiting for them moves no data between workers
        arrays_extra = [a.map_blocks(_token, dtype=np.int8, chunks=tuple((0,) * len(c) for c in a.chunks))
                        for a in ({id(a): a for a in extra}.values() if extra else []) if id(a) not in computed]
        self.out_keys = [a.__dask_keys__() for a in arrays]
        self.kept = [Kept(a.__dask_keys__(), a.chunks, a.dtype) for a in commit_arrays]
        self.barrier_key = None
        barrier = {}
        if arrays_extra:
            self.barrier_key = ("dflow-barrier", id(self))
            barrier[self.barrier_key] = (_none, *flatten([a.__dask_keys__() for a in arrays_extra]))
        self.dsk = _merged_culled(arrays + commit_arrays + stored_arrays + arrays_extra, barrier)
        levels = sorted({lvl for lvl, _, _ in boundaries})
        self.stages = [Stage([s for lvl, s, _ in boundaries if lvl == k], [a for lvl, _, a in boundaries if lvl == k])
                       for k in levels]
        self.boundary_slots = [s for _, s, _ in boundaries]
        self.names = _key_names(self.dsk)
        # the tasks a run executes (what a progress bar counts): placeholders filled per run are data
        self.n_tasks = count_tasks(self.dsk) + sum(count_tasks(st.dsk) for st in self.stages)

    def _largest_task(self):
        largest = self.memory.largest if self.memory is not None else None
        return largest.total if largest is not None else 0

    def _fill(self, dsk, names, rc, feed_values, stage_values):
        """Sets the placeholder keys `dsk` references: feeds, per-run values, earlier stages."""
        executor = rc.executor
        for slot in self.slots:
            if slot.name in names:
                dsk.update(slot.pieces(feed_values[slot.tensor]))
                if slot.spec.kind == "dask":
                    dsk["__dflow_cull__"] = True
        for slot in self.param_slots:
            if slot.name not in names:
                continue
            value = rc.param(slot.tensor)
            if slot.tensor[0] == "variable":
                resident = executor.resident(slot.tensor[1], value, slot.spec.chunks)
                if resident is not value:  # shipped to a cluster: kept there for later runs
                    rc.remember(slot.tensor, resident)
                value = resident
            dsk.update(slot.pieces(value))
        for slot, value in stage_values.items():
            if slot.name in names:
                dsk.update(slot.pieces(value))
        return dsk

    def _task_failure(self, exc, dsk):
        """The error naming the op whose task raised `exc` (the executors note the failing key:
        `dflow_task_key`): the nearest op output at or downstream of the key is that op's. None
        when `exc` is to be raised as it is (an OpError already naming its op, no key known)."""
        key = getattr(exc, "dflow_task_key", None)
        if key is None or isinstance(exc, OpError) and (exc.op is not None or exc.node_def is not None):
            return None
        op = None
        if key in dsk:
            op = next((self.owners[key_name(k)] for k in downstream(dsk, key) if key_name(k) in self.owners), None)
        if op is None:
            return None
        err = kernel_failure(op, exc, where=" while running")
        return None if err is exc else err

    def run(self, rc, feed_values):
        """The run's stages in order: hooks before it, the earlier stages, the final graph, the
        success hooks and publication; then its commits and fetched values. A failure anywhere
        discards what the run wrote and names the op whose task failed (`_abort`)."""
        run = _DaskRun(rc, feed_values)
        for hook in self.hooks["before_run"]:
            hook(rc)
        try:
            self._run_stages(run)
            results, kept = self._run_final(run)
            self._succeed(rc)
        except BaseException as e:
            failure = self._abort(run, e)
            if failure is not None:
                raise failure from e
            raise
        for value in run.spills.values():
            value.discard()
        return self._outputs(results), self._commits(rc, run.stored, results, kept)

    def _run_stages(self, run):
        """The earlier stages, each one scheduler call; a spilled result is written to disk where
        it is computed, the others gathered here, for later stages to read as placeholders."""
        rc = run.rc
        for stage in self.stages:
            dsk = self._fill(dict(stage.dsk), stage.names, rc, run.feed_values, run.stage_values)
            keys = []
            for slot, k in zip(stage.slots, stage.keys):
                if isinstance(slot.tensor, Spill):
                    spec = slot.spec
                    value = run.spills[slot] = rc.new_stored(f"spill-{slot.name}", spec.shape, spec.dtype.np_dtype,
                                                             tuple(c[0] for c in spec.chunks))
                    tasks = value.write_tasks(k)
                    dsk.update(tasks)
                    k = list(tasks)
                keys.append(k)
            dsk = run.running = _culled_if_needed(dsk, keys)
            for slot, r in zip(stage.slots, rc.executor.get(dsk, keys, num_workers=self.num_workers, trace=rc.trace)):
                run.stage_values[slot] = run.spills[slot] if slot in run.spills else gather_blocks(r)

    def _run_final(self, run):
        """The final graph: (the fetched arrays' blocks, the committed values as the executor keeps
        them). Variables held on disk are written into new StoredValues by its tasks."""
        rc = run.rc
        keys = list(self.out_keys)
        if self.barrier_key is not None:
            keys.append(self.barrier_key)
        if not keys and not self.kept and not self.stored:
            return [], []
        dsk = self._fill(dict(self.dsk), self.names, rc, run.feed_values, run.stage_values)
        writes = []
        for sc in self.stored:
            value = run.stored[sc.var] = rc.new_stored(sc.var, sc.shape, sc.dtype, sc.chunk_shape)
            tasks = value.write_tasks(sc.keys)
            dsk.update(tasks)
            writes.extend(tasks)
        dsk = run.running = _culled_if_needed(dsk, keys + writes + [k.keys for k in self.kept])
        results, kept = rc.executor.compute(dsk, keys + writes, self.kept, num_workers=self.num_workers,
                                            trace=rc.trace, one_task=self.small, task_bytes=self._largest_task())
        return results[:len(keys)], kept

    def _succeed(self, rc):
        """Every task succeeded: the deadline is checked before any success hook publishes a write;
        the run's outputs (Zarr arrays) go in place together or not at all."""
        if rc.trace is not None:
            rc.trace.check_deadline(" (when its last task finished)")
        for hook in self.hooks["on_success"]:
            hook(rc)
        if self.hooks["publish"]:
            publish([make(rc) for make in self.hooks["publish"]])

    def _abort(self, run, exc):
        """After a failure: what the run wrote is discarded and the failure hooks run; the error
        naming the failing task's op, or None to raise `exc` as it is."""
        failure = self._task_failure(exc, run.running)
        for value in [*run.stored.values(), *run.spills.values()]:
            value.discard()
        for hook in self.hooks["on_failure"]:
            try:
                hook(run.rc)
            except Exception:  # noqa: BLE001 - clean-up must not mask the run's error
                pass
        return failure

    def _commits(self, rc, stored, results, kept):
        """The variables' new values: on disk, kept by the executor, or a row patch of the old value."""
        commits = dict(stored)
        commits.update(zip(self.commit_vars, kept))
        for p in self.patches:
            indices, rows = _first_block(results[p.result])
            commits[p.var] = RowPatch(rc.param(("variable", p.var)), indices, rows, p.add)
        return commits

    def _outputs(self, results):
        """The fetched values, in fetch order: gathered, host constants, or None (an op)."""
        out = []
        for kind, ref in self.out_index:
            if kind == "dask":
                out.append(gather_blocks(results[ref]))
            else:
                out.append(ref if kind == "host" else None)
        return out


class _DaskRun:
    """One run of a DaskPlan in progress: its context and feeds, the earlier stages' values, what
    it writes to disk (new StoredValues of variables, spills: discarded if it fails) and the graph
    in flight (`running`: what a failing task's key is looked up in)."""

    __slots__ = ("rc", "feed_values", "stage_values", "stored", "spills", "running")

    def __init__(self, rc, feed_values):
        self.rc = rc
        self.feed_values = feed_values
        self.stage_values = {}
        self.stored = {}
        self.spills = {}
        self.running = {}
