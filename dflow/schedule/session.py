"""`Session`: holds run-time state, compiles fetches to cached Plans and runs them on a scheduler."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import dask.array as da
import numpy as np

from ..config import default_session_settings
from ..devices import ConfigProto, gpu_count, machine_memory
from ..errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    OpError,
    ResourceExhaustedError,
    UnknownError,
    attach_op,
)
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import _default_session_stack, get_default_graph
from ..graph.ops import Operation, Tensor
from ..kernels.common import to_bytes_array
from ..kernels.sparse_ops import SparseTensor
from ..run_options import RunOptions
from ..storage.chunks import dask_array
from ..storage.layout import StoragePolicy
from .cluster_executor import ClusterDataLost
from .compiler import compile_plan, normalize_chunks
from .executors import make_executor
from .feeds import FeedError, all_bytes, check_chunks, holds_bytes, tf1_feed_cast
from .fetches import flatten_fetches
from .host import HostRun, RunTransaction, decision_key
from .memory import format_bytes
from .plan import FeedSpec, RunContext
from .store import VariableStore, to_host, unshared
from .tracing import RunTrace

# numpy-fed plans whose tensors stay below this run in this process (BLAS keeps its own threads,
# no task graph); above it, Dask's chunks bound the memory. With a budget: a 16th of it at most.
_DEFAULT_SMALL_PLAN_BYTES = 64 << 20


class _KnownFeed(NamedTuple):
    """What `Session._normalize_feeds` keeps of a numpy feed it resolved, for the next run's feed of
    the same key, dtype and shape."""

    tensor: Tensor
    spec: FeedSpec
    cast: object  # the numpy dtype to cast the value to, or None
    static_shape: object  # the tensor's static shape then: a set_shape since invalidates the entry


class ClosedSessionError(FailedPreconditionError, RuntimeError):
    """Using a closed session (RuntimeError, as TF1)."""


class FeedKeyError(InvalidArgumentError, TypeError):
    """A feed_dict that is not a mapping, or a key that is not a tensor of the session's graph
    (TypeError, as TF1)."""


@dataclass(frozen=True)
class Options:
    chunks: object = "auto"
    small_plan_bytes: int = 0
    stage_bytes: int = 128 << 20  # inputs this large are re-read by later stages, not held
    memory_budget: int | None = None  # bytes; a plan whose largest task exceeds it is refused
    workers: int = 1  # tasks the scheduler runs at once (for the projected peak)
    config: object = None  # a ConfigProto: soft placement, device placement logging
    gpus: object = 0  # GPUs the executor has (True: a cluster, count unknown)
    storage: StoragePolicy = StoragePolicy()  # which variables live on disk between runs (StoredValue)
    chunk_limit: int | None = None  # bytes per "auto" chunk (None: dask's default, 128 MiB)
    spill: bool = False  # costly large values two stages read are written to local disk once
    machine_memory: int | None = None  # bytes of this machine: what no fetched value may exceed
    local: bool = True  # tasks run on this machine (then no task may exceed machine_memory either)
    worker_bytes: int = 0  # what each worker costs besides its tasks (a process of the processes scheduler)
    pickled_results: bool = False  # each task's result is pickled back to this process


_FORCED = []  # stack of session_defaults() settings


@contextlib.contextmanager
def session_defaults(scheduler=None, small_plan_bytes=None):
    """Within this block, a Session created without `target` or `scheduler` uses these instead of
    the defaults: `session_defaults(scheduler="sync", small_plan_bytes=0)` sends every such plan
    through Dask on the sync scheduler (the test suite's forced-Dask mode runs whole programs so)."""
    _FORCED.append({"scheduler": scheduler, "small_plan_bytes": small_plan_bytes})
    try:
        yield
    finally:
        _FORCED.pop()


_DEFAULT_SCHEDULER_NAMES = ("threads", "threading")


class Session:
    """Runs a graph's ops (TF1's `tf.Session`) on a Dask scheduler.

    `scheduler`: "threads" (the default, named or not), "sync", "processes", "distributed" (a LocalCluster on
    loopback owned by the session, one worker process per core, each limited to its share of
    `memory_budget`), a `distributed.Client` or an address "tcp://host:port" (also accepted as
    TF1's `target`). `chunks`: how in-memory feeds are chunked (dask's `chunks=`, default "auto").
    `memory_budget` (bytes or "512MB"): plans whose tasks cannot fit are refused, concurrency and
    "auto" chunks are capped to fit, and large variables live on local disk between runs. With the
    default scheduler (None or "threads"), plans whose feeds are in memory and whose tensors are all
    below `small_plan_bytes` (64 MiB, or a 16th of `memory_budget`; a Zarr read above 1 MiB stays on
    Dask, lazy) run in this process through the ops' eager kernels, with no Dask round trip;
    `small_plan_bytes=0` sends every plan through Dask (`dflow run --always-dask` for a script).
    """

    variables = None

    def __init__(self, target="", graph=None, config=None, *, scheduler=None, chunks="auto",
                 small_plan_bytes=None, num_workers=None, memory_budget=None):
        self._graph = graph if graph is not None else get_default_graph()
        if config is not None and not isinstance(config, ConfigProto):  # TF1's TypeError
            raise TypeError(f'Argument `config` must be a tf.ConfigProto, but got "{type(config).__name__}"')
        check_chunks(chunks)
        self._config = config
        self._target = target
        if _FORCED and not target and scheduler is None:  # session_defaults() in force
            scheduler = _FORCED[-1]["scheduler"]
            if small_plan_bytes is None:
                small_plan_bytes = _FORCED[-1]["small_plan_bytes"]
        process = default_session_settings()  # `dflow run --scheduler/--workers/--memory-budget`
        scheduler = process.get("scheduler") if (scheduler is None and not target) else scheduler
        memory_budget = process.get("memory_budget") if memory_budget is None else memory_budget
        num_workers = process.get("num_workers") if num_workers is None else num_workers
        budget = _parse_bytes(memory_budget)
        if num_workers is not None and (isinstance(num_workers, bool) or not isinstance(num_workers, (int, np.integer))
                                        or num_workers < 1):
            raise ValueError(f"Session: num_workers must be a positive int (None: one per core), got {num_workers!r}")
        if small_plan_bytes is not None and (isinstance(small_plan_bytes, bool) or
                                             not isinstance(small_plan_bytes, (int, np.integer)) or small_plan_bytes < 0):
            raise ValueError(f"Session: small_plan_bytes must be an int >= 0 (0: always Dask), got {small_plan_bytes!r}")
        self._executor = make_executor(scheduler, target, memory_budget=budget, num_workers=num_workers)
        if num_workers is not None and hasattr(self._executor, "num_workers"):
            self._executor.num_workers = num_workers
        full_budget, (budget, worker_bytes) = budget, _data_budget(budget, self._executor)
        if small_plan_bytes is None:
            small_plan_bytes = process.get("small_plan_bytes")
        if small_plan_bytes is None:
            # the default scheduler, named or not, runs small in-memory plans in process; naming another
            # one (or a cluster) sends every plan there; small_plan_bytes=0 forces Dask on any
            default = scheduler is None or (isinstance(scheduler, str) and scheduler in _DEFAULT_SCHEDULER_NAMES)
            small_plan_bytes = _DEFAULT_SMALL_PLAN_BYTES if (default and not target) else 0
            if budget is not None:
                small_plan_bytes = min(small_plan_bytes, budget // 16)
        stage_bytes = Options.stage_bytes if budget is None else min(Options.stage_bytes, max(1, budget // 4))
        gpus = True if not self._executor.is_local else gpu_count
        # with a budget, variables over a quarter of it are held in Zarr on local disk between runs
        # (local schedulers only: a cluster's workers hold theirs)
        storage = StoragePolicy.for_budget(budget, self._executor.is_local)
        self._options = Options(chunks=chunks, small_plan_bytes=int(small_plan_bytes), stage_bytes=stage_bytes,
                                memory_budget=full_budget, workers=self._executor.workers(), config=config, gpus=gpus,
                                storage=storage, spill=self._executor.is_local, machine_memory=machine_memory(),
                                local=self._executor.is_local, worker_bytes=worker_bytes,
                                pickled_results=bool(worker_bytes),
                                chunk_limit=None if budget is None else max(1 << 10, min(128 << 20, budget // 16)))
        self._plans = {}
        self._dask_only = set()  # fetches (their ids) whose in-process run went over the memory budget
        self._chunk_cache = {}
        # (feed key, numpy dtype, shape) -> _KnownFeed: a numpy feed seen before skips resolving and checking
        self._feed_fast = {}
        self._counters = {}
        self.variables = VariableStore(storage)  # the committed values of variables
        # host state of host ops, outside variables (dataset iterators, dflow/data); changed only
        # through a run's RunTransaction, so a failed run leaves it as it was
        self.resources = {}
        self._run_count = 0  # runs started (nested plan runs included)
        self._run_numbers = itertools.count(1)
        # Session.run from several threads (TF1): per-run values are the run's own, and a run that
        # commits variables holds their locks from its snapshot to its commit (no lost updates)
        self._lock = threading.Lock()
        self._var_locks = {}
        self._run_id_base = secrets.randbits(40) << 20
        self._session_seed = secrets.randbits(31)
        self._closed = False
        self._context_stack = []
        self._tracing = threading.local()  # the RunTrace of the run in progress in each thread

    # ---- properties --------------------------------------------------------------------------
    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self):
        return self._target

    @property
    def scheduler(self):
        return self._executor.name

    @property
    def memory_budget(self):
        """The memory budget in bytes (None: unlimited)."""
        return self._options.memory_budget

    def explain(self, fetches, feed_dict=None):
        """A text report of the plan for `fetches`: mode, stages, each task's projected memory and
        the projected peak (compiles the plan if needed; runs nothing)."""
        plan, elements = self._plan_for(fetches, feed_dict)
        names = ", ".join(getattr(e, "name", "?") for e in elements)
        lines = [f"Plan for [{names}] on the {self._executor.name} scheduler"]
        if plan.kind == "eager":
            lines.append(f"  mode: in-process (eager kernels, {len(plan.steps)} ops; no Dask graph)")
            return "\n".join(lines)
        mem = plan.memory
        lines.append(f"  mode: dask, {len(plan.stages) + 1} stage(s), {plan.n_tasks} tasks")
        for k, stage in enumerate(plan.stages):
            lines.append(f"  stage {k}: computes {', '.join(s.tensor.name for s in stage.slots)} "
                         f"({len(stage.dsk)} tasks); later stages re-read their large inputs")
        lines.append(f"  final stage: {len(plan.dsk)} tasks")
        lines.append("  projected memory per task (inputs + output + scratch):")
        for t in sorted(mem.tasks, key=lambda t: -t.total)[:12]:
            where = "" if t.stage is None else f"  (stage {t.stage})"
            lines.append(f"    {t.op_type:>14} {t.op:<40} {format_bytes(t.total):>10}{where}")
        budget = self._options.memory_budget
        each = f" (each {format_bytes(mem.worker_bytes)} besides its task)" if mem.worker_bytes else \
            (f" (each worker process's interpreter, {format_bytes(self._executor.worker_bytes)}, is beyond a budget "
             "this small)") if budget and self._executor.worker_bytes else ""
        lines.append(f"  workers at once: {mem.workers}{each}; projected peak: {format_bytes(mem.peak)}; budget: "
                     + (format_bytes(budget) if budget else "none"))
        return "\n".join(lines)

    # ---- lifecycle ---------------------------------------------------------------------------
    def close(self):
        if not self._closed:
            self._closed = True
            self._plans.clear()
            if self.variables is not None:  # first: a cluster's values are released through its client
                self.variables.close()
            self._executor.close()
            for r in list(self.resources.values()):
                if hasattr(r, "close"):
                    r.close()
            self.resources.clear()

    def as_default(self):
        return _default_session_stack.get_controller(self)

    def __enter__(self):
        stack = contextlib.ExitStack()
        stack.enter_context(self._graph.as_default())
        stack.enter_context(self.as_default())
        self._context_stack.append(stack)
        return self

    def __exit__(self, exc_type, exc, tb):
        self._context_stack.pop().close()
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass

    # ---- running -----------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Computes `fetches` (a graph element, name, or nested list/tuple/dict/namedtuple of them).

        Returns values in the same structure: numpy arrays for tensors, None for operations.
        Raises InvalidArgumentError for an unfed placeholder or a feed that contradicts its tensor.
        `options` (a RunOptions) with a trace level and `run_metadata` (a RunMetadata): the run's
        per-op (in process) or per-task (Dask) timings go into `run_metadata.step_stats`; with
        `timeout_in_ms`, a run past it raises DeadlineExceededError and commits nothing (see
        dflow/run_options.py for what each path measures and where it checks).
        """
        if self._closed:
            raise ClosedSessionError(None, None, "Attempted to use a closed Session.")
        if isinstance(fetches, (Tensor, Operation)) and fetches.graph is self._graph:
            elements, rebuild = [fetches], _first
        else:
            elements, rebuild = flatten_fetches(fetches, self._graph)
        feeds, values = self._normalize_feeds(feed_dict)
        trace = _run_trace(options, run_metadata)
        if trace is None:
            results, _ = self._execute(elements, feeds, values)
        else:
            self._tracing.trace = trace  # every plan of this run (nested host runs too) sees it
            try:
                results, _ = self._execute(elements, feeds, values)
            finally:
                self._tracing.trace = None
            if run_metadata is not None and trace.trace:
                trace.step_stats_into(run_metadata)
        return rebuild([to_host(r) for r in results])

    def _execute(self, elements, feeds, values, decisions=None, txn=None, commit=None):
        """Plans and runs `elements`; (values, variable commits). What the compiler cannot decide
        (a cond's branch, a while loop, a value a lowering needs on the host) is settled first by
        the run's HostRun, through nested runs whose commits are dropped: only the outermost run
        commits. Host state the run's hooks change (an iterator's position) goes through its
        RunTransaction (`txn`, shared by nested runs): kept if the outermost run succeeds, undone
        otherwise. The outermost run's final plan commits its variables (`commit`: bytes fed, for
        the store) and returns no commits."""
        if txn is None:  # the outermost run
            txn = RunTransaction()
            fed = sum(spec.nbytes for spec in feeds.values() if spec.kind == "numpy")
            try:
                out = self._execute(elements, feeds, values, decisions, txn, commit=fed)
            except BaseException:
                txn.finish(False)
                raise
            txn.finish(True)
            return out
        h, fed = None, values
        decisions = decisions or {}
        while True:
            plan = self._cached_plan(elements, feeds if h is None else h.feeds, decisions)
            if plan.kind != "host":
                break
            if h is None:
                h = HostRun(feeds, values, dict(decisions), SessionRunner(self), resources=self.resources, txn=txn,
                            memory_budget=self._options.memory_budget, operation_timeout=self._operation_timeout())
                decisions = h.decisions
            h.settle(plan)
        if h is not None:
            values = h.values
            constants = {t: v for t, v in h.decisions.items() if isinstance(t, Tensor)}
            if constants:
                values = {**values, **constants}
        try:
            return self._run_plan(plan, elements, values, commit=commit)
        except ResourceExhaustedError as e:
            # an in-process plan whose run-time shape went over the memory budget (nothing was
            # committed): these fetches run through Dask, chunked, from now on
            if plan.kind != "eager" or not getattr(e, "over_allocation", False):
                raise
            self._dask_only.add(tuple(map(id, elements)))
            return self._execute(elements, feeds, fed, decisions, txn, commit=commit)

    def _operation_timeout(self):
        """Seconds a blocking host op (a queue's dequeue or enqueue) may wait in this run: the
        config's `operation_timeout_in_ms`, or what is left of the run's `timeout_in_ms`; None: no limit."""
        limits = []
        ms = int(getattr(self._config, "operation_timeout_in_ms", 0) or 0)
        if ms > 0:
            limits.append(ms / 1000.0)
        trace = getattr(self._tracing, "trace", None)
        if trace is not None and trace.deadline is not None:
            limits.append(max(0.0, trace.deadline - time.monotonic()))
        return min(limits) if limits else None

    def _run_plan(self, plan, elements, values, fast=False, commit=None):
        """Runs one plan. With `commit` (the outermost run's final plan), the variables it assigns are
        locked from the snapshot of the values it reads to the commit of its new values, so two
        threads' `assign_add`s both land; runs that commit other variables (or none) go on."""
        locks = self._variable_locks(plan.state.commits) if commit is not None else ()
        for lock in locks:
            lock.acquire()
        try:
            if not fast:
                self._check_initialized(plan.state)
            snapshot = self.variables.snapshot(plan.state.start_vars)
            try:
                out, commits = self._run_with_context(plan, elements, values, snapshot)
                out = unshared(out, snapshot)  # no fetch aliases an array a row update changes in place
            finally:
                self.variables.release(snapshot)
            if commit is not None and commits:
                self.variables.commit_all(commits, commit)  # only a run that succeeded gets here
                commits = {}
            return out, commits
        finally:
            for lock in reversed(locks):
                lock.release()

    def _variable_locks(self, names):
        if not names:
            return ()
        with self._lock:
            return [self._var_locks.setdefault(n, threading.Lock()) for n in sorted(names)]

    def _run_with_context(self, plan, elements, values, snapshot, retried=False):
        number = next(self._run_numbers)
        self._run_count = max(self._run_count, number)
        token = self._run_id_base + number
        memo = {}

        def param(spec):  # one value per spec per run, whatever stage asks (a random op's counter)
            try:
                return memo[spec]
            except KeyError:
                value = memo[spec] = self._param_value(spec, token, snapshot)
                return value
            except TypeError:  # an unhashable spec
                return self._param_value(spec, token, snapshot)

        rc = RunContext(self._executor, number, token, param, lambda spec, v: self.variables.set(spec[1], v),
                        self.variables.new_stored, getattr(self._tracing, "trace", None),
                        getattr(self._config, "intra_op_parallelism_threads", 0) or 0)
        try:
            try:
                return plan.run(rc, values)
            except ClusterDataLost:
                if retried:
                    raise
            # a worker died holding data the run read (nothing was committed): the variables it lost
            # are re-shipped from the session's copies, or named in an UnavailableError
            return self._run_with_context(plan, elements, values, snapshot, retried=True)
        except OpError as e:
            attach_op(e, self._graph)  # an error from a worker process names its op, not the op itself
            raise
        except Exception as e:  # noqa: BLE001 - never a bare numpy/dask/Python error from a run
            names = ", ".join(getattr(e_, "name", "?") for e_ in elements)
            # an input the kernels refused is InvalidArgument; anything else (a file the run could
            # not write, a failure of dflow itself) has no better class than TF1's UnknownError
            cls = InvalidArgumentError if isinstance(e, (ValueError, TypeError, IndexError, ArithmeticError)) \
                else UnknownError
            raise cls(None, None, f"Running [{names}] failed: {type(e).__name__}: {e}") from e

    def _check_initialized(self, state):
        missing = [v for v in state.start_vars if v not in self.variables]
        if missing:
            raise FailedPreconditionError(
                None, state.start_vars[missing[0]],
                "Attempting to use uninitialized value " + ", ".join(repr(m) for m in missing)
                + " (run its initializer, e.g. global_variables_initializer(), first)")

    def _cached_plan(self, elements, feeds, decisions=None):
        """The plan of these fetches and feeds, compiled once; on Dask for fetches whose in-process
        run went over the memory budget (`_dask_only`)."""
        dask = tuple(map(id, elements)) in self._dask_only
        key = (tuple(map(id, elements)), tuple((id(t), s) for t, s in feeds.items()), decision_key(decisions),
               getattr(self._graph, "_rewrites", 0), dask)  # an op's inputs rewired (graph_editor): plan again
        plan = self._plans.get(key)
        if plan is None:
            options = dataclasses.replace(self._options, small_plan_bytes=0) if dask else self._options
            plan = compile_plan(elements, feeds, options, decisions)
            self._plans[key] = plan
        return plan

    def count_tasks(self, fetches, feed_dict=None):
        """The Dask tasks one run of `fetches` executes (0 when it runs in process): what a progress
        bar over several runs sizes itself by (compiles the plan if needed; runs nothing)."""
        plan, _ = self._plan_for(fetches, feed_dict)
        return 0 if plan.kind == "eager" else plan.n_tasks

    def _plan_for(self, fetches, feed_dict):
        if self._closed:
            raise ClosedSessionError(None, None, "Attempted to use a closed Session.")
        elements, _ = flatten_fetches(fetches, self._graph)
        feeds, _ = self._normalize_feeds(feed_dict)
        plan = self._cached_plan(elements, feeds)
        if plan.kind == "host":
            what = f"{plan.op.type} op {plan.op.name!r}" if plan.op is not None else \
                "the value of " + ", ".join(repr(t.name) for t in plan.tensors)
            raise InvalidArgumentError(None, plan.op, f"explain: the plan depends on {what}, decided when "
                                       "the graph runs")
        return plan, elements

    def make_callable(self, fetches, feed_list=None):
        """A function running `fetches` with positional feeds for `feed_list` (TF1)."""
        feed_list = list(feed_list or [])

        def call(*args):
            if len(args) != len(feed_list):
                raise InvalidArgumentError(None, None, f"Expected {len(feed_list)} feed values, got {len(args)}")
            return self.run(fetches, dict(zip(feed_list, args)))

        return call

    # ---- feeds -------------------------------------------------------------------------------
    def _normalize_feeds(self, feed_dict):
        if feed_dict is not None and type(feed_dict) is not dict and not isinstance(feed_dict, Mapping):
            raise FeedKeyError(None, None, "feed_dict must be a dictionary or collections.abc.Mapping of "
                               f"tensors to values, instead of {type(feed_dict).__name__!r}.")
        if not feed_dict:
            return {}, {}
        feeds, values = {}, {}
        fast = self._feed_fast
        for key, value in _sparse_feeds(feed_dict):
            if type(value) is np.ndarray:  # a numpy feed seen before: its tensor, spec and cast
                try:
                    hit = fast.get((key, value.dtype, value.shape))
                except TypeError:  # an unhashable key
                    hit = None
                if hit is not None:
                    t, spec, cast, static_shape = hit
                    if t._shape is static_shape:  # (not since a set_shape)
                        feeds[t] = spec
                        values[t] = value if cast is None else value.astype(cast)
                        continue
            t = self._feed_tensor(key)
            spec, v = self._feed_spec(t, value)
            feeds[t] = spec
            values[t] = v
            if type(value) is np.ndarray and spec.kind == "numpy" and t.dtype != dtypes.string:
                if len(fast) > 1024:
                    fast.clear()
                try:
                    cast = None if v is value else t.dtype.np_dtype
                    fast[(key, value.dtype, value.shape)] = _KnownFeed(t, spec, cast, t._shape)
                except TypeError:
                    pass
        return feeds, values

    def _feed_tensor(self, key):
        if hasattr(key, "_as_graph_element") and not isinstance(key, Tensor):
            key = key._as_graph_element()
        try:
            t = self._graph.as_graph_element(key, allow_operation=False)
        except (TypeError, ValueError, KeyError) as e:
            msg = e.args[0] if e.args else str(e)
            raise FeedKeyError(None, None, f"Cannot interpret feed_dict key {key!r} as Tensor: {msg}") from None
        return t

    def _feed_spec(self, t, value):
        target = t.dtype
        original = value
        if isinstance(value, Tensor):  # TF1's TypeError, word for word
            raise TypeError(f"The value of a feed cannot be a tf.Tensor object. Acceptable feed values include "
                            f"Python scalars, strings, lists, numpy ndarrays, or TensorHandles. For reference, the "
                            f"tensor object was {value} which was passed to the feed with key {t}.")
        if type(value).__module__.startswith("zarr"):
            value, _ = dask_array(value)  # chunk files streamed into the tasks' buffers
        if isinstance(value, da.Array):
            kind = "dask"
            if any(c != c for c in value.shape):
                raise FeedError(None, t.op, f"Cannot feed a dask array with unknown chunk sizes for Tensor "
                                f"{t.name!r}; call compute_chunk_sizes() first.")
            vdtype = value.dtype
        else:
            kind = "numpy"
            if not isinstance(value, np.ndarray):
                try:
                    # bytes in a list go straight to objects: numpy's fixed-width |S drops trailing
                    # NUL bytes (a serialized proto may end in one)
                    value = to_bytes_array(value) if target == dtypes.string and holds_bytes(value) else \
                        np.asarray(value)
                except (ValueError, TypeError) as e:
                    raise FeedError(None, t.op, f"Cannot feed value {value!r} for Tensor {t.name!r}: {e}") from None
            vdtype = value.dtype
        if target == dtypes.string:
            value = self._string_feed(t, value, kind)
        elif vdtype != target.np_dtype and kind == "numpy":
            value = tf1_feed_cast(t, original, value, target)
        elif vdtype != target.np_dtype:
            if vdtype.kind in "OUS" or not np.can_cast(vdtype, target.np_dtype, casting="same_kind"):
                raise FeedError(None, t.op, f"Cannot feed value of dtype {vdtype} for Tensor {t.name!r}, which "
                                f"has dtype {target.name}")
            value = value.astype(target.np_dtype)
        shape = tuple(int(d) for d in value.shape)
        if not t.shape.is_compatible_with(shape):
            raise FeedError(None, t.op, f"Cannot feed value of shape {shape} for Tensor {t.name!r}, which has "
                            f"shape {t.shape}")
        if kind == "dask":
            chunks = value.chunks
        else:
            hint = t.op._attrs.get("chunks") if t.op.type == "Placeholder" else None
            ck = (hint if not isinstance(hint, list) else tuple(hint), shape, target)
            chunks = self._chunk_cache.get(ck) if _hashable(ck) else None
            if chunks is None:
                chunks = normalize_chunks(hint or self._options.chunks, shape, target.np_dtype,
                                          self._options.chunk_limit)
                if _hashable(ck):
                    self._chunk_cache[ck] = chunks
        return FeedSpec(kind, shape, as_dtype(target), chunks), value

    @staticmethod
    def _string_feed(t, value, kind):
        """A feed of a string tensor as an object array of bytes (str encoded as UTF-8, as TF1). An
        object array holding other Python objects passes as it is."""
        if value.dtype.kind not in "OUS":
            raise FeedError(None, t.op, f"Cannot feed value of dtype {value.dtype} for Tensor {t.name!r}, which "
                            "has dtype string")
        if kind == "dask":
            return value.map_blocks(to_bytes_array, dtype=object)  # encoded chunk by chunk, in the tasks
        if value.dtype == object and all_bytes(value):
            return value
        try:
            return to_bytes_array(value)
        except TypeError as e:
            raise FeedError(None, t.op, f"Cannot feed value for Tensor {t.name!r}, which has dtype string: {e}") \
                from None

    # ---- per-run parameters ------------------------------------------------------------------
    def _param_value(self, spec, token, snapshot):
        """A per-run value of the run with `token`, reading variables from its `snapshot`."""
        kind = spec[0]
        if kind == "counter":
            with self._lock:
                v = self._counters.get(spec[1], 0)
                self._counters[spec[1]] = v + 1
            return np.int64(v)
        if kind == "run_token":
            return np.int64(token)
        if kind == "session_seed":
            return np.int64(self._session_seed)
        if kind == "variable":
            value = snapshot.get(spec[1])
            return value if value is not None else self.variables.get(spec[1])
        if kind == "initialized":
            return np.bool_(spec[1] in self.variables)
        raise InvalidArgumentError(None, None, f"Unknown run parameter {spec!r}")

    def load_variable(self, var_name, value, owned=False):
        """Sets a variable's committed value directly (`Variable.load`, `Saver.restore`).

        `owned`: `value` is a fresh array nobody else holds (a checkpoint just read), kept as it is
        (made read-only) instead of copied."""
        if self._closed:
            raise ClosedSessionError(None, None, "Attempted to use a closed Session.")
        self.variables.load(var_name, value, owned=owned)


class SessionRunner:
    """What a run's HostRun may ask of its session (host.py): a nested run of fetches (its commits
    dropped), a plan and one run of it, a feed's spec, the initialization check, and the
    variables with their locks (CountUpTo). The host side holds this, never the Session; one per
    HostRun (the Session holds none: no reference cycle delays its close when dropped)."""

    __slots__ = ("_session",)

    def __init__(self, session):
        self._session = session

    def execute(self, elements, feeds, values, decisions, txn):
        return self._session._execute(elements, feeds, values, decisions, txn=txn)

    def plan(self, elements, feeds, decisions):
        return self._session._cached_plan(elements, feeds, decisions)

    def run_plan(self, plan, elements, values, fast=False):
        return self._session._run_plan(plan, elements, values, fast=fast)

    def feed_spec(self, t, value):
        return self._session._feed_spec(t, value)

    def check_initialized(self, state):
        self._session._check_initialized(state)

    @property
    def variables(self):
        return self._session.variables

    def variable_locks(self, names):
        return self._session._variable_locks(names)


def _data_budget(budget, executor):
    """(what of `budget` a plan's data may use, the cost of each worker the projection counts).
    On the processes scheduler a budget that holds a worker process's interpreter
    (`executor.worker_bytes`) and more counts it for every worker (memory.py caps the workers to
    fit) and sizes chunks, stages and stored variables from what one worker leaves. A smaller
    budget cannot hold even one worker: it is then the data's alone, as this process's own
    interpreter is outside every budget (one worker runs; explain() says so)."""
    if budget is None or not executor.worker_bytes or budget < executor.worker_bytes + (32 << 20):
        return budget, 0
    return budget - executor.worker_bytes, executor.worker_bytes


def _parse_bytes(value, what="memory_budget"):
    """A byte count from an int or a string such as "512MB" (None: unlimited); ValueError naming
    the argument for zero, negative, non-finite or unparsable values, when the Session is made."""
    if value is None:
        return None
    n = None
    if isinstance(value, str):
        from dask.utils import parse_bytes

        try:
            n = parse_bytes(value) if value.strip() else None
        except (ValueError, TypeError, KeyError):
            n = None
    elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        n = value
    if n is None or n != n or n in (float("inf"), float("-inf")) or int(n) <= 0:
        raise ValueError(f"Session: {what} must be a positive number of bytes or a string such as '512MB' "
                         f"(None: no budget), got {value!r}")
    return int(n)


def _run_trace(options, run_metadata):
    """A RunTrace when `options` asks for a trace or a deadline (TF1's RunOptions), else None."""
    if options is None:
        return None
    if not hasattr(options, "trace_level"):
        raise TypeError(f"Session.run: options must be a dflow.RunOptions, got {type(options).__name__}")
    if run_metadata is not None and not hasattr(run_metadata, "step_stats"):
        raise TypeError(f"Session.run: run_metadata must be a dflow.RunMetadata, got {type(run_metadata).__name__}")
    traced = options.trace_level > RunOptions.NO_TRACE and run_metadata is not None
    timeout = int(getattr(options, "timeout_in_ms", 0) or 0)
    return RunTrace(trace=traced, timeout_ms=timeout) if traced or timeout > 0 else None


def _first(values):
    return values[0]


def _hashable(x):
    try:
        hash(x)
        return True
    except TypeError:
        return False


class InteractiveSession(Session):
    """A Session that installs itself as the default session on creation (TF1)."""

    def __init__(self, target="", graph=None, config=None, **kwargs):
        super().__init__(target, graph, config, **kwargs)
        self._default_cm = self.as_default()
        self._default_cm.__enter__()
        self._graph_cm = self._graph.as_default()
        self._graph_cm.__enter__()

    def close(self):
        if getattr(self, "_default_cm", None) is not None:
            cm, self._default_cm = self._default_cm, None
            with contextlib.suppress(Exception):
                cm.__exit__(None, None, None)
            gcm, self._graph_cm = self._graph_cm, None
            with contextlib.suppress(Exception):
                gcm.__exit__(None, None, None)
        super().close()


def _sparse_feeds(feed_dict):
    """The (tensor, value) pairs of a feed_dict; a SparseTensor key (`tf.sparse_placeholder`) feeds
    its indices, values and dense_shape from a SparseTensorValue or an (indices, values, shape)
    triple, as TF1."""
    for key, value in feed_dict.items():
        if not isinstance(key, SparseTensor):
            yield key, value
            continue
        if not (isinstance(value, tuple) and len(value) == 3):
            raise FeedError(None, key.values.op, f"A SparseTensor is fed a SparseTensorValue or an (indices, "
                            f"values, dense_shape) triple, got {type(value).__name__}")
        yield from zip((key.indices, key.values, key.dense_shape), value)
