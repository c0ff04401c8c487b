"""Keras's activation layers as TF 1.15 shipped them: `LeakyReLU(alpha=0.3)`, `PReLU` (a learned
alpha, shared along `shared_axes`), `ELU(alpha=1.0)`, `ThresholdedReLU(theta=1.0)`,
`Softmax(axis=-1)` and `ReLU(max_value, negative_slope, threshold)`. All pass masks through."""

from __future__ import annotations

from ... import nn
from ...graph.shape import TensorShape
from ...kernels.math_ops import cast, greater, relu
from .. import backend as K
from ..engine.base_layer import InputSpec, Layer
from .core import _set_weights_args, _weights_config

__all__ = ["LeakyReLU", "PReLU", "ELU", "ThresholdedReLU", "Softmax", "ReLU"]


class _Elementwise(Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def compute_output_shape(self, input_shape):
        return input_shape


class LeakyReLU(_Elementwise):
    """x for x > 0, alpha·x otherwise."""

    def __init__(self, alpha=0.3, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return K.relu(inputs, alpha=self.alpha)

    def get_config(self):
        config = super().get_config()
        config["alpha"] = float(self.alpha)
        return config


class PReLU(_Elementwise):
    """x for x > 0, alpha·x otherwise, with alpha a weight of the input's shape (batch excluded),
    of size 1 along `shared_axes`."""

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None, shared_axes=None,
                 **kwargs):
        super().__init__(**kwargs)
        _set_weights_args(self, alpha_initializer=alpha_initializer, alpha_regularizer=alpha_regularizer,
                          alpha_constraint=alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif not isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)

    def build(self, input_shape):
        dims = TensorShape(input_shape).as_list()
        param_shape = dims[1:]
        if self.shared_axes is not None:
            for i in self.shared_axes:
                param_shape[i - 1] = 1
        if any(d is None for d in param_shape):
            raise ValueError(f"Layer {self.name}: PReLU needs the input's non-batch dimensions known (or shared); "
                             f"got input shape {dims}")
        self.alpha = self.add_weight("alpha", shape=param_shape, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)
        axes = {}
        if self.shared_axes:
            axes = {i: dims[i] for i in range(1, len(dims)) if i not in self.shared_axes}
        self.input_spec = InputSpec(ndim=len(dims), axes=axes)
        self.built = True

    def call(self, inputs):
        pos = relu(inputs)
        neg = -self.alpha * relu(-inputs)
        return pos + neg

    def get_config(self):
        config = super().get_config()
        config.update({**_weights_config(self, ["alpha"]), "shared_axes": self.shared_axes})
        return config


class ELU(_Elementwise):
    """x for x > 0, alpha·(exp(x) - 1) otherwise."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return K.elu(inputs, self.alpha)

    def get_config(self):
        config = super().get_config()
        config["alpha"] = self.alpha
        return config


class ThresholdedReLU(_Elementwise):
    """x for x > theta, 0 otherwise."""

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        self.theta = float(theta)

    def call(self, inputs):
        return inputs * cast(greater(inputs, self.theta), inputs.dtype)

    def get_config(self):
        config = super().get_config()
        config["theta"] = self.theta
        return config


class Softmax(_Elementwise):
    """exp(x) / sum(exp(x)) along `axis`."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return nn.softmax(inputs, axis=self.axis)

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config


class ReLU(_Elementwise):
    """min(x, max_value) for x >= threshold, negative_slope·(x - threshold) otherwise."""

    def __init__(self, max_value=None, negative_slope=0, threshold=0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError(f"max_value of Relu layer cannot be negative value: {max_value}")
        if negative_slope < 0.0:
            raise ValueError(f"negative_slope of Relu layer cannot be negative value: {negative_slope}")
        self.max_value = float(max_value) if max_value is not None else None
        self.negative_slope = float(negative_slope)
        self.threshold = float(threshold)

    def call(self, inputs):
        return K.relu(inputs, alpha=self.negative_slope, max_value=self.max_value, threshold=self.threshold)

    def get_config(self):
        config = super().get_config()
        config.update({"max_value": self.max_value, "negative_slope": self.negative_slope,
                       "threshold": self.threshold})
        return config
