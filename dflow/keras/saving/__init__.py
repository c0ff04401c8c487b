"""Saving Keras models: HDF5 files in Keras's layout and TensorFlow-format weight checkpoints."""

from .save import load_model, load_weights, save_model, save_weights

__all__ = ["save_model", "load_model", "save_weights", "load_weights"]
