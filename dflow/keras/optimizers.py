"""`tf.keras.optimizers` as TensorFlow 1.15 shipped them (Keras's OptimizerV2 rules).

An optimizer keeps its hyperparameters in scalar variables (`opt.lr` is `<scope>/Adam/learning_rate`,
so `K.set_value(opt.lr, x)` works, as ReduceLROnPlateau needs), counts steps in `iterations`
(int64 `iter`), and names its slots after the variable (`training/Adam/dense/kernel/m:0` when
`fit` calls `get_updates` inside `name_scope("training")`). The learning rate decays as
lr / (1 + decay * iterations). Applying gradients is dflow.train's `Optimizer.apply_gradients`
(sparse gradients densified or deduplicated, constraints projected after each update); each
class below gives its own `_create_slots`, `_prepare` and `_apply_dense`.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..eager.context import executing_eagerly
from ..graph.dtypes import as_dtype
from ..graph.gradients import gradients as _gradients
from ..graph.graph import control_dependencies, get_default_graph, name_scope
from ..kernels import math_ops as m
from ..kernels import state_ops
from ..kernels.common import convert_to_tensor
from ..kernels.control_ops import group
from ..kernels.creation_ops import zeros
from ..state.variables import Variable
from ..train import clip_ops
from ..train import optimizer as tf_optimizer
from . import backend as K
from .utils.generic_utils import deserialize_keras_object

__all__ = ["Optimizer", "SGD", "RMSprop", "Adagrad", "Adadelta", "Adam", "Adamax", "Nadam", "TFOptimizer",
           "get", "serialize", "deserialize"]


class Optimizer(tf_optimizer.Optimizer):
    """Base class of Keras's optimizers (OptimizerV2 of TF 1.15)."""

    _ALLOWED = {"lr", "decay", "clipnorm", "clipvalue"}

    def __init__(self, name, **kwargs):
        unknown = set(kwargs) - self._ALLOWED
        if unknown:
            raise TypeError(f"Unexpected keyword argument passed to optimizer: {sorted(unknown)[0]}")
        for key in ("clipnorm", "clipvalue", "decay"):
            if kwargs.get(key) is not None and kwargs[key] < 0:
                raise ValueError(f"Expected {key} >= 0, received: {kwargs[key]}")
        super().__init__(False, name)
        self.clipnorm = kwargs.get("clipnorm")
        self.clipvalue = kwargs.get("clipvalue")
        self._initial_decay = float(kwargs.get("decay", 0.0) or 0.0)
        self._hyper = {}  # name -> python value or Variable (once created)
        self._iterations = None
        self._weights = []  # iterations, then slots in the order made (OptimizerV2's `weights`)

    # ---- hyperparameters -------------------------------------------------------------------------
    def _set_hyper(self, name, value):
        current = self._hyper.get(name)
        if isinstance(current, Variable):
            K.set_value(current, value)
        else:
            self._hyper[name] = value

    def _get_hyper(self, name, dtype=None):
        value = self._hyper[name]
        if not isinstance(value, Variable):
            value = self._hyper[name] = self._new_variable(name, value, K.floatx())
        if dtype is None:
            return value
        dtype = as_dtype(dtype)
        return value if value.dtype.base_dtype == dtype else m.cast(value, dtype)

    def _new_variable(self, name, initial, dtype):
        with self._in_scope(), control_dependencies(None):
            v = Variable(np.asarray(initial, dtype=as_dtype(dtype).as_numpy_dtype), name=name, trainable=False)
        K.track_variable(v)
        return v

    def _in_scope(self):
        """The optimizer's own name scope (opened once per graph, then re-entered)."""
        if self.__dict__.get("_applying"):
            return contextlib.nullcontext()
        if executing_eagerly():
            return name_scope(self._name)
        scopes = self.__dict__.setdefault("_scopes", {})
        graph = get_default_graph()
        if graph not in scopes:
            with name_scope(self._name) as scope:
                pass
            scopes[graph] = scope
        return name_scope(scopes[graph])

    def __getattr__(self, name):
        hyper = self.__dict__.get("_hyper", {})
        if name == "lr" and "learning_rate" in hyper:
            name = "learning_rate"
        if name in hyper:
            return self._get_hyper(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name == "lr":
            name = "learning_rate"
        if "_hyper" in self.__dict__ and name in self._hyper:
            self._set_hyper(name, value)
        else:
            super().__setattr__(name, value)

    @property
    def iterations(self):
        if self._iterations is None:
            self._iterations = self._new_variable("iter", 0, "int64")
            self._weights.insert(0, self._iterations)
        return self._iterations

    def _decayed_lr(self, dtype):
        lr = self._get_hyper("learning_rate", dtype)
        if self._initial_decay > 0.0:
            lr = lr / (1.0 + self._get_hyper("decay", dtype) * m.cast(self.iterations, dtype))
        return lr

    def _local_step(self, dtype):
        return m.cast(self.iterations + 1, dtype)

    def _trackable_children(self):
        """Object-checkpoint children: `iter` and the hyperparameters made variables, as TF's
        OptimizerV2 (its slots are saved as `.OPTIMIZER_SLOT`s of the variables, train/trackable.py)."""
        out = [("iter", self._iterations)] if self._iterations is not None else []
        return out + [(name, v) for name, v in sorted(self._hyper.items()) if isinstance(v, Variable)]

    # ---- slots ---------------------------------------------------------------------------------------
    def add_slot(self, var, slot_name, initializer="zeros"):
        """The slot `<optimizer scope>/<variable name>/<slot_name>`, made once."""
        slots = self._slots.setdefault(slot_name, {})
        if var.op.name not in slots:
            shape, dtype = var.shape.as_list(), var.dtype.base_dtype
            fill = 0.0 if initializer == "zeros" else float(initializer)
            with var.graph.as_default(), self._in_scope(), control_dependencies(None):
                slot = Variable(lambda: zeros(shape, dtype) + m.cast(fill, dtype), name=f"{var.op.name}/{slot_name}",
                                trainable=False, dtype=dtype)
            K.track_variable(slot)
            slots[var.op.name] = slot
            self._weights.append(slot)
        return slots[var.op.name]

    def _slot(self, var, slot_name, init="zeros", value=None):  # dflow.train's hook, Keras's names
        return self.add_slot(var, slot_name, value if init == "value" else init)

    # ---- the Keras protocol ------------------------------------------------------------------------
    def get_gradients(self, loss, params):
        """d loss / d params, clipped by `clipnorm`/`clipvalue`; ValueError for a missing gradient."""
        grads = _gradients(loss, list(params))
        if any(g is None for g in grads):
            raise ValueError("An operation has `None` for gradient. Please make sure that all of your ops have a "
                             "gradient defined (i.e. are differentiable). Common ops without gradient: "
                             "K.argmax, K.round, K.eval.")
        return self._clip(grads)

    def _clip(self, grads):
        if self.clipnorm is not None:
            grads = [None if g is None else clip_ops.clip_by_norm(g, self.clipnorm) for g in grads]
        if self.clipvalue is not None:
            grads = [None if g is None else m.clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        return grads

    def get_updates(self, loss, params):
        grads = self.get_gradients(loss, params)
        return [self.apply_gradients(list(zip(grads, params)))]

    def apply_gradients(self, grads_and_vars, name=None):
        """The op applying the gradients, then `iterations += 1` (runs at once in eager mode)."""
        grads_and_vars = list(grads_and_vars)
        _ = self.iterations
        with self._in_scope():
            with control_dependencies(None):
                for hyper in self._hyper:
                    self._get_hyper(hyper)
            self._applying = True
            self._step_cache = {}
            try:
                return super().apply_gradients(grads_and_vars, name=name)
            finally:
                self._applying = False

    def minimize(self, loss, var_list, grad_loss=None, name=None):
        """`loss` (a tensor, or a callable in eager mode) minimized over `var_list` by one step."""
        if callable(var_list):
            var_list = var_list()
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, grad_loss=grad_loss)
        grads = self._clip([g for g, _ in grads_and_vars])
        return self.apply_gradients(list(zip(grads, [v for _, v in grads_and_vars])), name=name)

    def _finish(self, update_ops, name_scope_str):
        with control_dependencies(update_ops):
            step = state_ops.assign_add(self.iterations, np.int64(1))
        return group(*(list(update_ops) + [step.op]), name=name_scope_str)

    # ---- state and configuration ------------------------------------------------------------------
    @property
    def weights(self):
        return list(self._weights)

    def variables(self):
        return self.weights

    def get_weights(self):
        return K.batch_get_value(self._weights)

    def set_weights(self, weights):
        K._set_weights_checked(self.weights, weights, "optimizer", self._name)

    def _serialize_hyperparameter(self, name):
        value = self._hyper[name]
        if isinstance(value, Variable):
            return float(str(np.float32(K.get_value(value))))  # 0.001, as TF's float32 prints
        return value() if callable(value) else value

    def get_config(self):
        config = {"name": self._name}
        if self.clipnorm is not None:
            config["clipnorm"] = self.clipnorm
        if self.clipvalue is not None:
            config["clipvalue"] = self.clipvalue
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if "lr" in config:
            config["learning_rate"] = config.pop("lr")
        return cls(**config)


def _lr(learning_rate, kwargs):
    return kwargs.pop("lr", learning_rate)


class SGD(Optimizer):
    """var -= lr·g; with momentum: m = μ·m - lr·g, var += m (nesterov: var += μ·m - lr·g)."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        learning_rate = _lr(learning_rate, kwargs)
        super().__init__(name, **kwargs)
        if not 0 <= momentum <= 1:  # TF's check
            raise ValueError("`momentum` must be between [0, 1].")
        self._hyper.update(learning_rate=learning_rate, decay=self._initial_decay, momentum=momentum)
        self._momentum = momentum > 0
        self.nesterov = nesterov

    def _create_slots(self, var_list):
        if self._momentum:
            for v in var_list:
                self.add_slot(v, "momentum")

    def _apply_dense(self, grad, var):
        lr = self._decayed_lr(var.dtype.base_dtype)
        if not self._momentum:
            return state_ops.assign_sub(var, lr * grad).op
        mu = self._get_hyper("momentum", var.dtype.base_dtype)
        mom = self.get_slot(var, "momentum")
        mom_t = state_ops.assign(mom, mu * mom - lr * grad)
        step = mu * mom_t - lr * grad if self.nesterov else mom_t
        return state_ops.assign_add(var, step).op

    def get_config(self):
        return {**super().get_config(), "learning_rate": self._serialize_hyperparameter("learning_rate"),
                "decay": self._serialize_hyperparameter("decay"),
                "momentum": self._serialize_hyperparameter("momentum"), "nesterov": self.nesterov}


class RMSprop(Optimizer):
    """rms = ρ·rms + (1-ρ)·g² (from 0); var -= lr·g/(√rms + ε) (centered: rms - mg²); with momentum
    TF's ApplyRMSProp: mom = μ·mom + lr·g/√(rms + ε), var -= mom."""

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, name="RMSprop",
                 **kwargs):
        learning_rate = _lr(learning_rate, kwargs)
        super().__init__(name, **kwargs)
        self._hyper.update(learning_rate=learning_rate, decay=self._initial_decay, rho=rho, momentum=momentum)
        self._momentum = momentum > 0
        self.epsilon = K.epsilon() if epsilon is None else epsilon
        self.centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            self.add_slot(v, "rms")
        if self._momentum:
            for v in var_list:
                self.add_slot(v, "momentum")
        if self.centered:
            for v in var_list:
                self.add_slot(v, "mg")

    def _apply_dense(self, grad, var):
        dt = var.dtype.base_dtype
        lr, rho = self._decayed_lr(dt), self._get_hyper("rho", dt)
        eps = m.cast(self.epsilon, dt)
        rms = self.get_slot(var, "rms")
        rms_t = state_ops.assign(rms, rho * rms + (1.0 - rho) * m.square(grad))
        denom = rms_t
        if self.centered:
            mg = self.get_slot(var, "mg")
            mg_t = state_ops.assign(mg, rho * mg + (1.0 - rho) * grad)
            denom = rms_t - m.square(mg_t)
        if self._momentum:
            mom = self.get_slot(var, "momentum")
            mom_t = state_ops.assign(mom, self._get_hyper("momentum", dt) * mom + lr * grad / m.sqrt(denom + eps))
            return state_ops.assign_sub(var, mom_t).op
        return state_ops.assign_sub(var, lr * grad / (m.sqrt(denom) + eps)).op

    def get_config(self):
        return {**super().get_config(), "learning_rate": self._serialize_hyperparameter("learning_rate"),
                "decay": self._serialize_hyperparameter("decay"), "rho": self._serialize_hyperparameter("rho"),
                "momentum": self._serialize_hyperparameter("momentum"), "epsilon": self.epsilon,
                "centered": self.centered}


class Adagrad(Optimizer):
    """acc += g² (from initial_accumulator_value); var -= lr·g/(√acc + ε)."""

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, name="Adagrad", **kwargs):
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value must be non-negative: {initial_accumulator_value}")
        learning_rate = _lr(learning_rate, kwargs)
        super().__init__(name, **kwargs)
        self._hyper.update(learning_rate=learning_rate, decay=self._initial_decay)
        self._initial_accumulator_value = initial_accumulator_value
        self.epsilon = K.epsilon() if epsilon is None else epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self.add_slot(v, "accumulator", self._initial_accumulator_value)

    def _apply_dense(self, grad, var):
        dt = var.dtype.base_dtype
        acc = self.get_slot(var, "accumulator")
        acc_t = state_ops.assign_add(acc, m.square(grad))
        return state_ops.assign_sub(var, self._decayed_lr(dt) * grad / (m.sqrt(acc_t) + m.cast(self.epsilon, dt))).op

    def get_config(self):
        return {**super().get_config(), "learning_rate": self._serialize_hyperparameter("learning_rate"),
                "decay": self._serialize_hyperparameter("decay"),
                "initial_accumulator_value": self._initial_accumulator_value, "epsilon": self.epsilon}


class Adadelta(Optimizer):
    """ag = ρ·ag + (1-ρ)·g²; u = √(av + ε)/√(ag + ε)·g; av = ρ·av + (1-ρ)·u²; var -= lr·u."""

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name="Adadelta", **kwargs):
        learning_rate = _lr(learning_rate, kwargs)
        super().__init__(name, **kwargs)
        self._hyper.update(learning_rate=learning_rate, decay=self._initial_decay, rho=rho)
        self.epsilon = K.epsilon() if epsilon is None else epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self.add_slot(v, "accum_grad")
        for v in var_list:
            self.add_slot(v, "accum_var")

    def _apply_dense(self, grad, var):
        dt = var.dtype.base_dtype
        rho, eps = self._get_hyper("rho", dt), m.cast(self.epsilon, dt)
        ag, av = self.get_slot(var, "accum_grad"), self.get_slot(var, "accum_var")
        ag_t = state_ops.assign(ag, rho * ag + (1.0 - rho) * m.square(grad))
        update = m.sqrt(av + eps) / m.sqrt(ag_t + eps) * grad
        av_t = state_ops.assign(av, rho * av + (1.0 - rho) * m.square(update))
        with control_dependencies([av_t]):
            return state_ops.assign_sub(var, self._decayed_lr(dt) * update).op

    def get_config(self):
        return {**super().get_config(), "learning_rate": self._serialize_hyperparameter("learning_rate"),
                "decay": self._serialize_hyperparameter("decay"), "rho": self._serialize_hyperparameter("rho"),
                "epsilon": self.epsilon}


class _AdamBase(Optimizer):
    def __init__(self, learning_rate, beta_1, beta_2, epsilon, name, kwargs):
        learning_rate = _lr(learning_rate, kwargs)
        super().__init__(name, **kwargs)
        self._hyper.update(learning_rate=learning_rate, decay=self._initial_decay, beta_1=beta_1, beta_2=beta_2)
        self.epsilon = K.epsilon() if epsilon is None else epsilon

    def get_config(self):
        return {**super().get_config(), "learning_rate": self._serialize_hyperparameter("learning_rate"),
                "decay": self._serialize_hyperparameter("decay"), "beta_1": self._serialize_hyperparameter("beta_1"),
                "beta_2": self._serialize_hyperparameter("beta_2"), "epsilon": self.epsilon}


class Adam(_AdamBase):
    """m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²; var -= lr·√(1-β2ᵗ)/(1-β1ᵗ)·m/(√v + ε)
    (amsgrad: √max(v̂, v))."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, name="Adam",
                 **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, name, kwargs)
        self.amsgrad = amsgrad

    def _create_slots(self, var_list):
        for slot in ("m", "v") + (("vhat",) if self.amsgrad else ()):
            for v in var_list:
                self.add_slot(v, slot)

    def _coefficients(self, dt):
        """(β1, 1-β1, β2, 1-β2, lr_t, ε) in dtype `dt`: scalars shared by every variable of one step
        (made once per apply_gradients and dtype, as TF's _prepare_local)."""
        cache = self._step_cache
        if dt not in cache:
            b1, b2, t = self._get_hyper("beta_1", dt), self._get_hyper("beta_2", dt), self._local_step(dt)
            lr_t = self._decayed_lr(dt) * m.sqrt(1.0 - m.pow(b2, t)) / (1.0 - m.pow(b1, t))
            cache[dt] = (b1, 1.0 - b1, b2, 1.0 - b2, lr_t, m.cast(self.epsilon, dt))
        return cache[dt]

    def _apply_dense(self, grad, var):
        b1, one_minus_b1, b2, one_minus_b2, lr_t, eps = self._coefficients(var.dtype.base_dtype)
        ms, vs = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = state_ops.assign(ms, b1 * ms + one_minus_b1 * grad)
        v_t = state_ops.assign(vs, b2 * vs + one_minus_b2 * m.square(grad))
        if self.amsgrad:
            vhat = self.get_slot(var, "vhat")
            v_t = state_ops.assign(vhat, m.maximum(vhat, v_t))
        return state_ops.assign_sub(var, lr_t * m_t / (m.sqrt(v_t) + eps)).op

    def get_config(self):
        return {**super().get_config(), "amsgrad": self.amsgrad}


class Adamax(_AdamBase):
    """m = β1·m + (1-β1)·g; u = max(β2·u, |g|); var -= lr/(1-β1ᵗ)·m/(u + ε)."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="Adamax", **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, name, kwargs)

    def _create_slots(self, var_list):
        for slot in ("m", "v"):
            for v in var_list:
                self.add_slot(v, slot)

    def _apply_dense(self, grad, var):
        dt = var.dtype.base_dtype
        b1, b2, t = self._get_hyper("beta_1", dt), self._get_hyper("beta_2", dt), self._local_step(dt)
        lr_t = self._decayed_lr(dt) / (1.0 - m.pow(b1, t))
        ms, us = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = state_ops.assign(ms, b1 * ms + (1.0 - b1) * grad)
        u_t = state_ops.assign(us, m.maximum(b2 * us, m.abs(grad)))
        return state_ops.assign_sub(var, lr_t * m_t / (u_t + m.cast(self.epsilon, dt))).op


class Nadam(_AdamBase):
    """Adam with Nesterov momentum and Keras's momentum schedule μₜ = β1·(1 - ½·0.96^(0.004·t));
    `decay` (schedule_decay, 0.004) shapes that schedule, not the learning rate."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="Nadam", **kwargs):
        kwargs["decay"] = kwargs.pop("schedule_decay", kwargs.get("decay", 0.004))
        super().__init__(learning_rate, beta_1, beta_2, epsilon, name, kwargs)
        self._m_cache = None

    def _create_slots(self, var_list):
        if self._m_cache is None:
            self._m_cache = self._new_variable("momentum_cache", 1.0, var_list[0].dtype.base_dtype)
            self._weights.append(self._m_cache)
        for slot in ("m", "v"):
            for v in var_list:
                self.add_slot(v, slot)

    def _prepare(self):
        dt = self._m_cache.dtype.base_dtype
        b1, t = self._get_hyper("beta_1", dt), self._local_step(dt)
        decay_base = m.cast(0.96, dt)
        self._mu_t = b1 * (1.0 - 0.5 * m.pow(decay_base, self._initial_decay * t))
        self._mu_next = b1 * (1.0 - 0.5 * m.pow(decay_base, self._initial_decay * (t + 1.0)))
        self._m_schedule_new = convert_to_tensor(self._m_cache) * self._mu_t
        self._m_schedule_next = self._m_schedule_new * self._mu_next

    def _decayed_lr(self, dtype):  # Nadam's decay is the schedule's
        return self._get_hyper("learning_rate", dtype)

    def _apply_dense(self, grad, var):
        dt = var.dtype.base_dtype
        b1, b2, t = self._get_hyper("beta_1", dt), self._get_hyper("beta_2", dt), self._local_step(dt)
        mu_t, mu_next = m.cast(self._mu_t, dt), m.cast(self._mu_next, dt)
        sched_new, sched_next = m.cast(self._m_schedule_new, dt), m.cast(self._m_schedule_next, dt)
        ms, vs = self.get_slot(var, "m"), self.get_slot(var, "v")
        g_prime = grad / (1.0 - sched_new)
        m_t = state_ops.assign(ms, b1 * ms + (1.0 - b1) * grad)
        v_t = state_ops.assign(vs, b2 * vs + (1.0 - b2) * m.square(grad))
        m_bar = (1.0 - mu_t) * g_prime + mu_next * (m_t / (1.0 - sched_next))
        v_prime = v_t / (1.0 - m.pow(b2, t))
        step = self._get_hyper("learning_rate", dt) * m_bar / (m.sqrt(v_prime) + m.cast(self.epsilon, dt))
        return state_ops.assign_sub(var, step).op

    def _finish(self, update_ops, name_scope_str):
        cache = state_ops.assign(self._m_cache, self._m_schedule_new)
        return super()._finish(list(update_ops) + [cache.op], name_scope_str)

    def get_config(self):
        config = super().get_config()
        config["decay"] = self._initial_decay
        return config


class TFOptimizer(Optimizer):
    """A `tf.train` optimizer under Keras's protocol (`compile(optimizer=tf.train.AdamOptimizer())`)."""

    def __init__(self, optimizer, iterations=None):
        super().__init__(getattr(optimizer, "_name", "TFOptimizer"))
        self.optimizer = optimizer
        if iterations is not None:
            self._iterations = iterations
            self._weights.insert(0, iterations)

    def get_updates(self, loss, params):
        grads = self.optimizer.compute_gradients(loss, params)
        return [self.optimizer.apply_gradients(grads, global_step=self.iterations)]

    def apply_gradients(self, grads_and_vars, name=None):
        return self.optimizer.apply_gradients(list(grads_and_vars), global_step=self.iterations)

    def minimize(self, loss, var_list, grad_loss=None, name=None):
        return self.optimizer.minimize(loss, var_list=var_list, grad_loss=grad_loss, global_step=self.iterations)

    @property
    def weights(self):
        raise NotImplementedError("TFOptimizer's weights are the wrapped optimizer's: use optimizer.variables()")

    def get_config(self):
        raise NotImplementedError("A TFOptimizer (wrapping a tf.train optimizer) cannot be serialized.")

    @classmethod
    def from_config(cls, config, custom_objects=None):
        raise NotImplementedError("A TFOptimizer (wrapping a tf.train optimizer) cannot be deserialized.")


sgd, rmsprop, adagrad, adadelta, adam, adamax, nadam = SGD, RMSprop, Adagrad, Adadelta, Adam, Adamax, Nadam
_TABLE = {cls.__name__.lower(): cls for cls in (SGD, RMSprop, Adagrad, Adadelta, Adam, Adamax, Nadam)}
_TABLE.update({cls.__name__: cls for cls in (SGD, RMSprop, Adagrad, Adadelta, Adam, Adamax, Nadam, TFOptimizer)})


def serialize(optimizer):
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config, custom_objects=None):
    if isinstance(config, dict) and isinstance(config.get("class_name"), str):
        config = {**config, "class_name": _TABLE.get(config["class_name"].lower(), None).__name__
                  if config["class_name"].lower() in _TABLE else config["class_name"]}
    return deserialize_keras_object(config, _TABLE, custom_objects, "optimizer")


def get(identifier):
    """An optimizer for a name ('adam'), a config dict, a Keras optimizer or a `tf.train` one."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, tf_optimizer.Optimizer):
        return TFOptimizer(identifier)
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return deserialize({"class_name": identifier, "config": {}})
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")
