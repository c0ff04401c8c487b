"""`model.save_weights(prefix)` in TensorFlow's checkpoint format: dflow's Saver over the layers'
variables, each saved under Keras's object path `layer_with_weights-N/<weight>/.ATTRIBUTES/VARIABLE_VALUE`
(N counts the layers that have weights, in Keras's order), so a model built again (whatever
its layers' names) restores them. Graph mode saves and restores through Keras's session; eager
mode through the eager Saver."""

from __future__ import annotations

import os

from ...eager.checkpoint import Saver as EagerSaver
from ...eager.context import executing_eagerly
from ...io.saver import Saver
from .. import backend as K
from .hdf5_format import keras_layer_order

__all__ = ["save_weights_to_checkpoint", "load_weights_from_checkpoint"]


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


def save_weights_to_checkpoint(model, prefix):
    """Writes the weights at `prefix` (`prefix.index` and data), and the `checkpoint` state file."""
    folder = os.path.dirname(os.path.abspath(os.fspath(prefix)))
    os.makedirs(folder, exist_ok=True)
    saver, session = _saver(model)
    if session is None:
        return saver.save(os.fspath(prefix))
    return saver.save(session, os.fspath(prefix), write_meta_graph=False)


def load_weights_from_checkpoint(model, prefix):
    """Restores the weights saved at `prefix` (NotFoundError when a weight or the files are missing)."""
    saver, session = _saver(model)
    if session is None:
        saver.restore(os.fspath(prefix))
    else:
        saver.restore(session, os.fspath(prefix))
