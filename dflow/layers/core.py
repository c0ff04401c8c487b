"""`Dense`, `Dropout`, `Flatten` and their functions (TF1's `tf.layers.core`)."""

from __future__ import annotations

import numpy as np

from .. import nn
from ..graph.shape import TensorShape
from ..kernels.array_ops import identity, reshape, stack
from ..kernels.array_ops import shape as shape_op
from ..kernels.linalg_ops import matmul, tensordot
from ..kernels.manip_ops import expand_dims, transpose
from ..state.initializers import zeros_initializer
from .base import InputSpec, Layer, input_shape_of
from .utils import normalize_data_format, smart_cond

__all__ = ["Dense", "Dropout", "Flatten", "dense", "dropout", "flatten"]


class Dense(Layer):
    """outputs = activation(inputs · kernel + bias); kernel [last dim of inputs, units].

    Inputs of rank > 2 are contracted along their last axis (TF1's tensordot). ValueError when
    the last dimension is unknown.
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True,
                 name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape):
        input_shape = input_shape_of(input_shape)
        last = input_shape[-1].value if input_shape.ndims else None
        if last is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self.kernel = self.add_weight("kernel", shape=[last, self.units], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
                                      dtype=self.dtype, trainable=True)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=[self.units], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        dtype=self.dtype, trainable=True)
        self.built = True

    def call(self, inputs):
        rank = inputs.shape.ndims
        if rank is not None and rank > 2:
            outputs = tensordot(inputs, self.kernel, [[rank - 1], [0]])
            outputs.set_shape(TensorShape(inputs.shape.as_list()[:-1] + [self.units]))
        else:
            outputs = matmul(inputs, self.kernel)
        if self.use_bias:
            outputs = nn.bias_add(outputs, self.bias)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        input_shape = input_shape_of(input_shape)
        return TensorShape(input_shape.as_list()[:-1] + [self.units])


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
          reuse=None):
    """The functional form of `Dense`: variables `<name or dense_N>/kernel`, `/bias`."""
    layer = Dense(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                  bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                  bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, trainable=trainable,
                  name=name, _scope=name, _reuse=reuse)
    return layer.apply(inputs)


class Dropout(Layer):
    """Zeroes a fraction `rate` of the inputs and scales the rest by 1/(1 - rate) when `training`
    (a Python bool or a bool tensor such as a placeholder); the inputs unchanged otherwise."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs, training=False):
        def dropped():
            return nn.dropout(inputs, noise_shape=self.noise_shape, seed=self.seed, rate=self.rate)

        return smart_cond(training, dropped, lambda: identity(inputs))

    def compute_output_shape(self, input_shape):
        return input_shape_of(input_shape)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """The functional form of `Dropout` (training=False returns the inputs)."""
    layer = Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)
    return layer.apply(inputs, training=training)


class Flatten(Layer):
    """[batch, d1, d2, ...] -> [batch, d1·d2·...] (a 1-D input becomes [batch, 1])."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        rank = inputs.shape.ndims
        if rank == 1:
            return expand_dims(inputs, 1)
        if self.data_format == "channels_first" and rank is not None and rank > 2:
            inputs = transpose(inputs, [0] + list(range(2, rank)) + [1])
        dims = inputs.shape.as_list() if rank is not None else None
        if dims is not None and all(d is not None for d in dims[1:]):
            new_shape = [-1, int(np.prod(dims[1:]))]
        elif dims is not None and dims[0] is not None:
            new_shape = [dims[0], -1]
        else:
            new_shape = stack([shape_op(inputs)[0], -1])
        return reshape(inputs, new_shape)

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        rest = dims[1:]
        return TensorShape([dims[0], int(np.prod(rest)) if all(d is not None for d in rest) else None])


def flatten(inputs, name=None, data_format="channels_last"):
    """The functional form of `Flatten`."""
    return Flatten(name=name, data_format=data_format).apply(inputs)
