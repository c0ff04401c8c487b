"""`tf.keras.estimator.model_to_estimator`: a compiled Keras model as an Estimator.

The model_fn rebuilds the model from its config in the Estimator's graph and applies it to the
features (a tensor, a list, or a dict keyed by the model's input names); predictions are keyed by
output layer names; the loss is the compiled loss (weighted by `loss_weights`, plus the layers'
losses); training uses an optimizer of the same class and config; evaluation reports each compiled
metric's mean. Until the Estimator has a checkpoint its variables start from the Keras model's
weights at the time of the call (TF's warm start).
"""

from __future__ import annotations

import tempfile

from ..estimator.estimator import Estimator
from ..estimator.model_fn import EstimatorSpec, ModeKeys
from ..graph.ops import Tensor
from ..kernels import math_ops
from ..kernels.control_ops import group
from ..kernels.manip_ops import add_n
from ..kernels.state_ops import assign_add
from ..metrics import mean as metric_mean
from ..train.monitored_session import Scaffold
from ..train.optimizer import Optimizer as TFOptimizerBase
from ..train.schedules import get_global_step
from . import models
from .engine.training import _weighted_loss

__all__ = ["model_to_estimator"]


def _clone_optimizer(optimizer):
    if isinstance(optimizer, TFOptimizerBase):
        return optimizer
    if hasattr(optimizer, "get_config"):
        return type(optimizer).from_config(optimizer.get_config())
    return optimizer


def model_to_estimator(keras_model=None, keras_model_path=None, custom_objects=None, model_dir=None, config=None,
                       checkpoint_format=None):
    """An Estimator training and serving `keras_model` (functional or Sequential, compiled).

    ValueError for an uncompiled or subclassed model, or neither/both of the model arguments."""
    if (keras_model is None) == (keras_model_path is None):
        raise ValueError("Either `keras_model` or `keras_model_path` needs to be provided.")
    if keras_model is None:
        keras_model = models.load_model(keras_model_path, custom_objects=custom_objects)
    if not keras_model._is_graph_network:
        raise ValueError("model_to_estimator supports Sequential and functional models; a subclassed model's "
                         "architecture cannot be rebuilt. Build it with the functional API.")
    if not keras_model._compiled:
        raise ValueError("The given keras model has not been compiled yet. Please compile the model with "
                         "`model.compile()` before calling `model_to_estimator()`.")
    arch = {"class_name": type(keras_model).__name__, "config": keras_model.get_config()}
    weights = keras_model.get_weights()
    parts = keras_model._graph_parts
    input_names = list(keras_model.input_names)
    output_names = list(keras_model.output_names)
    losses = [o.loss for o in parts["outputs"]]
    loss_weights = [o.loss_weight for o in parts["outputs"]]
    metrics = [(name, next(i for i, o in enumerate(parts["outputs"]) if o is output), fn)
               for output, name, fn in parts["metrics"]]
    optimizer = keras_model.optimizer

    def model_fn(features, labels, mode):
        model = models.model_from_config(arch, custom_objects=custom_objects)
        if isinstance(features, dict):
            missing = [n for n in input_names if n not in features]
            if missing:
                raise ValueError(f"model_to_estimator: the input_fn's features lack the model's inputs {missing}; "
                                 f"its keys are {sorted(features)}")
            inputs = [features[n] for n in input_names]
        else:
            inputs = list(features) if isinstance(features, (list, tuple)) else [features]
        outputs = model(inputs[0] if len(inputs) == 1 else inputs, training=mode == ModeKeys.TRAIN)
        outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        predictions = dict(zip(output_names, outputs))

        def init_fn(scaffold, session):
            for variable, value in zip(model.weights, weights):
                variable.load(value, session)
        scaffold = Scaffold(init_fn=init_fn)
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions=predictions, scaffold=scaffold)
        targets = labels if isinstance(labels, (list, tuple)) else (
            [labels[n] for n in output_names] if isinstance(labels, dict) else [labels])
        terms = [_weighted_loss(fn, math_ops.cast(t, out.dtype), out, None) * lw
                 for fn, t, out, lw in zip(losses, targets, outputs, loss_weights)]
        extra = [math_ops.cast(x, terms[0].dtype) for x in model.losses]
        loss = add_n(terms + extra) if len(terms) + len(extra) > 1 else terms[0]
        if mode == ModeKeys.EVAL:
            ops = {}
            for name, index, fn in metrics:
                if isinstance(fn, Tensor) or hasattr(fn, "update_state"):
                    continue
                value = fn(math_ops.cast(targets[index], outputs[index].dtype), outputs[index])
                ops[name] = metric_mean(value)
            return EstimatorSpec(mode, predictions=predictions, loss=loss, eval_metric_ops=ops, scaffold=scaffold)
        opt = _clone_optimizer(optimizer)
        step = get_global_step()
        if isinstance(opt, TFOptimizerBase):
            train_op = opt.minimize(loss, global_step=step, var_list=model.trainable_weights)
        else:
            train_op = group(*opt.get_updates(loss=loss, params=model.trainable_weights), assign_add(step, 1))
        if model.updates:
            train_op = group(train_op, *model.updates)
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op, scaffold=scaffold)

    return Estimator(model_fn=model_fn, model_dir=model_dir or tempfile.mkdtemp(prefix="keras_estimator_"),
                     config=config)
