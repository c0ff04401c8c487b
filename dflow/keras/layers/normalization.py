"""Keras's `BatchNormalization` (over dflow's tf.layers one) and `LayerNormalization`, as TF 1.15.

BatchNormalization: momentum 0.99, epsilon 1e-3; variables gamma, beta, moving_mean,
moving_variance. `training` left out is the learning phase (a bool placeholder, False unless fed,
or the Python 0/1 `set_learning_phase` fixed). In graph mode the moving averages' update ops are
kept on the layer (`layer.updates`, which a Keras model runs while it trains), not put in
UPDATE_OPS; they assign only when `training` is true.
"""

from __future__ import annotations

from ... import nn
from ...kernels.array_ops import reshape
from ...layers import normalization as tf_norm
from ...layers.base import input_shape_of
from .. import constraints, initializers, regularizers
from ..engine.base_layer import InputSpec, Layer
from .core import _set_weights_args, _weights_config

__all__ = ["BatchNormalization", "LayerNormalization"]


class BatchNormalization(tf_norm.BatchNormalization, Layer):
    """Normalizes along `axis` with the batch's statistics while training, the moving ones otherwise."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None, trainable=True,
                 virtual_batch_size=None, adjustment=None, name=None, **kwargs):
        super().__init__(axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                         beta_initializer=initializers.get(beta_initializer),
                         gamma_initializer=initializers.get(gamma_initializer),
                         moving_mean_initializer=initializers.get(moving_mean_initializer),
                         moving_variance_initializer=initializers.get(moving_variance_initializer),
                         beta_regularizer=regularizers.get(beta_regularizer),
                         gamma_regularizer=regularizers.get(gamma_regularizer),
                         beta_constraint=constraints.get(beta_constraint),
                         gamma_constraint=constraints.get(gamma_constraint), renorm=renorm,
                         renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum, fused=fused,
                         trainable=trainable, virtual_batch_size=virtual_batch_size, adjustment=adjustment,
                         name=name, **kwargs)
        self.supports_masking = True

    def call(self, inputs, training=None):
        if training is None or isinstance(training, (bool, int)):
            training = bool(training)  # a Python phase: no cond in the graph
        return super().call(inputs, training=training)

    def get_config(self):
        config = Layer.get_config(self)
        config.update({
            "axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon, "center": self.center,
            "scale": self.scale,
            **_weights_config(self, ["beta", "gamma", "moving_mean", "moving_variance"], ["initializer"]),
            **_weights_config(self, ["beta", "gamma"], ["regularizer", "constraint"])})
        return config


class LayerNormalization(Layer):
    """Normalizes each example over `axis` (default the last): (x - mean) / sqrt(var + epsilon),
    then · gamma + beta (shape: the normalized axes' sizes)."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise ValueError(f"Expected an int or a list/tuple of ints for the argument 'axis', but "
                             f"received instead: {axis}")
        self.epsilon = epsilon
        self.center, self.scale = center, scale
        _set_weights_args(self, beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                          beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
                          beta_constraint=beta_constraint, gamma_constraint=gamma_constraint)
        self.supports_masking = True

    def build(self, input_shape):
        input_shape = input_shape_of(input_shape)
        ndims = input_shape.ndims
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        self._axes = sorted(a + ndims if a < 0 else a for a in axes)
        for a in self._axes:
            if not 0 <= a < ndims:
                raise ValueError(f"Invalid axis: {a}")
        if len(set(self._axes)) != len(self._axes):
            raise ValueError(f"Duplicate axis: {tuple(self._axes)}")
        param_shape = [input_shape[a].value for a in self._axes]
        self.gamma = self.add_weight("gamma", param_shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer, constraint=self.gamma_constraint,
                                     trainable=True) if self.scale else None
        self.beta = self.add_weight("beta", param_shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer, constraint=self.beta_constraint,
                                    trainable=True) if self.center else None
        self.input_spec = InputSpec(ndim=ndims)
        self.built = True

    def call(self, inputs):
        ndims = inputs.shape.ndims
        broadcast = [1] * ndims
        for a in self._axes:
            broadcast[a] = inputs.shape[a].value

        def shaped(v):
            if v is None or self._axes == [ndims - 1]:
                return v
            return reshape(v, broadcast)

        mean, variance = nn.moments(inputs, self._axes, keep_dims=True)
        out = nn.batch_normalization(inputs, mean, variance, shaped(self.beta), shaped(self.gamma), self.epsilon)
        out.set_shape(inputs.shape)
        return out

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({
            "axis": self.axis, "epsilon": self.epsilon, "center": self.center, "scale": self.scale,
            **_weights_config(self, ["beta", "gamma"])})
        return config
