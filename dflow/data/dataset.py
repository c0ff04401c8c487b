"""`tf.data.Dataset`: an immutable description of an input pipeline (a chain of `Node`s), with
TF1's constructors, transformations and iterators."""

from __future__ import annotations

from ..graph.dtypes import int64
from ..graph.graph import executing_eagerly, get_seed
from . import batching, buffers, chunked, sources, transforms, windows
from .functions import Function
from .iterator import EagerIterator, Iterator
from .structure import flatten, pack


class Dataset:
    """A sequence of elements (nested tuples/dicts of tensors); see the package doc."""

    def __init__(self, node):
        self._node = node

    # ---- element spec -----------------------------------------------------------------------
    @property
    def output_types(self):
        return self._node.spec.output_types

    @property
    def output_shapes(self):
        return self._node.spec.output_shapes

    @property
    def output_classes(self):
        return self._node.spec.output_classes

    def __repr__(self):
        return f"<Dataset shapes: {self.output_shapes}, types: {self.output_types}>"

    def _same_kind(self, node):
        """A dataset of `node` for stages that pass elements through (a window dataset stays one)."""
        return Dataset(node)

    # ---- sources ----------------------------------------------------------------------------
    @staticmethod
    def from_tensors(tensors):
        """One element: `tensors` (numpy values, Python values or graph tensors)."""
        return Dataset(sources.TensorsNode(tensors, slices=False))

    @staticmethod
    def from_tensor_slices(tensors):
        """One element per row of `tensors` (every component sliced along its first dimension)."""
        return Dataset(sources.TensorsNode(tensors, slices=True))

    @staticmethod
    def range(*args, output_type=int64):
        """`range(stop)`, `range(start, stop[, step])` as int64 scalars."""
        if not 1 <= len(args) <= 3:
            raise TypeError(f"range takes 1 to 3 arguments, got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        return Dataset(sources.RangeNode(start, stop, step, output_type))

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        """The values `generator(*args)` yields, converted to `output_types` and checked against
        `output_shapes`. Runs in the session's process (any scheduler)."""
        return Dataset(sources.GeneratorNode(generator, output_types, output_shapes, args))

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """The names of the files matching `file_pattern` (a glob pattern or a list of them: a str,
        list or string tensor), sorted, as scalar `string` elements; shuffled unless
        `shuffle=False`, with `shuffle`'s seed rules (a new order each `repeat` epoch)."""
        shuffle = True if shuffle is None else bool(shuffle)
        return Dataset(sources.ListFilesNode(file_pattern, shuffle, get_seed(seed) if shuffle else (None, None)))

    @staticmethod
    def zip(datasets):
        """Elements of the datasets side by side (a nested structure of datasets); ends with the shortest."""
        if isinstance(datasets, Dataset):
            return Dataset(sources.ZipNode([datasets._node], None))
        leaves = _dataset_leaves(datasets)
        if any(isinstance(d, WindowDataset) for d in leaves):
            raise TypeError("zip: datasets of windows cannot be zipped in dflow; zip the windows' datasets "
                            "inside flat_map instead")
        nodes = [d._node for d in leaves]
        template = pack(datasets, [n.spec.structure if n.spec.structure is not None else None for n in nodes])
        return Dataset(sources.ZipNode(nodes, template))

    @staticmethod
    def from_zarr(arrays, read_ahead=2):
        """Rows of Zarr arrays (paths or zarr arrays; a tuple or dict of them gives aligned
        components, e.g. (X, y)), read a row chunk at a time (dflow extension). `read_ahead`:
        blocks read at once, each streamed by its own background thread (0: read when asked, on
        the consuming thread)."""
        return Dataset(_chunked(arrays, read_ahead))

    @staticmethod
    def from_dask(arrays, read_ahead=2):
        """Rows of dask arrays (a tuple or dict of them: aligned components), computed a row chunk
        at a time (dflow extension)."""
        return Dataset(_chunked(arrays, read_ahead))

    def concatenate(self, dataset):
        return Dataset(sources.ConcatenateNode(self._node, dataset._node))

    # ---- transformations ----------------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, num_threads=None, output_buffer_size=None):
        """`map_func` (graph ops, traced once) applied to each element; `num_parallel_calls` threads.
        TF 1.3's `num_threads` is `num_parallel_calls`; its `output_buffer_size` a `prefetch` after."""
        if num_threads is not None:
            if num_parallel_calls is not None:
                raise ValueError("map: give num_parallel_calls or TF 1.3's num_threads, not both")
            num_parallel_calls = num_threads
        if output_buffer_size is not None:
            return self.map(map_func, num_parallel_calls).prefetch(output_buffer_size)
        return Dataset(transforms.MapNode(self._node, Function(map_func, self._node.spec, "Dataset_map"),
                                          num_parallel_calls))

    def filter(self, predicate):
        return Dataset(transforms.FilterNode(self._node, Function(predicate, self._node.spec, "Dataset_filter")))

    def flat_map(self, map_func):
        fn = Function(map_func, self._node.spec, "Dataset_flat_map", returns_dataset=True)
        return Dataset(transforms.FlatMapNode(self._node, fn))

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None):
        fn = Function(map_func, self._node.spec, "Dataset_interleave", returns_dataset=True)
        return Dataset(transforms.FlatMapNode(self._node, fn, transforms.AUTOTUNE if cycle_length is None
                                              else cycle_length, 1 if block_length is None else block_length))

    def window(self, size, shift=None, stride=1, drop_remainder=False):
        """A dataset of windows: window k is a dataset (a nested structure of datasets, one per
        component) of the elements k*shift + j*stride, j < size; for `flat_map`/`interleave`, e.g.
        `flat_map(lambda w: w.batch(size))`. Its output_types/shapes are those of the windows'
        elements (TF1 shows DatasetSpecs)."""
        return WindowDataset(windows.WindowNode(self._node, size, shift, stride, drop_remainder))

    def batch(self, batch_size, drop_remainder=False):
        return Dataset(batching.BatchNode(self._node, batch_size, drop_remainder))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False):
        batching._refuse_sparse(self._node.spec, "padded_batch")
        if padded_shapes is None:
            padded_shapes = self._node.spec.nested([s.as_list() if s.ndims is not None else s
                                                    for s in self._node.spec.shapes])
        return Dataset(batching.PaddedBatchNode(self._node, batch_size, padded_shapes, padding_values,
                                                drop_remainder))

    def unbatch(self):
        return Dataset(batching.UnbatchNode(self._node))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        """TF's buffer shuffle. A chunked source (`from_zarr`, `from_dask`) is first read in a random
        order of its chunks, so the buffer mixes rows of several chunks and one epoch reads each
        chunk once."""
        seeds = get_seed(seed)
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        node = self._node.with_shuffled_blocks(seeds, reshuffle) or self._node
        return self._same_kind(buffers.ShuffleNode(node, buffer_size, seeds, reshuffle))

    def repeat(self, count=None):
        return self._same_kind(transforms.RepeatNode(self._node, count))

    def prefetch(self, buffer_size):
        return self._same_kind(buffers.PrefetchNode(self._node, buffer_size))

    def take(self, count):
        return self._same_kind(transforms.TakeNode(self._node, count))

    def skip(self, count):
        return self._same_kind(transforms.SkipNode(self._node, count))

    def shard(self, num_shards, index):
        return self._same_kind(transforms.ShardNode(self._node, num_shards, index))

    def cache(self, filename=""):
        return Dataset(transforms.CacheNode(self._node, filename))

    def apply(self, transformation_func):
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(f"apply: `transformation_func` must return a Dataset, got {type(out).__name__}")
        return out

    # ---- iterators ----------------------------------------------------------------------------
    def __iter__(self):
        """Eager mode: the elements as eager tensors (RuntimeError in graph mode, as TF1)."""
        return EagerIterator(self)

    def make_one_shot_iterator(self):
        """An iterator that starts at this dataset's first element in each session. A dataset that
        captures a placeholder needs an initializable iterator (ValueError, as TF1). In eager mode:
        a Python iterator whose `get_next()` returns the next element (as TF1's)."""
        if executing_eagerly():
            return EagerIterator(self)
        for t in self._node.all_captured():
            if getattr(t, "op", None) is not None and t.op.type in ("Placeholder", "PlaceholderWithDefault"):
                raise ValueError(f"Cannot capture a placeholder (name:{t.op.name}, type:{t.op.type}) by value; "
                                 "use make_initializable_iterator() and feed it to the initializer.")
        return Iterator(self._node.spec, one_shot=self._node)

    def make_initializable_iterator(self, shared_name=None):
        """An iterator started (and restarted) by running its `initializer`, which reads the
        placeholders the dataset captured from that run's `feed_dict`."""
        if executing_eagerly():
            raise RuntimeError("dataset.make_initializable_iterator is not supported when eager execution is "
                               "enabled. Use `for element in dataset` instead.")
        it = Iterator(self._node.spec)
        it._initializer = it.make_initializer(self)
        return it


class WindowDataset(Dataset):
    """The result of `window`: elements are datasets, so only `flat_map`, `interleave` and the
    stages passing elements through (take, skip, repeat, shuffle, prefetch, shard) apply."""

    def __repr__(self):
        return f"<WindowDataset of datasets with shapes: {self.output_shapes}, types: {self.output_types}>"

    def _same_kind(self, node):
        return WindowDataset(node)

    def flat_map(self, map_func):
        return Dataset(transforms.FlatMapNode(self._node, windows.WindowFunction(map_func, self._node.spec, Dataset)))

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None):
        fn = windows.WindowFunction(map_func, self._node.spec, Dataset)
        return Dataset(transforms.FlatMapNode(self._node, fn, transforms.AUTOTUNE if cycle_length is None
                                              else cycle_length, 1 if block_length is None else block_length))

    def _refused(self, what):
        raise TypeError(f"{what}: the elements of a window dataset are datasets; turn them into tensors with "
                        "flat_map(lambda w: w.batch(size)) first")

    def map(self, *args, **kwargs):
        self._refused("map")

    def filter(self, *args, **kwargs):
        self._refused("filter")

    def batch(self, *args, **kwargs):
        self._refused("batch")

    def padded_batch(self, *args, **kwargs):
        self._refused("padded_batch")

    def unbatch(self):
        self._refused("unbatch")

    def window(self, *args, **kwargs):
        self._refused("window")

    def cache(self, *args, **kwargs):
        self._refused("cache")

    def concatenate(self, *args, **kwargs):
        self._refused("concatenate")

    def make_one_shot_iterator(self):
        self._refused("make_one_shot_iterator")

    def make_initializable_iterator(self, shared_name=None):
        self._refused("make_initializable_iterator")


def _chunked(arrays, read_ahead):
    structure = arrays if isinstance(arrays, (tuple, dict)) else None
    leaves = flatten(arrays) if structure is not None else [arrays]
    template = pack(structure, [None] * len(leaves)) if structure is not None else None
    return chunked.ChunkedNode(chunked.open_arrays(leaves), template, read_ahead)


def _dataset_leaves(x):
    if isinstance(x, Dataset):
        return [x]
    if isinstance(x, dict):
        return [d for k in sorted(x) for d in _dataset_leaves(x[k])]
    if isinstance(x, tuple):
        return [d for v in x for d in _dataset_leaves(v)]
    raise TypeError(f"zip: expected a nested structure of Datasets, got {type(x).__name__}")
