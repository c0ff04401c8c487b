"""`InputLayer` and `Input`: where a functional model starts (a placeholder named after the layer,
`input_1:0`, or a tensor the user gives)."""

from __future__ import annotations

from ...eager.context import executing_eagerly
from ...graph.dtypes import as_dtype
from ...graph.ops import Tensor
from ...kernels.array_ops import placeholder
from .. import backend as K
from .base_layer import Layer, shape_list

__all__ = ["InputLayer", "Input"]


class InputLayer(Layer):
    """A layer whose output is a placeholder of `batch_input_shape` (or `input_tensor`)."""

    def __init__(self, input_shape=None, batch_size=None, dtype=None, input_tensor=None, sparse=False, name=None,
                 ragged=False, **kwargs):
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
        if name is None:
            name = f"input_{K.get_uid('input')}"
        super().__init__(name=name, dtype=dtype)
        if input_tensor is not None:
            input_tensor = input_tensor if isinstance(input_tensor, Tensor) else None
            batch_input_shape = shape_list(input_tensor.shape)
            dtype = input_tensor.dtype.base_dtype
        elif batch_input_shape is None:
            batch_input_shape = (batch_size,) + tuple(input_shape or ())
        self._batch_input_shape = tuple(batch_input_shape) if batch_input_shape is not None else None
        self._dtype = as_dtype(dtype or K.floatx())
        self.sparse = sparse
        self.is_placeholder = input_tensor is None
        if input_tensor is None:
            if executing_eagerly():  # the structure of an eager functional model lives in Keras's graph
                with K.symbolic_graph().as_default():
                    input_tensor = placeholder(self._dtype, shape=self._batch_input_shape, name=self.name)
            else:
                input_tensor = placeholder(self._dtype, shape=self._batch_input_shape, name=self.name)
        self.built = True
        self._add_inbound_node([], input_tensor, (), {})

    def get_config(self):
        return {"batch_input_shape": self._batch_input_shape, "dtype": self._dtype.name, "sparse": self.sparse,
                "name": self.name}


def Input(shape=None, batch_size=None, name=None, dtype=None, sparse=False, tensor=None,  # noqa: N802 - Keras
          ragged=False, batch_shape=None, **kwargs):
    """A symbolic input: `Input(shape=(784,))` is a placeholder [None, 784] with Keras history."""
    if batch_shape is None and shape is None and tensor is None:
        raise ValueError("Please provide to Input either a `shape` or a `tensor` argument. Note that `shape` does "
                         "not include the batch dimension.")
    layer = InputLayer(input_shape=shape, batch_size=batch_size, dtype=dtype, input_tensor=tensor, sparse=sparse,
                       name=name, batch_input_shape=batch_shape)
    return layer._inbound_nodes[0].output_tensors[0]


