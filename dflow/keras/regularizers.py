"""`tf.keras.regularizers`: `L1L2` (l1·sum|x| + l2·sum x²), `l1`, `l2`, `l1_l2`, `get`."""

from __future__ import annotations

from ..kernels import math_ops, reduction_ops
from ..kernels.common import constant
from .utils.generic_utils import deserialize_keras_object, get_identified, serialize_keras_object

__all__ = ["Regularizer", "L1L2", "l1", "l2", "l1_l2", "get", "serialize", "deserialize"]


class Regularizer:
    def __call__(self, x):
        return 0.0

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    def __init__(self, l1=0.0, l2=0.0):  # noqa: E741
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        loss = constant(0.0, dtype=x.dtype.base_dtype)
        if self.l1:
            loss = loss + self.l1 * reduction_ops.reduce_sum(math_ops.abs(x))
        if self.l2:
            loss = loss + self.l2 * reduction_ops.reduce_sum(math_ops.square(x))
        return loss

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


def l1(l=0.01):  # noqa: E741 - Keras's argument name
    return L1L2(l1=l)


def l2(l=0.01):  # noqa: E741
    return L1L2(l2=l)


def l1_l2(l1=0.01, l2=0.01):  # noqa: E741
    return L1L2(l1=l1, l2=l2)


_TABLE = {"L1L2": L1L2, "l1": l1, "l2": l2, "l1_l2": l1_l2}


def serialize(regularizer):
    return serialize_keras_object(regularizer)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, _TABLE, custom_objects, "regularizer")


def get(identifier):
    return get_identified(identifier, deserialize, "regularizer", from_name=lambda made: made())
