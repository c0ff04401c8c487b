"""`plot_model`: a model's layer graph drawn by graphviz through pydot (both optional)."""

from __future__ import annotations

import os

__all__ = ["model_to_dot", "plot_model"]


def _pydot():
    try:
        import pydot  # optional dependency
    except ImportError:
        pydot = None
    if pydot is None:
        raise ImportError("Failed to import pydot. You must install pydot and graphviz for `pydotprint` to work.")
    try:
        pydot.Dot.create(pydot.Dot())
    except (OSError, Exception) as e:  # pydot raises its own errors when the `dot` program is missing
        raise ImportError("Failed to import pydot. You must install pydot and graphviz for `pydotprint` to "
                          f"work (graphviz's `dot` failed: {e}).") from None
    return pydot


def _shape_text(layer, attr):
    try:
        return str(getattr(layer, attr))
    except AttributeError:
        return "multiple"


def model_to_dot(model, show_shapes=False, show_layer_names=True, rankdir="TB", expand_nested=False, dpi=96,
                 subgraph=False):
    """A `pydot.Dot` with a node per layer and an edge per connection between layers."""
    pydot = _pydot()
    dot = pydot.Dot()
    dot.set("rankdir", rankdir)
    dot.set("concentrate", True)
    dot.set("dpi", dpi)
    dot.set_node_defaults(shape="record")
    layers = list(model.layers)
    for layer in layers:
        class_name = type(layer).__name__
        label = f"{layer.name}: {class_name}" if show_layer_names else class_name
        if show_shapes:
            label = (f"{label}\n|{{input:|output:}}|{{{{{_shape_text(layer, 'input_shape')}}}|"
                     f"{{{_shape_text(layer, 'output_shape')}}}}}")
        dot.add_node(pydot.Node(str(id(layer)), label=label))
    ids = {id(layer) for layer in layers}
    for layer in layers:
        for node in getattr(layer, "_inbound_nodes", []):
            for inbound in node.inbound_layers:
                if id(inbound) in ids:
                    dot.add_edge(pydot.Edge(str(id(inbound)), str(id(layer))))
    return dot


def plot_model(model, to_file="model.png", show_shapes=False, show_layer_names=True, rankdir="TB",
               expand_nested=False, dpi=96):
    """Writes the model's graph to `to_file` (format from the extension, png by default)."""
    dot = model_to_dot(model, show_shapes, show_layer_names, rankdir, expand_nested, dpi)
    _, extension = os.path.splitext(to_file)
    extension = extension[1:] if extension else "png"
    tmp = f"{to_file}.tmp"
    dot.write(tmp, format=extension)
    os.replace(tmp, to_file)
    return None
