"""TF1's readers (`tf.TextLineReader`, `FixedLengthRecordReader`, `TFRecordReader`,
`WholeFileReader`, `IdentityReader`): records of the files whose names a queue gives.

`read(queue)` is a `ReaderReadV2` host op (as the queue ops, data/queues.py): its hook takes
this session's `ReaderState` of the reader (in `Session.resources`), which dequeues the next file
name from the queue when the current file is done (blocking, OutOfRangeError once the queue is
closed and empty, in the queue's words) and hands out one (key, value) record. Keys are TF1's:
"file:line" (1-based, header lines counted), "file:index" (fixed-length records, from 0),
"file:offset" (TFRecords), the file name (whole files). `read_up_to` gives up to n records of
the current file. The position is not undone by a failed run (TF1's is not either).
"""

from __future__ import annotations

import gzip
import threading
import zlib

import numpy as np

from ..errors import DataLossError, InvalidArgumentError, NotFoundError, OpError, UnimplementedError
from ..graph import dtypes as _dtypes
from ..graph.graph import get_default_graph
from ..graph.registry import def_host, not_differentiable, register_op
from ..graph.shape import TensorShape
from ..io.tfrecord import compression_name, read_records
from ..kernels.common import apply_op, convert_to_tensor
from .queues import QueueBase, queue_state

__all__ = ["ReaderBase", "TextLineReader", "FixedLengthRecordReader", "TFRecordReader", "WholeFileReader",
           "IdentityReader"]

_SCALAR = TensorShape([])
_STRING = _dtypes.string

for _type in ("TextLineReaderV2", "FixedLengthRecordReaderV2", "TFRecordReaderV2", "WholeFileReaderV2",
              "IdentityReaderV2"):
    register_op(_type, lambda inputs, attrs: (_SCALAR, _STRING),
                eager=lambda xp, reader: np.array(reader.name.encode(), dtype=object), stateful=True)
register_op("ReaderReadV2", lambda inputs, attrs: [(_SCALAR, _STRING)] * 2, stateful=True, state="host",
            num_outputs=2)
register_op("ReaderReadUpToV2", lambda inputs, attrs: [(TensorShape([None]), _STRING)] * 2, stateful=True,
            state="host", num_outputs=2)
register_op("ReaderNumRecordsProducedV2", lambda inputs, attrs: (_SCALAR, _dtypes.int64), stateful=True,
            state="host")
register_op("ReaderNumWorkUnitsCompletedV2", lambda inputs, attrs: (_SCALAR, _dtypes.int64), stateful=True,
            state="host")
register_op("ReaderResetV2", lambda inputs, attrs: [], stateful=True, state="host", num_outputs=0)
not_differentiable("TextLineReaderV2", "FixedLengthRecordReaderV2", "TFRecordReaderV2", "WholeFileReaderV2",
                   "IdentityReaderV2", "ReaderReadV2", "ReaderReadUpToV2", "ReaderNumRecordsProducedV2",
                   "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2")


def _strings(values):
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _bytes(x):
    out = np.empty((), dtype=object)
    out[()] = x
    return out


class ReaderState:
    """One session's position in one reader: the current file's record generator, and counts."""

    def __init__(self, reader):
        self._reader = reader
        self._lock = threading.Lock()  # one read at a time per reader (TF1's mutex)
        self.reset()

    def reset(self):
        self._records = None  # the current work's generator of (key, value)
        self.produced = 0
        self.completed = 0

    def close(self):
        if self._records is not None:
            self._records.close()
            self._records = None

    def read(self, h, op, queue, n):
        """Up to `n` records (keys, values) of one work unit, dequeuing work as needed."""
        with self._lock:
            while True:
                if self._records is None:
                    q, state = queue_state(h, queue, op)
                    (work,) = state.dequeue(1, h.operation_timeout, op)[0]
                    work = work.item() if isinstance(work, np.ndarray) else work
                    work = work if isinstance(work, bytes) else str(work).encode()
                    self._records = self._reader._records(work, op)
                keys, values = [], []
                try:
                    for key, value in self._records:
                        keys.append(key)
                        values.append(value)
                        if len(keys) == n:
                            break
                    else:
                        self._records = None
                        self.completed += 1
                except OpError:
                    self.close()
                    raise
                except OSError as e:
                    self.close()
                    raise InvalidArgumentError(None, op, f"{op.name}: {e}") from None
                if keys:
                    self.produced += len(keys)
                    return keys, values


def _state(h, reader):
    state = h.resources.get(reader)
    if state is None:
        state = h.resources.setdefault(reader, ReaderState(reader))
    return state


@def_host("ReaderReadV2")
def _read_host(h, op):
    def read():
        keys, values = _state(h, op.get_attr("reader")).read(h, op, op.get_attr("queue"), 1)
        return [_bytes(keys[0]), _bytes(values[0])]

    h.feed(op.outputs, h.txn.once(op, read))


@def_host("ReaderReadUpToV2")
def _read_up_to_host(h, op):
    (n,) = h.evaluate([op.inputs[2]])
    n = int(n)
    if n <= 0:
        raise InvalidArgumentError(None, op, f"{op.name}: num_records must be positive, got {n}")

    def read():
        keys, values = _state(h, op.get_attr("reader")).read(h, op, op.get_attr("queue"), n)
        return [_strings(keys), _strings(values)]

    h.feed(op.outputs, h.txn.once(op, read))


@def_host("ReaderNumRecordsProducedV2")
def _produced_host(h, op):
    h.feed(op.outputs, [np.int64(_state(h, op.get_attr("reader")).produced)])


@def_host("ReaderNumWorkUnitsCompletedV2")
def _completed_host(h, op):
    h.feed(op.outputs, [np.int64(_state(h, op.get_attr("reader")).completed)])


@def_host("ReaderResetV2")
def _reset_host(h, op):
    state = _state(h, op.get_attr("reader"))
    with state._lock:
        state.close()
        state.reset()
    h.decisions[op] = True


def _path(work):
    return work.decode()


def _open(work, op):
    try:
        return open(_path(work), "rb")
    except FileNotFoundError:
        raise NotFoundError(None, op, f"{_path(work)}; No such file or directory") from None
    except IsADirectoryError:
        raise InvalidArgumentError(None, op, f"{_path(work)}; Is a directory") from None


class ReaderBase:
    """A reader of records from work units (file names) dequeued from a queue."""

    _op_type = None

    def __init__(self, name=None, default_name=None):
        self._reader_ref = apply_op(self._op_type, [], {"reader": self}, name=name,
                                    default_name=default_name or self._op_type, graph=get_default_graph())

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def name(self):
        return self._reader_ref.op.name

    @property
    def supports_serialize(self):
        return False

    def _queue_of(self, queue):
        if not isinstance(queue, QueueBase):
            raise TypeError(f"{type(self).__name__}.read: expected a queue (e.g. from string_input_producer), "
                            f"got {type(queue).__name__}")
        return queue

    def read(self, queue, name=None):
        """(key, value) string scalars: the next record, from the next file of `queue` when the
        current one ends; OutOfRangeError once the queue is closed and empty."""
        queue = self._queue_of(queue)
        key, value = apply_op("ReaderReadV2", [self._reader_ref, queue.queue_ref],
                              {"reader": self, "queue": queue}, name=name, default_name="ReaderReadV2",
                              graph=self._reader_ref.graph)
        return key, value

    def read_up_to(self, queue, num_records, name=None):
        """(keys, values) string vectors: up to `num_records` records of the current file."""
        queue = self._queue_of(queue)
        n = convert_to_tensor(num_records, dtype=_dtypes.int64)
        keys, values = apply_op("ReaderReadUpToV2", [self._reader_ref, queue.queue_ref, n],
                                {"reader": self, "queue": queue}, name=name, default_name="ReaderReadUpToV2",
                                graph=self._reader_ref.graph)
        return keys, values

    def num_records_produced(self, name=None):
        return apply_op("ReaderNumRecordsProducedV2", [self._reader_ref], {"reader": self}, name=name,
                        default_name="ReaderNumRecordsProducedV2", graph=self._reader_ref.graph)

    def num_work_units_completed(self, name=None):
        return apply_op("ReaderNumWorkUnitsCompletedV2", [self._reader_ref], {"reader": self}, name=name,
                        default_name="ReaderNumWorkUnitsCompletedV2", graph=self._reader_ref.graph)

    def reset(self, name=None):
        """The op forgetting the current file and the counts."""
        return apply_op("ReaderResetV2", [self._reader_ref], {"reader": self}, name=name,
                        default_name="ReaderResetV2", graph=self._reader_ref.graph)

    def serialize_state(self, name=None):
        raise UnimplementedError(None, None, f"{type(self).__name__} does not support serializing its state")

    def restore_state(self, state, name=None):
        raise UnimplementedError(None, None, f"{type(self).__name__} does not support restoring its state")

    def _records(self, work, op):  # a generator of (key, value) bytes
        raise NotImplementedError


class TextLineReader(ReaderBase):
    """Lines of text files (newline and carriage return stripped), after `skip_header_lines`."""

    _op_type = "TextLineReaderV2"

    def __init__(self, skip_header_lines=None, name=None):
        self._skip = int(skip_header_lines or 0)
        super().__init__(name)

    def _records(self, work, op):
        with _open(work, op) as f:
            for number, line in enumerate(f, 1):
                if number <= self._skip:
                    continue
                if line.endswith(b"\n"):
                    line = line[:-1]
                if line.endswith(b"\r"):
                    line = line[:-1]
                yield work + b":" + str(number).encode(), line


class FixedLengthRecordReader(ReaderBase):
    """Records of `record_bytes` bytes between a header and a footer, one every `hop_bytes` bytes
    (default: one after the other); `encoding` "ZLIB" or "GZIP" for compressed files."""

    _op_type = "FixedLengthRecordReaderV2"

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None, name=None,
                 encoding=None):
        if int(record_bytes) <= 0:
            raise ValueError(f"FixedLengthRecordReader: record_bytes must be positive, got {record_bytes}")
        self._record = int(record_bytes)
        self._header = int(header_bytes or 0)
        self._footer = int(footer_bytes or 0)
        self._hop = int(hop_bytes or 0) or self._record
        self._encoding = compression_name(encoding or None, "encoding")
        super().__init__(name)

    def _records(self, work, op):
        with _open(work, op) as f:
            data = f.read()
        try:
            if self._encoding == "GZIP":
                data = gzip.decompress(data)
            elif self._encoding == "ZLIB":
                data = zlib.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise DataLossError(None, op, f"{_path(work)}: corrupted {self._encoding} data: {e}") from None
        end = len(data) - self._footer
        start, index = self._header, 0
        while start + self._record <= end:
            yield work + b":" + str(index).encode(), data[start:start + self._record]
            start += self._hop
            index += 1


class TFRecordReader(ReaderBase):
    """The records of TFRecord files (`options`: TFRecordOptions or a compression name); keys
    are "file:offset" of each record."""

    _op_type = "TFRecordReaderV2"

    def __init__(self, name=None, options=None):
        self._compression = compression_name(options, "options")
        super().__init__(name)

    def _records(self, work, op):
        offset = 0
        try:
            for record in read_records(work, self._compression):
                yield work + b":" + str(offset).encode(), record
                offset += 16 + len(record)
        except OpError as e:
            raise type(e)(None, op, f"{op.name}: {e.message}") from None


class WholeFileReader(ReaderBase):
    """One record per file: (file name, contents)."""

    _op_type = "WholeFileReaderV2"

    def __init__(self, name=None):
        super().__init__(name)

    def _records(self, work, op):
        with _open(work, op) as f:
            yield work, f.read()


class IdentityReader(ReaderBase):
    """One record per work unit: (work, work)."""

    _op_type = "IdentityReaderV2"

    def __init__(self, name=None):
        super().__init__(name)

    def _records(self, work, op):
        yield work, work
