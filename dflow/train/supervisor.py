"""`tf.train.Supervisor` (TF1's training loop before MonitoredTrainingSession) and
`tf.train.basic_train_loop`.

A Supervisor takes its pieces from the graph's collections when not given (init_op, ready_op,
local_init_op, saver, summary_op, global_step: TF1's defaults, added to the collections), then
finalizes the graph. `managed_session()` / `prepare_or_wait_for_session()` hand out a session
restored from `logdir`'s latest checkpoint, or initialized, via SessionManager; on the chief they
write graph.pbtxt and the graph to the event file and start the standard services, threads on
the Supervisor's Coordinator: a checkpoint every `save_model_secs` (the first at once, as TF1's
LooperThread), the summary op and the steps/sec every `save_summaries_secs`; then the queue
runners. `stop()` stops and joins them and closes the summary writer. As in TF1, nothing is saved
at stop: a program saves its last step itself (`sv.saver.save(sess, sv.save_path, global_step=...)`)
or loses what came after the last timed checkpoint.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time

from ..errors import AbortedError, InvalidArgumentError
from ..graph import dtypes
from ..graph.graph import executing_eagerly, get_default_graph
from ..graph.keys import GraphKeys
from ..io.graph_io import write_graph
from ..io.saver import Saver
from ..kernels.control_ops import group
from ..kernels.lookup_ops import tables_initializer
from ..state.variables import (
    global_variables,
    global_variables_initializer,
    local_variables_initializer,
    report_uninitialized_variables,
)
from ..summary import FileWriter, SessionLog, Summary, merge_all
from .coordinator import Coordinator, LooperThread
from .monitored_session import SessionManager
from .schedules import global_step as _global_step_value

__all__ = ["Supervisor", "basic_train_loop"]

_log = logging.getLogger("tensorflow")


class Supervisor:
    """TF1's Supervisor: a Coordinator, a SessionManager, a Saver and a summary writer for
    `logdir`, and the threads that checkpoint and write summaries on timers (see the module).
    Only the chief (`is_chief`) saves, writes summaries and starts the standard services."""

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT, is_chief=True,
                 init_op=USE_DEFAULT, init_feed_dict=None, local_init_op=USE_DEFAULT, logdir=None,
                 summary_op=USE_DEFAULT, saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120, checkpoint_basename="model.ckpt",
                 session_manager=None, summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        if executing_eagerly():
            raise RuntimeError("Supervisors are incompatible with eager execution.")
        graph = graph if graph is not None else get_default_graph()
        with graph.as_default():
            self._ready_op = _default(ready_op, GraphKeys.READY_OP, report_uninitialized_variables)
            self._ready_for_local_init_op = _default(ready_for_local_init_op, GraphKeys.READY_FOR_LOCAL_INIT_OP,
                                                     lambda: None)
            self._init_op = _default(init_op, GraphKeys.INIT_OP, global_variables_initializer)
            self._init_feed_dict = init_feed_dict
            self._local_init_op = _default(local_init_op, GraphKeys.LOCAL_INIT_OP,
                                           lambda: group(local_variables_initializer(), tables_initializer()))
            self._saver = _default(saver, GraphKeys.SAVERS, lambda: Saver() if global_variables() else None)
            self._summary_op = _default(summary_op, GraphKeys.SUMMARY_OP, merge_all)
            self._global_step = _default(global_step, GraphKeys.GLOBAL_STEP, lambda: _default_global_step(graph))
        self._graph = graph
        self._is_chief = is_chief
        self._coord = Coordinator()
        self._recovery_wait_secs, self._stop_grace_secs = recovery_wait_secs, stop_grace_secs
        self._init_fn, self._local_init_run_options = init_fn, local_init_run_options
        self._logdir = self._save_summaries_secs = self._save_model_secs = None
        self._save_path = self._summary_writer = None
        self._graph_added_to_summary = False
        if is_chief:
            self._logdir = os.fspath(logdir) if logdir else None
            self._save_summaries_secs, self._save_model_secs = save_summaries_secs, save_model_secs
            if self._logdir:
                self._save_path = os.path.join(self._logdir, checkpoint_basename)
            if summary_writer is Supervisor.USE_DEFAULT:
                self._summary_writer = FileWriter(self._logdir) if self._logdir else None
            else:
                self._summary_writer = summary_writer
        self._session_manager = session_manager or SessionManager(
            local_init_op=self._local_init_op, ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op, graph=graph,
            recovery_wait_secs=recovery_wait_secs, local_init_run_options=local_init_run_options)
        self._verify_setup()
        graph.finalize()

    def _verify_setup(self):
        """A non-chief's variables must be placed (TF1: they live on parameter servers)."""
        if self._is_chief:
            return
        for op in self._graph.get_operations():
            if op.type in ("Variable", "VariableV2") and not op.device:
                raise ValueError(f"When using replicas, all Variables must have their device set: {op.name}")

    # ---- the pieces ----------------------------------------------------------------------------
    is_chief = property(lambda self: self._is_chief)
    session_manager = property(lambda self: self._session_manager)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)

    # ---- sessions ------------------------------------------------------------------------------
    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False, max_wait_secs=7200,
                                    start_standard_services=True):
        """A session ready to run: on the chief restored from `logdir`'s latest checkpoint or
        initialized (then graph written, standard services started); elsewhere one the chief made
        ready (dflow: FailedPreconditionError, its variables live in each session). Queue runners
        are started when `start_standard_services`."""
        self._coord.clear_stop()
        if self._summary_writer:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                _log.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config, max_wait_secs=max_wait_secs)
        if start_standard_services:
            _log.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True, close_summary_writer=True):
        """`with sv.managed_session() as sess:` a prepared session; an exception in the block
        (other than OutOfRangeError, a clean stop) stops the services and is re-raised; the
        session is closed at the end."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(master=master, config=config,
                                                    start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # noqa: BLE001 - handed to the coordinator, re-raised by stop()'s join
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    sess.close()

    def _write_graph(self):
        if self._logdir:
            try:
                write_graph(self._graph, self._logdir, "graph.pbtxt")
            except InvalidArgumentError as e:  # a graph with Python callables or queues has no file form
                _log.warning("Supervisor: graph.pbtxt not written: %s", e.message)
        if self._summary_writer and not self._graph_added_to_summary:
            self._summary_writer.add_graph(self._graph)
            self._summary_writer.add_meta_graph(self._graph)
            self._graph_added_to_summary = True

    # ---- services ------------------------------------------------------------------------------
    def start_standard_services(self, sess):
        """Starts (and returns) the chief's threads: summaries and steps/sec every
        `save_summaries_secs`, a checkpoint every `save_model_secs`. RuntimeError off the chief."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because only chief supervisors "
                               "can write events.")
        if not self._logdir:
            _log.warning("Standard services need a 'logdir' passed to the SessionManager")
            return None
        if self._global_step is not None and self._summary_writer:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START),
                                                 _global_step_value(sess, self._global_step))
        threads = []
        if self._save_summaries_secs and self._summary_writer:
            if self._summary_op is not None:
                threads.append(_SummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(_StepCounterThread(self, sess))
        if self._saver and self._save_model_secs:
            threads.append(_CheckpointThread(self, sess))
        for t in threads:
            t.start()
        return threads

    def start_queue_runners(self, sess, queue_runners=None):
        """Starts the queue runners (default: the QUEUE_RUNNERS collection) on the Supervisor's
        Coordinator; returns their threads."""
        if executing_eagerly():
            raise RuntimeError("Queues are not compatible with eager execution.")
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread on the Supervisor's Coordinator calling `target(*args, **kwargs)`
        every `timer_interval_secs` (at once first)."""
        looper = LooperThread(self._coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Requests the stop, joins the threads (re-raising an exception a thread or the managed
        block reported) and closes the summary writer with a STOP session log."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            if close_summary_writer and self._summary_writer:
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex=None):
        self._coord.request_stop(ex=ex)

    def should_stop(self):
        return self._coord.should_stop()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def summary_computed(self, sess, summary, global_step=None):
        """Writes a summary the caller ran (at the global step's value when not given)."""
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = _global_step_value(sess, self._global_step)
        self._summary_writer.add_summary(summary, global_step)

    # TF1's CamelCase aliases
    PrepareSession = prepare_or_wait_for_session  # noqa: N815
    StartQueueRunners = start_queue_runners  # noqa: N815
    StartStandardServices = start_standard_services  # noqa: N815
    Stop = stop  # noqa: N815
    RequestStop = request_stop  # noqa: N815
    Loop = loop  # noqa: N815
    ShouldStop = should_stop  # noqa: N815
    StopOnException = stop_on_exception  # noqa: N815
    WaitForStop = wait_for_stop  # noqa: N815
    SummaryComputed = summary_computed  # noqa: N815


def _default(value, collection_key, make):
    """TF1's USE_DEFAULT: the collection's first item, else `make()` added to the collection."""
    if value is not Supervisor.USE_DEFAULT:
        return value
    graph = get_default_graph()
    items = graph.get_collection(collection_key)
    if len(items) > 1:
        _log.info("Found %d %s operations. Returning the first one.", len(items), collection_key)
    if items:
        return items[0]
    made = make()
    if made is not None:
        graph.add_to_collection(collection_key, made)
    return made


def _default_global_step(graph):
    """The tensor `global_step:0` when the graph has an integer one (TF1), else None."""
    try:
        step = graph.get_tensor_by_name("global_step:0")
    except (KeyError, ValueError):
        return None
    if step.dtype.base_dtype in (dtypes.int32, dtypes.int64):
        return step
    _log.warning("Found 'global_step' is not an int type: %s", step.dtype)
    return None


class _SummaryThread(LooperThread):
    """Runs the summary op (and reads the global step) every save_summaries_secs."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self):
        if self._sv.global_step is not None:
            summary, step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary, step = self._sess.run(self._sv.summary_op), None
        if self._sv.summary_writer:
            _log.info("Recording summary at step %s.", step)
            self._sv.summary_writer.add_summary(summary, step)


class _StepCounterThread(LooperThread):
    """Writes `global_step/sec` every save_summaries_secs."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess
        self._tag = f"{sv.global_step.op.name}/sec"

    def start_loop(self):
        self._last_time = time.time()
        self._last_step = _global_step_value(self._sess, self._sv.global_step)

    def run_loop(self):
        step = _global_step_value(self._sess, self._sv.global_step)
        now = time.time()
        elapsed, added = now - self._last_time, step - self._last_step
        self._last_time, self._last_step = now, step
        rate = added / elapsed if elapsed > 0 else float("inf")
        if self._sv.summary_writer:
            self._sv.summary_writer.add_summary(Summary(value=[Summary.Value(tag=self._tag, simple_value=rate)]), step)
        _log.info("%s: %g", self._tag, rate)


class _CheckpointThread(LooperThread):
    """Saves `save_path-STEP` every save_model_secs (the first at once)."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self):
        _log.info("Saving checkpoint to path %s", self._sv.save_path)
        self._sv.saver.save(self._sess, self._sv.save_path, global_step=self._sv.global_step)
        if self._sv.summary_writer and self._sv.global_step is not None:
            step = _global_step_value(self._sess, self._sv.global_step)
            self._sv.summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._sv.save_path), step)


def basic_train_loop(supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """Calls `train_step_fn(sess, *args, **kwargs)` in a managed session until the supervisor
    should stop; an AbortedError starts a new session (restored from the latest checkpoint)."""
    args, kwargs = args or [], kwargs or {}
    should_retry = True
    while should_retry:
        try:
            should_retry = False
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except AbortedError:
            should_retry = True
