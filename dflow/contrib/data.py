"""`dflow.contrib.data`: TF1's `tf.contrib.data`, the `tf.data.experimental` transformations under
their older names, and the `*_and_drop_remainder` batchings of TF 1.x before `drop_remainder`."""

from ..data import Dataset, TFRecordDataset
from ..data.experimental import (
    AUTOTUNE,
    enumerate_dataset,
    map_and_batch,
    parallel_interleave,
    shuffle_and_repeat,
    unbatch,
)
from ..data.text import FixedLengthRecordDataset, TextLineDataset

__all__ = ["AUTOTUNE", "Dataset", "FixedLengthRecordDataset", "TFRecordDataset", "TextLineDataset",
           "batch_and_drop_remainder", "enumerate_dataset", "map_and_batch", "padded_batch_and_drop_remainder",
           "parallel_interleave", "shuffle_and_repeat", "sloppy_interleave", "unbatch"]


def batch_and_drop_remainder(batch_size):
    """`batch(batch_size, drop_remainder=True)`: every batch has `batch_size` elements."""
    return lambda dataset: dataset.batch(batch_size, drop_remainder=True)


def padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values=None):
    """`padded_batch(batch_size, padded_shapes, padding_values, drop_remainder=True)`."""
    return lambda dataset: dataset.padded_batch(batch_size, padded_shapes, padding_values, drop_remainder=True)


def sloppy_interleave(map_func, cycle_length, block_length=1):
    """`parallel_interleave(..., sloppy=True)` (dflow's order is the deterministic one)."""
    return parallel_interleave(map_func, cycle_length, block_length, sloppy=True)
