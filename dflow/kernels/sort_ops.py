"""Sorting and searching: `sort`, `argsort` (composites of TopKV2, as TF1), `searchsorted`
(LowerBound/UpperBound), `setdiff1d` (ListDiff) and `unique_with_counts` (UniqueWithCounts).

`sort`/`argsort` are TF1's: the axis is moved last (a transpose that is its own inverse), TopKV2
with k = the axis' length sorts descending; ascending sorts the negated values (-x - 1 for signed
integers, max - x for unsigned, so no value overflows). TopKV2 breaks ties by position, so both
directions are stable and `sort` has TopKV2's gradient. The other ops are one whole-array task
(`numpy_op`); the sizes of ListDiff's and UniqueWithCounts' outputs are known only when they run.
"""

from __future__ import annotations

import collections

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import name_scope
from ..graph.ops import constant_value
from ..graph.registry import not_differentiable
from ..graph.shape import TensorShape, unknown_shape
from .array_ops import reshape, shape
from .common import REAL, apply_op, check_dtype, convert_to_tensor
from .gather_ops import top_k
from .manip_ops import transpose
from .math_ops import negative, subtract
from .numpy_kernels import numpy_op

__all__ = ["sort", "argsort", "searchsorted", "setdiff1d", "unique_with_counts"]

_NAN = float("nan")


# ---- sort / argsort ------------------------------------------------------------------------------


def _descending(values, axis, return_argsort):
    rank = values.shape.ndims
    if axis == -1 or (rank is not None and axis + 1 == rank):
        perm = None
    else:
        if rank is None:
            raise ValueError(f"sort: sorting along axis {axis} needs the input's rank, unknown for {values.name!r}")
        axis %= rank
        perm = list(range(axis)) + [rank - 1] + list(range(axis + 1, rank - 1)) + [axis]
        values = transpose(values, perm)
    k = shape(values)[-1]
    vals, idx = top_k(values, k)
    out = idx if return_argsort else vals
    return out if perm is None else transpose(out, perm)  # the swap of two axes is its own inverse


def _sort_or_argsort(values, axis, direction, return_argsort):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"Unknown direction: {direction!r} (expected 'ASCENDING' or 'DESCENDING')")
    axis_value = constant_value(convert_to_tensor(axis)) if not isinstance(axis, (int, np.integer)) else axis
    if axis_value is None or np.ndim(axis_value) != 0:
        raise ValueError(f"axis must be a constant scalar, got {axis!r}")
    axis = int(axis_value)
    values = convert_to_tensor(values, name="values")
    check_dtype(values, REAL, "sort", "values")
    if values.shape.ndims is not None and not -max(values.shape.ndims, 1) <= axis < max(values.shape.ndims, 1):
        raise ValueError(f"axis {axis} is out of range for a tensor of rank {values.shape.ndims}")
    if direction == "DESCENDING":
        return _descending(values, axis, return_argsort)
    np_dtype = values.dtype.np_dtype
    if values.dtype.is_integer and np_dtype.kind == "u":
        top = np.asarray(np.iinfo(np_dtype).max, np_dtype)
        out = _descending(subtract(top, values), axis, return_argsort)
        return out if return_argsort else subtract(top, out)
    if values.dtype.is_integer:
        one = np.asarray(1, np_dtype)
        out = _descending(subtract(negative(values), one), axis, return_argsort)
        return out if return_argsort else subtract(negative(out), one)
    out = _descending(negative(values), axis, return_argsort)
    return out if return_argsort else negative(out)


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """`values` sorted along `axis` (a constant int) in `direction` ('ASCENDING' or 'DESCENDING');
    same shape and dtype. Real dtypes only (TypeError otherwise); ValueError for a bad direction
    or axis. Differentiable (through TopKV2)."""
    with name_scope(name, "sort", [values]):
        return _sort_or_argsort(values, axis, direction, False)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 positions that sort `values` along `axis`; ties keep their order (always stable,
    as TF1's TopKV2, so `stable` changes nothing)."""
    del stable
    with name_scope(name, "argsort", [values]):
        return _sort_or_argsort(values, axis, direction, True)


# ---- searchsorted (LowerBound / UpperBound) -------------------------------------------------------------


def _bound_infer(inputs, attrs):
    seq, values = inputs
    if seq.dtype != values.dtype:
        raise TypeError(f"searchsorted: sorted_sequence has dtype {seq.dtype.name}, values {values.dtype.name}")
    for t, what in ((seq, "sorted_sequence"), (values, "values")):
        if t.shape.ndims not in (None, 2):
            raise ValueError(f"searchsorted: {what} must be 2-D here, got shape {t.shape}")
    return TensorShape(values.shape), attrs["out_type"]


def _bound_kernel(side):
    def kernel(np_, seq, values, *, out_type):
        if seq.shape[0] != values.shape[0]:
            raise InvalidArgumentError(None, None, f"searchsorted: the leading dimensions of sorted_sequence "
                                       f"{list(seq.shape)} and values {list(values.shape)} must match")
        out = np.empty(values.shape, dtype=out_type.np_dtype)
        for row in range(values.shape[0]):
            out[row] = np.searchsorted(seq[row], values[row], side=side)
        return out

    return kernel


for _op_type, _side in (("LowerBound", "left"), ("UpperBound", "right")):
    numpy_op(_op_type, _bound_infer, _bound_kernel(_side), lambda ss, sv, out_type: [sv],
             out_dtypes=lambda d0, d1, out_type: [out_type.np_dtype])
not_differentiable("LowerBound", "UpperBound")


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """For each of `values` ([..., m]), its insertion position in the matching row of
    `sorted_sequence` ([..., n], each row sorted ascending): the first position whose entry is
    >= the value ('left') or > it ('right'). Output: values' shape, `out_type` (int32/int64).
    ValueError for another side; InvalidArgumentError when the leading dimensions differ."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be either 'right' or 'left'.  Saw: {side}.")
    out_type = as_dtype(out_type)
    if out_type not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"searchsorted: out_type must be int32 or int64, got {out_type.name}")
    with name_scope(name, "searchsorted", [sorted_sequence, values]) as scope:
        seq = convert_to_tensor(sorted_sequence, name="sorted_sequence")
        values = convert_to_tensor(values, dtype=seq.dtype, name="values")
        seq2 = reshape(seq, [-1, shape(seq)[-1]])
        values2 = reshape(values, [-1, shape(values)[-1]])
        out = apply_op("UpperBound" if side == "right" else "LowerBound", [seq2, values2], {"out_type": out_type})
        return reshape(out, shape(values), name=scope)


# ---- setdiff1d (ListDiff) and unique_with_counts ------------------------------------------------------


def _check_vector(t, op_type, what):
    if t.shape.ndims not in (None, 1):
        raise ValueError(f"{op_type}: {what} must be 1-D, got shape {t.shape} ({t.name!r})")


def _list_diff_infer(inputs, attrs):
    x, y = inputs
    _check_vector(x, "ListDiff", "x")
    _check_vector(y, "ListDiff", "y")
    if x.dtype != y.dtype:
        raise TypeError(f"setdiff1d: x has dtype {x.dtype.name}, y {y.dtype.name}")
    return [(unknown_shape(1), x.dtype), (unknown_shape(1), attrs["out_idx"])]


def _list_diff(np_, x, y, *, out_idx):
    keep = np.nonzero(~np.isin(x, y))[0]
    return x[keep], keep.astype(out_idx.np_dtype)


numpy_op("ListDiff", _list_diff_infer, _list_diff, lambda sx, sy, out_idx: [(_NAN,), (_NAN,)],
         out_dtypes=lambda dx, dy, out_idx: [dx, out_idx.np_dtype], n_out=2)
ListDiff = collections.namedtuple("ListDiff", ["out", "idx"])


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    """ListDiff(out, idx): the entries of 1-D `x` not in `y`, in x's order, and their positions in
    x (`index_dtype`). ValueError for inputs that are not 1-D."""
    x = convert_to_tensor(x, name="x")
    y = convert_to_tensor(y, dtype=x.dtype, name="y")
    return ListDiff(*apply_op("ListDiff", [x, y], {"out_idx": as_dtype(index_dtype)}, name=name,
                              default_name="ListDiff"))


def _uwc_infer(inputs, attrs):
    (x,) = inputs
    _check_vector(x, "UniqueWithCounts", "x")
    idx = attrs["out_idx"]
    return [(unknown_shape(1), x.dtype), (TensorShape(x.shape) if x.shape.ndims == 1 else unknown_shape(1), idx),
            (unknown_shape(1), idx)]


def _unique_with_counts(np_, x, *, out_idx):
    if x.ndim != 1:
        raise InvalidArgumentError(None, None, f"unique_with_counts: expects a 1-D vector, got shape {list(x.shape)}")
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    order = np.argsort(first, kind="stable")  # in order of first occurrence, as TF1
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    d = out_idx.np_dtype
    return values[order], rank[inverse.reshape(-1)].astype(d), counts[order].astype(d)


numpy_op("UniqueWithCounts", _uwc_infer, _unique_with_counts, lambda sx, out_idx: [(_NAN,), sx, (_NAN,)],
         out_dtypes=lambda dx, out_idx: [dx, out_idx.np_dtype, out_idx.np_dtype], n_out=3)
not_differentiable("ListDiff", "UniqueWithCounts")
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """UniqueWithCounts(y, idx, count): the distinct values of 1-D `x` in order of first occurrence,
    each entry's position in y, and how often each value occurs (`out_idx`: int32/int64)."""
    out_idx = as_dtype(out_idx)
    if out_idx not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"unique_with_counts: out_idx must be int32 or int64, got {out_idx.name}")
    return UniqueWithCounts(*apply_op("UniqueWithCounts", [convert_to_tensor(x, name="x")], {"out_idx": out_idx},
                                      name=name, default_name="UniqueWithCounts"))
