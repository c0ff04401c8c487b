"""TF1's set operations (`tf.sets.intersection/union/difference/size`, the SetOperation and SetSize
ops) and `tf.edit_distance` (EditDistance): kernels over SparseTensors' parts.

A set is the values along the last dimension of a row: each index prefix (the batch position) has
one set. A dense operand is every entry of its last dimension; it enters as a SparseTensor of all its
coordinates. The results are SparseTensors whose rows hold each result set sorted, the last
dimension as wide as the largest result (TF's layout). Each op is one whole-array numpy task: the
sets are small and their grouping is data dependent. None has a gradient (TF1 registers none).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.registry import not_differentiable
from ..graph.shape import TensorShape
from .array_ops import reshape, shape
from .common import apply_op, convert_to_tensor
from .creation_ops import ones_like
from .math_ops import where
from .numpy_kernels import numpy_op
from .sparse_ops import SparseTensor, SparseTensorValue

__all__ = ["edit_distance"]

_NAN = float("nan")
_I64 = np.dtype(np.int64)
SET_DTYPES = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.string)
_OPS = {"a-b", "b-a", "intersection", "union"}


def _groups(indices, values, shape, what, validate):
    """{batch index tuple: set of values} of one SparseTensor's parts; InvalidArgumentError for an
    index out of order (when validating) or out of bounds."""
    shape = np.asarray(shape, np.int64).reshape(-1)
    idx = np.asarray(indices, np.int64)
    idx = idx.reshape(len(values), idx.shape[-1] if idx.ndim == 2 else shape.size)
    if idx.shape[1] != shape.size:
        raise InvalidArgumentError(None, None, f"{what}: indices have {idx.shape[1]} columns for a rank "
                                   f"{shape.size} dense_shape")
    if shape.size < 2:
        raise InvalidArgumentError(None, None, f"{what}: a set operand needs rank >= 2, got {shape.size}")
    out = {}
    prev = None
    for row, v in zip(idx, values):
        if np.any(row < 0) or np.any(row >= shape):
            raise InvalidArgumentError(None, None, f"{what}: index [{','.join(map(str, row))}] is out of bounds "
                                       f"of dense_shape {shape.tolist()}")
        key = tuple(int(i) for i in row)
        if validate and prev is not None and key <= prev:
            raise InvalidArgumentError(None, None, f"{what}: indices[{','.join(map(str, row))}] is out of order. "
                                       f"Use `tf.sparse.reorder` to create a correctly ordered copy.")
        prev = key
        out.setdefault(key[:-1], set()).add(v.item() if hasattr(v, "item") else v)
    return out, shape


def _assemble(results, batch_shape, dtype):
    """The SparseTensor parts of {batch index: sorted list} in row-major order."""
    keys = sorted(k for k, vals in results.items() if vals)
    width = max((len(results[k]) for k in keys), default=0)
    rows, vals = [], []
    for k in keys:
        for j, v in enumerate(results[k]):
            rows.append(list(k) + [j])
            vals.append(v)
    rank = len(batch_shape) + 1
    indices = np.asarray(rows, np.int64).reshape(len(rows), rank)
    values = np.asarray(vals, dtype=dtype) if vals else np.zeros(0, dtype)
    return indices, values, np.asarray(list(batch_shape) + [width], np.int64)


def _set_op(np_, a_idx, a_vals, a_shape, b_idx, b_vals, b_shape, *, set_operation, validate_indices):
    a, a_shape = _groups(a_idx, a_vals, a_shape, "set1", validate_indices)
    b, b_shape = _groups(b_idx, b_vals, b_shape, "set2", validate_indices)
    if a_shape.size != b_shape.size or a_shape[:-1].tolist() != b_shape[:-1].tolist():
        raise InvalidArgumentError(None, None, f"Shapes {a_shape.tolist()} and {b_shape.tolist()} have mismatched "
                                   "group dimensions (all but the last must be equal)")
    results = {}
    for key in set(a) | set(b):
        x, y = a.get(key, set()), b.get(key, set())
        r = {"a-b": x - y, "b-a": y - x, "intersection": x & y, "union": x | y}[set_operation]
        results[key] = sorted(r)
    dtype = np.asarray(a_vals).dtype if np.asarray(a_vals).size or not np.asarray(b_vals).size \
        else np.asarray(b_vals).dtype
    return _assemble(results, a_shape[:-1].tolist(), dtype)


def _set_op_infer(inputs, attrs):
    a_idx, a_vals, a_shape, b_idx, b_vals, b_shape = inputs
    if a_vals.dtype != b_vals.dtype:
        raise TypeError(f"SetOperation: set1 and set2 must have one dtype, got {a_vals.dtype.name} and "
                        f"{b_vals.dtype.name}")
    if a_vals.dtype not in SET_DTYPES:
        raise TypeError(f"SetOperation: sets of {a_vals.dtype.name} are not supported (int8, int16, int32, int64, "
                        "uint8, uint16 or string)")
    if attrs["set_operation"] not in _OPS:
        raise ValueError(f"Invalid set_operation {attrs['set_operation']!r}")
    rank = a_shape.shape[0].value if a_shape.shape.ndims == 1 else None
    return [(TensorShape([None, rank]), dtypes.int64), (TensorShape([None]), a_vals.dtype),
            (TensorShape([rank]), dtypes.int64)]


numpy_op("SparseSetOperation", _set_op_infer, _set_op,
         lambda ai, av, ash, bi, bv, bsh, **k: [(_NAN, ai[1]), (_NAN,), ash],
         out_dtypes=lambda ai, av, ash, bi, bv, bsh, **k: [_I64, av, _I64], n_out=3)
not_differentiable("SparseSetOperation")


def _set_size(np_, idx, vals, shape, *, validate_indices):
    groups, shape = _groups(idx, vals, shape, "set", validate_indices)
    out = np.zeros(tuple(int(d) for d in shape[:-1]), np.int32)
    for key, s in groups.items():
        out[key] = len(s)
    return out


def _set_size_infer(inputs, attrs):
    idx, vals, shape = inputs
    if vals.dtype not in SET_DTYPES:
        raise TypeError(f"SetSize: sets of {vals.dtype.name} are not supported")
    rank = shape.shape[0].value if shape.shape.ndims == 1 else None
    return TensorShape(None if rank is None else [None] * (rank - 1)), dtypes.int32


numpy_op("SparseSetSize", _set_size_infer, _set_size,
         lambda i, v, s, **k: [(_NAN,) * (s[0] - 1) if s[0] == s[0] else ()],
         out_dtypes=lambda *d, **k: [np.dtype(np.int32)])
not_differentiable("SparseSetSize")


# ---- EditDistance -------------------------------------------------------------------------------------


def _levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


def _sequences(indices, values, shape, what):
    shape = np.asarray(shape, np.int64).reshape(-1)
    idx = np.asarray(indices, np.int64)
    idx = idx.reshape(len(values), idx.shape[-1] if idx.ndim == 2 else shape.size)
    if idx.shape[1] != shape.size or shape.size < 1:
        raise InvalidArgumentError(None, None, f"{what}: indices have {idx.shape[1]} columns for a rank "
                                   f"{shape.size} dense_shape")
    order = np.lexsort(idx.T[::-1]) if len(idx) else np.zeros(0, np.int64)
    out = {}
    for k in order:
        row = idx[k]
        if np.any(row < 0) or np.any(row >= shape):
            raise InvalidArgumentError(None, None, f"{what}: index [{','.join(map(str, row))}] is out of bounds "
                                       f"of dense_shape {shape.tolist()}")
        v = values[k]
        out.setdefault(tuple(int(i) for i in row[:-1]), []).append(v.item() if hasattr(v, "item") else v)
    return out, shape


def _edit_distance(np_, h_idx, h_vals, h_shape, t_idx, t_vals, t_shape, *, normalize):
    hyp, hs = _sequences(h_idx, h_vals, h_shape, "hypothesis")
    truth, ts = _sequences(t_idx, t_vals, t_shape, "truth")
    if hs.size != ts.size:
        raise InvalidArgumentError(None, None, f"hypothesis and truth must have one rank, got {hs.size} and "
                                   f"{ts.size}")
    out_shape = tuple(int(d) for d in np.maximum(hs[:-1], ts[:-1]))
    out = np.zeros(out_shape, np.float32)
    for key in np.ndindex(*out_shape):
        h, t = hyp.get(key, []), truth.get(key, [])
        d = float(_levenshtein(h, t))
        if normalize:
            d = d / len(t) if t else (np.inf if h else 0.0)  # TF: an empty truth divides by zero
        out[key] = d
    return out


def _edit_distance_infer(inputs, attrs):
    h_vals, t_vals = inputs[1], inputs[4]
    if h_vals.dtype != t_vals.dtype:
        raise TypeError(f"EditDistance: hypothesis and truth must have one dtype, got {h_vals.dtype.name} and "
                        f"{t_vals.dtype.name}")
    rank = inputs[2].shape[0].value if inputs[2].shape.ndims == 1 else None
    return TensorShape(None if rank is None else [None] * (rank - 1)), dtypes.float32


numpy_op("EditDistance", _edit_distance_infer, _edit_distance,
         lambda hi, hv, hs, ti, tv, ts, **k: [(_NAN,) * (hs[0] - 1) if hs[0] == hs[0] else ()],
         out_dtypes=lambda *d, **k: [np.dtype(np.float32)])
not_differentiable("EditDistance")


def _parts(x, what, dtype=None):
    """(indices, values, dense_shape) of a SparseTensor, or of every entry of a dense tensor."""
    if isinstance(x, SparseTensorValue):
        x = SparseTensor.from_value(x)
    if isinstance(x, SparseTensor):
        return x.indices, x.values, x.dense_shape
    t = convert_to_tensor(x, name=what, dtype=dtype)
    if t.shape.ndims is not None and t.shape.ndims < 2:
        raise ValueError(f"{what}: a set operand needs rank >= 2, got shape {t.shape}")
    return where(ones_like(t, dtype=dtypes.bool)), reshape(t, [-1]), shape(t, out_type=dtypes.int64)


def set_operation(a, b, set_operation, validate_indices=True, name=None):
    """The SparseTensor of a set operation ("a-b", "b-a", "intersection", "union") row by row."""
    with name_scope(name, "SetOperation", []):
        if not isinstance(a, (SparseTensor, SparseTensorValue)) and isinstance(b, (SparseTensor, SparseTensorValue)):
            raise ValueError("Sparse `a` and dense `b` are not supported: flip them (TF's rule)")
        ai, av, ash = _parts(a, "a")
        bi, bv, bsh = _parts(b, "b", dtype=av.dtype)
        idx, vals, dense_shape = apply_op("SparseSetOperation", [ai, av, ash, bi, bv, bsh],
                                          {"set_operation": set_operation, "validate_indices": validate_indices})
        return SparseTensor(idx, vals, dense_shape)


def set_size(a, validate_indices=True, name=None):
    """The int32 number of unique values in each row's set of a SparseTensor."""
    if isinstance(a, SparseTensorValue):
        a = SparseTensor.from_value(a)
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a!r}.")
    with name_scope(name, "set_size", []):
        return apply_op("SparseSetSize", [a.indices, a.values, a.dense_shape], {"validate_indices": validate_indices})


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """The Levenshtein distance between the sequences of two SparseTensors (the last dimension is
    the sequence), a float32 tensor of the batch shape; normalized by the truth's length (inf where
    the truth is empty and the hypothesis not)."""
    for t, what in ((hypothesis, "hypothesis"), (truth, "truth")):
        if not isinstance(t, (SparseTensor, SparseTensorValue)):
            raise TypeError(f"{what} must be a SparseTensor, got {type(t).__name__}")
    h = SparseTensor.from_value(hypothesis) if isinstance(hypothesis, SparseTensorValue) else hypothesis
    t = SparseTensor.from_value(truth) if isinstance(truth, SparseTensorValue) else truth
    return apply_op("EditDistance", [h.indices, h.values, h.dense_shape, t.indices, t.values, t.dense_shape],
                    {"normalize": bool(normalize)}, name=name, default_name="EditDistance")
