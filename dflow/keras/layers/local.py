"""Keras's locally-connected layers as TF 1.15 shipped them (implementation=1): a convolution
whose weights are not shared, one [kernel·in_channels, filters] matrix per output position.

`LocallyConnected1D`: kernel [output_length, kernel_size·input_dim, filters], bias
[output_length, filters]. `LocallyConnected2D`: kernel [out_rows·out_cols,
kh·kw·input_dim, filters], bias [out_rows, out_cols, filters]. The patch at each position is
flattened in the input's own axis order (rows, cols, channels; or channels first), as Keras's
`local_conv`; with channels_first the bias is reshaped (not transposed) onto the output, as
Keras's `bias_add` does. Only 'valid' padding; the spatial sizes must be static.
"""

from __future__ import annotations

from ...graph.shape import TensorShape
from ...kernels.array_ops import reshape, stack
from ...kernels.linalg_ops import matmul
from ...kernels.manip_ops import transpose
from ...layers.base import input_shape_of
from ...layers.utils import conv_output_length, normalize_tuple
from .. import activations
from ..engine.base_layer import InputSpec, Layer
from .convolutional import _data_format
from .core import _dense_config, _set_weights_args

__all__ = ["LocallyConnected1D", "LocallyConnected2D"]


class _LocallyConnected(Layer):
    """LocallyConnected1D/2D by `_rank`: Keras's arguments and defaults (strides 1 on each axis)."""

    _rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, implementation=1, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        name = type(self).__name__
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, self._rank, "kernel_size")
        self.strides = normalize_tuple(strides, self._rank, "strides")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"The `padding` argument must be one of \"valid\", \"same\". Received: {padding}")
        self.implementation = int(implementation)
        if self.implementation != 1:
            raise NotImplementedError(f"{name}: dflow implements only implementation=1 (got {implementation})")
        if self.padding != "valid":
            raise ValueError(f"Invalid border mode for {name} (only \"valid\" is supported if implementation is "
                             f"1): {padding}")
        self.data_format = _data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        _set_weights_args(self, kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                          kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                          kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def _split(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        first = self.data_format == "channels_first"
        return (dims[2:], dims[1]) if first else (dims[1:-1], dims[-1])

    def _out_sizes(self, spatial):
        return [conv_output_length(n, k, self.padding, s) if n is not None else None
                for n, k, s in zip(spatial, self.kernel_size, self.strides)]

    def build(self, input_shape):
        spatial, channels = self._split(input_shape)
        if channels is None:
            raise ValueError(f"Axis {1 if self.data_format == 'channels_first' else self._rank + 1} of input should "
                             f"be fully-defined. Found shape: {input_shape_of(input_shape).as_list()}")
        if any(n is None for n in spatial):
            raise ValueError(f"The spatial dimensions of the inputs to a {type(self).__name__} layer should be "
                             f"fully-defined, but layer received the inputs shape "
                             f"{input_shape_of(input_shape).as_list()}")
        out = self._out_sizes(spatial)
        positions = 1
        for n in out:
            positions *= n
        patch = channels
        for k in self.kernel_size:
            patch *= k
        self.kernel = self.add_weight(shape=(positions, patch, self.filters), initializer=self.kernel_initializer,
                                      name="kernel", regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight(shape=tuple(out) + (self.filters,), initializer=self.bias_initializer,
                                    name="bias", regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self._out = out
        axis = 1 if self.data_format == "channels_first" else self._rank + 1
        self.input_spec = InputSpec(ndim=self._rank + 2, axes={axis: channels})
        self.built = True

    def call(self, inputs):
        first = self.data_format == "channels_first"
        patches = []
        for index in _positions(self._out):
            sl = [slice(None)] * (self._rank + 2)
            for d, (i, k, s) in enumerate(zip(index, self.kernel_size, self.strides)):
                sl[d + (2 if first else 1)] = slice(i * s, i * s + k)
            patches.append(reshape(inputs[tuple(sl)], [-1, int(self.kernel.shape[1])]))
        x = stack(patches)  # [positions, batch, patch]
        out = matmul(x, self.kernel)  # [positions, batch, filters]
        out = reshape(out, list(self._out) + [-1, self.filters])
        perm = [self._rank] + list(range(self._rank)) + [self._rank + 1]  # batch first
        out = transpose(out, perm)
        if first:
            out = transpose(out, [0, self._rank + 1] + list(range(1, self._rank + 1)))
        if self.bias is not None:
            bias_shape = [int(d) for d in self.bias.shape.as_list()]
            if first:
                out = out + reshape(self.bias, [1, bias_shape[-1]] + bias_shape[:-1])
            else:
                out = out + self.bias
        if self.activation is not None:
            out = self.activation(out)
        return out

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        spatial, _ = self._split(input_shape)
        out = self._out_sizes(spatial)
        if self.data_format == "channels_first":
            return TensorShape([dims[0], self.filters] + out)
        return TensorShape([dims[0]] + out + [self.filters])

    def get_config(self):
        config = super().get_config()
        config.update({
            "filters": self.filters, "kernel_size": self.kernel_size, "strides": self.strides,
            "padding": self.padding, "data_format": self.data_format, **_dense_config(self),
            "implementation": self.implementation})
        return config


def _positions(sizes):
    """The output positions in row-major order."""
    if not sizes:
        return [()]
    return [(i,) + rest for i in range(sizes[0]) for rest in _positions(sizes[1:])]


class LocallyConnected1D(_LocallyConnected):
    """Unshared 1-D convolution over [batch, steps, channels] (see the module docstring)."""

    _rank = 1


class LocallyConnected2D(_LocallyConnected):
    """Unshared 2-D convolution over images (see the module docstring)."""

    _rank = 2
