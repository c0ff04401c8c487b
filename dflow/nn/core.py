"""The building blocks of dense layers: bias_add, xw_plus_b, embedding_lookup(_sparse) and dropout."""

from __future__ import annotations

import numbers

import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.ops import Tensor
from ..kernels.array_ops import identity, reshape, shape, size
from ..kernels.common import convert_to_tensor
from ..kernels.creation_ops import ones_like, zeros_like
from ..kernels.creation_ops import range as tf_range
from ..kernels.data_dependent_ops import dynamic_partition, dynamic_stitch, unique
from ..kernels.gather_ops import gather
from ..kernels.linalg_ops import matmul
from ..kernels.manip_ops import concat
from ..kernels.math_ops import (
    add,
    cast,
    floordiv,
    floormod,
    greater,
    greater_equal,
    less,
    maximum,
    multiply,
    realdiv,
    sqrt,
    square,
    subtract,
    where,
)
from ..kernels.random_ops import random_uniform
from ..kernels.reduction_ops import count_nonzero, reduce_max, reduce_sum
from ..kernels.scatter_ops import unsorted_segment_sum
from ..kernels.sparse_ops import SparseTensor
from ..state.variables import Variable
from ._common import (
    _like,
)

# ---- bias, dense -------------------------------------------------------------------------------


def bias_add(value, bias, data_format=None, name=None):
    """value + bias, with 1-D `bias` added along the channel axis (last for NHWC/None, 1 for NC...).

    value of rank >= 2; bias of rank 1 with the channel dimension's size, cast to value's dtype
    (ValueError for wrong ranks or sizes). Same shape and dtype as `value`.
    """
    with name_scope(name, "BiasAdd", [value, bias]) as scope:
        if data_format is not None and not (data_format.startswith("NC") or
                                            (data_format.startswith("N") and data_format.endswith("C"))):
            raise ValueError(f"`data_format` must be of the form `N...C` or `NC...`. Received: "
                             f"data_format={data_format}")
        nchw = data_format is not None and data_format.startswith("NC")
        value = convert_to_tensor(value)
        bias = convert_to_tensor(bias, dtype=value.dtype) if not isinstance(bias, Tensor) else bias
        vr, br = value.shape.ndims, bias.shape.ndims
        if vr is not None and vr < 2:
            raise ValueError(f"BiasAdd: value must be at least rank 2 but is rank {vr} (shapes {value.shape}, "
                             f"{bias.shape})")
        if br is not None and br != 1:
            raise ValueError(f"BiasAdd: bias must be rank 1 but is rank {br} (shapes {value.shape}, {bias.shape})")
        if vr is not None:
            c = value.shape[1 if nchw else -1]
            if not c.is_compatible_with(bias.shape[0]):
                raise ValueError(f"BiasAdd: dimensions must be equal, but are {c} and {bias.shape[0]} (shapes "
                                 f"{value.shape}, {bias.shape})")
        if nchw:
            if vr is None:
                raise ValueError("BiasAdd: data_format NC... needs a value of known rank")
            bias = reshape(bias, [-1] + [1] * (vr - 2))
        return add(value, bias, name=scope)


def xw_plus_b(x, weights, biases, name=None):
    """matmul(x, weights) + biases (x: [batch, in], weights: [in, out], biases: [out])."""
    with name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        return bias_add(matmul(x, weights), biases, name=scope)


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True, max_norm=None):
    """Rows of `params` at `ids` (a gather); params may be a list of shards of one embedding.

    Shards follow `partition_strategy` as TF1: "mod" (id i lives in shard i % n at row i // n) or
    "div" (contiguous blocks, the first `size % n` shards one row longer); each shard is gathered
    at its own ids and the rows stitched back (dynamic_partition / dynamic_stitch), so each
    shard's gradient is an IndexedSlices of its rows. `max_norm` clips each looked-up row's L2
    norm. Returns ids.shape + params.shape[1:]; InvalidArgumentError at run time for an id out of
    range; ValueError for no params or an unknown strategy.
    """
    del validate_indices
    if isinstance(params, Variable):
        params = [params]
    shards = list(params) if isinstance(params, (list, tuple)) else [params]
    if not shards:
        raise ValueError("Need at least one param")
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")
    with name_scope(name, "embedding_lookup", shards + [ids]) as scope:
        shards = [convert_to_tensor(p) for p in shards]
        ids = convert_to_tensor(ids, name="ids")
        if len(shards) == 1:
            out = gather(shards[0], ids, name=None if max_norm is not None else scope)
        else:
            out = _sharded_lookup(shards, ids, partition_strategy, None if max_norm is not None else scope)
        return out if max_norm is None else _clip_rows(out, ids, max_norm, scope)


def _clip_rows(out, ids, max_norm, scope):
    extra = list(range(ids.shape.ndims, out.shape.ndims)) if ids.shape.ndims is not None else [-1]
    norm2 = reduce_sum(square(out), extra, keepdims=True)
    limit = convert_to_tensor(max_norm, dtype=out.dtype)
    scale_ = where(greater(norm2, square(limit)), realdiv(limit, _safe_sqrt(norm2)), _like(norm2, 1))
    return multiply(out, scale_, name=scope)


def _safe_sqrt(x):
    return sqrt(maximum(x, _like(x, np.finfo(x.dtype.np_dtype).tiny)))


def _sharded_lookup(shards, ids, strategy, name):
    """TF1's partitioned lookup: each shard gathered at the ids it holds, rows stitched back."""
    n = len(shards)
    flat = reshape(ids, [-1])
    positions = tf_range(size(flat))
    if strategy == "mod":
        assignment = floormod(flat, _like(flat, n))
        local = floordiv(flat, _like(flat, n))
    else:
        sizes = [p.shape.as_list()[0] if p.shape.ndims else None for p in shards]
        if any(s is None for s in sizes):
            raise ValueError("embedding_lookup: sharded params need static first dimensions")
        total = sum(sizes)
        per, extras = total // n, total % n
        assignment = maximum(floordiv(flat, _like(flat, per + 1)),
                             floordiv(subtract(flat, _like(flat, extras)), _like(flat, max(per, 1))))
        first = less(assignment, _like(flat, extras))
        local = where(first, floormod(flat, _like(flat, per + 1)),
                      floormod(subtract(flat, _like(flat, extras)), _like(flat, max(per, 1))))
    assignment = cast(assignment, dtypes.int32)
    local_ids = dynamic_partition(local, assignment, n)
    where_from = dynamic_partition(positions, assignment, n)
    rows = [gather(p, i) for p, i in zip(shards, local_ids)]
    stitched = dynamic_stitch(where_from, rows)
    rest = shards[0].shape.as_list()[1:] if shards[0].shape.ndims is not None else None
    if ids.shape.is_fully_defined() and rest is not None and None not in rest:
        return reshape(stitched, ids.shape.as_list() + rest, name=name)
    return reshape(stitched, concat([shape(ids), shape(stitched)[1:]], 0), name=name)


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None, combiner=None,
                            max_norm=None):
    """Per row of the SparseTensor `sp_ids` ([batch, k] int ids), the combination of the embedding
    rows of its ids (TF1's): `combiner` "sum", "mean" (default) or "sqrtn", weighted by
    `sp_weights` (a SparseTensor of the same indices, or None for weights 1). Output
    [max row id + 1] + params.shape[1:] (rows without ids are zeros). ValueError for an unknown
    combiner, TypeError for sp_ids/sp_weights that are not SparseTensors."""
    if combiner is None:
        combiner = "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    if isinstance(params, Variable):
        params = [params]
    shards = list(params) if isinstance(params, (list, tuple)) else [params]
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError("sp_ids must be SparseTensor")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError("sp_weights must be either None or SparseTensor")
    with name_scope(name, "embedding_lookup_sparse", shards + [sp_ids.values]) as scope:
        segment_ids = cast(sp_ids.indices[:, 0], dtypes.int32)
        num = add(reduce_max(segment_ids), 1)
        uniq, idx = unique(sp_ids.values)
        rows = gather(embedding_lookup(shards, uniq, partition_strategy, max_norm=max_norm), idx)
        if sp_weights is None:
            weights = cast(ones_like(segment_ids), rows.dtype)
        else:
            weights = cast(sp_weights.values, rows.dtype) if sp_weights.values.dtype != rows.dtype \
                else sp_weights.values
            rows = multiply(rows, reshape(weights, [-1] + [1] * (rows.shape.ndims - 1)))
        total = unsorted_segment_sum(rows, segment_ids, num)
        if combiner == "sum":
            return identity(total, name=scope)
        denom = unsorted_segment_sum(weights if combiner == "mean" else square(weights), segment_ids, num)
        if combiner == "sqrtn":
            denom = sqrt(denom)
        denom = reshape(denom, [-1] + [1] * (rows.shape.ndims - 1))
        # a row without ids (or weights summing to 0) is zeros (TF1's div_no_nan)
        positive = greater(denom, _like(denom, 0))
        safe = where(positive, denom, _like(denom, 1))
        return where(positive, realdiv(total, safe), zeros_like(total), name=scope)


# ---- dropout -----------------------------------------------------------------------------------


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Zeroes each element with probability `rate` (= 1 - keep_prob), scales the rest by 1/(1-rate).

    x: float tensor (ValueError otherwise). `noise_shape` (broadcastable to x's shape; None dims
    take x's) shares one draw across broadcast dims. A Python rate must be in [0, 1) (ValueError);
    rate 0 returns x itself. A new mask is drawn on every run (seeded as `random_uniform`).
    """
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'rate' and 'keep_prob'")
    if keep_prob is not None:
        try:
            rate = 1.0 - keep_prob
        except TypeError:
            raise ValueError("`keep_prob` must be a floating point number or Tensor. Received: "
                             f"keep_prob={keep_prob}") from None
    if rate is None:
        raise ValueError(f"`rate` must be provided. Received: rate={rate}")
    with name_scope(name, "dropout", [x]) as scope:
        is_number = isinstance(rate, numbers.Real)
        if is_number and not 0 <= rate < 1:
            raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}")
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"`x.dtype` must be a floating point tensor as `x` will be scaled. Received: "
                             f"x_dtype={x.dtype!r}")
        if is_number and rate == 0:
            return x
        if is_number:
            scaled = multiply(x, _like(x, 1 / (1 - rate)))
        else:
            rate = convert_to_tensor(rate)
            if rate.shape.ndims not in (None, 0):
                raise ValueError(f"`rate` must be a scalar, got shape {rate.shape}")
            rate = cast(rate, x.dtype, name="rate") if rate.dtype != x.dtype else rate
            scaled = realdiv(x, subtract(_like(x, 1), rate))
        rnd = random_uniform(_noise_shape(x, noise_shape), seed=seed, dtype=x.dtype)
        keep = greater_equal(rnd, rate if isinstance(rate, Tensor) else _like(x, rate))
        out = where(keep, scaled, _like(x, 0), name=scope)
        out.set_shape(x.shape)  # TF1: the result keeps x's static shape, whatever rate's shape is
        return out


def _noise_shape(x, noise_shape):
    if noise_shape is None:
        return x.shape.as_list() if x.shape.is_fully_defined() else shape(x)
    if isinstance(noise_shape, Tensor):
        return noise_shape
    dims = list(noise_shape)
    xs = x.shape
    if xs.ndims is not None and len(dims) == xs.ndims:
        dims = [xs.as_list()[i] if d is None else d for i, d in enumerate(dims)]
    if any(d is None for d in dims):
        raise ValueError(f"dropout: noise_shape {noise_shape} has unknown dimensions that x {xs} cannot fill")
    return [int(d) for d in dims]


def zero_fraction(value, name=None):
    """The fraction of zeros in `value`, a float32 scalar (TF1: 1 - count_nonzero / size, its op
    named `<scope>/fraction`)."""
    with name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        n = size(value, out_type=dtypes.int64)
        num_nonzero = count_nonzero(value, dtype=dtypes.int64)
        with name_scope("counts_to_fraction"):
            fraction = realdiv(cast(subtract(n, num_nonzero), dtypes.float32), cast(n, dtypes.float32))
        return identity(fraction, name="fraction")
