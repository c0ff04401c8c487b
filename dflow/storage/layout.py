"""Which variables a session keeps on local disk between runs, and in what layout (one decision,
read by the lowering of a variable, the commit of its new value, `Variable.load` and `Saver`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .chunks import ROW_CHUNK_BYTES, dask_chunks, row_chunks


@dataclass(frozen=True)
class StoragePolicy:
    """`store_bytes`: variables at least this large live on disk (None: none do). Their Zarr
    chunks are rows of about 16 MiB, or a 16th of `memory_budget` if that is smaller."""

    store_bytes: int | None = None
    memory_budget: int | None = None

    @classmethod
    def for_budget(cls, memory_budget, local):
        """With a budget on a local scheduler, variables over a quarter of it are kept on disk."""
        store = max(1, memory_budget // 4) if memory_budget is not None and local else None
        return cls(store, memory_budget)

    def stores(self, shape, dtype):
        """Whether a variable of this shape and dtype is held on disk between runs."""
        shape = tuple(int(s) for s in shape)
        return bool(self.store_bytes) and len(shape) > 0 and \
            int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize >= self.store_bytes

    def chunk_shape(self, shape, dtype):
        """The Zarr chunks of a variable held on disk; plans read and write it in exactly these."""
        target = min(ROW_CHUNK_BYTES, max(1, (self.memory_budget or ROW_CHUNK_BYTES) // 16))
        return row_chunks(tuple(int(s) for s in shape), np.dtype(dtype).itemsize, target)

    def layout(self, shape, dtype):
        """Dask chunks of a variable's value if it is held on disk, else None."""
        if not self.stores(shape, dtype):
            return None
        shape = tuple(int(s) for s in shape)
        return dask_chunks(shape, self.chunk_shape(shape, dtype))
