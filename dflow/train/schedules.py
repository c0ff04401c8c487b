"""Global step and learning-rate schedules (TF1's `tf.train.*_decay`, `get_or_create_global_step`)."""

from __future__ import annotations

import math

from ..graph import dtypes
from ..graph.graph import get_default_graph, name_scope
from ..graph.keys import GraphKeys
from ..kernels import math_ops as m
from ..kernels.common import convert_to_tensor
from ..state.variables import Variable

__all__ = ["get_global_step", "get_or_create_global_step", "create_global_step", "global_step",
           "exponential_decay", "piecewise_constant", "polynomial_decay", "inverse_time_decay",
           "natural_exp_decay", "cosine_decay"]


def get_global_step(graph=None):
    """The graph's global step variable, or None."""
    graph = graph or get_default_graph()
    steps = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(steps) > 1:
        raise TypeError("There are multiple items in collection global_step.")
    return steps[0] if steps else None


def create_global_step(graph=None):
    """Creates the int64 scalar `global_step` variable (ValueError if it exists)."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError("'global_step' already exists.")
    with graph.as_default(), name_scope(None):
        return Variable(0, trainable=False, name="global_step", dtype=dtypes.int64,
                        collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    """The graph's global step variable, created first if there is none."""
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


def global_step(sess, global_step_tensor):
    """The value of the global step in `sess`, as an int."""
    return int(sess.run(global_step_tensor))


def _float(x, dtype=dtypes.float32):
    t = convert_to_tensor(x)
    return m.cast(t, dtype) if t.dtype != dtype else t


def _check_step(global_step):
    if global_step is None:
        raise ValueError("global_step is required for this decay.")


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """lr · rate^(step / decay_steps), the exponent floored when `staircase`."""
    _check_step(global_step)
    with name_scope(name, "ExponentialDecay", [learning_rate, global_step]) as scope:
        lr = convert_to_tensor(learning_rate, dtype=dtypes.float32) if not hasattr(learning_rate, "dtype") \
            else _float(learning_rate)
        p = _float(global_step, lr.dtype) / _float(decay_steps, lr.dtype)
        if staircase:
            p = m.floor(p)
        return m.multiply(lr, m.pow(_float(decay_rate, lr.dtype), p), name=scope)


def piecewise_constant(x, boundaries, values, name=None):
    """values[i] where boundaries[i-1] < x <= boundaries[i] (values has one more entry)."""
    if len(values) != len(boundaries) + 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with name_scope(name, "PiecewiseConstant", [x]) as scope:
        x = convert_to_tensor(x)
        vals = [convert_to_tensor(v) for v in values]
        result = vals[-1]
        for b, v in reversed(list(zip(boundaries, vals[:-1]))):
            result = m.where(m.less_equal(x, convert_to_tensor(b, dtype=x.dtype)), v, result)
        from ..kernels.array_ops import identity

        return identity(result, name=scope)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                     name=None):
    """(lr - end) · (1 - step/decay_steps)^power + end."""
    _check_step(global_step)
    with name_scope(name, "PolynomialDecay", [learning_rate, global_step]) as scope:
        lr = _float(learning_rate)
        step = _float(global_step)
        steps = _float(decay_steps)
        if cycle:
            mult = m.where(m.equal(step, 0.0), convert_to_tensor(1.0), m.ceil(step / steps))
            steps = steps * mult
        else:
            step = m.minimum(step, steps)
        frac = m.pow(1.0 - step / steps, _float(power))
        return m.add((lr - _float(end_learning_rate)) * frac, _float(end_learning_rate), name=scope)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """lr / (1 + rate · step / decay_steps)."""
    _check_step(global_step)
    with name_scope(name, "InverseTimeDecay", [learning_rate, global_step]) as scope:
        p = _float(global_step) / _float(decay_steps)
        if staircase:
            p = m.floor(p)
        return m.truediv(_float(learning_rate), 1.0 + _float(decay_rate) * p, name=scope)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """lr · exp(-rate · step / decay_steps)."""
    _check_step(global_step)
    with name_scope(name, "NaturalExpDecay", [learning_rate, global_step]) as scope:
        p = _float(global_step) / _float(decay_steps)
        if staircase:
            p = m.floor(p)
        return m.multiply(_float(learning_rate), m.exp(-_float(decay_rate) * p), name=scope)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """lr · ((1 - α) · ½(1 + cos(π · min(step, steps)/steps)) + α)."""
    _check_step(global_step)
    with name_scope(name, "CosineDecay", [learning_rate, global_step]) as scope:
        step = m.minimum(_float(global_step), _float(decay_steps))
        cosine = 0.5 * (1.0 + m.cos(math.pi * step / _float(decay_steps)))
        return m.multiply(_float(learning_rate), (1.0 - alpha) * cosine + alpha, name=scope)
