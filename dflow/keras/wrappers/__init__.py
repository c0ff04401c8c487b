"""`tf.keras.wrappers`: the scikit-learn API wrappers."""

from . import scikit_learn

__all__ = ["scikit_learn"]
