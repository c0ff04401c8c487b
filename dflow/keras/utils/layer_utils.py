"""Keras's layer helpers: `get_source_inputs` (the Input tensors a tensor comes from) and
`convert_all_kernels_in_model` (a no-op on TensorFlow, as in TF's tf.keras)."""

from __future__ import annotations

from .. import backend as K

__all__ = ["get_source_inputs", "convert_all_kernels_in_model"]


def get_source_inputs(tensor, layer=None, node_index=None):
    """The list of input tensors (those of InputLayers or layers without inbound calls) `tensor`
    was computed from, each once, in the order found."""
    history = K.keras_history(tensor)
    if history is None:
        return [tensor]
    if layer is None:
        layer, node_index = history[0], history[1]
    nodes = getattr(layer, "_inbound_nodes", [])
    if not nodes:
        return [tensor]
    node = nodes[node_index or 0]
    if not node.inbound_layers:
        return list(node.input_tensors) or [tensor]
    sources = []
    for t in node.input_tensors:
        for s in get_source_inputs(t):
            if not any(s is seen for seen in sources):
                sources.append(s)
    return sources


def convert_all_kernels_in_model(model):
    """Theano kernel conversion: nothing to do on TensorFlow (TF's tf.keras does nothing either)."""
    del model
