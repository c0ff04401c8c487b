"""CIFAR-10: 50000 + 10000 32x32 colour images in 10 classes (the python pickles' tarball)."""

from __future__ import annotations

import os

import numpy as np

from .. import backend as K
from ._fetch import fetch
from .cifar import load_batch

__all__ = ["load_data"]


def load_data():
    """((x_train [50000, 32, 32, 3] uint8, y_train [50000, 1]), (x_test, y_test)); channels first
    when image_data_format() says so. The batches' sizes are read from the files."""
    path = fetch("cifar-10-batches-py", "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz", untar=True)
    batches = [load_batch(os.path.join(path, f"data_batch_{i}")) for i in range(1, 6)]
    x_train = np.concatenate([b[0] for b in batches]).astype("uint8")
    y_train = np.concatenate([np.asarray(b[1]) for b in batches]).astype("uint8")
    x_test, y_test = load_batch(os.path.join(path, "test_batch"))
    y_train = np.reshape(y_train, (len(y_train), 1))
    y_test = np.reshape(y_test, (len(y_test), 1))
    if K.image_data_format() == "channels_last":
        x_train = x_train.transpose(0, 2, 3, 1)
        x_test = x_test.transpose(0, 2, 3, 1)
    return (x_train, y_train), (x_test.astype(x_train.dtype), y_test)
