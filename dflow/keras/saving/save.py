"""The entry points behind `model.save`, `save_weights`, `load_weights` and `models.load_model`:
they pick HDF5 or the TF checkpoint format from the path (`.h5`, `.keras`, `.hdf5`) or `save_format`."""

from __future__ import annotations

import os

from ...io.checkpoint import latest_checkpoint
from . import checkpoint_format, hdf5_format

__all__ = ["save_model", "load_model", "save_weights", "load_weights"]

_H5 = ("h5", "hdf5", "keras")
_TF = ("tf", "tensorflow")


def _format(filepath, save_format):
    if save_format is None:
        return "h5" if hdf5_format.is_hdf5_filepath(filepath) else "tf"
    fmt = str(save_format).lower().strip()
    if fmt in _H5:
        return "h5"
    if fmt in _TF:
        return "tf"
    raise ValueError(f"Unknown format \"{save_format}\". Was expecting one of {{\"tf\", \"h5\"}}.")


def save_model(model, filepath, overwrite=True, include_optimizer=True, save_format=None):
    """Saves architecture, weights and training config to one HDF5 file (TF 1.15's default format)."""
    if save_format is not None and _format(filepath, save_format) == "tf":
        raise NotImplementedError("save_format='tf' (a SavedModel) is not supported by dflow's Keras yet; save to "
                                  "HDF5 (a path ending in .h5) or use tf.saved_model on the model's session")
    hdf5_format.save_model_to_hdf5(model, filepath, overwrite=overwrite, include_optimizer=include_optimizer)


def load_model(filepath, custom_objects=None, compile=True):  # noqa: A002 - Keras's argument
    """The model `save_model` wrote."""
    if os.path.isdir(os.fspath(filepath)):
        raise NotImplementedError(f"{filepath} is a folder (a SavedModel?): dflow's load_model reads HDF5 files")
    return hdf5_format.load_model_from_hdf5(filepath, custom_objects=custom_objects, compile=compile)


def save_weights(model, filepath, overwrite=True, save_format=None):
    """HDF5 for `.h5`/`.keras` paths or save_format='h5'; otherwise a TF checkpoint at `filepath`."""
    fmt = _format(filepath, save_format)
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"{filepath} exists and overwrite=False")
    if fmt == "h5":
        hdf5_format.save_weights_to_hdf5(model, filepath)
    else:
        checkpoint_format.save_weights_to_checkpoint(model, filepath)


def load_weights(model, filepath, by_name=False, skip_mismatch=False):
    """Loads HDF5 weights (by layer order, or by name) or a TF checkpoint (a prefix or its folder)."""
    filepath = os.fspath(filepath)
    if hdf5_format.is_hdf5_filepath(filepath) or _is_hdf5_file(filepath):
        return hdf5_format.load_weights_from_hdf5(model, filepath, by_name=by_name, skip_mismatch=skip_mismatch)
    if by_name:
        raise NotImplementedError("Weights may only be loaded based on topology into Models when loading "
                                  "TensorFlow-formatted weights (got by_name=True to load_weights).")
    if os.path.isdir(filepath):
        filepath = latest_checkpoint(filepath) or filepath
    return checkpoint_format.load_weights_from_checkpoint(model, filepath)


def _is_hdf5_file(filepath):
    if not os.path.isfile(filepath):
        return False
    with open(filepath, "rb") as f:
        return f.read(8) == b"\x89HDF\r\n\x1a\n"
