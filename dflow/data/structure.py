"""Nested element structures of datasets (tf.data's `nest`): tuples, namedtuples and dicts are
structure; everything else (lists included, as in tf.data) is a leaf. A dataset's element is
kept flat (a tuple of numpy arrays) beside an `ElementSpec` naming its structure, dtypes and
static shapes."""

from __future__ import annotations

from ..graph.dtypes import as_dtype
from ..graph.ops import Tensor
from ..graph.shape import TensorShape, as_shape


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def is_structure(x):
    return isinstance(x, (tuple, dict))


def flatten(x):
    """The leaves of `x` in order (dict keys sorted, as tf.data)."""
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in flatten(x[k])]
    if isinstance(x, tuple):
        return [leaf for v in x for leaf in flatten(v)]
    return [x]


def pack(template, leaves):
    """`leaves` arranged as `template`."""
    it = iter(leaves)

    def build(t):
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

    def nested(self, leaves):
        return pack(self.structure, leaves) if is_structure(self.structure) else leaves[0]

    @property
    def output_types(self):
        return self.nested(self.dtypes)

    @property
    def output_shapes(self):
        return self.nested(self.shapes)

    @property
    def output_classes(self):
        return self.nested([Tensor] * len(self.dtypes))

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
