"""`HDF5Matrix`: a view of rows [start, end) of an HDF5 dataset, read on indexing (usable as
`fit`'s input: the training loop reads arrays by slices)."""

from __future__ import annotations

import collections

import numpy as np

__all__ = ["HDF5Matrix"]


class HDF5Matrix:
    """Rows [start, end) of dataset `dataset` in the HDF5 file `datapath`, each read passed
    through `normalizer` when given. Files are opened read-only once and shared (`refs`)."""

    refs = collections.defaultdict(int)

    def __init__(self, datapath, dataset, start=0, end=None, normalizer=None):
        try:
            import h5py
        except ImportError:
            raise ImportError("The use of HDF5Matrix requires HDF5 and h5py installed.") from None
        if datapath not in self.refs:
            self.refs[datapath] = h5py.File(datapath, "r")
        f = self.refs[datapath]
        if dataset not in f:
            raise KeyError(f"HDF5Matrix: {datapath} has no dataset {dataset!r} (it has {sorted(f.keys())})")
        self.data = f[dataset]
        self.start = start
        self.end = self.data.shape[0] if end is None else end
        self.normalizer = normalizer

    def __len__(self):
        return self.end - self.start

    def __getitem__(self, key):
        if isinstance(key, slice):
            start = 0 if key.start is None else key.start
            stop = self.shape[0] if key.stop is None else key.stop
            if stop + self.start > self.end:
                raise IndexError(f"HDF5Matrix: slice {key} goes past its {len(self)} rows")
            idx = slice(start + self.start, stop + self.start)
        elif isinstance(key, (int, np.integer)):
            if key + self.start >= self.end:
                raise IndexError(f"HDF5Matrix: index {key} out of its {len(self)} rows")
            idx = int(key) + self.start
        else:
            key = np.asarray(key)
            if key.size and key.max() + self.start >= self.end:
                raise IndexError(f"HDF5Matrix: index {key.max()} out of its {len(self)} rows")
            idx = (self.start + key).tolist()
        value = self.data[idx]
        return self.normalizer(value) if self.normalizer is not None else value

    def __array__(self, dtype=None, copy=None):
        value = np.asarray(self[:])
        return value.astype(dtype) if dtype is not None else value

    @property
    def shape(self):
        return (self.end - self.start,) + tuple(self.data.shape[1:])

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self):
        return self.data.ndim

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def chunks(self):
        """The dataset's HDF5 chunking (fit reads blocks of its first axis), None if contiguous."""
        return self.data.chunks
