"""The building blocks of dense layers: bias_add, xw_plus_b, embedding_lookup and dropout."""

from __future__ import annotations

import numbers

import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.ops import Tensor
from ..kernels.array_ops import reshape, shape
from ..kernels.common import convert_to_tensor
from ..kernels.gather_ops import gather
from ..kernels.linalg_ops import matmul
from ..kernels.manip_ops import concat
from ..kernels.math_ops import (
    add,
    cast,
    greater,
    greater_equal,
    maximum,
    multiply,
    realdiv,
    sqrt,
    square,
    subtract,
    where,
)
from ..kernels.random_ops import random_uniform
from ..kernels.reduction_ops import reduce_sum
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

    Shards follow `partition_strategy` ("mod": id i lives in shard i % n; "div": contiguous
    blocks) and need static first dimensions. `max_norm` clips each looked-up row's L2 norm.
    Returns ids.shape + params.shape[1:]; InvalidArgumentError at run time for an id out of range.
    """
    del validate_indices
    shards = list(params) if isinstance(params, (list, tuple)) else [params]
    if not shards:
        raise ValueError("Need at least one param")
    with name_scope(name, "embedding_lookup", shards + [ids]) as scope:
        shards = [convert_to_tensor(p) for p in shards]
        ids = convert_to_tensor(ids)
        if len(shards) == 1:
            table, idx = shards[0], ids
        else:
            table, idx = _sharded_index(shards, ids, partition_strategy)
        out = gather(table, idx, name=None if max_norm is not None else scope)
        if max_norm is None:
            return out
        extra = list(range(ids.shape.ndims, out.shape.ndims)) if ids.shape.ndims is not None else [-1]
        norm2 = reduce_sum(square(out), extra, keepdims=True)
        limit = convert_to_tensor(max_norm, dtype=out.dtype)
        scale_ = where(greater(norm2, square(limit)), realdiv(limit, _safe_sqrt(norm2)), _like(norm2, 1))
        return multiply(out, scale_, name=scope)


def _safe_sqrt(x):
    return sqrt(maximum(x, _like(x, np.finfo(x.dtype.np_dtype).tiny)))


def _sharded_index(shards, ids, strategy):
    sizes = [p.shape.as_list()[0] if p.shape.ndims else None for p in shards]
    if any(s is None for s in sizes):
        raise ValueError("embedding_lookup: sharded params need static first dimensions")
    n = len(shards)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    table = concat(shards, 0)
    ids64 = cast(ids, dtypes.int64)
    if strategy == "div":
        return table, ids64  # shards hold contiguous id blocks, so concatenating them is the table
    if strategy != "mod":
        raise ValueError(f"Unrecognized partition strategy: {strategy}")
    shard = ids64 % n
    return table, add(gather(convert_to_tensor(offsets), shard), ids64 // n)


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
