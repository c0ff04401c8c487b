"""Cells made of cells: `MultiRNNCell` (a stack) and the wrappers `DropoutWrapper`,
`ResidualWrapper`, `DeviceWrapper` (TF 1.15's rnn_cell_impl).

A MultiRNNCell is a layer: its first call captures a scope `multi_rnn_cell` and runs cell i in
`cell_i` under it (`rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel`). A wrapper adds no scope
of its own: it calls the wrapped cell directly, so a wrapped cell's variables are named as if it
were not wrapped.
"""

from __future__ import annotations

import hashlib
import numbers

from ..graph.graph import device, name_scope
from ..graph.ops import Tensor, constant_value
from ..graph.shape import TensorShape
from ..kernels.common import convert_to_tensor
from ..kernels.index_ops import slice as slice_op
from ..kernels.manip_ops import concat
from ..kernels.math_ops import add, floor, multiply, realdiv
from ..kernels.random_ops import random_uniform
from ..nn.core import dropout as nn_dropout
from ..platform import tf_logging
from ..state.scope import variable_scope
from . import nest
from .cell import LSTMStateTuple, RNNCell, assert_like_rnncell

__all__ = ["MultiRNNCell", "DropoutWrapper", "ResidualWrapper", "DeviceWrapper"]


class MultiRNNCell(RNNCell):
    """Cells run one after the other on each step; cell i's output is cell i+1's input. The state
    is a tuple of the cells' states (or their concatenation without `state_is_tuple`)."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_sequence(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        if len({id(c) for c in cells}) < len(cells):
            tf_logging.warning("At least two cells provided to MultiRNNCell are the same object and will share "
                               "weights.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_sequence(c.state_size) for c in self._cells):
            raise ValueError("Some cells return tuples of states, but the flag state_is_tuple is not set.  State "
                             f"sizes are: {[c.state_size for c in self._cells]}")

    def _sub_cells(self):
        return self._cells

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(c.state_size for c in self._cells)
        return sum(c.state_size for c in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        if not self._state_is_tuple:
            return super().zero_state(batch_size, dtype)
        with name_scope(type(self).__name__ + "ZeroState"):
            return tuple(c.zero_state(batch_size, dtype) for c in self._cells)

    def call(self, inputs, state):
        position = 0
        current = inputs
        new_states = []
        for i, cell in enumerate(self._cells):
            with variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not nest.is_sequence(state):
                        raise ValueError(f"Expected state to be a tuple of length {len(self.state_size)}, but "
                                         f"received: {state}")
                    cell_state = state[i]
                else:
                    cell_state = slice_op(state, [0, position], [-1, cell.state_size])
                    position += cell.state_size
                current, new_state = cell(current, cell_state)
                new_states.append(new_state)
        return current, (tuple(new_states) if self._state_is_tuple else concat(new_states, 1))


class _Wrapper(RNNCell):
    """A cell around `cell`: same sizes, same zero state, no scope of its own."""

    def __init__(self, cell, **kwargs):
        super().__init__(**kwargs)
        assert_like_rnncell("cell", cell)
        self._cell = cell

    @property
    def wrapped_cell(self):
        return self._cell

    def _sub_cells(self):
        return [self._cell]

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        return self._wrapped_call(inputs, state, lambda x, s: self._cell(x, s, scope=scope))


def _default_dropout_state_filter_visitor(substate):
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)  # TF1: no dropout on an LSTM's memory
    return True


def _shallow_flags(visitor, structure):
    """One bool per leaf of `structure`: whether the visitor lets dropout reach it (TF1's
    `get_traverse_shallow_structure`, flattened)."""
    verdict = visitor(structure)
    if not nest.is_sequence(structure):
        if not isinstance(verdict, bool):
            raise TypeError(f"dropout_state_filter_visitor returned {verdict!r} for a leaf; expected a bool")
        return [verdict]
    if isinstance(verdict, bool):
        if not verdict:
            return [False] * len(nest.flatten(structure))
        return [f for branch in structure for f in _shallow_flags(visitor, branch)]
    if not nest.is_sequence(verdict) or len(verdict) != len(structure):
        raise TypeError(f"dropout_state_filter_visitor returned {verdict!r}, which is neither a bool nor a "
                        f"structure like {structure!r}")
    out = []
    for flag, branch in zip(verdict, structure):
        if not isinstance(flag, bool):
            raise TypeError(f"dropout_state_filter_visitor returned {verdict!r}: its entries must be bools")
        out += _shallow_flags(visitor, branch) if flag else [False] * len(nest.flatten(branch))
    return out


class DropoutWrapper(_Wrapper):
    """Dropout on a cell's inputs, outputs and new state (not an LSTM's c by default).

    keep probabilities: Python floats in [0, 1] (ValueError otherwise; 1 adds no op) or float
    tensors (a placeholder fed per run). `variational_recurrent=True` draws one mask per run for
    each of inputs, state and output (needs `dtype`, and `input_size` when inputs are dropped).
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell, dtype=dtype)
        self._dropout_state_filter = dropout_state_filter_visitor or _default_dropout_state_filter_visitor
        with name_scope("DropoutWrapperInit"):
            for prob, attr in ((input_keep_prob, "input_keep_prob"), (state_keep_prob, "state_keep_prob"),
                               (output_keep_prob, "output_keep_prob")):
                tensor = convert_to_tensor(prob)
                const = constant_value(tensor)
                if const is not None:
                    const = float(const)
                    if const < 0 or const > 1:
                        raise ValueError(f"Parameter {attr} must be between 0 and 1: {const:g}")
                    setattr(self, "_" + attr, const)
                else:
                    setattr(self, "_" + attr, tensor)
        self._variational_recurrent = variational_recurrent
        self._seed = seed
        self._recurrent_input_noise = self._recurrent_state_noise = self._recurrent_output_noise = None
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")

            def noise(sizes, salt):
                flat = nest.flatten(sizes)
                draws = [random_uniform([1] + TensorShape(s if not isinstance(s, int) else [s]).as_list(),
                                        seed=self._gen_seed(salt, i), dtype=dtype) for i, s in enumerate(flat)]
                return nest.pack_sequence_as(sizes, draws)

            if _should_dropout(self._input_keep_prob):
                if input_size is None:
                    raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or is unknown, "
                                     "input_size must be provided")
                self._recurrent_input_noise = noise(input_size, "input")
            self._recurrent_state_noise = noise(cell.state_size, "state")
            self._recurrent_output_noise = noise(cell.output_size, "output")

    def _gen_seed(self, salt_prefix, index):
        if self._seed is None:
            return None
        text = (str(self._seed) + f"{salt_prefix}_{index}").encode("utf-8")
        return int(hashlib.md5(text).hexdigest()[:8], 16) & 0x7FFFFFFF

    def _dropout(self, values, salt, noise, keep_prob, flags=None):
        flat = nest.flatten(values)
        flags = flags if flags is not None else [True] * len(flat)
        noises = nest.flatten(noise) if noise is not None else [None] * len(flat)
        out = []
        for i, (v, keep, n) in enumerate(zip(flat, flags, noises)):
            if not keep:
                out.append(v)
            elif self._variational_recurrent:
                kept = floor(add(n, keep_prob if isinstance(keep_prob, Tensor) else
                                 convert_to_tensor(keep_prob, dtype=v.dtype)))
                r = multiply(realdiv(v, convert_to_tensor(keep_prob, dtype=v.dtype)), kept)
                r.set_shape(v.shape)
                out.append(r)
            else:
                out.append(nn_dropout(v, keep_prob=keep_prob, seed=self._gen_seed(salt, i)))
        return nest.pack_sequence_as(values, out)

    def _wrapped_call(self, inputs, state, call):
        if _should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._recurrent_input_noise, self._input_keep_prob)
        output, new_state = call(inputs, state)
        if _should_dropout(self._state_keep_prob):
            flags = _shallow_flags(self._dropout_state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._recurrent_state_noise, self._state_keep_prob,
                                      flags)
        if _should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._recurrent_output_noise, self._output_keep_prob)
        return output, new_state


def _should_dropout(p):
    return not isinstance(p, numbers.Real) or p < 1


class ResidualWrapper(_Wrapper):
    """The wrapped cell's output plus its input (or `residual_fn(inputs, outputs)`)."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def _wrapped_call(self, inputs, state, call):
        outputs, new_state = call(inputs, state)

        def default_residual_fn(inputs, outputs):
            nest.assert_same_structure(inputs, outputs)

            def plus(x, y):
                x, y = convert_to_tensor(x), convert_to_tensor(y)
                if not x.shape.is_compatible_with(y.shape):
                    raise ValueError(f"ResidualWrapper: the input shape {x.shape} and the output shape {y.shape} "
                                     "are incompatible")
                return add(x, y)

            return nest.map_structure(plus, inputs, outputs)

        return (self._residual_fn or default_residual_fn)(inputs, outputs), new_state


class DeviceWrapper(_Wrapper):
    """The wrapped cell's ops (and zero state) placed on `device`."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with device(self._device):
            return super().zero_state(batch_size, dtype)

    def _wrapped_call(self, inputs, state, call):
        with device(self._device):
            return call(inputs, state)
