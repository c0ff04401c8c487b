"""`tf.data`: input pipelines whose elements feed the graph (TF1's `tf.data` in dflow).

Design. A `Dataset` is a chain of pipeline stages (`node.Node`) iterated on the host, in the
process of the Session that runs the graph, whatever its scheduler: elements are flat tuples of
numpy arrays. An iterator's `get_next()` is an `IteratorGetNext` op with `state="host"`: when a
run needs it, the session's HostRun calls its hook (schedule/host.py), which pulls the next element
from the session's `IteratorState` (`Session.resources`) and feeds it to the plan, as a while
loop's results are fed; the plan is cached per element shape. The pull is part of the run's
`RunTransaction`: a failed run hands the element back, so it does not advance the iterator, and
each Session has its own position. Initializers (`MakeIterator`) are host ops too: they evaluate
the tensors the dataset captured (placeholders fed through `feed_dict`) and install a fresh state
when the run succeeds. The end of data raises `OutOfRangeError`.

User functions (`map`, `filter`, `flat_map`, `interleave`) are traced once into graph ops on
placeholders and run per element by a private in-process Session (functions.py). Buffered stages
(`shuffle`, `prefetch`, parallel `map`) bound memory by their buffers; `prefetch` and
`map(num_parallel_calls)` run on background threads, so reading overlaps the training step.
Chunked sources (`from_zarr`, `from_dask`) read a block of rows at a time with dflow's chunk reader;
a shuffle over one reads its chunks in a random order (each once an epoch) into its buffer.

Feedable iterators (`from_string_handle`) need string tensors. With a session `memory_budget`, a
pipeline whose buffers (static shapes) could exceed it is refused when its iterator starts.

`list_files` globs when its iterator starts. `window` gives tuples of input elements that only
pass-through stages and `flat_map`/`interleave` take: their function is traced once on one
`Dataset` per component (windows.py), reading the current window from the inner context.

`TFRecordDataset` (tfrecord.py) streams the records of TFRecord files (io/tfrecord.py), one record at
a time; parse them with `tf.parse_single_example` in `map` or `tf.parse_example` on batches.
`TextLineDataset` and `FixedLengthRecordDataset` (text.py) are the same reader with lines or
fixed-size records; `experimental` holds `tf.data.experimental`'s transformations (map_and_batch,
shuffle_and_repeat, parallel_interleave), re-exported by `dflow.contrib.data`.

A SparseTensor in an element (a `map` returning a VarLenFeature's) is three flat components; `batch`
makes TF's batch of them (structure.py, batching.py).

Not done: saving iterator state.
"""

from . import experimental
from .dataset import Dataset
from .iterator import Iterator
from .text import FixedLengthRecordDataset, TextLineDataset
from .tfrecord import TFRecordDataset
from .transforms import AUTOTUNE

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def make_one_shot_iterator(dataset):
    """`tf.compat.v1.data.make_one_shot_iterator(dataset)`."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    """`tf.compat.v1.data.make_initializable_iterator(dataset)`."""
    return dataset.make_initializable_iterator(shared_name)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    return dataset_or_iterator.output_classes


__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Dataset", "Iterator", "TFRecordDataset",
           "TextLineDataset", "FixedLengthRecordDataset", "experimental", "make_one_shot_iterator", "make_initializable_iterator",
           "get_output_types", "get_output_shapes", "get_output_classes"]

from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)  # a TF1 name dflow lacks says so (docs/tf1_coverage.md)
