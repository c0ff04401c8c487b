"""Convolution layers (TF1's `tf.layers.convolutional`): `Conv1D`, `Conv2D`, `Conv2DTranspose`,
`SeparableConv2D` and their functions, built on `tf.nn.conv2d`, `conv2d_transpose` and
`separable_conv2d`. A 1-D convolution is a 2-D one over a height-1 image, as in TF1.

Kernels: [k..., in_channels, filters] (transposed: [kh, kw, filters, in_channels]); bias
[filters]. Default kernel initializer: the variable scope's (glorot_uniform); bias: zeros.
"""

from __future__ import annotations

from .. import nn
from ..graph.shape import TensorShape
from ..kernels.array_ops import shape as shape_op
from ..kernels.array_ops import stack
from ..kernels.manip_ops import expand_dims, squeeze
from ..state.initializers import zeros_initializer
from .base import InputSpec, Layer, input_shape_of
from .utils import (
    channel_axis,
    conv_output_length,
    deconv_output_length,
    normalize_data_format,
    normalize_padding,
    normalize_tuple,
)

__all__ = ["Conv1D", "Conv2D", "Conv2DTranspose", "SeparableConv2D", "Convolution1D", "Convolution2D",
           "Convolution2DTranspose", "Deconvolution2D", "SeparableConvolution2D",
           "conv1d", "conv2d", "conv2d_transpose", "separable_conv2d", "convolution2d_transpose"]


def _nd_format(data_format, rank):
    """'NWC'/'NHWC' or 'NCW'/'NCHW' for TF1's nn ops."""
    spatial = {1: "W", 2: "HW", 3: "DHW"}[rank]
    return f"NC{spatial}" if data_format == "channels_first" else f"N{spatial}C"


def _op_list(values, data_format, fill=1):
    """[1, v..., 1] (channels last) or [1, 1, v...] (channels first) for strides/dilations."""
    values = list(values)
    return [fill, fill] + values if data_format == "channels_first" else [fill] + values + [fill]


class _Conv(Layer):
    """The shared part of the N-D convolutions: arguments, kernel and bias, bias and activation."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True,
                 name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.rank = rank
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = normalize_tuple(strides, rank, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, rank, "dilation_rate")
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = InputSpec(ndim=rank + 2)

    def _input_dim(self, input_shape):
        input_shape = input_shape_of(input_shape)
        if input_shape.ndims is None:
            raise ValueError(f"Layer {self.name}: the inputs need a known rank ({self.rank + 2})")
        dim = input_shape[channel_axis(self.data_format)].value
        if dim is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={channel_axis(self.data_format): dim})
        return dim

    def _kernel_shape(self, input_dim):
        return list(self.kernel_size) + [input_dim, self.filters]

    def build(self, input_shape):
        input_dim = self._input_dim(input_shape)
        self.kernel = self.add_weight("kernel", shape=self._kernel_shape(input_dim),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, trainable=True, dtype=self.dtype)
        self._build_bias()
        self.built = True

    def _build_bias(self):
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=[self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        trainable=True, dtype=self.dtype)

    def _convolve(self, inputs):
        fmt = _nd_format(self.data_format, 2)
        if self.rank == 1:  # [N, W, C] -> [N, 1, W, C] (or [N, C, 1, W]), a 1 x k kernel
            axis = 2 if self.data_format == "channels_first" else 1
            x = expand_dims(inputs, axis)
            kernel = expand_dims(self.kernel, 0)
            out = nn.conv2d(x, kernel, strides=_op_list((1,) + self.strides, self.data_format), padding=self.padding.upper(),
                            data_format=fmt, dilations=_op_list((1,) + self.dilation_rate, self.data_format))
            return squeeze(out, [axis])
        if self.rank == 3:  # a composite of 2-D convolutions (nn/conv3d.py): the depth must be static
            return nn.conv3d(inputs, self.kernel, strides=_op_list(self.strides, self.data_format),
                             padding=self.padding.upper(), data_format=_nd_format(self.data_format, 3),
                             dilations=_op_list(self.dilation_rate, self.data_format))
        return nn.conv2d(inputs, self.kernel, strides=_op_list(self.strides, self.data_format),
                         padding=self.padding.upper(), data_format=fmt,
                         dilations=_op_list(self.dilation_rate, self.data_format))

    def _finish(self, outputs):
        if self.use_bias:
            outputs = nn.bias_add(outputs, self.bias, data_format=_nd_format(self.data_format, self.rank))
        if self.activation is not None:
            return self.activation(outputs)
        return outputs

    def call(self, inputs):
        return self._finish(self._convolve(inputs))

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        first = self.data_format == "channels_first"
        spatial = dims[2:] if first else dims[1:-1]
        out = [conv_output_length(n, k, self.padding, s, d)
               for n, k, s, d in zip(spatial, self.kernel_size, self.strides, self.dilation_rate)]
        return TensorShape([dims[0], self.filters] + out if first else [dims[0]] + out + [self.filters])


class Conv1D(_Conv):
    """1-D convolution over [batch, width, channels] (or [batch, channels, width])."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True,
                 name=None, **kwargs):
        super().__init__(1, filters, kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, trainable, name, **kwargs)


class Conv2D(_Conv):
    """2-D convolution over [batch, height, width, channels] (or NCHW with channels_first)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True,
                 name=None, **kwargs):
        super().__init__(2, filters, kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, trainable, name, **kwargs)


class Conv2DTranspose(Conv2D):
    """The transpose (gradient) of a 2-D convolution; kernel [kh, kw, filters, in_channels].

    Output size per spatial axis: n·s ('same') or n·s + max(k - s, 0) ('valid').
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 activation=None, use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, (1, 1), activation, use_bias,
                         kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, trainable, name, **kwargs)

    def _kernel_shape(self, input_dim):
        return list(self.kernel_size) + [self.filters, input_dim]

    def _convolve(self, inputs):
        first = self.data_format == "channels_first"
        h_axis, w_axis = (2, 3) if first else (1, 2)
        dyn = shape_op(inputs)
        sizes = []
        for axis, k, s in zip((h_axis, w_axis), self.kernel_size, self.strides):
            n = inputs.shape[axis].value
            if n is not None:
                sizes.append(deconv_output_length(n, k, self.padding, s))
            else:
                sizes.append(dyn[axis] * s + (0 if self.padding == "same" else max(k - s, 0)))
        dims = [dyn[0], self.filters] + sizes if first else [dyn[0]] + sizes + [self.filters]
        out = nn.conv2d_transpose(inputs, self.kernel, stack(dims), strides=_op_list(self.strides, self.data_format),
                                  padding=self.padding.upper(), data_format=_nd_format(self.data_format, 2))
        static = [inputs.shape[0].value] + [s if isinstance(s, int) else None for s in sizes]
        out.set_shape(TensorShape([static[0], self.filters] + static[1:] if first else static + [self.filters]))
        return out

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        first = self.data_format == "channels_first"
        spatial = dims[2:] if first else dims[1:-1]
        out = [deconv_output_length(n, k, self.padding, s) for n, k, s in zip(spatial, self.kernel_size, self.strides)]
        return TensorShape([dims[0], self.filters] + out if first else [dims[0]] + out + [self.filters])


class SeparableConv2D(Conv2D):
    """A depthwise 2-D convolution (depth_multiplier per channel) then a 1x1 pointwise one.

    Variables: depthwise_kernel [kh, kw, in, depth_multiplier], pointwise_kernel
    [1, 1, in·depth_multiplier, filters], bias [filters].
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer=None, pointwise_initializer=None, bias_initializer=zeros_initializer(),
                 depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, pointwise_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         None, bias_initializer, None, bias_regularizer, activity_regularizer, None,
                         bias_constraint, trainable, name, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer, self.pointwise_initializer = depthwise_initializer, pointwise_initializer
        self.depthwise_regularizer, self.pointwise_regularizer = depthwise_regularizer, pointwise_regularizer
        self.depthwise_constraint, self.pointwise_constraint = depthwise_constraint, pointwise_constraint

    def build(self, input_shape):
        input_dim = self._input_dim(input_shape)
        kh, kw = self.kernel_size
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=[kh, kw, input_dim, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint, trainable=True, dtype=self.dtype)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", shape=[1, 1, input_dim * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint, trainable=True, dtype=self.dtype)
        self._build_bias()
        self.built = True

    def _convolve(self, inputs):
        return nn.separable_conv2d(inputs, self.depthwise_kernel, self.pointwise_kernel,
                                   strides=_op_list(self.strides, self.data_format), padding=self.padding.upper(),
                                   rate=self.dilation_rate, data_format=_nd_format(self.data_format, 2))


Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution2DTranspose = Deconvolution2D = Conv2DTranspose
SeparableConvolution2D = SeparableConv2D


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last", dilation_rate=1,
           activation=None, use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """The functional form of `Conv1D`: variables `<name or conv1d_N>/kernel`, `/bias`."""
    return Conv1D(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                  kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
                  kernel_constraint, bias_constraint, trainable, name, _scope=name, _reuse=reuse).apply(inputs)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None,
           bias_initializer=zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
           activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None):
    """The functional form of `Conv2D`: variables `<name or conv2d_N>/kernel`, `/bias`."""
    return Conv2D(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                  kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
                  kernel_constraint, bias_constraint, trainable, name, _scope=name, _reuse=reuse).apply(inputs)


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                     activation=None, use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
                     kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """The functional form of `Conv2DTranspose`: variables `<name or conv2d_transpose_N>/kernel`, `/bias`."""
    return Conv2DTranspose(filters, kernel_size, strides, padding, data_format, activation, use_bias,
                           kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                           activity_regularizer, kernel_constraint, bias_constraint, trainable, name,
                           _scope=name, _reuse=reuse).apply(inputs)


convolution2d_transpose = conv2d_transpose


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                     dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                     depthwise_initializer=None, pointwise_initializer=None, bias_initializer=zeros_initializer(),
                     depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """The functional form of `SeparableConv2D`."""
    return SeparableConv2D(filters, kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier,
                           activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer,
                           depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer,
                           depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name,
                           _scope=name, _reuse=reuse).apply(inputs)


class Conv3D(_Conv):
    """3-D convolution over [batch, depth, height, width, channels] (or channels_first); kernel
    [kd, kh, kw, in, filters]. The depth must be known when the graph is built."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format="channels_last",
                 dilation_rate=(1, 1, 1), activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True,
                 name=None, **kwargs):
        super().__init__(3, filters, kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, trainable, name, **kwargs)


class Conv3DTranspose(Conv3D):
    """The transpose of a 3-D convolution; kernel [kd, kh, kw, filters, in_channels]. The input's
    spatial sizes must be static (output per axis: n·s for 'same', n·s + max(k - s, 0) for 'valid')."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format="channels_last",
                 activation=None, use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, (1, 1, 1), activation, use_bias,
                         kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, trainable, name, **kwargs)

    def _kernel_shape(self, input_dim):
        return list(self.kernel_size) + [self.filters, input_dim]

    def _convolve(self, inputs):
        out_shape = self.compute_output_shape(inputs.shape).as_list()
        if any(d is None for d in out_shape[1:]):
            raise ValueError(f"Layer {self.name}: dflow's Conv3DTranspose needs static spatial sizes; got inputs of "
                             f"shape {inputs.shape}")
        dims = stack([shape_op(inputs)[0]] + out_shape[1:])
        out = nn.conv3d_transpose(inputs, self.kernel, dims, strides=_op_list(self.strides, self.data_format),
                                  padding=self.padding.upper(), data_format=_nd_format(self.data_format, 3))
        out.set_shape(TensorShape(out_shape))
        return out

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        first = self.data_format == "channels_first"
        spatial = dims[2:] if first else dims[1:-1]
        out = [deconv_output_length(n, k, self.padding, s) for n, k, s in zip(spatial, self.kernel_size, self.strides)]
        return TensorShape([dims[0], self.filters] + out if first else [dims[0]] + out + [self.filters])


Convolution3D, Convolution3DTranspose = Conv3D, Conv3DTranspose


def conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1, 1), activation=None, use_bias=True, kernel_initializer=None,
           bias_initializer=zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
           activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None):
    return Conv3D(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                  kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
                  kernel_constraint, bias_constraint, trainable, name, _reuse=reuse, _scope=name).apply(inputs)


def conv3d_transpose(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format="channels_last",
                     activation=None, use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
                     kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    return Conv3DTranspose(filters, kernel_size, strides, padding, data_format, activation, use_bias,
                           kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                           activity_regularizer, kernel_constraint, bias_constraint, trainable, name,
                           _reuse=reuse, _scope=name).apply(inputs)


__all__ += ["Conv3D", "Conv3DTranspose", "Convolution3D", "Convolution3DTranspose", "conv3d", "conv3d_transpose"]
