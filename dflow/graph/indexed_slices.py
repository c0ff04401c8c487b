"""`IndexedSlices`: a sparse gradient, rows `values` at `indices` of a dense tensor (TF1's).

The gradient of a gather along axis 0 (`embedding_lookup`) is one: `values` [n, ...] are the rows
to add at `indices` [n] (repeats add up) of a tensor of `dense_shape`. The autodiff engine
(gradients.py) passes it through the ops that accept it (Identity) and sums several of them by
concatenating; an op that needs the dense value gets it densified first
(`UnsortedSegmentSum(values, indices, dense_shape[0])`, made by its registered type: the graph layer
does not import the kernels). Optimizers apply it as a scatter that touches only those rows
(train/optimizer.py `_apply_sparse`). `tf.convert_to_tensor` densifies it as TF1 does.
"""

from __future__ import annotations

import collections
import warnings

import numpy as np

from . import dtypes
from .ops import Tensor, constant_value
from .shape import TensorShape

# Above this many dense elements TF1 warns when an IndexedSlices is densified
_LARGE_SPARSE_NUM_ELEMENTS = 100000000

IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue", ["values", "indices", "dense_shape"])


class IndexedSlices:
    """Rows `values` [n, ...] of a dense tensor of shape `dense_shape` at `indices` [n] (int32/int64)."""

    def __init__(self, values, indices, dense_shape=None):
        if not isinstance(values, Tensor) or not isinstance(indices, Tensor):
            raise TypeError("IndexedSlices: values and indices must be Tensors")
        if dense_shape is not None and not isinstance(dense_shape, Tensor):
            raise TypeError("IndexedSlices: dense_shape must be a Tensor or None")
        self._values, self._indices, self._dense_shape = values, indices, dense_shape

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._values.graph)
    name = property(lambda self: self._values.name)
    device = property(lambda self: self._values.device)

    @property
    def shape(self):
        """The static dense shape: the values' shape with the first dimension of dense_shape."""
        if self._dense_shape is not None:
            known = constant_value(self._dense_shape)
            if known is not None:
                return TensorShape([int(d) for d in np.asarray(known).reshape(-1)])
        vs = self._values.shape
        return TensorShape(None) if vs.ndims is None else TensorShape([None] + vs.as_list()[1:])

    def get_shape(self):
        return self.shape

    def __neg__(self):
        return IndexedSlices(self._values.graph.create_op("Neg", [self._values], {}, name="Neg").outputs[0],
                             self._indices, self._dense_shape)

    def __repr__(self):
        return (f"IndexedSlices(indices={self._indices!r}, values={self._values!r}"
                + (f", dense_shape={self._dense_shape!r})" if self._dense_shape is not None else ")"))


def densify(slices, name="densify", warn=True):
    """The dense tensor of an IndexedSlices (rows added into zeros); TF1's UserWarning when the
    dense shape is unknown or above 100M elements ("may consume a large amount of memory")."""
    if slices.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: {slices!r}")
    graph = slices.graph
    if warn:
        dense = slices.shape
        n = dense.num_elements()
        if n is None:
            warnings.warn("Converting sparse IndexedSlices to a dense Tensor of unknown shape. This may consume "
                          "a large amount of memory.", UserWarning, stacklevel=3)
        elif n >= _LARGE_SPARSE_NUM_ELEMENTS:
            warnings.warn(f"Converting sparse IndexedSlices to a dense Tensor with {n} elements. This may consume "
                          "a large amount of memory.", UserWarning, stacklevel=3)
    with graph.name_scope(name):
        idx = slices.indices
        rows = slices.shape[0].value if slices.shape.ndims else None
        if rows is not None:
            n = _const(graph, np.array(rows, idx.dtype.np_dtype), idx.dtype, "num_rows")
        else:
            n = graph.create_op("Slice", [slices.dense_shape, _const(graph, np.array([0], np.int32), _int32(), "begin"),
                                          _const(graph, np.array([1], np.int32), _int32(), "size")], {},
                                name="num_rows").outputs[0]
            n = graph.create_op("Reshape", [n, _const(graph, np.zeros([0], np.int32), _int32(), "scalar")], {},
                                name="num_segments").outputs[0]
            if n.dtype != idx.dtype:
                n = graph.create_op("Cast", [n], {"DstT": idx.dtype}, name="Cast").outputs[0]
        return graph.create_op("UnsortedSegmentSum", [slices.values, idx, n], {}, name="dense").outputs[0]


def _const(graph, value, dtype, name):
    value.setflags(write=False)
    return graph.create_op("Const", [], {"value": value, "dtype": dtype}, name=name).outputs[0]


def _int32():
    return dtypes.int32
