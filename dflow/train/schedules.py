"""Global step and learning-rate schedules (TF1's `tf.train.*_decay`, `get_or_create_global_step`)."""

from __future__ import annotations

import math

from ..graph import dtypes
from ..graph.graph import get_default_graph, name_scope
from ..graph.keys import GraphKeys
from ..kernels import math_ops as m
from ..kernels.array_ops import identity
from ..kernels.common import convert_to_tensor
from ..kernels.random_ops import random_normal
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


__all__ += ["linear_cosine_decay", "noisy_linear_cosine_decay", "cosine_decay_restarts", "piecewise_constant_decay"]

piecewise_constant_decay = piecewise_constant  # TF1's other name for it


def _cosine_of_linear(learning_rate, step, decay_steps, num_periods, alpha, beta, noise):
    """TF1's linear cosine decay: lr · ((α + linear + noise) · ½(1 + cos(2π·periods·t/T)) + β)."""
    steps = _float(decay_steps)
    step = m.minimum(_float(step), steps)
    linear = (steps - step) / steps
    if noise is not None:
        linear = linear + noise(step)
    cosine = 0.5 * (1.0 + m.cos(math.pi * 2.0 * num_periods * step / steps))
    return _float(learning_rate) * ((alpha + linear) * cosine + beta)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0, beta=0.001,
                        name=None):
    """lr · ((α + (T - t)/T) · ½(1 + cos(2π·num_periods·t/T)) + β), t = min(step, T)."""
    _check_step(global_step)
    with name_scope(name, "LinearCosineDecay", [learning_rate, global_step]) as scope:
        out = _cosine_of_linear(learning_rate, global_step, decay_steps, num_periods, alpha, beta, None)
        return m.multiply(out, 1.0, name=scope)


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0, variance_decay=0.55,
                              num_periods=0.5, alpha=0.0, beta=0.001, name=None):
    """linear_cosine_decay with N(0, initial_variance/(1 + t)^variance_decay) added to the linear
    term (a fresh draw each run)."""
    _check_step(global_step)

    def noise(step):
        variance = _float(initial_variance) / m.pow(1.0 + step, _float(variance_decay))
        return random_normal([], stddev=m.sqrt(variance))

    with name_scope(name, "NoisyLinearCosineDecay", [learning_rate, global_step]) as scope:
        out = _cosine_of_linear(learning_rate, global_step, decay_steps, num_periods, alpha, beta, noise)
        return m.multiply(out, 1.0, name=scope)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0,
                          name=None):
    """SGDR (Loshchilov & Hutter): cosine decay over periods T, T·t_mul, T·t_mul², …; period i
    starts again at lr·m_mul^i."""
    _check_step(global_step)
    with name_scope(name, "SGDRDecay", [learning_rate, global_step]) as scope:
        fraction = _float(global_step) / _float(first_decay_steps)
        if t_mul == 1.0:
            restart = m.floor(fraction)
            fraction = fraction - restart
        else:
            restart = m.floor(m.log(1.0 - fraction * (1.0 - t_mul)) / math.log(t_mul))
            done = (1.0 - m.pow(_float(t_mul), restart)) / (1.0 - t_mul)
            fraction = (fraction - done) / m.pow(_float(t_mul), restart)
        cosine = 0.5 * m.pow(_float(m_mul), restart) * (1.0 + m.cos(math.pi * fraction))
        return m.multiply(_float(learning_rate), (1.0 - alpha) * cosine + alpha, name=scope)
