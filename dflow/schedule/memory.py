"""Projected memory of a plan, from static shapes and chunks, before anything runs (as Cubed's
`calculate_projected_mem`).

A task's projection is the bytes it holds at once:

    task = sum(largest chunk of each dask input) + largest output chunk + scratch

with scratch = one more output chunk (a kernel builds its result while its inputs are alive; a
fused chain frees each intermediate after its last use, so two are alive at a time). The plan's
projected peak is `workers × (largest task + worker cost)` (tasks running at once) plus the small
results that stages hand on. Chunks of unknown size (data-dependent shapes) are left out of the
projection. The worker cost is nothing for threads; on the processes scheduler each worker is an
interpreter of its own (WORKER_PROCESS_BYTES: python, numpy, dask and dflow imported, measured
~105 MiB) and pickles its task's result back (one more output chunk), so a budget caps the
processes a run uses, and refuses the plan when not one fits (the budget is the growth of this
process and its workers together).

What cannot exist is refused before anything runs or is allocated (the limits, and why):

- a shape of more than 2**63 - 1 elements: TensorFlow counts elements in an int64, and TF1 fails
  such a Fill/Tile/Reshape when it runs (InvalidArgumentError "Shape [...] would have more than
  2**63 - 1 elements"). Here the compiler refuses it with that error, naming the op, from static
  shapes before lowering and from run-time shapes before dask sizes chunks for it (dask's chunk
  tuples of such a shape alone would fill the memory). Placeholders and variables, whose shapes
  are attrs, are refused when built (ValueError, as TF1).
- a tensor this process must hold whole (a fetched value, a variable's new value kept in memory)
  larger than `memory_budget`, or without one than half this machine's physical memory (its
  chunks and the assembled value are alive at once): it could never be allocated (TF1's
  ResourceExhaustedError "OOM when allocating tensor with shape[...]").
  Lazy values are not refused for their size: a slice of a huge `zeros` builds and reads only the
  chunks it touches.
- a task larger than the budget (`compiler._apply_budget`), or than the machine without one.
- a lazy value whose chunk grid has more than MAX_CHUNKS_PER_AXIS chunks along an axis: dask
  keeps one entry per chunk along each axis (and tokenizes them), ~1 s and ~150 MB per million,
  before a single chunk is touched (`zeros([10**12])` in chunks of 2). ResourceExhaustedError
  naming the op and asking for larger chunks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidArgumentError, ResourceExhaustedError
from ..graph.shape import too_many_elements


def _dims_text(shape):
    return ",".join(str(int(d)) for d in shape)


def check_elements(op, shape):
    """InvalidArgumentError naming `op` if `shape` (ints) has more than 2**63 - 1 elements, or is
    empty with its other dims multiplying past that (numpy and dask cannot represent such an
    array: it failed deep in a kernel with numpy's "array is too big")."""
    if too_many_elements(shape):
        raise InvalidArgumentError(None, op, f"{op.type} op {op.name!r}: Shape [{_dims_text(shape)}] would have "
                                   "more than 2**63 - 1 elements")
    if 0 in shape and too_many_elements([d for d in shape if d]):
        raise InvalidArgumentError(None, op, f"{op.type} op {op.name!r}: Shape [{_dims_text(shape)}] has no "
                                   "elements, but its other dimensions multiply to more than 2**63 - 1, which "
                                   "dflow's arrays (numpy, dask) cannot represent")


MAX_CHUNKS_PER_AXIS = 1 << 22  # ~4 s and ~600 MB of dask bookkeeping


def check_chunk_grid(op, shape, counts):
    """ResourceExhaustedError naming `op` if `counts` (chunks along each axis, or None) has an axis
    of more than MAX_CHUNKS_PER_AXIS chunks."""
    for axis, n in enumerate(counts or ()):
        if n > MAX_CHUNKS_PER_AXIS:
            raise ResourceExhaustedError(
                None, op, f"{op.type} op {op.name!r}: shape [{_dims_text(shape)}] makes {n} chunks along axis "
                f"{axis}, more than the {MAX_CHUNKS_PER_AXIS} a plan can track; use larger chunks "
                "(Session(chunks=...)) or a smaller shape")


def check_held(op, what, shape, dtype, budget, machine):
    """ResourceExhaustedError naming `op` if a value of `shape` and `dtype` that this process must
    hold whole (`what`: "fetched", "the new value of variable 'v'") exceeds `budget`, or without a
    budget half of `machine` (bytes; None: unknown): its chunks and the assembled value are alive
    at once."""
    limit = budget or (machine // 2 if machine else None)
    if not limit:
        return
    nbytes = math.prod(int(d) for d in shape) * np.dtype(dtype).itemsize
    if nbytes <= limit:
        return
    where = (f"over the memory budget of {format_bytes(budget)}" if budget else
             f"more than this machine's memory ({format_bytes(machine)}) can hold with its chunks")
    raise ResourceExhaustedError(
        None, op, f"OOM when allocating tensor with shape[{_dims_text(shape)}] and type {np.dtype(dtype).name}: "
        f"{op.type} op {op.name!r} ({what}) needs {format_bytes(nbytes)} held whole in this process, {where}. "
        "Fetch a slice or a reduction of it, or write it to Zarr (dflow.io.write_zarr).")


def max_chunk_bytes(arr):
    """Bytes of the largest chunk of a dask array (None if a chunk size is unknown)."""
    chunks = getattr(arr, "chunks", None)
    if chunks is None:
        return None
    n = 1
    for c in chunks:
        if not c:
            return 0
        m = max(c)
        if m != m:
            return None
        n *= int(m)
    return n * np.dtype(arr.dtype).itemsize


@dataclass
class TaskProjection:
    op: str  # op name (the root of a fused chain)
    op_type: str
    inputs: int  # bytes
    output: int
    scratch: int
    stage: int | None = 0  # None: a fused chain (its stage is not tracked)

    @property
    def total(self):
        return self.inputs + self.output + self.scratch


# What the scheduler keeps per task of a plan while it runs (the task graph, dask's state dicts,
# futures): one_hot over 20,000 classes under a 1 MB budget made 160,006 tasks and grew RSS by
# 434 MiB, ~2.8 KiB a task. A budget refuses a plan whose bookkeeping alone is over it and over
# GRAPH_SLACK_BYTES (the interpreter's own noise, within which small plans under tiny budgets run).
TASK_GRAPH_BYTES = 3 << 10
GRAPH_SLACK_BYTES = 64 << 20

# What one worker process of the processes scheduler holds before any task: a spawned interpreter
# with numpy, dask and dflow imported (ru_maxrss 105 MiB on CPython 3.11, numpy 2), rounded up.
WORKER_PROCESS_BYTES = 112 << 20


@dataclass
class MemoryReport:
    tasks: list = field(default_factory=list)
    stage_results: int = 0  # bytes of small results handed between stages
    workers: int = 1
    worker_bytes: int = 0  # what each worker costs besides its task (a process's interpreter)
    pickled: bool = False  # a task's result is pickled back to this process (one more output)
    graph_bytes: int = 0  # the scheduler's bookkeeping of the plan's tasks (TASK_GRAPH_BYTES each)

    @property
    def largest(self):
        return max(self.tasks, key=lambda t: t.total, default=None)

    @property
    def per_worker(self):
        """Bytes one worker holds at its largest task (its own cost included)."""
        big = self.largest
        if big is None:
            return 0
        return big.total + self.worker_bytes + (big.output if self.pickled else 0)

    @property
    def peak(self):
        return self.per_worker * self.workers + self.stage_results + self.graph_bytes

    def check_graph(self, n_tasks, budget):
        """Counts the bookkeeping of `n_tasks`; ResourceExhaustedError if it alone is over `budget`
        (and over GRAPH_SLACK_BYTES)."""
        self.graph_bytes = n_tasks * TASK_GRAPH_BYTES
        if budget and self.graph_bytes > max(budget, GRAPH_SLACK_BYTES):
            big = self.largest
            what = f"; its largest task is {big.op_type} op {big.op!r} ({format_bytes(big.total)})" if big else ""
            raise ResourceExhaustedError(
                None, None, f"The plan has {n_tasks} tasks, whose scheduling alone needs a projected "
                f"{format_bytes(self.graph_bytes)} (about {format_bytes(TASK_GRAPH_BYTES)} a task){what}: over the "
                f"memory budget of {format_bytes(budget)}. Chunks are sized to a 16th of the budget; a larger "
                "budget makes fewer, larger tasks.")

    def add(self, op_name, op_type, inputs, outputs, stage=0, fused=False, scratch_chunks=None):
        """Records one op's task from its dask inputs and outputs (skipped if sizes are unknown).

        `scratch_chunks`: output-chunk-sized buffers the kernel holds besides its output (default 1;
        a lowering that knows better says so with `LowerContext.set_scratch`)."""
        ins = [max_chunk_bytes(a) for a in inputs]
        outs = [max_chunk_bytes(a) for a in outputs]
        if any(b is None for b in ins + outs) or not outs:
            return
        out = sum(outs)
        scratch = int(out * (1 if scratch_chunks is None else scratch_chunks))
        self.tasks.append(TaskProjection(op_name, op_type, sum(ins), out, scratch, None if fused else stage))


def suggest_chunks(task, budget):
    """A sentence proposing a chunking whose tasks fit `budget`."""
    factor = max(2, math.ceil(task.total / max(1, budget)))
    return (f"use chunks about {factor}× smaller along the largest axis (Session(chunks=...), "
            f"placeholder(chunks=...), or re-chunk the Zarr array)")


def format_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if abs(n) < 1024 or unit == "EiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
