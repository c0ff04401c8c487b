"""`tf.keras.preprocessing`: sequence padding and windows, text tokenization."""

from . import sequence, text

__all__ = ["sequence", "text"]
