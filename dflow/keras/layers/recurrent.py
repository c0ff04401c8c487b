"""Keras's recurrent layers as TF 1.15 shipped them (its v1 `tf.keras.layers`): cells
(`SimpleRNNCell`, `LSTMCell`, `GRUCell`, `StackedRNNCells`) that map (input, states) to
(output, new states) for one timestep, and `RNN`, which runs a cell over time; `SimpleRNN`,
`LSTM` and `GRU` are `RNN`s over their cell.

TF 1.15's defaults: recurrent_activation 'hard_sigmoid', LSTM unit_forget_bias=True, GRU
reset_after=False, implementation 1 (the gate math is the same for 2). The cell's weights are
made in the RNN's name scope (`lstm/kernel:0`, `lstm/recurrent_kernel:0`, `lstm/bias:0`), a
stacked cell's in its own (`rnn/lstm_cell/kernel:0`).

The loop (`rnn`): with `unroll`, or eagerly, a Python loop over the static timesteps; otherwise
dflow's `while_loop` over TensorArrays (as Keras's backend.rnn). A masked step keeps the previous
output and states. Dropout masks are drawn once per call, before the loop, from the learning
phase (`training`), one per gate as Keras's.
"""

from __future__ import annotations

import inspect
import sys

import numpy as np

from ...eager.context import executing_eagerly
from ...graph import dtypes
from ...graph.ops import Tensor
from ...graph.shape import TensorShape
from ...kernels.array_ops import shape as shape_op
from ...kernels.array_ops import stack
from ...kernels.common import convert_to_tensor
from ...kernels.control_flow_ops import while_loop
from ...kernels.creation_ops import ones, zeros
from ...kernels.linalg_ops import matmul
from ...kernels.manip_ops import concat, expand_dims, reverse, transpose, unstack
from ...kernels.math_ops import add, cast, less, multiply, subtract, where
from ...kernels.state_ops import assign
from ...kernels.tensor_array_ops import TensorArray
from ...nn.core import bias_add
from ...state.variables import Variable
from .. import activations, regularizers
from .. import backend as K
from ..engine.base_layer import InputSpec, Layer
from ..utils.generic_utils import deserialize_keras_object, serialize_keras_object
from .core import _RECURRENT_WEIGHTS, _ser, _set_weights_args, _weights_config

__all__ = ["RNN", "SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells", "SimpleRNN", "LSTM", "GRU",
           "AbstractRNNCell"]


def deserialize_layer(config, custom_objects=None):
    """The layer a `{"class_name", "config"}` dict names (dflow.keras.layers' classes, or custom)."""
    table = vars(sys.modules[__package__])  # dflow.keras.layers, loaded before any from_config runs
    return deserialize_keras_object(config, module_objects=table, custom_objects=custom_objects,
                                    printable_module_name="layer")


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _sizes(state_size):
    return [int(s) for s in _as_list(state_size)]


# ---- the loop ------------------------------------------------------------------------------------
def _state_variable(shape, dtype):
    """A stateful RNN's carried state: a non-trainable, Keras-initialized zeros variable."""
    v = Variable(np.zeros(shape, dtype=dtypes.as_dtype(dtype or K.floatx()).as_numpy_dtype), trainable=False)
    K.track_variable(v)
    return v


def rnn(step, inputs, initial_states, output_size, go_backwards=False, mask=None, unroll=False):
    """Runs `step(x_t, states) -> (output, new_states)` over axis 1 of `inputs` ([batch, time, ...]).

    Returns (last_output, outputs [batch, time, output_size], new_states). A step whose `mask`
    ([batch, time] bool) is False keeps the previous output (zeros before the first) and states.
    """
    x = transpose(inputs, [1, 0] + list(range(2, inputs.shape.ndims)))
    if mask is not None:
        mask = transpose(cast(mask, dtypes.bool), [1, 0])
    if go_backwards:
        x = reverse(x, [0])
        if mask is not None:
            mask = reverse(mask, [0])
    steps = x.shape[0].value
    batch = x.shape[1].value
    batch_t = shape_op(x)[1] if batch is None else batch
    zero_output = zeros(stack([batch_t, output_size]) if batch is None else [batch, output_size], dtype=x.dtype)
    zero_output.set_shape([batch, output_size])
    states = list(initial_states)

    def keep(m, new, old):
        return where(m, new, old)

    if unroll or executing_eagerly():
        if steps is None:
            raise ValueError("Cannot unroll a RNN if the time dimension is undefined. If using a Sequential "
                             "model, specify the time dimension by passing an `input_shape` or `batch_input_shape` "
                             "argument to your first layer.")
        xs = unstack(x, num=steps)
        ms = unstack(mask, num=steps) if mask is not None else [None] * steps
        prev, outputs = zero_output, []
        for x_t, m_t in zip(xs, ms):
            out, new_states = step(x_t, states)
            new_states = _as_list(new_states)
            if m_t is not None:
                m = expand_dims(m_t, -1)
                out = keep(m, out, prev)
                new_states = [keep(m, n, s) for n, s in zip(new_states, states)]
            prev, states = out, new_states
            outputs.append(out)
        return prev, transpose(stack(outputs), [1, 0, 2]), states

    steps_t = shape_op(x)[0] if steps is None else steps
    input_ta = TensorArray(x.dtype, size=steps_t, element_shape=x.shape[1:], tensor_array_name="input_ta").unstack(x)
    mask_ta = TensorArray(dtypes.bool, size=steps_t, element_shape=mask.shape[1:],
                          tensor_array_name="mask_ta").unstack(mask) if mask is not None else None
    output_ta = TensorArray(x.dtype, size=steps_t, element_shape=TensorShape([batch, output_size]),
                            tensor_array_name="output_ta")
    n_states = len(states)

    def body(t, out_ta, prev, *st):
        x_t = input_ta.read(t)
        x_t.set_shape(x.shape[1:])
        out, new_states = step(x_t, list(st))
        new_states = _as_list(new_states)
        if mask_ta is not None:
            m_t = mask_ta.read(t)
            m_t.set_shape(mask.shape[1:])
            m = expand_dims(m_t, -1)
            out = keep(m, out, prev)
            new_states = [keep(m, n, s) for n, s in zip(new_states, st)]
        for n, s in zip(new_states, st):
            n.set_shape(s.shape)
        out.set_shape(prev.shape)
        return (add(t, 1), out_ta.write(t, out), out) + tuple(new_states)

    time = convert_to_tensor(0, dtype=dtypes.int32, name="time")
    result = while_loop(lambda t, *_: less(t, steps_t), body, (time, output_ta, zero_output) + tuple(states),
                        maximum_iterations=steps_t)
    last, final_states = result[2], list(result[3:3 + n_states])
    outputs = transpose(result[1].stack(), [1, 0, 2])
    outputs.set_shape([batch, steps, output_size])
    return last, outputs, final_states


# ---- dropout masks, drawn once per call ---------------------------------------------------------
def _dropout_masks(batch, dim, rate, training, count, dtype):
    """`count` masks [batch, dim] (scaled keep masks while training, ones otherwise)."""
    ones_t = ones(stack([batch, dim]) if isinstance(batch, Tensor) else [batch, dim], dtype=dtype)

    def dropped():
        return [K.dropout(ones_t, rate) for _ in range(count)]

    if training is None:  # eagerly the base layer passes a fixed phase 1 itself; None is 0
        training = 0 if executing_eagerly() else K.learning_phase()
    if isinstance(training, (bool, int)):
        return dropped() if training else [ones_t] * count
    return [K.in_train_phase(lambda: K.dropout(ones_t, rate), ones_t, training=training) for _ in range(count)]


class _DropoutCell:
    """What Keras's DropoutRNNCellMixin gives a cell: masks for its input and recurrent state."""

    _n_masks = 1

    def _reset_dropout(self):
        self._input_masks = None
        self._recurrent_masks = None

    def _make_dropout_masks(self, batch, input_dim, training, dtype):
        self._reset_dropout()
        if 0 < self.dropout < 1:
            self._input_masks = _dropout_masks(batch, input_dim, self.dropout, training, self._n_masks, dtype)
        if 0 < self.recurrent_dropout < 1:
            self._recurrent_masks = _dropout_masks(batch, self.units, self.recurrent_dropout, training,
                                                   self._n_masks, dtype)

    def _cell_config(self, extra):
        config = {"units": self.units, "activation": activations.serialize(self.activation)}
        if hasattr(self, "recurrent_activation"):
            config["recurrent_activation"] = activations.serialize(self.recurrent_activation)
        config.update({"use_bias": self.use_bias, **_weights_config(self, _RECURRENT_WEIGHTS, ["initializer"])})
        config.update(extra)
        config.update({**_weights_config(self, _RECURRENT_WEIGHTS, ["regularizer", "constraint"]),
                       "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout})
        return config


def _init_cell(cell, units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
               kernel_regularizer, recurrent_regularizer, bias_regularizer, kernel_constraint, recurrent_constraint,
               bias_constraint, dropout, recurrent_dropout):
    cell.units = int(units)
    if cell.units <= 0:
        raise ValueError(f"Received an invalid value for argument `units`, expected a positive integer, got {units}.")
    cell.activation = activations.get(activation)
    cell.use_bias = bool(use_bias)
    _set_weights_args(cell, kernel_initializer=kernel_initializer,
                      recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
                      kernel_regularizer=kernel_regularizer,
                      recurrent_regularizer=recurrent_regularizer, bias_regularizer=bias_regularizer,
                      kernel_constraint=kernel_constraint, recurrent_constraint=recurrent_constraint,
                      bias_constraint=bias_constraint)
    cell.dropout = min(1.0, max(0.0, float(dropout)))
    cell.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
    cell._reset_dropout()


def _kernels(cell, input_dim, gates, bias_initializer=None, bias_shape=None):
    cell.kernel = cell.add_weight(shape=(input_dim, cell.units * gates), name="kernel",
                                  initializer=cell.kernel_initializer, regularizer=cell.kernel_regularizer,
                                  constraint=cell.kernel_constraint)
    cell.recurrent_kernel = cell.add_weight(shape=(cell.units, cell.units * gates), name="recurrent_kernel",
                                            initializer=cell.recurrent_initializer,
                                            regularizer=cell.recurrent_regularizer,
                                            constraint=cell.recurrent_constraint)
    cell.bias = cell.add_weight(shape=bias_shape or (cell.units * gates,), name="bias",
                                initializer=bias_initializer or cell.bias_initializer,
                                regularizer=cell.bias_regularizer,
                                constraint=cell.bias_constraint) if cell.use_bias else None


def _input_dim(cell, input_shape):
    shape = TensorShape(input_shape[0] if isinstance(input_shape, list) else input_shape)
    dim = shape[-1].value
    if dim is None:
        raise ValueError(f"The last dimension of the inputs to `{type(cell).__name__}` should be defined. "
                         "Found `None`.")
    return dim


def _slice(w, i, units):
    return w[:, i * units:(i + 1) * units] if w.shape.ndims == 2 else w[i * units:(i + 1) * units]


# ---- cells ----------------------------------------------------------------------------------------
class SimpleRNNCell(_DropoutCell, Layer):
    """h = activation(x·kernel + h_prev·recurrent_kernel + bias)."""

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        _init_cell(self, units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
                   kernel_regularizer, recurrent_regularizer, bias_regularizer, kernel_constraint,
                   recurrent_constraint, bias_constraint, dropout, recurrent_dropout)
        self.state_size = self.units
        self.output_size = self.units

    def build(self, input_shape):
        _kernels(self, _input_dim(self, input_shape), 1)
        self.built = True

    def call(self, inputs, states, training=None):
        prev = states[0] if isinstance(states, (list, tuple)) else states
        if self._input_masks is not None:
            inputs = multiply(inputs, self._input_masks[0])
        h = matmul(inputs, self.kernel)
        if self.bias is not None:
            h = bias_add(h, self.bias)
        if self._recurrent_masks is not None:
            prev = multiply(prev, self._recurrent_masks[0])
        output = add(h, matmul(prev, self.recurrent_kernel))
        if self.activation is not None:
            output = self.activation(output)
        return output, [output]

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        return _zero_states(self.state_size, batch_size, dtype)

    def get_config(self):
        config = super().get_config()
        config.update(self._cell_config({}))
        return config


class LSTMCell(_DropoutCell, Layer):
    """Gates i, f, c, o (that order in the kernels): c = f·c_prev + i·act(x_c + h·U_c),
    h = o·act(c); states [h, c]."""

    _n_masks = 4

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, implementation=1, **kwargs):
        super().__init__(**kwargs)
        _init_cell(self, units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
                   kernel_regularizer, recurrent_regularizer, bias_regularizer, kernel_constraint,
                   recurrent_constraint, bias_constraint, dropout, recurrent_dropout)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.implementation = implementation
        self.state_size = [self.units, self.units]
        self.output_size = self.units

    def build(self, input_shape):
        bias_initializer = None
        if self.use_bias and self.unit_forget_bias:
            base = self.bias_initializer
            units = self.units

            def bias_initializer(shape, dtype=None, partition_info=None):
                return concat([base((units,), dtype=dtype), ones((units,), dtype=dtype),
                               base((units * 2,), dtype=dtype)], 0)
        _kernels(self, _input_dim(self, input_shape), 4, bias_initializer=bias_initializer)
        self.built = True

    def call(self, inputs, states, training=None):
        h_prev, c_prev = states[0], states[1]
        u = self.units
        xs, hs = [], []
        for i in range(4):
            x_i = multiply(inputs, self._input_masks[i]) if self._input_masks is not None else inputs
            z = matmul(x_i, _slice(self.kernel, i, u))
            if self.bias is not None:
                z = bias_add(z, _slice(self.bias, i, u))
            xs.append(z)
            hs.append(multiply(h_prev, self._recurrent_masks[i]) if self._recurrent_masks is not None else h_prev)
        gate = [add(xs[i], matmul(hs[i], _slice(self.recurrent_kernel, i, u))) for i in range(4)]
        i_g = self.recurrent_activation(gate[0])
        f_g = self.recurrent_activation(gate[1])
        c = add(multiply(f_g, c_prev), multiply(i_g, self.activation(gate[2])))
        o_g = self.recurrent_activation(gate[3])
        h = multiply(o_g, self.activation(c))
        return h, [h, c]

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        return _zero_states(self.state_size, batch_size, dtype)

    def get_config(self):
        config = super().get_config()
        config.update(self._cell_config({"unit_forget_bias": self.unit_forget_bias}))
        config["implementation"] = self.implementation
        return config


class GRUCell(_DropoutCell, Layer):
    """Gates z, r, h (that order in the kernels): h = z·h_prev + (1 - z)·act(x_h + (r·h_prev)·U_h);
    with `reset_after` (CuDNN's form) r multiplies h_prev·U_h + its recurrent bias instead."""

    _n_masks = 3

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0,
                 implementation=1, reset_after=False, **kwargs):
        super().__init__(**kwargs)
        _init_cell(self, units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
                   kernel_regularizer, recurrent_regularizer, bias_regularizer, kernel_constraint,
                   recurrent_constraint, bias_constraint, dropout, recurrent_dropout)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.implementation = implementation
        self.reset_after = bool(reset_after)
        self.state_size = self.units
        self.output_size = self.units

    def build(self, input_shape):
        shape = (2, 3 * self.units) if self.reset_after else None
        _kernels(self, _input_dim(self, input_shape), 3, bias_shape=shape)
        self.built = True

    def call(self, inputs, states, training=None):
        h_prev = states[0] if isinstance(states, (list, tuple)) else states
        u = self.units
        if self.bias is not None:
            in_bias, rec_bias = (self.bias[0], self.bias[1]) if self.reset_after else (self.bias, None)
        else:
            in_bias = rec_bias = None
        xs = []
        for i in range(3):
            x_i = multiply(inputs, self._input_masks[i]) if self._input_masks is not None else inputs
            z = matmul(x_i, _slice(self.kernel, i, u))
            xs.append(bias_add(z, _slice(in_bias, i, u)) if in_bias is not None else z)
        hs = [multiply(h_prev, self._recurrent_masks[i]) if self._recurrent_masks is not None else h_prev
              for i in range(3)]

        def rec(i, h):
            r = matmul(h, _slice(self.recurrent_kernel, i, u))
            return bias_add(r, _slice(rec_bias, i, u)) if rec_bias is not None else r
        z = self.recurrent_activation(add(xs[0], rec(0, hs[0])))
        r = self.recurrent_activation(add(xs[1], rec(1, hs[1])))
        if self.reset_after:
            hh = self.activation(add(xs[2], multiply(r, rec(2, hs[2]))))
        else:
            hh = self.activation(add(xs[2], rec(2, multiply(r, hs[2]))))
        h = add(multiply(z, h_prev), multiply(subtract(1.0, z), hh))
        return h, [h]

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        return _zero_states(self.state_size, batch_size, dtype)

    def get_config(self):
        config = super().get_config()
        config.update(self._cell_config({}))
        config["implementation"] = self.implementation
        config["reset_after"] = self.reset_after
        return config


def _zero_states(state_size, batch_size, dtype):
    dtype = dtypes.as_dtype(dtype or K.floatx())
    out = []
    for size in _sizes(state_size):
        shape = stack([batch_size, size]) if isinstance(batch_size, Tensor) else [batch_size, size]
        z = zeros(shape, dtype=dtype)
        z.set_shape([batch_size if isinstance(batch_size, int) else None, size])
        out.append(z)
    return out


class AbstractRNNCell(Layer):
    """Base of a user's RNN cell: subclasses define `call(inputs, states) -> (output, new_states)`,
    `state_size` and `output_size`; `get_initial_state` gives zeros of the state sizes."""

    def call(self, inputs, states):
        raise NotImplementedError("Abstract method")

    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            batch_size = inputs.shape[0].value
            if batch_size is None:
                batch_size = shape_op(inputs)[0]
            dtype = dtype or inputs.dtype
        return _zero_states(self.state_size, batch_size, dtype)


class StackedRNNCells(Layer):
    """Cells applied one after the other at each step; the states are the cells' in order."""

    def __init__(self, cells, **kwargs):
        for cell in cells:
            if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
                raise ValueError(f"All cells must have a `call` method and a `state_size` attribute. "
                                 f"Received cells: {cells}")
        super().__init__(**kwargs)
        self.cells = list(cells)

    @property
    def state_size(self):
        return [s for cell in self.cells for s in _sizes(cell.state_size)]

    @property
    def output_size(self):
        last = self.cells[-1]
        return getattr(last, "output_size", _sizes(last.state_size)[0])

    def _make_dropout_masks(self, batch, input_dim, training, dtype):
        for cell in self.cells:
            if hasattr(cell, "_make_dropout_masks"):
                cell._make_dropout_masks(batch, input_dim, training, dtype)
            input_dim = getattr(cell, "output_size", _sizes(cell.state_size)[0])

    def build(self, input_shape):
        shape = TensorShape(input_shape[0] if isinstance(input_shape, list) else input_shape)
        for cell in self.cells:
            if not cell.built:
                if cell._dtype is None:
                    cell._dtype = self._dtype
                with K.name_scope(cell.name):
                    cell.build(shape)
                cell.built = True
            size = getattr(cell, "output_size", _sizes(cell.state_size)[0])
            shape = TensorShape([shape[0].value, size])
        self.built = True

    def call(self, inputs, states, training=None):
        new_states, i = [], 0
        for cell in self.cells:
            n = len(_sizes(cell.state_size))
            cell_states = states[i:i + n]
            i += n
            inputs, cs = cell.call(inputs, cell_states if n > 1 else cell_states[:1], training=training)
            new_states.extend(_as_list(cs))
        return inputs, new_states

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        return _zero_states(self.state_size, batch_size, dtype)

    def get_config(self):
        config = super().get_config()
        config["cells"] = [serialize_keras_object(cell) for cell in self.cells]
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cells = [deserialize_layer(c, custom_objects) for c in config.pop("cells")]
        return cls(cells, **config)


# ---- the RNN layer ------------------------------------------------------------------------------
class RNN(Layer):
    """Runs `cell` over the time axis of [batch, time, features] inputs (see the module docstring).

    Returns the last output [batch, units], or all of them [batch, time, units] with
    `return_sequences`; with `return_state`, a list [output] + the final states.
    """

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, time_major=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if not hasattr(cell, "call"):
            raise ValueError(f"`cell` should have a `call` method. The RNN was passed: {cell}")
        if not hasattr(cell, "state_size"):
            raise ValueError("The RNN cell should have an attribute `state_size` (tuple of integers, one integer "
                             "per RNN state).")
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)
        self.time_major = bool(time_major)
        self.supports_masking = True
        self.input_spec = None
        self.states = None
        self._num_states = len(_sizes(cell.state_size))

    # ---- initial_state passed with the inputs, as Keras does -----------------------------------------
    def __call__(self, inputs, initial_state=None, constants=None, **kwargs):
        if constants is not None:
            raise NotImplementedError(f"RNN {self.name}: `constants` are not supported by dflow's Keras RNN")
        if isinstance(inputs, (list, tuple)) and initial_state is None and len(inputs) > 1:
            inputs, initial_state = inputs[0], list(inputs[1:])
        if initial_state is None:
            return super().__call__(inputs, **kwargs)
        initial_state = _as_list(initial_state)
        if len(initial_state) != self._num_states:
            raise ValueError(f"Layer {self.name} expects {self._num_states} states, but it received "
                             f"{len(initial_state)} initial states. Input received: {initial_state}")
        return super().__call__([inputs] + initial_state, **kwargs)

    def _step_input_shape(self, input_shape):
        shape = TensorShape(input_shape[0] if isinstance(input_shape, list) else input_shape)
        if shape.ndims is not None and shape.ndims < 3:
            raise ValueError(f"Input 0 of layer {self.name} is incompatible with the layer: expected ndim=3, found "
                             f"ndim={shape.ndims}. Full shape received: {shape.as_list()}")
        if self.time_major:
            return TensorShape([shape[1].value]).concatenate(shape[2:])
        return TensorShape([shape[0].value]).concatenate(shape[2:])

    def build(self, input_shape):
        step_shape = self._step_input_shape(input_shape)
        if isinstance(self.cell, Layer) and not self.cell.built:
            if self.cell._dtype is None:
                self.cell._dtype = self._dtype
            self.cell.build(step_shape)
            self.cell.built = True
        if self.stateful:
            batch = step_shape[0].value
            if batch is None:
                raise ValueError("If a RNN is stateful, it needs to know its batch size. Specify the batch size of "
                                 "your input tensors: \n- If using a Sequential model, specify the batch size by "
                                 "passing a `batch_input_shape` argument to your first layer.\n- If using the "
                                 "functional API, specify the batch size by passing a `batch_shape` argument to "
                                 "your Input layer.")
            self.states = [_state_variable((batch, size), self._dtype) for size in _sizes(self.cell.state_size)]
        self.built = True

    def get_initial_state(self, inputs):
        batch = inputs.shape[1].value if self.time_major else inputs.shape[0].value
        if batch is None:
            batch = shape_op(inputs)[1 if self.time_major else 0]
        return _zero_states(self.cell.state_size, batch, inputs.dtype)

    def reset_states(self, states=None):
        """Zeros (or `states`) into a stateful RNN's state variables."""
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        if self.states is None:
            raise AttributeError("Layer has no states yet: call it first.")
        values = _as_list(states) if states is not None else [None] * len(self.states)
        if len(values) != len(self.states):
            raise ValueError(f"Layer {self.name} expects {len(self.states)} states, but it received "
                             f"{len(values)} state values. Input received: {states}")
        K.batch_set_value([(v, np.zeros(v.shape.as_list()) if val is None else np.asarray(val))
                           for v, val in zip(self.states, values)])

    def call(self, inputs, mask=None, training=None, initial_state=None):
        if isinstance(inputs, (list, tuple)):
            inputs, initial_state = inputs[0], list(inputs[1:])
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        self._step_input_shape(inputs.shape)
        if self.stateful:
            if initial_state is None:
                initial_state = [v.read_value() if hasattr(v, "read_value") else v for v in self.states]
        elif initial_state is None:
            initial_state = self.get_initial_state(inputs)
        initial_state = [convert_to_tensor(s) for s in initial_state]
        if len(initial_state) != self._num_states:
            raise ValueError(f"Layer has {self._num_states} states but was passed {len(initial_state)} initial "
                             "states.")
        x = transpose(inputs, [1, 0] + list(range(2, inputs.shape.ndims))) if self.time_major else inputs
        if self.unroll and x.shape[1].value is None:
            raise ValueError("Cannot unroll a RNN if the time dimension is undefined. If using a Sequential "
                             "model, specify the time dimension by passing an `input_shape` or `batch_input_shape` "
                             "argument to your first layer.")
        if hasattr(self.cell, "_make_dropout_masks"):
            batch = x.shape[0].value
            self.cell._make_dropout_masks(shape_op(x)[0] if batch is None else batch, x.shape[-1].value,
                                          training, x.dtype)
        cell = self.cell

        def step(x_t, states):
            # Keras passes a list of states (a user cell's `states[0]` is its first state); a
            # tf.nn.rnn_cell cell (and dflow's own one-state cells, which take either) the tensor
            single = self._num_states == 1 and not isinstance(cell, StackedRNNCells) and (
                getattr(cell, "_is_tf_rnn_cell", False) or type(cell).__module__ == __name__)
            states = states[0] if single else states
            kwargs = {"training": training} if "training" in _call_args(cell) else {}
            out, new_states = cell.call(x_t, states, **kwargs)
            return out, _as_list(new_states)

        output_size = getattr(cell, "output_size", _sizes(cell.state_size)[0])
        last, outputs, states = rnn(step, x, initial_state, int(output_size), go_backwards=self.go_backwards,
                                    mask=mask, unroll=self.unroll)
        if hasattr(cell, "_reset_dropout"):
            cell._reset_dropout()
        if self.stateful:
            updates = [assign(v, s) for v, s in zip(self.states, states)]
            if not executing_eagerly():
                self.add_update(updates)
        if self.return_sequences:
            output = transpose(outputs, [1, 0, 2]) if self.time_major else outputs
        else:
            output = last
        if self.return_state:
            return [output] + list(states)
        return output

    def compute_mask(self, inputs, mask):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * self._num_states
        return output_mask

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape[0] if isinstance(input_shape, list) else input_shape).as_list()
        batch, time = (shape[1], shape[0]) if self.time_major else (shape[0], shape[1])
        units = int(getattr(self.cell, "output_size", _sizes(self.cell.state_size)[0]))
        if self.return_sequences:
            out = TensorShape([time, batch, units] if self.time_major else [batch, time, units])
        else:
            out = TensorShape([batch, units])
        if self.return_state:
            return [out] + [TensorShape([batch, s]) for s in _sizes(self.cell.state_size)]
        return out

    def get_config(self):
        config = super().get_config()
        config.update({"return_sequences": self.return_sequences, "return_state": self.return_state,
                       "go_backwards": self.go_backwards, "stateful": self.stateful, "unroll": self.unroll,
                       "time_major": self.time_major})
        if type(self) is RNN:
            config["cell"] = serialize_keras_object(self.cell)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cell = deserialize_layer(config.pop("cell"), custom_objects)
        return cls(cell, **config)


def _call_args(cell):
    try:
        return inspect.signature(cell.call).parameters
    except (TypeError, ValueError):
        return {}


_CELL_ARGS = ("units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
              "recurrent_initializer", "bias_initializer", "unit_forget_bias", "kernel_regularizer",
              "recurrent_regularizer", "bias_regularizer", "kernel_constraint", "recurrent_constraint",
              "bias_constraint", "dropout", "recurrent_dropout", "implementation", "reset_after")
_RNN_ARGS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll", "time_major")


class _CellRNN(RNN):
    """An RNN over its own cell type, made from the cell's arguments (SimpleRNN, LSTM, GRU)."""

    _cell_class = None

    def __init__(self, units, **kwargs):
        cell_kwargs = {k: kwargs.pop(k) for k in _CELL_ARGS if k in kwargs}
        rnn_kwargs = {k: kwargs.pop(k) for k in _RNN_ARGS if k in kwargs}
        cell = self._cell_class(units, dtype=kwargs.get("dtype"), **cell_kwargs)
        super().__init__(cell, **rnn_kwargs, **kwargs)
        self.input_spec = InputSpec(ndim=3)

    def __getattr__(self, name):
        if name in _CELL_ARGS and "cell" in self.__dict__:
            return getattr(self.__dict__["cell"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def get_config(self):
        config = super().get_config()
        cell_config = self.cell.get_config()
        for key in ("name", "trainable", "dtype"):
            cell_config.pop(key, None)
        config.update(cell_config)
        config["activity_regularizer"] = _ser(regularizers, self.activity_regularizer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if config.get("implementation") == 0:
            config["implementation"] = 1
        return cls(**config)


class SimpleRNN(_CellRNN):
    _cell_class = SimpleRNNCell

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False, unroll=False,
                 **kwargs):
        kwargs.pop("implementation", None)
        args = dict(locals())
        for k in ("self", "kwargs", "units", "__class__"):
            args.pop(k)
        super().__init__(units, **args, **kwargs)


class LSTM(_CellRNN):
    _cell_class = LSTMCell

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, implementation=1, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, **kwargs):
        args = dict(locals())
        for k in ("self", "kwargs", "units", "__class__"):
            args.pop(k)
        super().__init__(units, **args, **kwargs)


class GRU(_CellRNN):
    _cell_class = GRUCell

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, implementation=1, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, reset_after=False, **kwargs):
        args = dict(locals())
        for k in ("self", "kwargs", "units", "__class__"):
            args.pop(k)
        super().__init__(units, **args, **kwargs)
