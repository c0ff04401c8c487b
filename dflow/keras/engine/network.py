"""A network of layers: the functional `Model(inputs, outputs)` and the subclassed `Model`.

Functional: the model walks each output's Keras history (`backend.keras_history`: the layer call
that made it) back to the inputs and keeps the calls in order; `model.outputs` are those first
symbolic tensors (what `fit` runs in graph mode), and calling the model on new inputs applies the
same calls again to them (reusing the layers' variables). Subclassed: `call` is the user's, layers
assigned as attributes are tracked by the base Layer, and the model builds on its first call.
"""

from __future__ import annotations

import json

from ...graph.ops import Tensor
from .. import backend as K
from ..saving import save as saving
from .base_layer import Layer, deserialize_layer, flatten, shape_list
from .input_layer import InputLayer

__all__ = ["Network", "print_summary"]


class Network(Layer):
    """A Layer made of layers (the base of `Model`)."""

    def __init__(self, *args, **kwargs):
        inputs = kwargs.pop("inputs", args[0] if len(args) > 0 else None)
        outputs = kwargs.pop("outputs", args[1] if len(args) > 1 else None)
        name = kwargs.pop("name", None)
        trainable = kwargs.pop("trainable", True)
        self._is_graph_network = False
        self._layers = []
        self._nodes_in_order = []
        self.inputs, self.outputs = [], []
        super().__init__(name=name, trainable=trainable, **kwargs)
        if inputs is not None and outputs is not None:
            self._init_graph_network(inputs, outputs)
        elif inputs is not None or outputs is not None:
            raise TypeError("A functional Model needs both `inputs` and `outputs`.")

    @staticmethod
    def _unique_name(base):
        return Layer._unique_name(base)

    # ---- the functional graph -------------------------------------------------------------------
    def _init_graph_network(self, inputs, outputs):
        self._nested_inputs, self._nested_outputs = inputs, outputs
        inputs, outputs = flatten(inputs), flatten(outputs)
        for x in inputs + outputs:
            if not isinstance(x, Tensor):
                raise TypeError(f"Input and output tensors of a Model must be tensors; found {x!r}")
        fixed = []
        for x in inputs:
            history = K.keras_history(x)
            if history is None or not isinstance(history[0], InputLayer):
                if history is None:
                    InputLayer(input_tensor=x, name=x.op.name)  # a plain placeholder becomes the input
                    history = K.keras_history(x)
                else:
                    raise ValueError(f"Input tensors to a Model must come from `tf.keras.Input`. Received: {x} "
                                     f"(missing previous layer metadata).")
            fixed.append(x)
        self.inputs, self.outputs = fixed, outputs
        self._is_graph_network = True
        self._nodes_in_order = self._walk(fixed, outputs)
        layers = _keras_layer_order(outputs)
        for x in fixed:  # an input no output reads is still the model's
            if not any(K.keras_history(x)[0] is lay for lay in layers):
                layers.append(K.keras_history(x)[0])
        self._layers = layers
        self._tracked_layers = [lay for lay in layers]
        self.input_names = [K.keras_history(x)[0].name for x in fixed]
        self.output_names = [K.keras_history(x)[0].name for x in outputs]
        self._batch_input_shape = shape_list(fixed[0].shape) if len(fixed) == 1 else None
        self.built = True

    def _walk(self, inputs, outputs):
        """The layer calls between `inputs` and `outputs`, each after the calls it reads."""
        input_ids = {id(x) for x in inputs}
        order, done, visiting = [], set(), set()

        def visit(tensor, reader):
            if id(tensor) in input_ids:
                return
            history = K.keras_history(tensor)
            if history is None:
                raise ValueError(f"Output tensors to a Model must be the output of a Keras `Layer` (thus holding "
                                 f"past layer metadata). Found: {tensor}"
                                 + (f" (read by layer {reader.name})" if reader is not None else ""))
            layer, node_index, _ = history
            node = layer._inbound_nodes[node_index]
            if id(node) in done:
                return
            if isinstance(layer, InputLayer):
                raise ValueError(f"Graph disconnected: cannot obtain value for tensor {tensor} at layer "
                                 f"\"{layer.name}\". The following previous layers were accessed without issue: "
                                 f"{[n.layer.name for n in order]}")
            if id(node) in visiting:
                raise ValueError(f"The layer calls of model {self.name} form a cycle at layer {layer.name}")
            visiting.add(id(node))
            for x in node.input_tensors:
                visit(x, layer)
            visiting.discard(id(node))
            done.add(id(node))
            order.append(node)

        for x in outputs:
            visit(x, None)
        return order

    def _maybe_build(self, inputs):
        self.built = True  # a network's layers build on their own first calls

    @property
    def input(self):
        if not self._is_graph_network:
            return super().input
        return self.inputs[0] if len(self.inputs) == 1 else list(self.inputs)

    @property
    def output(self):
        if not self._is_graph_network:
            return super().output
        return self.outputs[0] if len(self.outputs) == 1 else list(self.outputs)

    @property
    def input_shape(self):
        if not self._is_graph_network:
            return super().input_shape
        shapes = [shape_list(x.shape) for x in self.inputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self):
        if not self._is_graph_network:
            return super().output_shape
        shapes = [shape_list(x.shape) for x in self.outputs]
        return shapes[0] if len(shapes) == 1 else shapes

    def _trackable_children(self):
        """A Sequential or functional model's checkpoint children: `layer_with_weights-N` (the
        layers with weights, counted in `layers` order) and `layer-N` (every layer), interleaved as
        TF's Keras lists them; a subclassed model's are its attributes (Layer's)."""
        if not self._is_graph_network:
            return super()._trackable_children()
        out, with_weights = [], 0
        for index, layer in enumerate(self.layers):
            if layer.weights:
                out.append((f"layer_with_weights-{with_weights}", layer))
                with_weights += 1
            out.append((f"layer-{index}", layer))
        return out

    @property
    def layers(self):
        return list(self._layers) if self._is_graph_network else [
            lay for lay in self._tracked_layers if isinstance(lay, Layer)]

    def get_layer(self, name=None, index=None):
        """The layer of that name or index; ValueError when there is none."""
        if index is not None:
            if len(self.layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only has "
                                 f"{len(self.layers)} layers.")
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}")

    def call(self, inputs, training=None, mask=None):
        """Applies the model's layer calls to `inputs` (a tensor or a list matching `model.inputs`)."""
        if not self._is_graph_network:
            raise NotImplementedError(f"Model {self.name}: a subclassed Model must define call()")
        given = flatten(inputs)
        if len(given) != len(self.inputs):
            raise ValueError(f"Model {self.name} expects {len(self.inputs)} input(s), but it received "
                             f"{len(given)} input tensors. Inputs received: {inputs}")
        values = {id(x): v for x, v in zip(self.inputs, given)}
        for node in self._nodes_in_order:
            leaves = flatten(node.inputs)
            mapped = iter([values[id(x)] if id(x) in values else x for x in leaves])
            args = _pack(node.inputs, mapped)
            kwargs = dict(node.kwargs)
            if training is not None and node.layer._call_takes_training:
                kwargs["training"] = training
            elif node.layer._call_takes_training and "training" in kwargs and \
                    kwargs["training"] is K._phase_placeholder():
                kwargs.pop("training")
            outputs = node.layer(args, *node.args, **kwargs)
            for old, new in zip(node.output_tensors, flatten(outputs)):
                values[id(old)] = new
        result = [values[id(x)] for x in self.outputs]
        return _pack(self._nested_outputs, iter(result))

    def compute_output_shape(self, input_shape):
        if self._is_graph_network:
            shapes = [x.shape for x in self.outputs]
            return shapes[0] if len(shapes) == 1 else shapes
        return super().compute_output_shape(input_shape)

    # ---- configuration ----------------------------------------------------------------------------
    def get_config(self):
        """The functional graph as Keras's config: layers with their inbound nodes, inputs, outputs."""
        if not self._is_graph_network:
            raise NotImplementedError(f"Model {self.name} is a subclassed Model; its get_config is the user's "
                                      "(Keras cannot serialize a subclassed model's architecture)")
        layer_configs = []
        for layer in self._layers:
            inbound = [[[*_ref(x), _json_kwargs(node.kwargs)] for x in node.input_tensors]
                       for node in layer._inbound_nodes if any(node is n for n in self._nodes_in_order)]
            layer_configs.append({"name": layer.name, "class_name": type(layer).__name__,
                                  "config": layer.get_config(), "inbound_nodes": inbound})
        return {"name": self.name, "layers": layer_configs,
                "input_layers": [list(_ref(x)) for x in self.inputs],
                "output_layers": [list(_ref(x)) for x in self.outputs]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """Rebuilds a functional model from `get_config`'s dict (layers by class name)."""
        created, tensors = {}, {}
        pending = list(config["layers"])
        for layer_config in pending:
            created[layer_config["name"]] = deserialize_layer(
                {"class_name": layer_config["class_name"], "config": layer_config["config"]},
                custom_objects=custom_objects)
            if isinstance(created[layer_config["name"]], InputLayer):
                tensors[(layer_config["name"], 0, 0)] = created[layer_config["name"]]._inbound_nodes[0].output_tensors[0]
        progress = True
        while pending and progress:
            progress = False
            for layer_config in list(pending):
                layer = created[layer_config["name"]]
                if isinstance(layer, InputLayer):
                    pending.remove(layer_config)
                    progress = True
                    continue
                nodes = layer_config["inbound_nodes"]
                done = getattr(layer, "_from_config_nodes", 0)
                while done < len(nodes):
                    refs = nodes[done]
                    if not all((r[0], r[1], r[2]) in tensors for r in refs):
                        break
                    args = [tensors[(r[0], r[1], r[2])] for r in refs]
                    kwargs = refs[0][3] if refs and len(refs[0]) > 3 else {}
                    out = layer(args[0] if len(args) == 1 else args, **kwargs)
                    for i, t in enumerate(flatten(out)):
                        tensors[(layer.name, done, i)] = t
                    done += 1
                    layer._from_config_nodes = done
                    progress = True
                if done == len(nodes):
                    pending.remove(layer_config)
        if pending:
            raise ValueError(f"Cannot rebuild model {config.get('name')}: layers "
                             f"{[c['name'] for c in pending]} read tensors that are never made")
        inputs = [tensors[tuple(r)] for r in config["input_layers"]]
        outputs = [tensors[tuple(r)] for r in config["output_layers"]]
        return cls(inputs=inputs if len(inputs) > 1 else inputs[0],
                   outputs=outputs if len(outputs) > 1 else outputs[0], name=config.get("name"))

    def to_json(self, **kwargs):
        """Keras's JSON: {"class_name", "config", "keras_version", "backend"}."""
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config(),
                           "keras_version": "2.2.4-tf", "backend": "tensorflow"}, default=_json_default, **kwargs)

    def to_yaml(self, **kwargs):
        """Keras's YAML: `to_json`'s document through yaml.safe_dump (ImportError without PyYAML)."""
        try:
            import yaml  # noqa: PLC0415 - optional dependency
        except ImportError:
            raise ImportError("Requires yaml module installed (`pip install pyyaml`).") from None
        return yaml.safe_dump(json.loads(self.to_json()), **kwargs)

    def summary(self, line_length=None, positions=None, print_fn=None):
        print_summary(self, line_length=line_length, positions=positions, print_fn=print_fn)

    # ---- saving (dflow/keras/saving) --------------------------------------------------------------
    def save(self, filepath, overwrite=True, include_optimizer=True, save_format=None):
        """Architecture, weights and training config in one HDF5 file (`models.load_model` reads it)."""
        saving.save_model(self, filepath, overwrite=overwrite, include_optimizer=include_optimizer,
                          save_format=save_format)

    def save_weights(self, filepath, overwrite=True, save_format=None):
        """HDF5 weights for `.h5`/`.keras` paths (or save_format='h5'), otherwise a TF checkpoint."""
        saving.save_weights(self, filepath, overwrite=overwrite, save_format=save_format)

    def load_weights(self, filepath, by_name=False, skip_mismatch=False):
        """Loads `save_weights`' HDF5 file (by layer order or by name) or TF checkpoint."""
        return saving.load_weights(self, filepath, by_name=by_name, skip_mismatch=skip_mismatch)


def _keras_layer_order(outputs):
    """Keras's order of a functional model's layers: by depth from the outputs, deepest (the
    inputs) first, ties in the order the walk from the outputs first met them."""
    indices, depth_of_node, order = {}, {}, []
    finished = set()

    def walk(tensor):
        layer, node_index, _ = K.keras_history(tensor)
        node = layer._inbound_nodes[node_index]
        if id(node) in finished:
            return
        indices.setdefault(id(layer), (len(indices), layer))
        for x in node.input_tensors:
            walk(x)
        finished.add(id(node))
        order.append(node)

    for x in outputs:
        walk(x)
    layer_depth = {}
    for node in reversed(order):
        depth = max(depth_of_node.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = depth
        depth_of_node[id(node)] = depth
        for x in node.input_tensors:
            layer, node_index, _ = K.keras_history(x)
            inbound = layer._inbound_nodes[node_index]
            depth_of_node[id(inbound)] = max(depth + 1, depth_of_node.get(id(inbound), 0))
    by_depth = {}
    for key, depth in layer_depth.items():
        by_depth.setdefault(depth, []).append(indices[key])
    layers = []
    for depth in sorted(by_depth, reverse=True):
        layers.extend(layer for _, layer in sorted(by_depth[depth], key=lambda item: item[0]))
    return layers


def _ref(tensor):
    layer, node_index, tensor_index = K.keras_history(tensor)
    return layer.name, node_index, tensor_index


def _json_kwargs(kwargs):
    out = {}
    for key, value in kwargs.items():
        if isinstance(value, (bool, int, float, str)) or value is None:
            out[key] = value
    return out


def _json_default(obj):
    if hasattr(obj, "as_list"):
        return obj.as_list()
    if hasattr(obj, "name") and hasattr(obj, "as_numpy_dtype"):
        return obj.name
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"Not JSON serializable: {obj!r}")


def _pack(structure, leaves):
    if isinstance(structure, (list, tuple)):
        return type(structure)(_pack(item, leaves) for item in structure)
    if isinstance(structure, dict):
        return {key: _pack(structure[key], leaves) for key in sorted(structure)}
    return next(leaves)


def _shape_text(layer):
    try:
        shape = layer.output_shape
    except AttributeError:
        return "multiple"
    if isinstance(layer, InputLayer):
        return str([shape])
    return str(shape)


def print_summary(model, line_length=None, positions=None, print_fn=None):
    """Keras's table of layers, output shapes and parameter counts (TF 1.15's layout)."""
    print_fn = print_fn or print
    sequential_like = not model._is_graph_network or all(
        len(node.input_tensors) <= 1 and len(node.inbound_layers) <= 1 for node in model._nodes_in_order)
    line_length = line_length or (65 if sequential_like else 98)
    positions = positions or ([0.45, 0.85, 1.0] if sequential_like else [0.33, 0.55, 0.67, 1.0])
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    headers = ["Layer (type)", "Output Shape", "Param #"] + ([] if sequential_like else ["Connected to"])

    def row(fields):
        line = ""
        for i, field in enumerate(fields):
            if i > 0:
                line = line[:-1] + " "
            line += str(field)
            line = line[:positions[i]]
            line += " " * (positions[i] - len(line))
        print_fn(line)

    print_fn(f'Model: "{model.name}"')
    print_fn("_" * line_length)
    row(headers)
    print_fn("=" * line_length)
    layers = model.layers
    for i, layer in enumerate(layers):
        name = f"{layer.name} ({type(layer).__name__})"
        params = layer.count_params() if layer.built else 0
        if sequential_like:
            row([name, _shape_text(layer), params])
        else:
            connections = []
            for node in layer._inbound_nodes:
                if model._is_graph_network and not any(node is n for n in model._nodes_in_order):
                    continue
                for x in node.input_tensors:
                    src, ni, ti = K.keras_history(x)
                    connections.append(f"{src.name}[{ni}][{ti}]")
            row([name, _shape_text(layer), params, connections[0] if connections else ""])
            for extra in connections[1:]:
                row(["", "", "", extra])
        print_fn("=" * line_length if i == len(layers) - 1 else "_" * line_length)
    weights = model.weights
    trainable = {id(v) for v in model.trainable_weights}
    count = sum(int(_size(v)) for v in weights if id(v) in trainable)
    other = sum(int(_size(v)) for v in weights if id(v) not in trainable)
    print_fn(f"Total params: {count + other:,}")
    print_fn(f"Trainable params: {count:,}")
    print_fn(f"Non-trainable params: {other:,}")
    print_fn("_" * line_length)


def _size(v):
    n = 1
    for d in v.shape.as_list():
        n *= int(d)
    return n
