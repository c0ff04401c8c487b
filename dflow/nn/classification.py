"""Cross-entropies and in_top_k (TF1's `tf.nn.*_cross_entropy_with_logits`, `in_top_k`).

Two ops are defined here: `SparseLabelCheck`, the run-time range check of sparse labels, and
`LogisticLoss`, the elementwise logistic loss of `sigmoid_cross_entropy_with_logits` as one kernel
(TF1 builds it from eight elementwise ops and its gradient from a dozen more; the values agree to
float rounding)."""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.gradients import needs_gradient
from ..graph.graph import name_scope
from ..graph.registry import def_grad, not_differentiable, register_op
from ..kernels.array_ops import reshape, shape, stop_gradient
from ..kernels.common import apply_op, broadcast_infer, convert_to_tensor
from ..kernels.creation_ops import range as _range
from ..kernels.gather_ops import one_hot
from ..kernels.math_ops import (
    _log1p,
    _log1p_unit_f32,
    add,
    cast,
    equal,
    exp,
    greater,
    is_finite,
    less,
    log,
    logical_and,
    multiply,
    sigmoid,
    subtract,
    where,
)
from ..kernels.reduction_ops import reduce_all, reduce_any, reduce_max, reduce_sum
from ._common import (
    _axis,
    _check_xent_args,
    _float_tensor,
    _like,
    _pick,
    _shift,
    _stable_softplus,
)

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


def _logistic_loss(xp, x, z):
    """max(x, 0) - x * z + log1p(exp(-|x|)): finite for any finite logits x, labels z. float32
    numpy arrays of one shape: in place on three temporaries (a step's loss on [128, 65] ran
    17 numpy passes)."""
    if type(x) is np.ndarray and type(z) is np.ndarray and x.dtype == z.dtype == np.float32 \
            and x.shape == z.shape and x.size >= 256:
        e = np.abs(x)
        np.negative(e, out=e)
        np.exp(e, out=e)  # in (0, 1] (nan for a nan logit): log1p's u never overflows
        sp = _log1p_unit_f32(e)
        out = np.zeros(x.shape, np.float32)  # (maximum against a scalar: no vectorized loop, 2x slower)
        np.maximum(x, out, out=out)
        out -= np.multiply(x, z, out=e)  # (max(x, 0) - x z) first: exact where they cancel
        out += sp
        return out
    return xp.maximum(x, xp.zeros_like(x)) - x * z + _log1p(xp, xp.exp(-xp.abs(x)))


# Elementwise: one chunk kernel in Dask plans, fused with its neighbours.
register_op("LogisticLoss", broadcast_infer("fc", op_type="LogisticLoss"), eager=_logistic_loss, elementwise=True)


@def_grad("LogisticLoss")
def _logistic_loss_grad(op, g):
    """TF1's gradients of the composite: sigmoid(x) - z for the logits, -x for the labels."""
    x, z = op.inputs
    return [g * (sigmoid(x) - z), -(g * x) if needs_gradient(op, 1) else None]


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
        return apply_op("LogisticLoss", [logits, labels], name=scope)


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
