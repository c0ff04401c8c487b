"""The one place dflow touches dask's private or semi-private APIs.

Everything here is a thin alias or wrapper, so that a dask upgrade that moves one of them breaks a
single module. dflow imports dask's public API (`dask.array`, `dask.delayed`, `HighLevelGraph`,
`tokenize`, the local schedulers) directly; what is below is not covered by dask's stability
promises. This module imports nothing of dflow (it sits at the bottom, beside `errors`).
"""

from __future__ import annotations

from dask._task_spec import Alias, DataNode, GraphNode, Task, TaskRef, convert_legacy_graph  # noqa: F401 - re-exported
from dask.array.core import auto_chunks as _auto_chunks
from dask.array.core import concatenate3, elemwise, finalize  # noqa: F401 - re-exported
from dask.array.core import normalize_chunks as _normalize_chunks
from dask.array.utils import meta_from_array  # noqa: F401 - re-exported
from dask.core import (
    flatten,  # noqa: F401 - re-exported
    istask,
)
from dask.highlevelgraph import HighLevelGraph, MaterializedLayer  # noqa: F401 - re-exported
from dask.optimization import cull as _cull


def graph_expr(dsk, token):
    """A dict task graph as distributed's `Client.get` takes it, named by `token` (unique per
    run) instead of a hash of the whole graph: tokenizing a training step's graph, feeds
    included, costs more than running it."""
    from dask._expr import LLGExpr

    return LLGExpr(dsk, _determ_token=token)


def alias(key, target):
    """A task making `key` an alias of `target` (no copy)."""
    return Alias(key, target)


def gather_blocks(parts):
    """The numpy value of a computed dask array from its nested list of blocks (or the block)."""
    return finalize(parts) if isinstance(parts, (list, tuple)) else parts


def normalize_chunks(chunks, shape, limit=None, dtype=None):
    return _normalize_chunks(chunks, tuple(shape), limit=limit, dtype=dtype)


def chunk_counts(chunks, shape, limit=None, dtype=None):
    """How many chunks `normalize_chunks(chunks, shape, ...)` would make along each axis, computed
    without making dask's per-chunk tuples (which for a huge lazy shape alone fill the memory).
    Regular specs only (an int, "auto", a byte size, -1/None, a dict or tuple of those); None for
    explicit per-chunk tuples, which already exist."""
    from numbers import Number

    from dask.utils import parse_bytes

    shape = tuple(shape)
    if isinstance(chunks, list):
        chunks = tuple(chunks)
    if isinstance(chunks, (Number, str)):
        chunks = (chunks,) * len(shape)
    if isinstance(chunks, dict):
        chunks = tuple(chunks.get(i) for i in range(len(shape)))
    if not isinstance(chunks, tuple) or len(chunks) != len(shape) or \
            any(isinstance(c, (tuple, list)) for c in chunks) or any(s != s for s in shape):
        return None
    chunks = tuple(s if c is None or c == -1 else c for c, s in zip(chunks, shape))
    for c in chunks:
        if isinstance(c, str) and c != "auto":
            limit = parse_bytes(c)
    chunks = tuple("auto" if isinstance(c, str) else c for c in chunks)
    if "auto" in chunks:
        chunks = _auto_chunks(chunks, shape, limit, dtype, None)
    return [len(c) if isinstance(c, (tuple, list)) else -(-int(s) // int(c)) if c else 1
            for s, c in zip(shape, chunks)]


def cull(dsk, keys):
    """`dsk` reduced to the tasks `keys` need."""
    return _cull(dsk, list(keys))[0]


def count_tasks(dsk):
    """The entries of a graph a scheduler runs as tasks (data entries, e.g. a placeholder filled
    at run time, are not tasks)."""
    return sum(1 for v in dsk.values()
               if istask(v) or (isinstance(v, GraphNode) and not isinstance(v, DataNode)))


def downstream(dsk, key):
    """The keys of `dsk` that depend on `key`, nearest first (breadth first); `key` itself first."""
    from dask.core import get_dependencies

    dependents = {}
    for k in dsk:
        for d in get_dependencies(dsk, k):
            dependents.setdefault(d, []).append(k)
    seen, queue = {key}, [key]
    while queue:
        k = queue.pop(0)
        yield k
        for d in dependents.get(k, ()):
            if d not in seen:
                seen.add(d)
                queue.append(d)


def key_name(key):
    """The name part of a task key (a dask array's name for its chunks' keys)."""
    return key[0] if isinstance(key, tuple) and key else key


def keyed_task_exceptions(fn, args, pack_with_key):
    """The arguments of a pool submission by dask's local schedulers, with each task's
    `pack_exception` replaced by `pack_with_key(key, pack_exception)`, so that a failing task's
    exception can say which key failed. dask.local's protocol (not public): `submit` receives
    `batch_execute_tasks` and a list of `(key, task, dumps, loads, get_id, pack_exception)`."""
    from dask.local import batch_execute_tasks

    if fn is batch_execute_tasks and len(args) == 1:
        return ([a[:-1] + (pack_with_key(a[0], a[-1]),) for a in args[0]],)
    return args


def synchronous_pool():
    """dask's in-thread executor (what `dask.local.get_sync` submits to)."""
    from dask.local import synchronous_executor

    return synchronous_executor


def task(key, fn, *args):
    """The task `fn(*args)` under `key` (args are plain values, not keys), as a task-spec node."""
    return Task(key, fn, *args)


def empty_slot(key):
    """A graph value for a key whose data a run sets later (a placeholder's chunk): a task-spec
    node, so the layers holding it do not push `culled_graph` to its all-keys path."""
    return DataNode(key, None)


def culled_graph(graphs, keys):
    """One dict graph of what `keys` need from the HighLevelGraphs `graphs`, culled layer by layer
    before anything is materialized: a Blockwise layer builds only the blocks asked for, so a
    slice of a huge lazy array costs the chunks it touches, not the array's (a dict of the merged
    graph would build every task first). A layer of legacy tuple tasks makes dask list every key
    of the graph once (not their tasks); dflow's own layers are task-spec nodes."""
    hlg = HighLevelGraph.merge(*graphs)
    return dict(hlg.cull(set(flatten(keys))).to_dict())  # (dict(hlg) looks each key up layer by layer)


# ---- dask.distributed: committed values held by the cluster without their lineage ---------------
# A future whose result is in memory keeps every task it was computed from on the scheduler (as
# "released" tasks), so that a lost result can be recomputed. For a variable's committed value
# that is wrong twice over: the history grows with every run, and a recomputation would read its
# inputs again (a Zarr file changed since) and give a different value. The session cuts it: the
# scheduler forgets the value's dependencies, as it does for any dependency it forgets
# (`has_lost_dependencies`), so the value is held as data and a lost one is reported lost
# ("lost-data", the futures cancelled), never recomputed.

_CUT_OP = "dflow-cut-lineage"


def install_lineage_cut(client):
    """Adds the lineage cut to `client`'s scheduler (one call, when a session starts). False when
    the scheduler cannot take it (one that cannot import dflow)."""
    try:
        return bool(client.run_on_scheduler(_install_cut))
    except Exception:  # noqa: BLE001 - an old or foreign scheduler: the caller falls back
        return False


def _install_cut(dask_scheduler):
    import functools

    dask_scheduler.stream_handlers[_CUT_OP] = functools.partial(_cut_lineage, dask_scheduler)
    return True


def cut_lineage(client, keys):
    """Asks the scheduler (a one-way message on the client's stream, no round trip) to forget the
    tasks the in-memory `keys` were computed from. Messages on the stream keep their order, so a
    graph submitted later already sees the cut."""
    if keys:
        client._send_to_scheduler({"op": _CUT_OP, "keys": list(keys)})


def _cut_lineage(scheduler, keys=(), client=None, **_):
    recommendations = {}
    for key in keys:
        ts = scheduler.tasks.get(key)
        if ts is None or ts.state != "memory":
            continue
        for dts in ts.dependencies:
            dts.dependents.discard(ts)
            if dts.waiters:
                dts.waiters.discard(ts)
            if not dts.dependents and not dts.who_wants and dts.state in ("released", "memory"):
                recommendations[dts.key] = "forgotten"
        ts.dependencies.clear()
        ts.has_lost_dependencies = True  # lost with its workers: forgotten, never recomputed
    if recommendations:
        scheduler.transitions(recommendations, stimulus_id=f"{_CUT_OP}-{id(recommendations)}")


def future_lost(future):
    """Whether a distributed future's value is gone (its workers died, or it was cancelled)."""
    return future.status in ("lost", "cancelled", "error") or future.cancelled()
