"""A minimal `tf.SparseTensor`: the triple (indices, values, dense_shape) of TF1, its fetched form
`SparseTensorValue`, and `SparseToDense` (`tf.sparse.to_dense`, `tf.sparse_to_dense`).

A SparseTensor is not an op: it holds three graph tensors (int64 indices [N, rank], values [N],
int64 dense_shape [rank]); `Session.run` fetches it as a SparseTensorValue of three numpy arrays
(schedule/fetches.py). Ops producing one (`parse_example`'s VarLenFeature) return the three
outputs wrapped here; `tf.data` elements hold them as three components (data/structure.py). Only
densifying is an op; `sparse_placeholder` is three placeholders, which a SparseTensorValue feeds
(schedule/session.py). The sparse products, sums and additions are composites in dflow/sparse.py.
"""

from __future__ import annotations

import collections

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.ops import Tensor, _session_for, constant_value
from ..graph.registry import def_grad, register_op
from ..graph.shape import TensorShape, unknown_shape
from .array_ops import placeholder, reshape
from .common import INT, apply_op, check_dtype, convert_to_tensor
from .math_ops import cast, subtract
from .reduction_ops import reduce_sum

__all__ = ["SparseTensor", "SparseTensorValue", "sparse_placeholder", "sparse_tensor_to_dense", "sparse_to_dense"]

SparseTensorValue = collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])


class SparseTensor:
    """A sparse tensor (TF1's `tf.SparseTensor(indices, values, dense_shape)`): `indices` int64
    [N, rank], `values` [N] of any dtype, `dense_shape` int64 [rank]. ValueError at build time for
    tensors of the wrong ranks."""

    def __init__(self, indices, values, dense_shape):
        indices = convert_to_tensor(indices, dtype=None if isinstance(indices, Tensor) else dtypes.int64)
        if not indices.dtype.is_integer:
            raise TypeError(f"SparseTensor: indices must be int64, got {indices.dtype.name}")
        self._indices = indices if indices.dtype == dtypes.int64 else cast(indices, dtypes.int64)
        self._values = convert_to_tensor(values)
        self._dense_shape = convert_to_tensor(dense_shape, dtype=dtypes.int64)
        self._indices.shape.with_rank(2)
        self._values.shape.with_rank(1)
        self._dense_shape.shape.with_rank(1)

    @classmethod
    def from_value(cls, sparse_tensor_value):
        """A SparseTensor of constants from a SparseTensorValue (or a SparseTensor, returned as is)."""
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        return cls(np.asarray(sparse_tensor_value.indices, np.int64), sparse_tensor_value.values,
                   np.asarray(sparse_tensor_value.dense_shape, np.int64))

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._values.graph)

    @property
    def shape(self):
        """The static dense shape: known where dense_shape is a build-time constant, else its rank."""
        value = constant_value(self._dense_shape)
        if value is not None:
            return TensorShape([int(d) for d in np.asarray(value).reshape(-1)])
        n = self._dense_shape.shape.num_elements()
        return unknown_shape() if n is None else TensorShape([None] * n)

    def get_shape(self):
        return self.shape

    def eval(self, feed_dict=None, session=None):
        """The SparseTensorValue of this tensor in `session` (default: the default session)."""
        return _session_for(self.graph, session, what=f"SparseTensor {self._values.name!r}").run(self, feed_dict)

    def __repr__(self):
        return f"SparseTensor(indices={self._indices!r}, values={self._values!r}, dense_shape={self._dense_shape!r})"


def sparse_placeholder(dtype, shape=None, name=None):
    """A SparseTensor of placeholders (TF1's `tf.sparse_placeholder`), fed a SparseTensorValue:
    indices int64 [None, rank], values `dtype` [None], dense_shape int64 [rank] (a constant when
    `shape` is fully known). Names "<name>/indices", "/values", "/shape"."""
    known = None if shape is None else TensorShape(shape)
    rank = None if known is None else known.ndims

    def part(suffix):
        return None if name is None else f"{name}/{suffix}"

    if known is not None and known.is_fully_defined():
        dense_shape = convert_to_tensor(np.asarray(known.as_list(), np.int64), name=part("shape"))
    else:
        dense_shape = placeholder(dtypes.int64, [rank], name=part("shape"))
    return SparseTensor(placeholder(dtypes.int64, [None, rank], name=part("indices")),
                        placeholder(dtype, [None], name=part("values")), dense_shape)


# ---- SparseToDense ---------------------------------------------------------------------------------


def _to_dense_infer(inputs, attrs):
    indices, output_shape, values, default = inputs
    check_dtype(indices, INT, "SparseToDense", arg="sparse_indices")
    check_dtype(output_shape, INT, "SparseToDense", arg="output_shape")
    if indices.shape.ndims is not None and indices.shape.ndims > 2:
        raise ValueError(f"SparseToDense: sparse_indices should be a scalar, vector, or matrix, got shape "
                         f"{indices.shape}")
    if values.dtype != default.dtype:
        raise TypeError(f"SparseToDense: default_value is {default.dtype.name} but sparse_values are "
                        f"{values.dtype.name}")
    default.shape.with_rank(0)
    known = constant_value(output_shape)
    if known is not None:
        return TensorShape([int(d) for d in np.asarray(known).reshape(-1)]), values.dtype
    n = output_shape.shape.num_elements()
    return (unknown_shape() if n is None else TensorShape([None] * n)), values.dtype


def _index_rows(indices, rank):
    rows = np.asarray(indices, dtype=np.int64)
    return rows.reshape(-1, 1) if rows.ndim < 2 else rows.reshape(-1, rank if rows.size else rows.shape[-1])


def _to_dense_eager(xp, indices, output_shape, values, default, validate_indices):
    shape = tuple(int(d) for d in np.asarray(output_shape).reshape(-1))
    rows = _index_rows(indices, len(shape))
    values = np.asarray(values)
    if rows.shape[1] != len(shape):
        raise InvalidArgumentError(None, None, f"SparseToDense: sparse_indices[1] has {rows.shape[1]} columns, "
                                   f"output_shape has {len(shape)} entries")
    if values.ndim and values.shape[0] != rows.shape[0]:
        raise InvalidArgumentError(None, None, f"SparseToDense: sparse_values has {values.shape[0]} entries, "
                                   f"sparse_indices {rows.shape[0]} rows")
    out = np.full(shape, np.asarray(default)[()], dtype=values.dtype)
    bounds = np.asarray(shape, dtype=np.int64)
    bad = np.nonzero(((rows < 0) | (rows >= bounds)).any(axis=1))[0]
    if bad.size:
        i = int(bad[0])
        raise InvalidArgumentError(None, None, f"indices[{i}] = [{','.join(str(int(v)) for v in rows[i])}] is out "
                                   f"of bounds: need 0 <= index < [{','.join(str(d) for d in shape)}]")
    if validate_indices and rows.shape[0] > 1:
        lin = np.ravel_multi_index(tuple(rows.T), shape) if shape else np.zeros(rows.shape[0], np.int64)
        step = np.diff(lin)
        bad = np.nonzero(step <= 0)[0]
        if bad.size:
            i = int(bad[0]) + 1
            what = "is repeated" if step[bad[0]] == 0 else ("is out of order. Many sparse ops require sorted "
                                                           "indices.\n    Use `tf.sparse.reorder` to create a "
                                                           "correctly ordered copy.\n\n")
            raise InvalidArgumentError(None, None, f"indices[{i}] = [{','.join(str(int(v)) for v in rows[i])}] "
                                       f"{what}")
    if rows.shape[0]:
        out[tuple(rows.T)] = values
    return out


def _to_dense_lower(ctx, indices, output_shape, values, default, validate_indices):
    shape = tuple(int(d) for d in np.asarray(ctx.host_value(output_shape, "output_shape")).reshape(-1))
    dt = ctx.op.outputs[0].dtype.np_dtype
    return ctx.delayed(_to_dense_eager, np, indices, np.asarray(shape, np.int64), values, default,
                       validate_indices, shape=shape, dtype=dt, meta=np.empty((0,) * len(shape), dt))


register_op("SparseToDense", _to_dense_infer, eager=_to_dense_eager, lower=_to_dense_lower)


@def_grad("SparseToDense")
def _to_dense_grad(op, g):
    indices = op.inputs[0]
    if indices.shape.ndims is not None and indices.shape.ndims < 2:
        indices = reshape(indices, [-1, 1])
    values_grad = apply_op("GatherNd", [g, indices], {"batch_dims": 0})  # GatherNd lives above this module
    return [None, None, values_grad, subtract(reduce_sum(g), reduce_sum(values_grad))]


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0, validate_indices=True,
                    name=None):
    """A dense tensor of `output_shape` holding `sparse_values` at `sparse_indices` (rows of a
    [N, rank] matrix, or a vector/scalar for rank 1) and `default_value` elsewhere (TF1's
    `tf.sparse_to_dense`). InvalidArgumentError at run time for an index out of bounds, or, with
    `validate_indices`, repeated or not in row-major order."""
    values = convert_to_tensor(sparse_values)
    default = convert_to_tensor(default_value, dtype=values.dtype)
    indices = convert_to_tensor(sparse_indices)
    shape = convert_to_tensor(output_shape, dtype=indices.dtype if indices.dtype in (dtypes.int32, dtypes.int64)
                              else None)
    return apply_op("SparseToDense", [indices, shape, values, default],
                    {"validate_indices": bool(validate_indices)}, name=name, default_name="SparseToDense")


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor of a SparseTensor, `default_value` (0, or b"" for strings) where it holds
    nothing (TF1's `tf.sparse.to_dense`, `tf.sparse_tensor_to_dense`)."""
    if isinstance(sp_input, SparseTensorValue):
        sp_input = SparseTensor.from_value(sp_input)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}")
    if default_value is None:
        default_value = b"" if sp_input.dtype == dtypes.string else 0
    return sparse_to_dense(sp_input.indices, sp_input.dense_shape, sp_input.values, default_value,
                           validate_indices, name=name or "SparseToDense")

