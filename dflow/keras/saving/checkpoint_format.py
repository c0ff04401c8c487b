"""`model.save_weights(prefix)` in TensorFlow's checkpoint format: the model as the root of an
object graph (train/trackable.py, shared with `tf.train.Checkpoint`), so its layers' variables sit
under Keras's object paths `layer_with_weights-N/<weight>/.ATTRIBUTES/VARIABLE_VALUE` (N counts the
layers that have weights, in Keras's order) with the object graph TF's `load_weights` needs; tf.keras
loads dflow's weights and dflow loads tf.keras's; a model built again (whatever its layers' names)
restores them. Restores go through dflow's Saver (Keras's session in graph mode)."""

from __future__ import annotations

import os

from ...eager.context import executing_eagerly
from ...errors import NotFoundError
from ...io.checkpoint_index import update_checkpoint_state
from ...train import trackable
from .. import backend as K

__all__ = ["save_weights_to_checkpoint", "load_weights_from_checkpoint"]


def _check_built(model):
    if not model.weights:
        raise ValueError(f"Model {model.name} has no weights to save (build it first, e.g. by calling it on data)")


def save_weights_to_checkpoint(model, prefix):
    """Writes the weights at `prefix` (`prefix.index` and data, TensorFlow's V2 layout with its
    object graph) and the `checkpoint` state file; returns the prefix."""
    _check_built(model)
    prefix = os.fspath(prefix)
    trackable.write(model, prefix, None if executing_eagerly() else K.get_session())
    update_checkpoint_state(os.path.dirname(os.path.abspath(prefix)), prefix)
    return prefix


def load_weights_from_checkpoint(model, prefix):
    """Restores the weights saved at `prefix`, matched by object path; a weight the checkpoint has
    no value for: NotFoundError naming it, nothing restored."""
    _check_built(model)
    prefix = os.fspath(prefix)
    reader, proto = trackable.read_object_graph(prefix)
    if proto is None:
        raise NotFoundError(None, None, f"load_weights: {prefix!r} is a checkpoint without an object graph (a "
                            "tf.train.Saver's?); restore it with tf.train.Saver")
    match = trackable.Match(model, proto)
    restored = {id(v) for v in match.keys.values()}
    missing = [w.name for w in model.weights if id(w) not in restored]
    if missing:
        raise NotFoundError(None, None, f"load_weights: the checkpoint {prefix!r} has no value for "
                            f"{', '.join(missing)}; nothing was restored")
    trackable.restore(match.keys, prefix, None if executing_eagerly() else K.get_session())
