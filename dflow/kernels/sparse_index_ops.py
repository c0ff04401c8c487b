"""The index arithmetic of TF1's sparse family: ops whose outputs depend on the data (which entries
a slice keeps, where an empty row is filled, the order of the indices), each one numpy kernel run as
one whole-array task (`numpy_op`): indices are small next to dense data.

They compute indices and *positions* only, never values: the sparse ops in kernels/sparse_manip_ops.py
gather the values at the positions (`gather`), so gradients with respect to values come from
GatherV2's and the values may be any dtype. A position of -1 means "no entry" (a filled row, an
index present in only one operand of a union).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.registry import not_differentiable
from ..graph.shape import TensorShape
from .common import INT, check_dtype
from .numpy_kernels import numpy_op

__all__: list[str] = []

_NAN = float("nan")
_I64 = np.dtype(np.int64)


def _rows(indices):
    return np.asarray(indices, np.int64).reshape(-1, np.shape(indices)[-1] if np.ndim(indices) == 2 else 0)


def _fmt(row):
    return ",".join(str(int(v)) for v in row)


def _matrix_rank(t):
    return t.shape[1].value if t.shape.ndims == 2 else None


# ---- SparseIndexOrder: the permutation putting indices in row-major order ----------------------------


def _order(np_, indices):
    rows = _rows(indices)
    if rows.shape[1] == 0:
        return np.arange(rows.shape[0], dtype=np.int64)
    return np.lexsort(rows.T[::-1]).astype(np.int64)  # stable: repeated indices keep their order


def _order_infer(inputs, attrs):
    check_dtype(inputs[0], INT, "SparseIndexOrder", "indices")
    return TensorShape([inputs[0].shape.with_rank(2)[0]]), dtypes.int64


numpy_op("SparseIndexOrder", _order_infer, _order, lambda s: [(s[0],)], out_dtypes=lambda d: [_I64])
not_differentiable("SparseIndexOrder")


# ---- SparseReshape (TF1's op: input_indices, input_shape, new_shape -> output_indices, output_shape)


def _new_shape(shape, new_shape):
    shape, new = np.asarray(shape, np.int64).reshape(-1), np.asarray(new_shape, np.int64).reshape(-1).copy()
    total = int(np.prod(shape)) if shape.size else 1
    unknown = np.nonzero(new == -1)[0]
    if unknown.size > 1:
        raise InvalidArgumentError(None, None, f"SparseReshape: only one output dimension may be -1, not both "
                                   f"{int(unknown[0])} and {int(unknown[1])}")
    bad = np.nonzero(new < -1)[0]
    if bad.size:
        raise InvalidArgumentError(None, None, f"SparseReshape: size {int(bad[0])} must be non-negative, not "
                                   f"{int(new[bad[0]])}")
    known = int(np.prod(new[new != -1])) if new.size else 1
    if unknown.size:
        if known == 0 or total % known:
            raise InvalidArgumentError(None, None, f"SparseReshape: input to reshape is a SparseTensor with {total} "
                                       f"dense values, but the requested shape requires a multiple of {known}")
        new[unknown[0]] = total // known
    elif known != total:
        raise InvalidArgumentError(None, None, f"SparseReshape: input to reshape is a tensor with {total} dense "
                                   f"values, but the requested shape has {known}")
    return shape, new


def _strides(shape):
    out = np.ones(len(shape), np.int64)
    for d in range(len(shape) - 2, -1, -1):
        out[d] = out[d + 1] * shape[d + 1]
    return out


def _reshape(np_, indices, shape, new_shape):
    shape, new = _new_shape(shape, new_shape)
    rows = _rows(indices)
    if rows.shape[1] != shape.size:
        raise InvalidArgumentError(None, None, f"SparseReshape: input_indices has {rows.shape[1]} columns, "
                                   f"input_shape {shape.size} entries")
    linear = rows @ _strides(shape) if rows.size else np.zeros(rows.shape[0], np.int64)
    out = np.stack([(linear // s) % max(int(d), 1) for s, d in zip(_strides(new), new)], axis=1) if new.size \
        else np.zeros((rows.shape[0], 0), np.int64)
    return out.astype(np.int64).reshape(rows.shape[0], new.size), new


def _reshape_infer(inputs, attrs):
    indices, shape, new_shape = inputs
    for t, what in zip(inputs, ("input_indices", "input_shape", "new_shape")):
        if t.dtype != dtypes.int64:
            raise TypeError(f"SparseReshape: {what} must be int64, got {t.dtype.name}")
    n = new_shape.shape.with_rank(1)[0].value
    return [(TensorShape([indices.shape.with_rank(2)[0], n]), dtypes.int64), (TensorShape([n]), dtypes.int64)]


numpy_op("SparseReshape", _reshape_infer, _reshape,
         lambda si, ss, new: [(si[0], int(np.size(new))), (int(np.size(new)),)],
         out_dtypes=lambda *d: [_I64, _I64], n_out=2, host_inputs=(2,))
not_differentiable("SparseReshape")


# ---- SparseSliceSelect: the entries inside a box, shifted to its corner ------------------------------


def _slice(np_, indices, shape, start, size):
    rows = _rows(indices)
    shape, start, size = (np.asarray(a, np.int64).reshape(-1) for a in (shape, start, size))
    if not (start.size == size.size == shape.size == rows.shape[1]):
        raise InvalidArgumentError(None, None, f"SparseSlice: start ({start.size}) and size ({size.size}) need one "
                                   f"entry per dimension of the input ({shape.size})")
    if (start < 0).any() or (size < 0).any():
        raise InvalidArgumentError(None, None, f"SparseSlice: start {start.tolist()} and size {size.tolist()} "
                                   f"must be non-negative")
    inside = ((rows >= start) & (rows < start + size)).all(axis=1)
    pos = np.nonzero(inside)[0].astype(np.int64)
    out_shape = np.maximum(np.minimum(start + size, shape) - start, 0)
    return (rows[pos] - start).astype(np.int64), pos, out_shape.astype(np.int64)


def _slice_infer(inputs, attrs):
    rank = _matrix_rank(inputs[0])
    return [(TensorShape([None, rank]), dtypes.int64), (TensorShape([None]), dtypes.int64),
            (TensorShape([rank]), dtypes.int64)]


numpy_op("SparseSliceSelect", _slice_infer, _slice, lambda si, ss, st, sz: [(_NAN, si[1]), (_NAN,), (ss[0],)],
         out_dtypes=lambda *d: [_I64] * 3, n_out=3)
not_differentiable("SparseSliceSelect")


# ---- SparseFillEmptyRowsMap: where each entry goes when empty rows get one ---------------------------


def _fill_rows(np_, indices, shape):
    rows = _rows(indices)
    shape = np.asarray(shape, np.int64).reshape(-1)
    if shape.size < 1:
        raise InvalidArgumentError(None, None, "SparseFillEmptyRows: dense_shape must have rank >= 1")
    n_rows = int(shape[0])
    first = rows[:, 0] if rows.size else np.zeros(0, np.int64)
    bad = np.nonzero((first < 0) | (first >= n_rows))[0]
    if bad.size:
        i = int(bad[0])
        raise InvalidArgumentError(None, None, f"SparseFillEmptyRows: indices({i}, 0) is invalid: {int(first[i])} "
                                   f">= {n_rows}")
    counts = np.bincount(first, minlength=n_rows)
    empty = counts == 0
    slots = np.maximum(counts, 1)
    row_start = np.concatenate([[0], np.cumsum(slots)[:-1]]).astype(np.int64)
    order = np.argsort(first, kind="stable")
    within = np.arange(first.size) - np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)[first[order]]
    reverse = np.empty(first.size, np.int64)
    reverse[order] = row_start[first[order]] + within
    out = np.zeros((int(slots.sum()), rows.shape[1]), np.int64)
    source = np.full(out.shape[0], -1, np.int64)
    out[reverse], source[reverse] = rows, np.arange(first.size)
    out[row_start[empty], 0] = np.nonzero(empty)[0]
    return out, source, empty, reverse


def _fill_rows_infer(inputs, attrs):
    rank = _matrix_rank(inputs[0])
    n_rows = TensorShape([None])
    return [(TensorShape([None, rank]), dtypes.int64), (TensorShape([None]), dtypes.int64), (n_rows, dtypes.bool),
            (TensorShape([inputs[0].shape.with_rank(2)[0]]), dtypes.int64)]


numpy_op("SparseFillEmptyRowsMap", _fill_rows_infer, _fill_rows,
         lambda si, shape: [(_NAN, si[1]), (_NAN,), (int(np.asarray(shape).reshape(-1)[0]),), (si[0],)],
         out_dtypes=lambda *d: [_I64, _I64, np.dtype(bool), _I64], n_out=4, host_inputs=(1,))
not_differentiable("SparseFillEmptyRowsMap")


# ---- SparseUnion: the indices of either operand, row-major, and where each came from -----------------


def _union(np_, a_indices, a_shape, b_indices, b_shape):
    a_shape, b_shape = np.asarray(a_shape, np.int64).reshape(-1), np.asarray(b_shape, np.int64).reshape(-1)
    if a_shape.tolist() != b_shape.tolist():
        raise InvalidArgumentError(None, None, f"Operands' shapes do not match: got {a_shape.tolist()} and "
                                   f"{b_shape.tolist()} for the SparseTensors")
    a, b = _rows(a_indices), _rows(b_indices)
    both = np.concatenate([a, b], axis=0)
    if both.shape[0] == 0:
        empty = np.zeros(0, np.int64)
        return both.astype(np.int64), empty, empty
    out, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    a_pos, b_pos = np.full(out.shape[0], -1, np.int64), np.full(out.shape[0], -1, np.int64)
    a_pos[inverse[:a.shape[0]]] = np.arange(a.shape[0])
    b_pos[inverse[a.shape[0]:]] = np.arange(b.shape[0])
    return out.astype(np.int64), a_pos, b_pos


def _union_infer(inputs, attrs):
    rank = _matrix_rank(inputs[0])
    return [(TensorShape([None, rank]), dtypes.int64), (TensorShape([None]), dtypes.int64),
            (TensorShape([None]), dtypes.int64)]


numpy_op("SparseUnion", _union_infer, _union, lambda sa, sas, sb, sbs: [(_NAN, sa[1]), (_NAN,), (_NAN,)],
         out_dtypes=lambda *d: [_I64] * 3, n_out=3)
not_differentiable("SparseUnion")
