"""Optimizers (TF1's `tf.train.*Optimizer`): gradients in, assign ops out.

`minimize` = `compute_gradients` + `apply_gradients`. Updates are ordinary assign ops, so a train
step is deterministic (dflow/schedule/state.py): every gradient reads the variables' values at the
start of the step, slot updates feed the variable update by data flow, and the global step is
incremented after all updates.
"""

from __future__ import annotations

from .. import kernels as _k  # noqa: F401 - registers ops
from ..graph.gradients import gradients
from ..graph.graph import control_dependencies, current_executor, get_default_graph, name_scope
from ..graph.indexed_slices import IndexedSlices
from ..graph.keys import GraphKeys
from ..graph.ops import Tensor
from ..kernels import math_ops as m
from ..kernels import state_ops
from ..kernels.common import apply_op, convert_to_tensor
from ..kernels.control_ops import group
from ..kernels.creation_ops import ones_like, zeros_like
from ..kernels.data_dependent_ops import unique
from ..kernels.gather_ops import gather
from ..kernels.scatter_ops import unsorted_segment_sum
from ..state.variables import Variable, trainable_variables

__all__ = ["Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer",
           "AdagradOptimizer", "RMSPropOptimizer", "FtrlOptimizer"]


class Optimizer:
    """Base class: subclasses define `_create_slots(var_list)` and `_apply_dense(grad, var)`."""

    GATE_NONE, GATE_OP, GATE_GRAPH = 0, 1, 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}  # slot name -> {var handle op name: slot Variable}
        self._non_slot = {}

    def get_name(self):
        return self._name

    # ---- the public protocol -----------------------------------------------------------------
    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        """A list of (gradient or None, variable) for `var_list` (default: trainable variables).

        In eager mode `loss` is a function: it runs under a gradient tape (the executor's
        `compute_gradients` protocol) and var_list defaults to the trainable variables it read."""
        executor = current_executor()
        if executor is not None:
            if not callable(loss):
                raise RuntimeError("`loss` passed to Optimizer.compute_gradients should be a function when eager "
                                   "execution is enabled.")
            _, grads_and_vars = executor.compute_gradients(loss, var_list, grad_loss)
            if not grads_and_vars:
                raise ValueError("No variables to optimize.")
            return grads_and_vars
        if callable(loss):
            loss = loss()
        loss = convert_to_tensor(loss)
        if loss.dtype.base_dtype.name not in ("float16", "bfloat16", "float32", "float64"):
            raise ValueError(f"Invalid type tf.{loss.dtype.name} for {loss.name}, expected: [tf.float32, "
                             "tf.float64, tf.float16, tf.bfloat16].")  # TF1's words
        if var_list is None:
            var_list = trainable_variables() + get_default_graph().get_collection(
                GraphKeys.TRAINABLE_RESOURCE_VARIABLES)
        var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            if not isinstance(v, Variable):
                raise TypeError(f"Argument is not a dflow.Variable: {v!r}")
        grads = gradients(loss, var_list, grad_ys=grad_loss)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """An op applying the gradients (and incrementing `global_step` after, when given)."""
        grads_and_vars = [(g, v) for g, v in grads_and_vars]
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        with_grad = [(g, v) for g, v in grads_and_vars if g is not None]
        if not with_grad:
            raise ValueError("No gradients provided for any variable, check your graph for ops that do not "
                             "support gradients, between variables "
                             f"{[v.name for _, v in grads_and_vars]} and loss.")
        var_list = [v for _, v in with_grad]
        with control_dependencies(None):
            self._create_slots(var_list)
        with name_scope(name, self._name) as scope:
            self._prepare()
            updates = []
            for g, v in with_grad:
                with name_scope("update_" + v.op.name):
                    sparse = isinstance(g, IndexedSlices)
                    if not sparse:
                        g = convert_to_tensor(g)
                    if g.dtype != v.dtype:
                        raise TypeError(f"Gradient for {v.name!r} has dtype {g.dtype.name}, the variable "
                                        f"{v.dtype.name}")
                    update = self._apply_sparse_duplicate_indices(g, v) if sparse else self._apply_dense(g, v)
                    if v.constraint is not None:  # TF1: the projection runs after the update
                        with control_dependencies([update]):
                            update = state_ops.assign(v, v.constraint(v)).op
                    updates.append(update)
            if global_step is None:
                return self._finish(updates, scope)
            finish = self._finish(updates, "update")  # TF1: the step increment takes the scope's name
            with control_dependencies([finish]):
                return state_ops.assign_add(global_step, 1, name=scope).op

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        """`compute_gradients` then `apply_gradients`: the op of one training step."""
        gv = self.compute_gradients(loss, var_list=var_list, grad_loss=grad_loss)
        if all(g is None for g, _ in gv):
            raise ValueError("No gradients provided for any variable, check your graph for ops that do not "
                             f"support gradients, between variables {[v.name for _, v in gv]} and loss {loss}.")
        return self.apply_gradients(gv, global_step=global_step, name=name)

    # ---- slots -------------------------------------------------------------------------------
    def get_slot(self, var, name):
        return self._slots.get(name, {}).get(var.op.name)

    def get_slot_names(self):
        return sorted(self._slots)

    def variables(self):
        out = list(self._non_slot.values())
        for d in self._slots.values():
            out.extend(d.values())
        return out

    def _slot(self, var, slot_name, init="zeros", value=None):
        """Creates (once) a slot variable named `var/<optimizer name>` (`_1`, … for later slots)."""
        d = self._slots.setdefault(slot_name, {})
        if var.op.name not in d:
            graph = var.graph
            with graph.as_default(), name_scope(None):
                if init == "zeros":
                    initial = zeros_like(var.initialized_value())
                elif init == "ones":
                    initial = ones_like(var.initialized_value())
                else:
                    initial = m.cast(ones_like(var.initialized_value()), var.dtype) * value
                d[var.op.name] = Variable(initial, trainable=False, name=f"{var.op.name}/{self._name}",
                                          dtype=var.dtype)
        return d[var.op.name]

    def _non_slot_variable(self, name, initial_value, like):
        if name not in self._non_slot:
            with like.graph.as_default(), name_scope(None):
                self._non_slot[name] = Variable(initial_value, trainable=False, name=name, dtype=like.dtype)
        return self._non_slot[name]

    def _lr(self, lr, dtype):
        if callable(lr) and not isinstance(lr, Tensor):
            lr = lr()
        lr = lr._as_graph_element() if isinstance(lr, Variable) else lr
        t = convert_to_tensor(lr)
        return m.cast(t, dtype) if t.dtype != dtype else t

    # ---- hooks for subclasses ----------------------------------------------------------------
    def _create_slots(self, var_list):
        pass

    def _apply_sparse_duplicate_indices(self, grad, var):
        """A sparse gradient (IndexedSlices) with its repeated indices summed, then `_apply_sparse`
        (TF1's default)."""
        values, indices = _deduplicate(grad)
        return self._apply_sparse(IndexedSlices(values, indices, grad.dense_shape), var)

    def _apply_sparse(self, grad, var):
        """The update of the rows `grad.indices` (unique) only; optimizers without a sparse rule
        apply the densified gradient."""
        return self._apply_dense(convert_to_tensor(grad), var)

    def _prepare(self):
        pass

    def _finish(self, update_ops, name_scope_str):
        return group(*update_ops, name=name_scope_str)


def _deduplicate(grad):
    """(values summed per index, unique indices) of an IndexedSlices (TF1's `_deduplicate_indexed_slices`)."""
    uniq, pos = unique(grad.indices)
    return unsorted_segment_sum(grad.values, pos, apply_op("Size", [uniq], {"out_type": pos.dtype})), uniq


class GradientDescentOptimizer(Optimizer):
    """var -= learning_rate * grad."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply_dense(self, grad, var):
        return state_ops.assign_sub(var, self._lr(self._learning_rate, var.dtype) * grad).op

    def _apply_sparse_duplicate_indices(self, grad, var):
        # repeated rows add up in the scatter itself (TF1: no deduplication)
        return state_ops.scatter_sub(var, grad.indices, self._lr(self._learning_rate, var.dtype) * grad.values).op


class MomentumOptimizer(Optimizer):
    """accum = momentum * accum + grad; var -= lr * accum (or lr * (grad + momentum * accum))."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate, self._momentum, self._use_nesterov = learning_rate, momentum, use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "momentum")

    def _apply_dense(self, grad, var):
        lr = self._lr(self._learning_rate, var.dtype)
        mom = self._lr(self._momentum, var.dtype)
        accum = self.get_slot(var, "momentum")
        new_accum = state_ops.assign(accum, accum * mom + grad)
        step = grad + mom * new_accum if self._use_nesterov else new_accum
        return state_ops.assign_sub(var, lr * step).op

    def _apply_sparse(self, grad, var):
        # TF1's SparseApplyMomentum: only the rows at grad.indices (unique) change
        lr = self._lr(self._learning_rate, var.dtype)
        mom = self._lr(self._momentum, var.dtype)
        accum = self.get_slot(var, "momentum")
        g, idx = grad.values, grad.indices
        new_accum = gather(accum, idx) * mom + g
        step = g + mom * new_accum if self._use_nesterov else new_accum
        return group(state_ops.scatter_update(accum, idx, new_accum).op, state_ops.scatter_sub(var, idx, lr * step).op)


class AdamOptimizer(Optimizer):
    """Adam (Kingma & Ba) with TF1's update: lr_t = lr·√(1-β2ᵗ)/(1-β1ᵗ), var -= lr_t·m/(√v+ε)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr_value, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        self._non_slot_variable("beta1_power", self._beta1, first)
        self._non_slot_variable("beta2_power", self._beta2, first)
        for v in var_list:
            self._slot(v, "m")
            self._slot(v, "v")

    def _apply_dense(self, grad, var):
        dt = var.dtype
        b1p = m.cast(self._non_slot["beta1_power"], dt) if self._non_slot["beta1_power"].dtype != dt else \
            self._non_slot["beta1_power"]
        b2p = m.cast(self._non_slot["beta2_power"], dt) if self._non_slot["beta2_power"].dtype != dt else \
            self._non_slot["beta2_power"]
        lr = self._lr(self._lr_value, dt)
        b1, b2, eps = self._lr(self._beta1, dt), self._lr(self._beta2, dt), self._lr(self._epsilon, dt)
        lr_t = lr * m.sqrt(1.0 - b2p) / (1.0 - b1p)
        ms, vs = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = state_ops.assign(ms, ms * b1 + (1.0 - b1) * grad)
        v_t = state_ops.assign(vs, vs * b2 + (1.0 - b2) * m.square(grad))
        return state_ops.assign_sub(var, lr_t * m_t / (m.sqrt(v_t) + eps)).op

    def _apply_sparse(self, grad, var):
        # TF1's Adam._apply_sparse: the slots decay everywhere (dense), the gradient is scattered
        # into them, and the whole variable moves (TF1's non-lazy semantics)
        dt = var.dtype
        b1p, b2p = (self._non_slot[n] if self._non_slot[n].dtype == dt else m.cast(self._non_slot[n], dt)
                    for n in ("beta1_power", "beta2_power"))
        lr = self._lr(self._lr_value, dt)
        b1, b2, eps = self._lr(self._beta1, dt), self._lr(self._beta2, dt), self._lr(self._epsilon, dt)
        lr_t = lr * m.sqrt(1.0 - b2p) / (1.0 - b1p)
        ms, vs = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = state_ops.assign(ms, ms * b1)
        with control_dependencies([m_t]):
            m_t = state_ops.scatter_add(ms, grad.indices, grad.values * (1.0 - b1))
        v_t = state_ops.assign(vs, vs * b2)
        with control_dependencies([v_t]):
            v_t = state_ops.scatter_add(vs, grad.indices, m.square(grad.values) * (1.0 - b2))
        var_update = state_ops.assign_sub(var, lr_t * m_t / (m.sqrt(v_t) + eps))
        return group(var_update.op, m_t.op, v_t.op)

    def _finish(self, update_ops, name_scope_str):
        b1p, b2p = self._non_slot["beta1_power"], self._non_slot["beta2_power"]
        with control_dependencies(update_ops):
            u1 = state_ops.assign(b1p, b1p * self._lr(self._beta1, b1p.dtype))
            u2 = state_ops.assign(b2p, b2p * self._lr(self._beta2, b2p.dtype))
        return group(*(update_ops + [u1.op, u2.op]), name=name_scope_str)


class AdagradOptimizer(Optimizer):
    """accum += grad²; var -= lr · grad / √accum."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False, name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate, self._initial = learning_rate, initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "accumulator", init="value", value=self._initial)

    def _apply_dense(self, grad, var):
        acc = self.get_slot(var, "accumulator")
        new_acc = state_ops.assign_add(acc, m.square(grad))
        return state_ops.assign_sub(var, self._lr(self._learning_rate, var.dtype) * grad / m.sqrt(new_acc)).op

    def _apply_sparse(self, grad, var):
        # TF1's SparseApplyAdagrad: only the rows at grad.indices (unique) change
        acc = self.get_slot(var, "accumulator")
        g, idx = grad.values, grad.indices
        new_acc = gather(acc, idx) + m.square(g)
        step = self._lr(self._learning_rate, var.dtype) * g / m.sqrt(new_acc)
        return group(state_ops.scatter_update(acc, idx, new_acc).op, state_ops.scatter_sub(var, idx, step).op)


class RMSPropOptimizer(Optimizer):
    """ms = ρ·ms + (1-ρ)·g²; mom = μ·mom + lr·g/√(ms+ε) (centered: ms - mg²); var -= mom."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, centered=False,
                 name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate, self._decay, self._momentum = learning_rate, decay, momentum
        self._epsilon, self._centered = epsilon, centered

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "rms", init="ones")
            self._slot(v, "momentum")
            if self._centered:
                self._slot(v, "mg")

    def _apply_dense(self, grad, var):
        dt = var.dtype
        lr, rho = self._lr(self._learning_rate, dt), self._lr(self._decay, dt)
        mu, eps = self._lr(self._momentum, dt), self._lr(self._epsilon, dt)
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        ms_t = state_ops.assign(rms, rho * rms + (1.0 - rho) * m.square(grad))
        denom = ms_t
        if self._centered:
            mg = self.get_slot(var, "mg")
            mg_t = state_ops.assign(mg, rho * mg + (1.0 - rho) * grad)
            denom = ms_t - m.square(mg_t)
        mom_t = state_ops.assign(mom, mu * mom + lr * grad / m.sqrt(denom + eps))
        return state_ops.assign_sub(var, mom_t).op

    def _apply_sparse(self, grad, var):
        # TF1's SparseApply(Centered)RMSProp: only the rows at grad.indices (unique) change
        dt = var.dtype
        lr, rho = self._lr(self._learning_rate, dt), self._lr(self._decay, dt)
        mu, eps = self._lr(self._momentum, dt), self._lr(self._epsilon, dt)
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        g, idx = grad.values, grad.indices
        ms_t = rho * gather(rms, idx) + (1.0 - rho) * m.square(g)
        updates = [state_ops.scatter_update(rms, idx, ms_t).op]
        denom = ms_t
        if self._centered:
            mg = self.get_slot(var, "mg")
            mg_t = rho * gather(mg, idx) + (1.0 - rho) * g
            updates.append(state_ops.scatter_update(mg, idx, mg_t).op)
            denom = ms_t - m.square(mg_t)
        mom_t = mu * gather(mom, idx) + lr * g / m.sqrt(denom + eps)
        updates.append(state_ops.scatter_update(mom, idx, mom_t).op)
        updates.append(state_ops.scatter_sub(var, idx, mom_t).op)
        return group(*updates)


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal (McMahan et al. 2013) with TF1's dense update: accum' = accum + g²;
    linear += g - (accum'^-p - accum^-p)/lr · var; var = (l1·sign(linear) - linear)/(accum'^-p/lr + 2·l2)
    where |linear| > l1, else 0 (p = learning_rate_power). Slots `var/Ftrl` (accum), `var/Ftrl_1` (linear)."""

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False, name="Ftrl",
                 accum_name=None, linear_name=None, l2_shrinkage_regularization_strength=0.0):
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value} needs to be positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power} needs to be negative or zero")
        if l1_regularization_strength < 0.0 or l2_regularization_strength < 0.0:
            raise ValueError("l1_regularization_strength and l2_regularization_strength need to be positive or zero")
        if l2_shrinkage_regularization_strength:
            raise NotImplementedError("FtrlOptimizer: l2_shrinkage_regularization_strength is not supported")
        super().__init__(use_locking, name)
        self._learning_rate, self._power = learning_rate, learning_rate_power
        self._initial, self._l1, self._l2 = initial_accumulator_value, l1_regularization_strength, \
            l2_regularization_strength

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "accum", init="value", value=self._initial)
            self._slot(v, "linear")

    def _rows(self, grad, var, accum, linear, var_value):
        """(new accum, new linear, new var) of the FTRL step on these values (whole or rows)."""
        dt = var.dtype
        lr, power = self._lr(self._learning_rate, dt), self._lr(-self._power, dt)
        l1, l2 = self._lr(self._l1, dt), self._lr(self._l2, dt)
        new_accum = accum + m.square(grad)
        sigma = (m.pow(new_accum, power) - m.pow(accum, power)) / lr
        new_linear = linear + grad - sigma * var_value
        quadratic = m.pow(new_accum, power) / lr + 2.0 * l2
        shrunk = (l1 * m.sign(new_linear) - new_linear) / quadratic
        return new_accum, new_linear, m.where(m.greater(m.abs(new_linear), l1), shrunk, zeros_like(shrunk))

    def _apply_dense(self, grad, var):
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        new_accum, new_linear, new_var = self._rows(grad, var, accum, linear, var)
        new_linear = state_ops.assign(linear, new_linear)
        with control_dependencies([new_linear]):
            update_accum = state_ops.assign(accum, new_accum)
        return group(state_ops.assign(var, new_var).op, update_accum.op)

    def _apply_sparse(self, grad, var):
        # TF1's SparseApplyFtrl: only the rows at grad.indices (unique) change
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        idx = grad.indices
        new_accum, new_linear, new_var = self._rows(grad.values, var, gather(accum, idx), gather(linear, idx),
                                                    gather(var, idx))
        return group(state_ops.scatter_update(var, idx, new_var).op,
                     state_ops.scatter_update(linear, idx, new_linear).op,
                     state_ops.scatter_update(accum, idx, new_accum).op)
