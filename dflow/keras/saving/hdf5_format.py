"""Keras's HDF5 files: `model.save` / `save_weights` in the layout Keras 2.2.4-tf (TF 1.15) writes.

Root attributes `keras_version`, `backend`, `model_config` (the model's JSON) and
`training_config` (optimizer config, loss, metrics); a `model_weights` group holding, as the
weights-only file holds at its root, `layer_names` and one group per layer with `weight_names` and
one dataset per weight named like the variable (`dense/kernel:0`, nested groups at each `/`).
Attributes above HDF5's 64 KB header limit are split into `name0`, `name1`, ... as Keras does.
Layers are written and matched in Keras's order: for a functional model, deepest first (the
inputs), ties in the order a walk from the outputs first meets them, which is what a
`load_weights(by_name=False)` between Keras and dflow relies on. h5py is imported when a file is
opened, so dflow.keras loads without it.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile

import numpy as np

from ...errors import DataLossError
from .. import backend as K
from .. import optimizers
from ..engine.base_layer import deserialize_layer

__all__ = ["save_model_to_hdf5", "load_model_from_hdf5", "save_weights_to_hdf5", "load_weights_from_hdf5",
           "keras_layer_order", "is_hdf5_filepath"]

KERAS_VERSION = "2.2.4-tf"
_HEADER_LIMIT = 64512  # HDF5_OBJECT_HEADER_LIMIT in Keras: an attribute above it is split
_log = logging.getLogger("tensorflow")  # TF1 Keras logs through tf.logging


def is_hdf5_filepath(filepath):
    return str(filepath).endswith((".h5", ".keras", ".hdf5"))


def _h5py():
    try:
        import h5py  # optional dependency: only HDF5 files need it
    except ImportError as e:  # pragma: no cover - h5py is in the dependencies
        raise ImportError("`save_model`/`load_model` and HDF5 weights require h5py: pip install h5py") from e
    return h5py


# ---- layer order and weights ------------------------------------------------------------------------
def keras_layer_order(model):
    """The model's layers in Keras's order (a functional model keeps them so: engine/network.py)."""
    return list(model.layers)


def _weights_of(layer):
    return list(layer.trainable_weights) + list(layer.non_trainable_weights)


def _weight_name(variable):
    name = variable.name
    return name if ":" in name else name + ":0"


# ---- attributes ---------------------------------------------------------------------------------------
def _save_attribute(group, name, values):
    """Keras's `save_attributes_to_hdf5_group`: a list of strings, split in chunks under the header limit."""
    data = np.asarray([v.encode("utf8") if isinstance(v, str) else v for v in values], dtype="S") if values \
        else np.zeros((0,), dtype="S1")
    chunks = 1
    while data.nbytes and any(c.nbytes > _HEADER_LIMIT for c in np.array_split(data, chunks)):
        chunks += 1
    if chunks > 1:
        for i, chunk in enumerate(np.array_split(data, chunks)):
            group.attrs[f"{name}{i}"] = chunk
    else:
        group.attrs[name] = data


def _text(value):
    return value.decode("utf8") if isinstance(value, bytes) else str(value)


def _load_attribute(group, name):
    if name in group.attrs:
        return [_text(v) for v in group.attrs[name]]
    out, i = [], 0
    while f"{name}{i}" in group.attrs:
        out.extend(_text(v) for v in group.attrs[f"{name}{i}"])
        i += 1
    return out


# ---- writing -----------------------------------------------------------------------------------------
def _write_atomically(filepath, fill):
    """Writes through `fill(h5 file)` into a temporary file beside `filepath`, then renames it."""
    h5py = _h5py()
    filepath = os.fspath(filepath)
    folder = os.path.dirname(os.path.abspath(filepath))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(filepath) + ".", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        with h5py.File(tmp, "w") as f:
            fill(f)
        os.replace(tmp, filepath)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _save_weights_to_group(group, layers):
    _save_attribute(group, "layer_names", [layer.name for layer in layers])
    group.attrs["backend"] = b"tensorflow"
    group.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
    values = K.batch_get_value([w for layer in layers for w in _weights_of(layer)])
    values = iter(values)
    for layer in layers:
        g = group.create_group(layer.name)
        weights = _weights_of(layer)
        names = [_weight_name(w) for w in weights]
        _save_attribute(g, "weight_names", names)
        for name, value in zip(names, [next(values) for _ in weights]):
            value = np.asarray(value)
            dataset = g.create_dataset(name, value.shape, dtype=value.dtype)
            if value.shape:
                dataset[:] = value
            else:
                dataset[()] = value


def save_weights_to_hdf5(model, filepath):
    """Writes the model's weights (Keras's weights-only HDF5 file) to `filepath`, atomically."""
    layers = keras_layer_order(model)
    _write_atomically(filepath, lambda f: _save_weights_to_group(f, layers))


def _json_default(obj):
    if hasattr(obj, "get_config"):
        return {"class_name": type(obj).__name__, "config": obj.get_config()}
    if hasattr(obj, "as_list"):
        return obj.as_list()
    if hasattr(obj, "as_numpy_dtype"):
        return obj.name
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if callable(obj) and hasattr(obj, "__name__"):
        return obj.__name__
    raise TypeError(f"Not JSON serializable: {obj!r}")


def _training_config(model):
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not getattr(model, "_compiled", False):
        return None
    if not hasattr(optimizer, "get_config"):
        _log.warning("TensorFlow optimizers do not make it possible to access optimizer attributes or optimizer "
                     "state after instantiation. As a result, we cannot save the optimizer as part of the model "
                     "save file. You will have to compile your model again after loading it. Prefer using a "
                     "Keras optimizer instead (see keras.io/optimizers).")
        return None
    return {"optimizer_config": {"class_name": type(optimizer).__name__, "config": optimizer.get_config()},
            "loss": model.loss, "metrics": getattr(model, "_compile_metrics", None),
            "weighted_metrics": getattr(model, "_compile_weighted_metrics", None) or None,
            "sample_weight_mode": None, "loss_weights": getattr(model, "loss_weights", None)}


def save_model_to_hdf5(model, filepath, overwrite=True, include_optimizer=True):
    """`model.save(path)`: architecture, weights and training config in one HDF5 file."""
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"{filepath} exists and overwrite=False")
    model_config = json.dumps({"class_name": type(model).__name__, "config": model.get_config()},
                              default=_json_default).encode("utf8")
    training = json.dumps(_training_config(model), default=_json_default).encode("utf8") \
        if include_optimizer and _training_config(model) is not None else None
    layers = keras_layer_order(model)
    optimizer_weights = _optimizer_weights(model) if training is not None else []

    def fill(f):
        f.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
        f.attrs["backend"] = b"tensorflow"
        f.attrs["model_config"] = model_config
        _save_weights_to_group(f.create_group("model_weights"), layers)
        if training is not None:
            f.attrs["training_config"] = training
        if optimizer_weights:
            g = f.create_group("optimizer_weights")
            names = [_weight_name(w) for w in optimizer_weights]
            _save_attribute(g, "weight_names", names)
            for name, value in zip(names, K.batch_get_value(optimizer_weights)):
                value = np.asarray(value)
                dataset = g.create_dataset(name, value.shape, dtype=value.dtype)
                dataset[()] = value
    _write_atomically(filepath, fill)


def _optimizer_weights(model):
    weights = getattr(model.optimizer, "weights", None)
    weights = weights() if callable(weights) else weights
    return list(weights or [])


# ---- reading -----------------------------------------------------------------------------------------
def _open(filepath):
    h5py = _h5py()
    if not os.path.exists(filepath):
        raise OSError(f"Unable to open file (file {filepath} does not exist)")
    try:
        return h5py.File(filepath, "r")
    except OSError as e:
        raise DataLossError(None, None, f"{filepath} is not a readable HDF5 file (truncated or corrupted?): {e}") \
            from e


def _read_values(filepath, group, layer_name):
    g = group[layer_name]
    names = _load_attribute(g, "weight_names")
    try:
        return [np.asarray(g[name]) for name in names]
    except (KeyError, OSError) as e:
        raise DataLossError(None, None, f"{filepath}: the weights of layer {layer_name} cannot be read: {e}") from e


def _check_shapes(pairs, layer, index, skip_mismatch):
    for variable, value in pairs:
        expected = tuple(variable.shape.as_list())
        if expected != tuple(value.shape):
            if skip_mismatch:
                _log.warning(f"Skipping loading of weights for layer {layer.name} due to mismatch in shape "
                             f"({expected} vs {tuple(value.shape)}).")
                return False
            raise ValueError(f'Layer #{index} (named "{layer.name}"), weight {variable} has shape {expected}, but '
                             f"the saved weight has shape {tuple(value.shape)}.")
    return True


def _load_weights_from_group(filepath, group, layers):
    """Topological loading: the i-th layer with weights gets the file's i-th layer with weights."""
    filtered = [layer for layer in layers if _weights_of(layer)]
    names = [n for n in _load_attribute(group, "layer_names") if _load_attribute(group[n], "weight_names")]
    if len(names) != len(filtered):
        raise ValueError(f"You are trying to load a weight file containing {len(names)} layers into a model with "
                         f"{len(filtered)} layers.")
    pairs = []
    for k, (name, layer) in enumerate(zip(names, filtered)):
        values = _read_values(filepath, group, name)
        weights = _weights_of(layer)
        if len(values) != len(weights):
            raise ValueError(f'Layer #{k} (named "{layer.name}" in the current model) was found to correspond to '
                             f"layer {name} in the save file. However the new layer {layer.name} expects "
                             f"{len(weights)} weights, but the saved weights have {len(values)} elements.")
        _check_shapes(list(zip(weights, values)), layer, k, skip_mismatch=False)
        pairs.extend(zip(weights, values))
    K.batch_set_value(pairs)  # every check passed: nothing is half-loaded


def _load_weights_by_name(filepath, group, layers, skip_mismatch):
    by_name = {}
    for layer in layers:
        if layer.name:
            by_name.setdefault(layer.name, []).append(layer)
    pairs = []
    for k, name in enumerate(_load_attribute(group, "layer_names")):
        values = _read_values(filepath, group, name)
        for layer in by_name.get(name, []):
            weights = _weights_of(layer)
            if len(weights) != len(values):
                if skip_mismatch:
                    _log.warning(f"Skipping loading of weights for layer {layer.name} due to mismatch in number of "
                                 f"weights ({len(weights)} vs {len(values)}).")
                    continue
                raise ValueError(f'Layer #{k} (named "{layer.name}") expects {len(weights)} weight(s), but the '
                                 f"saved weights have {len(values)} element(s).")
            if _check_shapes(list(zip(weights, values)), layer, k, skip_mismatch):
                pairs.extend(zip(weights, values))
    K.batch_set_value(pairs)


def load_weights_from_hdf5(model, filepath, by_name=False, skip_mismatch=False):
    """Loads a Keras HDF5 weights file (or a whole-model file's `model_weights`) into `model`."""
    if skip_mismatch and not by_name:
        raise ValueError("When calling model.load_weights, skip_mismatch can only be set to True when by_name is "
                         "True.")
    with _open(filepath) as f:
        group = f["model_weights"] if "layer_names" not in f.attrs and "model_weights" in f else f
        if "layer_names" not in group.attrs and "layer_names0" not in group.attrs:
            raise DataLossError(None, None, f"{filepath} holds no Keras weights (no `layer_names` attribute)")
        layers = keras_layer_order(model)
        if by_name:
            _load_weights_by_name(filepath, group, layers, skip_mismatch)
        else:
            _load_weights_from_group(filepath, group, layers)


def _normalize_config(config):
    """A newer Keras's config read as TF 1.15's: `Functional` is `Model`; keys 1.15 lacks go."""
    if isinstance(config, dict):
        out = {}
        for key, value in config.items():
            if key in ("module", "registered_name", "build_config", "compile_config"):
                continue
            out[key] = _normalize_config(value)
        if out.get("class_name") == "Functional":
            out["class_name"] = "Model"
        if out.get("class_name") == "InputLayer" and isinstance(out.get("config"), dict):
            out["config"].pop("optional", None)
        return out
    if isinstance(config, list):
        return [_normalize_config(v) for v in config]
    return config


def _compile_from(model, training_config, custom_objects):
    try:
        optimizer_config = training_config["optimizer_config"]
        deserialize = getattr(optimizers, "deserialize", None)
        optimizer = deserialize(optimizer_config, custom_objects=custom_objects) if deserialize else \
            optimizers.get(optimizer_config)
    except Exception as e:  # noqa: BLE001 - any failure leaves the model usable, uncompiled
        _log.warning(f"The optimizer in the save file cannot be rebuilt ({e}): the model was *not* compiled. "
                     "Compile it manually.")
        return False
    loss = _custom(training_config.get("loss"), custom_objects)
    metrics = _custom(training_config.get("metrics"), custom_objects)
    try:
        model.compile(optimizer=optimizer, loss=loss, metrics=metrics,
                      loss_weights=training_config.get("loss_weights"))
    except Exception as e:  # noqa: BLE001
        _log.warning(f"The model cannot be compiled from the save file's training configuration ({e}): it was "
                     "*not* compiled. Compile it manually.")
        return False
    return True


def _custom(value, custom_objects):
    if not custom_objects:
        return value
    if isinstance(value, str):
        return custom_objects.get(value, value)
    if isinstance(value, list):
        return [_custom(v, custom_objects) for v in value]
    if isinstance(value, dict):
        return {k: _custom(v, custom_objects) for k, v in value.items()}
    return value


def _json_attr(filepath, value, name):
    """The JSON document of the file's attribute `name`; DataLossError naming the file when it is
    not JSON (a damaged or hand-edited file), never a bare JSONDecodeError."""
    try:
        return json.loads(_text(value))
    except (ValueError, TypeError) as e:  # JSONDecodeError, bytes that are not UTF-8
        raise DataLossError(None, None, f"{filepath}: the {name!r} attribute is not valid JSON ({e}); the "
                            "file is damaged or was not written by model.save") from None


def load_model_from_hdf5(filepath, custom_objects=None, compile=True):  # noqa: A002 - Keras's argument
    """The model of a `model.save` file: rebuilt from its config, weights loaded, compiled when the
    file has a training config (a warning and an uncompiled model when it cannot be)."""
    with _open(filepath) as f:
        if "model_config" not in f.attrs:
            raise ValueError("No model found in config file.")
        config = _normalize_config(_json_attr(filepath, f.attrs["model_config"], "model_config"))
        model = deserialize_layer(config, custom_objects=custom_objects)
        group = f["model_weights"]
        # the rebuilt model has the saved layer names: matching by name is exact and independent of
        # the order in which this build lists its layers
        names = set(_load_attribute(group, "layer_names"))
        missing = [lay.name for lay in model.layers if _weights_of(lay) and lay.name not in names]
        if missing:
            raise DataLossError(None, None, f"{filepath}: no saved weights for layers {missing}")
        _load_weights_by_name(filepath, group, keras_layer_order(model), skip_mismatch=False)
        training = f.attrs.get("training_config")
        if not compile:
            return model
        if training is None:
            _log.warning("No training configuration found in save file: the model was *not* compiled. Compile it "
                         "manually.")
            return model
        training_config = _json_attr(filepath, training, "training_config")
        if _compile_from(model, training_config, custom_objects) and "optimizer_weights" in f:
            _load_optimizer_weights(model, f["optimizer_weights"])
        return model


def _load_optimizer_weights(model, group):
    names = _load_attribute(group, "weight_names")
    values = [np.asarray(group[n]) for n in names]
    try:
        if hasattr(model, "_train_op") and getattr(model, "_graph_parts", None) is not None:
            model._train_op()  # makes the optimizer's slots
        model.optimizer.set_weights(values)
    except Exception as e:  # noqa: BLE001
        _log.warning(f"Error in loading the saved optimizer state ({e}). As a result, your model is starting with "
                     "a freshly initialized optimizer.")
