"""`tf.keras` as TensorFlow 1.x shipped it, on dflow's graph, eager mode and Dask."""

from . import (
               activations,
               backend,
               constraints,
               initializers,
               layers,
               losses,
               metrics,
               optimizers,
               preprocessing,
               regularizers,
               utils,
)
from .engine.input_layer import Input

__all__ = ["activations", "backend", "constraints", "initializers", "layers", "regularizers", "Input",
           "losses", "metrics", "optimizers", "preprocessing", "utils"]
