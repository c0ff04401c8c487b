"""`Session`: holds run-time state, compiles fetches to cached Plans and runs them on a scheduler."""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass

import dask.array as da
import numpy as np

from ..errors import FailedPreconditionError, InvalidArgumentError, OpError
from ..graph.dtypes import as_dtype
from ..graph.graph import _default_session_stack, get_default_graph
from ..graph.ops import Tensor
from ..kernels.common import convert_to_tensor
from .compiler import compile_plan, normalize_chunks
from .executors import make_executor
from .fetches import flatten_fetches
from .plan import FeedSpec, RemoteValue, StoredValue, _block_indices, _block_slices

_DEFAULT_SMALL_PLAN_BYTES = 1 << 20


class ClosedSessionError(FailedPreconditionError, RuntimeError):
    """Using a closed session (RuntimeError, as TF1)."""


class FeedError(InvalidArgumentError, ValueError):
    """A feed that contradicts its tensor's static shape or dtype."""


class FeedKeyError(InvalidArgumentError, TypeError):
    """A feed_dict key that is not a tensor of the session's graph (TypeError, as TF1)."""


@dataclass(frozen=True)
class Options:
    chunks: object = "auto"
    small_plan_bytes: int = 0
    stage_bytes: int = 128 << 20  # inputs this large are re-read by later stages, not held
    memory_budget: int | None = None  # bytes; a plan whose largest task exceeds it is refused
    workers: int = 1  # tasks the scheduler runs at once (for the projected peak)
    config: object = None  # a ConfigProto: soft placement, device placement logging
    gpus: object = 0  # GPUs the executor has (True: a cluster, count unknown)
    store_bytes: int | None = None  # variables this large live on disk between runs (StoredValue)
    chunk_limit: int | None = None  # bytes per "auto" chunk (None: dask's default, 128 MiB)
    spill: bool = False  # costly large values two stages read are written to local disk once


@dataclass(frozen=True)
class RunInfo:
    """What hooks of one run see: its number in the session and a token unique across sessions."""

    number: int
    token: int


class _EagerCtx:
    __slots__ = ("session", "op")

    def __init__(self, session, op):
        self.session = session
        self.op = op

    def run_param(self, spec, shape=(), dtype=np.int64):
        value = self.session._param_value(spec)
        return value.to_host() if isinstance(value, (RemoteValue, StoredValue)) else value


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


class Session:
    """Runs a graph's ops (TF1's `tf.Session`) on a Dask scheduler.

    `scheduler`: "threads" (default), "sync", "processes", "distributed" (a LocalCluster on
    loopback owned by the session, one worker process per core, each limited to its share of
    `memory_budget`), a `distributed.Client` or an address "tcp://host:port" (also accepted as
    TF1's `target`). `chunks`: how in-memory feeds are chunked (dask's `chunks=`, default "auto").
    `memory_budget` (bytes or "512MB"): plans whose tasks cannot fit are refused, concurrency and
    "auto" chunks are capped to fit, and large variables live on local disk between runs. With the default scheduler, plans whose feeds are in memory
    and whose tensors are all below `small_plan_bytes` (1 MiB) run in this process through the ops'
    eager kernels, with no Dask round trip; pass `small_plan_bytes=0` to always go through Dask.
    """

    _store_dir = None

    def __init__(self, target="", graph=None, config=None, *, scheduler=None, chunks="auto",
                 small_plan_bytes=None, num_workers=None, memory_budget=None):
        self._graph = graph if graph is not None else get_default_graph()
        self._config = config
        self._target = target
        if _FORCED and not target and scheduler is None:  # session_defaults() in force
            scheduler, small_plan_bytes = _FORCED[-1].get("scheduler"), _FORCED[-1].get("small_plan_bytes")
        budget = _parse_bytes(memory_budget)
        self._executor = make_executor(scheduler, target, memory_budget=budget, num_workers=num_workers)
        if num_workers is not None and hasattr(self._executor, "num_workers"):
            self._executor.num_workers = num_workers
        if small_plan_bytes is None:
            small_plan_bytes = _DEFAULT_SMALL_PLAN_BYTES if (scheduler is None and not target) else 0
        stage_bytes = Options.stage_bytes if budget is None else min(Options.stage_bytes, max(1, budget // 4))
        from ..devices import gpu_count

        gpus = True if not self._executor.is_local else gpu_count
        # with a budget, variables over a quarter of it are held in Zarr on local disk between runs
        # (local schedulers only: a cluster's workers hold theirs)
        store_bytes = max(1, budget // 4) if budget is not None and self._executor.is_local else None
        self._options = Options(chunks=chunks, small_plan_bytes=int(small_plan_bytes), stage_bytes=stage_bytes,
                                memory_budget=budget, workers=self._executor.workers(), config=config, gpus=gpus,
                                store_bytes=store_bytes, spill=self._executor.is_local,
                                chunk_limit=None if budget is None else max(1 << 10, min(128 << 20, budget // 16)))
        self._store_dir = None  # scratch directory of stored variables, made on first use
        self._plans = {}
        self._chunk_cache = {}
        self._counters = {}
        self._var_values = {}  # variable op name -> numpy array (the committed value)
        self._remote_age = {}  # variable op name -> (commits, bytes fed) since it was last shipped whole
        self._run_count = 0
        self._run_id_base = secrets.randbits(40) << 20
        self._current_run = None
        self._session_seed = secrets.randbits(31)
        self._closed = False
        self._context_stack = []

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
        from .memory import format_bytes

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
        lines.append(f"  workers at once: {mem.workers}; projected peak: {format_bytes(mem.peak)}; budget: "
                     + (format_bytes(budget) if budget else "none"))
        return "\n".join(lines)

    # ---- lifecycle ---------------------------------------------------------------------------
    def close(self):
        if not self._closed:
            self._closed = True
            self._plans.clear()
            self._executor.close()
            if self._store_dir is not None:
                import shutil

                self._var_values.clear()
                shutil.rmtree(self._store_dir, ignore_errors=True)

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
        """
        if self._closed:
            raise ClosedSessionError(None, None, "Attempted to use a closed Session.")
        if isinstance(fetches, Tensor) and fetches.graph is self._graph:
            elements, rebuild = [fetches], _first
        else:
            elements, rebuild = flatten_fetches(fetches, self._graph)
        feeds, values = self._normalize_feeds(feed_dict)
        results, commits = self._execute(elements, feeds, values)
        fed = sum(spec.nbytes for spec in feeds.values() if spec.kind == "numpy")
        for var, value in commits.items():  # only a run that succeeded gets here
            self._set_variable(var, self._remote_commit(var, value, fed) if isinstance(value, RemoteValue)
                               else value if isinstance(value, StoredValue) else _committed(value))
        return rebuild([_to_host(r) for r in results])

    _LINEAGE_LIMIT = 64

    def _remote_commit(self, var, value, fed_bytes=0):
        """A value kept on the cluster depends on the previous run's value, and the scheduler keeps
        that whole history, fed data included; every _LINEAGE_LIMIT commits, or once the data fed
        since the last cut outweighs the variable, the value is re-shipped (gather and scatter: no
        history) so the scheduler's state stays bounded."""
        age, fed = self._remote_age.get(var, (0, 0))
        age, fed = age + 1, fed + fed_bytes
        size = int(np.prod(value.shape, dtype=np.int64)) * np.dtype(value.dtype or np.float64).itemsize
        if age >= self._LINEAGE_LIMIT or fed > size:
            host = value.to_host()
            value = RemoteValue.scatter(value.client, host, value.chunks)
            age, fed = 0, 0
        self._remote_age[var] = (age, fed)
        return value

    def _execute(self, elements, feeds, values, resolved=None):
        """Plans and runs `elements`; (values, variable commits). Decisions the compiler cannot
        make (a cond's branch, a while loop) are made here on the host first, by nested runs
        whose commits are dropped: only the outermost run commits."""
        resolved = dict(resolved or {})
        while True:
            plan = self._cached_plan(elements, feeds, resolved)
            if plan.kind != "host":
                break
            op = plan.op
            if op.type == "Cond":
                (choice,), _ = self._execute([op.inputs[0]], feeds, values, resolved)
                resolved[op] = bool(choice)
            else:
                run_loop = self._run_while if op.type == "While" else self._run_while_grad
                outs = run_loop(op, feeds, values, resolved)
                feeds, values = dict(feeds), dict(values)
                for t, v in zip(op.outputs, outs):
                    spec, v = self._feed_spec(t, v)
                    feeds[t], values[t] = spec, v
        return self._run_plan(plan, elements, values)

    def _run_plan(self, plan, elements, values):
        self._check_initialized(plan.state)
        self._run_count += 1
        self._current_run = RunInfo(self._run_count, self._run_id_base + self._run_count)
        try:
            return plan.run(self, values)
        except OpError:
            raise
        except (ValueError, TypeError, IndexError, ArithmeticError) as e:
            names = ", ".join(getattr(e_, "name", "?") for e_ in elements)
            raise InvalidArgumentError(None, None, f"Running [{names}] failed: {type(e).__name__}: {e}") from e

    def _run_while_grad(self, op, feeds, values, resolved):
        """The reverse pass of a while loop: re-run it recording states, then apply the body's
        VJP once per iteration, last to first, accumulating the captured tensors' gradients."""
        fwd = op.get_attr("forward")
        states = []
        self._run_while(fwd, feeds, values, resolved, record=states)
        phs = list(fwd.get_attr("loop_vars"))
        idx = list(op.get_attr("var_index"))
        g_phs = list(op.get_attr("grad_vars"))
        vjp = list(op.get_attr("vjp"))
        n_in = op.get_attr("n_forward_inputs")
        g, _ = self._execute(list(op.inputs[n_in:]), feeds, values, resolved)
        g = [np.asarray(v) for v in g]
        cap_acc = None
        for state in reversed(states):
            f, v = self._with(feeds, values, phs + g_phs, list(state) + g)
            out, _ = self._execute(vjp, f, v, resolved)
            g = [np.asarray(x) for x in out[:len(idx)]]
            caps = [np.asarray(x) for x in out[len(idx):]]
            cap_acc = caps if cap_acc is None else [a + c for a, c in zip(cap_acc, caps)]
        if cap_acc is None:
            n_caps = len(op.outputs) - len(idx)
            cap_acc = [np.zeros(t.shape.as_list() if t.shape.is_fully_defined() else (), t.dtype.np_dtype)
                       for t in op.outputs[len(idx):len(idx) + n_caps]]
        return g + cap_acc

    def _run_while(self, op, feeds, values, resolved, record=None):
        """Runs a while loop on the host: its initial values, then one cached plan per iteration
        computing body(v) and cond(body(v)) together."""
        n = op.get_attr("n_loop_vars")
        phs = list(op.get_attr("loop_vars"))
        body = list(op.get_attr("body"))
        limit = op.get_attr("maximum_iterations")
        if limit is not None and not isinstance(limit, int):
            (limit,), _ = self._execute([convert_to_tensor(limit)], feeds, values, resolved)
        limit = None if limit is None else int(limit)
        current, _ = self._execute(list(op.inputs[:n]), feeds, values, resolved)
        current = [np.asarray(v) if not isinstance(v, np.ndarray) else v for v in current]
        step_elements = body + [op.get_attr("cond_next")]
        (go,), _ = self._execute([op.get_attr("cond")], *self._with(feeds, values, phs, current), resolved)
        i = 0
        plan, specs = None, None
        loop_feeds, loop_values = self._with(feeds, values, phs, current)
        first = self._cached_plan(step_elements, loop_feeds, resolved)
        if record is None and first.kind == "eager" and all(
                loop_feeds[p].shape == tuple(v.shape) for p, v in zip(phs, current)):
            # small state: iterate in this process, one eager plan run per iteration
            fixed = all(p.shape.is_fully_defined() for p in phs)
            if fixed:
                self._check_initialized(first.state)
                run = first.run
                while go and (limit is None or i < limit):
                    loop_values.update(zip(phs, current))
                    out, _ = run(self, loop_values)
                    current, go = out[:-1], out[-1]
                    i += 1
                return [np.asarray(v) for v in current]
        while bool(go) and (limit is None or i < limit):
            if record is not None:
                record.append(current)
            loop_feeds, loop_values = self._with(feeds, values, phs, current)
            new_specs = tuple(loop_feeds[p] for p in phs)
            if plan is None or new_specs != specs:
                plan, specs = self._cached_plan(step_elements, loop_feeds, resolved), new_specs
                if plan.kind == "host":  # a cond or loop inside the body: the general path
                    out, _ = self._execute(step_elements, loop_feeds, loop_values, resolved)
                    plan = None
                else:
                    out, _ = self._run_plan(plan, step_elements, loop_values)
            else:
                out, _ = self._run_plan(plan, step_elements, loop_values)
            current = [np.asarray(v) for v in out[:-1]]
            go = out[-1]
            i += 1
        return current

    def _with(self, feeds, values, tensors, arrays):
        feeds, values = dict(feeds), dict(values)
        for t, v in zip(tensors, arrays):
            spec, v = self._feed_spec(t, v)
            feeds[t], values[t] = spec, v
        return feeds, values

    def _check_initialized(self, state):
        missing = [v for v in state.start_vars if v not in self._var_values]
        if missing:
            raise FailedPreconditionError(
                None, state.start_vars[missing[0]],
                "Attempting to use uninitialized value " + ", ".join(repr(m) for m in missing)
                + " (run its initializer, e.g. global_variables_initializer(), first)")

    def _cached_plan(self, elements, feeds, resolved=None):
        key = (tuple(map(id, elements)), tuple((id(t), s) for t, s in feeds.items()),
               tuple((id(op), c) for op, c in resolved.items()) if resolved else ())
        plan = self._plans.get(key)
        if plan is None:
            plan = compile_plan(elements, feeds, self._options, resolved)
            self._plans[key] = plan
        return plan

    def _plan_for(self, fetches, feed_dict):
        if self._closed:
            raise ClosedSessionError(None, None, "Attempted to use a closed Session.")
        elements, _ = flatten_fetches(fetches, self._graph)
        feeds, _ = self._normalize_feeds(feed_dict)
        plan = self._cached_plan(elements, feeds)
        if plan.kind == "host":
            raise InvalidArgumentError(None, plan.op, f"explain: the plan depends on {plan.op.type} op "
                                       f"{plan.op.name!r}, decided when the graph runs")
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
        if not feed_dict:
            return {}, {}
        feeds, values = {}, {}
        for key, value in feed_dict.items():
            t = self._feed_tensor(key)
            spec, v = self._feed_spec(t, value)
            feeds[t] = spec
            values[t] = v
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
        if type(value).__module__.startswith("zarr"):
            from ..io.chunks import dask_array

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
                    value = np.asarray(value)
                except (ValueError, TypeError) as e:
                    raise FeedError(None, t.op, f"Cannot feed value {value!r} for Tensor {t.name!r}: {e}") from None
            vdtype = value.dtype
        if vdtype != target.np_dtype:
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

    # ---- per-run parameters ------------------------------------------------------------------
    def _param_value(self, spec):
        kind = spec[0]
        if kind == "counter":
            v = self._counters.get(spec[1], 0)
            self._counters[spec[1]] = v + 1
            return np.int64(v)
        if kind == "run_token":
            return np.int64(self._current_run.token)
        if kind == "session_seed":
            return np.int64(self._session_seed)
        if kind == "variable":
            try:
                return self._var_values[spec[1]]
            except KeyError:
                raise FailedPreconditionError(None, None, f"Attempting to use uninitialized value {spec[1]!r}") from None
        if kind == "initialized":
            return np.bool_(spec[1] in self._var_values)
        raise InvalidArgumentError(None, None, f"Unknown run parameter {spec!r}")

    def _host_value(self, var_name):
        """A variable's committed value as a numpy array (gathered from the cluster, or read from
        disk, if kept there)."""
        value = self._param_value(("variable", var_name))
        return value.to_host() if isinstance(value, (RemoteValue, StoredValue)) else value

    def _saved_value(self, var_name):
        """A variable's committed value for a Saver: numpy, or the StoredValue itself (streamed)."""
        value = self._param_value(("variable", var_name))
        return value.to_host() if isinstance(value, RemoteValue) else value

    def _load_variable(self, var_name, value):
        """Sets a variable's committed value directly (`Variable.load`); a value as large as the
        session stores on disk is written there chunk by chunk."""
        if self._closed:
            raise ClosedSessionError(None, None, "Attempted to use a closed Session.")
        if not isinstance(value, StoredValue):
            value = np.asarray(value)
            if self._stores(value.shape, value.dtype):
                stored = self._new_stored(var_name, value.shape, value.dtype)
                for idx, slc in zip(_block_indices(stored.chunks), _block_slices(stored.chunks)):
                    stored.cio.write(idx, value[slc])
                value = stored
            else:
                value = _committed(value)
        self._set_variable(var_name, value)

    def _stores(self, shape, dtype):
        """Whether a variable of this shape and dtype is held on disk between runs."""
        limit = self._options.store_bytes
        return bool(limit) and len(shape) > 0 and \
            int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize >= limit

    def _new_stored(self, var_name, shape, dtype):
        """An empty StoredValue for a variable, laid out as plans read it (stored_layout)."""
        from .compiler import stored_chunk_shape

        return StoredValue(self._store_path(var_name), shape, dtype, stored_chunk_shape(shape, dtype, self._options))

    def _store_path(self, var_name):
        import tempfile
        import uuid

        if self._store_dir is None:
            self._store_dir = tempfile.mkdtemp(prefix="dflow-variables-")
        return os.path.join(self._store_dir, f"{var_name.replace('/', '.')}-{uuid.uuid4().hex}.zarr")

    def _set_variable(self, var_name, value):
        old = self._var_values.get(var_name)
        self._var_values[var_name] = value
        if isinstance(old, StoredValue) and old is not value:
            old.discard()

    def _eager_ctx(self, op):
        return _EagerCtx(self, op)


def _parse_bytes(value):
    if value is None:
        return None
    if isinstance(value, str):
        from dask.utils import parse_bytes

        return int(parse_bytes(value))
    return int(value)


def _first(values):
    return values[0]


def _hashable(x):
    try:
        hash(x)
        return True
    except TypeError:
        return False


def _to_host(v):
    """A fetched value as TF1 returns it: numpy arrays, numpy scalars for 0-d, None for ops."""
    if v is None:
        return None
    if isinstance(v, np.ndarray):
        return v[()] if v.ndim == 0 else v
    if isinstance(v, np.generic):
        return v
    if hasattr(v, "get") and type(v).__module__.startswith("cupy"):
        return _to_host(v.get())
    return _to_host(np.asarray(v))


def _committed(v):
    """A variable's new value as the session keeps it: an array of its own, read-only (kernels
    never write their inputs; a feed the user mutates later must not change the variable)."""
    v = _to_host(v)
    arr = np.array(v, copy=True)
    arr.setflags(write=False)
    return arr


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
