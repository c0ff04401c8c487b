"""Keras's convolution layers as TF 1.15 shipped them: `Conv1D/2D/3D`, `Conv2DTranspose`,
`SeparableConv1D/2D`, `DepthwiseConv2D` (over dflow's tf.layers where TF1 had the layer), and the
shape layers `ZeroPadding1D/2D/3D`, `UpSampling1D/2D/3D`, `Cropping1D/2D/3D`.

Keras's defaults differ from tf.layers': glorot_uniform kernels, `data_format=None` meaning
`K.image_data_format()`, string identifiers for activations, initializers, regularizers and
constraints. Conv1D also takes `padding='causal'` (left padding by (k - 1)·dilation). Conv3D is
the sum over the kernel's depth of 2-D convolutions of depth slices (dflow has no conv3d op), so
it needs a static depth.
"""

from __future__ import annotations

from ... import nn
from ...graph.shape import TensorShape
from ...kernels.array_ops import reshape, shape, stack
from ...kernels.image_ops import resize_bilinear, resize_nearest_neighbor
from ...kernels.manip_ops import add_n, expand_dims, squeeze, transpose
from ...kernels.pad_ops import pad, tile
from ...layers import convolutional as tf_conv
from ...layers.base import input_shape_of
from ...layers.utils import conv_output_length, normalize_data_format, normalize_tuple
from .. import activations
from .. import backend as K
from ..engine.base_layer import InputSpec, Layer
from .core import _KINDS, _dense_config, _set_weights_args, _weights_config

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose", "Conv3DTranspose", "Convolution3DTranspose", "SeparableConv1D", "SeparableConv2D",
           "DepthwiseConv2D", "Convolution1D", "Convolution2D", "Convolution3D", "Convolution2DTranspose",
           "Deconvolution2D", "SeparableConvolution1D", "SeparableConvolution2D", "ZeroPadding1D",
           "ZeroPadding2D", "ZeroPadding3D", "UpSampling1D", "UpSampling2D", "UpSampling3D", "Cropping1D",
           "Cropping2D", "Cropping3D"]


def _data_format(value):
    return normalize_data_format(value if value is not None else K.image_data_format())


def _keras_args(kwargs):
    """Keras's string identifiers resolved for the tf.layers constructors."""
    out = dict(kwargs)
    if "activation" in out:
        out["activation"] = activations.get(out["activation"])
    for weight in ("kernel", "bias", "depthwise", "pointwise"):
        for kind, module in _KINDS.items():
            if f"{weight}_{kind}" in out:
                out[f"{weight}_{kind}"] = module.get(out[f"{weight}_{kind}"])
    return out


class _ConvConfig:
    """`get_config` with TF 1.15's keys for the convolutions (Keras's Conv base)."""

    def _base_config(self):
        config = Layer.get_config(self)
        config.update({
            "filters": self.filters, "kernel_size": self.kernel_size, "strides": self.strides,
            "padding": self.padding, "data_format": self.data_format, "dilation_rate": self.dilation_rate,
            **_dense_config(self)})
        return config

    def _separable_config(self):
        config = self._base_config()
        for key in ("kernel_initializer", "kernel_regularizer", "kernel_constraint"):
            config.pop(key)
        config["depth_multiplier"] = self.depth_multiplier
        config.update(_weights_config(self, ["depthwise"]))
        return config

    def get_config(self):
        return self._base_config()


def _conv_kwargs(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                 activity_regularizer, kernel_constraint, bias_constraint):
    return _keras_args(dict(
        activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
        bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
        bias_constraint=bias_constraint))


class Conv1D(_ConvConfig, tf_conv.Conv1D, Layer):
    """1-D convolution over [batch, steps, channels]; padding 'valid', 'same' or 'causal'."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        causal = str(padding).lower() == "causal"
        super().__init__(filters, kernel_size, strides=strides, padding="valid" if causal else padding,
                         data_format=_data_format(data_format), dilation_rate=dilation_rate,
                         **_conv_kwargs(activation, use_bias, kernel_initializer, bias_initializer,
                                        kernel_regularizer, bias_regularizer, activity_regularizer,
                                        kernel_constraint, bias_constraint), **kwargs)
        if causal:
            if self.data_format != "channels_last":
                raise ValueError("When using causal padding in `Conv1D`, `data_format` must be \"channels_last\" "
                                 "(temporal data).")
            self.padding = "causal"

    def call(self, inputs):
        if self.padding != "causal":
            return super().call(inputs)
        left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
        self.padding = "valid"
        try:
            return self._finish(self._convolve(pad(inputs, [[0, 0], [left, 0], [0, 0]])))
        finally:
            self.padding = "causal"

    def compute_output_shape(self, input_shape):
        if self.padding != "causal":
            return super().compute_output_shape(input_shape)
        dims = input_shape_of(input_shape).as_list()
        return TensorShape([dims[0], conv_output_length(dims[1], 1, "same", self.strides[0]), self.filters])


class Conv2D(_ConvConfig, tf_conv.Conv2D, Layer):
    """2-D convolution over [batch, rows, cols, channels] (or channels_first)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=_data_format(data_format), dilation_rate=dilation_rate,
                         **_conv_kwargs(activation, use_bias, kernel_initializer, bias_initializer,
                                        kernel_regularizer, bias_regularizer, activity_regularizer,
                                        kernel_constraint, bias_constraint), **kwargs)


class Conv3D(_ConvConfig, tf_conv._Conv, Layer):
    """3-D convolution over [batch, depth, rows, cols, channels] (or channels_first); kernel
    [kd, kh, kw, in, filters]. The depth must be known when the graph is built."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(3, filters, kernel_size, strides=strides, padding=padding,
                         data_format=_data_format(data_format), dilation_rate=dilation_rate,
                         **_conv_kwargs(activation, use_bias, kernel_initializer, bias_initializer,
                                        kernel_regularizer, bias_regularizer, activity_regularizer,
                                        kernel_constraint, bias_constraint), **kwargs)

    def _convolve(self, inputs):
        first = self.data_format == "channels_first"
        x = transpose(inputs, [0, 2, 3, 4, 1]) if first else inputs
        depth = x.shape[1].value
        if depth is None:
            raise ValueError(f"Layer {self.name}: dflow's Conv3D needs a static depth (axis "
                             f"{2 if first else 1}); got inputs of shape {inputs.shape}")
        kd, sd, dd = self.kernel_size[0], self.strides[0], self.dilation_rate[0]
        out_depth = conv_output_length(depth, kd, self.padding, sd, dd)
        if self.padding == "same":
            total = max((out_depth - 1) * sd + (kd - 1) * dd + 1 - depth, 0)
            x = pad(x, [[0, 0], [total // 2, total - total // 2], [0, 0], [0, 0], [0, 0]])
        strides = [1, self.strides[1], self.strides[2], 1]
        dilations = [1, self.dilation_rate[1], self.dilation_rate[2], 1]
        slices = []
        for od in range(out_depth):
            terms = [nn.conv2d(x[:, od * sd + i * dd], self.kernel[i], strides=strides, padding=self.padding.upper(),
                               data_format="NHWC", dilations=dilations) for i in range(kd)]
            slices.append(terms[0] if kd == 1 else add_n(terms))
        out = stack(slices, axis=1)
        if self.use_bias:
            out = out + self.bias
        return transpose(out, [0, 4, 1, 2, 3]) if first else out

    def _finish(self, outputs):
        if self.activation is not None:
            return self.activation(outputs)
        return outputs


def _output_padding(value, rank, strides):
    """None, or `rank` ints each below its stride (Keras's check and wording)."""
    if value is None:
        return None
    value = normalize_tuple(value, rank, "output_padding")
    for stride, extra in zip(strides, value):
        if extra >= stride:
            raise ValueError(f"Stride {strides} must be greater than output padding {value}")
    return value


def transpose_output_length(input_length, filter_size, padding, output_padding=None, stride=1, dilation=1):
    """Keras's `deconv_output_length`: one axis of a transposed convolution's output (None stays None)."""
    if input_length is None:
        return None
    filter_size = filter_size + (filter_size - 1) * (dilation - 1)
    if output_padding is None:
        if padding == "valid":
            return input_length * stride + max(filter_size - stride, 0)
        return input_length * stride
    pad = filter_size // 2 if padding == "same" else 0
    return (input_length - 1) * stride + filter_size - 2 * pad + output_padding


def _dynamic_length(n, filter_size, padding, output_padding, stride, dilation):
    """transpose_output_length of a scalar tensor `n`."""
    filter_size = filter_size + (filter_size - 1) * (dilation - 1)
    if output_padding is not None:
        pad = filter_size // 2 if padding == "same" else 0
        return (n - 1) * stride + (filter_size - 2 * pad + output_padding)
    return n * stride + (max(filter_size - stride, 0) if padding == "valid" else 0)


class _TransposeShape:
    """Output lengths and shape of the transposed convolutions (Conv2DTranspose, Conv3DTranspose)."""

    def _out_lengths(self, spatial):
        pads = self.output_padding or (None,) * len(spatial)
        return [transpose_output_length(n, k, self.padding, p, s, d) for n, k, p, s, d in
                zip(spatial, self.kernel_size, pads, self.strides, self.dilation_rate)]

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        first = self.data_format == "channels_first"
        out = self._out_lengths(dims[2:] if first else dims[1:-1])
        return TensorShape([dims[0], self.filters] + out if first else [dims[0]] + out + [self.filters])


class Conv2DTranspose(_TransposeShape, _ConvConfig, tf_conv.Conv2DTranspose, Layer):
    """The transpose of a 2-D convolution; kernel [kh, kw, filters, in_channels]."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=_data_format(data_format),
                         **_conv_kwargs(activation, use_bias, kernel_initializer, bias_initializer,
                                        kernel_regularizer, bias_regularizer, activity_regularizer,
                                        kernel_constraint, bias_constraint), **kwargs)
        self.dilation_rate = normalize_tuple(dilation_rate, 2, "dilation_rate")
        self.output_padding = _output_padding(output_padding, 2, self.strides)
        if self.dilation_rate != (1, 1) and self.strides != (1, 1):
            raise ValueError(f"Conv2DTranspose: strides > 1 not supported in conjunction with dilation_rate > 1 "
                             f"(strides {self.strides}, dilation_rate {self.dilation_rate})")


    def _convolve(self, inputs):
        first = self.data_format == "channels_first"
        axes = (2, 3) if first else (1, 2)
        dyn = shape(inputs)
        static = self._out_lengths([inputs.shape[a].value for a in axes])
        pads = self.output_padding or (None, None)
        sizes = [n if n is not None else _dynamic_length(dyn[a], k, self.padding, p, s, d)
                 for n, a, k, p, s, d in zip(static, axes, self.kernel_size, pads, self.strides, self.dilation_rate)]
        dims = [dyn[0], self.filters] + sizes if first else [dyn[0]] + sizes + [self.filters]
        out = nn.conv2d_transpose(inputs, self.kernel, stack(dims), strides=tf_conv._op_list(self.strides,
                                                                                              self.data_format),
                                  padding=self.padding.upper(), data_format=tf_conv._nd_format(self.data_format, 2),
                                  dilations=tf_conv._op_list(self.dilation_rate, self.data_format))
        batch = inputs.shape[0].value
        out.set_shape(TensorShape([batch, self.filters] + static if first else [batch] + static + [self.filters]))
        return out

    def get_config(self):
        config = self._base_config()
        config["output_padding"] = self.output_padding
        return config


class Conv3DTranspose(_TransposeShape, Conv3D):
    """The transpose of a 3-D convolution; kernel [kd, kh, kw, filters, in_channels]. Built from
    2-D transposed convolutions of the depth slices (one per kernel depth, over all slices at
    once), placed at depth i·stride + j and cropped as TF's conv3d_transpose pads; the input's
    depth must be static."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", output_padding=None,
                 data_format=None, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, **kwargs)
        self.output_padding = _output_padding(output_padding, 3, self.strides)

    def _kernel_shape(self, input_dim):
        return list(self.kernel_size) + [self.filters, input_dim]


    def _convolve(self, inputs):
        first = self.data_format == "channels_first"
        x = transpose(inputs, [0, 2, 3, 4, 1]) if first else inputs
        depth, channels = x.shape[1].value, x.shape[4].value
        if depth is None:
            raise ValueError(f"Layer {self.name}: dflow's Conv3DTranspose needs a static depth (axis "
                             f"{2 if first else 1}); got inputs of shape {inputs.shape}")
        kd, kh, kw = self.kernel_size
        sd, sh, sw = self.strides
        pads = self.output_padding or (None,) * 3
        od, oh, ow = self._out_lengths(x.shape.as_list()[1:4])
        dyn = shape(x)
        oh_t = oh if oh is not None else _dynamic_length(dyn[2], kh, self.padding, pads[1], sh, 1)
        ow_t = ow if ow is not None else _dynamic_length(dyn[3], kw, self.padding, pads[2], sw, 1)
        n = dyn[0]
        flat = reshape(x, stack([n * depth, dyn[2], dyn[3], channels]))
        # TF's padding of the equivalent forward convolution along depth
        before = max((depth - 1) * sd + kd - od, 0) // 2 if self.padding == "same" else 0
        full = max((depth - 1) * sd + kd, od + before)
        span = (depth - 1) * sd + 1
        terms = []
        for j in range(kd):
            y = nn.conv2d_transpose(flat, self.kernel[j], stack([n * depth, oh_t, ow_t, self.filters]),
                                    strides=[1, sh, sw, 1], padding=self.padding.upper(), data_format="NHWC")
            y = reshape(y, stack([n, depth, oh_t, ow_t, self.filters]))
            if sd > 1:  # slice i at depth i·sd: interleave zeros
                y = stack([y] + [y * 0.0] * (sd - 1), axis=2)
                y = reshape(y, stack([n, depth * sd, oh_t, ow_t, self.filters]))[:, :span]
            terms.append(pad(y, [[0, 0], [j, full - j - span], [0, 0], [0, 0], [0, 0]]))
        out = (terms[0] if kd == 1 else add_n(terms))[:, before:before + od]
        out.set_shape(TensorShape([x.shape[0].value, od, oh, ow, self.filters]))
        if self.use_bias:
            out = out + self.bias
        return transpose(out, [0, 4, 1, 2, 3]) if first else out

    def get_config(self):
        config = self._base_config()
        config.pop("dilation_rate")
        config["output_padding"] = self.output_padding
        return config


class SeparableConv2D(_ConvConfig, tf_conv.SeparableConv2D, Layer):
    """Depthwise then pointwise 2-D convolution; variables depthwise_kernel, pointwise_kernel, bias."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=_data_format(data_format),
                         dilation_rate=dilation_rate, depth_multiplier=depth_multiplier,
                         **_keras_args(dict(
                             activation=activation, use_bias=use_bias, depthwise_initializer=depthwise_initializer,
                             pointwise_initializer=pointwise_initializer, bias_initializer=bias_initializer,
                             depthwise_regularizer=depthwise_regularizer, pointwise_regularizer=pointwise_regularizer,
                             bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                             depthwise_constraint=depthwise_constraint, pointwise_constraint=pointwise_constraint,
                             bias_constraint=bias_constraint)), **kwargs)

    def get_config(self):
        config = self._separable_config()
        config.update(_weights_config(self, ["pointwise"]))
        return config


class SeparableConv1D(SeparableConv2D):
    """Depthwise then pointwise 1-D convolution over [batch, steps, channels]; depthwise_kernel
    [k, in, depth_multiplier], pointwise_kernel [1, in·depth_multiplier, filters]."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, (1,) + normalize_tuple(kernel_size, 1, "kernel_size"),
                         (1,) + normalize_tuple(strides, 1, "strides"), padding, data_format,
                         (1,) + normalize_tuple(dilation_rate, 1, "dilation_rate"), depth_multiplier, activation,
                         use_bias, depthwise_initializer, pointwise_initializer, bias_initializer,
                         depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer,
                         depthwise_constraint, pointwise_constraint, bias_constraint, **kwargs)
        self.rank = 1
        self.kernel_size, self.strides, self.dilation_rate = \
            self.kernel_size[1:], self.strides[1:], self.dilation_rate[1:]
        self.input_spec = InputSpec(ndim=3)

    def build(self, input_shape):
        input_dim = self._input_dim(input_shape)
        (k,) = self.kernel_size
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=[k, input_dim, self.depth_multiplier], initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer, constraint=self.depthwise_constraint, trainable=True)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", shape=[1, input_dim * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint, trainable=True)
        self._build_bias()
        self.built = True

    def _convolve(self, inputs):
        first = self.data_format == "channels_first"
        axis = 2 if first else 1
        out = nn.separable_conv2d(expand_dims(inputs, axis), expand_dims(self.depthwise_kernel, 0),
                                  expand_dims(self.pointwise_kernel, 0),
                                  strides=tf_conv._op_list((1,) + self.strides, self.data_format),
                                  padding=self.padding.upper(), rate=(1,) + self.dilation_rate,
                                  data_format="NCHW" if first else "NHWC")
        return squeeze(out, [axis])


class DepthwiseConv2D(_ConvConfig, tf_conv.Conv2D, Layer):
    """Each input channel convolved with its own `depth_multiplier` filters: depthwise_kernel
    [kh, kw, in, depth_multiplier], bias [in·depth_multiplier]."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(1, kernel_size, strides=strides, padding=padding,
                         data_format=_data_format(data_format), dilation_rate=dilation_rate,
                         **_conv_kwargs(activation, use_bias, None, bias_initializer, None, bias_regularizer,
                                        activity_regularizer, None, bias_constraint), **kwargs)
        self.filters = None
        self.depth_multiplier = int(depth_multiplier)
        _set_weights_args(self, depthwise_initializer=depthwise_initializer,
                          depthwise_regularizer=depthwise_regularizer,
                          depthwise_constraint=depthwise_constraint)

    def build(self, input_shape):
        input_dim = self._input_dim(input_shape)
        kh, kw = self.kernel_size
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=[kh, kw, input_dim, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint, trainable=True)
        self.filters = input_dim * self.depth_multiplier
        self._build_bias()
        self.built = True

    def _convolve(self, inputs):
        return nn.depthwise_conv2d(inputs, self.depthwise_kernel, strides=tf_conv._op_list(self.strides, self.data_format),
                                   padding=self.padding.upper(), rate=self.dilation_rate,
                                   data_format=tf_conv._nd_format(self.data_format, 2))

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        first = self.data_format == "channels_first"
        channels = dims[1] if first else dims[-1]
        spatial = dims[2:] if first else dims[1:-1]
        out = [conv_output_length(n, k, self.padding, s, d)
               for n, k, s, d in zip(spatial, self.kernel_size, self.strides, self.dilation_rate)]
        filters = channels * self.depth_multiplier if channels is not None else None
        return TensorShape([dims[0], filters] + out if first else [dims[0]] + out + [filters])

    def get_config(self):
        config = self._separable_config()
        config.pop("filters")
        return config


Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Convolution2DTranspose = Deconvolution2D = Conv2DTranspose
Convolution3DTranspose = Conv3DTranspose
SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D


# ---- padding, cropping and upsampling ----------------------------------------------------------
def _pairs(value, rank, name):
    """An int, a tuple of `rank` ints, or `rank` pairs -> `rank` (before, after) pairs (Keras's;
    for rank 1 a single pair is one pair)."""
    if isinstance(value, int):
        return ((value, value),) * rank
    if rank == 1 and hasattr(value, "__len__") and len(value) == 2 and all(isinstance(v, int) for v in value):
        return (tuple(value),)
    if not hasattr(value, "__len__") or len(value) != rank:
        raise ValueError(f"`{name}` should have {rank} elements. Found: {value}")
    return tuple((item, item) if isinstance(item, int) else normalize_tuple(item, 2, f"{name} entry")
                 for item in value)


class _Spatial(Layer):
    """What the padding/cropping/upsampling layers share: rank, data_format, input ndim, and the
    one argument (`_arg`: padding, cropping or size) their config stores besides data_format."""

    _rank = 2
    _arg = None

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format) if self._rank > 1 else "channels_last"
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def _spatial_axes(self):
        start = 2 if self.data_format == "channels_first" else 1
        return list(range(start, start + self._rank))

    def _out_shape(self, input_shape, resize):
        """`input_shape` with spatial axis i's size n replaced by resize(i, n) (None stays None)."""
        dims = input_shape_of(input_shape).as_list()
        for i, axis in enumerate(self._spatial_axes()):
            dims[axis] = resize(i, dims[axis]) if dims[axis] is not None else None
        return TensorShape(dims)

    def _set_edges(self, value):
        """Per spatial axis (before, after) amounts in `self._edges`; the `_arg` attribute keeps
        Keras's form (the one pair for rank 1)."""
        self._edges = _pairs(value, self._rank, self._arg)
        setattr(self, self._arg, self._edges[0] if self._rank == 1 else self._edges)

    def get_config(self):
        config = super().get_config()
        if self._rank > 1:
            config["data_format"] = self.data_format
        config[self._arg] = getattr(self, self._arg)
        return config


class _ZeroPadding(_Spatial):
    _arg = "padding"

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_edges(padding)

    def call(self, inputs):
        paddings = [[0, 0]] * (self._rank + 2)
        for axis, pair in zip(self._spatial_axes(), self._edges):
            paddings[axis] = list(pair)
        return pad(inputs, paddings)

    def compute_output_shape(self, input_shape):
        return self._out_shape(input_shape, lambda i, n: n + sum(self._edges[i]))


class ZeroPadding1D(_ZeroPadding):
    """Zeros before and after the steps of [batch, steps, features]."""
    _rank = 1


class ZeroPadding2D(_ZeroPadding):
    """Zeros around the rows and columns of an image."""
    _rank = 2


class ZeroPadding3D(_ZeroPadding):
    """Zeros around the three spatial axes of a volume."""
    _rank = 3


class _Cropping(_Spatial):
    _arg = "cropping"

    def __init__(self, cropping, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_edges(cropping)

    def call(self, inputs):
        index = [slice(None)] * (self._rank + 2)
        for axis, (before, after) in zip(self._spatial_axes(), self._edges):
            index[axis] = slice(before, -after if after else None)
        return inputs[tuple(index)]

    def compute_output_shape(self, input_shape):
        return self._out_shape(input_shape, lambda i, n: n - sum(self._edges[i]))


class Cropping1D(_Cropping):
    """Drops steps at the start and end of [batch, steps, features]."""
    _rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(cropping=cropping, **kwargs)


class Cropping2D(_Cropping):
    """Drops rows and columns at the image's edges."""
    _rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(cropping=cropping, data_format=data_format, **kwargs)


class Cropping3D(_Cropping):
    """Drops slices at the volume's edges."""
    _rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(cropping=cropping, data_format=data_format, **kwargs)


def repeat_elements(x, rep, axis):
    """Each slice of `x` along `axis` repeated `rep` times (Keras's backend `repeat_elements`)."""
    ndims = x.shape.ndims
    dyn = shape(x)
    y = tile(expand_dims(x, axis + 1), [1] * (axis + 1) + [rep] + [1] * (ndims - axis - 1))
    new_shape = [dyn[i] if i != axis else dyn[i] * rep for i in range(ndims)]
    out = reshape(y, stack(new_shape))
    static = x.shape.as_list()
    if static[axis] is not None:
        static[axis] *= rep
    out.set_shape(TensorShape(static))
    return out


class _UpSampling(_Spatial):
    _arg = "size"

    def __init__(self, size=2, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.size = normalize_tuple(size, self._rank, "size")

    def call(self, inputs):
        out = inputs
        for axis, rep in zip(self._spatial_axes(), self.size):
            out = repeat_elements(out, rep, axis)
        return out

    def compute_output_shape(self, input_shape):
        return self._out_shape(input_shape, lambda i, n: n * self.size[i])


class UpSampling1D(_UpSampling):
    """Each step of [batch, steps, features] repeated `size` times."""
    _rank = 1

    def get_config(self):
        config = super().get_config()
        config["size"] = self.size[0]
        return config


class UpSampling2D(_UpSampling):
    """Rows and columns repeated `size` times ('nearest') or bilinearly interpolated ('bilinear',
    TF1's resize_bilinear without aligned corners)."""
    _rank = 2

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(size=size, data_format=data_format, **kwargs)
        if interpolation not in ("nearest", "bilinear"):
            raise ValueError("`interpolation` argument should be one of `\"nearest\"` or `\"bilinear\"`.")
        self.interpolation = interpolation

    def call(self, inputs):
        first = self.data_format == "channels_first"
        x = transpose(inputs, [0, 2, 3, 1]) if first else inputs
        dyn = shape(x)
        new_size = stack([dyn[1] * self.size[0], dyn[2] * self.size[1]])
        resize = resize_nearest_neighbor if self.interpolation == "nearest" else resize_bilinear
        out = resize(x, new_size)
        static = x.shape.as_list()
        out.set_shape(TensorShape([static[0]] + [n * s if n is not None else None
                                                 for n, s in zip(static[1:3], self.size)] + [static[3]]))
        return transpose(out, [0, 3, 1, 2]) if first else out

    def get_config(self):
        config = super().get_config()
        config["interpolation"] = self.interpolation
        return config


class UpSampling3D(_UpSampling):
    """Each of the three spatial axes repeated `size` times."""
    _rank = 3

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(size=size, data_format=data_format, **kwargs)
