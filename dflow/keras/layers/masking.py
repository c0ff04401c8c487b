"""Keras's `Masking`: timesteps whose features all equal `mask_value` are zeroed and masked, so
the layers after it (RNNs) skip them."""

from __future__ import annotations

from ...kernels.math_ops import cast, multiply, not_equal
from ...kernels.reduction_ops import reduce_any
from ..engine.base_layer import Layer

__all__ = ["Masking"]


class Masking(Layer):
    """output = inputs * any(inputs != mask_value, axis=-1); the mask is that `any`."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.mask_value = mask_value

    def compute_mask(self, inputs, mask=None):
        return reduce_any(not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs):
        keep = reduce_any(not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        return multiply(inputs, cast(keep, inputs.dtype))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config["mask_value"] = self.mask_value
        return config


