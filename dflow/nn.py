"""`dflow.nn`: activations, softmax, cross-entropies, dropout, moments, pooling (the ops of
`kernels/pool_ops.py`), LRN, fused batch norm and in_top_k (TF1's `tf.nn`).

Every function here (but the pools) is a composite of public dflow ops, so each runs chunked on
Dask and gets its gradient from the rules of those ops. Each is written so that its values AND its automatic
gradients stay finite for large logits (e.g. +-1000): softmax and log-softmax shift by a max that
is cut out of the gradient (softmax is shift invariant, so nothing is lost), softplus-like terms
use `max(x, 0) + log1p(exp(-|x|))`, and branches that could overflow (`expm1` in elu/selu) are fed
clipped inputs, because `where` sends a zero gradient into the unused branch and 0 * inf = nan.
The only op defined here is `SparseLabelCheck`, the run-time range check of sparse labels.
"""

from __future__ import annotations

import numbers

import numpy as np

from .errors import InvalidArgumentError
from .graph import dtypes
from .graph.graph import name_scope
from .graph.ops import Tensor, constant_value
from .graph.registry import not_differentiable, register_op
from .kernels.array_ops import reshape, shape, stop_gradient
from .kernels.common import apply_op, convert_to_tensor
from .kernels.creation_ops import range as _range
from .kernels.gather_ops import gather, one_hot, top_k
from .kernels.linalg_ops import matmul
from .kernels.manip_ops import add_n, concat, squeeze
from .kernels.math_ops import (
    abs,  # noqa: A004 - the op, not the builtin
    add,
    cast,
    equal,
    exp,
    expm1,
    greater,
    greater_equal,
    is_finite,
    less,
    log,
    log1p,
    logical_and,
    maximum,
    minimum,
    multiply,
    pow,  # noqa: A004 - the op, not the builtin
    realdiv,
    relu,
    rsqrt,
    sigmoid,
    square,
    subtract,
    tanh,
    where,
)
from .kernels.pad_ops import pad
from .kernels.pool_ops import (
    avg_pool,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    avg_pool_v2,
    max_pool,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_pool_v2,
    max_pool_with_argmax,
    pool,
)
from .kernels.random_ops import random_uniform
from .kernels.reduction_ops import reduce_all, reduce_any, reduce_max, reduce_mean, reduce_sum

__all__ = [
    "relu", "relu6", "elu", "selu", "leaky_relu", "softplus", "softsign", "sigmoid", "tanh",
    "softmax", "log_softmax", "l2_loss", "l2_normalize", "bias_add", "xw_plus_b",
    "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
    "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
    "weighted_cross_entropy_with_logits", "dropout", "moments", "batch_normalization",
    "embedding_lookup", "top_k",
    # pooling and normalization (issue 13)
    "max_pool", "avg_pool", "max_pool_with_argmax", "max_pool1d", "avg_pool1d", "max_pool2d", "avg_pool2d",
    "max_pool3d", "avg_pool3d", "max_pool_v2", "avg_pool_v2", "pool", "local_response_normalization", "lrn",
    "fused_batch_norm", "batch_norm_with_global_normalization", "in_top_k", "crelu",
]

_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


# ---- helpers -----------------------------------------------------------------------------------


def _float_tensor(x, fn, arg="features"):
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise TypeError(f"Value passed to parameter {arg!r} of {fn} has DataType {x.dtype.name} not in "
                        "the allowed types float16, float32, float64")
    return x


def _like(x, value):
    """A constant of x's dtype."""
    return convert_to_tensor(value, dtype=x.dtype)


def _axis(axis, x, fn):
    """`axis` (int, default -1) as an int in [0, rank); InvalidArgumentError out of range (TF1)."""
    axis = -1 if axis is None else axis
    if isinstance(axis, Tensor):
        v = constant_value(axis)
        if v is None:
            raise ValueError(f"{fn}: axis {axis.name!r} must be known when the graph is built")
        axis = v
    axis = int(axis)
    n = x.shape.ndims
    if n is None:
        if axis < 0 and axis != -1:
            raise ValueError(f"{fn}: a negative axis other than -1 needs a tensor of known rank")
        return axis
    if not -n <= axis < n:
        raise InvalidArgumentError(None, None, f"`dim` must be in the range [{-n}, {n}) where {n} is the "
                                   f"number of dimensions in the input. Received: dim={axis}")
    return axis % n


def _shift(x, axis):
    """x minus its max along `axis`, with the max cut out of the gradient: every value <= 0, so
    exp() cannot overflow, and the max's own (non-smooth) gradient is never needed."""
    return subtract(x, stop_gradient(reduce_max(x, axis, keepdims=True)))


def _softplus_parts(x):
    """(max(x, 0), -|x|), both through `where` on `x >= 0`, so that at x == 0 the gradient of
    max(x,0) + log1p(exp(-|x|)) is exactly 1/2 (max/abs rules would give 1 and 0)."""
    zeros = _like(x, 0)  # a scalar, broadcast by the ops: no op on the gradient path depends on x
    cond = greater_equal(x, zeros)
    return where(cond, x, zeros), where(cond, -x, x)


def _stable_softplus(x, name=None):
    relu_x, neg_abs = _softplus_parts(x)
    return add(relu_x, log1p(exp(neg_abs)), name=name)


def _check_xent_args(fn, sentinel, labels, logits):
    if sentinel is not None:
        raise ValueError(f"Only call `{fn}` with named arguments (labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError(f"Both `labels` and `logits` must be provided for {fn}. Received: "
                         f"labels={labels!r} and logits={logits!r}")


# ---- activations -------------------------------------------------------------------------------


def relu6(features, name=None):
    """min(max(x, 0), 6) elementwise; gradient 0 at 0 and at 6 (TF1's Relu6Grad); float or int."""
    with name_scope(name, "Relu6", [features]) as scope:
        r = relu(convert_to_tensor(features))
        six = _like(r, 6)
        return where(greater_equal(r, six), six, r, name=scope)


def elu(features, name=None):
    """x if x > 0 else exp(x) - 1, elementwise (float); finite gradients for any finite x."""
    with name_scope(name, "Elu", [features]) as scope:
        x = _float_tensor(features, "Elu")
        zeros = _like(x, 0)
        return where(greater(x, zeros), x, expm1(minimum(x, zeros)), name=scope)


def selu(features, name=None):
    """scale * (x if x >= 0 else alpha * (exp(x) - 1)) with the SELU constants (float)."""
    with name_scope(name, "Selu", [features]) as scope:
        x = _float_tensor(features, "Selu")
        zeros = _like(x, 0)
        neg = multiply(_like(x, _SELU_SCALE * _SELU_ALPHA), expm1(minimum(x, zeros)))
        return where(greater_equal(x, zeros), multiply(_like(x, _SELU_SCALE), x), neg, name=scope)


def leaky_relu(features, alpha=0.2, name=None):
    """x if x > 0 else alpha * x, elementwise (float); gradient alpha at 0 (TF1)."""
    with name_scope(name, "LeakyRelu", [features, alpha]) as scope:
        x = convert_to_tensor(features, name="features")
        x = cast(x, dtypes.float32) if x.dtype.is_integer else _float_tensor(x, "LeakyRelu")  # TF1 casts ints
        return where(greater(x, _like(x, 0)), x, multiply(_like(x, alpha), x), name=scope)


def softplus(features, name=None):
    """log(1 + exp(x)) elementwise, as max(x, 0) + log1p(exp(-|x|)) (no overflow; float)."""
    with name_scope(name, "Softplus", [features]) as scope:
        return _stable_softplus(_float_tensor(features, "Softplus"), name=scope)


def softsign(features, name=None):
    """x / (1 + |x|) elementwise (float)."""
    with name_scope(name, "Softsign", [features]) as scope:
        x = _float_tensor(features, "Softsign")
        return realdiv(x, add(_like(x, 1), abs(x)), name=scope)


# ---- softmax -----------------------------------------------------------------------------------


def softmax(logits, axis=None, name=None, dim=None):
    """exp(x) / sum(exp(x)) along `axis` (default -1), computed shifted by the max.

    Same shape and dtype as `logits` (float; TypeError otherwise). InvalidArgumentError for an
    axis outside [-rank, rank) (TF1). Rows of all -inf or with +inf give nan, as TF1.
    """
    axis = _pick(axis, dim)
    with name_scope(name, "Softmax", [logits]) as scope:
        x = _float_tensor(logits, "Softmax", "logits")
        a = _axis(axis, x, "softmax")
        e = exp(_shift(x, a))
        return realdiv(e, reduce_sum(e, a, keepdims=True), name=scope)


def log_softmax(logits, axis=None, name=None, dim=None):
    """x - log(sum(exp(x))) along `axis` (default -1), computed shifted by the max.

    Same shape and dtype as `logits` (float; TypeError otherwise); InvalidArgumentError for an
    axis out of range. -inf entries stay -inf.
    """
    axis = _pick(axis, dim)
    with name_scope(name, "LogSoftmax", [logits]) as scope:
        x = _float_tensor(logits, "LogSoftmax", "logits")
        a = _axis(axis, x, "log_softmax")
        shifted = _shift(x, a)
        return subtract(shifted, log(reduce_sum(exp(shifted), a, keepdims=True)), name=scope)


def _pick(axis, dim):
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    return dim if axis is None else axis


# ---- cross-entropies ---------------------------------------------------------------------------


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """-sum(labels * log_softmax(logits)) along `axis` (default -1); backprops into labels.

    labels: a probability distribution along `axis`, broadcastable to logits and cast to their
    dtype. Returns logits' shape without `axis`, logits' dtype (float16 is computed in float32).
    Gradients are TF1's: `softmax - labels` for logits (also when labels do not sum to one) and
    `-log_softmax(logits)` for labels.
    """
    axis = _pick(axis, dim)
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = _float_tensor(logits, "softmax_cross_entropy_with_logits", "logits")
        in_dtype = logits.dtype
        if in_dtype == dtypes.float16:
            logits = cast(logits, dtypes.float32)
        labels = convert_to_tensor(labels, preferred_dtype=logits.dtype)
        if labels.dtype != logits.dtype:
            labels = cast(labels, logits.dtype)
        if logits.shape.ndims == 0:
            raise ValueError("softmax_cross_entropy_with_logits: logits must have rank >= 1, got a scalar")
        a = _axis(-1 if axis is None else axis, logits, "softmax_cross_entropy_with_logits")
        shifted = _shift(logits, a)
        lse = log(reduce_sum(exp(shifted), a, keepdims=True))
        # The value is TF1's sum(labels * (lse - shifted)). The labels term sees lse as a constant
        # and the zero-valued (lse - stop_gradient(lse)) adds d lse = softmax once, so the logits
        # gradient is softmax - labels whatever sum(labels) is, as TF1's fused kernel gives.
        cost = reduce_sum(multiply(labels, subtract(stop_gradient(lse), shifted)), a)
        cost = add(cost, reduce_sum(subtract(lse, stop_gradient(lse)), a),
                   name=None if in_dtype == dtypes.float16 else scope)
        return cast(cost, in_dtype, name=scope) if in_dtype == dtypes.float16 else cost


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1, name=None,
                                      axis=None):
    """As `softmax_cross_entropy_with_logits_v2`, but labels get no gradient (TF1's v1)."""
    _check_xent_args("softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    if axis is not None:
        dim = axis
    with name_scope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as scope:
        labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=dim, name=scope)


def _label_check_infer(inputs, attrs):
    labels = inputs[0]
    if not labels.dtype.is_integer:
        raise TypeError(f"Value passed to parameter 'labels' has DataType {labels.dtype.name} not in list "
                        "of allowed values: int32, int64")
    return labels.shape, labels.dtype


def _label_check(xp, labels, depth):
    n = int(depth)
    bad = (labels < 0) | (labels >= n)
    if bool(xp.any(bad)):
        v = int(xp.reshape(labels[bad], (-1,))[0])
        raise InvalidArgumentError(None, None, f"Received a label value of {v} which is outside the valid "
                                   f"range of [0, {n}).")
    return labels


# Elementwise, so the check runs chunk by chunk (fused with its neighbours) in Dask plans.
register_op("SparseLabelCheck", _label_check_infer, eager=_label_check, elementwise=True)
not_differentiable("SparseLabelCheck")


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """-log_softmax(logits)[label] for integer class labels.

    labels: int32/int64 of shape logits.shape[:-1] (TypeError, ValueError otherwise); a label
    outside [0, num_classes) raises InvalidArgumentError when the plan runs (TF1 on CPU).
    Returns labels' shape and logits' dtype; gradient `softmax - one_hot(labels)`.
    """
    _check_xent_args("sparse_softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]) as scope:
        labels, logits = convert_to_tensor(labels), _float_tensor(logits, "SparseSoftmaxCrossEntropyWithLogits",
                                                                  "logits")
        if not labels.dtype.is_integer:
            raise TypeError(f"Value passed to parameter 'labels' has DataType {labels.dtype.name} not in "
                            "list of allowed values: int32, int64")
        ls, gs = labels.shape, logits.shape
        if gs.ndims == 0:
            raise ValueError(f"`logits` cannot be a scalar. Received logits={logits!r}")
        if gs.ndims is not None and ls.ndims is not None:
            if ls.ndims != gs.ndims - 1:
                raise ValueError(f"`labels.shape.rank` must equal `logits.shape.rank - 1`. Received: "
                                 f"labels.shape={ls} of rank {ls.ndims} and logits.shape={gs} of rank {gs.ndims}")
            if not ls.is_compatible_with(gs[:-1]):
                raise ValueError(f"`labels.shape` must equal `logits.shape` except for the last dimension. "
                                 f"Received: labels.shape={ls} and logits.shape={gs}")
        in_dtype = logits.dtype
        if in_dtype == dtypes.float16:
            logits = cast(logits, dtypes.float32)
        n = gs.as_list()[-1] if gs.ndims is not None else None
        depth = convert_to_tensor(int(n), dtype=dtypes.int32) if n is not None else \
            cast(shape(logits)[-1], dtypes.int32)
        checked = apply_op("SparseLabelCheck", [labels, cast(depth, labels.dtype)])
        shifted = _shift(logits, -1)
        lse = log(reduce_sum(exp(shifted), -1))
        picked = reduce_sum(multiply(one_hot(checked, depth, dtype=logits.dtype), shifted), -1)
        if in_dtype == dtypes.float16:
            return cast(subtract(lse, picked), in_dtype, name=scope)
        return subtract(lse, picked, name=scope)


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Elementwise logistic loss max(x, 0) - x * z + log1p(exp(-|x|)) for logits x, labels z.

    labels and logits of one shape (ValueError otherwise) and one float dtype; the result has
    that shape and dtype. Gradient sigmoid(x) - z, finite for any finite logits.
    """
    _check_xent_args("sigmoid_cross_entropy_with_logits", _sentinel, labels, logits)
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = _float_tensor(logits, "sigmoid_cross_entropy_with_logits", "logits")
        labels = convert_to_tensor(labels, preferred_dtype=logits.dtype)
        if not labels.shape.is_compatible_with(logits.shape):
            raise ValueError(f"`logits` and `labels` must have the same shape, received ({logits.shape} vs "
                             f"{labels.shape}).")
        relu_x, neg_abs = _softplus_parts(logits)
        return add(subtract(relu_x, multiply(logits, labels)), log1p(exp(neg_abs)), name=scope)


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None, targets=None):
    """Logistic loss with positives weighted: (1 - z) * x + (1 + (pos_weight - 1) * z) * softplus(-x).

    labels (or TF1's deprecated `targets`) and logits of one shape and float dtype; pos_weight a
    scalar or broadcastable tensor. Same shape and dtype as logits.
    """
    if targets is not None:
        if labels is not None:
            raise ValueError("Cannot specify both 'labels' and 'targets'")
        labels = targets
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = _float_tensor(logits, "weighted_cross_entropy_with_logits", "logits")
        labels = convert_to_tensor(labels, preferred_dtype=logits.dtype)
        if not labels.shape.is_compatible_with(logits.shape):
            raise ValueError(f"`logits` and `labels` must have the same shape, received ({logits.shape} vs "
                             f"{labels.shape}).")
        pos_weight = convert_to_tensor(pos_weight, preferred_dtype=logits.dtype)
        log_weight = add(_like(logits, 1), multiply(subtract(pos_weight, _like(logits, 1)), labels))
        return add(multiply(subtract(_like(logits, 1), labels), logits),
                   multiply(log_weight, _stable_softplus(-logits)), name=scope)


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


def _squared_difference(a, b):
    from .kernels.math_ops import squared_difference

    return squared_difference(a, b)


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
    from .kernels.math_ops import sqrt

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


def in_top_k(predictions, targets, k, name=None):
    """For each row b, whether predictions[b, targets[b]] is among the k largest of the row.

    A target tied with the k-th largest counts as in (fewer than k predictions are strictly
    larger); a row holding a non-finite prediction, or a target outside [0, classes), gives
    False (TF1's kernel). predictions [batch, classes] float; targets [batch] int32/int64.
    """
    with name_scope(name, "in_top_k", [predictions, targets]) as scope:
        p = _float_tensor(predictions, "InTopKV2", "predictions")
        t = convert_to_tensor(targets)
        if not t.dtype.is_integer:
            raise TypeError(f"in_top_k: targets must be int32 or int64, got {t.dtype.name}")
        if p.shape.ndims not in (None, 2) or t.shape.ndims not in (None, 1):
            raise ValueError(f"in_top_k: predictions must be 2-D and targets 1-D, got shapes {p.shape} and "
                             f"{t.shape}")
        classes = p.shape.as_list()[1] if p.shape.ndims == 2 and p.shape[1].value is not None else shape(p)[1]
        cols = _range(0, classes, dtype=t.dtype)
        target_col = equal(reshape(t, [-1, 1]), reshape(cols, [1, -1]))
        target_pred = reduce_max(where(target_col, p, _like(p, -np.inf)), 1, keepdims=True)
        better = reduce_sum(cast(greater(p, target_pred), dtypes.int32), 1)
        k = cast(convert_to_tensor(k), dtypes.int32)
        ok = logical_and(reduce_all(is_finite(p), 1), reduce_any(target_col, 1))
        return logical_and(ok, less(better, k), name=scope)


def crelu(features, name=None, axis=-1):
    """concat([relu(x), relu(-x)], axis): twice the size along `axis` (TF1's CReLU)."""
    with name_scope(name, "CRelu", [features]) as scope:
        x = convert_to_tensor(features, name="features")
        return relu(concat([x, -x], axis), name=scope)


# ---- convolutions (ops in dflow/kernels/conv_ops.py and depthwise_ops.py) ----------------------------

from .kernels.conv_ops import (  # noqa: E402 - the conv block of tf.nn, kept together
    atrous_conv2d,
    conv1d,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
    convolution,
)
from .kernels.depthwise_ops import depthwise_conv2d, depthwise_conv2d_native, separable_conv2d  # noqa: E402

__all__ += ["conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "conv2d_transpose", "conv1d",
            "depthwise_conv2d", "depthwise_conv2d_native", "separable_conv2d", "atrous_conv2d", "convolution"]
