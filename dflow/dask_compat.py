"""The one place dflow touches dask's private or semi-private APIs.

Everything here is a thin alias or wrapper, so that a dask upgrade that moves one of them breaks a
single module. dflow imports dask's public API (`dask.array`, `dask.delayed`, `HighLevelGraph`,
`tokenize`, the local schedulers) directly; what is below is not covered by dask's stability
promises. This module imports nothing of dflow (it sits at the bottom, beside `errors`).
"""

from __future__ import annotations

from dask._task_spec import Alias, DataNode, GraphNode, Task, TaskRef, convert_legacy_graph  # noqa: F401 - re-exported
from dask.array.core import concatenate3, elemwise, finalize  # noqa: F401 - re-exported
from dask.array.core import normalize_chunks as _normalize_chunks
from dask.array.utils import meta_from_array  # noqa: F401 - re-exported
from dask.core import flatten  # noqa: F401 - re-exported
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


def cull(dsk, keys):
    """`dsk` reduced to the tasks `keys` need."""
    return _cull(dsk, list(keys))[0]


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
