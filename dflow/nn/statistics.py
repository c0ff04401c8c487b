"""TF1's moment pieces and small losses, composites of public ops (gradients from theirs):
sufficient_statistics / normalize_moments (moments in two steps), weighted_moments,
log_poisson_loss, swish/silu, relu_layer, and the per-replica loss scaling of
compute_average_loss / scale_regularization_loss (one replica on dflow)."""

from __future__ import annotations

import math

import numpy as np

from ..graph.graph import name_scope
from ..kernels.array_ops import shape
from ..kernels.common import convert_to_tensor
from ..kernels.creation_ops import zeros_like
from ..kernels.gather_ops import gather
from ..kernels.manip_ops import squeeze
from ..kernels.math_ops import (
    add,
    cast,
    exp,
    less_equal,
    log,
    multiply,
    realdiv,
    reciprocal,
    relu,
    sigmoid,
    square,
    subtract,
    where,
)
from ..kernels.reduction_ops import reduce_prod, reduce_sum
from ._common import _float_tensor, _like, _squared_difference
from .core import xw_plus_b

__all__ = ["sufficient_statistics", "normalize_moments", "weighted_moments", "log_poisson_loss", "swish", "silu",
           "relu_layer", "compute_average_loss", "scale_regularization_loss"]


def _keep(keep_dims, keepdims):
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'")
    return bool(keepdims if keepdims is not None else keep_dims)


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """(count, Σ(x - shift), Σ(x - shift)², shift) over `axes`: count is the number of reduced
    elements in x's dtype; shift is None when not given (then the sums are of x)."""
    keep = _keep(keep_dims, keepdims)
    axes = [int(a) for a in (axes if isinstance(axes, (list, tuple)) else [axes])]
    with name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x)
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        if dims is not None and all(dims[a] is not None for a in axes):
            counts = convert_to_tensor(np.array(np.prod([dims[a] for a in axes]), x.dtype.as_numpy_dtype),
                                       name="count")
        else:
            counts = cast(reduce_prod(gather(shape(x), axes)), x.dtype, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, dtype=x.dtype, name="shift")
            centred = subtract(x, shift)
            m_ss = reduce_sum(centred, axes, keepdims=keep, name="mean_ss")
            v_ss = reduce_sum(square(centred), axes, keepdims=keep, name="var_ss")
        else:
            m_ss = reduce_sum(x, axes, keepdims=keep, name="mean_ss")
            v_ss = reduce_sum(square(x), axes, keepdims=keep, name="var_ss")
        return counts, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from sufficient_statistics' sums: mean = Σ/n (+ shift), variance =
    Σ²/n - (Σ/n)²."""
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = reciprocal(convert_to_tensor(counts), name="divisor")
        shifted_mean = multiply(mean_ss, divisor, name="shifted_mean")
        mean = add(shifted_mean, shift, name="mean") if shift is not None else shifted_mean
        variance = subtract(multiply(variance_ss, divisor), square(shifted_mean), name="variance")
        return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of x over `axes`, each element counted `frequency_weights` times (weights
    broadcast against x)."""
    keep = _keep(keep_dims, keepdims)
    axes = [int(a) for a in (axes if isinstance(axes, (list, tuple)) else [axes])]
    with name_scope(name, "weighted_moments", [x, frequency_weights]):
        x = convert_to_tensor(x)
        weights = cast(convert_to_tensor(frequency_weights), x.dtype)
        weighted_sum = reduce_sum(multiply(weights, x), axes, keepdims=True)
        divisor = reciprocal(reduce_sum(add(weights, zeros_like(x)), axes, keepdims=True))
        mean = multiply(weighted_sum, divisor)
        variance = multiply(reduce_sum(multiply(weights, _squared_difference(x, mean)), axes, keepdims=True),
                            divisor)
        if not keep:
            mean, variance = squeeze(mean, axes), squeeze(variance, axes)
        return mean, variance


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - log_input·targets, the Poisson negative log likelihood up to a constant;
    with compute_full_loss, plus Stirling's targets·log(targets) - targets + ½log(2π·targets)
    where targets > 1. ValueError when the shapes differ (TF1's words)."""
    with name_scope(name, "log_poisson_loss", [log_input, targets]) as scope:
        log_input = _float_tensor(log_input, "log_poisson_loss", "log_input")
        targets = convert_to_tensor(targets, dtype=log_input.dtype, name="targets")
        if not log_input.shape.is_compatible_with(targets.shape):
            raise ValueError(f"log_input and targets must have the same shape ({log_input.shape} vs "
                             f"{targets.shape})")
        result = subtract(exp(log_input), multiply(log_input, targets))
        if not compute_full_loss:
            return add(result, _like(result, 0.0), name=scope)
        safe = where(less_equal(targets, _like(targets, 0.0)), zeros_like(targets) + 1.0, targets)
        stirling = subtract(multiply(targets, log(safe)), targets) + \
            multiply(_like(targets, 0.5), log(multiply(_like(targets, 2.0 * math.pi), safe)))
        small = less_equal(targets, _like(targets, 1.0))
        return add(result, where(small, zeros_like(targets), stirling), name=scope)


def swish(features, beta=1.0, name=None):
    """features · sigmoid(beta · features) (SiLU when beta is 1)."""
    with name_scope(name, "swish", [features]) as scope:
        features = _float_tensor(features, "swish")
        scaled = features if beta == 1.0 else multiply(features, _like(features, beta))
        return multiply(features, sigmoid(scaled), name=scope)


silu = swish  # TF's other name for it


def relu_layer(x, weights, biases, name=None):
    """relu(x · weights + biases)."""
    with name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        return relu(xw_plus_b(x, weights, biases), name=scope)


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """Σ(per_example_loss · sample_weight) / global_batch_size (default: the batch size; dflow runs
    one replica). Scalar; ValueError for a non-float loss."""
    with name_scope(None, "average_loss", [per_example_loss]):
        loss = _float_tensor(per_example_loss, "compute_average_loss", "per_example_loss")
        if sample_weight is not None:
            loss = multiply(loss, cast(convert_to_tensor(sample_weight), loss.dtype))
        total = reduce_sum(loss)
        if global_batch_size is None:
            batch = loss.shape[0].value if loss.shape.ndims else None
            size = convert_to_tensor(float(batch), dtype=loss.dtype) if batch is not None else \
                cast(shape(loss)[0], loss.dtype)
        else:
            size = convert_to_tensor(global_batch_size, dtype=loss.dtype)
        return realdiv(total, size)


def scale_regularization_loss(regularization_loss):
    """Σ regularization_loss divided by the number of replicas (one on dflow)."""
    with name_scope(None, "scale_regularization_loss", [regularization_loss]):
        return reduce_sum(convert_to_tensor(regularization_loss))
