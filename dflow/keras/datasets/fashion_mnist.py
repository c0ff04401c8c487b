"""Fashion-MNIST: 60000 + 10000 28x28 uint8 images of clothes, four gzipped idx files."""

from __future__ import annotations

import gzip
import os

import numpy as np

from ._fetch import ORIGIN_FOLDER, fetch

__all__ = ["load_data"]

FILES = ["train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
         "t10k-images-idx3-ubyte.gz"]


def load_data():
    """((x_train, y_train), (x_test, y_test)) from ~/.keras/datasets/fashion-mnist/."""
    paths = [fetch(name, ORIGIN_FOLDER + name, cache_subdir=os.path.join("datasets", "fashion-mnist"))
             for name in FILES]
    with gzip.open(paths[0], "rb") as f:
        y_train = np.frombuffer(f.read(), np.uint8, offset=8)
    with gzip.open(paths[1], "rb") as f:
        x_train = np.frombuffer(f.read(), np.uint8, offset=16).reshape(len(y_train), 28, 28)
    with gzip.open(paths[2], "rb") as f:
        y_test = np.frombuffer(f.read(), np.uint8, offset=8)
    with gzip.open(paths[3], "rb") as f:
        x_test = np.frombuffer(f.read(), np.uint8, offset=16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)
