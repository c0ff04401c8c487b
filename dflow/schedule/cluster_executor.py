"""The executor of a dask.distributed cluster (`DistributedExecutor`) and the LocalCluster a session
may own (`local_cluster`)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import time
import uuid

import dask.local
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
    synchronous_pool,
)
from ..errors import (
    OpError,
    ResourceExhaustedError,
    UnavailableError,
)
from ..graph.evaluate import quiet
from ..kernels.cores import keep_kernel_memory
from ..storage.values import HOST_COPY_BYTES, Part, RemoteValue
from .cluster_graph import REREAD_TASKS, SOURCE_READERS, chunk_regions, sources_inlined
from .executor_base import Computed, Executor, _map_nested, _RunPool


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
