"""Keras's `Layer` as TF 1.x shipped it, over dflow's `tf.layers.Layer`.

What differs from `tf.layers`:
- Names count from 0 on the counter tf.layers shares (`dense`, `dense_1`, ...); variables are
  plain `Variable`s named by the name scope of the layer's first call (`dense/kernel:0`,
  `foo/dense_1/kernel:0` inside `variable_scope("foo")`), never reused through variable scopes.
- Losses (`add_loss`, regularizers) and updates (`add_update`) stay on the layer (`layer.losses`,
  `layer.updates`), not in graph collections; a model gathers them from its layers.
- Layers assigned as attributes (`self.dense = Dense(3)`) are tracked: their weights, losses and
  updates are the owner's too.
- A call records a `Node` (its input and output tensors, its arguments) and each symbolic output's
  history, which the functional API walks; masks (`compute_mask`, `supports_masking`) follow
  tensors the same way. A `training` argument the caller leaves out is the learning phase.
"""

from __future__ import annotations

import inspect

import numpy as np

from ...eager.context import executing_eagerly
from ...eager.tensor import EagerTensor
from ...graph.dtypes import as_dtype
from ...graph.graph import Graph, name_scope
from ...graph.ops import Tensor
from ...graph.shape import TensorShape
from ...kernels.array_ops import placeholder
from ...kernels.common import convert_to_tensor
from ...layers import base as tf_base
from ...state.variables import Variable
from .. import backend as K
from .. import constraints, initializers, regularizers
from ..utils.generic_utils import deserialize_keras_object, serialize_keras_object

__all__ = ["Layer", "InputSpec", "Node", "flatten", "shape_list", "serialize_layer", "deserialize_layer"]

InputSpec = tf_base.InputSpec


def flatten(structure):
    """The leaves of nested lists/tuples/dicts (dict values by sorted key)."""
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    return [structure]


def pack_like(structure, leaves):
    """`leaves` (an iterator) in the shape of `structure`."""
    if isinstance(structure, (list, tuple)):
        return type(structure)(pack_like(item, leaves) for item in structure)
    if isinstance(structure, dict):
        return {key: pack_like(structure[key], leaves) for key in sorted(structure)}
    return next(leaves)


def shape_list(shape):
    """A TensorShape (or nested list of them) as Keras's tuples of ints and None."""
    if isinstance(shape, TensorShape):
        return tuple(shape.as_list()) if shape.ndims is not None else None
    if isinstance(shape, list) and shape and isinstance(shape[0], (TensorShape, list, tuple)):
        return [shape_list(s) for s in shape]
    return tuple(shape) if shape is not None else None


class Node:
    """One call of a layer on symbolic tensors: what the functional API re-applies."""

    def __init__(self, layer, inputs, outputs, args, kwargs):
        self.layer = layer
        self.inputs = inputs  # as passed (a tensor or a list of tensors)
        self.input_tensors = [t for t in flatten(inputs) if isinstance(t, Tensor)]
        self.outputs = outputs
        self.output_tensors = [t for t in flatten(outputs) if isinstance(t, Tensor)]
        self.args = args
        self.kwargs = kwargs

    @property
    def inbound_layers(self):
        out = []
        for t in self.input_tensors:
            history = K.keras_history(t)
            if history is not None:
                out.append(history[0])
        return out


def _accepts(fn, name):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def _accepts_named(fn, name):
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _symbolic_graph(leaves):
    """The graph of the graph-mode tensors among `leaves` (None when all are eager values)."""
    for x in leaves:
        if isinstance(x, Tensor) and not isinstance(x, EagerTensor):
            return x.graph
    return None


# a layer's bookkeeping lists, not its state (TF marks them NoDependency)
_UNTRACKED_ATTRIBUTES = {"_trainable_weights", "_non_trainable_weights", "_layers", "_inbound_nodes",
                         "_outbound_nodes", "_input_layers", "_output_layers", "inputs", "outputs"}


class Layer(tf_base.Layer):
    """Base class of Keras layers: `build(input_shape)` once, `call(inputs, **kwargs)` each time."""

    def __init__(self, trainable=True, name=None, dtype=None, activity_regularizer=None, dynamic=False, **kwargs):
        input_shape = kwargs.pop("input_shape", None)
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        batch_size = kwargs.pop("batch_size", None)
        weights = kwargs.pop("weights", None)
        kwargs.pop("autocast", None)
        input_dim = kwargs.pop("input_dim", None)
        if input_shape is None and input_dim is not None:
            input_shape = (input_dim,)
        self._tracked_layers = []
        super().__init__(trainable=trainable, name=name, dtype=dtype,
                         activity_regularizer=regularizers.get(activity_regularizer), **kwargs)
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (batch_size,) + tuple(input_shape)
        self._batch_input_shape = tuple(batch_input_shape) if batch_input_shape is not None else None
        self._initial_weights = weights
        self._inbound_nodes = []
        self._outbound_nodes = []
        self.supports_masking = getattr(self, "supports_masking", False)
        self.dynamic = dynamic
        self._call_takes_training = _accepts_named(self.call, "training")
        self._call_takes_mask = _accepts_named(self.call, "mask")

    @staticmethod
    def _unique_name(base):
        n = tf_base.next_layer_uid(base)
        return base if n == 1 else f"{base}_{n - 1}"

    def __setattr__(self, name, value):
        if not name.startswith("_tracked") and "_tracked_layers" in self.__dict__:
            items = value if isinstance(value, (list, tuple)) else [value]
            for item in items:
                if isinstance(item, tf_base.Layer) and item is not self and \
                        not any(item is t for t in self._tracked_layers):
                    self._tracked_layers.append(item)
                elif isinstance(item, Variable) and "_trainable_weights" in self.__dict__ and not any(
                        item is v for v in self._trainable_weights + self._non_trainable_weights):
                    # a variable assigned as an attribute is the layer's (the TF 1.x eager guide's models)
                    (self._trainable_weights if item.trainable else self._non_trainable_weights).append(item)
        super().__setattr__(name, value)

    # ---- weights, losses and updates (own, then tracked sublayers') ------------------------
    def _gather(self, attr, seen=None):
        seen = set() if seen is None else seen
        out = []
        for item in getattr(self, attr):
            if id(item) not in seen:
                seen.add(id(item))
                out.append(item)
        for layer in self._tracked_layers:
            gather = getattr(layer, "_gather", None)
            items = gather(attr, seen) if gather is not None else [x for x in getattr(layer, attr.lstrip("_"))
                                                                     if id(x) not in seen]
            for item in items:
                seen.add(id(item))
            out.extend(items)
        return out

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        seen, out = set(), []
        for v in self._trainable_weights:
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
        for layer in self._tracked_layers:
            for v in layer.trainable_weights:
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
        return out

    @property
    def non_trainable_weights(self):
        trainable = {id(v) for v in self.trainable_weights}
        seen, out = set(), []
        own = self._non_trainable_weights if self.trainable else self._trainable_weights + self._non_trainable_weights
        for v in own + [v for layer in self._tracked_layers for v in layer.weights]:
            if id(v) not in seen and id(v) not in trainable:
                seen.add(id(v))
                out.append(v)
        return out

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    def _trackable_children(self):
        """Object-checkpoint children (train/trackable.py): the layer's own weights by short name,
        then the sublayers and variables it holds as attributes, by attribute name (a list of
        layers as `name/0`, `name/1`, ...), as TF's Keras tracks them."""
        out = tf_base._weight_children(list(self._trainable_weights) + list(self._non_trainable_weights))
        names = {n for n, _ in out}
        own = {id(x) for x in self._tracked_layers} | {id(w) for _, w in out}
        for attr, value in self.__dict__.items():
            if attr in names or attr.startswith("_tracked") or attr in _UNTRACKED_ATTRIBUTES:
                continue
            if isinstance(value, (tf_base.Layer, Variable)) and id(value) in own and value is not self:
                out.append((attr, value))
                names.add(attr)
            elif isinstance(value, (list, tuple)) and value and not attr.startswith("_") and all(
                    isinstance(v, tf_base.Layer) and id(v) in own for v in value):
                out.append((attr, list(value)))
                names.add(attr)
        return out

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    @property
    def losses(self):
        out = []
        for loss in self._gather("_losses"):
            out.append(loss() if callable(loss) and not isinstance(loss, Tensor) else loss)
        return out

    @property
    def updates(self):
        if not self.trainable and not getattr(self, "stateful", False):
            return []
        return self._gather("_updates")

    def add_loss(self, losses, inputs=None):
        for loss in losses if isinstance(losses, (list, tuple)) else [losses]:
            if loss is not None:
                self._losses.append(loss if callable(loss) else convert_to_tensor(loss))

    def _add_regularization_loss(self, loss):
        self._losses.append(loss)

    def add_update(self, updates, inputs=None):
        if executing_eagerly():
            return  # eager updates ran already
        for update in updates if isinstance(updates, (list, tuple)) else [updates]:
            self._updates.append(update() if callable(update) else update)

    def get_weights(self):
        """The values of `weights` as numpy arrays (Keras's session or eager)."""
        return K.batch_get_value(self.weights)

    def set_weights(self, weights):
        """Loads numpy values into `weights` (same count and shapes; ValueError otherwise)."""
        K._set_weights_checked(self.weights, weights, "layer", f'"{self.name}"')

    def add_weight(self, name=None, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                   constraint=None, partitioner=None, use_resource=None, synchronization=None, aggregation=None,
                   **kwargs):
        """A new variable `<layer name scope>/<name>` (glorot_uniform for floats by default, zeros
        otherwise); its regularizer's loss joins `layer.losses`."""
        shape = () if shape is None else tuple(int(d) if d is not None else None for d in
                                               (shape.as_list() if isinstance(shape, TensorShape) else shape))
        dtype = as_dtype(dtype or self.dtype or K.floatx())
        initializer = initializers.get(initializer)
        if initializer is None:
            initializer = initializers.GlorotUniform() if dtype.is_floating else initializers.Zeros()
        trainable = True if trainable is None else bool(trainable)
        variable = Variable(lambda: initializer(shape, dtype=dtype), name=name, dtype=dtype,
                            trainable=trainable and self.trainable, constraint=constraints.get(constraint))
        K.track_variable(variable)
        if regularizer is not None:
            regularizer = regularizers.get(regularizer)
            with name_scope(f"{name}/Regularizer"):
                self._losses.append(regularizer(variable))
        if trainable and self.trainable:
            self._trainable_weights.append(variable)
        else:
            self._non_trainable_weights.append(variable)
        return variable

    add_variable = add_weight

    # ---- masks and shapes -------------------------------------------------------------------------
    def compute_mask(self, inputs, mask=None):
        """The output's mask: None, or the input's when the layer supports masking."""
        if not self.supports_masking:
            if any(m is not None for m in flatten(mask)):
                raise TypeError(f"Layer {self.name} does not support masking, but was passed an input_mask: {mask}")
            return None
        return mask

    def compute_output_shape(self, input_shape):
        """Output shape of the layer for `input_shape`, found by calling it on a placeholder."""
        shapes = input_shape if isinstance(input_shape, list) and input_shape and \
            isinstance(input_shape[0], (list, tuple, TensorShape)) else None
        with Graph().as_default():
            if shapes is None:
                inputs = placeholder(self.dtype or K.floatx(), TensorShape(input_shape))
            else:
                inputs = [placeholder(self.dtype or K.floatx(), TensorShape(s)) for s in shapes]
            outputs = self.call(inputs)
        if isinstance(outputs, (list, tuple)):
            return [o.shape for o in outputs]
        return outputs.shape

    # ---- call -----------------------------------------------------------------------------------------
    def _name_scope(self):
        return self.name

    def __call__(self, inputs, *args, **kwargs):
        """Builds the layer on its first call, applies `call`, follows masks and records the call.

        In eager mode a call on symbolic tensors (a functional model's `Input`) builds the layer's
        variables eagerly and applies `call` in the inputs' graph, for the model's structure."""
        graph = _symbolic_graph(flatten(inputs)) if executing_eagerly() else None
        if graph is None:
            return self._call(inputs, args, kwargs)
        if not self.built:
            with name_scope(self._name_scope()):
                self._maybe_build(inputs)
        with graph.as_default():
            return self._call(inputs, args, kwargs)

    def _call(self, inputs, args, kwargs):
        leaves = flatten(inputs)
        if not isinstance(inputs, (list, tuple, dict)):
            inputs = convert_to_tensor(inputs)
            leaves = [inputs]
        elif not executing_eagerly():
            inputs = pack_like(inputs, iter([convert_to_tensor(x) if not isinstance(x, Tensor) and x is not None
                                             else x for x in leaves]))
            leaves = flatten(inputs)
        previous_mask = [K.keras_mask(x) for x in leaves]
        previous_mask = None if all(m is None for m in previous_mask) else \
            (previous_mask[0] if len(previous_mask) == 1 else previous_mask)
        if self._call_takes_mask and "mask" not in kwargs and previous_mask is not None:
            kwargs["mask"] = previous_mask
        if self._call_takes_training and kwargs.get("training") is None:
            phase = K.learning_phase()
            if not (executing_eagerly() and phase == 0):
                kwargs["training"] = phase
        with name_scope(self._name_scope()):
            if not self.built:
                self._maybe_build(inputs)
            if isinstance(inputs, Tensor):
                tf_base._check_input(self.input_spec, inputs, self.name)
            outputs = self.call(inputs, *args, **kwargs)
            if self.activity_regularizer is not None:
                self._activity_loss(outputs)
            output_mask = self.compute_mask(inputs, kwargs.get("mask", previous_mask))
        out_leaves = flatten(outputs)
        masks = flatten(output_mask) if isinstance(output_mask, (list, tuple)) else [output_mask] * len(out_leaves)
        for tensor, mask in zip(out_leaves, masks):
            K.set_keras_mask(tensor, mask)
        if not executing_eagerly():
            self._add_inbound_node(inputs, outputs, args, kwargs)
        return outputs

    def _maybe_build(self, inputs):
        leaves = flatten(inputs)
        if self._dtype is None and leaves and isinstance(leaves[0], Tensor):
            self._dtype = leaves[0].dtype.base_dtype if leaves[0].dtype.is_floating else as_dtype(K.floatx())
        shapes = leaves[0].shape if isinstance(inputs, Tensor) else [
            x.shape if isinstance(x, Tensor) else convert_to_tensor(x).shape for x in leaves]
        self.build(shapes)
        self.built = True
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def _add_inbound_node(self, inputs, outputs, args, kwargs):
        node = Node(self, inputs, outputs, args, {k: v for k, v in kwargs.items() if k != "mask"})
        self._inbound_nodes.append(node)
        for layer in node.inbound_layers:
            layer._outbound_nodes.append(node)
        index = len(self._inbound_nodes) - 1
        for i, tensor in enumerate(node.output_tensors):
            K.set_keras_history(tensor, (self, index, i))

    # ---- what the first call saw ------------------------------------------------------------------
    def _first_node(self, what):
        if not self._inbound_nodes:
            raise AttributeError(f"Layer {self.name} is not connected, no input to return." if what == "input"
                                 else f"Layer {self.name} has no inbound nodes.")
        return self._inbound_nodes[0]

    @property
    def input(self):
        node = self._first_node("input")
        return node.input_tensors[0] if len(node.input_tensors) == 1 else node.input_tensors

    @property
    def output(self):
        node = self._first_node("output")
        return node.output_tensors[0] if len(node.output_tensors) == 1 else node.output_tensors

    @property
    def input_shape(self):
        node = self._first_node("input")
        shapes = [shape_list(t.shape) for t in node.input_tensors]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self):
        node = self._first_node("output")
        shapes = [shape_list(t.shape) for t in node.output_tensors]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def input_mask(self):
        masks = [K.keras_mask(t) for t in self._first_node("input").input_tensors]
        return masks[0] if len(masks) == 1 else masks

    @property
    def output_mask(self):
        masks = [K.keras_mask(t) for t in self._first_node("output").output_tensors]
        return masks[0] if len(masks) == 1 else masks

    def count_params(self):
        """The number of weight elements; ValueError before the layer is built."""
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on {self.name}, but the layer isn't built. "
                             "You can build it manually via: `" + self.name + ".build(batch_input_shape)`.")
        return int(sum(int(np.prod(v.shape.as_list())) for v in self.weights))

    # ---- configuration --------------------------------------------------------------------------
    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        config["dtype"] = self._dtype.name if self._dtype is not None else None
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<dflow.keras.layers.{type(self).__name__} {self.name!r}>"


def _layer_classes():
    """{class name: class} of every Keras layer class defined so far (dflow's first)."""
    table, stack = {}, [Layer]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            if sub.__name__ not in table or sub.__module__.startswith("dflow.keras"):
                table.setdefault(sub.__name__, sub)
    return table


def serialize_layer(layer):
    return serialize_keras_object(layer)


def deserialize_layer(config, custom_objects=None):
    """The layer (or model) a `{"class_name", "config"}` dict describes; ValueError for an unknown
    class (pass it in `custom_objects`)."""
    return deserialize_keras_object(config, _layer_classes(), custom_objects, "layer")
