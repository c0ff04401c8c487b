"""TF 1.15's `tf.keras.layers.ConvLSTM2D`: an LSTM whose input and recurrent transforms are 2-D
convolutions, over [batch, time, rows, cols, channels] (channels_last) or
[batch, time, channels, rows, cols] (channels_first).

Weights (in the layer's scope, `conv_lst_m2d/kernel:0` as TF 1.15 names the class): kernel
[kh, kw, channels, 4·filters], recurrent_kernel [kh, kw, filters, 4·filters], bias [4·filters]
(unit_forget_bias puts ones on the forget gate's quarter), gates i, f, c, o in that order.
At each step: x_g = conv(x, kernel_g, strides, padding, dilation) + bias_g,
h_g = conv(h_prev, recurrent_kernel_g, stride 1, 'same'); i, f, o = recurrent_activation(x + h),
c = f·c_prev + i·activation(x_c + h_c), h = o·activation(c); the states [h, c] are
[batch, out_rows, out_cols, filters]. Defaults as TF 1.15: recurrent_activation 'hard_sigmoid'.

The loop runs over the static time steps (a Python loop), or dflow's while_loop when the time
dimension is unknown. A masked step ([batch, time] mask) keeps the previous output and states.
Dropout masks (input and recurrent, one per gate) are drawn once per call while training.
`stateful=True` is not supported (NotImplementedError).
"""

from __future__ import annotations

from ... import nn
from ...eager.context import executing_eagerly
from ...graph import dtypes
from ...graph.shape import TensorShape
from ...kernels.array_ops import reshape, stack
from ...kernels.array_ops import shape as shape_op
from ...kernels.common import convert_to_tensor
from ...kernels.control_flow_ops import while_loop
from ...kernels.creation_ops import ones, zeros
from ...kernels.manip_ops import concat, reverse, transpose, unstack
from ...kernels.math_ops import add, cast, less, multiply, where
from ...kernels.tensor_array_ops import TensorArray
from ...layers.utils import conv_output_length, normalize_tuple
from .. import activations, regularizers
from .. import backend as K
from ..engine.base_layer import InputSpec, Layer
from .convolutional import _data_format
from .core import _RECURRENT_WEIGHTS, _ser, _set_weights_args, _weights_config

__all__ = ["ConvLSTM2D"]


class ConvLSTM2DCell(Layer):
    """One step of ConvLSTM2D on channels_last [batch, rows, cols, channels] inputs."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", dilation_rate=(1, 1), activation="tanh",
                 recurrent_activation="hard_sigmoid", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", unit_forget_bias=True,
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, 2, "kernel_size")
        self.strides = normalize_tuple(strides, 2, "strides")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"The `padding` argument must be one of \"valid\", \"same\". Received: {padding}")
        self.dilation_rate = normalize_tuple(dilation_rate, 2, "dilation_rate")
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        _set_weights_args(self, kernel_initializer=kernel_initializer,
                          recurrent_initializer=recurrent_initializer,
                          bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                          recurrent_regularizer=recurrent_regularizer,
                          bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                          recurrent_constraint=recurrent_constraint, bias_constraint=bias_constraint)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self._input_masks = self._recurrent_masks = None

    def build(self, input_shape):
        channels = TensorShape(input_shape)[-1].value
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        f = self.filters
        self.kernel = self.add_weight(shape=self.kernel_size + (channels, 4 * f), initializer=self.kernel_initializer,
                                      name="kernel", regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(shape=self.kernel_size + (f, 4 * f),
                                                initializer=self.recurrent_initializer, name="recurrent_kernel",
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        if self.use_bias:
            init = self.bias_initializer
            if self.unit_forget_bias:
                base = self.bias_initializer

                def init(shape, dtype=None, partition_info=None):
                    return concat([base((f,), dtype=dtype), ones((f,), dtype=dtype), base((2 * f,), dtype=dtype)], 0)
            self.bias = self.add_weight(shape=(4 * f,), initializer=init, name="bias",
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        else:
            self.bias = None
        self.built = True

    def _conv(self, x, w, strides, padding, dilation):
        return nn.conv2d(x, w, strides=[1, strides[0], strides[1], 1], padding=padding.upper(), data_format="NHWC",
                         dilations=[1, dilation[0], dilation[1], 1])

    def call(self, inputs, states):
        h_prev, c_prev = states[0], states[1]
        f = self.filters
        z = []
        for g in range(4):
            x = multiply(inputs, self._input_masks[g]) if self._input_masks is not None else inputs
            h = multiply(h_prev, self._recurrent_masks[g]) if self._recurrent_masks is not None else h_prev
            xg = self._conv(x, self.kernel[:, :, :, g * f:(g + 1) * f], self.strides, self.padding,
                            self.dilation_rate)
            if self.bias is not None:
                xg = nn.bias_add(xg, self.bias[g * f:(g + 1) * f])
            hg = self._conv(h, self.recurrent_kernel[:, :, :, g * f:(g + 1) * f], (1, 1), "same", (1, 1))
            z.append(add(xg, hg))
        i = self.recurrent_activation(z[0])
        fg = self.recurrent_activation(z[1])
        c = add(multiply(fg, c_prev), multiply(i, self.activation(z[2])))
        o = self.recurrent_activation(z[3])
        h = multiply(o, self.activation(c))
        return h, [h, c]


_CELL_ARGS = ("filters", "kernel_size", "strides", "padding", "dilation_rate", "activation", "recurrent_activation",
              "use_bias", "kernel_initializer", "recurrent_initializer", "bias_initializer", "unit_forget_bias",
              "kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "kernel_constraint",
              "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout")


class ConvLSTM2D(Layer):
    """Convolutional LSTM over [batch, time, rows, cols, channels] (see the module docstring)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1),
                 activation="tanh", recurrent_activation="hard_sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 return_sequences=False, go_backwards=False, stateful=False, dropout=0.0, recurrent_dropout=0.0,
                 return_state=False, unroll=False, time_major=False, **kwargs):
        if stateful:
            raise NotImplementedError("ConvLSTM2D: dflow does not support stateful=True")
        if time_major:
            raise NotImplementedError("ConvLSTM2D: dflow does not support time_major=True")
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.data_format = _data_format(data_format)
        self.cell = ConvLSTM2DCell(
            filters, kernel_size, strides=strides, padding=padding, dilation_rate=dilation_rate,
            activation=activation, recurrent_activation=recurrent_activation, use_bias=use_bias,
            kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer, unit_forget_bias=unit_forget_bias,
            kernel_regularizer=kernel_regularizer, recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint, bias_constraint=bias_constraint, dropout=dropout,
            recurrent_dropout=recurrent_dropout, dtype=kwargs.get("dtype"))
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = False
        self.unroll = bool(unroll)
        self.time_major = False
        self.supports_masking = True
        self.input_spec = InputSpec(ndim=5)

    def __getattr__(self, name):
        if name in _CELL_ARGS and "cell" in self.__dict__:
            return getattr(self.__dict__["cell"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _step_shape(self, input_shape):
        dims = TensorShape(input_shape).as_list()
        if self.data_format == "channels_first":
            return [dims[0], dims[3], dims[4], dims[2]]
        return [dims[0]] + dims[2:]

    def _out_spatial(self, rows, cols):
        cell = self.cell
        return [conv_output_length(n, k, cell.padding, s, d) for n, k, s, d in
                zip((rows, cols), cell.kernel_size, cell.strides, cell.dilation_rate)]

    def build(self, input_shape):
        if self.cell._dtype is None:
            self.cell._dtype = self._dtype
        self.cell.build(self._step_shape(input_shape))
        self.cell.built = True
        self.built = True

    def call(self, inputs, mask=None, training=None, initial_state=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        x = transpose(inputs, [0, 1, 3, 4, 2]) if self.data_format == "channels_first" else inputs
        b, t, rows, cols, _ = x.shape.as_list()
        out_rows, out_cols = self._out_spatial(rows, cols)
        dyn = shape_op(x)
        batch = b if b is not None else dyn[0]
        f = self.cell.filters
        if initial_state is None:
            state_shape = [batch, out_rows if out_rows is not None else None, out_cols, f]
            if any(d is None or not isinstance(d, int) for d in state_shape):
                # the output's spatial size from a zero-input convolution, as Keras's
                zero_in = zeros(stack([batch, dyn[2], dyn[3], dyn[4]]), dtype=x.dtype)
                z = self.cell._conv(zero_in, zeros(self.cell.kernel_size + (x.shape[-1].value, f), dtype=x.dtype),
                                    self.cell.strides, self.cell.padding, self.cell.dilation_rate)
                initial_state = [z, z]
            else:
                initial_state = [zeros(state_shape, dtype=x.dtype) for _ in range(2)]
        else:
            initial_state = [convert_to_tensor(s) for s in initial_state]
            if self.data_format == "channels_first":
                initial_state = [transpose(s, [0, 2, 3, 1]) for s in initial_state]
        self._make_dropout_masks(x, initial_state[0], training)
        try:
            last, outputs, states = self._loop(x, initial_state, mask)
        finally:
            self.cell._input_masks = self.cell._recurrent_masks = None
        if self.data_format == "channels_first":
            last = transpose(last, [0, 3, 1, 2])
            outputs = transpose(outputs, [0, 1, 4, 2, 3])
            states = [transpose(s, [0, 3, 1, 2]) for s in states]
        output = outputs if self.return_sequences else last
        if self.return_state:
            return [output] + list(states)
        return output

    def _make_dropout_masks(self, x, h0, training):
        cell = self.cell
        if training is None:  # eagerly the base layer passes a fixed phase itself; None is 0
            training = 0 if executing_eagerly() else K.learning_phase()

        def masks(like, rate):
            base = ones(shape_op(like), dtype=like.dtype)
            if isinstance(training, (bool, int)):
                return [K.dropout(base, rate) for _ in range(4)] if training else [base] * 4
            return [K.in_train_phase(lambda: K.dropout(base, rate), base, training=training) for _ in range(4)]

        if 0 < cell.dropout < 1:
            cell._input_masks = masks(x[:, 0], cell.dropout)
        if 0 < cell.recurrent_dropout < 1:
            cell._recurrent_masks = masks(h0, cell.recurrent_dropout)

    def _loop(self, x, states, mask):
        """(last output, outputs [batch, time, ...], final states) of the cell over axis 1 of x."""
        xt = transpose(x, [1, 0, 2, 3, 4])
        if mask is not None:
            mask = transpose(cast(mask, dtypes.bool), [1, 0])
        if self.go_backwards:
            xt = reverse(xt, [0])
            if mask is not None:
                mask = reverse(mask, [0])
        steps = xt.shape[0].value
        cell = self.cell

        def keep(m, new, old):
            m = reshape(m, [-1, 1, 1, 1])
            return where(m, new, old)

        prev = states[0] * 0.0
        if steps is not None:
            outputs = []
            ms = unstack(mask, num=steps) if mask is not None else [None] * steps
            for x_t, m_t in zip(unstack(xt, num=steps), ms):
                out, new = cell.call(x_t, states)
                if m_t is not None:
                    out = keep(m_t, out, prev)
                    new = [keep(m_t, n, s) for n, s in zip(new, states)]
                prev, states = out, new
                outputs.append(out)
            return prev, transpose(stack(outputs), [1, 0, 2, 3, 4]), states

        steps_t = shape_op(xt)[0]
        input_ta = TensorArray(xt.dtype, size=steps_t, element_shape=xt.shape[1:]).unstack(xt)
        mask_ta = TensorArray(dtypes.bool, size=steps_t, element_shape=mask.shape[1:]).unstack(mask) \
            if mask is not None else None
        output_ta = TensorArray(xt.dtype, size=steps_t, element_shape=states[0].shape)

        def body(t, out_ta, prev_out, h, c):
            x_t = input_ta.read(t)
            x_t.set_shape(xt.shape[1:])
            out, new = cell.call(x_t, [h, c])
            if mask_ta is not None:
                m_t = mask_ta.read(t)
                out = keep(m_t, out, prev_out)
                new = [keep(m_t, n, s) for n, s in zip(new, (h, c))]
            for n, s in zip(new, (h, c)):
                n.set_shape(s.shape)
            out.set_shape(prev_out.shape)
            return add(t, 1), out_ta.write(t, out), out, new[0], new[1]

        time = convert_to_tensor(0, dtype=dtypes.int32)
        result = while_loop(lambda t, *_: less(t, steps_t), body, (time, output_ta, prev) + tuple(states),
                            maximum_iterations=steps_t)
        outputs = transpose(result[1].stack(), [1, 0, 2, 3, 4])
        return result[2], outputs, [result[3], result[4]]

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask, None, None]
        return output_mask

    def compute_output_shape(self, input_shape):
        dims = TensorShape(input_shape).as_list()
        first = self.data_format == "channels_first"
        rows, cols = (dims[3], dims[4]) if first else (dims[2], dims[3])
        out_rows, out_cols = self._out_spatial(rows, cols)
        f = self.cell.filters
        step = [dims[0], f, out_rows, out_cols] if first else [dims[0], out_rows, out_cols, f]
        out = TensorShape(step[:1] + [dims[1]] + step[1:]) if self.return_sequences else TensorShape(step)
        if self.return_state:
            return [out, TensorShape(step), TensorShape(step)]
        return out

    def get_config(self):
        cell = self.cell
        config = super().get_config()
        config.update({
            "filters": cell.filters, "kernel_size": cell.kernel_size, "strides": cell.strides,
            "padding": cell.padding, "data_format": self.data_format, "dilation_rate": cell.dilation_rate,
            "activation": activations.serialize(cell.activation),
            "recurrent_activation": activations.serialize(cell.recurrent_activation), "use_bias": cell.use_bias,
            **_weights_config(cell, _RECURRENT_WEIGHTS, ["initializer"]), "unit_forget_bias": cell.unit_forget_bias,
            **_weights_config(cell, _RECURRENT_WEIGHTS, ["regularizer"]),
            "activity_regularizer": _ser(regularizers, self.activity_regularizer),
            **_weights_config(cell, _RECURRENT_WEIGHTS, ["constraint"]),
            "dropout": cell.dropout, "recurrent_dropout": cell.recurrent_dropout,
            "return_sequences": self.return_sequences, "return_state": self.return_state,
            "go_backwards": self.go_backwards, "stateful": self.stateful, "unroll": self.unroll,
            "time_major": self.time_major})
        return config
