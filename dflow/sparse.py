"""`dflow.sparse`: TF1's `tf.sparse` namespace and the sparse ops of the top namespace, as far as
embeddings and sparse features need: the SparseTensor (kernels/sparse_ops.py), `placeholder`,
`to_dense`, `sparse_dense_matmul` (`tf.sparse_tensor_dense_matmul`), `reduce_sum`
(`tf.sparse_reduce_sum`) and `add` (`tf.sparse_add`).

They are composites of registered ops, so their gradients come from those ops': the product
gathers rows of the dense side at the column ids and adds them per row (`unsorted_segment_sum`),
so its gradient with respect to a dense variable is an IndexedSlices of the rows used. The rest
of TF1's family (reorder, reshape, transpose, slice, concat, split, retain, reset_shape,
fill_empty_rows, to_indicator, merge, maximum, minimum, softmax, reduce_max(_sparse),
reduce_sum_sparse, segment_sum/mean/sqrt_n, mask) is in kernels/sparse_manip_ops.py and
kernels/sparse_math_ops.py, named here without the `sparse_` prefix. Not done: serialize_sparse,
serialize_many_sparse, deserialize_many_sparse, sparse_cross, sparse_tensor_to_dense's siblings
of tf.sparse beyond these (their names raise the AttributeError that says so).
"""

from __future__ import annotations

import numpy as np

from .graph import dtypes
from .graph.graph import name_scope
from .kernels.array_ops import reshape as _reshape
from .kernels.array_ops import shape as _shape
from .kernels.array_ops import size, stack
from .kernels.common import constant, convert_to_tensor
from .kernels.creation_ops import ones, zeros, zeros_like
from .kernels.creation_ops import range as _range
from .kernels.data_dependent_ops import boolean_mask, gather_nd, unique
from .kernels.gather_ops import gather, top_k
from .kernels.manip_ops import concat as _concat
from .kernels.manip_ops import transpose as _transpose
from .kernels.math_ops import abs as tf_abs
from .kernels.math_ops import add as tf_add
from .kernels.math_ops import cast, greater_equal, multiply, negative, not_equal, where
from .kernels.math_ops import minimum as _dense_minimum
from .kernels.reduction_ops import reduce_sum as dense_reduce_sum
from .kernels.scatter_ops import unsorted_segment_sum
from .kernels.sparse_manip_ops import *  # noqa: F403
from .kernels.sparse_manip_ops import __all__ as _manip_all
from .kernels.sparse_manip_ops import rank_of
from .kernels.sparse_math_ops import *  # noqa: F403
from .kernels.sparse_math_ops import __all__ as _math_all
from .kernels.sparse_ops import (
    SparseTensor,
    SparseTensorValue,
    sparse_placeholder,
    sparse_tensor_to_dense,
)

__all__ = ["SparseTensor", "placeholder", "to_dense", "sparse_dense_matmul", "reduce_sum", "add", "matmul",
           "from_dense", "eye", "expand_dims"]
# TF1's tf.sparse.X for each tf.sparse_X of kernels/sparse_manip_ops.py and sparse_math_ops.py
__all__ += [n[len("sparse_"):] for n in _manip_all + _math_all]


def _as_sparse(sp, what="sp_a"):
    if isinstance(sp, SparseTensorValue):
        return SparseTensor.from_value(sp)
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"{what} must be a SparseTensor, got {type(sp).__name__}")
    return sp


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor of a SparseTensor, `default_value` (0, or b"" for strings) elsewhere."""
    return sparse_tensor_to_dense(sp_input, default_value, validate_indices, name)


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """sp_a @ b for a rank-2 SparseTensor sp_a [m, k] (its conjugate transpose with `adjoint_a`)
    and a dense b [k, n] (with `adjoint_b`, b is [n, k]). Repeated indices add up. Gradients flow to
    b and to sp_a.values. Output [m, n] of b's dtype."""
    sp_a = _as_sparse(sp_a)
    with name_scope(name, "SparseTensorDenseMatMul", [sp_a.indices, sp_a.values, b]) as scope:
        b = convert_to_tensor(b, name="b")
        if sp_a.values.dtype != b.dtype:
            raise TypeError(f"sparse_tensor_dense_matmul: sp_a has dtype {sp_a.values.dtype.name}, b "
                            f"{b.dtype.name}")
        if b.shape.ndims not in (None, 2):
            raise ValueError(f"sparse_tensor_dense_matmul: b must be a matrix, got shape {b.shape}")
        if (adjoint_a or adjoint_b) and b.dtype.is_complex:
            raise ValueError("sparse_tensor_dense_matmul: adjoints of complex tensors are not supported by dflow")
        if adjoint_b:
            b = _transpose(b)
        values = sp_a.values
        row_axis, col_axis = (1, 0) if adjoint_a else (0, 1)
        rows, cols = sp_a.indices[:, row_axis], sp_a.indices[:, col_axis]
        known = sp_a.shape
        m = known[row_axis].value if known.ndims == 2 else None
        num_rows = m if m is not None else sp_a.dense_shape[row_axis]
        picked = multiply(gather(b, cols), _reshape(values, [-1, 1]))
        return unsorted_segment_sum(picked, rows, num_rows, name=scope)


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The sum of a SparseTensor's values over `axis` (all axes: a scalar), as a dense tensor (TF1's
    `tf.sparse_reduce_sum`; `reduction_axes`/`keep_dims` are the old names)."""
    sp_input = _as_sparse(sp_input, "sp_input")
    axis = reduction_axes if axis is None else axis
    keepdims = keep_dims if keepdims is None else keepdims
    rank = sp_input.dense_shape.shape[0].value
    if axis is None:
        total = dense_reduce_sum(sp_input.values)
        return _reshape(total, [1] * rank) if keepdims and rank is not None else total
    if rank is None:
        raise ValueError("sparse_reduce_sum: the rank of sp_input must be known")
    axes = sorted({int(a) % rank for a in (axis if isinstance(axis, (list, tuple)) else [axis])})
    kept = [d for d in range(rank) if d not in axes]
    # each value goes to the segment of its kept coordinates (repeated indices add up)
    dims = [sp_input.dense_shape[d] for d in kept]
    segment = convert_to_tensor(np.int64(0))
    for d, n in zip(kept, dims):
        segment = segment * n + sp_input.indices[:, d]
    num = convert_to_tensor(np.int64(1))
    for n in dims:
        num = num * n
    out = unsorted_segment_sum(sp_input.values, segment, num)
    out_shape = [sp_input.dense_shape[d] if d in kept else convert_to_tensor(np.int64(1)) for d in range(rank)] \
        if keepdims else dims
    return _reshape(out, stack(out_shape) if out_shape else convert_to_tensor(np.zeros([0], np.int64)))


def sparse_add(a, b, thresh=0, threshold=None):
    """a + b. A SparseTensor and a dense tensor give a dense tensor; two SparseTensors of one dense
    shape give a SparseTensor whose values at the same index are summed (indices in row-major
    order), dropping sums with |value| < thresh."""
    if threshold is not None:
        thresh = threshold
    a_sparse = isinstance(a, (SparseTensor, SparseTensorValue))
    b_sparse = isinstance(b, (SparseTensor, SparseTensorValue))
    if not (a_sparse or b_sparse):
        raise TypeError("At least one input should be SparseTensor; do you mean to use tf.add()?")
    with name_scope(None, "SparseAdd"):
        if a_sparse != b_sparse:
            sp, dense = (_as_sparse(a, "a"), b) if a_sparse else (_as_sparse(b, "b"), a)
            dense = convert_to_tensor(dense)
            return tf_add(sparse_tensor_to_dense(sp, validate_indices=False), dense)
        a, b = _as_sparse(a, "a"), _as_sparse(b, "b")
        dense_shape = a.dense_shape
        strides = _row_major_strides(dense_shape)
        indices = _concat([a.indices, b.indices], 0)
        values = _concat([a.values, b.values], 0)
        linear = dense_reduce_sum(multiply(indices, _reshape(strides, [1, -1])), 1)
        uniq, pos = unique(linear, out_idx=dtypes.int32)
        summed = unsorted_segment_sum(values, pos, size(uniq))
        order = top_k(negative(uniq), k=size(uniq)).indices  # ascending linear index: row-major order
        uniq, summed = gather(uniq, order), gather(summed, order)
        if not (isinstance(thresh, (int, float)) and thresh == 0):
            keep = greater_equal(tf_abs(summed), convert_to_tensor(thresh, dtype=summed.dtype))
            uniq, summed = boolean_mask(uniq, keep), boolean_mask(summed, keep)
        new_indices = _unravel(uniq, strides, dense_shape)
        return SparseTensor(new_indices, summed, dense_shape)


def _row_major_strides(dense_shape):
    """int64 [rank]: the stride of each dimension in a row-major layout of `dense_shape`."""
    rank = dense_shape.shape[0].value
    if rank is None:
        raise ValueError("sparse_add: the rank of the SparseTensors must be known")
    parts = [convert_to_tensor(np.int64(1))]
    for d in range(rank - 1, 0, -1):
        parts.insert(0, parts[0] * dense_shape[d])
    return convert_to_tensor(parts)


def _unravel(linear, strides, dense_shape):
    rank = strides.shape[0].value
    cols = []
    for d in range(rank):
        cols.append((linear // strides[d]) % dense_shape[d])
    return stack(cols, axis=1)


sparse_dense_matmul = sparse_tensor_dense_matmul
matmul = sparse_tensor_dense_matmul
add = sparse_add
placeholder = sparse_placeholder
globals().update({n[len("sparse_"):]: globals()[n] for n in _manip_all + _math_all})


def reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """TF1's `tf.sparse.reduce_sum` (see `sparse_reduce_sum`)."""
    return sparse_reduce_sum(sp_input, axis, keepdims, reduction_axes, keep_dims)


from .tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)  # a TF1 name dflow lacks says so (docs/tf1_coverage.md)


def from_dense(tensor, name=None):
    """The SparseTensor of a dense tensor's non-zero entries (non-empty strings), row-major."""
    with name_scope(name, "dense_to_sparse", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        indices = where(not_equal(tensor, zeros_like(tensor)))
        return SparseTensor(indices, gather_nd(tensor, indices), _shape(tensor, out_type=dtypes.int64))


def eye(num_rows, num_columns=None, dtype=dtypes.float32, name=None):
    """The identity matrix [num_rows, num_columns] as a SparseTensor (ones on the diagonal)."""
    with name_scope(name, "eye", [num_rows, num_columns]):
        rows = cast(convert_to_tensor(num_rows, name="num_rows"), dtypes.int64)
        cols = rows if num_columns is None else cast(convert_to_tensor(num_columns, name="num_columns"),
                                                     dtypes.int64)
        diag = _range(_dense_minimum(rows, cols))
        return SparseTensor(stack([diag, diag], axis=1), ones(_reshape(_dense_minimum(rows, cols), [1]), dtype=dtype),
                            stack([rows, cols]))


def expand_dims(sp_input, axis=None, name=None):
    """`sp_input` with a dimension of size 1 inserted at `axis` (an int in [-rank-1, rank]; None:
    -1, the end, as TF)."""
    sp = _as_sparse(sp_input, "sp_input")
    rank = rank_of(sp, "expand_dims")
    axis = -1 if axis is None else int(axis)
    if not -rank - 1 <= axis <= rank:
        raise ValueError(f"expand_dims: axis {axis} is out of range [{-rank - 1}, {rank}] for a rank {rank} "
                         "SparseTensor")
    if axis < 0:
        axis += rank + 1
    with name_scope(name, "ExpandDims", [sp.indices, sp.values, sp.dense_shape]):
        n = size(sp.values, out_type=dtypes.int64)
        column = zeros(stack([n, constant(1, dtypes.int64)]), dtype=dtypes.int64)
        indices = _concat([sp.indices[:, :axis], column, sp.indices[:, axis:]], 1)
        shape = _concat([sp.dense_shape[:axis], ones([1], dtype=dtypes.int64), sp.dense_shape[axis:]], 0)
        return SparseTensor(indices, sp.values, shape)
