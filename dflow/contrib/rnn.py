"""`tf.contrib.rnn`: the cells of `tf.nn.rnn_cell` and the static drivers as TF 1.15 re-exports
them (from `dflow.rnn`), plus contrib's own `LSTMBlockCell`, `OutputProjectionWrapper`,
`stack_bidirectional_dynamic_rnn` and `stack_bidirectional_rnn`, composed of those.

The contrib-only parts follow TF 1.15's contrib/rnn sources (TF 2.x, the reference dflow checks
against, has no contrib): the wrapper's projection is `kernel`/`bias` in its own scope
(`rnn/output_projection_wrapper/kernel`), the stacks put layer i in `stack_bidirectional_rnn/cell_i`.
LSTMBlockCell (TF's fused LSTM op) is a composite here, with LSTMCell's equations and the block
cell's variables: `lstm_cell/kernel`, `bias` and, with `use_peephole`, `w_i_diag`, `w_f_diag`,
`w_o_diag` (made in that order), so its checkpoints and LSTMCell's line up, as TF says.
"""

from __future__ import annotations

from ..graph.graph import name_scope
from ..kernels.common import convert_to_tensor
from ..kernels.linalg_ops import matmul
from ..kernels.manip_ops import concat, split
from ..kernels.math_ops import add, clip_by_value, multiply, sigmoid, tanh
from ..nn.core import bias_add
from ..rnn.cell import LayerRNNCell, LSTMStateTuple, RNNCell, assert_like_rnncell, input_depth
from ..rnn.cells import BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell
from ..rnn.dynamic import bidirectional_dynamic_rnn
from ..rnn.static import static_bidirectional_rnn, static_rnn
from ..rnn.wrappers import DeviceWrapper, DropoutWrapper, MultiRNNCell, ResidualWrapper
from ..state.initializers import zeros_initializer
from ..state.scope import variable_scope
from ..tf1_names import missing_attribute

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell", "DropoutWrapper",
           "ResidualWrapper", "DeviceWrapper", "LSTMStateTuple", "LSTMBlockCell", "OutputProjectionWrapper", "static_rnn",
           "static_bidirectional_rnn", "stack_bidirectional_rnn", "stack_bidirectional_dynamic_rnn"]


class LSTMBlockCell(LayerRNNCell):
    """TF1's block LSTM: i, ci, f, o = split([x, h] W + b); optional peepholes and `cell_clip`;
    state (cs, h)."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False, dtype=None, reuse=None,
                 name="lstm_cell"):
        super().__init__(_reuse=reuse, dtype=dtype, name=name)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._use_peephole = use_peephole
        self._cell_clip = cell_clip

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = input_depth(self, inputs_shape)
        n = self._num_units
        self._kernel = self.add_weight("kernel", shape=[depth + n, 4 * n])
        self._bias = self.add_weight("bias", shape=[4 * n], initializer=zeros_initializer(dtype=self.dtype))
        if self._use_peephole:
            self._w_i_diag = self.add_weight("w_i_diag", shape=[n])
            self._w_f_diag = self.add_weight("w_f_diag", shape=[n])
            self._w_o_diag = self.add_weight("w_o_diag", shape=[n])
        self.built = True

    def call(self, inputs, state):
        cs_prev, h_prev = state
        i, ci, f, o = split(bias_add(matmul(concat([inputs, h_prev], 1), self._kernel), self._bias), 4, axis=1)
        f = add(f, convert_to_tensor(self._forget_bias, dtype=f.dtype))
        if self._use_peephole:
            i = add(i, multiply(cs_prev, self._w_i_diag))
            f = add(f, multiply(cs_prev, self._w_f_diag))
        cs = add(multiply(tanh(ci), sigmoid(i)), multiply(cs_prev, sigmoid(f)))
        if self._cell_clip is not None and self._cell_clip > 0:
            cs = clip_by_value(cs, -self._cell_clip, self._cell_clip)
        if self._use_peephole:
            o = add(o, multiply(cs, self._w_o_diag))
        h = multiply(tanh(cs), sigmoid(o))
        return h, LSTMStateTuple(cs, h)


class OutputProjectionWrapper(RNNCell):
    """The wrapped cell's output projected to `output_size` (W out + b, then `activation`); the
    state is the wrapped cell's."""

    def __init__(self, cell, output_size, activation=None, reuse=None):
        super().__init__(_reuse=reuse)
        assert_like_rnncell("cell", cell)
        if output_size < 1:
            raise ValueError(f"Parameter output_size must be > 0: {output_size}.")
        self._cell = cell
        self._output_size = output_size
        self._activation = activation
        self._kernel = None

    def _sub_cells(self):
        return [self._cell]

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._output_size

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def call(self, inputs, state):
        output, new_state = self._cell(inputs, state)
        if self._kernel is None:
            depth = output.shape[-1].value
            if depth is None:
                raise ValueError(f"OutputProjectionWrapper: the wrapped cell's output depth must be known, got "
                                 f"{output.shape}")
            # made on the first call, after the wrapped cell's (TF1's lazy `_Linear`); the layer
            # counts as built by then, and add_weight would reuse: create instead
            self.built = False
            try:
                self._kernel = self.add_weight("kernel", shape=[depth, self._output_size], dtype=output.dtype)
                self._bias = self.add_weight("bias", shape=[self._output_size], dtype=output.dtype,
                                             initializer=zeros_initializer(dtype=output.dtype))
            finally:
                self.built = True
        projected = bias_add(matmul(output, self._kernel), self._bias)
        return (self._activation(projected) if self._activation else projected), new_state


def _check_stacks(cells_fw, cells_bw, initial_states_fw, initial_states_bw):
    if not cells_fw:
        raise ValueError("Must specify at least one fw cell for BidirectionalRNN.")
    if not cells_bw:
        raise ValueError("Must specify at least one bw cell for BidirectionalRNN.")
    if not isinstance(cells_fw, list):
        raise ValueError("cells_fw must be a list of RNNCells (one per layer).")
    if not isinstance(cells_bw, list):
        raise ValueError("cells_bw must be a list of RNNCells (one per layer).")
    if len(cells_fw) != len(cells_bw):
        raise ValueError("Forward and Backward cells must have the same depth.")
    for states, which in ((initial_states_fw, "fw"), (initial_states_bw, "bw")):
        if states is not None and (not isinstance(states, list) or len(states) != len(cells_fw)):
            raise ValueError(f"initial_states_{which} must be a list of state tensors (one per layer).")


def stack_bidirectional_dynamic_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None, initial_states_bw=None,
                                    dtype=None, sequence_length=None, parallel_iterations=None, time_major=False,
                                    scope=None, swap_memory=False):
    """Bidirectional dynamic RNN layers, each layer's input the previous layer's forward and backward
    outputs concatenated. Returns (outputs, states_fw, states_bw) (a tuple of each layer's states)."""
    _check_stacks(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw = [], []
    prev = inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}"):
                outputs, (state_fw, state_bw) = bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, prev, initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length, parallel_iterations=parallel_iterations, dtype=dtype,
                    swap_memory=swap_memory, time_major=time_major)
                prev = concat(list(outputs), 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return prev, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None, initial_states_bw=None,
                            dtype=None, sequence_length=None, scope=None):
    """The static version: `inputs` a list of [batch, depth] steps; returns (outputs list,
    states_fw, states_bw)."""
    _check_stacks(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    if not inputs:
        raise ValueError("inputs must not be empty")
    states_fw, states_bw = [], []
    prev = inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}"):
                prev, state_fw, state_bw = static_bidirectional_rnn(
                    cell_fw, cell_bw, prev, initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length, dtype=dtype)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return prev, tuple(states_fw), tuple(states_bw)


__getattr__ = missing_attribute(__name__)  # a TF1 name dflow lacks says so (docs/tf1_coverage.md)
