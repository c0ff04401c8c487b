"""Keras's numpy helpers: `to_categorical` and `normalize`."""

from __future__ import annotations

import numpy as np

__all__ = ["to_categorical", "normalize"]


def to_categorical(y, num_classes=None, dtype="float32"):
    """Class ids (any shape; a trailing axis of 1 dropped) as one-hot rows: shape + (num_classes,).

    ValueError for negative ids or ids >= num_classes."""
    y = np.array(y, dtype="int")
    input_shape = y.shape
    if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
        input_shape = tuple(input_shape[:-1])
    y = y.ravel()
    if not num_classes:
        num_classes = int(np.max(y)) + 1 if y.size else 0
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise ValueError(f"to_categorical: class ids must lie in [0, {num_classes}), got values in "
                         f"[{y.min()}, {y.max()}]")
    categorical = np.zeros((y.shape[0], num_classes), dtype=dtype)
    categorical[np.arange(y.shape[0]), y] = 1
    return np.reshape(categorical, input_shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """`x` divided by its `order`-norm along `axis` (zero norms left as 1)."""
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)
