"""Keras's core layers: `Dense`, `Dropout`, `Flatten`, `Activation` (over dflow's tf.layers where
TF1 had the same layer), with Keras's argument names, string identifiers and `get_config`."""

from __future__ import annotations

from ...layers import core as tf_core
from .. import activations, constraints, initializers, regularizers
from ..engine.base_layer import Layer

__all__ = ["Dense", "Dropout", "Flatten", "Activation"]


def _ser(module, value):
    return module.serialize(value) if value is not None else None


class Dense(tf_core.Dense, Layer):
    """activation(inputs · kernel + bias); Keras's defaults: glorot_uniform kernel, zeros bias."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(int(units), activation=activations.get(activation), use_bias=use_bias,
                         kernel_initializer=initializers.get(kernel_initializer),
                         bias_initializer=initializers.get(bias_initializer),
                         kernel_regularizer=regularizers.get(kernel_regularizer),
                         bias_regularizer=regularizers.get(bias_regularizer),
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=constraints.get(kernel_constraint),
                         bias_constraint=constraints.get(bias_constraint), **kwargs)
        self.supports_masking = True

    def get_config(self):
        config = Layer.get_config(self)
        config.update({
            "units": self.units, "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
            "kernel_initializer": _ser(initializers, self.kernel_initializer),
            "bias_initializer": _ser(initializers, self.bias_initializer),
            "kernel_regularizer": _ser(regularizers, self.kernel_regularizer),
            "bias_regularizer": _ser(regularizers, self.bias_regularizer),
            "activity_regularizer": _ser(regularizers, self.activity_regularizer),
            "kernel_constraint": _ser(constraints, self.kernel_constraint),
            "bias_constraint": _ser(constraints, self.bias_constraint)})
        return config


class Dropout(tf_core.Dropout, Layer):
    """Drops a fraction `rate` of the inputs while training (the learning phase by default)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(rate=rate, noise_shape=noise_shape, seed=seed, **kwargs)
        self.supports_masking = True

    def call(self, inputs, training=None):
        if training is None or self.rate == 0:
            return inputs
        return super().call(inputs, training=training)

    def get_config(self):
        config = Layer.get_config(self)
        config.update({"rate": self.rate, "noise_shape": self.noise_shape, "seed": self.seed})
        return config


class Flatten(tf_core.Flatten, Layer):
    """[batch, d1, d2, ...] -> [batch, d1·d2·...]."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)

    def get_config(self):
        config = Layer.get_config(self)
        config["data_format"] = self.data_format
        return config


class Activation(Layer):
    """Applies an activation (a name or a callable)."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config["activation"] = activations.serialize(self.activation)
        return config
