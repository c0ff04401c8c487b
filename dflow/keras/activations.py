"""`tf.keras.activations`: the activation functions by name, `get`, `serialize`, `deserialize`."""

from __future__ import annotations

from .. import nn
from ..kernels import math_ops
from . import backend as K
from .utils.generic_utils import deserialize_keras_object, get_identified

__all__ = ["softmax", "elu", "selu", "softplus", "softsign", "relu", "tanh", "sigmoid", "hard_sigmoid",
           "exponential", "linear", "get", "serialize", "deserialize"]


def softmax(x, axis=-1):
    """Softmax over `axis`; ValueError for a 1-D input (Keras's rule)."""
    if getattr(x.shape, "ndims", None) == 1:
        raise ValueError("Cannot apply softmax to a tensor that is 1D. Received input: " + str(x))
    return nn.softmax(x, axis=axis)


def elu(x, alpha=1.0):
    return K.elu(x, alpha)


def selu(x):
    return nn.selu(x)


def softplus(x):
    return nn.softplus(x)


def softsign(x):
    return nn.softsign(x)


def relu(x, alpha=0.0, max_value=None, threshold=0):
    return K.relu(x, alpha=alpha, max_value=max_value, threshold=threshold)


def tanh(x):
    return nn.tanh(x)


def sigmoid(x):
    return nn.sigmoid(x)


def hard_sigmoid(x):
    return K.hard_sigmoid(x)


def exponential(x):
    return math_ops.exp(x)


def linear(x):
    return x


_TABLE = {f.__name__: f for f in (softmax, elu, selu, softplus, softsign, relu, tanh, sigmoid, hard_sigmoid,
                                   exponential, linear)}


def serialize(activation):
    """The activation's name ('linear' for None)."""
    if activation is None:
        return "linear"
    name = getattr(activation, "__name__", None)
    if name in _TABLE and _TABLE[name] is activation:
        return name
    if hasattr(activation, "get_config"):
        return {"class_name": type(activation).__name__, "config": activation.get_config()}
    return name or repr(activation)


def deserialize(name, custom_objects=None):
    return deserialize_keras_object(name, _TABLE, custom_objects, "activation function")


def get(identifier):
    """A callable for a name, a callable, or None (linear); ValueError otherwise."""
    return get_identified(identifier, deserialize, "activation function", none=linear)
