"""`tf.contrib.learn.Experiment` and its `RunConfig`, over the core Estimator (TF 1.15's
contrib/learn/python/learn/experiment.py as single-process programs use it)."""

from __future__ import annotations

import copy
import logging
import time

from ...devices import ConfigProto
from ...estimator import Estimator
from ...estimator import RunConfig as _CoreRunConfig
from ...estimator.run_config import _USE_DEFAULT

__all__ = ["Experiment", "RunConfig"]

_log = logging.getLogger("dflow.contrib.learn")


class RunConfig(_CoreRunConfig):
    """TF 1.x's `tf.contrib.learn.RunConfig`: the core RunConfig plus the session settings it
    built its ConfigProto from (`log_device_placement`, `num_cores`, `gpu_memory_fraction`) and the
    cluster names of a single process (`master`, `evaluation_master`)."""

    def __init__(self, master=None, num_cores=0, log_device_placement=False, gpu_memory_fraction=1,
                 tf_random_seed=None, save_summary_steps=100, save_checkpoints_secs=_USE_DEFAULT,
                 save_checkpoints_steps=None, keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000,
                 log_step_count_steps=100, protocol=None, evaluation_master="", model_dir=None, session_config=None,
                 session_creation_timeout_secs=7200):
        if save_checkpoints_steps is None:  # neither given: every 600 s, as the core RunConfig
            save_checkpoints_steps = _USE_DEFAULT
        if session_config is None:
            session_config = ConfigProto(log_device_placement=log_device_placement,
                                         intra_op_parallelism_threads=num_cores,
                                         inter_op_parallelism_threads=num_cores)
        super().__init__(model_dir=model_dir, tf_random_seed=tf_random_seed, save_summary_steps=save_summary_steps,
                         save_checkpoints_steps=save_checkpoints_steps, save_checkpoints_secs=save_checkpoints_secs,
                         session_config=session_config, keep_checkpoint_max=keep_checkpoint_max,
                         keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
                         log_step_count_steps=log_step_count_steps, protocol=protocol,
                         session_creation_timeout_secs=session_creation_timeout_secs)
        self._master = master or ""
        self._evaluation_master = evaluation_master or ""
        self._num_cores = num_cores
        self._log_device_placement = log_device_placement
        self._gpu_memory_fraction = gpu_memory_fraction

    master = property(lambda self: self._master)
    evaluation_master = property(lambda self: self._evaluation_master)
    num_cores = property(lambda self: self._num_cores)
    gpu_memory_fraction = property(lambda self: self._gpu_memory_fraction)
    tf_config = property(lambda self: self.session_config)
    environment = property(lambda self: "local")

    def replace(self, **kwargs):
        core = _CoreRunConfig.__new__(_CoreRunConfig)  # the core's replace, then this one's own settings
        core.__dict__.update(self.__dict__)
        new = copy.copy(self)
        new.__dict__.update(core.replace(**kwargs).__dict__)
        return new

    def uid(self, whitelist=None):
        """A string that is the same for equal configs (TF 1.x uses it to compare configs)."""
        del whitelist
        keys = ["model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
                "save_checkpoints_secs", "keep_checkpoint_max", "keep_checkpoint_every_n_hours",
                "log_step_count_steps", "master", "num_cores", "gpu_memory_fraction"]
        return ", ".join(f"{k}={getattr(self, k)!r}" for k in keys)


class Experiment:
    """Trains and evaluates an Estimator: `train()` to `train_steps`, `evaluate()` for
    `eval_steps` (None: until the eval input ends), `train_and_evaluate()` (both, returning
    `(eval_result, export_results)`), `continuous_train_and_eval()`, `test()` (one step of each).

    As in TF 1.x, a core `tf.estimator.Estimator` takes its metrics from the EstimatorSpec's
    `eval_metric_ops`: `eval_metrics` must be None (ValueError otherwise). One process runs
    everything: `min_eval_frequency` evaluates every that many training steps, in turns."""

    def __init__(self, estimator, train_input_fn, eval_input_fn, eval_metrics=None, train_steps=None, eval_steps=100,
                 train_monitors=None, eval_hooks=None, local_eval_frequency=None, eval_delay_secs=120,
                 continuous_eval_throttle_secs=60, min_eval_frequency=None, delay_workers_by_global_step=False,
                 export_strategies=None, train_steps_per_iteration=None, checkpoint_and_export=False,
                 saving_listeners=None, check_interval_secs=5):
        if not isinstance(estimator, Estimator):
            raise ValueError("`estimator` must implement `tf.contrib.learn.Evaluable` or `tf.estimator.Estimator`.")
        if eval_metrics is not None:
            raise ValueError("`eval_metrics` must be `None` with `tf.estimator.Estimator`. "
                             "Use `eval_metric_ops` in `tf.estimator.EstimatorSpec` instead.")
        if train_steps_per_iteration is not None and not isinstance(train_steps_per_iteration, int):
            raise ValueError("`train_steps_per_iteration` must be an integer.")
        self._estimator = estimator
        self._train_input_fn = train_input_fn
        self._eval_input_fn = eval_input_fn
        self._train_steps = train_steps
        self._eval_steps = eval_steps
        self._train_monitors = list(train_monitors or [])
        self._eval_hooks = list(eval_hooks or [])
        self._min_eval_frequency = min_eval_frequency or local_eval_frequency
        self._eval_delay_secs = eval_delay_secs
        self._export_strategies = list(export_strategies or [])
        self._train_steps_per_iteration = train_steps_per_iteration
        self._saving_listeners = saving_listeners
        self._continuous_eval_throttle_secs = continuous_eval_throttle_secs

    estimator = property(lambda self: self._estimator)
    train_steps = property(lambda self: self._train_steps)
    eval_steps = property(lambda self: self._eval_steps)

    def extend_train_hooks(self, additional_hooks):
        self._train_monitors.extend(additional_hooks)

    def _train(self, max_steps=None, steps=None):
        return self._estimator.train(input_fn=self._train_input_fn, steps=steps, max_steps=max_steps,
                                     hooks=list(self._train_monitors), saving_listeners=self._saving_listeners)

    def _evaluate(self, name, steps):
        return self._estimator.evaluate(input_fn=self._eval_input_fn, steps=steps, hooks=list(self._eval_hooks),
                                        name=name)

    def _maybe_export(self, eval_result, checkpoint_path=None):
        return [s.export(self._estimator, f"{self._estimator.model_dir}/export/{s.name}",
                         checkpoint_path=checkpoint_path, eval_result=eval_result) for s in self._export_strategies]

    def train(self, delay_secs=None):
        """Trains the estimator to `train_steps` (global step), after `delay_secs` (default 0 here:
        the one process is the chief)."""
        if delay_secs:
            time.sleep(delay_secs)
        return self._train(max_steps=self._train_steps)

    def evaluate(self, delay_secs=None, name=None):
        """Evaluates the latest checkpoint for `eval_steps` (name: the eval directory's suffix)."""
        if delay_secs:
            time.sleep(delay_secs)
        return self._evaluate(name or "one_pass", self._eval_steps)

    def train_and_evaluate(self):
        """Trains to `train_steps` (evaluating every `min_eval_frequency` steps when set), then
        evaluates; returns `(eval_result, export_results)`."""
        if self._min_eval_frequency and self._train_steps:
            step = 0
            while step < self._train_steps:
                step = min(step + self._min_eval_frequency, self._train_steps)
                self._train(max_steps=step)
                if step < self._train_steps:
                    self._evaluate(None, self._eval_steps)
        else:
            self._train(max_steps=self._train_steps)
        eval_result = self._evaluate(None, self._eval_steps)
        return eval_result, self._maybe_export(eval_result)

    local_run = train_and_evaluate

    def continuous_train_and_eval(self, continuous_eval_predicate_fn=None):
        """Trains `train_steps_per_iteration` steps (default train_steps / 10, or 1000) and
        evaluates, in turns, until `train_steps` or until the predicate says stop."""
        if continuous_eval_predicate_fn is not None and not callable(continuous_eval_predicate_fn):
            raise ValueError("`continuous_eval_predicate_fn` must be a callable, or None.")
        per_iteration = self._train_steps_per_iteration or (
            int(self._train_steps / 10) if self._train_steps is not None else 1000)
        eval_result, export_results = None, None
        while continuous_eval_predicate_fn is None or continuous_eval_predicate_fn(eval_result):
            if eval_result and self._train_steps and eval_result.get("global_step", 0) >= self._train_steps:
                break
            self._train(steps=per_iteration)
            eval_result = self._evaluate("one_pass", self._eval_steps)
            export_results = self._maybe_export(eval_result)
        return eval_result, export_results

    def test(self):
        """One training step and one evaluation step; returns the evaluation."""
        self._train(steps=1)
        eval_result = self._evaluate("one_pass", 1)
        self._maybe_export(eval_result)
        return eval_result

    def run_std_server(self):
        raise ValueError("Could not start server; be sure to specify cluster_spec, task_type, master, and task in "
                         "RunConfig or set the TF_CONFIG environment variable. (dflow runs an Experiment in one "
                         "process; a Dask scheduler spreads its work)")
