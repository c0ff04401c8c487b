"""Pipelines' sources: tensors (`from_tensors`, `from_tensor_slices`), `range`, Python generators,
file names (`list_files`), and the combinators of several pipelines (`zip`, `concatenate`).

A source's components are numpy values held here, or graph tensors (a placeholder fed to the
iterator's initializer) whose values are read when its iterator starts (`captured`).
"""

from __future__ import annotations

import glob
import os
import secrets

import numpy as np

from ..errors import InvalidArgumentError
from ..graph.dtypes import as_dtype, int64, string
from ..graph.ops import Tensor
from ..graph.shape import TensorShape
from ..kernels.common import convert_to_tensor, to_numpy
from .node import Node, component, failed, int_arg, int_value, rng
from .structure import (
    ElementSpec,
    flatten,
    has_sparse,
    is_structure,
    most_specific_compatible,
    pack,
    template_of,
)


def _component(v):
    """A numpy value or a Tensor, with TF1's conversion rules (a list holding tensors is stacked)."""
    if hasattr(v, "_as_graph_element") and not isinstance(v, Tensor):
        v = v._as_graph_element()
    if isinstance(v, Tensor):
        return v
    if isinstance(v, list) and any(isinstance(x, Tensor) or hasattr(x, "_as_graph_element") for x in v):
        return convert_to_tensor(v)
    return to_numpy(v, what="Dataset component")


def _components(tensors):
    structure = tensors if is_structure(tensors) else None
    leaves = [_component(v) for v in (flatten(tensors) if structure is not None else [tensors])]
    template = template_of(tensors) if structure is not None else None
    return template, leaves


def _static(v):
    if isinstance(v, Tensor):
        return v.dtype, v.shape
    return as_dtype(v.dtype), TensorShape(list(v.shape))


def _value(ctx, v):
    return component(ctx.values[v]) if isinstance(v, Tensor) else v


class TensorsNode(Node):
    """`from_tensors` (one element) or `from_tensor_slices` (`slices`: one element per row)."""

    def __init__(self, tensors, slices):
        if slices and has_sparse(tensors):
            raise TypeError("from_tensor_slices: slicing a SparseTensor is not done in dflow (from_tensors takes one)")
        template, self.leaves = _components(tensors)
        self.slices = slices
        dtypes, shapes = zip(*[_static(v) for v in self.leaves]) if self.leaves else ((), ())
        if slices:
            rows = set()
            for v, s in zip(self.leaves, shapes):
                if s.ndims == 0:
                    raise ValueError(f"from_tensor_slices: component {getattr(v, 'name', v)!r} is a scalar; "
                                     "slicing needs rank >= 1")
                if s.ndims is not None and s[0].value is not None:
                    rows.add(s[0].value)
            if len(rows) > 1:
                raise ValueError(f"from_tensor_slices: components have different first dimensions {sorted(rows)}")
            shapes = [s[1:] if s.ndims is not None else TensorShape(None) for s in shapes]
        super().__init__(ElementSpec(template, dtypes, shapes))
        self.captured = [v for v in self.leaves if isinstance(v, Tensor)]

    @property
    def row_blocks(self):
        return self.slices

    def iterate_blocks(self, ctx):
        values = tuple(_value(ctx, v) for v in self.leaves)
        n = {int(v.shape[0]) for v in values}
        if len(n) > 1:
            raise InvalidArgumentError(None, None, f"from_tensor_slices: components have different first "
                                       f"dimensions {sorted(n)}")
        yield values

    def cardinality(self):
        if not self.slices:
            return 1
        if self.captured:
            return None
        return int(self.leaves[0].shape[0])

    def iterate(self, ctx):
        values = [_value(ctx, v) for v in self.leaves]
        if not self.slices:
            yield tuple(values)
            return
        n = {int(v.shape[0]) for v in values}
        if len(n) > 1:
            raise InvalidArgumentError(None, None, f"from_tensor_slices: components have different first "
                                       f"dimensions {sorted(n)}")
        for i in range(n.pop() if n else 0):
            yield tuple(v[i] for v in values)


class RangeNode(Node):
    """`range(start, stop, step)`; each bound an int or a scalar tensor (read when the iterator starts)."""

    def __init__(self, start, stop, step, dtype=int64):
        self.bounds = [int_arg(self, v) for v in (start, stop, step)]
        if isinstance(self.bounds[2], int) and self.bounds[2] == 0:
            raise InvalidArgumentError(None, None, "Dataset.range: step must not be 0")
        super().__init__(ElementSpec(None, [dtype], [TensorShape([])]))
        self.np_dtype = as_dtype(dtype).np_dtype

    def cardinality(self):
        return len(range(*self.bounds)) if all(isinstance(b, int) for b in self.bounds) else None

    def iterate(self, ctx):
        start, stop, step = (int_value(ctx, b) for b in self.bounds)
        if step == 0:
            raise InvalidArgumentError(None, None, "Dataset.range: step must not be 0")
        dt = self.np_dtype
        for i in range(start, stop, step):
            yield (np.asarray(i, dtype=dt),)


class GeneratorNode(Node):
    """`from_generator`: each value the generator yields, converted to the declared dtypes and
    checked against the declared shapes."""

    def __init__(self, generator, output_types, output_shapes=None, args=None):
        if not callable(generator):
            raise TypeError("from_generator: `generator` must be callable")
        template = pack(output_types, [None] * len(flatten(output_types))) if is_structure(output_types) else None
        super().__init__(ElementSpec.of(template, output_types, output_shapes))
        self.generator = generator
        self.args = [_component(a) for a in (args or ())]
        self.captured = [a for a in self.args if isinstance(a, Tensor)]

    def iterate(self, ctx):
        args = [_value(ctx, a) for a in self.args]
        spec = self.spec
        for value in self.generator(*args):
            leaves = flatten(value) if spec.structure is not None else [value]
            if len(leaves) != len(spec):
                raise InvalidArgumentError(None, None, f"from_generator: yielded {value!r}, which does not match "
                                           f"the declared structure {spec.output_types}")
            out = []
            for i, (v, d, s) in enumerate(zip(leaves, spec.dtypes, spec.shapes)):
                try:
                    a = to_numpy(v, d, what="from_generator value")
                except TypeError as e:
                    raise InvalidArgumentError(None, None, f"from_generator: component {i} of {value!r} is not "
                                               f"convertible to {d.name}: {e}") from None
                if not s.is_compatible_with(a.shape):
                    raise InvalidArgumentError(None, None, f"from_generator: component {i} has shape {list(a.shape)}, "
                                               f"expected a shape compatible with {s}")
                out.append(a)
            yield tuple(out)


class ZipNode(Node):
    def __init__(self, nodes, template):
        self.inputs = tuple(nodes)
        dtypes = [d for n in nodes for d in n.spec.dtypes]
        shapes = [s for n in nodes for s in n.spec.shapes]
        super().__init__(ElementSpec(template, dtypes, shapes))

    def cardinality(self):
        cs = [n.cardinality() for n in self.inputs]
        return None if None in cs else min(cs)

    def iterate(self, ctx):
        its = [n.iterate(ctx) for n in self.inputs]
        while True:
            out, error = (), None
            for it in its:
                try:
                    e = next(it)
                except StopIteration:
                    return
                if failed(e):
                    error = error or e
                else:
                    out += tuple(e)
            yield error or out  # an element that failed takes the others' of its round with it (TF1)


class ConcatenateNode(Node):
    def __init__(self, first, second):
        a, b = first.spec, second.spec
        if a.dtypes != b.dtypes or len(a) != len(b):
            raise TypeError(f"concatenate: the datasets have different types: {a.output_types} and {b.output_types}")
        self.inputs = (first, second)
        super().__init__(ElementSpec(a.structure, a.dtypes,
                                     [most_specific_compatible(x, y) for x, y in zip(a.shapes, b.shapes)]))

    def cardinality(self):
        a, b = (n.cardinality() for n in self.inputs)
        return None if a is None or b is None else a + b

    def iterate(self, ctx):
        for n in self.inputs:
            yield from n.iterate(ctx)


def _names(value):
    """File patterns as a list of str (a str, bytes, a list of them, or a string array)."""
    flat = np.asarray(value, dtype=object).reshape(-1)
    out = []
    for v in flat:
        if not isinstance(v, (str, bytes)):
            raise InvalidArgumentError(None, None, f"list_files: file_pattern must be strings, got {v!r}")
        out.append(v.decode() if isinstance(v, bytes) else v)
    return out


class ListFilesNode(Node):
    """`list_files`: the file names matching one pattern or several (glob), sorted, as scalar
    `string` elements (bytes); shuffled with `shuffle`'s seed rules, a new order per start
    (`repeat`), as TF1's full-buffer shuffle of them. No match raises InvalidArgumentError."""

    def __init__(self, file_pattern, shuffle=True, seeds=(None, None)):
        if isinstance(file_pattern, (str, bytes)) or (isinstance(file_pattern, (list, tuple)) and all(
                isinstance(v, (str, bytes)) for v in file_pattern)):
            self.pattern = _names(file_pattern)
        else:
            self.pattern = _component(file_pattern)
            d = _static(self.pattern)[0]
            if d != string:
                raise TypeError(f"list_files: file_pattern must be a string tensor, got {d.name}")
        self.captured = [self.pattern] if isinstance(self.pattern, Tensor) else []
        self.shuffle = bool(shuffle)
        self.seeds = seeds  # (graph seed, op seed), or (None, None): drawn per iterator
        self._token = secrets.randbits(32)
        super().__init__(ElementSpec(None, [string], [TensorShape([])]))

    def iterate(self, ctx):
        patterns = _names(ctx.values[self.pattern]) if isinstance(self.pattern, Tensor) else self.pattern
        names = sorted(os.fspath(n) for p in patterns for n in glob.glob(p))  # TF keeps duplicates
        if not names:
            raise InvalidArgumentError(None, None, f"No files matched pattern: {', '.join(patterns)}")
        if self.shuffle:
            k = ctx.start(self)
            r = (rng(ctx.seed, self._token, k) if self.seeds == (None, None)
                 else rng(self.seeds[0], self.seeds[1], k))
            names = [names[i] for i in r.permutation(len(names))]
        for n in names:
            yield (np.array(n.encode(), dtype=object),)
