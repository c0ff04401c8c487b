"""Normalization: l2_loss, l2_normalize, moments, batch_normalization, local response
normalization and TF1's fused batch norm, all composites of public ops (their gradients come from
the rules of those ops)."""

from __future__ import annotations

import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from ..kernels.array_ops import reshape, shape, stop_gradient
from ..kernels.common import convert_to_tensor
from ..kernels.manip_ops import add_n, squeeze
from ..kernels.math_ops import (
    add,
    cast,
    maximum,
    multiply,
    pow,  # noqa: A004 - the op, not the builtin
    realdiv,
    rsqrt,
    square,
    subtract,
)
from ..kernels.pad_ops import pad
from ..kernels.reduction_ops import reduce_mean, reduce_sum
from ._common import (
    _float_tensor,
    _like,
    _pick,
    _squared_difference,
)

# ---- losses, normalization ---------------------------------------------------------------------


def l2_loss(t, name=None):
    """sum(t ** 2) / 2, a scalar of t's (float) dtype."""
    with name_scope(name, "L2Loss", [t]) as scope:
        t = _float_tensor(t, "L2Loss", "t")
        return multiply(reduce_sum(square(t)), _like(t, 0.5), name=scope)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon)): unit L2 norm along `axis` (None: all axes)."""
    axis = _pick(axis, dim)
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = _float_tensor(x, "l2_normalize", "x")
        square_sum = reduce_sum(square(x), axis, keepdims=True)
        x_inv_norm = rsqrt(maximum(square_sum, _like(x, epsilon)))
        return multiply(x, x_inv_norm, name=scope)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of `x` over `axes` (a list of ints); `shift` is unused (as TF1).

    Reduced axes are removed unless keepdims. float16 is computed in float32; the results keep
    x's dtype (integers use truncating means, as TF1).
    """
    del shift
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'")
    keep = bool(keepdims if keepdims is not None else keep_dims)
    axes = [int(a) for a in (axes if isinstance(axes, (list, tuple)) else [axes])]
    with name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x)
        y = cast(x, dtypes.float32) if x.dtype == dtypes.float16 else x
        mean = reduce_mean(y, axes, keepdims=True, name="mean")
        variance = reduce_mean(_squared_difference(y, stop_gradient(mean)), axes, keepdims=True,
                               name="variance")
        if not keep:
            mean, variance = squeeze(mean, axes), squeeze(variance, axes)
        if x.dtype == dtypes.float16:
            return cast(mean, dtypes.float16), cast(variance, dtypes.float16)
        return mean, variance



def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + epsilon) + offset; offset/scale may be None."""
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x)
        variance = convert_to_tensor(variance, preferred_dtype=x.dtype)
        inv = rsqrt(add(variance, convert_to_tensor(variance_epsilon, dtype=variance.dtype)))
        if scale is not None:
            inv = multiply(inv, scale)
        shift = -mean * inv if offset is None else subtract(offset, multiply(mean, inv))
        return add(multiply(x, cast(inv, x.dtype)), cast(shift, x.dtype))



# ---- pooling, local response and batch normalization, in_top_k, crelu (issue 13) ---------------
# Pools are ops of dflow/kernels/pool_ops.py (blockwise over N when chunked); the rest are
# composites, so their gradients come from the rules of the ops they are made of.


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5, name=None):  # noqa: A002
    """input / (bias + alpha * sqr_sum) ** beta, sqr_sum the sum of input ** 2 over the last axis
    window [d - depth_radius, d + depth_radius] (TF1's LRN). input: 4-D float (ValueError otherwise)."""
    with name_scope(name, "LRN", [input]) as scope:
        x = _float_tensor(input, "LRN", "input")
        if x.shape.ndims not in (None, 4):
            raise ValueError(f"LRN: input must be 4-dimensional, got {x.name!r} of shape {x.shape}")
        r = int(depth_radius)
        if r < 0:
            raise ValueError(f"LRN: depth_radius must be >= 0, got {depth_radius}")
        sq = square(x)
        padded = pad(sq, [[0, 0], [0, 0], [0, 0], [r, r]]) if r else sq
        total = sq if not r else add_n([padded[..., j:(j - 2 * r) or None] for j in range(2 * r + 1)])
        base = add(_like(x, bias), multiply(_like(x, alpha), total))
        return realdiv(x, pow(base, _like(x, beta)), name=scope)


lrn = local_response_normalization


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC",
                     is_training=True, name=None):
    """(y, batch_mean, batch_var) of TF1's fused batch norm over the N, H, W axes of a 4-D x.

    Training: y normalizes with the batch mean and biased variance; batch_var is the unbiased
    one (n / (n - 1), as TF1's kernel; mean/variance must be None). Inference: the given mean and
    variance are used and returned. epsilon is at least 1.001e-5 (TF1). float16 x is computed in
    float32. The statistics outputs carry no gradient (TF1's FusedBatchNormGrad ignores theirs).
    """
    with name_scope(name, "FusedBatchNorm", [x, scale, offset]):
        x = _float_tensor(x, "FusedBatchNorm", "x")
        if x.shape.ndims not in (None, 4):
            raise ValueError(f"FusedBatchNorm: x must be 4-dimensional, got {x.name!r} of shape {x.shape}")
        if data_format not in ("NHWC", "NCHW"):
            raise ValueError(f"FusedBatchNorm: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
        if is_training and (mean is not None or variance is not None):
            raise ValueError("Both 'mean' and 'variance' must be None if is_training is True.")
        if not is_training and (mean is None or variance is None):
            raise ValueError("fused_batch_norm: inference (is_training=False) needs 'mean' and 'variance'")
        epsilon = max(float(epsilon), 1.001e-5)  # TF1: the cuDNN minimum, applied on every device
        xf = cast(x, dtypes.float32) if x.dtype == dtypes.float16 else x
        axes, bshape = ([0, 1, 2], [1, 1, 1, -1]) if data_format == "NHWC" else ([0, 2, 3], [1, -1, 1, 1])
        params = [_channel_param(v, xf, what) for v, what in ((scale, "scale"), (offset, "offset"))]
        if is_training:
            m = reduce_mean(xf, axes, keepdims=True)
            v = reduce_mean(_squared_difference(xf, stop_gradient(m)), axes, keepdims=True)
            n = _per_channel_count(xf, axes)
            batch_mean = reshape(m, [-1])
            batch_var = multiply(reshape(v, [-1]), realdiv(n, maximum(subtract(n, _like(n, 1)), _like(n, 1))))
        else:
            batch_mean, batch_var = (_channel_param(t, xf, w) for t, w in ((mean, "mean"), (variance, "variance")))
            m, v = reshape(stop_gradient(batch_mean), bshape), reshape(stop_gradient(batch_var), bshape)
        inv = multiply(rsqrt(add(v, _like(v, epsilon))), reshape(params[0], bshape))
        y = add(multiply(subtract(xf, m), inv), reshape(params[1], bshape))
        y = cast(y, x.dtype) if x.dtype == dtypes.float16 else y
        return y, stop_gradient(batch_mean), stop_gradient(batch_var)


def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None, variance_epsilon=None,
                                         scale_after_normalization=None, name=None, input=None, mean=None,  # noqa: A002
                                         variance=None):
    """TF1's deprecated batch_normalization with the arguments in another order (gamma only applied
    with scale_after_normalization)."""
    t, m, v = (input if t is None else t), (mean if m is None else m), (variance if v is None else v)
    return batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None, variance_epsilon,
                               name=name or "batchnorm")


def _channel_param(t, x, what):
    t = convert_to_tensor(t, preferred_dtype=x.dtype, name=what)
    if t.shape.ndims not in (None, 1):
        raise ValueError(f"FusedBatchNorm: {what} must be 1-dimensional, got {t.name!r} of shape {t.shape}")
    return cast(t, x.dtype) if t.dtype != x.dtype else t


def _per_channel_count(x, axes):
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * 4
    if all(dims[a] is not None for a in axes):
        return _like(x, float(np.prod([dims[a] for a in axes])))
    s = shape(x)
    return cast(s[axes[0]] * s[axes[1]] * s[axes[2]], x.dtype)
