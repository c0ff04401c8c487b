"""Nested element structures of datasets (tf.data's `nest`): tuples, namedtuples and dicts are
structure; everything else (lists included, as in tf.data) is a leaf. A dataset's element is
kept flat (a tuple of numpy arrays) beside an `ElementSpec` naming its structure, dtypes and
static shapes.

A SparseTensor (or SparseTensorValue) in an element is three flat components, its indices
(int64 [N, rank]), values ([N]) and dense_shape (int64 [rank]); its place in a template is
`SPARSE`, and `pack` makes a SparseTensor of three tensors or a SparseTensorValue of three arrays.
"""

from __future__ import annotations

from ..graph.dtypes import as_dtype
from ..graph.ops import Tensor
from ..graph.shape import TensorShape, as_shape
from ..kernels.sparse_ops import SparseTensor, SparseTensorValue


class SparseSlot:
    """The place of a SparseTensor in a template: three flat components."""

    __slots__ = ()

    def __repr__(self):
        return "SPARSE"

    def __reduce__(self):
        return (_sparse_slot, ())


def _sparse_slot():
    return SPARSE


SPARSE = SparseSlot()


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def is_sparse(x):
    return isinstance(x, (SparseTensor, SparseTensorValue, SparseSlot))


def has_sparse(x):
    """Whether the structure `x` holds a sparse tensor (or a SPARSE place)."""
    if is_sparse(x):
        return True
    if isinstance(x, dict):
        return any(has_sparse(v) for v in x.values())
    return isinstance(x, tuple) and any(has_sparse(v) for v in x)


def is_structure(x):
    return isinstance(x, (tuple, dict)) or is_sparse(x)


def flatten(x):
    """The leaves of `x` in order (dict keys sorted, as tf.data; a sparse tensor's three parts)."""
    if isinstance(x, (SparseTensor, SparseTensorValue)):
        return [x.indices, x.values, x.dense_shape]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in flatten(x[k])]
    if isinstance(x, tuple):
        return [leaf for v in x for leaf in flatten(v)]
    return [x]


def template_of(x):
    """`x`'s structure with None leaves and SPARSE for its sparse tensors."""
    if isinstance(x, (SparseTensor, SparseTensorValue, SparseSlot)):
        return SPARSE
    if isinstance(x, dict):
        return type(x)((k, template_of(v)) for k, v in x.items()) if type(x) is not dict else {
            k: template_of(v) for k, v in x.items()}
    if _is_namedtuple(x):
        return type(x)(*[template_of(v) for v in x])
    if isinstance(x, tuple):
        return tuple(template_of(v) for v in x)
    return None


def _sparse_of(indices, values, dense_shape):
    if isinstance(values, Tensor):
        return SparseTensor(indices, values, dense_shape)
    return SparseTensorValue(indices, values, dense_shape)


def pack(template, leaves, sparse=_sparse_of):
    """`leaves` arranged as `template`; each SPARSE takes three leaves, combined by `sparse`."""
    it = iter(leaves)

    def build(t):
        if isinstance(t, SparseSlot):
            return sparse(next(it), next(it), next(it))
        if isinstance(t, dict):
            built = {k: build(t[k]) for k in sorted(t)}
            return type(t)((k, built[k]) for k in t) if type(t) is not dict else {k: built[k] for k in t}
        if _is_namedtuple(t):
            return type(t)(*[build(v) for v in t])
        if isinstance(t, tuple):
            return tuple(build(v) for v in t)
        return next(it)

    return build(template)


def same_structure(a, b):
    if isinstance(a, SparseSlot) or isinstance(b, SparseSlot):
        return isinstance(a, SparseSlot) and isinstance(b, SparseSlot)
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b) and all(
            same_structure(a[k], b[k]) for k in a)
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(
            same_structure(x, y) for x, y in zip(a, b))
    return True


class ElementSpec:
    """What a dataset's elements are: `structure` (a template whose leaves are placeholders),
    flat `dtypes` (DType) and `shapes` (TensorShape, possibly partial)."""

    def __init__(self, structure, dtypes, shapes):
        self.structure = structure
        self.dtypes = [as_dtype(d) for d in dtypes]
        self.shapes = [as_shape(s) for s in shapes]

    @classmethod
    def of(cls, template, dtypes, shapes=None):
        """A spec from nested `dtypes` (and nested `shapes`, default unknown) shaped as `template`."""
        flat_t = flatten(dtypes)
        # matched against the dtypes' structure: a tuple of ints is one shape, not a structure
        flat_s = _shape_leaves(shapes, dtypes) if shapes is not None else [None] * len(flat_t)
        return cls(template, flat_t, [TensorShape(None) if s is None else as_shape(s) for s in flat_s])

    def __len__(self):
        return len(self.dtypes)

    def nested(self, leaves, sparse=_sparse_of):
        return pack(self.structure, leaves, sparse) if is_structure(self.structure) else leaves[0]

    @property
    def output_types(self):
        return self.nested(self.dtypes, lambda i, v, s: v)  # a sparse tensor: its values' dtype

    @property
    def output_shapes(self):
        return self.nested(self.shapes, lambda i, v, s: TensorShape(None) if s.ndims is None or s[0].value is None
                           else TensorShape([None] * s[0].value))  # a sparse tensor: its dense rank

    @property
    def output_classes(self):
        return self.nested([Tensor] * len(self.dtypes), lambda i, v, s: SparseTensor)

    def sparse_starts(self):
        """The flat index of each sparse tensor's first component (its indices)."""
        starts = []
        if is_structure(self.structure):
            pack(self.structure, range(len(self.dtypes)), lambda i, v, s: starts.append(i))
        return starts

    def with_shapes(self, shapes):
        return ElementSpec(self.structure, self.dtypes, shapes)

    def compatible(self, other):
        return (same_structure(self.structure, other.structure) and self.dtypes == other.dtypes
                and all(a.is_compatible_with(b) for a, b in zip(self.shapes, other.shapes)))

    def describe(self):
        return f"types {self.output_types}, shapes {self.output_shapes}"


def _shape_leaves(shapes, dtypes):
    """Shapes matched against the dtypes' structure, where a tuple of ints/None is one shape."""
    if isinstance(dtypes, dict):
        return [s for k in sorted(dtypes) for s in _shape_leaves(shapes[k], dtypes[k])]
    if isinstance(dtypes, tuple):
        return [s for d, sh in zip(dtypes, shapes) for s in _shape_leaves(sh, d)]
    return [shapes]


def most_specific_compatible(a, b):
    """The most specific TensorShape compatible with both (dimensions that differ become None)."""
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])
