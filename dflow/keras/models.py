"""`tf.keras.models`: Model, Sequential, and building models from configs, JSON and YAML."""

from __future__ import annotations

import json

from .engine.base_layer import deserialize_layer
from .engine.sequential import Sequential
from .engine.training import Model
from .saving import load_model, save_model

__all__ = ["Model", "Sequential", "model_from_config", "model_from_json", "model_from_yaml", "clone_model", "save_model", "load_model"]


def model_from_config(config, custom_objects=None):
    """The model a `{"class_name", "config"}` dict describes."""
    if isinstance(config, list):
        raise TypeError("`model_from_config` expects a dictionary, not a list. Maybe you meant to use "
                        "`Sequential.from_config(config)`?")
    return deserialize_layer(config, custom_objects=custom_objects)


def model_from_json(json_string, custom_objects=None):
    """The model of `model.to_json()`'s string (new, untrained weights)."""
    return model_from_config(json.loads(json_string), custom_objects=custom_objects)


_NO_YAML = "Requires yaml module installed (`pip install pyyaml`)."


def _yaml():
    try:
        import yaml
    except ImportError:
        raise ImportError(_NO_YAML) from None
    return yaml


def model_to_yaml(model, **kwargs):
    """`model.to_yaml()`: the same document as `to_json`, as YAML (tuples written as lists, so
    `model_from_yaml` reads it with yaml's safe loader)."""
    yaml = _yaml()
    return yaml.safe_dump(json.loads(model.to_json()), **kwargs)


def model_from_yaml(yaml_string, custom_objects=None):
    """The model of `model.to_yaml()`'s string (new, untrained weights); ImportError without PyYAML."""
    yaml = _yaml()
    return model_from_config(yaml.safe_load(yaml_string), custom_objects=custom_objects)


def clone_model(model, input_tensors=None, clone_function=None):
    """A model of the same architecture with new layers (new weights)."""
    config = {"class_name": type(model).__name__, "config": model.get_config()}
    return model_from_config(config)
