"""`ExponentialMovingAverage` (TF1): shadow variables updated as shadow -= (1 - decay)(shadow - var)."""

from __future__ import annotations

from ..graph.graph import control_dependencies, name_scope
from ..graph.keys import GraphKeys
from ..kernels import math_ops as m
from ..kernels import state_ops
from ..kernels.common import convert_to_tensor
from ..kernels.control_ops import group
from ..state.variables import Variable, global_variables

__all__ = ["ExponentialMovingAverage", "assign_moving_average"]


def assign_moving_average(variable, value, decay, zero_debias=False, name=None):
    """variable -= (1 - decay) · (variable - value); returns the new value."""
    with name_scope(name, "AssignMovingAvg", [variable, value, decay]):
        decay = convert_to_tensor(decay, dtype=variable.dtype)
        return state_ops.assign_sub(variable, (1.0 - decay) * (variable - value))


class ExponentialMovingAverage:
    """Moving averages of variables or tensors; with `num_updates` the decay is
    min(decay, (1 + num_updates) / (10 + num_updates))."""

    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages = {}  # id of the averaged object -> shadow Variable

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        """Creates shadows (first call) and returns an op updating them all."""
        if var_list is None:
            var_list = [v for v in global_variables() if v.trainable]
        var_list = list(var_list)
        for v in var_list:
            dt = v.dtype
            if not dt.is_floating:
                raise TypeError(f"The variables must be half, float, or double: {v.name}")
            if id(v) not in self._averages:
                with control_dependencies(None), name_scope(None):
                    init = v.initialized_value() if isinstance(v, Variable) else convert_to_tensor(v)
                    base = v.op.name
                    shadow = Variable(init, trainable=False, name=f"{base}/{self._name}", dtype=dt)
                    shadow.graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, v)
                self._averages[id(v)] = shadow
        with name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay)
            if self._num_updates is not None:
                n = m.cast(convert_to_tensor(self._num_updates), decay.dtype)
                decay = m.minimum(decay, (1.0 + n) / (10.0 + n))
            updates = []
            for v in var_list:
                shadow = self._averages[id(v)]
                d = m.cast(decay, shadow.dtype) if decay.dtype != shadow.dtype else decay
                updates.append(assign_moving_average(shadow, v, d).op)
            return group(*updates, name=scope)

    def average(self, var):
        """The shadow variable of `var`, or None."""
        return self._averages.get(id(var))

    def average_name(self, var):
        return f"{var.op.name}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None):
        """{checkpoint name: variable}: each averaged variable restored from its shadow's name."""
        out = {}
        averaged = moving_avg_variables
        if averaged is None:
            averaged = [v for v in global_variables() if v.trainable]
        for v in averaged:
            out[self.average_name(v)] = v
        for v in global_variables():
            out.setdefault(v.op.name, v)  # a shadow's own name already maps to its variable
        return out
