"""`tf.contrib.opt` (TF 1.15): the optimizers TF1 programs import from it.

- `AdamWOptimizer`, `MomentumWOptimizer` and their `DecoupledWeightDecayExtension` (Loshchilov &
  Hutter): before each update the variable decays by `weight_decay * var` (not scaled by the
  learning rate, as TF's: schedule it yourself), only for the variables of `decay_var_list` when
  given; a sparse gradient decays only the rows it touches.
- `LazyAdamOptimizer`: Adam whose sparse update reads and writes only the rows of the gradient
  (the moments of the other rows do not decay), as TF's; dense gradients are Adam's.
- `MovingAverageOptimizer`: an optimizer whose step also updates an ExponentialMovingAverage of
  the variables, and whose `swapping_saver()` saves the averages under the variables' names (and
  the variables under the averages'), so a restore for evaluation loads the averages.
"""

from __future__ import annotations

from ..graph.graph import control_dependencies
from ..io.saver import Saver
from ..kernels import state_ops
from ..kernels.control_ops import group, no_op
from ..kernels.gather_ops import gather
from ..state.variables import global_variables
from ..train.moving_averages import ExponentialMovingAverage
from ..train.optimizer import AdamOptimizer, MomentumOptimizer, Optimizer

__all__ = ["AdamWOptimizer", "DecoupledWeightDecayExtension", "LazyAdamOptimizer", "MomentumWOptimizer",
           "MovingAverageOptimizer"]


class DecoupledWeightDecayExtension:
    """Mixed in before an optimizer class: its updates first decay the variable by
    `weight_decay * var` (a callable `weight_decay` is called at graph build)."""

    def __init__(self, weight_decay, **kwargs):
        self._weight_decay = weight_decay
        self._decay_var_list = None
        super().__init__(**kwargs)

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=Optimizer.GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None, grad_loss=None,
                 decay_var_list=None):
        self._decay_var_list = None if decay_var_list is None else {v.op.name for v in decay_var_list}
        return super().minimize(loss, global_step=global_step, var_list=var_list, gate_gradients=gate_gradients,
                                aggregation_method=aggregation_method,
                                colocate_gradients_with_ops=colocate_gradients_with_ops, name=name,
                                grad_loss=grad_loss)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None, decay_var_list=None):
        if decay_var_list is not None:
            self._decay_var_list = {v.op.name for v in decay_var_list}
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _decays(self, var):
        return self._decay_var_list is None or var.op.name in self._decay_var_list

    def _wd(self, var):
        return self._lr(self._weight_decay, var.dtype)

    def _apply_dense(self, grad, var):
        decay = state_ops.assign_sub(var, self._wd(var) * var).op if self._decays(var) else no_op()
        with control_dependencies([decay]):
            return super()._apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        if not self._decays(var):
            return super()._apply_sparse(grad, var)
        decay = state_ops.scatter_add(var, grad.indices, -self._wd(var) * gather(var, grad.indices)).op
        with control_dependencies([decay]):
            return super()._apply_sparse(grad, var)


class AdamWOptimizer(DecoupledWeightDecayExtension, AdamOptimizer):
    """Adam with decoupled weight decay: var -= weight_decay * var, then Adam's update."""

    def __init__(self, weight_decay, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False,
                 name="AdamW"):
        super().__init__(weight_decay, learning_rate=learning_rate, beta1=beta1, beta2=beta2, epsilon=epsilon,
                         use_locking=use_locking, name=name)


class MomentumWOptimizer(DecoupledWeightDecayExtension, MomentumOptimizer):
    """Momentum with decoupled weight decay: var -= weight_decay * var, then Momentum's update."""

    def __init__(self, weight_decay, learning_rate, momentum, use_locking=False, name="MomentumW",
                 use_nesterov=False):
        super().__init__(weight_decay, learning_rate=learning_rate, momentum=momentum, use_locking=use_locking,
                         name=name, use_nesterov=use_nesterov)


class LazyAdamOptimizer(AdamOptimizer):
    """Adam whose sparse updates touch only the gradient's rows (TF 1.15's LazyAdam)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False,
                 name="LazyAdam"):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)

    def _apply_sparse(self, grad, var):
        dt = var.dtype
        b1p, b2p = (self._non_slot[n] if self._non_slot[n].dtype == dt else self._lr(self._non_slot[n], dt)
                    for n in ("beta1_power", "beta2_power"))
        lr = self._lr(self._lr_value, dt) * (1.0 - b2p) ** 0.5 / (1.0 - b1p)
        b1, b2, eps = self._lr(self._beta1, dt), self._lr(self._beta2, dt), self._lr(self._epsilon, dt)
        idx, g = grad.indices, grad.values
        ms, vs = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = state_ops.scatter_update(ms, idx, b1 * gather(ms, idx) + (1.0 - b1) * g)
        v_t = state_ops.scatter_update(vs, idx, b2 * gather(vs, idx) + (1.0 - b2) * g * g)
        step = lr * gather(m_t, idx) / (gather(v_t, idx) ** 0.5 + eps)
        return group(state_ops.scatter_sub(var, idx, step).op, m_t.op, v_t.op)


class MovingAverageOptimizer(Optimizer):
    """`opt` whose step is followed by an ExponentialMovingAverage update of the variables it
    trained (TF 1.15's: `average_decay`, `num_updates`; `sequential_update` orders the average
    after the step, as it always is here)."""

    def __init__(self, opt, average_decay=0.9999, num_updates=None, sequential_update=True):
        super().__init__(False, opt.get_name() if hasattr(opt, "get_name") else opt._name)
        self._optimizer = opt
        self._ema = ExponentialMovingAverage(average_decay, num_updates=num_updates)
        self._variables = []

    def compute_gradients(self, *args, **kwargs):
        return self._optimizer.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        train_op = self._optimizer.apply_gradients(grads_and_vars, global_step=global_step, name=name)
        variables = [v for g, v in grads_and_vars if g is not None]
        self._variables.extend(v for v in variables if v not in self._variables)
        with control_dependencies([train_op]):
            return self._ema.apply(variables)

    def get_slot(self, var, name):
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self):
        return self._optimizer.get_slot_names()

    def swapping_saver(self, var_list=None, name="swapping_saver", **kwargs):
        """A Saver writing each averaged variable's average under the variable's name (and the
        variable under the average's), every other variable under its own name: restoring its
        checkpoint into the same graph loads the averages into the variables."""
        if not self._variables:
            raise RuntimeError("Must call apply_gradients or minimize before creating the swapping_saver")
        var_list = global_variables() if var_list is None else list(var_list)
        averaged = {v.op.name: v for v in self._variables}
        mapping = {}
        for v in var_list:
            if v.op.name in averaged:
                avg = self._ema.average(v)
                mapping[v.op.name], mapping[avg.op.name] = avg, v
            elif v.op.name not in mapping:
                mapping[v.op.name] = v
        return Saver(mapping, name=name, **kwargs)
