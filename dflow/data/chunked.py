"""Chunked sources: rows of aligned arrays (Zarr arrays or dask arrays with the same first
dimension, such as X and y) read one block of rows at a time, never whole.

Blocks are the first array's row chunks, handed on as slabs of ~8 MiB of rows. A local Zarr
array whose chunks span whole rows is read with dflow's chunk reader (storage/chunks.py: the
chunk file decoded slab by slab as the slabs are asked for); other Zarr arrays through
zarr-python, dask arrays by computing the block's slice, then sliced. `read_ahead` blocks
(default 2) are read at once, each by its own thread streaming slabs into a small queue:
decompressing is most of an epoch's work (benchmarks/bench_data.py), and one thread alone falls
behind the shuffle and the steps. A shuffle over the source (`with_shuffled_blocks`) reads the
blocks in a random order, each once an epoch, and takes the running blocks' slabs in turn.
Memory: a few slabs per reading thread (never a whole chunk from dflow's reader) plus what
downstream buffers hold; each row is copied out of its slab by a shuffle, so a row held in its
buffer never pins a slab.
"""

from __future__ import annotations

import queue
import threading

import numpy as np

from ..errors import InvalidArgumentError, NotFoundError, OpError
from ..graph.dtypes import as_dtype
from ..graph.shape import TensorShape
from ..kernels.cores import busy_thread
from ..storage.chunks import chunk_io, layout_guard
from ..storage.files import damaged_zarr_metadata
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
                damaged = damaged_zarr_metadata(a)
                if damaged is not None:
                    raise damaged from None
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
        # read by zarr-python: checked before each read (an array deleted or replaced meanwhile)
        self.guard = layout_guard(array) if self.cio is None and not self.is_dask else None

    def read(self, a, b):
        if self.cio is not None and a % self.row_chunk == 0 and (b - a == self.row_chunk or b == self.cio.shape[0]):
            return self.cio.read((a // self.row_chunk,) + (0,) * (len(self.cio.shape) - 1))
        if self.is_dask:
            return np.asarray(self.array[a:b].compute(scheduler="sync"))
        if self.guard is not None:
            self.guard.check()
        return np.asarray(self.array[a:b])

    def slabs(self, a, b, rows):
        """Rows [a, b) as consecutive arrays of up to `rows` rows: a whole chunk read by dflow's
        chunk reader is decoded slab by slab, anything else read whole and sliced."""
        if self.cio is not None and a % self.row_chunk == 0 and (b - a == self.row_chunk or b == self.cio.shape[0]):
            yield from self.cio.read_slabs((a // self.row_chunk,) + (0,) * (len(self.cio.shape) - 1), rows)
            return
        block = self.read(a, b)
        for j in range(0, b - a, rows):
            yield block[j:j + rows]


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


_SLAB_BYTES = 8 << 20  # bytes of rows (all arrays) handed on at a time
_QUEUED = 3  # slabs a reading thread may be ahead of the consumer


class _Lane:
    """A thread reading its blocks one after the other, slab by slab, into a bounded queue."""

    def __init__(self, node, blocks):
        self.q = queue.Queue(maxsize=_QUEUED)
        self.stop = threading.Event()
        threading.Thread(target=self._run, args=(node, blocks), name="dflow-data-read", daemon=True).start()

    def _put(self, item):
        while not self.stop.is_set():
            try:
                self.q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, node, blocks):
        try:
            for i in blocks:
                slabs = node.read_block(i)
                try:
                    for slab in slabs:
                        if not self._put((0, slab)):
                            return
                finally:
                    slabs.close()
                if not self._put((1, None)):  # the end of a block
                    return
            self._put((2, None))
        except BaseException as ex:  # noqa: BLE001 - handed to the consumer, raised there
            self._put((3, ex))

    def _get(self):
        kind, v = self.q.get()
        if kind == 3:
            raise v
        return kind, v

    def block(self):
        """The slabs of this lane's next block."""
        while True:
            kind, v = self._get()
            if kind != 0:
                return
            yield v

    def next_slab(self):
        """The next slab, across this lane's blocks; None at the end of its last block."""
        while True:
            kind, v = self._get()
            if kind == 0:
                return v
            if kind == 2:
                return None


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

    def slab_rows(self):
        """Rows handed on at a time: about _SLAB_BYTES of all the arrays' rows, at most a block."""
        longest = max((b - a for a, b in self.blocks), default=1)
        return max(1, min(longest, _SLAB_BYTES // max(1, self.row_bytes())))

    def row_bytes(self):
        return sum(int(np.prod(a.shape[1:], dtype=np.int64)) * np.dtype(a.dtype).itemsize for a in self.arrays)

    def held_bytes(self):
        slab = self.slab_rows() * self.row_bytes()
        whole = 0 if all(r.cio is not None for r in self.readers) else \
            max((b - a for a, b in self.blocks), default=0) * self.row_bytes()  # read whole, then sliced
        return max(1, self.read_ahead) * ((_QUEUED + 2) * slab + whole)

    def describe_buffer(self):
        return f"{max(1, self.read_ahead)} blocks read side by side, {_QUEUED} slabs of {self.slab_rows()} rows queued each"

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
        """Block `i` as consecutive slabs of rows (tuples, one array per source array)."""
        a, b = self.blocks[i]
        rows = self.slab_rows()
        its = [r.slabs(a, b, rows) for r in self.readers]
        try:
            while True:
                try:
                    slab = tuple([next(it) for it in its])  # a list: StopIteration ends the block
                except StopIteration:
                    return
                except Exception as e:  # noqa: BLE001 - a storage failure names the block
                    # a dflow error (the array gone or replaced, a damaged chunk) keeps its class
                    cls = type(e) if isinstance(e, OpError) else InvalidArgumentError
                    raise cls(None, None, f"from_zarr: reading rows [{a}, {b}) failed: "
                              f"{type(e).__name__}: {e}") from e
                yield slab
        finally:
            for it in its:
                it.close()

    def iter_blocks(self, ctx):
        """This epoch's rows as slabs (tuples of arrays), `read_ahead` blocks read at once, each by
        its own thread (a lane: blocks order[l::k]) streaming slabs into a small queue. In order,
        the blocks come out whole one after the other; shuffled, the lanes' slabs come out in turn
        (a slab of each running block, then the next of each), a fixed order whatever the threads'
        timing, so that every thread decodes all the time and rows of k chunks mix."""
        order = [int(i) for i in self.block_order(ctx)]
        if self.read_ahead < 1:
            for i in order:
                yield from self.read_block(i)
            return
        ways = max(1, min(self.read_ahead, len(order)))
        lanes = [_Lane(self, order[k::ways]) for k in range(ways)]
        try:
            with busy_thread(ways):
                if self.seeds is None:
                    for k in range(len(order)):
                        yield from lanes[k % ways].block()
                    return
                live = list(lanes)
                while live:
                    for lane in list(live):
                        slab = lane.next_slab()
                        if slab is None:
                            live.remove(lane)
                        else:
                            yield slab
        finally:
            for lane in lanes:
                lane.stop.set()

    def iterate_blocks(self, ctx):
        return self.iter_blocks(ctx)

    def iterate(self, ctx):
        for block in self.iter_blocks(ctx):
            for j in range(block[0].shape[0]):
                yield tuple(c[j].copy() for c in block)
