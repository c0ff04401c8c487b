"""`tf.data.experimental` (and TF1's `tf.contrib.data`, which re-exports it): transformations as
functions for `Dataset.apply`, each the composition of `Dataset` methods TF1 documents it equal to.

`ignore_errors` drops the elements whose making failed (a map function's error: see node.py
`ElementError`); `map_and_batch` is `map` then `batch`; `shuffle_and_repeat` is `shuffle` (reshuffled each epoch)
then `repeat`; `parallel_interleave` is `interleave` in its deterministic order (`sloppy` is accepted:
an order TF allows for it too); `unbatch` is `Dataset.unbatch`.
"""

from .dataset import Dataset
from .sources import RangeNode
from .transforms import AUTOTUNE, IgnoreErrorsNode

__all__ = ["AUTOTUNE", "map_and_batch", "shuffle_and_repeat", "parallel_interleave", "unbatch",
           "enumerate_dataset", "ignore_errors"]


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False, num_parallel_calls=None):
    """`map(map_func)` then `batch(batch_size, drop_remainder)`; `num_parallel_batches` and
    `num_parallel_calls` (at most one) set the map's threads."""
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError("The `num_parallel_batches` and `num_parallel_calls` arguments are mutually exclusive.")
    calls = num_parallel_calls if num_parallel_calls is not None else num_parallel_batches

    def apply(dataset):
        return dataset.map(map_func, num_parallel_calls=calls).batch(batch_size, drop_remainder=drop_remainder)

    return apply


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """`shuffle(buffer_size, seed)` then `repeat(count)`: each epoch in a new order."""

    def apply(dataset):
        return dataset.shuffle(buffer_size, seed=seed, reshuffle_each_iteration=True).repeat(count)

    return apply


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False, buffer_output_elements=None,
                        prefetch_input_elements=None):
    """`interleave(map_func, cycle_length, block_length)`: the datasets of `cycle_length` input
    elements (e.g. files) read in turn, `block_length` elements from each."""

    def apply(dataset):
        return dataset.interleave(map_func, cycle_length=cycle_length, block_length=block_length)

    return apply


def unbatch():
    """`Dataset.unbatch()`: each element split along its first dimension."""
    return lambda dataset: dataset.unbatch()


def enumerate_dataset(start=0):
    """Each element as (index, element), index an int64 from `start`."""
    return lambda dataset: Dataset.zip((Dataset(RangeNode(start, 2 ** 63 - 1, 1)), dataset))


def ignore_errors():
    """The elements whose making raised an error (in a `map` or `filter` function) are dropped, the
    others kept in order."""
    return lambda dataset: Dataset(IgnoreErrorsNode(dataset._node))
