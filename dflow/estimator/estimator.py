"""TF1's `tf.estimator.Estimator`: a model function trained, evaluated and used for prediction,
each call in a fresh graph, with its state in checkpoints under `model_dir`.

`train` runs through `MonitoredTrainingSession` with TF1's hooks (StopAtStepHook for steps or
max_steps, NanTensorHook, LoggingTensorHook, a CheckpointSaverHook as RunConfig says, summaries
every `save_summary_steps`; the CheckpointSaverHook writes no graph.pbtxt or meta graph, since
graphs reading a tf.data iterator cannot be serialized yet), so a second `train` call, or a job started again after a crash,
resumes from the latest checkpoint and its global step. `evaluate` restores a checkpoint, runs the
metrics' update ops until the input ends (or `steps`), reads their values once at the end and
writes them as summaries under `model_dir/eval` (or `eval_<name>`). `predict` restores a
checkpoint and yields the predictions batch by batch, one example at a time by default.
"""

from __future__ import annotations

import copy
import inspect
import logging
import os
import re
import shutil
import tempfile
import time

import numpy as np

from ..data.dataset import Dataset
from ..graph.graph import Graph, set_random_seed
from ..graph.keys import GraphKeys
from ..io.checkpoint import (
    init_from_checkpoint,
    latest_checkpoint,
    list_variables,
    load_variable,
)
from ..io.saver import Saver
from ..metrics import mean as metric_mean
from ..saved_model.builder import SavedModelBuilder
from ..saved_model.tag_constants import SERVING
from ..schedule.session import Session
from ..summary import FileWriterCache, Summary, scalar
from ..train.basic_hooks import (
    CheckpointSaverHook,
    FinalOpsHook,
    LoggingTensorHook,
    NanTensorHook,
    StopAtStepHook,
)
from ..train.monitored_session import (
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
    Scaffold,
)
from ..train.schedules import get_or_create_global_step
from ..train.session_run_hook import SessionRunHook
from .export import ServingInputReceiver, TensorServingInputReceiver, build_all_signature_defs
from .export_output import check_export_outputs
from .model_fn import LOSS_METRIC_KEY, EstimatorSpec, ModeKeys
from .run_config import RunConfig

__all__ = ["Estimator", "WarmStartSettings"]

_log = logging.getLogger("tensorflow")


class WarmStartSettings:
    """Where a first `train` takes its starting values: the variables matching `vars_to_warm_start`
    (a regex, default all trainable ones) that the checkpoint holds under the same names."""

    def __init__(self, ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
                 var_name_to_prev_var_name=None):
        self.ckpt_to_initialize_from = os.fspath(ckpt_to_initialize_from)
        self.vars_to_warm_start = vars_to_warm_start
        self.var_name_to_prev_var_name = dict(var_name_to_prev_var_name or {})


def _fn_args(fn):
    target = fn.func if hasattr(fn, "func") else fn
    return tuple(inspect.signature(target).parameters)


class _DatasetInitializerHook(SessionRunHook):
    """Runs an input Dataset's iterator initializer when the session is made."""

    def __init__(self, iterator):
        self._initializer = iterator.initializer

    def after_create_session(self, session, coord):
        session.run(self._initializer)


class _StopAfterNEvalsHook(SessionRunHook):
    """Stops evaluation after `num_evals` runs (None: when the input ends)."""

    def __init__(self, num_evals):
        self._num_evals, self._done = num_evals, 0

    def after_run(self, run_context, run_values):
        self._done += 1
        if self._num_evals is not None and self._done >= self._num_evals:
            run_context.request_stop()


def _check_hooks(hooks):
    hooks = list(hooks or [])
    for h in hooks:
        if not isinstance(h, SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {h}")
    return hooks


class Estimator:
    """Trains, evaluates and predicts with `model_fn(features, labels, mode[, params][, config])`,
    which returns an EstimatorSpec. `model_dir` (or `config.model_dir`; a temporary directory when
    neither is given) holds the checkpoints and summaries."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        if model_fn is None:
            raise ValueError("model_fn must be provided to Estimator.")
        args = _fn_args(model_fn)
        if "features" not in args:
            raise ValueError(f"model_fn ({model_fn}) must include features argument.")
        if params is not None and "params" not in args:
            raise ValueError(f"model_fn ({model_fn}) does not include params argument, but params ({params}) is "
                             "passed to Estimator.")
        if config is None:
            config = RunConfig()
        elif not isinstance(config, RunConfig):
            raise ValueError(f"config must be an instance of `RunConfig`, but provided {config}.")
        model_dir = os.fspath(model_dir) if model_dir is not None else None
        if model_dir and config.model_dir and model_dir != config.model_dir:
            raise ValueError(f"`model_dir` are set both in constructor and `RunConfig`, but with different values. "
                             f"In constructor: '{model_dir}', in `RunConfig`: '{config.model_dir}' ")
        model_dir = model_dir or config.model_dir
        if not model_dir:
            model_dir = tempfile.mkdtemp()
            _log.warning("Using temporary folder as model directory: %s", model_dir)
        if config.model_dir != model_dir:
            config = config.replace(model_dir=model_dir)
        self._model_fn, self._model_fn_args = model_fn, args
        self._config, self._model_dir = config, model_dir
        self._params = copy.deepcopy(params or {})
        if isinstance(warm_start_from, (str, os.PathLike)):
            warm_start_from = WarmStartSettings(warm_start_from)
        self._warm_start_settings = warm_start_from

    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: copy.deepcopy(self._config))
    params = property(lambda self: copy.deepcopy(self._params))
    model_fn = property(lambda self: self._call_model_fn)

    # ---- checkpoints ---------------------------------------------------------------------------
    def latest_checkpoint(self):
        """The path of the latest checkpoint in model_dir, or None."""
        return latest_checkpoint(self._model_dir)

    def _checkpoint(self):
        path = self.latest_checkpoint()
        if not path:
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}.")
        return path

    def get_variable_names(self):
        """The names of the variables in the latest checkpoint."""
        return [name for name, _ in list_variables(self._checkpoint())]

    def get_variable_value(self, name):
        """A variable's value (numpy) in the latest checkpoint."""
        return load_variable(self._checkpoint(), name)

    # ---- building ------------------------------------------------------------------------------
    def _call_input_fn(self, input_fn, mode):
        args = _fn_args(input_fn)
        kwargs = {}
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = self.config
        result = input_fn(**kwargs)
        hooks = []
        if isinstance(result, Dataset):
            iterator = result.make_initializable_iterator()
            hooks.append(_DatasetInitializerHook(iterator))
            result = iterator.get_next()
        if isinstance(result, (list, tuple)):
            if len(result) != 2:
                raise ValueError(f"input_fn should return (features, labels) as a len 2 tuple, got {len(result)}")
            return result[0], result[1], hooks
        return result, None, hooks

    def _call_model_fn(self, features, labels, mode, config):
        kwargs = {}
        if "labels" in self._model_fn_args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in self._model_fn_args:
            kwargs["mode"] = mode
        if "params" in self._model_fn_args:
            kwargs["params"] = self.params
        if "config" in self._model_fn_args:
            kwargs["config"] = config
        spec = self._model_fn(features=features, **kwargs)
        if not isinstance(spec, EstimatorSpec):
            raise ValueError(f"model_fn should return an EstimatorSpec. Given: {type(spec)}")
        return spec

    def _saver(self, graph):
        if not graph.get_collection(GraphKeys.SAVERS):
            graph.add_to_collection(GraphKeys.SAVERS, Saver(sharded=True, max_to_keep=self._config.keep_checkpoint_max,
                                                            keep_checkpoint_every_n_hours=float(
                                                                self._config.keep_checkpoint_every_n_hours),
                                                            defer_build=True, save_relative_paths=True))

    # ---- train -------------------------------------------------------------------------------
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains `steps` more steps, or until the global step reaches `max_steps`, or until the
        input ends; resumes from the latest checkpoint in model_dir. Returns self."""
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None:
            ckpt = self.latest_checkpoint()
            if ckpt and int(load_variable(ckpt, GraphKeys.GLOBAL_STEP)) >= max_steps:
                _log.info("Skipping training since max_steps has already saved.")
                return self
        hooks = _check_hooks(hooks)
        hooks.append(StopAtStepHook(num_steps=steps, last_step=max_steps) if steps or max_steps else None)
        hooks = [h for h in hooks if h is not None]
        with Graph().as_default() as graph:
            if self._config.tf_random_seed is not None:
                set_random_seed(self._config.tf_random_seed)
            global_step = get_or_create_global_step(graph)
            features, labels, input_hooks = self._call_input_fn(input_fn, ModeKeys.TRAIN)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self.config)
            if not any(op.op.name == "loss" for op in graph.get_collection(GraphKeys.SUMMARIES)
                       if hasattr(op, "op")):
                scalar("loss", spec.loss)
            self._saver(graph)
            self._warm_start(graph)
            worker_hooks = hooks + input_hooks + [NanTensorHook(spec.loss)]
            if self._config.log_step_count_steps:
                worker_hooks.append(LoggingTensorHook({"loss": spec.loss, "step": global_step},
                                                      every_n_iter=self._config.log_step_count_steps))
            worker_hooks.extend(spec.training_hooks)
            chief_hooks = list(spec.training_chief_hooks)
            scaffold = spec.scaffold or Scaffold()
            savers = [h for h in worker_hooks + chief_hooks if isinstance(h, CheckpointSaverHook)]
            if savers and saving_listeners:
                savers[0]._listeners.extend(saving_listeners)
            elif saving_listeners and not (self._config.save_checkpoints_secs or self._config.save_checkpoints_steps):
                raise ValueError("There should be a CheckpointSaverHook to use saving_listeners. Please set one of "
                                 "the RunConfig.save_checkpoints_steps or RunConfig.save_checkpoints_secs.")
            if (self._config.save_checkpoints_secs or self._config.save_checkpoints_steps) and not savers:
                chief_hooks.insert(0, CheckpointSaverHook(self._model_dir,
                                                          save_secs=self._config.save_checkpoints_secs,
                                                          save_steps=self._config.save_checkpoints_steps,
                                                          scaffold=scaffold, listeners=saving_listeners,
                                                          save_graph_def=False))
            loss = None
            with MonitoredTrainingSession(checkpoint_dir=self._model_dir, scaffold=scaffold, hooks=worker_hooks,
                                          chief_only_hooks=chief_hooks, save_checkpoint_secs=0,
                                          save_summaries_steps=self._config.save_summary_steps,
                                          config=self._config.session_config,
                                          log_step_count_steps=self._config.log_step_count_steps) as sess:
                while not sess.should_stop():
                    _, loss = sess.run([spec.train_op, spec.loss])
        _log.info("Loss for final step: %s.", loss)
        return self

    def _warm_start(self, graph):
        """A first run (no checkpoint in model_dir) starts the matching variables from the warm-start
        checkpoint (their initializers read it, through tf.train.init_from_checkpoint)."""
        ws = self._warm_start_settings
        if ws is None or self.latest_checkpoint():
            return
        source = ws.ckpt_to_initialize_from
        in_ckpt = {name for name, _ in list_variables(source)}
        pattern = re.compile(ws.vars_to_warm_start) if isinstance(ws.vars_to_warm_start, str) else None
        names = set(ws.vars_to_warm_start) if pattern is None else None
        assignment = {}
        for v in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES):
            name = v.op.name
            if (pattern is not None and not pattern.match(name)) or (names is not None and name not in names):
                continue
            prev = ws.var_name_to_prev_var_name.get(name, name)
            if prev in in_ckpt:
                assignment[prev] = v
        _log.info("Warm-starting from: %s (%d variables)", source, len(assignment))
        if assignment:
            init_from_checkpoint(source, assignment)

    # ---- evaluate ----------------------------------------------------------------------------
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """{metric name: value} of the model at `checkpoint_path` (default: the latest), over the
        input (or its first `steps` batches): the spec's eval_metric_ops, `loss` (the mean of the
        loss over batches) and `global_step`; also written as summaries to model_dir/eval[_name]."""
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        hooks = _check_hooks(hooks)
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if not checkpoint_path:
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}.")
        with Graph().as_default() as graph:
            if self._config.tf_random_seed is not None:
                set_random_seed(self._config.tf_random_seed)
            global_step = get_or_create_global_step(graph)
            features, labels, input_hooks = self._call_input_fn(input_fn, ModeKeys.EVAL)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self.config)
            metrics = dict(spec.eval_metric_ops)
            if LOSS_METRIC_KEY in metrics:
                raise ValueError(f"Metric with name \"{LOSS_METRIC_KEY}\" is not allowed, because Estimator "
                                 "already defines a default metric with the same name.")
            metrics[LOSS_METRIC_KEY] = metric_mean(spec.loss)
            if GraphKeys.GLOBAL_STEP in metrics:
                raise ValueError(f"Metric with name `{GraphKeys.GLOBAL_STEP}` is not allowed, because Estimator "
                                 "already defines a default metric with the same name.")
            update_ops = [update for _, update in metrics.values()]
            final = {key: value for key, (value, _) in metrics.items()}
            final[GraphKeys.GLOBAL_STEP] = global_step
            self._saver(graph)
            final_hook = FinalOpsHook(final)
            all_hooks = input_hooks + hooks + list(spec.evaluation_hooks) + [_StopAfterNEvalsHook(steps), final_hook]
            scaffold = spec.scaffold or Scaffold()
            creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_filename_with_path=checkpoint_path,
                                          config=self._config.session_config)
            _log.info("Starting evaluation")
            with MonitoredSession(session_creator=creator, hooks=all_hooks) as sess:
                while not sess.should_stop():
                    sess.run(update_ops)
            results = final_hook.final_ops_values
        _log.info("Saving dict for global step %s: %s", results[GraphKeys.GLOBAL_STEP],
                  ", ".join(f"{k} = {v}" for k, v in sorted(results.items())))
        self._write_eval_summaries(results, name)
        return results

    def eval_dir(self, name=None):
        """The directory evaluate(name=...) writes its summaries to."""
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    def _write_eval_summaries(self, results, name):
        writer = FileWriterCache.get(self.eval_dir(name))
        summary = Summary()
        for key, value in results.items():
            if key == GraphKeys.GLOBAL_STEP:
                continue
            arr = np.asarray(value)
            if arr.ndim == 0 and np.issubdtype(arr.dtype, np.number):
                summary.value.add(tag=key, simple_value=float(arr))
        writer.add_summary(summary, int(results[GraphKeys.GLOBAL_STEP]))
        writer.flush()

    # ---- predict -----------------------------------------------------------------------------
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True):
        """A generator of predictions at `checkpoint_path` (default: the latest; the initial values
        when model_dir has none): dicts (or arrays, when the model predicts one tensor) per example,
        or per batch with yield_single_examples=False."""
        hooks = _check_hooks(hooks)
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if not checkpoint_path:
            _log.info("Could not find trained model in model_dir: %s, running initialization to predict.",
                      self._model_dir)
        with Graph().as_default() as graph:
            if self._config.tf_random_seed is not None:
                set_random_seed(self._config.tf_random_seed)
            get_or_create_global_step(graph)
            features, _, input_hooks = self._call_input_fn(input_fn, ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self.config)
            predictions = _extract_keys(spec.predictions, predict_keys)
            self._saver(graph)
            creator = ChiefSessionCreator(scaffold=spec.scaffold or Scaffold(),
                                          checkpoint_filename_with_path=checkpoint_path,
                                          config=self._config.session_config)
            with MonitoredSession(session_creator=creator,
                                  hooks=input_hooks + hooks + list(spec.prediction_hooks)) as sess:
                while not sess.should_stop():
                    values = sess.run(predictions)
                    if not yield_single_examples:
                        yield values
                    elif not isinstance(values, dict):
                        yield from values
                    else:
                        for i in range(_batch_length(values)):
                            yield {key: value[i] for key, value in values.items()}


    # ---- export --------------------------------------------------------------------------------
    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                           checkpoint_path=None, experimental_mode=ModeKeys.PREDICT):
        """Writes a SavedModel (dflow's format) of the PREDICT graph over the serving input to a new
        `export_dir_base/<timestamp>` directory and returns its path (bytes, as TF1): the `serve`
        meta graph with one signature per export output of the model (the head's classify,
        regress and predict signatures; `serving_default` among them), the variables of
        `checkpoint_path` (default: the latest checkpoint), the tables' initializer as main op
        and the vocabulary files as assets; `assets_extra` ({path in the export: source file})
        is copied under `assets.extra/`. ValueError when there is no checkpoint."""
        return self._export_saved_model(export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                                        checkpoint_path, False, experimental_mode)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                          checkpoint_path=None, strip_default_attrs=False):
        """TF1's older name of `export_saved_model` (with `strip_default_attrs`)."""
        return self._export_saved_model(export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                                        checkpoint_path, strip_default_attrs, ModeKeys.PREDICT)

    def _export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                            checkpoint_path, strip_default_attrs, mode):
        if serving_input_receiver_fn is None:
            raise ValueError("An input_receiver_fn must be defined.")
        if mode != ModeKeys.PREDICT:
            raise ValueError(f"export_saved_model: dflow exports the PREDICT graph only, got mode {mode!r}")
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if not checkpoint_path:
            raise ValueError(f"Couldn't find trained model at {self._model_dir}.")
        export_dir = _timestamped_export_dir(os.fspath(export_dir_base))
        temp_dir = os.path.join(os.path.dirname(export_dir), "temp-" + os.path.basename(export_dir))
        with Graph().as_default() as graph:
            if self._config.tf_random_seed is not None:
                set_random_seed(self._config.tf_random_seed)
            get_or_create_global_step(graph)
            receiver = serving_input_receiver_fn()
            if not isinstance(receiver, (ServingInputReceiver, TensorServingInputReceiver)):
                raise ValueError(f"serving_input_receiver_fn must return a ServingInputReceiver or "
                                 f"TensorServingInputReceiver, got {type(receiver).__name__}")
            spec = self._call_model_fn(receiver.features, None, ModeKeys.PREDICT, self.config)
            export_outputs = check_export_outputs(spec.export_outputs, spec.predictions)
            signatures = build_all_signature_defs(receiver.receiver_tensors, export_outputs,
                                                  receiver.receiver_tensors_alternatives)
            scaffold = spec.scaffold or Scaffold()
            local_init_op = scaffold.local_init_op or Scaffold.default_local_init_op()
            with Session(graph=graph, config=self._config.session_config) as sess:
                saver = scaffold.saver or Saver(sharded=True)
                saver.restore(sess, checkpoint_path)
                builder = SavedModelBuilder(temp_dir)
                builder.add_meta_graph_and_variables(
                    sess, [SERVING], signature_def_map=signatures,
                    assets_collection=graph.get_collection(GraphKeys.ASSET_FILEPATHS),
                    main_op=local_init_op, strip_default_attrs=strip_default_attrs)
            builder.save(as_text)
        try:
            for dest, source in dict(assets_extra or {}).items():
                target = os.path.join(temp_dir, "assets.extra", dest)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(source, target)
            os.rename(temp_dir, export_dir)
        except BaseException:
            shutil.rmtree(temp_dir, ignore_errors=True)
            raise
        _log.info("SavedModel written to: %s", export_dir)
        return os.fsencode(export_dir)


def _timestamped_export_dir(export_dir_base):
    """`export_dir_base/<seconds since the epoch>`, waiting a second while that name is taken."""
    for _ in range(10):
        path = os.path.join(export_dir_base, str(int(time.time())))
        if not os.path.exists(path) and not os.path.exists(
                os.path.join(export_dir_base, "temp-" + os.path.basename(path))):
            return path
        time.sleep(1)
    raise RuntimeError("Failed to obtain a unique export directory name after 10 attempts.")


def _extract_keys(predictions, predict_keys):
    if not predict_keys:
        return predictions
    if isinstance(predict_keys, str):
        predict_keys = [predict_keys]
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict predictions.")
    existing = set(predictions)
    out = {key: value for key, value in predictions.items() if key in predict_keys}
    if not out:
        raise ValueError(f"Expected to run at least one output from {sorted(existing)}, provided {predict_keys}.")
    return out


def _batch_length(values):
    lengths = {key: np.shape(value)[0] if np.ndim(value) else None for key, value in values.items()}
    if None in lengths.values():
        bad = [k for k, n in lengths.items() if n is None]
        raise ValueError(f"Batch length of predictions should be same. {bad} is a scalar: a prediction with "
                         "yield_single_examples=True needs a batch dimension.")
    if len(set(lengths.values())) > 1:
        raise ValueError(f"Batch length of predictions should be same. Lengths: {lengths}")
    return next(iter(lengths.values()), 0)
