"""What `fit`/`evaluate`/`predict` accept, as a stream of batches.

Arrays (numpy, and anything with `shape` and slicing: Zarr and dask arrays, h5py datasets) are
read a block at a time: numpy arrays whole, out-of-core arrays in blocks of their first-axis chunk
rounded to whole batches, so `fit(zarr_x, zarr_y)` holds one block of each array, never the whole.
`shuffle=True` permutes rows within each block and the order of the blocks (a full permutation
for numpy arrays). Datasets, generators and `keras.utils.Sequence`s yield `(x, y[, sample_weight])`.
"""

from __future__ import annotations

import math

import numpy as np

from ...data.dataset import Dataset
from ...errors import InvalidArgumentError, OutOfRangeError

__all__ = ["as_list", "num_samples", "array_batches", "is_array", "iterate_stream", "slice_arrays"]


def is_array(x):
    return hasattr(x, "shape") and hasattr(x, "__getitem__") and not isinstance(x, (str, bytes, Dataset))


def as_list(x, names=None, what="input"):
    """x as a list of arrays in the model's order: an array, a list/tuple, or a dict by name."""
    if x is None:
        return []
    if isinstance(x, dict):
        if names is None:
            return [x[k] for k in sorted(x)]
        missing = [n for n in names if n not in x]
        if missing:
            raise ValueError(f"No data provided for \"{missing[0]}\". Need data for each key in: {names}")
        return [x[n] for n in names]
    if isinstance(x, (list, tuple)):
        return [np.asarray(a) if not is_array(a) else a for a in x]
    return [x if is_array(x) else np.asarray(x)]


def num_samples(arrays):
    """The common first dimension; ValueError naming the arrays when they disagree."""
    sizes = {int(a.shape[0]) for a in arrays if a is not None}
    if len(sizes) > 1:
        raise ValueError(f"All input arrays (x) should have the same number of samples. Got array shapes: "
                         f"{[tuple(a.shape) for a in arrays if a is not None]}")
    return sizes.pop() if sizes else 0


def _block_rows(arrays, batch_size):
    rows = 0
    for a in arrays:
        if isinstance(a, np.ndarray) or a is None:
            continue
        chunks = getattr(a, "chunks", None)
        if chunks:
            first = chunks[0]
            first = first[0] if isinstance(first, tuple) else first
            rows = max(rows, int(first))
    if rows == 0:
        return None
    return max(batch_size, int(math.ceil(rows / batch_size)) * batch_size)


def slice_arrays(arrays, start, stop):
    return [None if a is None else np.asarray(a[start:stop]) for a in arrays]


def array_batches(arrays, batch_size, shuffle=False, start=0, stop=None, rng=None):
    """Yields (lists of numpy arrays, one per input array) of `batch_size` rows in [start, stop)."""
    stop = num_samples(arrays) if stop is None else stop
    rng = rng or np.random
    block = _block_rows(arrays, batch_size)
    if block is None:  # numpy arrays: all in memory already
        n = stop - start
        order = rng.permutation(n) + start if shuffle else None
        for i in range(0, n, batch_size):
            if order is None:
                yield [None if a is None else a[start + i:start + min(i + batch_size, n)] for a in arrays]
            else:
                take = np.sort(order[i:i + batch_size]) if shuffle == "batch" else order[i:i + batch_size]
                yield [None if a is None else np.asarray(a)[take] for a in arrays]
        return
    starts = list(range(start, stop, block))
    if shuffle:
        starts = [starts[i] for i in rng.permutation(len(starts))]
    for b in starts:
        data = slice_arrays(arrays, b, min(b + block, stop))
        n = len(next(d for d in data if d is not None))
        perm = rng.permutation(n) if shuffle is True else None
        for i in range(0, n, batch_size):
            if perm is None:
                yield [None if d is None else d[i:i + batch_size] for d in data]
            else:
                yield [None if d is None else d[perm[i:i + batch_size]] for d in data]


def iterate_stream(source, session_run=None):
    """Batches of a Dataset (through `session_run` in graph mode), a generator or a Sequence."""
    if isinstance(source, Dataset):
        if session_run is None:
            for item in source:
                yield item
            return
        iterator = source.make_one_shot_iterator()
        nxt = iterator.get_next()
        while True:
            try:
                yield session_run(nxt)
            except OutOfRangeError:
                return
    if hasattr(source, "__getitem__") and hasattr(source, "__len__"):  # keras.utils.Sequence
        for i in range(len(source)):
            yield source[i]
        if hasattr(source, "on_epoch_end"):
            source.on_epoch_end()
        return
    for item in source:  # not `yield from`: closing this stream must not close the user's generator
        yield item


def split_batch(batch, what):
    """(x, y, sample_weight) of one yielded batch; InvalidArgumentError for anything else."""
    if isinstance(batch, tuple) and len(batch) in (2, 3):
        return batch if len(batch) == 3 else (batch[0], batch[1], None)
    if isinstance(batch, (tuple, list)) and len(batch) == 1:
        return batch[0], None, None
    if what == "predict":
        return batch, None, None
    if isinstance(batch, dict) or not isinstance(batch, (tuple, list)):
        return batch, None, None
    raise InvalidArgumentError(None, None, f"Output of generator should be a tuple `(x, y, sample_weight)` or "
                                           f"`(x, y)`. Found: {str(batch)[:200]}")
