"""MNIST digits: 60000 + 10000 28x28 uint8 images and their labels."""

from __future__ import annotations

import numpy as np

from ._fetch import ORIGIN_FOLDER, fetch

__all__ = ["load_data"]

FILE_HASH = "8a61469f7ea1b51cbae51d4f78837e45"  # TF 1.15's md5 of mnist.npz


def load_data(path="mnist.npz"):
    """((x_train, y_train), (x_test, y_test)) from `path` under ~/.keras/datasets."""
    path = fetch(path, ORIGIN_FOLDER + "mnist.npz", file_hash=FILE_HASH)
    with np.load(path, allow_pickle=True) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
