"""`model.save_weights(prefix)` in TensorFlow's checkpoint format: the layers' variables under
Keras's object paths `layer_with_weights-N/<weight>/.ATTRIBUTES/VARIABLE_VALUE` (N counts the
layers that have weights, in Keras's order) in a V2 checkpoint with the object graph TF's
`load_weights` needs (`_CHECKPOINTABLE_OBJECT_GRAPH`, tensorboard's copy of the proto: the same
wire format), so tf.keras loads dflow's weights and dflow loads tf.keras's; a model built again
(whatever its layers' names) restores them. Restores go through dflow's Saver, which reads
TensorFlow's format (Keras's session in graph mode, the eager Saver eagerly)."""

from __future__ import annotations

import os

import numpy as np
from tensorboard.compat.proto import trackable_object_graph_pb2

from ...eager.checkpoint import Saver as EagerSaver
from ...eager.context import executing_eagerly
from ...io.checkpoint_index import update_checkpoint_state
from ...io.saver import Saver
from ...io.tf_checkpoint import write_tf_checkpoint
from .. import backend as K
from .hdf5_format import keras_layer_order

__all__ = ["save_weights_to_checkpoint", "load_weights_from_checkpoint"]

_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"  # TensorFlow's key for the object graph


def _var_map(model):
    out, index = {}, 0
    for layer in keras_layer_order(model):
        weights = list(layer.trainable_weights) + list(layer.non_trainable_weights)
        if not weights:
            continue
        for w in weights:
            short = w.op.name.rsplit("/", 1)[-1]
            key = f"layer_with_weights-{index}/{short}/.ATTRIBUTES/VARIABLE_VALUE"
            if key in out:
                key = f"layer_with_weights-{index}/{w.op.name}/.ATTRIBUTES/VARIABLE_VALUE"
            out[key] = w
        index += 1
    if not out:
        raise ValueError(f"Model {model.name} has no weights to save (build it first, e.g. by calling it on data)")
    return out


def _saver(model):
    variables = _var_map(model)
    return (EagerSaver(variables), None) if executing_eagerly() else \
        (Saver(var_list=variables, max_to_keep=None), K.get_session())


def _object_graph(model):
    """The TrackableObjectGraph of the checkpoint, serialized: the model, its layers with weights,
    and each weight's VARIABLE_VALUE attribute naming its checkpoint key."""
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    root = graph.nodes.add()
    layers = {}
    for key, variable in _var_map(model).items():
        layer_name, weight_name = key.split("/.ATTRIBUTES/")[0].split("/", 1)
        if layer_name not in layers:
            layers[layer_name] = len(graph.nodes)
            root.children.add(node_id=layers[layer_name], local_name=layer_name)
            graph.nodes.add()
        graph.nodes[layers[layer_name]].children.add(node_id=len(graph.nodes), local_name=weight_name)
        graph.nodes.add().attributes.add(name="VARIABLE_VALUE", full_name=variable.op.name, checkpoint_key=key)
    return graph.SerializeToString()


def save_weights_to_checkpoint(model, prefix):
    """Writes the weights at `prefix` (`prefix.index` and data, TensorFlow's V2 layout with its
    object graph) and the `checkpoint` state file; returns the prefix."""
    prefix = os.fspath(prefix)
    folder = os.path.dirname(os.path.abspath(prefix))
    os.makedirs(folder, exist_ok=True)
    variables = _var_map(model)
    values = dict(zip(variables, K.batch_get_value(list(variables.values()))))
    values[_OBJECT_GRAPH_KEY] = np.array(_object_graph(model), dtype=object)
    write_tf_checkpoint(prefix, values)
    update_checkpoint_state(folder, prefix)
    return prefix


def load_weights_from_checkpoint(model, prefix):
    """Restores the weights saved at `prefix` (NotFoundError when a weight or the files are missing)."""
    saver, session = _saver(model)
    if session is None:
        saver.restore(os.fspath(prefix))
    else:
        saver.restore(session, os.fspath(prefix))
