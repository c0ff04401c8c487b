"""CIFAR-100: 50000 + 10000 32x32 colour images with fine (100) or coarse (20) labels."""

from __future__ import annotations

import os

import numpy as np

from .. import backend as K
from ._fetch import fetch
from .cifar import load_batch

__all__ = ["load_data"]


def load_data(label_mode="fine"):
    """((x_train, y_train [n, 1]), (x_test, y_test)) with `label_mode` 'fine' or 'coarse'."""
    if label_mode not in ("fine", "coarse"):
        raise ValueError("`label_mode` must be one of `\"fine\"`, `\"coarse\"`.")
    path = fetch("cifar-100-python", "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz", untar=True)
    x_train, y_train = load_batch(os.path.join(path, "train"), label_key=label_mode + "_labels")
    x_test, y_test = load_batch(os.path.join(path, "test"), label_key=label_mode + "_labels")
    y_train = np.reshape(y_train, (len(y_train), 1))
    y_test = np.reshape(y_test, (len(y_test), 1))
    if K.image_data_format() == "channels_last":
        x_train = x_train.transpose(0, 2, 3, 1)
        x_test = x_test.transpose(0, 2, 3, 1)
    return (x_train, y_train), (x_test, y_test)
