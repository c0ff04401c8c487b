"""Monitored training (TF1's `tf.train.MonitoredTrainingSession`, `MonitoredSession`, `Scaffold`,
`SessionManager`): a session that initializes or restores its variables from the latest
checkpoint, runs hooks around every `run`, and ends cleanly when a hook asks to stop or the input
runs out.

A job killed at any moment and started again with the same command resumes from its latest
checkpoint: checkpoints are published whole (io/checkpoint.py swaps them in atomically), so the
restart reads a complete one. On an AbortedError or UnavailableError (e.g. a cluster lost the
workers holding a variable) a MonitoredSession closes its session and makes a new one, which
restores the latest checkpoint, and runs the step again, as TF1 does.
"""

from __future__ import annotations

import logging
import os
import time

from ..errors import AbortedError, FailedPreconditionError, OutOfRangeError, UnavailableError
from ..graph.graph import get_default_graph
from ..graph.keys import GraphKeys
from ..io.checkpoint import get_checkpoint_state
from ..io.saver import Saver
from ..kernels.control_ops import group
from ..kernels.lookup_ops import tables_initializer
from ..schedule.session import Session
from ..state.variables import (
    global_variables,
    global_variables_initializer,
    local_variables_initializer,
    report_uninitialized_variables,
)
from ..summary import merge_all
from .basic_hooks import CheckpointSaverHook, StepCounterHook, SummarySaverHook
from .coordinator import Coordinator, start_queue_runners
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues

__all__ = ["Scaffold", "SessionManager", "SessionCreator", "ChiefSessionCreator", "WorkerSessionCreator",
           "MonitoredSession", "SingularMonitoredSession", "MonitoredTrainingSession"]

_log = logging.getLogger("tensorflow")
USE_DEFAULT = object()


class Scaffold:
    """The pieces a monitored session needs, each defaulted from the graph's collections at
    `finalize()` (which also finalizes the graph): init_op, ready_op, ready_for_local_init_op,
    local_init_op, summary_op (merge_all) and saver."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None,
                 copy_from_scaffold=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            c = copy_from_scaffold
            init_op = init_op or c.init_op
            init_feed_dict = init_feed_dict or c.init_feed_dict
            init_fn = init_fn or c._user_init_fn  # noqa: SLF001 - same class
            ready_op = ready_op or c.ready_op
            ready_for_local_init_op = ready_for_local_init_op or c.ready_for_local_init_op
            local_init_op = local_init_op or c.local_init_op
            summary_op = summary_op or c.summary_op
            saver = saver or c.saver
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op, self._init_feed_dict = init_op, init_feed_dict
        self._ready_op, self._ready_for_local_init_op = ready_op, ready_for_local_init_op
        self._local_init_op, self._summary_op, self._saver = local_init_op, summary_op, saver

    def finalize(self):
        """Fills in the defaults and finalizes the default graph; returns self."""
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default("init_op", GraphKeys.INIT_OP,
                                                    lambda: group(global_variables_initializer()))
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default("ready_op", GraphKeys.READY_OP, report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: report_uninitialized_variables(global_variables()))
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default("local_init_op", GraphKeys.LOCAL_INIT_OP,
                                                          Scaffold.default_local_init_op)
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP, merge_all)
        if self._saver is None:
            self._saver = _saver_or_default()
        get_default_graph().finalize()
        return self

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The one item of `collection_key`, or `default_constructor()` added to it."""
        graph = get_default_graph()
        elements = graph.get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(f'More than one item in the collection "{collection_key}". Please indicate which '
                                   f"one to use by passing it to the tf.Scaffold constructor as: "
                                   f"tf.Scaffold({arg_name}=item to use)")
            return elements[0]
        op = default_constructor()
        if op is not None:
            graph.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """Initializes the local variables and the lookup tables (TF1's: tables are session
        state, so a session restored from a checkpoint initializes them too)."""
        return group(local_variables_initializer(), tables_initializer())


def _saver_or_default():
    graph = get_default_graph()
    savers = graph.get_collection(GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which one to "
                               "use by passing it to the constructor.")
        return savers[0]
    saver = Saver(sharded=True, allow_empty=True)
    graph.add_to_collection(GraphKeys.SAVERS, saver)
    return saver


def _uninitialized(sess, op):
    if op is None:
        return []
    names = sess.run(op)
    return [n.decode() if isinstance(n, bytes) else str(n) for n in list(names)]


class SessionManager:
    """Makes sessions ready to run: restored from a checkpoint or initialized, then local init."""

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None, graph=None,
                 recovery_wait_secs=30, local_init_run_options=None, local_init_feed_dict=None):
        self._graph = graph if graph is not None else get_default_graph()
        self._local_init_op, self._ready_op = local_init_op, ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_options, self._local_init_feed_dict = local_init_run_options, local_init_feed_dict

    def _restore(self, sess, saver, checkpoint_dir, checkpoint_filename_with_path):
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return True
        if not saver or not checkpoint_dir:
            return False
        ckpt = get_checkpoint_state(checkpoint_dir)
        if not ckpt or not ckpt.model_checkpoint_path:
            return False
        saver.restore(sess, ckpt.model_checkpoint_path)
        saver.recover_last_checkpoints(ckpt.all_model_checkpoint_paths)
        return True

    def _local_init(self, sess):
        if self._local_init_op is None:
            return
        missing = _uninitialized(sess, self._ready_for_local_init_op)
        if missing:
            raise RuntimeError(f"Init operations did not make model ready for local_init. Init op: local_init_op, "
                               f"error: Variables not initialized: {', '.join(missing)}")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict, options=self._local_init_options)

    def recover_session(self, master, saver=None, checkpoint_dir=None, checkpoint_filename_with_path=None,
                        wait_for_checkpoint=False, max_wait_secs=7200, config=None):
        """(session, restored): a new session with the latest checkpoint restored when there is one."""
        sess = Session(master, graph=self._graph, config=config)
        deadline = time.time() + max_wait_secs
        while True:
            if self._restore(sess, saver, checkpoint_dir, checkpoint_filename_with_path):
                break
            if not wait_for_checkpoint or time.time() >= deadline:
                return sess, False
            time.sleep(min(self._recovery_wait_secs, max(0.0, deadline - time.time())))
        self._local_init(sess)
        missing = _uninitialized(sess, self._ready_op)
        return sess, not missing

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None,
                        checkpoint_filename_with_path=None):
        """A session ready to run: restored from the latest checkpoint when there is one, else
        `init_op`/`init_fn` run; then the local init op. RuntimeError when the model is still not ready."""
        sess = Session(master, graph=self._graph, config=config)
        restored = self._restore(sess, saver, checkpoint_dir, checkpoint_filename_with_path)
        if not restored:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        self._local_init(sess)
        missing = _uninitialized(sess, self._ready_op)
        if missing:
            raise RuntimeError(f"Init operations did not make model ready. Init op: {getattr(init_op, 'name', None)}, "
                               f"init fn: {init_fn}, error: Variables not initialized: {', '.join(missing)}")
        return sess

    def wait_for_session(self, master, config=None, max_wait_secs=float("inf")):
        """A session on a model another process initialized. dflow's variables live in each session,
        so nothing else can make this one ready: FailedPreconditionError when it is not."""
        sess = Session(master, graph=self._graph, config=config)
        if not _uninitialized(sess, self._ready_for_local_init_op):
            self._local_init(sess)
        missing = _uninitialized(sess, self._ready_op)
        if missing:
            sess.close()
            raise FailedPreconditionError(None, None, "wait_for_session: the model is not initialized (variables "
                                          f"{', '.join(missing)}); dflow's variables live in each session, so no "
                                          "other process initializes them: use a chief session (is_chief=True).")
        return sess


class SessionCreator:
    """Makes the session a MonitoredSession runs."""

    def create_session(self):
        raise NotImplementedError("create_session")


class ChiefSessionCreator(SessionCreator):
    """Restores from the latest checkpoint in `checkpoint_dir` (or `checkpoint_filename_with_path`),
    else initializes with the scaffold's init op."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._checkpoint_dir, self._checkpoint_path = checkpoint_dir, checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config

    def create_session(self):
        self._scaffold.finalize()
        manager = SessionManager(local_init_op=self._scaffold.local_init_op, ready_op=self._scaffold.ready_op,
                                 ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                                 graph=get_default_graph())
        return manager.prepare_session(self._master, saver=self._scaffold.saver, checkpoint_dir=self._checkpoint_dir,
                                       checkpoint_filename_with_path=self._checkpoint_path, config=self._config,
                                       init_op=self._scaffold.init_op, init_feed_dict=self._scaffold.init_feed_dict,
                                       init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """A non-chief worker's session: it initializes nothing (see SessionManager.wait_for_session)."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config, self._max_wait_secs = master, config, max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        manager = SessionManager(local_init_op=self._scaffold.local_init_op, ready_op=self._scaffold.ready_op,
                                 ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                                 graph=get_default_graph())
        return manager.wait_for_session(self._master, config=self._config, max_wait_secs=self._max_wait_secs)


class _MonitoredSession:
    """Hooks around a session's runs; `should_recover`: a run failing with AbortedError or
    UnavailableError makes a new session (restoring the latest checkpoint) and runs again."""

    _RECOVERABLE = (AbortedError, UnavailableError)

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph_was_finalized = get_default_graph().finalized
        self._hooks = list(hooks or [])
        for h in self._hooks:
            h.begin()
        self._creator = session_creator or ChiefSessionCreator()
        self._should_recover = should_recover
        self._stop_grace = stop_grace_period_secs
        self._sess = None
        self._coord = None
        self._should_stop = False
        self._create()

    def _create(self):
        self._sess = self._creator.create_session()
        self._coord = Coordinator(clean_stop_exception_types=[])
        self._threads = start_queue_runners(sess=self._sess, coord=self._coord) \
            if self._sess.graph.get_collection(GraphKeys.QUEUE_RUNNERS) else []
        for h in self._hooks:
            h.after_create_session(self._sess, self._coord)

    @property
    def graph(self):
        return self._sess.graph if self._sess is not None else get_default_graph()

    def _tf_sess(self):
        return self._sess

    def should_stop(self):
        return self._sess is None or self._should_stop or self._coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs `fetches` with every hook's before_run/after_run around it."""
        while True:
            try:
                return self._hooked_run(fetches, feed_dict, options, run_metadata)
            except self._RECOVERABLE as e:
                if not self._should_recover:
                    raise
                _log.info("An error was raised (%s: %s). The current session will be closed and a new session "
                          "will be created, restoring the latest checkpoint.", type(e).__name__, e.message)
                self._close_session()
                self._create()

    def _hooked_run(self, fetches, feed_dict, options, run_metadata):
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        context = SessionRunContext(original_args=SessionRunArgs(fetches, feed_dict), session=self._sess)
        actual = {"caller": fetches}
        hook_feeds = {}
        for h in self._hooks:
            request = h.before_run(context)
            if request is None:
                continue
            if request.fetches is not None:
                actual[h] = request.fetches
            if request.feed_dict:
                _no_overlap(hook_feeds, request.feed_dict, "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options is not None:
                options = _merge_options(options, request.options)
        if hook_feeds and feed_dict:
            _no_overlap(feed_dict, hook_feeds, "Same tensor is fed by a SessionRunHook and user.")
        feeds = {**(feed_dict or {}), **hook_feeds} if hook_feeds else feed_dict
        try:
            outputs = self._sess.run(actual, feed_dict=feeds, options=options, run_metadata=run_metadata)
        except OutOfRangeError:
            self._should_stop = True  # the input ran out: the loop ends (the `with` block swallows it)
            raise
        for h in self._hooks:
            h.after_run(context, SessionRunValues(results=outputs.get(h), options=options, run_metadata=run_metadata))
        self._should_stop = self._should_stop or context.stop_requested
        return outputs["caller"]

    def run_step_fn(self, step_fn):
        """Calls `step_fn(step_context)`; the context runs with hooks (`run_with_hooks`), gives the
        raw `session`, and `request_stop()`."""
        return step_fn(_StepContext(self))

    def close(self):
        self._close_internal()

    def _close_session(self):
        sess, self._sess = self._sess, None
        if sess is not None:
            sess.close()

    def _close_internal(self, exception_type=None):
        try:
            if not exception_type and self._sess is not None:
                for h in self._hooks:
                    h.end(self._sess)
        finally:
            try:
                if self._coord is not None and self._threads:
                    self._coord.request_stop()
                    self._coord.join(self._threads, stop_grace_period_secs=self._stop_grace, ignore_live_threads=True)
            finally:
                self._close_session()
                if not self._graph_was_finalized:
                    get_default_graph()._unsafe_unfinalize()  # noqa: SLF001 - TF1 does the same

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type is not None and issubclass(exception_type, (OutOfRangeError, StopIteration)):
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None


class _StepContext:
    def __init__(self, monitored):
        self._monitored = monitored

    @property
    def session(self):
        return self._monitored._sess  # noqa: SLF001

    def run_with_hooks(self, *args, **kwargs):
        return self._monitored.run(*args, **kwargs)

    def request_stop(self):
        self._monitored._should_stop = True  # noqa: SLF001


def _no_overlap(a, b, message):
    common = set(a) & set(b)
    if common:
        raise RuntimeError(f"{message} Conflict(s): {sorted(str(getattr(t, 'name', t)) for t in common)}")


def _merge_options(options, extra):
    if options is None:
        return extra
    if getattr(extra, "trace_level", 0) > getattr(options, "trace_level", 0):
        options.trace_level = extra.trace_level
    if getattr(extra, "timeout_in_ms", 0) and (not getattr(options, "timeout_in_ms", 0)
                                               or extra.timeout_in_ms < options.timeout_in_ms):
        options.timeout_in_ms = extra.timeout_in_ms
    return options


class MonitoredSession(_MonitoredSession):
    """A session with hooks that recovers from AbortedError/UnavailableError (TF1)."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True, stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A chief session with hooks, no recovery; `raw_session()` gives the session itself."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False, stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        return self._sess


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None, hooks=None,  # noqa: N802
                             chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100, max_wait_secs=7200,
                             save_checkpoint_steps=USE_DEFAULT, summary_dir=None):
    """A MonitoredSession for training, as TF1 sets it up: on the chief, restore from or
    initialize into `checkpoint_dir`, with a StepCounterHook and a SummarySaverHook (every 100
    steps by default) writing to `summary_dir` (default `checkpoint_dir`), and a
    CheckpointSaverHook (every 600 s by default, or `save_checkpoint_steps`), then `hooks`."""
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config, max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or (save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                              save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0)
                           or (save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(CheckpointSaverHook(os.fspath(checkpoint_dir), save_steps=save_checkpoint_steps,
                                             save_secs=save_checkpoint_secs, scaffold=scaffold))
    all_hooks.extend(hooks or [])
    return MonitoredSession(session_creator=creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs)
