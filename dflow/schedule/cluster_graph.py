"""How a plan's task graph is reshaped before it goes to a distributed cluster: where its source
chunks are read.

A source task (no dependencies: a Zarr chunk read, a random draw) read by several tasks costs on a
cluster what it does not cost in one process: its chunk is held on a worker between its readers
(on workers with small memory limits, chunks read ahead and held that way pause them), or moved
to another worker when a reader runs there. Two rewrites, in this order:

1. `chunk_regions`: a source read by several tasks runs with its readers and the tasks between
   them (a chunk's forward pass, its gradient, the partials of both; the column sums and moments
   of one chunk) in one task, so the chunk is read once, never held between tasks and never moved.
   What the region computes for tasks outside it comes out as a tuple, taken apart by one small
   task per value (a region with one such value simply keeps its key). A region is the tasks on
   paths from the source to its readers, regions that share a task merged, plus the tasks all of
   whose inputs lie in it; it is made only where it is convex (no path leaves it and comes back,
   which would be a cycle) and at most REGION_TASKS tasks. This is the task a hand-written
   `map_blocks` over the chunk would be.
2. `sources_inlined`: a source read by one task (many, after step 1) runs inside it; on workers
   whose memory limit holds fewer than REREAD_TASKS of the plan's largest task, a source still read
   by up to SOURCE_READERS tasks (no region could be made) is read again by each, so a worker
   never holds it between tasks (never a task with effects: a py_func's). Then a task that became
   a source (a transposed chunk) goes into its one reader.

Nothing here changes what a run computes, only which task computes it.
"""

from __future__ import annotations

import operator

from ..dask_compat import GraphNode, Task, TaskRef

# on workers with little memory (a limit under REREAD_TASKS of the plan's largest task), a source
# task read by up to SOURCE_READERS tasks is read again by each of them instead of being held
SOURCE_READERS = 2
REREAD_TASKS = 8
# the most tasks fused into one region, and the most tasks a search for one may visit
REGION_TASKS = 64
_SEARCH = 4 * REGION_TASKS


# ---- 1. a chunk's readers in one task ----------------------------------------------------------------
def chunk_regions(graph, outputs, max_tasks=REGION_TASKS):
    """The graph with each source chunk and the tasks that compute from it alone fused into one
    task (see the module doc)."""
    deps = {k: [d for d in node.dependencies if d in graph] for k, node in graph.items()}
    readers = {}
    for k, ds in deps.items():
        for d in ds:
            readers.setdefault(d, []).append(k)
    order = _topological_order(deps, readers)
    regions = _Regions(max_tasks)
    for k in sorted(graph, key=order.__getitem__):
        if _broadcast(readers.get(k, ())):
            continue  # read by several blocks of one array (a constant every chunk reads): an input of each
        if not deps[k] or all(_broadcast(readers.get(d, ())) for d in deps[k]):
            # a source, or a block made from values every block reads (a tile of a small feed):
            # its readers join it, so its chunk is not sent back to the client between them
            if isinstance(graph[k], Task) and k in readers:
                regions.seed(k)
        else:
            regions.join(k, deps[k])
    regions.take_inputs(deps, readers, order)
    out = dict(graph)
    for region in regions.all():
        if len(region) > 1 and _convex(region, readers, order):
            _fuse_region(out, graph, region, deps, readers, outputs, order)
    return out


def _broadcast(readers):
    """Whether a value is read by two blocks of one array (their keys share a name)."""
    names = [_array_name(r) for r in readers]
    return len(set(names)) < len(names)


class _Regions:
    """Regions grown in topological order: a task joins the region its inputs come from, or the
    merge of several (one chunk of X and the same chunk of y), never a region holding two blocks
    of one array (a reduction over chunks stays outside, parallel)."""

    def __init__(self, max_tasks):
        self.max_tasks = max_tasks
        self.of = {}  # task -> region id
        self.members = {}  # region id -> set of tasks
        self.arrays = {}  # region id -> the names of its tasks (each array's block at most once)

    def seed(self, key):
        self.of[key] = key
        self.members[key] = {key}
        self.arrays[key] = {_array_name(key)}

    def join(self, key, deps):
        ids = {self.of[d] for d in deps if d in self.of}
        if not ids:
            return
        size = 1 + sum(len(self.members[i]) for i in ids)
        arrays = [self.arrays[i] for i in ids] + [{_array_name(key)}]
        if size > self.max_tasks or sum(map(len, arrays)) != len(set().union(*arrays)):
            return  # too large, or two blocks of one array: stays outside
        keep = max(ids, key=lambda i: len(self.members[i]))
        for i in ids - {keep}:
            moved = self.members.pop(i)
            for k in moved:
                self.of[k] = keep
            self.members[keep] |= moved
            self.arrays[keep] |= self.arrays.pop(i)
        self.of[key] = keep
        self.members[keep].add(key)
        self.arrays[keep].add(_array_name(key))

    def take_inputs(self, deps, readers, order):
        """A task outside every region whose inputs come from outside every region and whose
        readers all lie in one region joins it (a per-chunk factor computed from a constant)."""
        for k in sorted(deps, key=order.__getitem__, reverse=True):
            if k in self.of or not deps[k] or any(d in self.of for d in deps[k]):
                continue
            ids = {self.of.get(r) for r in readers.get(k, ())}
            if len(ids) == 1 and None not in ids:
                (i,) = ids
                if len(self.members[i]) < self.max_tasks and _array_name(k) not in self.arrays[i]:
                    self.of[k] = i
                    self.members[i].add(k)
                    self.arrays[i].add(_array_name(k))

    def all(self):
        return list(self.members.values())


def _array_name(key):
    return key[0] if isinstance(key, tuple) else key


def _topological_order(deps, readers):
    """Each task's place in one topological order (Kahn's)."""
    waiting = {k: len(ds) for k, ds in deps.items()}
    ready = [k for k, n in waiting.items() if not n]
    order = {}
    while ready:
        k = ready.pop()
        order[k] = len(order)
        for r in readers.get(k, ()):
            waiting[r] -= 1
            if not waiting[r]:
                ready.append(r)
    return order


def _convex(region, readers, order):
    """Whether no path leaves the region and comes back into it (fusing it would make a cycle).
    A path back ends at a task later than where it left, so the search stops past the region's
    last task; a search longer than _SEARCH tasks answers no."""
    last = max(order[k] for k in region)
    seen, stack = set(), [r for k in region for r in readers.get(k, ()) if r not in region]
    while stack:
        k = stack.pop()
        if k in seen or order[k] > last:
            continue
        seen.add(k)
        if len(seen) > _SEARCH:
            return False
        for r in readers.get(k, ()):
            if r in region:
                return False
            stack.append(r)
    return True


def _fuse_region(out, graph, region, deps, readers, outputs, order):
    """Replaces the region's tasks in `out` by one task and, for each value used outside it, a
    task taking that value out of the region's tuple."""
    tasks = sorted(region, key=order.__getitem__)
    used = [k for k in tasks if k in outputs or any(r not in region for r in readers.get(k, ()))]
    if not used:
        return
    for k in tasks:
        del out[k]
    nodes = [graph[k] for k in tasks]
    if len(used) == 1:
        (key,) = used
        out[key] = GraphNode.fuse(*nodes, key=key)
        return
    first = tasks[0]
    key = ("dflow-region-" + str(first[0]),) + first[1:] if isinstance(first, tuple) else f"dflow-region-{first}"
    values = Task(key, _values, *[TaskRef(k) for k in used])
    out[key] = GraphNode.fuse(*nodes, values, key=key)
    for i, k in enumerate(used):
        out[k] = Task(k, operator.getitem, TaskRef(key), i)


def _values(*values):
    return values


# ---- 2. sources read inside their readers ------------------------------------------------------------
def sources_inlined(graph, outputs, max_readers=SOURCE_READERS):
    """The graph with each source task (a task without dependencies: a chunk read, a random draw;
    not a value shipped in the graph) run inside the tasks reading it when there are at most
    `max_readers` of them (one, for a task whose function has effects): a worker then never holds
    a source chunk between tasks, waiting for its readers. A source read by two tasks is then read
    twice, as stages re-read their large inputs. Then, repeatedly, a task that became a source (a
    transpose of a read chunk) goes into its one reader when that reader has no other source to
    take in (a reduction of many chunks stays parallel)."""
    graph = _inline_pass(graph, outputs, max_readers, any_sources=True)
    while True:
        new = _inline_pass(graph, outputs, 1, any_sources=False)
        if new is graph:
            return graph
        graph = new


def _inline_pass(graph, outputs, max_readers, any_sources):
    readers = {}
    for key, node in graph.items():
        for dep in node.dependencies:
            readers.setdefault(dep, []).append(key)
    inline = {k for k, node in graph.items()
              if isinstance(node, Task) and not node.dependencies and k not in outputs
              and 0 < len(readers.get(k, ())) <= (max_readers if _rereadable(node) else 1)}
    out, changed = {}, False
    for key, node in graph.items():
        sources = [graph[d] for d in node.dependencies if d in inline]
        if not any_sources and len(sources) > 1:
            sources = []
        if key in inline and (any_sources or _taken(key, graph, readers, inline)):
            continue
        if sources:
            out[key] = GraphNode.fuse(*sources, node, key=key)
            changed = True
        else:
            out[key] = node
    return out if changed else graph


def _rereadable(task):
    """Whether a source task may run once per reader: not a function with effects (a py_func's
    task says so with `rereadable = False`)."""
    return getattr(task.func, "rereadable", True)


def _taken(key, graph, readers, inline):
    """Whether the single-source pass folds source `key` into its reader."""
    (reader,) = readers[key]
    return sum(d in inline for d in graph[reader].dependencies) == 1
