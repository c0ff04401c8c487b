"""`tf.contrib.layers` initializers: `xavier_initializer` and contrib's own
`variance_scaling_initializer(factor, mode, uniform)`, expressed through the core
`variance_scaling_initializer` (not rewritten): uniform draws in ±sqrt(3·factor/n), normal ones
from a normal truncated at two standard deviations with stddev sqrt(1.3·factor/n), n the fan
given by `mode` ('FAN_IN', 'FAN_OUT', 'FAN_AVG')."""

from __future__ import annotations

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..state.initializers import variance_scaling_initializer as _core_variance_scaling
from ..tf1_names import missing_attribute

__all__ = ["xavier_initializer", "xavier_initializer_conv2d", "variance_scaling_initializer"]

# the std of a unit normal truncated to [-2, 2]: the core initializer divides its stddev by it
_TRUNCATED_STD = 0.87962566103423978


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=dtypes.float32):
    """He-style initializer (contrib's defaults: factor 2, FAN_IN, truncated normal).

    TypeError for a non-floating dtype or an unknown mode (as TF 1.15's contrib).
    """
    dtype = as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
    if uniform:
        return _core_variance_scaling(factor, mode.lower(), "uniform", seed, dtype)
    return _core_variance_scaling(1.3 * factor * _TRUNCATED_STD ** 2, mode.lower(), "truncated_normal", seed, dtype)


def xavier_initializer(uniform=True, seed=None, dtype=dtypes.float32):
    """Glorot's initializer: variance_scaling_initializer(1.0, 'FAN_AVG', uniform)."""
    return variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=uniform, seed=seed, dtype=dtype)


xavier_initializer_conv2d = xavier_initializer

__getattr__ = missing_attribute(__name__)
