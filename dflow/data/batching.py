"""Batching stages: `batch`, `padded_batch`, `unbatch`."""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph.ops import Tensor
from ..graph.shape import TensorShape, as_shape
from ..kernels.common import to_numpy
from .csv_batches import fused_rows
from .node import Node, element_bytes, failed, int_arg, int_value, joined
from .structure import ElementSpec, _shape_leaves, flatten


def _batched_shapes(spec, batch_size, drop_remainder):
    lead = batch_size if drop_remainder and isinstance(batch_size, int) else None
    shapes = [TensorShape([lead]).concatenate(s) if s.ndims is not None else TensorShape(None) for s in spec.shapes]
    for i in spec.sparse_starts():  # a batch of sparse tensors is one of rank + 1
        rank = spec.shapes[i + 2][0].value if spec.shapes[i + 2].ndims == 1 else None
        r = None if rank is None else rank + 1
        shapes[i:i + 3] = [TensorShape([None, r]), TensorShape([None]), TensorShape([r])]
    return shapes


def _stack_sparse(rows, i):
    """The batch of the sparse tensors at flat components i..i+2 of `rows` (TF's: indices prefixed
    with the row, dense_shape [rows] + the largest of each dimension)."""
    shapes = [np.asarray(r[i + 2]) for r in rows]
    ranks = {len(sh) for sh in shapes}
    if len(ranks) > 1:
        raise InvalidArgumentError(None, None, f"Cannot batch sparse tensors of different ranks in component {i}: "
                                   f"{sorted(ranks)}")
    rank = ranks.pop()
    indices = [np.concatenate([np.full((len(r[i]), 1), k, np.int64), np.asarray(r[i], np.int64).reshape(-1, rank)],
                              axis=1) for k, r in enumerate(rows)]
    dense = np.max(np.stack(shapes), axis=0) if rank else np.zeros(0, np.int64)
    return (np.concatenate(indices).reshape(-1, rank + 1), np.concatenate([r[i + 1] for r in rows]),
            np.concatenate([[len(rows)], dense]).astype(np.int64))


def _refuse_sparse(spec, what):
    if spec.sparse_starts():
        raise TypeError(f"{what}: elements holding a SparseTensor are not supported (TF1 refuses padded_batch of "
                        "them; dflow does not unbatch them)")


def _stack(rows, i):
    first = rows[0][i].shape
    for k, r in enumerate(rows):
        if r[i].shape != first:
            raise InvalidArgumentError(None, None, f"Cannot batch tensors with different shapes in component {i}. "
                                       f"First element had shape {list(first)} and element {k} had shape "
                                       f"{list(r[i].shape)}.")
    return np.stack([r[i] for r in rows])


class BatchNode(Node):
    def __init__(self, node, batch_size, drop_remainder=False):
        self.size = int_arg(self, batch_size)
        if isinstance(self.size, int) and self.size < 1:
            raise InvalidArgumentError(None, None, f"batch: batch_size must be positive, got {batch_size}")
        self.drop = bool(drop_remainder)
        self.inputs = (node,)
        spec = node.spec
        super().__init__(ElementSpec(spec.structure, spec.dtypes, _batched_shapes(spec, self.size, self.drop)))

    @property
    def plain_batch(self):
        """Rows stacked as they are (not padded_batch): a map after it may decode CSV lines a
        block at a time (csv_batches.py)."""
        return type(self) is BatchNode

    def cardinality(self):
        c = self.inputs[0].cardinality()
        if c is None or not isinstance(self.size, int):
            return None
        return c // self.size if self.drop else -(-c // self.size)

    def held_bytes(self):
        eb = element_bytes(self.inputs[0].spec)
        return None if not isinstance(self.size, int) or eb is None else 2 * self.size * eb  # rows + batch

    def describe_buffer(self):
        return f"batch of {self.size}"

    def max_element_bytes(self):
        eb = self.inputs[0].max_element_bytes()  # a batch is at most `size` elements (the last fewer)
        return None if not isinstance(self.size, int) or eb is None else self.size * eb

    def _maker(self, ctx):
        """The function making one batch from its rows in this iterator."""
        sparse = set(self.inputs[0].spec.sparse_starts())
        if not sparse:
            return lambda rows: tuple(_stack(rows, i) for i in range(len(self.spec)))

        def make(rows):
            out, i = [], 0
            while i < len(self.spec):
                if i in sparse:
                    out += _stack_sparse(rows, i)
                    i += 3
                else:
                    out.append(_stack(rows, i))
                    i += 1
            return tuple(out)

        return make

    def iterate(self, ctx):
        rows, size, make = [], int_value(ctx, self.size), self._maker(ctx)
        if size < 1:
            raise InvalidArgumentError(None, None, f"batch: batch_size must be positive, got {size}")
        fused = fused_rows(self, ctx) if self.plain_batch else None  # lines mapped by decode_csv
        if fused is not None:
            yield from fused
            return
        if self.inputs[0].row_blocks and type(self) is BatchNode:
            yield from self._from_blocks(ctx, size)
            return
        for e in self.inputs[0].iterate(ctx):
            if failed(e):  # TF1: the batch being gathered is dropped, its error raised
                rows = []
                yield e
                continue
            rows.append(e)
            if len(rows) == size:
                yield make(rows)
                rows = []
        if rows and not self.drop:
            yield make(rows)

    def _from_blocks(self, ctx, size):
        """Batches cut from blocks of rows (vectorized: slices, one concatenation per batch that
        straddles blocks)."""
        pieces, count = [], 0
        for block in self.inputs[0].iterate_blocks(ctx):
            n, start = int(block[0].shape[0]), 0
            while start < n:
                take = min(size - count, n - start)
                pieces.append(tuple(c[start:start + take] for c in block))
                count, start = count + take, start + take
                if count == size:
                    yield joined(pieces)
                    pieces, count = [], 0
        if count and not self.drop:
            yield joined(pieces)


class PaddedBatchNode(BatchNode):
    """`padded_batch`: each component padded to `padded_shapes` (unknown dimensions: the batch's
    largest) with `padding_values` (default 0)."""

    def __init__(self, node, batch_size, padded_shapes, padding_values=None, drop_remainder=False):
        _refuse_sparse(node.spec, "padded_batch")
        super().__init__(node, batch_size, drop_remainder)
        spec = node.spec
        shapes = _shape_leaves(padded_shapes, spec.output_types)
        self.pad_shapes = []
        for i, (p, s) in enumerate(zip(shapes, spec.shapes)):
            p = as_shape([None if d == -1 else d for d in p] if isinstance(p, (list, tuple)) else p)
            if p.ndims is None or not p.is_compatible_with(s) and s.ndims is not None and s.ndims != p.ndims:
                raise ValueError(f"padded_batch: padded shape {p} of component {i} is incompatible with the "
                                 f"element shape {s}")
            self.pad_shapes.append(p)
        if padding_values is None:
            self.pad_values = [np.zeros((), d.np_dtype) for d in spec.dtypes]
        else:
            vals = flatten(padding_values) if spec.structure is not None else [padding_values]
            self.pad_values = []
            for v, d in zip(vals, spec.dtypes):
                if hasattr(v, "_as_graph_element"):
                    v = v._as_graph_element()
                if isinstance(v, Tensor):  # read when the iterator starts
                    if v.dtype != d:
                        raise TypeError(f"padded_batch: padding value {v.name!r} has dtype {v.dtype.name}, "
                                        f"expected {d.name}")
                    self.captured = list(self.captured) + [v]
                    self.pad_values.append(v)
                else:
                    self.pad_values.append(to_numpy(v, d, what="padding_values"))
        lead = self.size if self.drop and isinstance(self.size, int) else None
        self.spec = ElementSpec(spec.structure, spec.dtypes,
                                [TensorShape([lead]).concatenate(p) for p in self.pad_shapes])

    def _maker(self, ctx):
        fills = [np.asarray(ctx.values[v]) if isinstance(v, Tensor) else v for v in self.pad_values]
        return lambda rows: self._padded(rows, fills)

    def _padded(self, rows, fills):
        out = []
        for i, (p, fill) in enumerate(zip(self.pad_shapes, fills)):
            comps = [r[i] for r in rows]
            rank = p.ndims
            for k, c in enumerate(comps):
                if c.ndim != rank:
                    raise InvalidArgumentError(None, None, f"padded_batch: element {k} of component {i} has rank "
                                               f"{c.ndim}, padded shape {p} has rank {rank}")
            target = [d if d is not None else max(c.shape[j] for c in comps) for j, d in enumerate(p.as_list())]
            batch = np.full([len(comps)] + target, fill, dtype=comps[0].dtype)
            for k, c in enumerate(comps):
                if any(a > b for a, b in zip(c.shape, target)):
                    raise InvalidArgumentError(None, None, f"padded_batch: element {k} of component {i} has shape "
                                               f"{list(c.shape)}, larger than the padded shape {target}")
                batch[(k,) + tuple(slice(0, n) for n in c.shape)] = c
            out.append(batch)
        return tuple(out)


class UnbatchNode(Node):
    def __init__(self, node):
        spec = node.spec
        _refuse_sparse(spec, "unbatch")
        for s in spec.shapes:
            if s.ndims == 0:
                raise ValueError("unbatch: every component needs rank >= 1")
        self.inputs = (node,)
        super().__init__(ElementSpec(spec.structure, spec.dtypes,
                                     [s[1:] if s.ndims is not None else TensorShape(None) for s in spec.shapes]))

    def iterate(self, ctx):
        for e in self.inputs[0].iterate(ctx):
            if failed(e):
                yield e
                continue
            n = {int(v.shape[0]) for v in e}
            if len(n) > 1:
                raise InvalidArgumentError(None, None, f"unbatch: components have different first dimensions "
                                           f"{sorted(n)}")
            for i in range(n.pop() if n else 0):
                yield tuple(v[i] for v in e)
