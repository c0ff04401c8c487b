"""Pooling layers (TF1's `tf.layers.pooling`): max and average, 1-D and 2-D, built on
`tf.nn.max_pool` / `tf.nn.avg_pool`; a 1-D pool is a 2-D one over a height-1 image, as in TF1."""

from __future__ import annotations

from .. import nn
from ..graph.shape import TensorShape
from ..kernels.manip_ops import expand_dims, squeeze
from .base import InputSpec, Layer, input_shape_of
from .utils import conv_output_length, normalize_data_format, normalize_padding, normalize_tuple

__all__ = ["MaxPooling1D", "MaxPooling2D", "AveragePooling1D", "AveragePooling2D", "MaxPool1D", "MaxPool2D",
           "AveragePool1D", "AveragePool2D", "max_pooling1d", "max_pooling2d", "average_pooling1d",
           "average_pooling2d"]


class _Pooling(Layer):
    """pool_size and strides (ints or tuples), padding 'valid'/'same', data_format."""

    _rank = 2
    _op = "max"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = normalize_tuple(pool_size, self._rank, "pool_size")
        self.strides = normalize_tuple(strides, self._rank, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def call(self, inputs):
        first = self.data_format == "channels_first"
        pool = nn.max_pool if self._op == "max" else nn.avg_pool
        pool_size, strides = self.pool_size, self.strides
        x = inputs
        if self._rank == 1:  # [N, W, C] -> [N, 1, W, C] (or [N, C, 1, W])
            axis = 2 if first else 1
            x = expand_dims(inputs, axis)
            pool_size, strides = (1,) + pool_size, (1,) + strides
        if self._rank == 3:
            pool3 = nn.max_pool3d if self._op == "max" else nn.avg_pool3d
            if first:
                return pool3(x, [1, 1, *pool_size], [1, 1, *strides], self.padding.upper(), data_format="NCDHW")
            return pool3(x, [1, *pool_size, 1], [1, *strides, 1], self.padding.upper(), data_format="NDHWC")
        if first:
            ksize, stride_list, fmt = [1, 1, *pool_size], [1, 1, *strides], "NCHW"
        else:
            ksize, stride_list, fmt = [1, *pool_size, 1], [1, *strides, 1], "NHWC"
        out = pool(x, ksize=ksize, strides=stride_list, padding=self.padding.upper(), data_format=fmt)
        return squeeze(out, [axis]) if self._rank == 1 else out

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        first = self.data_format == "channels_first"
        spatial = dims[2:] if first else dims[1:-1]
        out = [conv_output_length(n, k, self.padding, s) for n, k, s in zip(spatial, self.pool_size, self.strides)]
        return TensorShape(dims[:2] + out if first else [dims[0]] + out + [dims[-1]])


class MaxPooling1D(_Pooling):
    """Max over windows of `pool_size` along the width of [batch, width, channels]."""

    _rank, _op = 1, "max"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


class AveragePooling1D(_Pooling):
    """Mean over windows of `pool_size` along the width of [batch, width, channels]."""

    _rank, _op = 1, "avg"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


class MaxPooling2D(_Pooling):
    """Max over [ph, pw] windows of [batch, height, width, channels]."""

    _rank, _op = 2, "max"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


class AveragePooling2D(_Pooling):
    """Mean over [ph, pw] windows of [batch, height, width, channels] ('same' pads are not counted)."""

    _rank, _op = 2, "avg"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


class MaxPooling3D(_Pooling):
    """Max over [pd, ph, pw] windows of [batch, depth, height, width, channels]."""

    _rank, _op = 3, "max"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


class AveragePooling3D(_Pooling):
    """Mean over [pd, ph, pw] windows of [batch, depth, height, width, channels]."""

    _rank, _op = 3, "avg"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


MaxPool1D, MaxPool2D, MaxPool3D = MaxPooling1D, MaxPooling2D, MaxPooling3D
AveragePool1D, AveragePool2D, AveragePool3D = AveragePooling1D, AveragePooling2D, AveragePooling3D


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return MaxPooling1D(pool_size, strides, padding, data_format, name).apply(inputs)


def average_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return AveragePooling1D(pool_size, strides, padding, data_format, name).apply(inputs)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return MaxPooling2D(pool_size, strides, padding, data_format, name).apply(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return AveragePooling2D(pool_size, strides, padding, data_format, name).apply(inputs)


def max_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return MaxPooling3D(pool_size, strides, padding, data_format, name).apply(inputs)


def average_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return AveragePooling3D(pool_size, strides, padding, data_format, name).apply(inputs)


__all__ += ["MaxPooling3D", "AveragePooling3D", "MaxPool3D", "AveragePool3D", "max_pooling3d", "average_pooling3d"]
