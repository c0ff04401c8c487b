"""Small adapters from a scheduler choice to one `get(dsk, keys)` interface."""

from __future__ import annotations

import contextlib
import functools
import itertools
from abc import ABC, abstractmethod

import dask.local
import dask.multiprocessing
import dask.threaded
import numpy as np

from ..dask_compat import convert_legacy_graph, flatten, keyed_task_exceptions, synchronous_pool
from ..errors import InvalidArgumentError, UnavailableError


def quiet_numpy():
    """Kernels stay silent where TF1 is: log(0), sqrt(-1), x/0 and overflows give inf/nan without
    numpy RuntimeWarnings (`check_numerics` is how a TF1 program asks). numpy's error state is per
    thread (a context variable), so each executor sets it in the threads that run its tasks: the
    calling thread for the sync scheduler (around the run), each pool thread or process when it
    starts (the pools' initializer)."""
    np.seterr(all="ignore")


class Executor(ABC):
    name = "base"
    is_local = True

    @abstractmethod
    def get(self, dsk, keys, num_workers=None, trace=None):
        """Computes `keys` (a nested list of keys) of the task graph `dsk`; `trace` (a
        tracing.RunTrace or None) times its tasks and enforces the run's deadline."""

    def workers(self):
        """How many tasks run at once."""
        return 1

    def compute(self, dsk, keys, keep_keys, num_workers=None, trace=None):
        """Computes `keys` and `keep_keys`; returns (values of keys, values of keep_keys).

        A cluster executor returns futures for `keep_keys`, so that values which stay on the
        cluster between runs (variables) are not shipped back and forth."""
        results = self.get(dsk, list(keys) + list(keep_keys), num_workers=num_workers, trace=trace)
        return results[:len(keys)], results[len(keys):]

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
        with np.errstate(all="ignore"):  # see quiet_numpy
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

    def settle(self):
        """After a failure: cancel this run's tasks not yet started and wait for its running ones,
        so the run's failure hooks (deleting a half-written array) come after its last write
        (dask returns at the first error while other tasks still run)."""
        from concurrent.futures import wait

        futures = list(self._futures)
        for fut in futures:
            fut.cancel()
        wait(futures)


class _PoolExecutor(Executor):
    """Local pools kept for the session's life (starting processes costs seconds) and shared by
    the session's concurrent runs; a run's `num_workers` (fewer under a memory budget) caps its
    own tasks in flight, and runs capped alike share a pool of that size (`_pool_size`), so
    concurrent runs stay within the cap too."""

    def __init__(self, num_workers=None):
        import threading

        self.num_workers = num_workers
        self._pools = {}  # size -> pool
        self._closed = False
        self._lock = threading.Lock()

    def workers(self):
        import os

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
            if pool is None or getattr(pool, "_broken", False):  # a process pool whose worker died
                pool = self._pools[size] = self._make_pool(size)
        run = _RunPool(pool, n)
        try:
            return self._run(dsk, keys, run, _callbacks(trace, self.name))
        except BaseException as e:
            run.settle()
            if _is_pool_failure(e):
                raise self._pool_failure(e) from e
            raise

    def _pool_failure(self, exc):
        """The pool cannot run tasks any more (a worker process died, or the session was closed
        under the run): this run's error as a dflow error; the next run gets a fresh pool."""
        from ..errors import AbortedError, CancelledError

        if self._closed:
            return CancelledError(None, None, "The Session was closed while this run was in progress; "
                                  "nothing was committed.")
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
        return dask.threaded.get(dsk, keys, pool=pool, callbacks=callbacks)


class ProcessesExecutor(_PoolExecutor):
    """A process pool kept for the session's life (starting one per run costs seconds)."""

    name = "processes"

    def _pool_size(self, n):
        return self.workers()  # one pool of processes; a run's cap limits its own tasks

    def _make_pool(self, n):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context(dask.config.get("multiprocessing.context", "spawn"))
        return ProcessPoolExecutor(n, mp_context=ctx, initializer=quiet_numpy)

    def _run(self, dsk, keys, pool, callbacks):
        return dask.multiprocessing.get(dsk, keys, pool=pool, callbacks=callbacks)


def _is_pool_failure(exc):
    """Whether `exc` says the pool itself broke (not a task's own error)."""
    from concurrent.futures import BrokenExecutor, CancelledError

    if isinstance(exc, (BrokenExecutor, CancelledError)):
        return True
    return isinstance(exc, RuntimeError) and "after shutdown" in str(exc)


class DistributedExecutor(Executor):
    """Runs plans on a dask.distributed cluster.

    The scheduler identifies results by key and reuses a result whose key it still holds, so every
    run renames the plan's keys with a fresh suffix: a run never sees a previous run's values.
    """

    name = "distributed"
    is_local = False

    def __init__(self, client, owned=False, cluster=None):
        self.client = client
        self.owned = owned
        self.cluster = cluster  # a LocalCluster this executor started (scheduler="distributed")
        self._runs = itertools.count()

    def _renamed(self, dsk, keys):
        suffix = f"-r{next(self._runs)}"

        def rename(k):
            return (k[0] + suffix,) + k[1:] if isinstance(k, tuple) else f"{k}{suffix}"

        graph = convert_legacy_graph(dsk)
        subs = {k: rename(k) for k in graph}
        new = {subs[k]: node.substitute(subs, key=subs[k]) for k, node in graph.items()}
        return new, _map_nested(rename, keys)

    def workers(self):
        try:
            return max(1, sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001 - a cluster that does not answer: assume one
            return 1

    def get(self, dsk, keys, num_workers=None, trace=None):
        new, new_keys = self._renamed(dsk, keys)
        with self._traced(trace):
            return self.client.get(new, new_keys, sync=True)

    def compute(self, dsk, keys, keep_keys, num_workers=None, trace=None):
        from distributed import wait

        new, (new_keys, new_keep) = self._renamed(dsk, [list(keys), list(keep_keys)])
        with self._traced(trace):
            futures, kept = self.client.get(new, [new_keys, new_keep], sync=False)
            values = self.client.gather(futures)  # raises the first task error
            flat = list(flatten(kept))
            if flat:
                wait(flat)
                for f in flat:
                    if f.status == "error":
                        f.result()  # raises the task's exception
        return values, kept

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


def local_cluster(num_workers=None, memory_budget=None):
    """A distributed LocalCluster on loopback owned by a session: one single-threaded worker
    process per core, each with a memory limit of budget / workers when there is a budget (the
    nanny pauses a worker near its limit, spills its data to disk, and restarts it past it)."""
    import os

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
        return ProcessesExecutor()
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
