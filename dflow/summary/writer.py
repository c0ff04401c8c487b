"""`tf.summary.FileWriter` and `FileWriterCache`: TensorBoard event files.

The files are written by `event_file.EventFileWriter` (TFRecord records with CRCs, `Event` protos,
`events.out.tfevents.*` names; a background thread flushes every `flush_secs`), so TensorBoard and
its `EventAccumulator` read them; nothing here imports TensorFlow, even where it is installed. The
writer follows TF1's: `add_summary` takes a `Summary` proto or the serialized bytes a summary op
returned from `Session.run`, keeps a value's `metadata` only the first time its tag is written, and
events added after `close()` are dropped with a warning until `reopen()` starts a new file. Writers
still open when the interpreter exits are flushed then (dflow's addition: TF1 examples often never
close theirs).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
import weakref

import numpy as np
from tensorboard.compat.proto import event_pb2, graph_pb2, meta_graph_pb2, summary_pb2

from ..graph.graph import Graph, get_default_graph
from ..graph.serialize import GraphDef
from .event_file import EventFileWriter
from .graph_def import graph_def_proto, meta_graph_proto, run_metadata_proto

__all__ = ["FileWriter", "FileWriterCache"]

_log = logging.getLogger("dflow.summary")
_OPEN = weakref.WeakSet()  # writers not closed yet: flushed when the interpreter exits


@atexit.register
def _flush_open_writers():
    # the event writer's thread is a daemon: without this, a program that never calls close()
    # or flush() (common in TF1 examples) would lose up to `flush_secs` of events at exit
    for writer in list(_OPEN):
        try:
            writer.flush()
        except Exception:  # noqa: BLE001 - exiting: a broken writer must not hide the others
            pass


class FileWriter:
    """Writes `Summary` protos and events to an event file in `logdir` (TF1's
    `tf.summary.FileWriter`). With `graph` (a `Graph`, e.g. `sess.graph`) the graph is written
    first for TensorBoard's graph dashboard."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        if session is not None:
            raise NotImplementedError("FileWriter(session=...) writes through TF2-style summary writer ops, which "
                                      "dflow does not have; leave `session` out")
        self._logdir = os.fspath(logdir)
        self._writer = EventFileWriter(self._logdir, max_queue, flush_secs, filename_suffix)
        self._closed = False
        _OPEN.add(self)
        self._seen_summary_tags = set()
        self._seen_run_metadata_tags = set()
        if graph is not None or graph_def is not None:
            self.add_graph(graph=graph, graph_def=graph_def)
            self.add_meta_graph(graph if graph is not None else graph_def)  # TF1 writes both

    # ---- events ------------------------------------------------------------------------------------

    def add_event(self, event):
        """Writes an `Event` proto (dropped, with a warning, after `close()`)."""
        if self._closed:
            _log.warning("Attempting to use a closed FileWriter. The operation will be a noop unless the "
                         "FileWriter is explicitly reopened.")
            return
        self._writer.add_event(event)

    def _add_event(self, event, step):
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.add_event(event)

    def add_summary(self, summary, global_step=None):
        """Writes a summary: a `Summary` proto or its serialized bytes (what `Session.run` returns
        for a summary op), at step `global_step`."""
        if isinstance(summary, np.ndarray) and summary.dtype == object and summary.size == 1:
            summary = summary.reshape(()).item()
        if isinstance(summary, (bytes, bytearray)):
            summary = summary_pb2.Summary.FromString(bytes(summary))
        elif not isinstance(summary, summary_pb2.Summary):
            raise TypeError(f"add_summary: expected a Summary proto or its serialized bytes, got "
                            f"{type(summary).__name__}")
        for value in summary.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                value.ClearField("metadata")  # TF1 keeps the metadata of a tag's first value only
                continue
            self._seen_summary_tags.add(value.tag)
        self._add_event(event_pb2.Event(summary=summary), global_step)

    def add_session_log(self, session_log, global_step=None):
        """Writes a `SessionLog` proto (START, STOP, CHECKPOINT)."""
        self._add_event(event_pb2.Event(session_log=session_log), global_step)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Writes a graph for TensorBoard's graph dashboard: a `Graph` (op types, names with their
        scopes, devices, inputs, control inputs, static shapes), a dflow `GraphDef`, or a
        TensorBoard `GraphDef` proto (`graph_def=` is TF1's deprecated spelling)."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        g = graph if graph is not None else graph_def
        if isinstance(g, (Graph, GraphDef)):
            proto = graph_def_proto(g)
        elif isinstance(g, graph_pb2.GraphDef):
            proto = g
        else:
            raise TypeError("The passed graph must be an instance of `Graph` or the deprecated `GraphDef`")
        self._add_event(event_pb2.Event(graph_def=proto.SerializeToString()), global_step)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Writes a meta graph: a TensorBoard `MetaGraphDef` proto, or the graph of a dflow
        `MetaGraphDef`, `Graph` or `GraphDef`."""
        if not isinstance(meta_graph_def, (Graph, GraphDef, meta_graph_pb2.MetaGraphDef)) and \
                not isinstance(getattr(meta_graph_def, "graph_def", None), GraphDef):
            raise TypeError(f"add_meta_graph: expected a MetaGraphDef, got {type(meta_graph_def).__name__}")
        proto = meta_graph_proto(meta_graph_def)
        self._add_event(event_pb2.Event(meta_graph_def=proto.SerializeToString()), global_step)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Writes a run's `RunMetadata` (from `Session.run(..., options=RunOptions(trace_level=
        FULL_TRACE), run_metadata=...)`) under `tag`; a tag can be used once."""
        if tag in self._seen_run_metadata_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._seen_run_metadata_tags.add(tag)
        tagged = event_pb2.TaggedRunMetadata(tag=tag,
                                             run_metadata=run_metadata_proto(run_metadata).SerializeToString())
        self._add_event(event_pb2.Event(tagged_run_metadata=tagged), global_step)

    # ---- the file ----------------------------------------------------------------------------------

    def get_logdir(self):
        """The directory the event file is written in."""
        return self._logdir

    def flush(self):
        """Writes every pending event to disk."""
        if not self._closed:
            self._writer.flush()

    def close(self):
        """Flushes and closes the event file; later events are dropped until `reopen()`."""
        if not self._closed:
            self._closed = True  # closed even when the last flush fails (that error is raised)
            _OPEN.discard(self)
            self._writer.close()

    def reopen(self):
        """After `close()`, starts a new event file in the same directory (else does nothing)."""
        if self._closed:
            self._writer.reopen()
            self._closed = False
            _OPEN.add(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<FileWriter logdir={self._logdir!r}{' closed' if self._closed else ''}>"


class FileWriterCache:
    """One `FileWriter` per log directory, shared (TF1's `tf.summary.FileWriterCache`)."""

    _cache = {}
    _lock = threading.RLock()

    @staticmethod
    def clear():
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}

    @staticmethod
    def get(logdir):
        """The cached writer of `logdir`, created (with the default graph) on first use."""
        with FileWriterCache._lock:
            if logdir not in FileWriterCache._cache:
                FileWriterCache._cache[logdir] = FileWriter(logdir, graph=get_default_graph())
            return FileWriterCache._cache[logdir]
