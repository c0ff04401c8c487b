"""The RNN cell protocol (TF1's `rnn_cell_impl.RNNCell`), `LSTMStateTuple` and zero states.

A cell is a `dflow.layers.Layer` called as `cell(inputs, state) -> (output, new_state)`. Its
variables come from the layer machinery: the first call captures a variable scope named after the
cell (`rnn/basic_lstm_cell`), later calls reuse it, so TF1's variable names and `get_variable`
sharing hold. `state_size` and `output_size` are ints, TensorShapes or nested tuples of them
(`LSTMStateTuple(c=4, h=4)`); `zero_state(batch_size, dtype)` builds zeros of that structure.
"""

from __future__ import annotations

import collections

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import name_scope
from ..graph.ops import Tensor, constant_value
from ..graph.shape import TensorShape, as_shape
from ..kernels.array_ops import shape as shape_op
from ..kernels.array_ops import stack
from ..kernels.common import convert_to_tensor
from ..kernels.creation_ops import zeros
from ..layers.base import InputSpec, Layer
from ..state.scope import variable_scope
from . import nest

__all__ = ["RNNCell", "LayerRNNCell", "LSTMStateTuple", "assert_like_rnncell", "zero_state_tensors"]

_LSTMStateTuple = collections.namedtuple("LSTMStateTuple", ("c", "h"))


class LSTMStateTuple(_LSTMStateTuple):
    """(c, h): an LSTM's cell state and output, in that order. `dtype` is theirs (TypeError if the
    two differ)."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def _static_batch(batch_size):
    """The int batch size when known at build time, else None."""
    if isinstance(batch_size, Tensor):
        value = constant_value(batch_size)
        return None if value is None else int(value)
    return None if batch_size is None else int(batch_size)


def _sizes(size):
    """A state or output size (int, TensorShape, list) as a list of ints."""
    return as_shape(size).as_list() if not isinstance(size, int) else [size]


def zeros_of(batch_size, size, dtype):
    """zeros [batch_size] + size; batch_size an int or a scalar int32 tensor. The static shape keeps
    what is known."""
    static = _static_batch(batch_size)
    suffix = _sizes(size)
    if static is not None:
        return zeros([static] + suffix, dtype=dtype)
    out = zeros(stack([convert_to_tensor(batch_size, dtype=dtypes.int32)] + suffix), dtype=dtype)
    out.set_shape([None] + suffix)
    return out


def zero_state_tensors(state_size, batch_size, dtype):
    """Zeros in the structure of `state_size`, each [batch_size] + size."""
    return nest.map_structure(lambda s: zeros_of(batch_size, s, dtype), state_size)


def assert_like_rnncell(cell_name, cell):
    """TypeError unless `cell` has output_size, state_size and is callable (TF1's check)."""
    conditions = [hasattr(cell, "output_size"), hasattr(cell, "state_size"), callable(cell)]
    errors = ["'output_size' property is missing", "'state_size' property is missing",
              "is not callable"]
    if not all(conditions):
        missing = [e for ok, e in zip(conditions, errors) if not ok]
        raise TypeError(f"The argument {cell_name!r} ({cell}) is not an RNNCell: {', '.join(missing)}.")


class RNNCell(Layer):
    """An RNN cell: `cell(inputs, state) -> (output, new_state)`, with `state_size`,
    `output_size` and `zero_state`. Subclasses define `call(inputs, state)`."""

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._is_tf_rnn_cell = True

    def __call__(self, inputs, state, scope=None):
        """Runs the cell on `inputs` [batch, depth] and `state` (a structure like `state_size`).

        `scope` (a name or VariableScope): the variables' scope, used exactly, on the first call.
        """
        if scope is not None:
            with variable_scope(scope) as vs:
                return Layer.__call__(self, inputs, state, scope=vs)
        return Layer.__call__(self, inputs, state)

    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    def build(self, _):
        self.built = True

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """`zero_state` for `inputs`' batch and dtype, or for `batch_size` and `dtype`.

        ValueError when neither gives a batch size and dtype, or when they disagree.
        """
        if inputs is not None:
            inputs = convert_to_tensor(inputs, name="inputs")
            static = inputs.shape[0].value if inputs.shape.ndims else None
            if batch_size is not None and static != _static_batch(batch_size):
                raise ValueError(f"batch size from input tensor is different from the input param. Input tensor "
                                 f"batch: {static}, batch_size: {batch_size}")
            if dtype is not None and inputs.dtype != as_dtype(dtype):
                raise ValueError(f"dtype from input tensor is different from the input param. Input tensor dtype: "
                                 f"{inputs.dtype}, dtype: {dtype}")
            batch_size = static if static is not None else shape_op(inputs)[0]
            dtype = inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError(f"batch_size and dtype cannot be None while constructing initial state: "
                             f"batch_size={batch_size}, dtype={dtype}")
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zeros shaped [batch_size] + each of `state_size` (nested as it is), in the name scope
        `<CellClass>ZeroState`. batch_size: an int or a scalar int32 tensor."""
        with name_scope(type(self).__name__ + "ZeroState"):
            return zero_state_tensors(self.state_size, batch_size, as_dtype(dtype))

    # The cell's sub-cells (wrappers and MultiRNNCell) own the weights they made.
    def _sub_cells(self):
        return []

    @property
    def trainable_weights(self):
        out = list(Layer.trainable_weights.fget(self))
        for cell in self._sub_cells():
            out += [w for w in cell.trainable_weights if all(w is not v for v in out)]
        return out

    @property
    def non_trainable_weights(self):
        out = list(Layer.non_trainable_weights.fget(self))
        for cell in self._sub_cells():
            out += [w for w in cell.non_trainable_weights if all(w is not v for v in out)]
        return out

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    variables = weights


class LayerRNNCell(RNNCell):
    """A cell whose own variables are made in `build(inputs_shape)` (TF1's `LayerRNNCell`): inputs
    of rank 2 ([batch, depth]) with a known depth."""

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self.input_spec = InputSpec(ndim=2)


def input_depth(cell, inputs_shape):
    """The last dim of a cell's inputs; ValueError (TF1's words) when it is unknown."""
    shape = inputs_shape if isinstance(inputs_shape, TensorShape) else TensorShape(inputs_shape)
    depth = shape[-1].value if shape.ndims else None
    if depth is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {shape}")
    if cell.dtype is not None and not (cell.dtype.is_floating or cell.dtype.is_complex):
        raise ValueError(f"RNN cell only supports floating point inputs, but saw dtype: {cell.dtype}")
    return depth
