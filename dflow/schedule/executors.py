"""The local executors (sync, threads, processes: pools shared by the sessions of a process) and
`make_executor`, the executor for a Session's scheduler argument; the base is executor_base.py,
the cluster's executor cluster_executor.py."""

from __future__ import annotations

import contextlib
import os
import threading

import dask.local
import dask.multiprocessing
import dask.threaded

from ..dask_compat import (
    convert_legacy_graph,
    flatten,
    synchronous_pool,
)
from ..errors import (
    AbortedError,
    CancelledError,
    InvalidArgumentError,
    UnavailableError,
)
from ..graph.evaluate import quiet
from ..kernels.cores import share_process_cores, task_threads
from .cluster_executor import DistributedExecutor, local_cluster
from .cluster_graph import chunk_regions, sources_inlined
from .executor_base import (
    Executor,
    _callbacks,
    _RunPool,
    quiet_numpy,
)
from .memory import WORKER_PROCESS_BYTES


def _start_worker_process(n):
    """A process pool's initializer: numpy quiet, BLAS at the process's share of the cores (one of n)."""
    quiet_numpy()
    share_process_cores(n)


class SyncExecutor(Executor):
    name = "sync"

    def get(self, dsk, keys, num_workers=None, trace=None):
        run = _RunPool(synchronous_pool(), 1)
        with quiet():  # see quiet_numpy
            return dask.local.get_async(run.submit, 1, dsk, keys, callbacks=_callbacks(trace, self.name))


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
