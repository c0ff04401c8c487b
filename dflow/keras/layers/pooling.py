"""Keras's pooling layers as TF 1.15 shipped them: `MaxPooling1D/2D/3D`, `AveragePooling1D/2D/3D`
(over dflow's tf.layers pooling where TF1 had it; `strides=None` means `pool_size`), the global
poolings `GlobalMaxPooling1D/2D/3D`, `GlobalAveragePooling1D/2D/3D` (the 1-D average honours a
mask), and the aliases `MaxPool2D`, `AvgPool2D`, `GlobalAvgPool2D`, ..."""

from __future__ import annotations

from ... import nn
from ...graph.shape import TensorShape
from ...kernels.manip_ops import expand_dims
from ...kernels.math_ops import cast
from ...kernels.reduction_ops import reduce_max, reduce_mean, reduce_sum
from ...layers import pooling as tf_pooling
from ...layers.base import input_shape_of
from ...layers.utils import (
    conv_output_length,
    normalize_data_format,
    normalize_padding,
    normalize_tuple,
)
from .. import backend as K
from ..engine.base_layer import InputSpec, Layer

__all__ = ["MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
           "AveragePooling3D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D",
           "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D", "MaxPool1D", "MaxPool2D",
           "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D",
           "GlobalMaxPool3D", "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D"]


def _data_format(value):
    return normalize_data_format(value if value is not None else K.image_data_format())


class _PoolConfig:
    def get_config(self):
        config = Layer.get_config(self)
        config.update({"pool_size": self.pool_size, "padding": self.padding, "strides": self.strides,
                       "data_format": self.data_format})
        return config


class MaxPooling1D(_PoolConfig, tf_pooling.MaxPooling1D, Layer):
    """Max over windows of `pool_size` steps of [batch, steps, features]."""

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format="channels_last", **kwargs):
        super().__init__(pool_size, pool_size if strides is None else strides, padding=padding,
                         data_format=_data_format(data_format), **kwargs)


class AveragePooling1D(_PoolConfig, tf_pooling.AveragePooling1D, Layer):
    """Mean over windows of `pool_size` steps of [batch, steps, features]."""

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format="channels_last", **kwargs):
        super().__init__(pool_size, pool_size if strides is None else strides, padding=padding,
                         data_format=_data_format(data_format), **kwargs)


class MaxPooling2D(_PoolConfig, tf_pooling.MaxPooling2D, Layer):
    """Max over `pool_size` windows of an image."""

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, pool_size if strides is None else strides, padding=padding,
                         data_format=_data_format(data_format), **kwargs)


class AveragePooling2D(_PoolConfig, tf_pooling.AveragePooling2D, Layer):
    """Mean over `pool_size` windows of an image ('same' padding averages the valid cells only)."""

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, pool_size if strides is None else strides, padding=padding,
                         data_format=_data_format(data_format), **kwargs)


class _Pooling3D(_PoolConfig, Layer):
    _pool = None

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.pool_size = normalize_tuple(pool_size, 3, "pool_size")
        self.strides = normalize_tuple(pool_size if strides is None else strides, 3, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = _data_format(data_format)
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        if self.data_format == "channels_first":
            ksize, strides, fmt = [1, 1, *self.pool_size], [1, 1, *self.strides], "NCDHW"
        else:
            ksize, strides, fmt = [1, *self.pool_size, 1], [1, *self.strides, 1], "NDHWC"
        return type(self)._pool(inputs, ksize=ksize, strides=strides, padding=self.padding.upper(), data_format=fmt)

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        first = self.data_format == "channels_first"
        spatial = dims[2:] if first else dims[1:-1]
        out = [conv_output_length(n, k, self.padding, s) for n, k, s in zip(spatial, self.pool_size, self.strides)]
        return TensorShape(dims[:2] + out if first else [dims[0]] + out + [dims[-1]])


class MaxPooling3D(_Pooling3D):
    """Max over `pool_size` windows of a volume [batch, d1, d2, d3, channels]."""
    _pool = staticmethod(nn.max_pool3d)


class AveragePooling3D(_Pooling3D):
    """Mean over `pool_size` windows of a volume [batch, d1, d2, d3, channels]."""
    _pool = staticmethod(nn.avg_pool3d)


class _GlobalPooling(Layer):
    _rank = 2
    _reduce = None

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format)
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def _axes(self):
        start = 2 if self.data_format == "channels_first" else 1
        return list(range(start, start + self._rank))

    def call(self, inputs):
        return type(self)._reduce(inputs, axis=self._axes())

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        return TensorShape([dims[0], dims[1] if self.data_format == "channels_first" else dims[-1]])

    def get_config(self):
        config = super().get_config()
        config["data_format"] = self.data_format
        return config


class GlobalMaxPooling1D(_GlobalPooling):
    """[batch, steps, features] -> [batch, features], the max over the steps."""
    _rank, _reduce = 1, staticmethod(reduce_max)

    def __init__(self, data_format="channels_last", **kwargs):
        super().__init__(data_format=data_format, **kwargs)


class GlobalAveragePooling1D(_GlobalPooling):
    """[batch, steps, features] -> [batch, features], the mean over the steps (the unmasked ones
    when a mask [batch, steps] comes with the inputs)."""
    _rank, _reduce = 1, staticmethod(reduce_mean)

    def __init__(self, data_format="channels_last", **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        steps_axis = 1 if self.data_format == "channels_last" else 2
        if mask is None:
            return reduce_mean(inputs, axis=steps_axis)
        mask = expand_dims(cast(mask, inputs.dtype), 2 if steps_axis == 1 else 1)
        return reduce_sum(inputs * mask, axis=steps_axis) / reduce_sum(mask, axis=steps_axis)

    def compute_mask(self, inputs, mask=None):
        return None


class GlobalMaxPooling2D(_GlobalPooling):
    """[batch, rows, cols, channels] -> [batch, channels], the max over rows and cols."""
    _rank, _reduce = 2, staticmethod(reduce_max)


class GlobalAveragePooling2D(_GlobalPooling):
    """[batch, rows, cols, channels] -> [batch, channels], the mean over rows and cols."""
    _rank, _reduce = 2, staticmethod(reduce_mean)


class GlobalMaxPooling3D(_GlobalPooling):
    """[batch, d1, d2, d3, channels] -> [batch, channels], the max over the volume."""
    _rank, _reduce = 3, staticmethod(reduce_max)


class GlobalAveragePooling3D(_GlobalPooling):
    """[batch, d1, d2, d3, channels] -> [batch, channels], the mean over the volume."""
    _rank, _reduce = 3, staticmethod(reduce_mean)


MaxPool1D, MaxPool2D, MaxPool3D = MaxPooling1D, MaxPooling2D, MaxPooling3D
AvgPool1D, AvgPool2D, AvgPool3D = AveragePooling1D, AveragePooling2D, AveragePooling3D
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D
GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = (GlobalAveragePooling1D, GlobalAveragePooling2D,
                                                     GlobalAveragePooling3D)
