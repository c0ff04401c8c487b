"""`dflow.bitwise`: TF1's `tf.bitwise` namespace, the integer bit ops of dflow/kernels/bitwise_ops.py."""

from .kernels.bitwise_ops import (
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    invert,
    left_shift,
    right_shift,
)
from .tf1_names import missing_attribute as _missing_attribute

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]

__getattr__ = _missing_attribute(__name__)
