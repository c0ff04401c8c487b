"""Small adapters from a scheduler choice to one `get(dsk, keys)` interface."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import os
import threading
import time
import uuid
from abc import ABC, abstractmethod
from typing import NamedTuple

import dask.local
import dask.multiprocessing
import dask.threaded
import numpy as np

from ..dask_compat import (
    DataNode,
    Task,
    TaskRef,
    convert_legacy_graph,
    cut_lineage,
    flatten,
    gather_blocks,
    graph_expr,
    install_lineage_cut,
    keyed_task_exceptions,
    synchronous_pool,
)
from ..errors import (
    AbortedError,
    CancelledError,
    InvalidArgumentError,
    OpError,
    ResourceExhaustedError,
    UnavailableError,
)
from ..graph.evaluate import quiet
from ..kernels.cores import keep_kernel_memory, share_process_cores, task_threads
from ..storage.values import HOST_COPY_BYTES, Part, RemoteValue
from .cluster_graph import REREAD_TASKS, SOURCE_READERS, chunk_regions, sources_inlined
from .memory import WORKER_PROCESS_BYTES


def quiet_numpy():
    """Kernels stay silent where TF1 is: log(0), sqrt(-1), x/0 and overflows give inf/nan without
    numpy RuntimeWarnings (`check_numerics` is how a TF1 program asks). numpy's error state is per
    thread (a context variable), so each executor sets it in the threads that run its tasks: the
    calling thread for the sync scheduler (around the run), each pool thread or process when it
    starts (the pools' initializer); in-process kernels run under `evaluate.quiet`."""
    np.seterr(all="ignore")


def _start_worker_process(n):
    """A process pool's initializer: numpy quiet, BLAS at the process's share of the cores (one of n)."""
    quiet_numpy()
    share_process_cores(n)


class Kept(NamedTuple):
    """A value a run computes for later runs (a variable's new value): its blocks' keys (a nested
    list), chunks and dtype."""

    keys: list
    chunks: tuple
    dtype: object


class Computed(NamedTuple):
    """What `Executor.compute` returns, whatever the executor: the values of `keys` (each a
    nested list of blocks), and each Kept's value as the session holds it between runs (a numpy
    array on a local executor; a RemoteValue on a cluster, with a host copy when small)."""

    values: list
    kept: list


class Executor(ABC):
    name = "base"
    is_local = True
    worker_bytes = 0  # what each worker costs this machine besides its tasks (memory.py)

    @abstractmethod
    def get(self, dsk, keys, num_workers=None, trace=None):
        """Computes `keys` (a nested list of keys) of the task graph `dsk`; `trace` (a
        tracing.RunTrace or None) times its tasks and enforces the run's deadline."""

    def workers(self):
        """How many tasks run at once."""
        return 1

    def compute(self, dsk, keys, kept=(), num_workers=None, trace=None, one_task=False, task_bytes=0):
        """Computes `keys` and the `kept` values (Kept records) in one scheduler call: a
        `Computed`. `one_task` (a small plan) and `task_bytes` (its largest projected task) are
        hints a cluster executor uses; local ones run the graph as it is."""
        results = self.get(dsk, list(keys) + [k.keys for k in kept], num_workers=num_workers, trace=trace)
        return Computed(results[:len(keys)], [gather_blocks(r) for r in results[len(keys):]])

    def resident(self, name, value, chunks):
        """Variable `name`'s committed value where this executor's tasks read it (`chunks`: as the
        plan reads it): here, the value itself."""
        return value

    def close(self):  # noqa: B027 - optional hook: only executors that own resources override it
        pass


def _pack_naming_key(key, pack, exc, dumps):
    """dask's `pack_exception` for one task, noting the task's key on its exception
    (`dflow_task_key`): the plan names the op whose task failed (errors.kernel_failure)."""
    try:
        exc.dflow_task_key = key
    except (AttributeError, TypeError):  # an exception that takes no attributes
        pass
    return pack(exc, dumps)


class SyncExecutor(Executor):
    name = "sync"

    def get(self, dsk, keys, num_workers=None, trace=None):
        run = _RunPool(synchronous_pool(), 1)
        with quiet():  # see quiet_numpy
            return dask.local.get_async(run.submit, 1, dsk, keys, callbacks=_callbacks(trace, self.name))


class _RunPool:
    """One run's view of the pool its session's runs share: dask submits through it, at most
    `max_workers` tasks at once, and it keeps this run's futures, so a failing run cancels and
    waits for its own tasks only (a failure in one run must not touch runs on other threads)."""

    def __init__(self, pool, max_workers):
        self._pool = pool
        self._max_workers = max_workers  # what dask reads to size its batches
        self._futures = set()  # those not done yet (a done one would pin its task's result)

    def submit(self, fn, *args, **kwargs):
        args = keyed_task_exceptions(fn, args, lambda key, pack: functools.partial(_pack_naming_key, key, pack))
        fut = self._pool.submit(fn, *args, **kwargs)
        self._futures.add(fut)
        fut.add_done_callback(self._futures.discard)
        return fut

    def cancel(self):
        """Cancels this run's tasks not yet started; returns its futures as they were."""
        futures = list(self._futures)
        for fut in futures:
            fut.cancel()
        return futures

    def settle(self):
        """After a failure: cancel this run's tasks not yet started and wait for its running ones,
        so the run's failure hooks (deleting a half-written array) come after its last write
        (dask returns at the first error while other tasks still run)."""
        from concurrent.futures import wait

        wait(self.cancel())


class _PoolExecutor(Executor):
    """Local pools kept for the session's life (starting processes costs seconds) and shared by
    the session's concurrent runs; a run's `num_workers` (fewer under a memory budget) caps its
    own tasks in flight, and runs capped alike share a pool of that size (`_pool_size`), so
    concurrent runs stay within the cap too."""

    def __init__(self, num_workers=None):
        self.num_workers = num_workers
        self._pools = {}  # size -> pool
        self._closed = False
        self._lock = threading.Lock()
        self._active = set()  # the _RunPools of runs going on now

    def workers(self):
        return self.num_workers or os.cpu_count() or 1

    def _make_pool(self, n):
        raise NotImplementedError

    def _pool_size(self, n):
        """The size of the pool a run capped at `n` tasks uses."""
        return n

    def _run(self, dsk, keys, pool, callbacks):
        raise NotImplementedError

    def get(self, dsk, keys, num_workers=None, trace=None):
        n = min(self.workers(), num_workers) if num_workers else self.workers()
        size = self._pool_size(n)
        with self._lock:
            if self._closed:
                raise self._pool_failure(RuntimeError("closed"))
            pool = self._pools.get(size)
            if pool is None or getattr(pool, "_broken", False) or getattr(pool, "_shutdown_thread", False):
                # a process pool whose worker died, or one dropped after a Ctrl-C (`_interrupt`)
                pool = self._pools[size] = self._make_pool(size)
            run = _RunPool(pool, n)
            self._active.add(run)
        try:
            return self._run(dsk, keys, run, _callbacks(trace, self.name))
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):  # Ctrl-C: stop now, not after the running tasks
                self._interrupt(run, pool)
            else:
                run.settle()
            if _is_pool_failure(e):
                raise self._pool_failure(e) from e
            raise
        finally:
            with self._lock:
                self._active.discard(run)

    def _interrupt(self, run, pool):
        """After a KeyboardInterrupt: as after a failure (threads cannot be stopped; their running
        tasks end before the run's failure hooks delete what it half wrote)."""
        run.settle()

    def _pool_failure(self, exc):
        """The pool cannot run tasks any more (a worker process died, or the session was closed
        under the run): this run's error as a dflow error; the next run gets a fresh pool."""
        if self._closed:
            return CancelledError(None, None, "The Session was closed while this run was in progress; "
                                  "nothing was committed.")
        if type(exc).__name__ == "BrokenProcessPool":
            return AbortedError(None, None, f"A worker process of the {self.name} scheduler died during this run "
                                "(killed, or out of memory: the kernel's OOM killer) and its pool is broken; "
                                "nothing was committed. The next run starts a fresh pool: run it again.")
        return AbortedError(None, None, f"The {self.name} scheduler's worker pool failed under this run "
                            f"({type(exc).__name__}: {exc}); nothing was committed. Run it again.")

    def close(self):
        with self._lock:
            self._closed = True
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.shutdown(wait=False, cancel_futures=True)


class ThreadsExecutor(_PoolExecutor):
    name = "threads"

    def _make_pool(self, n):
        from concurrent.futures import ThreadPoolExecutor

        return ThreadPoolExecutor(n, initializer=quiet_numpy)

    def _run(self, dsk, keys, pool, callbacks):
        with task_threads(pool._max_workers):  # BLAS's threads shared among the tasks (kernels/cores.py)
            return dask.threaded.get(dsk, keys, pool=pool, callbacks=callbacks)


class _SharedPool:
    """A process pool and what decides whether a Session may reuse it: the files its workers' stdout
    and stderr are (inherited when they were spawned), and the executors using it now."""

    def __init__(self, pool, fds):
        import weakref

        self.pool, self.fds = pool, fds
        self.users = weakref.WeakSet()  # a Session dropped without close() stops counting


_process_pools = {}  # (size, start method) -> the _SharedPool a new Session of this process takes
_retired = []  # _SharedPools replaced there while Sessions still used them: shut by the last one
_process_pools_lock = threading.Lock()


def _std_fds():
    """What this process's stdout and stderr are now (device, inode), as a spawned worker inherits
    them: a tf.Print in a task writes there."""
    out = []
    for fd in (1, 2):
        try:
            st = os.fstat(fd)
            out.append((st.st_dev, st.st_ino))
        except OSError:
            out.append(None)
    return tuple(out)


class ProcessesExecutor(_PoolExecutor):
    """A process pool shared by the Sessions of this process that ask for one of its size, while
    this process's stdout and stderr are the files they were when its workers were spawned (a
    worker's prints go where its parent's went then): starting one (spawning the workers, each
    importing numpy and dflow) costs ~1 s, which a TF1 program paid per `with tf.Session()` block.
    Tasks are functions of their inputs, so workers carry nothing from one session's runs to
    another's. A pool whose worker died is replaced for all; an idle pool stays for the next
    Session, which shuts it down and spawns another if stdout or stderr changed meanwhile; its
    workers exit with the interpreter.
    Closing a session cancels its own runs' tasks not yet started (its runs in progress then fail
    as closed); the pool stays for the others."""

    name = "processes"
    worker_bytes = WORKER_PROCESS_BYTES  # each worker is an interpreter of its own

    def __init__(self, num_workers=None, memory_budget=None):
        super().__init__(num_workers)
        self.memory_budget = memory_budget

    def _pool_size(self, n):
        # one pool of processes, a run's cap limiting its own tasks; under a budget the pool has no
        # more processes than the run's cap (each costs WORKER_PROCESS_BYTES even when idle)
        return self.workers() if self.memory_budget is None else n

    def _make_pool(self, n):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        method = dask.config.get("multiprocessing.context", "spawn")
        fds = _std_fds()
        stale = []
        with _process_pools_lock:
            shared = _process_pools.get((n, method))
            if shared is None or shared.fds != fds or getattr(shared.pool, "_broken", False) or \
                    getattr(shared.pool, "_shutdown_thread", False):
                if shared is not None:  # replaced: shut now if nobody uses it, else by its last user
                    shared.users.discard(self)
                    if shared.users:
                        _retired.append(shared)
                    else:
                        stale.append(shared.pool)
                ctx = multiprocessing.get_context(method)
                shared = _process_pools[n, method] = _SharedPool(
                    ProcessPoolExecutor(n, mp_context=ctx, initializer=_start_worker_process, initargs=(n,)), fds)
            shared.users.add(self)
        for pool in stale:  # nobody's: its workers exit
            pool.shutdown(wait=False, cancel_futures=True)
        return shared.pool

    def _interrupt(self, run, pool):
        """After a KeyboardInterrupt (Ctrl-C): the run's tasks not yet started are cancelled and,
        when some are still running, the pool's worker processes are killed (a task may run for
        minutes; TF1 stops at Ctrl-C) and the pool dropped, so the interrupt is raised within a
        second; the session's next run starts a fresh pool."""
        if not [f for f in run.cancel() if not f.done()]:
            return
        procs = list((getattr(pool, "_processes", None) or {}).values())
        calls = getattr(pool, "_call_queue", None)
        if calls is not None:  # its feeder thread may be blocked writing a task no worker will read:
            calls.cancel_join_thread()  # neither the pool's shutdown nor the interpreter's exit waits for it
        for proc in procs:
            with contextlib.suppress(Exception):
                proc.kill()
        for proc in procs:
            with contextlib.suppress(Exception):
                proc.join(1)
        results = getattr(pool, "_result_queue", None)
        if results is not None:  # a worker killed while sending a result leaves half a message that
            with contextlib.suppress(Exception):  # the pool's manager thread waits on, and the
                results._writer.close()  # interpreter's exit on it: with no writer left it reads EOF
        self._drop_pool(pool)

    def _drop_pool(self, pool):
        """Forgets `pool` (its workers are being killed): no session of this process takes it again."""
        with self._lock:
            for size, p in list(self._pools.items()):
                if p is pool:
                    del self._pools[size]
        with _process_pools_lock:
            for key, shared in list(_process_pools.items()):
                if shared.pool is pool:
                    del _process_pools[key]
        with contextlib.suppress(Exception):
            pool.shutdown(wait=False, cancel_futures=True)

    def _run(self, dsk, keys, pool, callbacks):
        if callbacks is None:  # (a traced run times each op's task)
            # every task's result goes back to this process: a chunk's tasks in one (as on a cluster)
            # keep its intermediates in the worker (a CNN over Zarr: bench_interop)
            outs = set(flatten(keys))
            dsk = sources_inlined(chunk_regions(convert_legacy_graph(dsk), outs), outs, 1)
        return dask.multiprocessing.get(dsk, keys, pool=pool, callbacks=callbacks)

    def close(self):
        with self._lock:
            self._closed = True
            pools, self._pools = set(map(id, self._pools.values())), {}
            runs = list(self._active)
        for run in runs:  # each fails as closed (CancelledError) at its next task's turn
            run.cancel()
        stale = []
        with _process_pools_lock:
            for shared in list(_process_pools.values()) + _retired:
                if id(shared.pool) in pools:
                    shared.users.discard(self)
            for shared in [sp for sp in _retired if not sp.users]:  # replaced, and now nobody's
                _retired.remove(shared)
                stale.append(shared.pool)
        for pool in stale:
            pool.shutdown(wait=False, cancel_futures=True)


def _is_pool_failure(exc):
    """Whether `exc` says the pool itself broke (not a task's own error)."""
    from concurrent.futures import BrokenExecutor, CancelledError

    if isinstance(exc, (BrokenExecutor, CancelledError)):
        return True
    return isinstance(exc, RuntimeError) and "after shutdown" in str(exc)


class ClusterDataLost(UnavailableError):
    """A run failed because the cluster lost data it read (a worker died holding a variable's
    value): nothing was committed; the session recovers what it can and runs the plan again."""


class DistributedExecutor(Executor):
    """Runs plans on a dask.distributed cluster: one graph submitted and one gather per scheduler
    call (feeds travel inside the graph, committed values stay on the workers as futures).

    The scheduler identifies results by key and reuses a result whose key it still holds, so every
    run renames the plan's keys with a fresh suffix: a run never sees a previous run's values.
    Values kept for later runs are cut from their lineage (`dask_compat.cut_lineage`): the
    scheduler holds them as data, never recomputes them from their inputs.

    A run that makes no progress for `stall_timeout` seconds (no task finished; e.g. every worker
    paused at its memory limit) is cancelled with a ResourceExhaustedError; progress is asked of
    the scheduler only once a run has lasted `poll_interval` seconds.
    """

    name = "distributed"
    is_local = False
    poll_interval = 5.0
    stall_timeout = 120.0

    def __init__(self, client, owned=False, cluster=None):
        self.client = client
        self.owned = owned
        self.cluster = cluster  # a LocalCluster this executor started (scheduler="distributed")
        self._runs = itertools.count()
        self._token = uuid.uuid4().hex[:8]  # keys of two sessions on one cluster never meet
        self._nthreads = None
        self._memory_limit = None  # the smallest memory limit of the cluster's workers (None: none)
        self.cuts_lineage = install_lineage_cut(client)
        _set_up_workers(client)

    def _renamed(self, dsk, keys):
        self._suffix = suffix = f"-{self._token}-r{next(self._runs)}"

        def rename(k):
            return (k[0] + suffix,) + k[1:] if isinstance(k, tuple) else f"{k}{suffix}"

        graph = convert_legacy_graph(dsk)
        subs = {k: rename(k) for k in graph}
        new = {subs[k]: node.substitute(subs, key=subs[k]) for k, node in graph.items()}
        return new, _map_nested(rename, keys)

    def _collapsed(self, dsk, keys, keep_keys, copies):
        """The graph as one task running it on a worker (`_run_graph`, its result a tuple: the
        fetched blocks, then the kept ones) and a task picking the fetched and copied blocks out of
        it (the one key gathered). Returns the graph and (keys, each kept group's indices into the
        tuple): the kept values are held as Parts of the one result, which the session keeps."""
        self._suffix = suffix = f"-{self._token}-r{next(self._runs)}"
        graph = convert_legacy_graph(dsk)
        external = sorted({d for node in graph.values() for d in node.dependencies} - graph.keys(), key=str)
        fetched = list(flatten(keys))
        kept = [list(flatten(k)) for k in keep_keys]
        outs = fetched + [k for group in kept for k in group]
        step = f"dflow-step{suffix}"
        new = {step: Task(step, _run_graph, DataNode(None, graph), outs, external,
                          *[TaskRef(k) for k in external])}
        picked = list(range(len(fetched)))
        indices, i = [], len(fetched)
        for group_keys, group, copy in zip(keep_keys, kept, copies):
            if copy:
                picked.extend(range(i, i + len(group)))
            index = {k: i + j for j, k in enumerate(group)}
            indices.append(_map_nested(index.__getitem__, group_keys))
            i += len(group)
        self._step_key, self._pick_key = step, f"dflow-fetch{suffix}"
        new[self._pick_key] = Task(self._pick_key, _pick, TaskRef(step), picked)
        return new, (keys, indices)

    def _blame(self, exc, futures):
        """Notes on `exc` the key (this run's suffix taken off) of the task whose error it is, as
        the scheduler blames it, so the plan names that task's op (the local executors note the
        key as the task fails; `_run_graph` does for one-task runs)."""
        erred = [f for f in flatten(futures) if getattr(f, "status", None) == "error"]
        if not erred:
            return
        try:
            key = self.client.run_on_scheduler(_blamed_key, erred[0].key)
        except Exception:  # noqa: BLE001 - the op name is a courtesy: the error stands as it is
            return
        suffix = self._suffix
        if isinstance(key, tuple) and key and isinstance(key[0], str) and key[0].endswith(suffix):
            key = (key[0][:-len(suffix)],) + tuple(key[1:])
        elif isinstance(key, str) and key.endswith(suffix):
            key = key[:-len(suffix)]
        else:
            return
        with contextlib.suppress(AttributeError, TypeError):
            exc.dflow_task_key = key

    def workers(self):
        """The cluster's threads, asked once with its workers' memory limits (never on a run's path)."""
        if self._nthreads is None:
            try:
                info = self.client.scheduler_info()["workers"].values()
            except Exception:  # noqa: BLE001 - a cluster that does not answer: assume one
                return 1
            self._nthreads = max(1, sum(w.get("nthreads", 1) for w in info))
            limits = [w.get("memory_limit") or 0 for w in info]
            self._memory_limit = min(limits) if limits and all(limits) else None
        return self._nthreads

    def _rereads(self, task_bytes):
        """Whether source chunks are read again by each reader rather than held between tasks: on
        workers whose memory limit holds fewer than REREAD_TASKS of the plan's largest task."""
        self.workers()
        return bool(task_bytes) and self._memory_limit is not None and \
            self._memory_limit < REREAD_TASKS * task_bytes

    def get(self, dsk, keys, num_workers=None, trace=None):
        return self.compute(dsk, keys, num_workers=num_workers, trace=trace).values

    def resident(self, name, value, chunks):
        """A variable's committed value as a run reads it on the cluster: shipped there once per
        change (a loaded value), re-shipped from the session's host copy when the cluster lost it,
        or, lost without a copy, an UnavailableError naming the variable and how to recover."""
        if isinstance(value, RemoteValue) and not value.available():
            if value.host is None:
                raise UnavailableError(None, None, f"The value of variable {name!r} was lost with a worker of the "
                                       "cluster that held it (it is larger than the session keeps a copy of, "
                                       f"{HOST_COPY_BYTES >> 20} MiB). Restore it from a checkpoint "
                                       "(Saver.restore) or run its initializer again.")
            value = value.host
        if isinstance(value, np.ndarray):
            value = RemoteValue.scatter(self.client, value, chunks)
        return value

    def compute(self, dsk, keys, kept=(), num_workers=None, trace=None, one_task=False, task_bytes=0):
        """Submits the graph once and gathers once: the values of `keys`, and each Kept value as
        a RemoteValue (its futures kept on the cluster, lineage cut), small ones with a host copy
        gathered in the same call.

        `one_task` (a small plan): the whole graph runs as one task on one worker (`_run_graph`),
        so a training step of a small model costs one scheduler hop, not one per op. `task_bytes`:
        the plan's largest projected task (whether its source chunks are read again rather than
        held, `cluster_graph`)."""
        keep_keys = [k.keys for k in kept]
        copies = [RemoteValue.keeps_copy(tuple(map(sum, k.chunks)), k.dtype) for k in kept]
        # a traced run times each task; without the cut, kept values are shipped as futures
        traced = trace is not None and trace.trace
        one_task = one_task and self.cuts_lineage and not traced
        if one_task:
            new, (new_keys, new_keep) = self._collapsed(dsk, list(keys), list(keep_keys), copies)
        else:
            new, (new_keys, new_keep) = self._renamed(dsk, [list(keys), list(keep_keys)])
            outs = set(flatten([new_keys, new_keep]))
            if not traced:  # (a traced run times each op's task)
                new = chunk_regions(new, outs)
            new = sources_inlined(new, outs, SOURCE_READERS if self._rereads(task_bytes) else 1)
        with self._traced(trace):
            expr = graph_expr(new, f"dflow-run{self._suffix}")
            if one_task:  # one key gathered: the fetches and the copies, picked out on the worker;
                from distributed import Future

                # the kept values are Parts of the one task's result (one Future per value)
                futures, (step,) = self.client.get(expr, [[self._pick_key], [self._step_key]], sync=False)
                held = [_map_nested(lambda i, f=Future(step.key, self.client): Part(f, i), group)
                        for group in new_keep] if new_keep else []
                wanted = futures
                waited = [futures, step]
            else:
                futures, held = self.client.get(expr, [new_keys, new_keep], sync=False)
                wanted = [futures, [k for k, c in zip(held, copies) if c]]
                waited = [futures, held]
            try:
                self._wait(waited)
                gathered = self.client.gather(wanted)
                if one_task:
                    it = iter(gathered[0])
                    gathered = (_nest_like(new_keys, it), [_nest_like(k, it) for k, c in zip(new_keep, copies) if c])
                values, copied = gathered
            except BaseException as e:
                if not one_task and isinstance(e, Exception) and not hasattr(e, "dflow_task_key"):
                    self._blame(e, waited)
                with contextlib.suppress(Exception):  # a run that failed leaves nothing running
                    self.client.cancel(list(flatten(waited)))
                mapped = _cluster_error(e)
                if mapped is e:
                    raise
                raise mapped from e
        flat = [] if one_task else list(flatten(held))
        if one_task and held:
            cut_lineage(self.client, [step.key])
        elif flat and self.cuts_lineage:
            cut_lineage(self.client, [f.key for f in flat])
        elif flat:  # a scheduler without the cut: ship the values back and forth (no lineage), slowly
            shipped = iter(self.client.scatter(self.client.gather(flat)))
            held = [_nest_like(k, shipped) for k in held]
        it = iter(copied)
        return Computed(values, [RemoteValue(self.client, f, k.chunks, k.dtype, _host_copy(next(it)) if c else None)
                                 for k, f, c in zip(kept, held, copies)])

    def _wait(self, futures):
        """Waits for `futures`. A run in which nothing happens for `stall_timeout` seconds (no task
        changed state and no worker is running one: every worker paused at its memory limit, or
        none left) is cancelled with a ResourceExhaustedError saying why."""
        from distributed import wait

        flat = list(flatten(futures))
        if not flat:
            return
        last, since = None, time.monotonic()
        while True:
            try:
                wait(flat, timeout=self.poll_interval)  # an error ends every future it reaches
                return
            except TimeoutError:
                pass
            progress = self.client.run_on_scheduler(_progress)
            now = time.monotonic()
            if progress["transitions"] != last or progress["busy"]:
                last, since = progress["transitions"], now
            elif now - since > self.stall_timeout:
                paused = progress["paused"]
                why = (f"{len(paused)} of {progress['workers']} workers paused at their memory limit "
                       f"({', '.join(paused)}): the run's tasks need more memory than a worker's limit "
                       "leaves (smaller chunks, or a larger memory_limit)") if paused else \
                      ("the cluster has no worker" if not progress["workers"] else "no worker runs its tasks")
                raise ResourceExhaustedError(None, None, f"The run stalled on the cluster: {why}; nothing "
                                             f"progressed in {self.stall_timeout:g} s. The run was cancelled "
                                             "and nothing was committed.")

    @contextlib.contextmanager
    def _traced(self, trace):
        """The workers' own task timings (the scheduler's task stream) and, when the run returns,
        its deadline (a cluster's tasks are not dispatched by this process)."""
        if trace is None:
            yield
            return
        if not trace.trace:
            yield
        else:
            from distributed import get_task_stream

            with get_task_stream(self.client) as stream:
                yield
            trace.add_task_stream(stream.data)
        trace.check_deadline(" (checked when the cluster returned)")

    def close(self):
        if self.owned:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None


def _set_up_workers(client):
    """Registers `_WorkerSetup` with the cluster (its workers now and later; once per cluster: a
    plugin of the same name replaces it). A cluster whose workers cannot import dflow is left as it is."""
    try:
        client.register_plugin(_WorkerSetup(), name="dflow-worker-setup")
    except Exception:  # noqa: BLE001 - foreign workers: dflow's tasks fail there anyway, naming it
        pass


try:
    from distributed import WorkerPlugin as _WorkerPluginBase
except ImportError:  # distributed is a dependency; kept importable without it
    _WorkerPluginBase = object


class _WorkerSetup(_WorkerPluginBase):
    """What a worker process of a distributed cluster needs for dflow's kernels: its allocator
    keeps freed memory for reuse (kernels/cores.py `keep_kernel_memory`)."""

    def setup(self, worker):
        keep_kernel_memory()


def _host_copy(blocks):
    value = np.array(gather_blocks(blocks), copy=True)
    value.setflags(write=False)
    return value


def _run_graph(graph, out_keys, external_keys, *external_values):
    """A small plan's whole graph, run in one task (on a worker) with the sync scheduler; the
    values of `out_keys` as a tuple."""
    dsk = dict(graph)
    for k, v in zip(external_keys, external_values):
        dsk[k] = DataNode(k, v)
    run = _RunPool(synchronous_pool(), 1)  # a failing task's error notes its key: the plan names its op
    with quiet():  # see quiet_numpy
        return tuple(dask.local.get_async(run.submit, 1, dsk, out_keys))


def _pick(values, indices):
    return [values[i] for i in indices]


def _nest_like(keys, it):
    """Values from the iterator `it` in the nesting of `keys` (lists of keys)."""
    if isinstance(keys, list):
        return [_nest_like(k, it) for k in keys]
    return next(it)


def _blamed_key(key, dask_scheduler=None):
    """On the scheduler: the key of the task whose error erred task `key` carries."""
    ts = dask_scheduler.tasks.get(key)
    blame = getattr(ts, "exception_blame", None) if ts is not None else None
    return blame.key if blame is not None else None


def _progress(dask_scheduler):
    """What the stall check asks the scheduler: task transitions so far, workers, paused workers,
    and whether a running worker is executing a task (a long task is not a stall)."""
    workers = list(dask_scheduler.workers.values())
    paused = [ws.address for ws in workers if getattr(ws.status, "name", str(ws.status)) == "paused"]
    busy = any(ws.processing for ws in workers if ws.address not in paused)
    return {"transitions": dask_scheduler.transition_counter, "workers": len(workers), "paused": paused,
            "busy": busy}


def _cluster_error(e):
    """A dask.distributed failure as a dflow error (a kernel's own error passes as it is)."""
    import concurrent.futures

    from distributed import KilledWorker

    if isinstance(e, OpError) or not isinstance(e, Exception):
        return e
    if isinstance(e, KilledWorker):
        return UnavailableError(None, None, f"A task of the run ({e.task!r}) was running on workers that died "
                                f"repeatedly (the last: {e.last_worker.address if e.last_worker else '?'}); a task "
                                "that needs more memory than a worker's limit is the usual cause. Nothing was "
                                "committed.")
    if isinstance(e, (concurrent.futures.CancelledError, asyncio.CancelledError)):
        return ClusterDataLost(None, None, f"The cluster lost data the run needed (a worker died): {e}. "
                               "Nothing was committed.")
    if isinstance(e, (OSError, TimeoutError)) and "comm" in type(e).__module__ + str(e).lower():
        return UnavailableError(None, None, f"The Dask scheduler is unreachable: {e}")
    return e


def local_cluster(num_workers=None, memory_budget=None):
    """A distributed LocalCluster on loopback owned by a session: one single-threaded worker
    process per core, each with a memory limit of budget / workers when there is a budget (the
    nanny pauses a worker near its limit, spills its data to disk, and restarts it past it)."""
    from distributed import Client, LocalCluster

    n = num_workers or os.cpu_count() or 1
    limit = max(1, memory_budget // n) if memory_budget else "auto"
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, memory_limit=limit,
                           host="127.0.0.1", dashboard_address=None)
    return DistributedExecutor(Client(cluster), owned=True, cluster=cluster)


def make_executor(scheduler, target="", memory_budget=None, num_workers=None):
    """The executor for a Session's `scheduler` (or `target` address) argument."""
    if scheduler is None and target:
        scheduler = target
    if scheduler == "distributed":
        return local_cluster(num_workers, memory_budget)
    if scheduler is None or scheduler == "threads" or scheduler == "threading":
        return ThreadsExecutor()
    if scheduler in ("sync", "synchronous", "single-threaded"):
        return SyncExecutor()
    if scheduler in ("processes", "multiprocessing"):
        return ProcessesExecutor(memory_budget=memory_budget)
    if isinstance(scheduler, str) and "://" in scheduler:
        from distributed import Client

        try:
            client = Client(scheduler, timeout="10s")
        except OSError as e:
            raise UnavailableError(None, None, f"Cannot connect to the Dask scheduler at {scheduler!r}: {e}") from e
        return DistributedExecutor(client, owned=True)
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - distributed is a dependency
        Client = ()
    if isinstance(scheduler, Client):
        return DistributedExecutor(scheduler)
    raise InvalidArgumentError(None, None, f"Unknown scheduler {scheduler!r}: expected 'sync', 'threads', "
                               "'processes', 'distributed' (a local cluster of its own), a distributed.Client "
                               "or an address 'tcp://host:port'.")


def _callbacks(trace, scheduler):
    return None if trace is None else trace.dask_callbacks(scheduler)


def _map_nested(fn, keys):
    if isinstance(keys, list):
        return [_map_nested(fn, k) for k in keys]
    return fn(keys)
