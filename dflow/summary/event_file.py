"""Event files: `Event` protos framed as TFRecords, written by a background thread (TF1's
`EventFileWriter`, without TensorFlow).

A file is named `events.out.tfevents.<seconds>.<hostname><suffix>` (TF1's name; when a file of
that name exists already, e.g. a writer reopened within the same second, `.<n>` is added before the
suffix so nothing is overwritten) and starts with the event `file_version: "brain.Event:2"`.
`add_event` queues the serialized event (at most `max_queue` pending: a full queue blocks the
caller); a daemon thread writes them and flushes the file every `flush_secs`. `flush()` waits for
the queue and flushes; `close()` flushes and closes; `reopen()` after `close()` starts a new file.
A failure of the disk (full, gone, not writable) is raised at the next call as a dflow error naming
the file; events queued after it are dropped.
"""

from __future__ import annotations

import errno
import os
import queue
import socket
import threading
import time

from tensorboard.compat.proto import event_pb2

from ..errors import (
    FailedPreconditionError,
    NotFoundError,
    OpError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnknownError,
)
from ..io.tfrecord import TFRecordWriter

__all__ = ["EventFileWriter", "event_file_name"]

_STOP = object()  # the worker's end-of-queue marker


def _as_error(path, e):
    """An OSError met writing `path` as the dflow error a user can act on."""
    if isinstance(e, OpError):
        return e
    if isinstance(e, FileNotFoundError):
        return NotFoundError(None, None, f"{path}; No such file or directory")
    if isinstance(e, (NotADirectoryError, FileExistsError)) or getattr(e, "errno", None) == errno.ENOTDIR:
        return FailedPreconditionError(None, None, f"{path} is not a directory")
    if isinstance(e, PermissionError) or getattr(e, "errno", None) == errno.EROFS:
        return PermissionDeniedError(None, None, f"{path}; Permission denied (cannot write the event file)")
    if getattr(e, "errno", None) in (errno.ENOSPC, errno.EDQUOT):
        return ResourceExhaustedError(None, None, f"{path}; No space left on device (events not written)")
    return UnknownError(None, None, f"{path}; {e}")


def event_file_name(logdir, suffix="", now=None):
    """The path of a new event file in `logdir`: TF1's name, made unique among the files there."""
    stem = os.path.join(logdir, f"events.out.tfevents.{int(time.time() if now is None else now):010d}."
                                f"{socket.gethostname()}")
    return stem + suffix


def _create(logdir, suffix):
    """Creates `logdir` and a new, empty event file in it (exclusively: an existing file is never
    truncated); its path."""
    try:
        os.makedirs(logdir, exist_ok=True)
    except OSError as e:
        raise _as_error(logdir, e) from None
    if not os.path.isdir(logdir):
        raise FailedPreconditionError(None, None, f"{logdir} is not a directory")
    first = event_file_name(logdir, suffix)
    stem = first[:len(first) - len(suffix)] if suffix else first
    for n in range(1000):
        path = first if n == 0 else f"{stem}.{n}{suffix}"
        try:
            with open(path, "xb"):
                return path
        except FileExistsError:
            continue
        except OSError as e:
            raise _as_error(path, e) from None
    raise FailedPreconditionError(None, None, f"{logdir}: could not find a free event file name after {first}")


class _Worker(threading.Thread):
    """Writes the queued records to the file and flushes it every `flush_secs` (a daemon: the
    atexit hook of `writer.py` flushes writers left open)."""

    def __init__(self, records, file, flush_secs):
        super().__init__(name="dflow-event-writer", daemon=True)
        self._records, self._file, self._flush_secs = records, file, flush_secs
        self.error = None  # the failure not reported yet
        self.failed = False  # after a failure, records are dropped

    def run(self):
        pending = False
        next_flush = time.monotonic() + self._flush_secs
        while True:
            try:
                record = self._records.get(timeout=max(0.0, next_flush - time.monotonic()))
            except queue.Empty:
                record = None
            try:
                if record is _STOP:
                    return
                if record is not None and not self.failed:
                    self._file.write(record)
                    pending = True
                if time.monotonic() >= next_flush:
                    if pending and not self.failed:
                        self._file.flush()
                        pending = False
                    next_flush = time.monotonic() + self._flush_secs
            except Exception as e:  # noqa: BLE001 - kept for the caller; later records are dropped
                self.error, self.failed = e, True
            finally:
                if record is not None:
                    self._records.task_done()


class EventFileWriter:
    """Writes `Event` protos to a new event file in `logdir` (TF1's `EventFileWriter(logdir,
    max_queue=10, flush_secs=120, filename_suffix=None)`). FailedPreconditionError when `logdir` is
    a file, PermissionDeniedError when it cannot be written, ResourceExhaustedError when the disk is
    full, each naming the path."""

    def __init__(self, logdir, max_queue=10, flush_secs=120, filename_suffix=None):
        self._logdir = os.fspath(logdir)
        self._max_queue = int(max_queue)
        self._flush_secs = float(flush_secs)
        self._suffix = filename_suffix or ""
        self._lock = threading.RLock()  # reopen() holds it while _open() flushes
        self._closed = True
        self._open()

    def _open(self):
        self._path = _create(self._logdir, self._suffix)
        try:
            self._file = TFRecordWriter(self._path)
        except OSError as e:
            raise _as_error(self._path, e) from None
        self._records = queue.Queue(max(self._max_queue, 0))
        self._worker = _Worker(self._records, self._file, self._flush_secs)
        self._worker.start()
        self._closed = False
        try:
            self.add_event(event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2"))
            self.flush()
        except OpError:
            try:  # no thread or open file is left behind a writer that could not start
                self.close()
            except OpError:
                pass
            raise

    def get_logdir(self):
        """The directory of the event file."""
        return self._logdir

    @property
    def path(self):
        """The event file being written (the latest one after `reopen()`)."""
        return self._path

    def _raise_failure(self):
        if self._worker.error is not None:
            error, self._worker.error = self._worker.error, None
            raise _as_error(self._path, error) from None

    def add_event(self, event):
        """Queues an `Event` proto (nothing after `close()`; blocks while `max_queue` are pending)."""
        if not isinstance(event, event_pb2.Event):
            raise TypeError(f"add_event: expected an Event proto, got {type(event).__name__}")
        if self._closed:
            return
        self._raise_failure()
        self._records.put(event.SerializeToString())

    def flush(self):
        """Writes every queued event and flushes the file."""
        with self._lock:
            if self._closed:
                return
            self._records.join()
            self._raise_failure()
            try:
                self._file.flush()
            except OSError as e:
                raise _as_error(self._path, e) from None

    def close(self):
        """Flushes, stops the writer thread and closes the file (a second close does nothing)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._records.put(_STOP)
            self._worker.join()
            error = self._worker.error
            try:
                self._file.close()
            except OSError as e:
                if not self._worker.failed:  # a failure already reported is not raised again
                    error = e
            if error is not None:
                self._worker.error = None
                raise _as_error(self._path, error) from None

    def reopen(self):
        """After `close()`, starts a new event file in the same directory (else does nothing)."""
        with self._lock:
            if self._closed:
                self._open()

    def __repr__(self):
        return f"<EventFileWriter {self._path!r}{' closed' if self._closed else ''}>"
