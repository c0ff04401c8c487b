"""`tf.data.TFRecordDataset`: the records of TFRecord files as scalar `string` elements (bytes),
streamed one record at a time (the record format and its reader are io/tfrecord.py).

The file names are a str or list of them (known now), a string tensor of rank 0 or 1 (a placeholder
fed to the initializer, or a `flat_map`/`interleave` function's argument: read when the iterator
starts), or a Dataset of names (read file by file as the names come). `num_parallel_reads` > 1
reads that many files in turn, one record from each (TF's deterministic parallel interleave
order, cycle_length = num_parallel_reads, block_length = 1); the reads run on the iterating thread,
so put a `prefetch` after it to overlap them with training.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph.dtypes import string
from ..graph.ops import Tensor
from ..graph.shape import TensorShape
from ..io.tfrecord import DEFAULT_BUFFER, compression_name, read_records
from .dataset import Dataset
from .node import Node
from .sources import _component, _static
from .structure import ElementSpec


def _file_names(value, what="TFRecordDataset"):
    """File names as a list of str (a str, bytes, or an array/list of them, of rank <= 1)."""
    arr = np.asarray(value, dtype=object)
    if arr.ndim > 1:
        raise InvalidArgumentError(None, None, f"{what}: `filenames` must be a scalar or a vector, got "
                                   f"shape {list(arr.shape)}")
    out = []
    for v in arr.reshape(-1):
        if not isinstance(v, (str, bytes)):
            raise InvalidArgumentError(None, None, f"{what}: file names must be strings, got {v!r}")
        out.append(v.decode() if isinstance(v, bytes) else v)
    return out


class TFRecordNode(Node):
    """The records of the files `filenames` names (a list of str, a string Tensor, or an upstream
    node of scalar string elements). Other file formats subclass it and override `_read(name)`
    (a generator of one file's records as bytes) and `what` (data/text.py)."""

    what = "TFRecordDataset"

    def __init__(self, filenames, compression_type, buffer_size, num_parallel_reads):
        self.compression = compression_name(compression_type)
        self.buffer_size = DEFAULT_BUFFER if buffer_size is None else int(buffer_size)
        if self.buffer_size < 0:
            raise ValueError(f"{self.what}: buffer_size must be >= 0, got {buffer_size}")
        self.parallel = 1 if num_parallel_reads is None else int(num_parallel_reads)
        if self.parallel == -1:  # AUTOTUNE
            self.parallel = 4
        if self.parallel < 1:
            raise ValueError(f"{self.what}: num_parallel_reads must be positive or AUTOTUNE, got "
                             f"{num_parallel_reads}")
        node = getattr(filenames, "_node", None)
        if node is not None:
            spec = node.spec
            if len(spec) != 1 or spec.dtypes[0] != string or spec.shapes[0].ndims not in (None, 0):
                raise TypeError(f"{self.what}: a dataset of file names must have scalar tf.string elements, "
                                f"got {spec.describe()}")
            self.inputs, self.names = (node,), None
        elif isinstance(filenames, (str, bytes)) or (isinstance(filenames, (list, tuple)) and all(
                isinstance(v, (str, bytes)) for v in filenames)):
            self.names = _file_names(list(filenames) if isinstance(filenames, tuple) else filenames, self.what)
        else:
            self.names = _component(filenames)
            dtype, shape = _static(self.names)
            if dtype != string:
                raise TypeError(f"The `filenames` argument must contain `tf.string` elements. Got "
                                f"`tf.{dtype.name}` elements.")
            if shape.ndims is not None and shape.ndims > 1:
                raise TypeError(f"{self.what}: `filenames` must be a scalar or a vector of file names, got "
                                f"shape {shape}")
            if not isinstance(self.names, Tensor):
                self.names = _file_names(self.names, self.what)
        self.captured = [self.names] if isinstance(self.names, Tensor) else []
        super().__init__(ElementSpec(None, [string], [TensorShape([])]))

    def held_bytes(self):
        return self.parallel * self.buffer_size  # the read buffers of the open files

    def describe_buffer(self):
        return f"{self.what} read buffers ({self.parallel} x {self.buffer_size} bytes)"

    def _files(self, ctx):
        if self.inputs:
            for (name,) in self.inputs[0].iterate(ctx):
                yield from _file_names(name, self.what)
        elif isinstance(self.names, Tensor):
            yield from _file_names(ctx.values[self.names], self.what)
        else:
            yield from self.names

    def _read(self, name):
        return read_records(name, self.compression, self.buffer_size)

    def _records(self, name):
        for record in self._read(name):
            out = np.empty((), dtype=object)
            out[()] = record
            yield (out,)

    def iterate(self, ctx):
        files = self._files(ctx)
        if self.parallel == 1:
            for name in files:
                yield from self._records(name)
            return
        # TF's interleave order: a cycle of `parallel` slots, one record from each in turn; a file
        # that ends frees its slot, which the next file fills when the cycle comes back to it
        slots, i, opened, exhausted = [None] * self.parallel, 0, 0, False
        try:
            while True:
                if slots[i] is None:
                    if exhausted:
                        if not opened:
                            return
                        i = (i + 1) % self.parallel
                        continue
                    name = next(files, None)
                    if name is None:
                        exhausted = True
                        continue
                    slots[i], opened = self._records(name), opened + 1
                try:
                    element = next(slots[i])
                except StopIteration:
                    slots[i], opened = None, opened - 1
                    i = (i + 1) % self.parallel
                    continue
                yield element
                i = (i + 1) % self.parallel
        finally:
            for s in slots:
                if s is not None:
                    s.close()


class TFRecordDataset(Dataset):
    """The records of TFRecord files (TF1's `tf.data.TFRecordDataset(filenames, compression_type=None,
    buffer_size=None, num_parallel_reads=None)`): scalar `tf.string` elements (bytes), one per
    record, read in file order. `filenames`: a str or list of str, a string tensor of rank <= 1, or
    a Dataset of scalar strings (`list_files(...)`). `compression_type`: None/"" , "ZLIB" or
    "GZIP". A missing file raises NotFoundError, a corrupted one DataLossError, when reached."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        super().__init__(TFRecordNode(filenames, compression_type, buffer_size, num_parallel_reads))
