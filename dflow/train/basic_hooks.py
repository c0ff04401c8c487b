"""The hooks of monitored training (TF1's `basic_session_run_hooks`): stop at a step, save
checkpoints and summaries on a timer, log tensors, fail on a NaN loss, count steps per second,
run final ops, feed from a function.

Each hook asks for the global step's value in the run it watches (the value at the start of
that run: dflow's reads see the run's starting state, as TF1's do before the increment), and reads
it again only when its timer may fire, as TF1 does, so a hook costs no extra run per step.
"""

from __future__ import annotations

import logging
import os
import time

import numpy as np

from ..errors import InvalidArgumentError, OutOfRangeError
from ..graph.graph import get_default_graph
from ..graph.keys import GraphKeys
from ..io.graph_io import write_graph
from ..summary import FileWriterCache, SessionLog, Summary
from .schedules import get_global_step
from .session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["SecondOrStepTimer", "StopAtStepHook", "CheckpointSaverHook", "CheckpointSaverListener",
           "LoggingTensorHook", "NanTensorHook", "NanLossDuringTrainingError", "StepCounterHook",
           "SummarySaverHook", "FinalOpsHook", "FeedFnHook", "GlobalStepWaiterHook"]

_log = logging.getLogger("tensorflow")  # TF1's logger: tf.logging's verbosity applies to the hooks


class SecondOrStepTimer:
    """Fires every `every_secs` seconds or every `every_steps` steps (exactly one of them)."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("exactly one of every_secs and every_steps should be provided.")
        self._every_secs, self._every_steps = every_secs, every_steps
        self.reset()

    def reset(self):
        self._last_time = None
        self._last_step = None

    def should_trigger_for_step(self, step):
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._every_secs is not None and time.time() >= self._last_time + self._every_secs:
            return True
        return self._every_steps is not None and step >= self._last_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Marks `step` as fired; returns (seconds, steps) since the last firing, (None, None) first."""
        now = time.time()
        elapsed = (None, None) if self._last_time is None else (now - self._last_time, step - self._last_step)
        self._last_time, self._last_step = now, step
        return elapsed

    def last_triggered_step(self):
        return self._last_step


def _global_step_tensor(hook):
    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook}.")
    return step


def _due_step(timer, step_tensor, run_context, run_values, steps_per_run):
    """The global step when `timer` fires after this run, else None: the step value the run saw
    (its start) says whether it may; only then is the step read again, as TF1's hooks do."""
    if timer.should_trigger_for_step(int(run_values.results) + steps_per_run):
        step = int(run_context.session.run(step_tensor))
        if timer.should_trigger_for_step(step):
            return step
    return None


def _as_graph_element(obj):
    """A tensor, op or tensor name (`"loss"` means `"loss:0"`) as the graph's element."""
    graph = get_default_graph()
    if isinstance(obj, str) and ":" not in obj:
        try:
            return graph.as_graph_element(obj + ":0")
        except (KeyError, ValueError):
            pass
    return graph.as_graph_element(obj)


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step` (or `num_steps` past its value
    when the session was created: a resumed job runs the remaining steps only with last_step)."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self):
        self._step = _global_step_tensor("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._step)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._step)

    def after_run(self, run_context, run_values):
        if int(run_values.results) + 1 >= self._last_step:
            if int(run_context.session.run(self._step)) >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener:
    """Called around each checkpoint a CheckpointSaverHook writes; `after_save` returning True
    stops the training loop."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint `checkpoint_dir/model.ckpt-STEP` when the session is created, every
    `save_secs` or `save_steps`, and at the end; writes graph.pbtxt and the graph to the
    directory's event file."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None, save_graph_def=True):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver, self._scaffold = saver, scaffold
        self._checkpoint_dir = os.fspath(checkpoint_dir)
        self._save_path = os.path.join(self._checkpoint_dir, checkpoint_basename)
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._save_graph_def = save_graph_def
        self._steps_per_run = 1

    def begin(self):
        self._writer = FileWriterCache.get(self._checkpoint_dir)
        self._step = _global_step_tensor("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        step = int(session.run(self._step))
        if self._save_graph_def:
            graph = get_default_graph()
            try:
                write_graph(graph, self._checkpoint_dir, "graph.pbtxt")
            except InvalidArgumentError as e:  # a graph with Python callables has no file form
                _log.warning("CheckpointSaverHook: graph.pbtxt not written: %s", e.message)
            self._writer.add_graph(graph)
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context):
        return SessionRunArgs(self._step)

    def after_run(self, run_context, run_values):
        step = _due_step(self._timer, self._step, run_context, run_values, self._steps_per_run)
        if step is not None:
            self._timer.update_last_triggered_step(step)
            if self._save(run_context.session, step):
                run_context.request_stop()

    def end(self, session):
        step = int(session.run(self._step))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _save(self, session, step):
        for listener in self._listeners:
            listener.before_save(session, step)
        _log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step, write_meta_graph=self._save_graph_def)
        self._writer.add_session_log(SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step)
        stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                _log.info("A CheckpointSaverListener requested that training be stopped. listener: %s", listener)
                stop = True
        return stop

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(f"No items in collection {GraphKeys.SAVERS}. Please add a saver to the collection "
                               "or provide a saver or scaffold.")
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which one to "
                               "use by passing it to the constructor.")
        self._saver = savers[0]
        return self._saver


class LoggingTensorHook(SessionRunHook):
    """Logs `tensors` (a list, or a dict tag → tensor) every `every_n_iter` runs or `every_n_secs`,
    and/or at the end, as `tag = value, ... (0.123 sec)` on TF1's logger."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors.keys())
        self._tensors = tensors
        self._timer = _NeverTimer() if only_at_end else SecondOrStepTimer(every_secs=every_n_secs,
                                                                          every_steps=every_n_iter)
        self._log_at_end = at_end
        self._formatter = formatter

    def begin(self):
        self._timer.reset()
        self._iter_count = 0
        self._current = {tag: _as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current) if self._should_trigger else None

    def _log_tensors(self, values):
        elapsed, _ = self._timer.update_last_triggered_step(self._iter_count)
        with np.printoptions(suppress=True):
            if self._formatter:
                _log.info(self._formatter(values))
                return
            stats = ", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order)
        if elapsed is not None:
            _log.info("%s (%.3f sec)", stats, elapsed)
        else:
            _log.info("%s", stats)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current))


class _NeverTimer(SecondOrStepTimer):
    def __init__(self):
        self.reset()

    def should_trigger_for_step(self, step):
        return False


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails (NanLossDuringTrainingError) or requests a stop when `loss_tensor` is NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss = loss_tensor
        self._fail = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            message = "Model diverged with loss = NaN."
            if self._fail:
                _log.error(message)
                raise NanLossDuringTrainingError
            _log.warning(message)
            run_context.request_stop()


class StepCounterHook(SessionRunHook):
    """Logs and writes (as the summary `global_step/sec`) the steps per second, every
    `every_n_steps` steps or `every_n_secs` seconds."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._writer = summary_writer
        self._output_dir = output_dir
        self._steps_per_run = 1

    def begin(self):
        if self._writer is None and self._output_dir:
            self._writer = FileWriterCache.get(self._output_dir)
        self._step = _global_step_tensor("StepCounterHook")
        self._tag = self._step.op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._step)

    def after_run(self, run_context, run_values):
        step = _due_step(self._timer, self._step, run_context, run_values, self._steps_per_run)
        if step is None:
            return
        elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(step)
        if elapsed_time is not None and elapsed_time > 0:
            rate = elapsed_steps / elapsed_time
            if self._writer is not None:
                self._writer.add_summary(Summary(value=[Summary.Value(tag=self._tag, simple_value=rate)]), step)
            _log.info("%s: %g", self._tag, rate)


class SummarySaverHook(SessionRunHook):
    """Runs the summary op every `save_steps` steps or `save_secs` seconds and writes its result
    to `output_dir` (or `summary_writer`) at the global step."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op, self._scaffold = summary_op, scaffold
        self._writer, self._output_dir = summary_writer, output_dir
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._writer is None and self._output_dir:
            self._writer = FileWriterCache.get(self._output_dir)
        self._next_step = None
        self._step = _global_step_tensor("SummarySaverHook")

    def _ops(self):
        op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if op is None:
            return None
        return op if isinstance(op, list) else [op]

    def before_run(self, run_context):
        self._request = self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        requests = {"global_step": self._step}
        if self._request and self._ops() is not None:
            requests["summary"] = self._ops()
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        if not self._writer:
            return
        step = int(run_values.results["global_step"]) + 1
        if self._next_step is None or self._request:
            step = int(run_context.session.run(self._step))
        if self._next_step is None:
            self._writer.add_session_log(SessionLog(status=SessionLog.START), step)
        if self._request:
            self._timer.update_last_triggered_step(step)
            for summary in run_values.results.get("summary", []):
                self._writer.add_summary(summary, step)
        self._next_step = step + 1

    def end(self, session=None):
        if self._writer:
            self._writer.flush()


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` when the session ends; their values are `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._feed = final_ops_feed_dict
        self._values = None

    @property
    def final_ops_values(self):
        return self._values

    def end(self, session):
        if self._final_ops is not None:
            try:
                self._values = session.run(self._final_ops, feed_dict=self._feed)
            except OutOfRangeError:
                _log.warning("An OutOfRangeError or StopIteration exception is raised by the code in FinalOpsHook. "
                             "This typically means the Ops running by the FinalOpsHook have a dependency back to "
                             "some input source, which should not happen.")
                raise


class FeedFnHook(SessionRunHook):
    """Feeds `feed_fn()` (a feed dict) into every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first run until the global step reaches `wait_until_step` (for a worker that
    waits for others to warm up); with 0 it does nothing."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = self._wait_until_step <= 0
        self._step = None if self._worker_is_started else _global_step_tensor("GlobalStepWaiterHook")

    def before_run(self, run_context):
        while not self._worker_is_started:
            current = int(run_context.session.run(self._step))
            if current >= self._wait_until_step:
                self._worker_is_started = True
                return None
            _log.info("Waiting for global step %d before starting training (now %d).", self._wait_until_step,
                      current)
            time.sleep(0.5)
        return None
