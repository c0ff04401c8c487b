"""Initializers (TF1's `tf.*_initializer`): callables `init(shape, dtype=None, partition_info=None)`
returning a tensor, used by `get_variable` and `variable_scope(initializer=...)`."""

from __future__ import annotations

import math

import numpy as np

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.shape import as_shape
from ..kernels.common import constant
from ..kernels.creation_ops import ones, zeros
from ..kernels.manip_ops import reshape, transpose
from ..kernels.math_ops import multiply, sign
from ..kernels.matrix_ops import matrix_diag_part, qr
from ..kernels.random_ops import random_normal, random_uniform, truncated_normal

__all__ = [
    "Initializer", "zeros_initializer", "ones_initializer", "constant_initializer",
    "random_normal_initializer", "truncated_normal_initializer", "random_uniform_initializer",
    "glorot_uniform_initializer", "glorot_normal_initializer", "variance_scaling_initializer",
    "he_normal", "he_uniform", "lecun_normal", "lecun_uniform",
    "orthogonal_initializer", "uniform_unit_scaling_initializer", "identity_initializer",
]


class Initializer:
    dtype = dtypes.float32

    def _dtype(self, dtype):
        return as_dtype(dtype) if dtype is not None else self.dtype

    def get_config(self):
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}


class zeros_initializer(Initializer):  # noqa: N801 - TF1 public name
    def __init__(self, dtype=dtypes.float32):
        self.dtype = as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return zeros(_dims(shape), dtype=self._dtype(dtype))


class ones_initializer(Initializer):  # noqa: N801 - TF1 public name
    def __init__(self, dtype=dtypes.float32):
        self.dtype = as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return ones(_dims(shape), dtype=self._dtype(dtype))


class constant_initializer(Initializer):  # noqa: N801 - TF1 public name
    """Fills with `value`: a scalar, or a value with as many elements as the shape (reshaped)."""

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        self.value = value
        self.dtype = as_dtype(dtype)
        self.verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        dtype = self._dtype(dtype)
        return constant(self.value, dtype=dtype, shape=_dims(shape),
                        verify_shape=self.verify_shape if verify_shape is None else verify_shape)


class random_normal_initializer(Initializer):  # noqa: N801 - TF1 public name
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean, self.stddev, self.seed, self.dtype = mean, stddev, seed, as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_normal(_dims(shape), self.mean, self.stddev, self._dtype(dtype), seed=self.seed)


class truncated_normal_initializer(Initializer):  # noqa: N801 - TF1 public name
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean, self.stddev, self.seed, self.dtype = mean, stddev, seed, as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return truncated_normal(_dims(shape), self.mean, self.stddev, self._dtype(dtype), seed=self.seed)


class random_uniform_initializer(Initializer):  # noqa: N801 - TF1 public name
    def __init__(self, minval=0, maxval=None, seed=None, dtype=dtypes.float32):
        self.minval, self.maxval, self.seed, self.dtype = minval, maxval, seed, as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_uniform(_dims(shape), self.minval, self.maxval, self._dtype(dtype), seed=self.seed)


class variance_scaling_initializer(Initializer):  # noqa: N801 - TF1 public name
    """Samples with variance scale/n, n = fan_in, fan_out or their mean (TF1 rules for fans)."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dims = _dims(shape)
        dtype = self._dtype(dtype)
        fan_in, fan_out = _fans(dims)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution == "truncated_normal":
            # 0.879... = std of a unit normal truncated to [-2, 2]
            return truncated_normal(dims, 0.0, math.sqrt(scale) / 0.87962566103423978, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_normal(dims, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_uniform(dims, -limit, limit, dtype, seed=self.seed)


def glorot_uniform_initializer(seed=None, dtype=dtypes.float32):
    return variance_scaling_initializer(1.0, "fan_avg", "uniform", seed, dtype)


def glorot_normal_initializer(seed=None, dtype=dtypes.float32):
    return variance_scaling_initializer(1.0, "fan_avg", "truncated_normal", seed, dtype)


def he_normal(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return variance_scaling_initializer(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return variance_scaling_initializer(1.0, "fan_in", "uniform", seed)


class orthogonal_initializer(Initializer):  # noqa: N801 - TF1 public name
    """An orthogonal matrix (rows or columns orthonormal), reshaped to the shape: the Q of a normal
    matrix's QR, its columns' signs fixed by diag(R) (TF1's recipe), times `gain`. Shape rank >= 2
    (ValueError otherwise); [prod(shape[:-1]), shape[-1]] is made orthogonal."""

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        self.gain, self.seed, self.dtype = gain, seed, as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dims, dtype = _dims(shape), self._dtype(dtype)
        if len(dims) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows, cols = int(np.prod(dims[:-1])), dims[-1]
        flat = (cols, rows) if rows < cols else (rows, cols)
        q, r = qr(random_normal(flat, dtype=dtype, seed=self.seed), full_matrices=False)
        q = multiply(q, sign(matrix_diag_part(r)))
        if rows < cols:
            q = transpose(q)
        return multiply(self.gain, reshape(q, dims))


class uniform_unit_scaling_initializer(Initializer):  # noqa: N801 - TF1 public name
    """Uniform in [-m, m], m = factor * sqrt(3 / input size), input size = prod(shape[:-1]) (TF1)."""

    def __init__(self, factor=1.0, seed=None, dtype=dtypes.float32):
        self.factor, self.seed, self.dtype = factor, seed, as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dims = _dims(shape)
        size = float(np.prod(dims[:-1])) if len(dims) > 1 else float(dims[0]) if dims else 1.0
        m = math.sqrt(3.0 / max(1.0, size)) * self.factor
        return random_uniform(dims, -m, m, self._dtype(dtype), seed=self.seed)


class identity_initializer(Initializer):  # noqa: N801 - TF1 public name (tf.initializers.identity)
    """`gain` times the identity; the shape must be 2-D (ValueError otherwise)."""

    def __init__(self, gain=1.0, dtype=dtypes.float32):
        self.gain, self.dtype = gain, as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dims = _dims(shape)
        if len(dims) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        dtype = self._dtype(dtype)
        return constant(self.gain * np.eye(*dims), dtype=dtype)


def _dims(shape):
    s = as_shape(shape)
    if not s.is_fully_defined():
        raise ValueError(f"An initializer needs a fully defined shape, got {s}")
    return s.as_list()


def _fans(shape):
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = float(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive
