"""`tf.keras.models`: Model, Sequential, and building models from configs and JSON."""

from __future__ import annotations

import json

from .engine.base_layer import deserialize_layer
from .engine.sequential import Sequential
from .engine.training import Model
from .saving import load_model, save_model

__all__ = ["Model", "Sequential", "model_from_config", "model_from_json", "clone_model", "save_model", "load_model"]


def model_from_config(config, custom_objects=None):
    """The model a `{"class_name", "config"}` dict describes."""
    if isinstance(config, list):
        raise TypeError("`model_from_config` expects a dictionary, not a list. Maybe you meant to use "
                        "`Sequential.from_config(config)`?")
    return deserialize_layer(config, custom_objects=custom_objects)


def model_from_json(json_string, custom_objects=None):
    """The model of `model.to_json()`'s string (new, untrained weights)."""
    return model_from_config(json.loads(json_string), custom_objects=custom_objects)


def clone_model(model, input_tensors=None, clone_function=None):
    """A model of the same architecture with new layers (new weights)."""
    config = {"class_name": type(model).__name__, "config": model.get_config()}
    return model_from_config(config)
