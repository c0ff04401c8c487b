"""What every executor is (`Executor`: `get` and `compute`, the `Computed`/`Kept` records), how
a run submits to a shared pool (`_RunPool`), and numpy's error state in worker threads. The local
executors are in executors.py, the cluster's in cluster_executor.py."""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from typing import NamedTuple

import numpy as np

from ..dask_compat import (
    gather_blocks,
    keyed_task_exceptions,
)


def quiet_numpy():
    """Kernels stay silent where TF1 is: log(0), sqrt(-1), x/0 and overflows give inf/nan without
    numpy RuntimeWarnings (`check_numerics` is how a TF1 program asks). numpy's error state is per
    thread (a context variable), so each executor sets it in the threads that run its tasks: the
    calling thread for the sync scheduler (around the run), each pool thread or process when it
    starts (the pools' initializer); in-process kernels run under `evaluate.quiet`."""
    np.seterr(all="ignore")


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


def _callbacks(trace, scheduler):
    return None if trace is None else trace.dask_callbacks(scheduler)


def _map_nested(fn, keys):
    if isinstance(keys, list):
        return [_map_nested(fn, k) for k in keys]
    return fn(keys)

