"""`tf.contrib.layers.optimize_loss` (TF 1.15): one call from a loss to a training tensor.

The learning rate becomes a variable `OptimizeLoss/learning_rate` when it is a float; UPDATE_OPS
run before the loss; gradients may be multiplied, clipped by global norm or noised; the returned
tensor is the loss, computed after the update. `summaries` (default loss, learning_rate,
global_gradient_norm) add tf.summary ops as TF 1.15 does (learning_rate only with a decay function).
"""

from __future__ import annotations

import functools
import numbers

from ..graph.graph import control_dependencies, get_collection
from ..graph.indexed_slices import IndexedSlices
from ..graph.keys import GraphKeys
from ..graph.ops import Tensor
from ..kernels.array_ops import identity
from ..kernels.common import convert_to_tensor
from ..kernels.math_ops import cast
from ..kernels.random_ops import truncated_normal
from ..state.initializers import constant_initializer
from ..state.scope import get_variable, variable_scope
from ..state.variables import trainable_variables
from ..summary import histogram as _histogram
from ..summary import scalar as _scalar
from ..tf1_names import missing_attribute
from ..train import optimizer as optimizer_
from ..train.clip_ops import clip_by_global_norm, global_norm
from ..train.schedules import get_global_step

__all__ = ["optimize_loss", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES"]

OPTIMIZER_CLS_NAMES = {
    "Adagrad": optimizer_.AdagradOptimizer,
    "Adam": optimizer_.AdamOptimizer,
    "Momentum": functools.partial(optimizer_.MomentumOptimizer, momentum=0.9),
    "RMSProp": optimizer_.RMSPropOptimizer,
    "SGD": optimizer_.GradientDescentOptimizer,
}
if hasattr(optimizer_, "FtrlOptimizer"):
    OPTIMIZER_CLS_NAMES["Ftrl"] = optimizer_.FtrlOptimizer

OPTIMIZER_SUMMARIES = ["learning_rate", "loss", "gradients", "gradient_norm", "global_gradient_norm"]


def _with_dependencies(deps, output):
    with control_dependencies(list(deps)):
        return identity(output)


def optimize_loss(loss, global_step, learning_rate, optimizer, gradient_noise_scale=None,
                  gradient_multipliers=None, clip_gradients=None, learning_rate_decay_fn=None, update_ops=None,
                  variables=None, name=None, summaries=None, colocate_gradients_with_ops=False,
                  increment_global_step=True):
    """A tensor that applies one optimizer step to `variables` (default: all trainable) and gives
    the loss.

    optimizer: a name in OPTIMIZER_CLS_NAMES, an Optimizer subclass or instance, or a function of
    the learning rate returning one. ValueError for a non-scalar loss, a bad learning rate or
    optimizer, an unknown summary, or clip_gradients that is neither a float nor callable.
    """
    loss = convert_to_tensor(loss)
    if loss.shape.ndims not in (None, 0):
        raise ValueError(f"Expected scalar shape for {loss.name}, saw shape: {loss.shape}.")
    if global_step is None:
        global_step = get_global_step()
    with variable_scope(name, "OptimizeLoss", [loss, global_step]):
        if update_ops is None:
            update_ops = _unique(get_collection(GraphKeys.UPDATE_OPS))
        if update_ops:
            loss = _with_dependencies(update_ops, loss)

        lr = None
        if learning_rate is not None:
            if isinstance(learning_rate, Tensor) and learning_rate.shape.ndims == 0:
                lr = learning_rate
            elif isinstance(learning_rate, float):
                if learning_rate < 0.0:
                    raise ValueError(f"Invalid learning_rate {learning_rate}.")
                lr = get_variable("learning_rate", [], trainable=False,
                                  initializer=constant_initializer(learning_rate))
            else:
                raise ValueError(f"Learning rate should be 0d Tensor or float. Got {learning_rate} of type "
                                 f"{type(learning_rate)}")
        if summaries is None:
            summaries = ["loss", "learning_rate", "global_gradient_norm"]
        for summary in summaries:
            if summary not in OPTIMIZER_SUMMARIES:
                raise ValueError(f"Summaries should be one of [{', '.join(OPTIMIZER_SUMMARIES)}], you provided "
                                 f"{summary}.")
        if learning_rate is not None and learning_rate_decay_fn is not None:
            if global_step is None:
                raise ValueError("global_step is required for learning_rate_decay_fn.")
            lr = learning_rate_decay_fn(lr, global_step)
            if "learning_rate" in summaries:
                _scalar("learning_rate", lr)

        opt = _make_optimizer(optimizer, lr, learning_rate)
        if variables is None:
            variables = trainable_variables()
        gradients = opt.compute_gradients(loss, variables)
        if gradient_noise_scale is not None:
            gradients = [(None if g is None else _noisy(g, gradient_noise_scale), v) for g, v in gradients]
        if gradient_multipliers is not None:
            gradients = _multiply_gradients(gradients, gradient_multipliers)
            if not gradients:
                raise ValueError("Empty list of (gradient, var) pairs encountered. This is most likely to be caused "
                                 "by an improper value of gradient_multipliers.")
        norms = "global_gradient_norm" in summaries or "gradient_norm" in summaries
        if norms:
            _scalar("global_norm/gradient_norm", global_norm([g for g, _ in gradients if g is not None]))
        if isinstance(clip_gradients, float):
            grads, variables_ = zip(*gradients)
            clipped, _ = clip_by_global_norm(list(grads), clip_gradients)
            gradients = list(zip(clipped, variables_))
        elif callable(clip_gradients):
            gradients = clip_gradients(gradients)
        elif clip_gradients is not None:
            raise ValueError(f"Unknown type {type(clip_gradients)} for clip_gradients")
        if "loss" in summaries:
            _scalar("loss", loss)
        for g, v in gradients:
            values = getattr(g, "values", g)  # IndexedSlices: their values
            if values is not None:
                var_name = v.name.replace(":", "_")
                if "gradients" in summaries:
                    _histogram(f"gradients/{var_name}", values)
                if "gradient_norm" in summaries:
                    _scalar(f"gradient_norm/{var_name}", global_norm([values]))
        if clip_gradients is not None and norms:
            _scalar("global_norm/clipped_gradient_norm", global_norm([g for g, _ in gradients if g is not None]))
        grad_updates = opt.apply_gradients(gradients, global_step=global_step if increment_global_step else None,
                                           name="train")
        return _with_dependencies([grad_updates], loss)


def _unique(items):
    out = []
    for i in items:
        if not any(i is o for o in out):
            out.append(i)
    return out


def _make_optimizer(optimizer, lr, learning_rate):
    if isinstance(optimizer, str):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is string ({optimizer}).")
        if optimizer not in OPTIMIZER_CLS_NAMES:
            raise ValueError(f"Optimizer name should be one of [{', '.join(OPTIMIZER_CLS_NAMES)}], you provided "
                             f"{optimizer}.")
        return OPTIMIZER_CLS_NAMES[optimizer](learning_rate=lr)
    if isinstance(optimizer, type) and issubclass(optimizer, optimizer_.Optimizer):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is class ({optimizer}).")
        return optimizer(learning_rate=lr)
    if isinstance(optimizer, optimizer_.Optimizer):
        return optimizer
    if callable(optimizer):
        opt = optimizer(lr) if learning_rate is not None else optimizer()
        if not isinstance(opt, optimizer_.Optimizer):
            raise ValueError(f"Unrecognized optimizer: function should return subclass of Optimizer. Got {opt}.")
        return opt
    raise ValueError("Unrecognized optimizer: should be string, subclass of Optimizer, instance of subclass of "
                     f"Optimizer or function with one argument. Got {optimizer}.")


def _noisy(g, scale):
    """g plus truncated-normal noise of its dense shape (an IndexedSlices is densified, as TF1)."""
    g = convert_to_tensor(g)
    return g + truncated_normal(g.shape.as_list()) * scale


def _multiply_gradients(grads_and_vars, multipliers):
    out = []
    for grad, var in grads_and_vars:
        key = var if var in multipliers else var.name if var.name in multipliers else None
        if grad is not None and key is not None:
            m = multipliers[key]
            m = (cast(m, grad.dtype) if isinstance(m, Tensor) else
                 convert_to_tensor(m, dtype=grad.dtype) if isinstance(m, numbers.Real) else m)
            # an IndexedSlices (a gather's gradient) stays sparse: its values are scaled (TF1)
            grad = IndexedSlices(grad.values * m, grad.indices, grad.dense_shape) if isinstance(grad, IndexedSlices) \
                else grad * m
        out.append((grad, var))
    return out


__getattr__ = missing_attribute(__name__)
