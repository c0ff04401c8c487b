"""`tf.keras` as TensorFlow 1.x shipped it, on dflow's graph, eager mode and Dask."""

from . import (
    activations,
    backend,
    callbacks,
    constraints,
    datasets,
    estimator,
    initializers,
    layers,
    losses,
    metrics,
    models,
    optimizers,
    preprocessing,
    regularizers,
    utils,
    wrappers,
)
from .engine.input_layer import Input
from .models import Model, Sequential

__all__ = ["activations", "backend", "callbacks", "constraints", "datasets", "estimator", "initializers", "layers", "losses",
           "metrics", "models", "optimizers", "preprocessing", "regularizers", "utils", "wrappers", "Input", "Model",
           "Sequential"]
