"""`tf.contrib.rnn`: the cells of `tf.nn.rnn_cell` and the static drivers as TF 1.15 re-exports
them (from `dflow.rnn`), plus contrib's own `OutputProjectionWrapper`,
`stack_bidirectional_dynamic_rnn` and `stack_bidirectional_rnn`, composed of those.

The contrib-only parts follow TF 1.15's contrib/rnn sources (TF 2.x, the reference dflow checks
against, has no contrib): the wrapper's projection is `kernel`/`bias` in its own scope
(`rnn/output_projection_wrapper/kernel`), the stacks put layer i in `stack_bidirectional_rnn/cell_i`.
"""

from __future__ import annotations

from ..graph.graph import name_scope
from ..kernels.linalg_ops import matmul
from ..kernels.manip_ops import concat
from ..nn.core import bias_add
from ..rnn.cell import LSTMStateTuple, RNNCell, assert_like_rnncell
from ..rnn.cells import BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell
from ..rnn.dynamic import bidirectional_dynamic_rnn
from ..rnn.static import static_bidirectional_rnn, static_rnn
from ..rnn.wrappers import DeviceWrapper, DropoutWrapper, MultiRNNCell, ResidualWrapper
from ..state.initializers import zeros_initializer
from ..state.scope import variable_scope
from ..tf1_names import missing_attribute

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell", "DropoutWrapper",
           "ResidualWrapper", "DeviceWrapper", "LSTMStateTuple", "OutputProjectionWrapper", "static_rnn",
           "static_bidirectional_rnn", "stack_bidirectional_rnn", "stack_bidirectional_dynamic_rnn"]


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
