"""TF 1.15's `tf.keras.layers.CuDNNLSTM` and `CuDNNGRU`: the cuDNN-compatible recurrent layers.

On dflow they run anywhere (through the RNN loop of recurrent.py), with the math and the weight
layout of TF's cuDNN layers, so weights a TF program trained with them load as they are:
- CuDNNLSTM: kernel [input_dim, 4·units], recurrent_kernel [units, 4·units], bias [8·units]
  (the 4·units input biases, then the 4·units recurrent ones); gates i, f, c, o with sigmoid and
  tanh: c = f·c_prev + i·tanh(x·W_c + h·U_c + b_c), h = o·tanh(c). unit_forget_bias puts ones on
  the recurrent forget bias (entries 5u..6u), as TF's.
- CuDNNGRU: kernel [input_dim, 3·units], recurrent_kernel [units, 3·units], bias [6·units];
  gates z, r, h: h = z·h_prev + (1 - z)·tanh(x·W_h + b_h + r·(h_prev·U_h + b'_h)) (Keras's
  GRU with reset_after=True and sigmoid).
No masks, dropout or unrolling, as TF's (a mask is a ValueError).
"""

from __future__ import annotations

from ...kernels.creation_ops import ones
from ...kernels.linalg_ops import matmul
from ...kernels.manip_ops import concat
from ...kernels.math_ops import add, multiply, sigmoid, subtract, tanh
from ...nn.core import bias_add
from .. import regularizers
from ..engine.base_layer import InputSpec, Layer
from .core import _RECURRENT_WEIGHTS, _ser, _set_weights_args, _weights_config
from .recurrent import RNN, _input_dim

__all__ = ["CuDNNLSTM", "CuDNNGRU"]


class _CuDNNCell(Layer):
    _gates = 4

    def __init__(self, units, kernel_initializer, recurrent_initializer, bias_initializer, kernel_regularizer,
                 recurrent_regularizer, bias_regularizer, kernel_constraint, recurrent_constraint, bias_constraint,
                 unit_forget_bias=False, **kwargs):
        super().__init__(**kwargs)
        self.units = int(units)
        if self.units <= 0:
            raise ValueError(f"Received an invalid value for argument `units`, expected a positive integer, "
                             f"got {units}.")
        _set_weights_args(self, kernel_initializer=kernel_initializer,
                          recurrent_initializer=recurrent_initializer,
                          bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                          recurrent_regularizer=recurrent_regularizer,
                          bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                          recurrent_constraint=recurrent_constraint, bias_constraint=bias_constraint)
        self.unit_forget_bias = bool(unit_forget_bias)

    def build(self, input_shape):
        g, u = self._gates, self.units
        self.kernel = self.add_weight(shape=(_input_dim(self, input_shape), g * u), name="kernel",
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(shape=(u, g * u), name="recurrent_kernel",
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        init = self.bias_initializer
        if self.unit_forget_bias:
            base = self.bias_initializer

            def init(shape, dtype=None, partition_info=None):
                return concat([base((u * 5,), dtype=dtype), ones((u,), dtype=dtype), base((u * 2,), dtype=dtype)], 0)
        self.bias = self.add_weight(shape=(2 * g * u,), name="bias", initializer=init,
                                    regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True


class _CuDNNLSTMCell(_CuDNNCell):
    _gates = 4

    @property
    def state_size(self):
        return [self.units, self.units]

    @property
    def output_size(self):
        return self.units

    def call(self, inputs, states):
        h_prev, c_prev = states[0], states[1]
        u = self.units
        bias = add(self.bias[:4 * u], self.bias[4 * u:])
        z = add(bias_add(matmul(inputs, self.kernel), bias), matmul(h_prev, self.recurrent_kernel))
        i, f, g, o = (z[:, k * u:(k + 1) * u] for k in range(4))
        c = add(multiply(sigmoid(f), c_prev), multiply(sigmoid(i), tanh(g)))
        h = multiply(sigmoid(o), tanh(c))
        return h, [h, c]


class _CuDNNGRUCell(_CuDNNCell):
    _gates = 3

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def call(self, inputs, states):
        h_prev = states[0] if isinstance(states, (list, tuple)) else states
        u = self.units
        xw = bias_add(matmul(inputs, self.kernel), self.bias[:3 * u])
        hu = bias_add(matmul(h_prev, self.recurrent_kernel), self.bias[3 * u:])
        z = sigmoid(add(xw[:, :u], hu[:, :u]))
        r = sigmoid(add(xw[:, u:2 * u], hu[:, u:2 * u]))
        hh = tanh(add(xw[:, 2 * u:], multiply(r, hu[:, 2 * u:])))
        h = add(multiply(z, h_prev), multiply(subtract(1.0, z), hh))
        return h, [h]


class _CuDNNRNN(RNN):
    _cell_class = None

    def __init__(self, units, kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False, time_major=False,
                 unit_forget_bias=False, **kwargs):
        cell = self._cell_class(units, kernel_initializer, recurrent_initializer, bias_initializer,
                                kernel_regularizer, recurrent_regularizer, bias_regularizer, kernel_constraint,
                                recurrent_constraint, bias_constraint, unit_forget_bias=unit_forget_bias,
                                dtype=kwargs.get("dtype"))
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, time_major=time_major,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.input_spec = InputSpec(ndim=3)
        self.supports_masking = False

    def __getattr__(self, name):
        if not name.startswith("_") and "cell" in self.__dict__ and hasattr(self.__dict__["cell"], name):
            return getattr(self.__dict__["cell"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def call(self, inputs, mask=None, training=None, initial_state=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if mask is not None:
            raise ValueError(f"Masking is not supported for CuDNN RNNs (layer {self.name}).")
        return super().call(inputs, training=training, initial_state=initial_state)

    def compute_mask(self, inputs, mask):
        return [None] * (1 + self._num_states) if self.return_state else None

    def get_config(self):
        config = super().get_config()
        config.pop("unroll", None)
        cell = self.cell
        config.update({
            "units": cell.units, **_weights_config(cell, _RECURRENT_WEIGHTS, ["initializer", "regularizer"]),
            "activity_regularizer": _ser(regularizers, self.activity_regularizer),
            **_weights_config(cell, _RECURRENT_WEIGHTS, ["constraint"])})
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


class CuDNNLSTM(_CuDNNRNN):
    """LSTM with cuDNN's math and weights (see the module docstring); names cu_dnnlstm/kernel:0 ..."""

    _cell_class = _CuDNNLSTMCell

    def __init__(self, units, kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 **kwargs):
        super().__init__(units, kernel_initializer, recurrent_initializer, bias_initializer, kernel_regularizer,
                         recurrent_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, return_sequences, return_state, go_backwards,
                         stateful, unit_forget_bias=unit_forget_bias, **kwargs)

    def get_config(self):
        config = super().get_config()
        config["unit_forget_bias"] = self.cell.unit_forget_bias
        return config


class CuDNNGRU(_CuDNNRNN):
    """GRU with cuDNN's math and weights (see the module docstring); names cu_dnngru/kernel:0 ..."""

    _cell_class = _CuDNNGRUCell

    def __init__(self, units, kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False, **kwargs):
        super().__init__(units, kernel_initializer, recurrent_initializer, bias_initializer, kernel_regularizer,
                         recurrent_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, return_sequences, return_state, go_backwards,
                         stateful, **kwargs)
