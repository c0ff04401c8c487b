"""`tf.keras.constraints`: projections applied to a weight after each optimizer step
(`MaxNorm`, `NonNeg`, `UnitNorm`, `MinMaxNorm` and their lower-case aliases), `get`."""

from __future__ import annotations

import numpy as np

from ..kernels import array_ops, math_ops, reduction_ops
from ..kernels.common import convert_to_tensor
from ..kernels.gather_ops import gather
from . import backend as K
from .utils.generic_utils import deserialize_keras_object, get_identified, serialize_keras_object

__all__ = ["Constraint", "MaxNorm", "NonNeg", "UnitNorm", "MinMaxNorm", "max_norm", "non_neg", "unit_norm",
           "min_max_norm", "RadialConstraint", "radial_constraint", "get", "serialize", "deserialize"]


class Constraint:
    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _norms(w, axis):
    return math_ops.sqrt(reduction_ops.reduce_sum(math_ops.square(w), axis=axis, keepdims=True))


class MaxNorm(Constraint):
    """Rescales columns (norms over `axis`) whose norm exceeds `max_value`."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = math_ops.clip_by_value(norms, 0.0, self.max_value)
        return w * (desired / (K.epsilon() + norms))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    def __call__(self, w):
        return w * math_ops.cast(math_ops.greater_equal(w, 0.0), w.dtype)


class UnitNorm(Constraint):
    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (K.epsilon() + _norms(w, self.axis))

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = self.rate * math_ops.clip_by_value(norms, self.min_value, self.max_value) + (1 - self.rate) * norms
        return w * (desired / (K.epsilon() + norms))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


class RadialConstraint(Constraint):
    """Makes each [height, width] slice of a square Conv2D kernel constant on each ring around its
    center, with TF 1.15's choice of values: working outward from the center block (1x1 for odd
    sizes, 2x2 for even) of value kernel[s-1, s-1] (s = size // 2), ring i takes kernel[s+i-1, s+i-1]
    (odd sizes) or kernel[s+i, s+i] (even). The kernel's spatial shape must be static."""

    def __call__(self, w):
        w = convert_to_tensor(w)
        if w.shape.ndims is None or w.shape.ndims != 4:
            raise ValueError(f"The weight tensor must be of rank 4, but is of shape: {w.shape}")
        height, width = w.shape[0].value, w.shape[1].value
        if height is None or width is None or height != width:
            raise ValueError(f"RadialConstraint needs a square kernel of static height and width, got {w.shape}")
        n, s = height, height // 2
        if n < 2:
            return w
        source = np.empty((n, n), dtype=np.int64)
        for i in range(n):
            for j in range(n):
                ring = max(abs(2 * i - (n - 1)), abs(2 * j - (n - 1))) // 2  # 0 at the center block
                k = s - 1 if ring == 0 else (s + ring - 1 if n % 2 else s + ring)
                source[i, j] = k * n + k
        flat = array_ops.reshape(w, array_ops.stack([n * n, -1]))
        picked = gather(flat, source.reshape(-1))
        return array_ops.reshape(picked, array_ops.shape(w))


max_norm, non_neg, unit_norm, min_max_norm, radial_constraint = MaxNorm, NonNeg, UnitNorm, MinMaxNorm, RadialConstraint
_TABLE = {"RadialConstraint": RadialConstraint, "radial_constraint": RadialConstraint, "MaxNorm": MaxNorm, "NonNeg": NonNeg, "UnitNorm": UnitNorm, "MinMaxNorm": MinMaxNorm,
          "max_norm": MaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm}


def serialize(constraint):
    return serialize_keras_object(constraint)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, _TABLE, custom_objects, "constraint")


def get(identifier):
    return get_identified(identifier, deserialize, "constraint", from_name=lambda made: made())
