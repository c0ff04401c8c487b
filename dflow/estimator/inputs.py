"""TF1's `tf.estimator.inputs`: `numpy_input_fn` and `pandas_input_fn`, input functions over numpy
arrays and pandas DataFrames (a DataFrame is its columns' arrays, keyed by column name).

TF1 fed a queue from Python threads; dflow builds the same stream as a `tf.data` pipeline
(slices → shuffle → repeat(num_epochs) → batch), so batches run across epoch boundaries and the
last one may be smaller, as TF1's `dequeue_up_to` gives them. With `shuffle=True` every epoch is
a permutation of the rows, shuffled through a buffer of `queue_capacity` rows; the order is not
TF1's (its feeder started at a random row and mixed through a RandomShuffleQueue).
"""

from __future__ import annotations

import collections

import numpy as np

from ..data.dataset import Dataset
from ..tf1_names import missing_attribute

__all__ = ["numpy_input_fn", "pandas_input_fn"]

_TARGET_KEY = "__target_key__"


def _as_dict(value, what):
    if isinstance(value, dict):
        if not value:
            raise ValueError(f"{what} cannot be an empty dict")
        return collections.OrderedDict((k, np.asarray(v)) for k, v in value.items()), True
    return collections.OrderedDict([(_TARGET_KEY if what == "y" else "__x__", np.asarray(value))]), False


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """An input function returning (features, labels) batches of `x` (an array or a dict of arrays,
    one row per example) and `y` (None, an array or a dict). ValueError when shuffle is not a
    bool, when the arrays' lengths differ, or x and y share a key; TypeError when x is None."""
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided explicitly as a bool, it is currently {shuffle!r}")
    if x is None:
        raise TypeError("x must be a dict or array; got NoneType")
    if batch_size is None or int(batch_size) <= 0:
        raise ValueError(f"batch_size must be positive, given: {batch_size}")
    if num_epochs is not None and int(num_epochs) <= 0:
        raise ValueError(f"num_epochs must be > 0 or None, given: {num_epochs}")
    x_dict, x_is_dict = _as_dict(x, "x")
    y_dict, y_is_dict = _as_dict(y, "y") if y is not None else (collections.OrderedDict(), False)
    common = set(x_dict) & set(y_dict)
    if common:
        raise ValueError(f"{sorted(common)} duplicate keys are found in both x and y; keys in x and y must be "
                         "unique.")
    lengths = {key: len(v) for key, v in list(x_dict.items()) + list(y_dict.items())}
    if len(set(lengths.values())) > 1:
        raise ValueError("Length of tensors in x and y is mismatched. All elements in x and y must have the same "
                         f"length.\nShapes in x: {[v.shape for v in x_dict.values()]}\n"
                         f"Shapes in y: {[v.shape for v in y_dict.values()]}\n")
    n = next(iter(lengths.values()))

    def input_fn():
        features = dict(x_dict) if x_is_dict else x_dict["__x__"]
        if y is None:
            ds = Dataset.from_tensor_slices(features)
        else:
            labels = dict(y_dict) if y_is_dict else y_dict[_TARGET_KEY]
            ds = Dataset.from_tensor_slices((features, labels))
        if shuffle:
            ds = ds.shuffle(min(int(queue_capacity), n) or 1, reshuffle_each_iteration=True)
        ds = ds.repeat(num_epochs).batch(int(batch_size))
        return ds.make_one_shot_iterator().get_next()

    return input_fn


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1,
                    target_column="target"):
    """An input function returning batches of DataFrame `x`'s columns (a dict keyed by column name)
    and, with `y` (a Series, or a DataFrame: a dict keyed by its column names), the labels; TF1's
    errors: shuffle not a bool, target_column not a string or already a column of x, x's and y's
    index differing. The stream is `numpy_input_fn`'s (its module doc)."""
    import pandas as pd

    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided explicitly as a bool, it is currently {shuffle}")
    if not isinstance(target_column, str):
        raise TypeError("target_column must be a string type")
    if not isinstance(x, pd.DataFrame):
        raise TypeError(f"x must be a pandas DataFrame; got {type(x).__name__}")
    features = collections.OrderedDict((c, x[c].to_numpy()) for c in x.columns)
    labels = None
    if y is not None:
        if target_column in x:
            raise ValueError(f"Cannot use name {target_column} for target column: DataFrame already has a column "
                             f"with that name: {x.columns}")
        if not np.array_equal(x.index, y.index):
            raise ValueError(f"Index for x and y are mismatched.\nIndex for x: {x.index}\nIndex for y: {y.index}\n")
        labels = collections.OrderedDict((c, y[c].to_numpy()) for c in y.columns) \
            if isinstance(y, pd.DataFrame) else y.to_numpy()
    return numpy_input_fn(features, labels, batch_size=batch_size, num_epochs=num_epochs, shuffle=shuffle,
                          queue_capacity=queue_capacity, num_threads=num_threads)


__getattr__ = missing_attribute(__name__)
