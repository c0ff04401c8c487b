"""Values kept between runs outside the session's memory: on a cluster as per-chunk futures
(`RemoteValue`), or on local disk as a raw Zarr array (`StoredValue`)."""

from __future__ import annotations

import itertools

import numpy as np

from ..dask_compat import flatten, future_lost, gather_blocks
from .chunks import create_local, dask_chunks

# variables up to this size also keep a host copy of their committed value (gathered in the run
# that computed it, with its fetches): a worker loss then costs a re-ship, not the value
HOST_COPY_BYTES = 16 << 20


class Part:
    """Block `index` of the tuple a small plan's one task returns (`future`: that task's result).
    The variables a small plan commits share the run's one result instead of one task each."""

    __slots__ = ("future", "index")

    def __init__(self, future, index):
        self.future = future
        self.index = index


class RemoteValue:
    """A value kept on a distributed cluster between runs (a variable): one future per chunk (or a
    `Part` of a small plan's one result), each held as data (the scheduler forgot how it was
    computed: `dask_compat.cut_lineage`), and, for values up to HOST_COPY_BYTES, a read-only host
    copy (`host`) to recover it from when the cluster loses it."""

    def __init__(self, client, futures, chunks, dtype, host=None):
        self.client = client
        self.futures = futures
        self.chunks = chunks
        self.dtype = dtype
        self.host = host

    @property
    def shape(self):
        return tuple(int(sum(c)) for c in self.chunks)

    @staticmethod
    def keeps_copy(shape, dtype):
        """Whether a value of this shape and dtype keeps a host copy."""
        return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype or np.float64).itemsize <= HOST_COPY_BYTES

    def blocks(self):
        """The chunks' futures or Parts, in block order."""
        return list(flatten(self.futures if isinstance(self.futures, list) else [self.futures]))

    def held(self):
        """The distinct futures holding this value."""
        return list({id(f): f for f in (b.future if isinstance(b, Part) else b for b in self.blocks())}.values())

    def keys(self):
        return [f.key for f in self.held()]

    def available(self):
        """Whether every chunk is still held by the cluster (the client's own view: no message)."""
        return not any(future_lost(f) for f in self.held())

    def to_host(self):
        """The value as a numpy array: the host copy, or gathered. Raises distributed's
        CancelledError when the cluster lost it and there is no copy."""
        if self.host is not None:
            return self.host
        blocks = self.blocks()
        if any(isinstance(b, Part) for b in blocks):
            held = self.held()
            got = dict(zip((id(f) for f in held), self.client.gather(held)))
            parts = iter([got[id(b.future)][b.index] if isinstance(b, Part) else got[id(b)] for b in blocks])
            return gather_blocks(_renest(self.futures, parts))
        return gather_blocks(self.client.gather(self.futures))

    def release(self):
        """Lets the cluster drop the value now (not when the futures are garbage collected)."""
        for f in self.held():
            f.release()

    @classmethod
    def scatter(cls, client, value, chunks):
        """Ships `value` to the cluster once, cut into `chunks` (data without lineage)."""
        host = value if cls.keeps_copy(value.shape, value.dtype) else None
        if host is not None and host.flags.writeable:
            host = host.copy()
            host.setflags(write=False)
        if not chunks:
            return cls(client, client.scatter(value), chunks, value.dtype, host)
        futs = client.scatter([np.ascontiguousarray(value[s]) for s in block_slices(chunks)])
        return cls(client, nest(futs, [len(c) for c in chunks]), chunks, value.dtype, host)


class StoredValue:
    """A variable's value held on local disk between runs: a Zarr array of raw (uncompressed) row
    chunks in the session's scratch directory, so a variable larger than memory is never resident.
    Runs read its chunks as tasks and write a new value into a new array; the session deletes the
    old array once the new value is committed."""

    def __init__(self, path, shape, dtype, chunk_shape):
        self.path = path
        self.dtype = np.dtype(dtype)
        self.chunks = dask_chunks(tuple(shape), tuple(chunk_shape))
        self.cio = create_local(path, shape, dtype, chunk_shape, compressed=False)

    @property
    def shape(self):
        return self.cio.shape

    def pieces(self, name):
        """Read tasks for the placeholder keys `name` (chunks equal to this value's)."""
        return {(name,) + idx: (self.cio.read, list(idx)) for idx in block_indices(self.chunks)}

    def write_tasks(self, keys):
        """{new key: task writing the computed block `key` into this value}, for each block key."""
        return {("dflow-store", self.path) + tuple(k[1:]): (self.cio.write, list(k[1:]), k)
                for k in flatten(keys)}

    def to_host(self):
        out = np.empty(self.shape, dtype=self.dtype)
        for idx, slc in zip(block_indices(self.chunks), block_slices(self.chunks)):
            target = out[slc]
            if target.flags.c_contiguous:
                self.cio.read(idx, out=target)
            else:
                target[...] = self.cio.read(idx)
        return out

    def discard(self):
        """Deletes this value's own array (made by `__init__` under the session's
        dflow-variables-* directory, schedule/store.py), nothing else."""
        import shutil

        shutil.rmtree(self.path, ignore_errors=True)


def _renest(structure, it):
    if isinstance(structure, list):
        return [_renest(x, it) for x in structure]
    return next(it)


def nest(flat, counts):
    if not counts:
        return flat[0]
    step = int(np.prod(counts[1:], dtype=np.int64)) if len(counts) > 1 else 1
    return [nest(flat[i * step:(i + 1) * step], counts[1:]) for i in range(counts[0])]


def block_indices(chunks):
    return list(itertools.product(*[range(len(c)) for c in chunks]))


def block_slices(chunks):
    bounds = []
    for c in chunks:
        starts = np.concatenate([[0], np.cumsum(c)]).astype(int)
        bounds.append([slice(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:])])
    return list(itertools.product(*bounds))
