"""`tf.contrib.summary`: TF 1.x's summary API that works eagerly and in graphs (the forerunner of
TF2's `tf.summary`), writing TensorBoard event files through dflow's FileWriter.

A writer (`create_file_writer(logdir)`) is made the default with `writer.as_default()` (or
`set_as_default()`); a recording condition (`always_record_summaries()`,
`never_record_summaries()`, `record_summaries_every_n_global_steps(n)`; none set means no summary
is recorded, as in TF 1.x) says when summaries are written. `scalar`, `histogram`, `image`,
`audio` and `generic` build the same `Summary` values as `tf.summary` (dflow/summary), at `step`
(default: the global step, created if missing):

- eagerly they write at once when the condition holds, and return True or False;
- in a graph they return a bool op (a host op) that writes when run and the condition holds;
  it is in `all_summary_ops()`. `summary_writer_initializer_op()` lists the writers'
  initializers, `initialize(graph=..., session=...)` runs them and writes the graph.

Without a default writer a summary call does nothing (a constant False), as in TF 1.x.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

from .. import summary as _summary
from ..eager.context import executing_eagerly
from ..graph import dtypes
from ..graph.graph import add_to_collection, get_collection, get_default_graph
from ..graph.ops import get_default_session
from ..kernels import math_ops as _m
from ..kernels.common import constant, convert_to_tensor
from ..kernels.py_ops import py_func
from ..summary.common import summary_of, tensor_proto
from ..tf1_names import missing_attribute
from ..train.schedules import get_or_create_global_step

__all__ = ["SummaryWriter", "create_file_writer", "create_summary_file_writer", "always_record_summaries",
           "never_record_summaries", "record_summaries_every_n_global_steps", "should_record_summaries",
           "scalar", "histogram", "image", "audio", "generic", "all_summary_ops", "summary_writer_initializer_op",
           "initialize", "flush", "graph", "eval_dir"]

_SUMMARY_OPS = "_SUMMARY_V2"  # TF 1.x's collection of these ops (also tf.summary.all_v2_summary_ops)
_INIT_OPS = "_SUMMARY_WRITER_V2"

# the default writer and the recording condition: stacks, innermost last
_writers = []
_conditions = []  # True, False, or ("every", n, global_step or None)


class SummaryWriter:
    """An event file writer for these summaries (TF 1.x's `tf.contrib.summary.SummaryWriter`); the
    file is opened when the writer is initialized (eagerly: at once) or first written to."""

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None):
        self._logdir = os.fspath(logdir)
        self._max_queue = 10 if max_queue is None else int(max_queue)
        self._flush_secs = 120 if flush_millis is None else max(flush_millis / 1000.0, 0.001)
        self._suffix = ".v2" if filename_suffix is None else filename_suffix
        self._file = None
        self._closed = False
        if executing_eagerly():
            self._open()
        else:
            add_to_collection(_INIT_OPS, py_func(self._init_fn, [], dtypes.bool, name="SummaryWriterInit"))

    def _open(self):
        if self._file is None or self._closed:
            self._file = _summary.FileWriter(self._logdir, max_queue=self._max_queue, flush_secs=self._flush_secs,
                                             filename_suffix=self._suffix)
            self._closed = False
        return self._file

    def _init_fn(self):
        self._open()
        return np.bool_(True)

    def _write(self, summary_bytes, step):
        self._open().add_summary(summary_bytes, global_step=int(step))

    @contextlib.contextmanager
    def as_default(self):
        """Makes this the default writer inside the block."""
        _writers.append(self)
        try:
            yield self
        finally:
            _writers.pop()

    def set_as_default(self):
        """Makes this the default writer from now on (until another `set_as_default`)."""
        if _writers:
            _writers[0] = self
        else:
            _writers.append(self)

    def init(self):
        """Opens the event file (eagerly), or an op that does (in a graph)."""
        if executing_eagerly():
            self._open()
            return None
        return py_func(self._init_fn, [], dtypes.bool, name="SummaryWriterInit")

    def _flush_fn(self):
        if self._file is not None and not self._closed:
            self._file.flush()
        return np.bool_(True)

    def _close_fn(self):
        if self._file is not None and not self._closed:
            self._file.close()
            self._closed = True
        return np.bool_(True)

    def flush(self):
        """Writes what is queued to disk (eagerly), or an op that does."""
        if executing_eagerly():
            self._flush_fn()
            return None
        return py_func(self._flush_fn, [], dtypes.bool, name="FlushSummaryWriter")

    def close(self):
        if executing_eagerly():
            self._close_fn()
            return None
        return py_func(self._close_fn, [], dtypes.bool, name="CloseSummaryWriter")

    def __repr__(self):
        return f"<tf.contrib.summary.SummaryWriter logdir={self._logdir!r}>"


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None):
    """A SummaryWriter writing event files to `logdir` (created if missing)."""
    del name
    return SummaryWriter(logdir, max_queue, flush_millis, filename_suffix)


def create_summary_file_writer(*args, **kwargs):
    """`create_file_writer` under its TF 1.5 name (the seed tutorials use it)."""
    return create_file_writer(*args, **kwargs)


@contextlib.contextmanager
def _condition(value):
    _conditions.append(value)
    try:
        yield
    finally:
        _conditions.pop()


def always_record_summaries():
    """Summaries inside the block are always recorded."""
    return _condition(True)


def never_record_summaries():
    """Summaries inside the block are never recorded."""
    return _condition(False)


def record_summaries_every_n_global_steps(n, global_step=None):
    """Summaries inside the block are recorded when the global step is a multiple of `n`."""
    return _condition(("every", int(n), global_step))


def _step_value(step):
    if hasattr(step, "numpy"):
        step = step.numpy()
    return int(np.asarray(step))


def should_record_summaries():
    """Whether summaries are recorded here: a bool eagerly, a bool tensor in a graph."""
    cond = _conditions[-1] if _conditions else False
    if not isinstance(cond, tuple):
        return cond if executing_eagerly() else constant(cond, dtype=dtypes.bool)
    _, n, step = cond
    step = get_or_create_global_step() if step is None else step
    if executing_eagerly():
        return _step_value(step) % n == 0
    return _m.equal(_m.floormod(_m.cast(convert_to_tensor(step), dtypes.int64), np.int64(n)), np.int64(0))


def _summary_write(name, make_summary, step):
    """Writes `make_summary()` (a serialized-Summary tensor) through the default writer at `step`."""
    if not _writers:
        return False if executing_eagerly() else constant(False, dtype=dtypes.bool)
    writer = _writers[-1]
    step = get_or_create_global_step() if step is None else step
    record = should_record_summaries()
    if executing_eagerly():
        if not record:
            return False
        value = make_summary()
        writer._write(value.numpy() if hasattr(value, "numpy") else value, _step_value(step))
        return True

    def write(summary_bytes, step_value, record_value):
        if bool(record_value):
            writer._write(summary_bytes.reshape(()).item() if isinstance(summary_bytes, np.ndarray)
                          else summary_bytes, step_value)
        return np.bool_(record_value)

    op = py_func(write, [make_summary(), _m.cast(convert_to_tensor(step), dtypes.int64), record], dtypes.bool,
                 name=name)
    op.set_shape([])
    add_to_collection(_SUMMARY_OPS, op)
    return op


def scalar(name, tensor, family=None, step=None):
    """Writes a scalar summary (a real number) at `step`."""
    return _summary_write("write_summary", lambda: _summary.scalar(name, tensor, collections=[], family=family),
                          step)


def histogram(name, tensor, family=None, step=None):
    """Writes a histogram of `tensor`'s values at `step`."""
    return _summary_write("write_summary",
                          lambda: _summary.histogram(name, tensor, collections=[], family=family), step)


def image(name, tensor, bad_color=None, max_images=3, family=None, step=None):
    """Writes up to `max_images` images of a [batch, height, width, channels] tensor at `step`."""
    del bad_color  # the images' non-finite pixels are drawn red, as tf.summary.image does
    return _summary_write(
        "write_summary", lambda: _summary.image(name, tensor, max_outputs=max_images, collections=[],
                                                family=family), step)


def audio(name, tensor, sample_rate, max_outputs, family=None, step=None):
    """Writes up to `max_outputs` audio clips at `step`."""
    return _summary_write(
        "write_summary", lambda: _summary.audio(name, tensor, sample_rate, max_outputs=max_outputs, collections=[],
                                                family=family), step)


def generic(name, tensor, metadata=None, family=None, step=None):
    """Writes `tensor` itself as a tensor summary at `step`."""
    del metadata
    return _summary_write(
        "write_summary", lambda: _summary.tensor_summary(name, tensor, collections=[], family=family), step)


def all_summary_ops():
    """The summary ops of the default graph (None when executing eagerly, as in TF 1.x)."""
    if executing_eagerly():
        return None
    return get_collection(_SUMMARY_OPS)


def summary_writer_initializer_op():
    """The initializers of the writers made in the default graph."""
    if executing_eagerly():
        raise RuntimeError("tf.contrib.summary.summary_writer_initializer_op is only supported in graph mode.")
    return get_collection(_INIT_OPS)


def graph(param, step=None, name=None):
    """Writes a graph (a Graph or GraphDef) through the default writer, as `FileWriter.add_graph`."""
    del step, name
    if _writers:
        writer = _writers[-1]._open()
        if hasattr(param, "as_graph_def") or hasattr(param, "get_operations"):
            writer.add_graph(param)
        else:
            writer.add_graph(None, graph_def=param)
    return True if executing_eagerly() else constant(True, dtype=dtypes.bool)


def initialize(graph=None, session=None):
    """Runs the writers' initializers in `session` (default: the default session) and, with
    `graph`, writes it through the default writer."""
    if executing_eagerly():
        return
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError("tf.contrib.summary.initialize: pass a session or run it under a default session")
    session.run(summary_writer_initializer_op())
    if graph is not None and _writers:
        globals()["graph"](graph)


def flush(writer=None, name=None):
    """Flushes `writer` (default: the default writer): at once eagerly, an op in a graph."""
    del name
    writer = writer if writer is not None else (_writers[-1] if _writers else None)
    if writer is None:
        return None if executing_eagerly() else constant(False, dtype=dtypes.bool)
    return writer.flush()


def eval_dir(model_dir, name=None):
    """The directory of evaluation summaries of `model_dir` ("eval" or "eval_NAME" under it)."""
    return os.path.join(model_dir, "eval" if not name else "eval_" + name)


del summary_of, tensor_proto, get_default_graph

__getattr__ = missing_attribute(__name__)
