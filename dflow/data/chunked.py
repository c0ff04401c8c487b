"""Chunked sources: rows of aligned arrays (Zarr arrays or dask arrays with the same first
dimension, such as X and y) read one block of rows at a time, never whole.

Blocks are the first array's row chunks. A local Zarr array whose chunks span whole rows is read
with dflow's chunk reader (storage/chunks.py: the chunk file streamed into the block's buffer);
other Zarr arrays through zarr-python, dask arrays by computing the block's slice. The next
`read_ahead` blocks (default 2) are read on background threads, one each up to the number of
cores, while the current one is consumed: decompressing is most of an epoch's work
(benchmarks/bench_data.py), and one thread alone falls behind the shuffle and the steps. A shuffle
over the source (`with_shuffled_blocks`) reads the blocks in a random order, each once an epoch.
Memory: the blocks in flight (1 + read_ahead) plus what downstream buffers hold; each row is
copied out of its block, so a row held in a shuffle buffer never pins the whole block.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import InvalidArgumentError, NotFoundError
from ..graph.dtypes import as_dtype
from ..graph.shape import TensorShape
from ..storage.chunks import chunk_io
from .cores import busy_thread, cpu_count
from .node import Node, rng
from .structure import ElementSpec


def open_arrays(arrays):
    """Paths become read-only zarr arrays; dask arrays and zarr arrays pass."""
    import zarr

    out = []
    for a in arrays:
        if isinstance(a, (str, bytes)) or hasattr(a, "__fspath__"):
            try:
                a = zarr.open_array(a, mode="r")
            except (FileNotFoundError, ValueError, KeyError) as e:
                raise NotFoundError(None, None, f"from_zarr: cannot open the Zarr array {a!r}: {e}") from None
        out.append(a)
    return out


class _Reader:
    """Reads rows [a, b) of one array."""

    def __init__(self, array):
        self.array = array
        self.is_dask = type(array).__module__.startswith("dask")
        self.cio = None if self.is_dask else chunk_io(array)
        if self.cio is not None and tuple(self.cio.chunks[1:]) != tuple(self.cio.shape[1:]):
            self.cio = None  # chunks cut rows: zarr-python assembles them
        self.row_chunk = self.cio.chunks[0] if self.cio is not None else None

    def read(self, a, b):
        if self.cio is not None and a % self.row_chunk == 0 and (b - a == self.row_chunk or b == self.cio.shape[0]):
            return self.cio.read((a // self.row_chunk,) + (0,) * (len(self.cio.shape) - 1))
        if self.is_dask:
            return np.asarray(self.array[a:b].compute(scheduler="sync"))
        return np.asarray(self.array[a:b])


def row_blocks(array):
    """[(start, stop)] of the array's row chunks."""
    n = int(array.shape[0])
    if type(array).__module__.startswith("dask"):
        sizes = array.chunks[0]
    else:
        c = int(array.chunks[0]) if array.chunks else max(n, 1)
        sizes = [min(c, n - i) for i in range(0, n, c)]
    out, a = [], 0
    for s in sizes:
        out.append((a, a + int(s)))
        a += int(s)
    return out


class ChunkedNode(Node):
    """Rows of aligned arrays; `seeds`/`reshuffle`: read blocks in a random order (a shuffle)."""

    row_blocks = True

    def __init__(self, arrays, template, read_ahead=2, seeds=None, reshuffle=True):
        self.arrays = list(arrays)
        if not self.arrays:
            raise ValueError("from_zarr/from_dask: no arrays given")
        rows = {int(a.shape[0]) if a.ndim else None for a in self.arrays}
        if None in rows:
            raise ValueError("from_zarr/from_dask: arrays must have rank >= 1")
        if len(rows) > 1:
            raise ValueError(f"from_zarr/from_dask: the arrays have different numbers of rows {sorted(rows)}")
        if any(type(a).__module__.startswith("dask") and any(c != c for c in a.chunks[0]) for a in self.arrays):
            raise ValueError("from_dask: the arrays' chunk sizes are unknown; call compute_chunk_sizes() first")
        self.template = template
        self.read_ahead = int(read_ahead)
        self.seeds, self.reshuffle = seeds, reshuffle
        self.blocks = row_blocks(self.arrays[0])
        self.readers = [_Reader(a) for a in self.arrays]
        super().__init__(ElementSpec(template, [as_dtype(np.dtype(a.dtype)) for a in self.arrays],
                                     [TensorShape([int(d) for d in a.shape[1:]]) for a in self.arrays]))

    def cardinality(self):
        return int(self.arrays[0].shape[0])

    def held_bytes(self):
        rows = max(b - a for a, b in self.blocks) if self.blocks else 0
        row = sum(int(np.prod(a.shape[1:], dtype=np.int64)) * np.dtype(a.dtype).itemsize for a in self.arrays)
        return (1 + max(0, self.read_ahead)) * rows * row

    def describe_buffer(self):
        return f"{1 + max(0, self.read_ahead)} blocks of rows read"

    def with_shuffled_blocks(self, seeds, reshuffle):
        return ChunkedNode(self.arrays, self.template, self.read_ahead, seeds, reshuffle)

    def block_order(self, ctx):
        order = np.arange(len(self.blocks))
        if self.seeds is None:
            return order
        k = ctx.start(self) if self.reshuffle else 0
        r = rng(ctx.seed, k) if self.seeds == (None, None) else rng(self.seeds[0], self.seeds[1], k, 1)
        return r.permutation(order)

    def read_block(self, i):
        a, b = self.blocks[i]
        out = []
        for r in self.readers:
            try:
                out.append(r.read(a, b))
            except Exception as e:  # noqa: BLE001 - a storage failure names the block
                raise InvalidArgumentError(None, None, f"from_zarr: reading rows [{a}, {b}) failed: "
                                           f"{type(e).__name__}: {e}") from e
        return out

    def iter_blocks(self, ctx):
        """The blocks as lists of arrays, in this epoch's order, read ahead on a thread."""
        order = list(self.block_order(ctx))
        if self.read_ahead < 1:
            for i in order:
                yield tuple(self.read_block(i))
            return
        threads = max(1, min(self.read_ahead, cpu_count()))  # blocks decompress side by side
        with ThreadPoolExecutor(threads, thread_name_prefix="dflow-data-read") as pool, busy_thread(threads):
            pending = [pool.submit(self.read_block, i) for i in order[:self.read_ahead]]
            nxt = self.read_ahead
            try:
                while pending:
                    block = pending.pop(0).result()
                    if nxt < len(order):
                        pending.append(pool.submit(self.read_block, order[nxt]))
                        nxt += 1
                    yield tuple(block)
            finally:
                for f in pending:
                    f.cancel()

    def iterate_blocks(self, ctx):
        return self.iter_blocks(ctx)

    def iterate(self, ctx):
        for block in self.iter_blocks(ctx):
            for j in range(block[0].shape[0]):
                yield tuple(c[j].copy() for c in block)
