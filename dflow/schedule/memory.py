"""Projected memory of a plan, from static shapes and chunks, before anything runs (as Cubed's
`calculate_projected_mem`).

A task's projection is the bytes it holds at once:

    task = sum(largest chunk of each dask input) + largest output chunk + scratch

with scratch = one more output chunk (a kernel builds its result while its inputs are alive; a
fused chain frees each intermediate after its last use, so two are alive at a time). The plan's
projected peak is `workers × largest task` (tasks running at once) plus the small results that
stages hand on. Chunks of unknown size (data-dependent shapes) are left out of the projection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


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


@dataclass
class MemoryReport:
    tasks: list = field(default_factory=list)
    stage_results: int = 0  # bytes of small results handed between stages
    workers: int = 1

    @property
    def largest(self):
        return max(self.tasks, key=lambda t: t.total, default=None)

    @property
    def peak(self):
        big = self.largest
        return (big.total if big else 0) * self.workers + self.stage_results

    def add(self, op_name, op_type, inputs, outputs, stage=0, fused=False, scratch_chunks=None):
        """Records one op's task from its dask inputs and outputs (skipped if sizes are unknown).

        `scratch_chunks`: output-chunk-sized buffers the kernel holds besides its output (default 1;
        a lowering that knows better says so with `LowerContext.set_scratch`)."""
        ins = [max_chunk_bytes(a) for a in inputs]
        outs = [max_chunk_bytes(a) for a in outputs]
        if any(b is None for b in ins + outs) or not outs:
            return
        out = sum(outs)
        scratch = out * (1 if scratch_chunks is None else scratch_chunks)
        self.tasks.append(TaskProjection(op_name, op_type, sum(ins), out, scratch, None if fused else stage))


def suggest_chunks(task, budget):
    """A sentence proposing a chunking whose tasks fit `budget`."""
    factor = max(2, math.ceil(task.total / max(1, budget)))
    return (f"use chunks about {factor}× smaller along the largest axis (Session(chunks=...), "
            f"placeholder(chunks=...), or re-chunk the Zarr array)")


def format_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
