"""TF1's less common optimizers: Adadelta, the proximal ones (ProximalGradientDescent,
ProximalAdagrad) and AdagradDA, written as assign ops over the same `Optimizer` base as
`optimizer.py` (dense rule; a sparse gradient is densified, as the base class does)."""

from __future__ import annotations

from ..kernels import math_ops as m
from ..kernels import state_ops
from ..kernels.control_ops import group
from ..kernels.creation_ops import zeros_like
from .optimizer import Optimizer

__all__ = ["AdadeltaOptimizer", "ProximalGradientDescentOptimizer", "ProximalAdagradOptimizer",
           "AdagradDAOptimizer"]


def _proximal(prox_v, lr, l1, l2):
    """TF1's proximal step: sign(v)·max(|v| - lr·l1, 0) / (1 + lr·l2)."""
    shrunk = m.maximum(m.abs(prox_v) - lr * l1, zeros_like(prox_v))
    return m.sign(prox_v) * shrunk / (1.0 + lr * l2)


class AdadeltaOptimizer(Optimizer):
    """accum = ρ·accum + (1-ρ)·g²; Δ = √(accum_update+ε)/√(accum+ε)·g;
    accum_update = ρ·accum_update + (1-ρ)·Δ²; var -= lr·Δ. Slots `var/Adadelta` (accum),
    `var/Adadelta_1` (accum_update)."""

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False, name="Adadelta"):
        super().__init__(use_locking, name)
        self._learning_rate, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "accum")
            self._slot(v, "accum_update")

    def _apply_dense(self, grad, var):
        dt = var.dtype
        lr, rho, eps = (self._lr(x, dt) for x in (self._learning_rate, self._rho, self._epsilon))
        accum, accum_update = self.get_slot(var, "accum"), self.get_slot(var, "accum_update")
        new_accum = state_ops.assign(accum, rho * accum + (1.0 - rho) * m.square(grad))
        delta = m.sqrt(accum_update + eps) / m.sqrt(new_accum + eps) * grad
        new_update = state_ops.assign(accum_update, rho * accum_update + (1.0 - rho) * m.square(delta))
        return group(state_ops.assign_sub(var, lr * delta).op, new_update.op)


class ProximalGradientDescentOptimizer(Optimizer):
    """v = var - lr·g; var = sign(v)·max(|v| - lr·l1, 0)/(1 + lr·l2) (FOBOS). No slots."""

    def __init__(self, learning_rate, l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate, self._l1, self._l2 = learning_rate, l1_regularization_strength, \
            l2_regularization_strength

    def _apply_dense(self, grad, var):
        dt = var.dtype
        lr, l1, l2 = (self._lr(x, dt) for x in (self._learning_rate, self._l1, self._l2))
        return state_ops.assign(var, _proximal(var - lr * grad, lr, l1, l2)).op


class ProximalAdagradOptimizer(Optimizer):
    """accum += g²; lr_t = lr/√accum; then the proximal step of ProximalGradientDescent with lr_t.
    Slot `var/ProximalAdagrad` (accumulator)."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False, name="ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate, self._initial = learning_rate, initial_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "accumulator", init="value", value=self._initial)

    def _apply_dense(self, grad, var):
        dt = var.dtype
        lr, l1, l2 = (self._lr(x, dt) for x in (self._learning_rate, self._l1, self._l2))
        acc = self.get_slot(var, "accumulator")
        lr_t = lr / m.sqrt(state_ops.assign_add(acc, m.square(grad)))
        return state_ops.assign(var, _proximal(var - lr_t * grad, lr_t, l1, l2)).op


class AdagradDAOptimizer(Optimizer):
    """Adagrad dual averaging: g_acc += g; gg_acc += g²; with t = the global step's value + 1,
    var = -lr·sign(g_acc)·max(|g_acc| - l1·t, 0) / (l2·t·lr + √gg_acc). Pass the same
    `global_step` to `minimize` so that t advances (TF1). Slots `var/AdagradDA`
    (gradient_accumulator), `var/AdagradDA_1` (gradient_squared_accumulator)."""

    def __init__(self, learning_rate, global_step, initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False,
                 name="AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError("initial_gradient_squared_accumulator_value must be positive: "
                             f"{initial_gradient_squared_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate, self._global_step = learning_rate, global_step
        self._initial = initial_gradient_squared_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "gradient_accumulator")
            self._slot(v, "gradient_squared_accumulator", init="value", value=self._initial)

    def _apply_dense(self, grad, var):
        dt = var.dtype
        lr, l1, l2 = (self._lr(x, dt) for x in (self._learning_rate, self._l1, self._l2))
        step = m.cast(self._global_step, dt) + 1.0  # TF1: the step being taken, counted from 1
        g_acc = state_ops.assign_add(self.get_slot(var, "gradient_accumulator"), grad)
        gg_acc = state_ops.assign_add(self.get_slot(var, "gradient_squared_accumulator"), m.square(grad))
        shrunk = m.sign(g_acc) * m.maximum(m.abs(g_acc) - l1 * step, zeros_like(g_acc))
        return state_ops.assign(var, -lr * shrunk / (l2 * step * lr + m.sqrt(gg_acc))).op
