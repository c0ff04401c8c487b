"""TF1's basic cells: `BasicRNNCell`, `BasicLSTMCell`, `LSTMCell`, `GRUCell`.

Each is a composite of registered ops (matmul on [inputs, h] concatenated, bias_add, split,
sigmoid/tanh), so gradients come from those ops' rules. Variable names, shapes, initializers and
gate orders are TF 1.15's (rnn_cell_impl.py):

- BasicRNNCell: `kernel` [depth + units, units], `bias` zeros; h' = act(W [x, h] + b).
- BasicLSTMCell: `kernel` [depth + units, 4 units], `bias` zeros; gates i, j, f, o in that order;
  c' = c sigmoid(f + forget_bias) + sigmoid(i) act(j), h' = act(c') sigmoid(o).
- LSTMCell: as BasicLSTMCell, plus peepholes (`w_f_diag`, `w_i_diag`, `w_o_diag`), `cell_clip`,
  a projection (`projection/kernel` [units, num_proj]) and `proj_clip`; `initializer` for every
  weight but the bias.
- GRUCell: `gates/kernel` [depth + units, 2 units] and `gates/bias` (ones), `candidate/kernel`
  [depth + units, units] and `candidate/bias` (zeros); r, u = sigmoid(...) split in that order,
  h' = u h + (1 - u) tanh(W_c [x, r h] + b_c).

Kernels without an initializer get `get_variable`'s default (the scope's, else glorot_uniform).
"""

from __future__ import annotations

from ..kernels.common import convert_to_tensor
from ..kernels.index_ops import slice as slice_op
from ..kernels.linalg_ops import matmul
from ..kernels.manip_ops import concat, split
from ..kernels.math_ops import add, clip_by_value, multiply, sigmoid, subtract, tanh
from ..nn.core import bias_add
from ..state.initializers import constant_initializer, zeros_initializer
from .cell import LayerRNNCell, LSTMStateTuple, input_depth

__all__ = ["BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell"]


def _zeros_init(cell):
    return zeros_initializer(dtype=cell.dtype) if cell.dtype is not None else zeros_initializer()


class BasicRNNCell(LayerRNNCell):
    """output = new_state = activation(W [inputs, state] + b); `num_units` wide."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or tanh

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = input_depth(self, inputs_shape)
        self._kernel = self.add_weight("kernel", shape=[depth + self._num_units, self._num_units])
        self._bias = self.add_weight("bias", shape=[self._num_units], initializer=_zeros_init(self))
        self.built = True

    def call(self, inputs, state):
        gate_inputs = bias_add(matmul(concat([inputs, state], 1), self._kernel), self._bias)
        output = self._activation(gate_inputs)
        return output, output


class BasicLSTMCell(LayerRNNCell):
    """The LSTM of Zaremba et al. without peepholes or projection; state (c, h)."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or tanh

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units) if self._state_is_tuple else 2 * self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = input_depth(self, inputs_shape)
        self._kernel = self.add_weight("kernel", shape=[depth + self._num_units, 4 * self._num_units])
        self._bias = self.add_weight("bias", shape=[4 * self._num_units], initializer=_zeros_init(self))
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = split(state, 2, axis=1)
        gate_inputs = bias_add(matmul(concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = split(gate_inputs, 4, axis=1)
        forget_bias = convert_to_tensor(self._forget_bias, dtype=f.dtype)
        new_c = add(multiply(c, sigmoid(add(f, forget_bias))), multiply(sigmoid(i), self._activation(j)))
        new_h = multiply(self._activation(new_c), sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(LayerRNNCell):
    """The LSTM of Hochreiter & Schmidhuber with optional peepholes, cell clipping and an output
    projection (Sak et al.); state (c, m), m of `num_proj` columns when projected."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None, num_proj=None,
                 proj_clip=None, num_unit_shards=None, num_proj_shards=None, forget_bias=1.0, state_is_tuple=True,
                 activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError("LSTMCell: dflow does not partition variables (num_unit_shards, "
                                      "num_proj_shards); leave them out")
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or tanh
        out = num_proj if num_proj else num_units
        self._state_size = LSTMStateTuple(num_units, out) if state_is_tuple else num_units + out
        self._output_size = out

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def build(self, inputs_shape):
        depth = input_depth(self, inputs_shape)
        h_depth = self._num_proj if self._num_proj is not None else self._num_units
        self._kernel = self.add_weight("kernel", shape=[depth + h_depth, 4 * self._num_units],
                                       initializer=self._initializer)
        self._bias = self.add_weight("bias", shape=[4 * self._num_units], initializer=_zeros_init(self))
        if self._use_peepholes:
            self._w_f_diag = self.add_weight("w_f_diag", shape=[self._num_units], initializer=self._initializer)
            self._w_i_diag = self.add_weight("w_i_diag", shape=[self._num_units], initializer=self._initializer)
            self._w_o_diag = self.add_weight("w_o_diag", shape=[self._num_units], initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_weight("projection/kernel", shape=[self._num_units, self._num_proj],
                                                initializer=self._initializer)
        self.built = True

    def call(self, inputs, state):
        num_proj = self._num_units if self._num_proj is None else self._num_proj
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = slice_op(state, [0, 0], [-1, self._num_units])
            m_prev = slice_op(state, [0, self._num_units], [-1, num_proj])
        lstm_matrix = bias_add(matmul(concat([inputs, m_prev], 1), self._kernel), self._bias)
        i, j, f, o = split(lstm_matrix, 4, axis=1)
        forget_bias = convert_to_tensor(self._forget_bias, dtype=f.dtype)
        if self._use_peepholes:
            c = add(multiply(sigmoid(add(add(f, forget_bias), multiply(self._w_f_diag, c_prev))), c_prev),
                    multiply(sigmoid(add(i, multiply(self._w_i_diag, c_prev))), self._activation(j)))
        else:
            c = add(multiply(sigmoid(add(f, forget_bias)), c_prev), multiply(sigmoid(i), self._activation(j)))
        if self._cell_clip is not None:
            c = clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = multiply(sigmoid(add(o, multiply(self._w_o_diag, c))), self._activation(c))
        else:
            m = multiply(sigmoid(o), self._activation(c))
        if self._num_proj is not None:
            m = matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else concat([c, m], 1)
        return m, new_state


class GRUCell(LayerRNNCell):
    """The gated recurrent unit of Cho et al.; output = new state."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None, bias_initializer=None,
                 name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = input_depth(self, inputs_shape)
        n = self._num_units
        ones = constant_initializer(1.0, dtype=self.dtype) if self.dtype is not None else constant_initializer(1.0)
        self._gate_kernel = self.add_weight("gates/kernel", shape=[depth + n, 2 * n],
                                            initializer=self._kernel_initializer)
        self._gate_bias = self.add_weight("gates/bias", shape=[2 * n], initializer=self._bias_initializer or ones)
        self._candidate_kernel = self.add_weight("candidate/kernel", shape=[depth + n, n],
                                                 initializer=self._kernel_initializer)
        self._candidate_bias = self.add_weight("candidate/bias", shape=[n],
                                               initializer=self._bias_initializer or _zeros_init(self))
        self.built = True

    def call(self, inputs, state):
        gate_inputs = bias_add(matmul(concat([inputs, state], 1), self._gate_kernel), self._gate_bias)
        r, u = split(sigmoid(gate_inputs), 2, axis=1)
        r_state = multiply(r, state)
        candidate = bias_add(matmul(concat([inputs, r_state], 1), self._candidate_kernel), self._candidate_bias)
        c = self._activation(candidate)
        one = convert_to_tensor(1, dtype=u.dtype)
        new_h = add(multiply(u, state), multiply(subtract(one, u), c))
        return new_h, new_h
