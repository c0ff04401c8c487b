"""`dflow.contrib.stateless`: TF 1.15's `tf.contrib.stateless`, the stateless random ops under
their TF 1.x names (dflow/kernels/stateless_random_ops.py: values a function of the seed alone)."""

from ..kernels.stateless_random_ops import (
    stateless_multinomial,
    stateless_random_normal,
    stateless_random_uniform,
    stateless_truncated_normal,
)

__all__ = ["stateless_multinomial", "stateless_random_normal", "stateless_random_uniform",
           "stateless_truncated_normal"]
