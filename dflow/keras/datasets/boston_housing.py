"""Boston housing prices: 506 samples of 13 features, split by a seeded shuffle."""

from __future__ import annotations

import numpy as np

from ._fetch import ORIGIN_FOLDER, fetch

__all__ = ["load_data"]

FILE_HASH = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """((x_train, y_train), (x_test, y_test)): the first 1 - test_split of a seeded shuffle trains."""
    if not 0 <= test_split < 1:
        raise ValueError(f"test_split must lie in [0, 1), got {test_split}")
    path = fetch(path, ORIGIN_FOLDER + "boston_housing.npz", file_hash=FILE_HASH)
    with np.load(path, allow_pickle=True) as f:
        x, y = f["x"], f["y"]
    indices = np.arange(len(x))
    np.random.RandomState(seed).shuffle(indices)
    x, y = x[indices], y[indices]
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))
