"""TF1's sparse manipulations (`tf.sparse_reorder`, `sparse_reshape`, `sparse_transpose`,
`sparse_slice`, `sparse_concat`, `sparse_split`, `sparse_retain`, `sparse_reset_shape`,
`sparse_fill_empty_rows`, `sparse_to_indicator`, `sparse_merge`, `sparse_maximum`,
`sparse_minimum`) as composites: the data-dependent index arithmetic is one op of
kernels/sparse_index_ops.py giving indices and positions, and the values are gathered at those
positions, so gradients with respect to the values come from GatherV2's.
"""

from __future__ import annotations

import numpy as np

from ..graph import dtypes
from ..graph.graph import control_dependencies, name_scope
from ..graph.ops import constant_value
from . import sparse_index_ops  # noqa: F401 - registers the index ops used through apply_op
from .array_ops import identity, reshape, size, stack
from .check_ops import assert_less_equal
from .common import apply_op, convert_to_tensor
from .creation_ops import fill
from .data_dependent_ops import boolean_mask
from .gather_ops import gather, one_hot
from .manip_ops import concat
from .math_ops import (
    add,
    cast,
    floordiv,
    floormod,
    greater_equal,
    maximum,
    minimum,
    multiply,
    where,
)
from .reduction_ops import reduce_max
from .sparse_ops import SparseTensor, SparseTensorValue, sparse_tensor_to_dense

__all__ = ["sparse_reorder", "sparse_reshape", "sparse_transpose", "sparse_slice", "sparse_concat", "sparse_split",
           "sparse_retain", "sparse_reset_shape", "sparse_fill_empty_rows", "sparse_to_indicator", "sparse_merge",
           "sparse_maximum", "sparse_minimum"]

def as_sparse(sp, what="sp_input"):
    """`sp` as a SparseTensor (a SparseTensorValue becomes constants); TypeError otherwise."""
    if isinstance(sp, SparseTensorValue):
        return SparseTensor.from_value(sp)
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"{what} must be a SparseTensor, got {type(sp).__name__}")
    return sp


def rank_of(sp, what):
    rank = sp.dense_shape.shape[0].value
    if rank is None:
        raise ValueError(f"{what}: the rank of the SparseTensor must be known when the graph is built")
    return rank


def take(values, positions, fill_value=None):
    """values[positions]; where a position is -1, `fill_value` (a scalar of values' dtype)."""
    if fill_value is None:
        return gather(values, positions)
    padded = concat([values, reshape(convert_to_tensor(fill_value, dtype=values.dtype), [1])], 0)
    n = cast(size(values), dtypes.int64)
    return gather(padded, where(greater_equal(positions, 0), positions, fill(stack([size(positions)]), n)))


def sparse_reorder(sp_input, name=None):
    """The same SparseTensor with its indices in row-major order (stable for repeated indices)."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseReorder", [sp.indices, sp.values]):
        perm = apply_op("SparseIndexOrder", [sp.indices], name="SparseIndexOrder")
        return SparseTensor(gather(sp.indices, perm), gather(sp.values, perm), sp.dense_shape)


def sparse_reshape(sp_input, shape, name=None):
    """The SparseTensor with dense shape `shape` (one entry may be -1), entries in the same order
    (op SparseReshape). ValueError when both shapes are known and hold different numbers of
    elements; InvalidArgumentError at run time."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseReshape", [sp.indices, sp.values]):
        new = convert_to_tensor(shape, dtype=dtypes.int64, name="shape")
        old_c, new_c = constant_value(sp.dense_shape), constant_value(new)
        if old_c is not None and new_c is not None:
            old_n, want = int(np.prod(old_c)), np.asarray(new_c).reshape(-1)
            if (want >= 0).all() and int(np.prod(want)) != old_n:
                raise ValueError(f"Cannot reshape a tensor with {old_n} elements to shape {want.tolist()} "
                                 f"({int(np.prod(want))} elements)")
        indices, out_shape = apply_op("SparseReshape", [sp.indices, sp.dense_shape, new], name="SparseReshape")
        if old_c is not None and new_c is not None:  # a static dense shape, as TF1's
            out_shape = convert_to_tensor(sparse_index_ops._new_shape(old_c, new_c)[1])
        return SparseTensor(indices, identity(sp.values), out_shape)


def sparse_transpose(sp_input, perm=None, name=None):
    """The SparseTensor with its dimensions permuted (reversed by default), reordered row-major."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseTranspose", [sp.indices, sp.values]):
        rank = rank_of(sp, "sparse_transpose")
        perm = convert_to_tensor(list(range(rank - 1, -1, -1)) if perm is None else perm, name="perm")
        known = constant_value(perm)
        if known is not None and sorted(np.asarray(known).reshape(-1).tolist()) != list(range(rank)):
            raise ValueError(f"sparse_transpose: perm {np.asarray(known).tolist()} is not a permutation of "
                             f"range({rank})")
        transposed = SparseTensor(gather(sp.indices, perm, axis=1), sp.values, gather(sp.dense_shape, perm))
        return sparse_reorder(transposed)


def sparse_slice(sp_input, start, size, name=None):  # noqa: A002 - TF1 signature
    """The entries of `sp_input` in the box [start, start + size), shifted by -start; the dense shape
    is the box clipped to the input's."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseSlice", [sp.indices, sp.values]):
        start = convert_to_tensor(start, dtype=dtypes.int64, name="start")
        box = convert_to_tensor(size, dtype=dtypes.int64, name="size")
        indices, pos, out_shape = apply_op("SparseSliceSelect", [sp.indices, sp.dense_shape, start, box],
                                           name="SparseSlice")
        return SparseTensor(indices, gather(sp.values, pos), out_shape)


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None,
                  expand_nonconcat_dims=None):
    """The SparseTensors joined along `axis`, in row-major order. The other dimensions must match,
    unless `expand_nonconcat_dim`: then each is the largest of the inputs'."""
    if concat_dim is not None:
        axis = concat_dim
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    if not isinstance(sp_inputs, (list, tuple)):
        raise TypeError("sparse_concat: sp_inputs must be a list of SparseTensors")
    sps = [as_sparse(s, "sp_inputs") for s in sp_inputs]
    if not sps:
        raise ValueError("sparse_concat: sp_inputs must not be empty")
    with name_scope(name, "SparseConcat", [s.values for s in sps]):
        rank = rank_of(sps[0], "sparse_concat")
        if any(rank_of(s, "sparse_concat") != rank for s in sps):
            raise ValueError("sparse_concat: all SparseTensors must have the same rank")
        axis = int(axis) % rank
        unit = one_hot(axis, rank, dtype=dtypes.int64)
        offset = convert_to_tensor(np.int64(0))
        indices = []
        for s in sps:
            indices.append(add(s.indices, multiply(reshape(unit, [1, rank]), offset)))
            offset = offset + s.dense_shape[axis]
        if expand_nonconcat_dim:
            shape = sps[0].dense_shape
            for s in sps[1:]:
                shape = maximum(shape, s.dense_shape)
        else:
            shape = stack(_checked_dims([s.dense_shape for s in sps], axis, rank))
        shape = add(multiply(shape, 1 - unit), multiply(unit, offset))
        joined = SparseTensor(concat(indices, 0), concat([s.values for s in sps], 0), shape)
        return sparse_reorder(joined)


def _checked_dims(shapes, axis, rank):
    """The dims of the first shape, each checked equal to the others' where not `axis`."""
    known = [constant_value(s) for s in shapes]
    if all(k is not None for k in known):
        for k in known[1:]:
            for d in range(rank):
                if d != axis and int(k[d]) != int(known[0][d]):
                    raise ValueError(f"sparse_concat: dimension {d} of the inputs differs ({int(known[0][d])} vs "
                                     f"{int(k[d])}); pass expand_nonconcat_dim=True to take the largest")
        return [shapes[0][d] for d in range(rank)]
    checks = [assert_less_equal(s, shapes[0], message="sparse_concat: the non-concat dimensions must match")
              for s in shapes[1:]]
    with control_dependencies(checks):
        first = identity(shapes[0])
    return [first[d] for d in range(rank)]


def sparse_split(keyword_required=None, sp_input=None, num_split=None, axis=None, name=None, split_dim=None):
    """`num_split` SparseTensors, slices of `sp_input` along `axis`; the first dim % num_split get one
    more entry along it. Keyword arguments only, as TF1."""
    if keyword_required is not None:
        raise ValueError("Keyword arguments are required for this function.")
    if split_dim is not None:
        axis = split_dim
    if sp_input is None or num_split is None or axis is None:
        raise ValueError("sparse_split: sp_input, num_split and axis are required")
    sp = as_sparse(sp_input)
    num_split = int(num_split)
    if num_split < 1:
        raise ValueError(f"sparse_split: num_split must be at least 1, got {num_split}")
    with name_scope(name, "SparseSplit", [sp.indices, sp.values]):
        rank = rank_of(sp, "sparse_split")
        axis = int(axis) % rank
        unit = one_hot(axis, rank, dtype=dtypes.int64)
        dim = sp.dense_shape[axis]
        each, extra = floordiv(dim, num_split), floormod(dim, num_split)
        outs = []
        for i in range(num_split):
            begin = i * each + minimum(convert_to_tensor(np.int64(i)), extra)
            length = each + cast(greater_equal(extra, i + 1), dtypes.int64)
            start = multiply(unit, begin)
            box = add(multiply(sp.dense_shape, 1 - unit), multiply(unit, length))
            outs.append(sparse_slice(sp, start, box))
        return outs


def sparse_retain(sp_input, to_retain):
    """The entries of `sp_input` where the bool vector `to_retain` (one per entry) is true."""
    sp = as_sparse(sp_input)
    keep = convert_to_tensor(to_retain, dtype=dtypes.bool)
    n = sp.values.shape[0].value
    keep.shape.with_rank(1)
    if n is not None and keep.shape[0].value is not None and keep.shape[0].value != n:
        raise ValueError(f"sparse_retain: to_retain has {keep.shape[0].value} entries, sp_input {n}")
    with name_scope(None, "SparseRetain"):
        return SparseTensor(boolean_mask(sp.indices, keep), boolean_mask(sp.values, keep), sp.dense_shape)


def sparse_reset_shape(sp_input, new_shape=None):
    """The SparseTensor with dense shape `new_shape` (no smaller than the old), or by default the
    tightest: max of each index column + 1. InvalidArgumentError at run time for a smaller shape."""
    sp = as_sparse(sp_input)
    with name_scope(None, "SparseResetShape", [sp.indices, sp.values]):
        if new_shape is None:
            return SparseTensor(identity(sp.indices), identity(sp.values), reduce_max(sp.indices, 0) + 1)
        new = convert_to_tensor(new_shape, dtype=dtypes.int64, name="new_shape")
        new.shape.with_rank(1)
        if new.shape[0].value is not None and sp.dense_shape.shape[0].value is not None \
                and new.shape[0].value != sp.dense_shape.shape[0].value:
            raise ValueError(f"sparse_reset_shape: new_shape has rank {new.shape[0].value}, sp_input "
                             f"{sp.dense_shape.shape[0].value}")
        old_c, new_c = constant_value(sp.dense_shape), constant_value(new)
        if old_c is not None and new_c is not None and (np.asarray(new_c) < np.asarray(old_c)).any():
            raise ValueError(f"sparse_reset_shape: new_shape {np.asarray(new_c).tolist()} is smaller than the "
                             f"SparseTensor's {np.asarray(old_c).tolist()}")
        check = assert_less_equal(sp.dense_shape, new, message="sparse_reset_shape: new_shape must be no "
                                  "smaller than the SparseTensor's dense shape")
        with control_dependencies([check]):
            new = identity(new)
        return SparseTensor(identity(sp.indices), identity(sp.values), new)


def sparse_fill_empty_rows(sp_input, default_value, name=None):
    """(SparseTensor, empty_row_indicator): each empty row of the first dimension gets one entry
    `default_value` at [row, 0, ...]; entries are grouped by row (input order within a row).
    empty_row_indicator: bool [dense_shape[0]]."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseFillEmptyRows", [sp.indices, sp.values]):
        default = convert_to_tensor(default_value, dtype=sp.values.dtype, name="default_value")
        default.shape.with_rank(0)
        indices, pos, empty, _ = apply_op("SparseFillEmptyRowsMap", [sp.indices, sp.dense_shape],
                                          name="SparseFillEmptyRows")
        return SparseTensor(indices, take(sp.values, pos, default), sp.dense_shape), empty


def _merged(sp_ids, sp_values, vocab_size, already_sorted, what):
    ids_list = sp_ids if isinstance(sp_ids, (list, tuple)) else [sp_ids]
    sizes = vocab_size if isinstance(vocab_size, (list, tuple)) else [vocab_size]
    if len(ids_list) != len(sizes):
        raise ValueError(f"{what}: sp_ids and vocab_size must have the same length, got {len(ids_list)} and "
                         f"{len(sizes)}")
    ids_list = [as_sparse(s, "sp_ids") for s in ids_list]
    for s in ids_list:
        if not s.values.dtype.is_integer:
            raise TypeError(f"{what}: sp_ids.values must be integers, got {s.values.dtype.name}")
    first = ids_list[0]
    rank = rank_of(first, what)
    columns = [first.indices[:, :rank - 1]] + [reshape(cast(s.values, dtypes.int64), [-1, 1]) for s in ids_list]
    shape = concat([first.dense_shape[:rank - 1]] + [reshape(cast(convert_to_tensor(v), dtypes.int64), [1])
                                                     for v in sizes], 0)
    merged = SparseTensor(concat(columns, 1), sp_values.values, shape)
    return merged if already_sorted else sparse_reorder(merged)


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """A SparseTensor whose last index is the id of `sp_ids` (a list: one index column each) and whose
    values are `sp_values`', dense shape [..., vocab_size]; reordered unless `already_sorted`."""
    sp_values = as_sparse(sp_values, "sp_values")
    with name_scope(name, "SparseMerge", [sp_values.values]):
        return _merged(sp_ids, sp_values, vocab_size, already_sorted, "sparse_merge")


def sparse_to_indicator(sp_input, vocab_size, name=None):
    """A dense bool tensor [..., vocab_size]: True at [..., id] for each id in the last dimension's
    entries of `sp_input` (integer values)."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseToIndicator", [sp.indices, sp.values]):
        flags = SparseTensor(sp.indices, fill(stack([size(sp.values)]), True), sp.dense_shape)
        merged = _merged(sp, flags, vocab_size, False, "sparse_to_indicator")
        return sparse_tensor_to_dense(merged, default_value=False, validate_indices=False)


def _union_op(sp_a, sp_b, combine, what, name):
    a, b = as_sparse(sp_a, "sp_a"), as_sparse(sp_b, "sp_b")
    if a.values.dtype != b.values.dtype:
        raise TypeError(f"{what}: sp_a is {a.values.dtype.name}, sp_b {b.values.dtype.name}")
    with name_scope(name, what, [a.values, b.values]):
        indices, a_pos, b_pos = apply_op("SparseUnion", [a.indices, a.dense_shape, b.indices, b.dense_shape],
                                         name="SparseUnion")
        zero = np.zeros((), a.values.dtype.np_dtype)
        return SparseTensor(indices, combine(take(a.values, a_pos, zero), take(b.values, b_pos, zero)),
                            a.dense_shape)


def sparse_maximum(sp_a, sp_b, name=None):
    """The elementwise maximum of two SparseTensors of one dense shape, over the union of their
    indices (a missing entry counts as 0). InvalidArgumentError when the shapes differ."""
    return _union_op(sp_a, sp_b, maximum, "SparseSparseMaximum", name)


def sparse_minimum(sp_a, sp_b, name=None):
    """The elementwise minimum of two SparseTensors (see `sparse_maximum`)."""
    return _union_op(sp_a, sp_b, minimum, "SparseSparseMinimum", name)

