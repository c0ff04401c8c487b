"""The pipeline stage every `Dataset` wraps: a `Node` knows its element spec, its input nodes, the
graph tensors it captured, and how to iterate its elements given an `IterContext`.

Elements are flat tuples of numpy arrays; the public `Dataset` (dataset.py) nests them. Iterating
happens on the host, in the process of the Session that owns the iterator (iterator.py).
"""

from __future__ import annotations

import numpy as np

from ..graph.ops import Tensor


class IterContext:
    """What iterating a pipeline in one iterator needs: the values of the graph tensors it captured
    (`values`), the iterator's seed (used by unseeded shuffles) and per-stage start counts (a
    shuffle restarted by `repeat` draws a new order: reshuffle_each_iteration)."""

    def __init__(self, values, seed, starts=None, memo=None):
        self.values = values
        self.seed = int(seed)
        self._starts = starts if starts is not None else {}
        self.memo = memo if memo is not None else {}  # per-iterator records of stages (cache)

    def start(self, node):
        """How many times `node` started iterating in this iterator before now."""
        n = self._starts.get(node, 0)
        self._starts[node] = n + 1
        return n

    def with_values(self, values):
        """A context for an inner pipeline (a flat_map's datasets): more captured values, same counters."""
        return IterContext({**self.values, **values}, self.seed, self._starts, self.memo)


class ElementError:
    """In place of an element whose making failed (a `map` or `filter` function raised an OpError):
    stages hand it on in order, the iterator raises its error for that `get_next` and the next one
    goes on with the next element, as TF1 does. A stage that gathers elements (batch, window, zip)
    and meets one drops what it gathered for that output and hands the error on; counting stages
    (take, skip, shard) do not count it; `ignore_errors` drops it."""

    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


def failed(e):
    """Whether element `e` is an `ElementError`."""
    return type(e) is ElementError


class Node:
    """One pipeline stage. Subclasses set `spec` and implement `iterate(ctx)` (a Python iterator of
    flat element tuples); `inputs` are upstream nodes, `captured` graph tensors read at start."""

    inputs = ()
    captured = ()
    row_blocks = False  # whether `iterate_blocks` gives the elements as blocks of rows
    text_blocks = False  # whether `iterate_text_blocks` gives the elements (lines) as their text

    def __init__(self, spec):
        self.spec = spec

    def iterate(self, ctx):  # every node type defines it (abstract)
        raise NotImplementedError

    def describe_buffer(self):
        return type(self).__name__.replace("Node", "").lower()

    def iterate_blocks(self, ctx):
        """The same elements, in the same order, as blocks of rows: flat tuples of arrays with a
        leading row axis (only where `row_blocks`). Batching and shuffling consume them vectorized."""
        raise NotImplementedError

    def iterate_text_blocks(self, ctx):
        """The same elements (lines of text files), in the same order, as `text.TextBlock`s (only
        where `text_blocks`): a consumer parsing many lines at once reads them without making
        one bytes object per line (csv_batches.py)."""
        raise NotImplementedError

    def all_captured(self):
        """The graph tensors this pipeline reads (evaluated once, when its iterator starts)."""
        out = list(self.captured)
        for n in self.inputs:
            out += n.all_captured()
        return list(dict.fromkeys(out))

    def cardinality(self):
        """The number of elements if known without reading (None: unknown or infinite)."""
        return None

    def held_bytes(self):
        """The most bytes this stage holds beyond its inputs (its buffers), from static shapes;
        None when unknown (a dimension or size known only at run time)."""
        return 0

    def max_element_bytes(self):
        """The most bytes one element of this stage can have: from its static shapes, else (a
        stage passing its input's elements on, shapes unchanged) its input's bound; None when
        unknown."""
        eb = element_bytes(self.spec)
        if eb is None and len(self.inputs) == 1 and \
                [s.as_list() if s.ndims is not None else None for s in self.spec.shapes] == \
                [s.as_list() if s.ndims is not None else None for s in self.inputs[0].spec.shapes]:
            return self.inputs[0].max_element_bytes()
        return eb

    def with_shuffled_blocks(self, seeds, reshuffle):
        """This source reading its blocks in a random order, for a shuffle over it (chunked
        sources: chunked.py), or None when it has no blocks."""
        return None


def element_bytes(spec):
    """Bytes of one element of `spec`, or None if a shape is not fully known."""
    total = 0
    for d, s in zip(spec.dtypes, spec.shapes):
        n = s.num_elements()
        if n is None:
            return None
        total += n * d.size
    return total


def buffered_bytes(node):
    """(bytes the pipeline's buffers hold at most, [(stage, bytes)], [stages of unknown size])."""
    total, parts, unknown = 0, [], []
    stack = [node]
    while stack:
        n = stack.pop()
        b = n.held_bytes()
        if b is None:
            unknown.append(type(n).__name__)
        elif b:
            total += b
            parts.append((n.describe_buffer(), b))
        stack.extend(n.inputs)
    return total, parts, unknown


def rows_of(blocks):
    """The elements of row blocks, one row at a time (views)."""
    for block in blocks:
        for j in range(block[0].shape[0] if block else 0):
            yield tuple(c[j] for c in block)


def joined(pieces):
    """Row blocks (flat tuples of arrays) as one: their rows in order."""
    if len(pieces) == 1:
        return pieces[0]
    return tuple(np.concatenate(cs) for cs in zip(*pieces))


def component(v):
    """A fetched value as an element component: numpy, a scalar bytes as a 0-d object array (not
    numpy's fixed-width |S, which drops trailing NUL bytes: a serialized proto may end in one)."""
    if isinstance(v, bytes):
        out = np.empty((), dtype=object)
        out[()] = v
        return out
    return np.asarray(v)


def rng(*seeds):
    """A numpy Generator from integer seeds (deterministic: the same seeds, the same draws)."""
    return np.random.Generator(np.random.PCG64([int(s) & 0xFFFFFFFFFFFFFFFF for s in seeds]))


def int_arg(node, v):
    """A transformation's integer argument (a count, a size): a Python/numpy int, or a scalar tensor
    captured by `node` (its value is read when the iterator starts)."""
    if hasattr(v, "_as_graph_element") and not isinstance(v, Tensor):
        v = v._as_graph_element()
    if isinstance(v, Tensor):
        node.captured = list(node.captured) + [v]
        return v
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) and \
            not (isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iu"):
        raise TypeError(f"{type(node).__name__.removesuffix('Node')}: expected an int64 scalar, but got {v!r} "
                        f"of type {type(v).__name__!r}.")  # TF1: a float count is a TypeError
    return int(v)


def int_value(ctx, v):
    """The value of an `int_arg` in this iterator."""
    return int(np.asarray(ctx.values[v])) if isinstance(v, Tensor) else v
