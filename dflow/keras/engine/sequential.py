"""`tf.keras.Sequential`: a linear stack of layers.

With an input shape (the first layer's `input_shape=`, an `InputLayer`, or `build(shape)`), the
stack is a functional model over an `Input` named `<first layer>_input` (graph mode), rebuilt as
layers are added. Without one it is deferred: the first call (or `fit`) builds it on the data's
shape. Eager mode applies the layers in order each call.
"""

from __future__ import annotations

import copy

import numpy as np

from ...eager.context import executing_eagerly
from . import data_adapter
from .base_layer import Layer, deserialize_layer
from .input_layer import Input, InputLayer
from .training import Model

__all__ = ["Sequential"]


class Sequential(Model):
    """Layers applied one after another: `Sequential([Dense(64, input_shape=(784,)), Dense(10)])`."""

    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        self._stack = []
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self):
        return [lay for lay in self._stack if not isinstance(lay, InputLayer)]

    def add(self, layer):
        """Appends a layer (TypeError for anything else); rebuilds the graph when shapes are known."""
        if isinstance(layer, Model) and not isinstance(layer, Layer):
            raise TypeError("The added layer must be an instance of class Layer. Found: " + str(layer))
        if not isinstance(layer, Layer):
            raise TypeError("The added layer must be an instance of class Layer. Found: " + str(layer))
        if any(layer is lay for lay in self._stack):
            raise ValueError(f"Layer {layer.name} is already in the model {self.name}")
        self._stack.append(layer)
        self._tracked_layers = list(self._stack)
        self.built = False
        self._is_graph_network = False
        self._graph_parts = None
        first = self._stack[0]
        shape = getattr(first, "_batch_input_shape", None)
        if isinstance(first, InputLayer):
            x = first._inbound_nodes[0].output_tensors[0]
            self._connect(x, self._stack[1:])
        elif shape is not None:
            if not hasattr(self, "_input_tensor") or self._input_tensor is None:
                self._input_tensor = Input(batch_shape=shape, dtype=first.dtype, name=f"{first.name}_input")
            self._connect(self._input_tensor, self._stack)

    def _connect(self, x, layers):
        outputs = getattr(self, "_stack_outputs", None)
        done = getattr(self, "_connected", 0)
        if done == 0 or outputs is None:
            outputs, done = x, 0
        for layer in layers[done:]:
            outputs = layer(outputs)
        self._connected = len(layers)
        self._stack_outputs = outputs
        self._init_graph_network(x, outputs)

    def build(self, input_shape=None):
        """Builds the stack for `input_shape` (with the batch dimension)."""
        if self._is_graph_network or input_shape is None:
            return
        self._input_tensor = Input(batch_shape=tuple(input_shape), name=f"{self._stack[0].name}_input")
        self._connected = 0
        self._connect(self._input_tensor, self._stack)

    def call(self, inputs, training=None, mask=None):
        if self._is_graph_network:
            return super().call(inputs, training=training, mask=mask)
        outputs = inputs
        for layer in self._stack:
            if isinstance(layer, InputLayer):
                continue
            kwargs = {"training": training} if training is not None and layer._call_takes_training else {}
            outputs = layer(outputs, **kwargs)
        return outputs

    def __call__(self, inputs, *args, **kwargs):
        """A deferred stack builds on the first inputs' shape (an `Input` of that shape), then applies."""
        if not self._is_graph_network and self._stack and not isinstance(inputs, (list, tuple, dict)):
            shape = getattr(inputs, "shape", None)
            if shape is None:
                shape = np.shape(inputs)
            dims = shape.as_list() if hasattr(shape, "as_list") and shape.ndims is not None else \
                (list(shape) if not hasattr(shape, "as_list") else None)
            if dims is not None:
                self.build((None,) + tuple(dims[1:]))
        return super().__call__(inputs, *args, **kwargs)

    def _symbolic_io(self, sample=None):
        if not self._is_graph_network and sample is not None and self._stack:
            first = data_adapter.as_list(sample)[0]
            self.build((None,) + tuple(first.shape[1:]))
        return super()._symbolic_io(sample)

    def predict_proba(self, x, batch_size=32, verbose=0):
        """`predict`, for a stack ending in probabilities."""
        return self.predict(x, batch_size=batch_size, verbose=verbose)

    def predict_classes(self, x, batch_size=32, verbose=0):
        """The argmax class of each sample (the 0.5 threshold for a single output unit)."""
        proba = self.predict(x, batch_size=batch_size, verbose=verbose)
        if proba.shape[-1] > 1:
            return proba.argmax(axis=-1)
        return (proba > 0.5).astype("int32")

    def get_config(self):
        return {"name": self.name, "layers": [{"class_name": type(lay).__name__, "config": copy.deepcopy(lay.get_config())}
                                              for lay in self.layers]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        layers = config["layers"] if isinstance(config, dict) else config
        model = cls(name=config.get("name") if isinstance(config, dict) else None)
        for layer_config in layers:
            model.add(deserialize_layer(layer_config, custom_objects=custom_objects))
        return model

    def pop(self):
        """Removes the last layer (TypeError when there is none)."""
        if not self.layers:
            raise TypeError("There are no layers in the model.")
        self._stack.pop()
        self._tracked_layers = list(self._stack)
        self._connected = 0
        self._is_graph_network = False
        self._graph_parts = None
        if self._stack and not executing_eagerly() and getattr(self, "_input_tensor", None) is not None:
            self._connect(self._input_tensor, self._stack)
