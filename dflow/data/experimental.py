"""`tf.data.experimental`: AUTOTUNE."""

from .transforms import AUTOTUNE

__all__ = ["AUTOTUNE"]
