"""`dflow.losses`: TF1's `tf.losses` — weighted, reduced losses added to the LOSSES collection.

Each loss computes elementwise losses, multiplies them by `weights` (a scalar, or a tensor of the
losses' rank whose dims are 1 or equal to the losses': checked when the graph is built, a
ValueError otherwise) and reduces them as `reduction` says (`Reduction`, default
SUM_BY_NONZERO_WEIGHTS: the weighted sum divided by the number of non-zero weights after
broadcasting, 0 when there are none). Inputs are cast to float32 as in TF1; losses that come out
float64 (cross-entropies of float64 logits) are reduced in float64 rather than TF1's float32.
"""

from __future__ import annotations

import numpy as np

from . import nn
from .graph import dtypes
from .graph.graph import add_to_collection, get_collection, name_scope
from .graph.keys import GraphKeys
from .graph.ops import Tensor
from .kernels.array_ops import rank, shape, size, stop_gradient
from .kernels.common import constant, convert_to_tensor
from .kernels.creation_ops import ones_like, zeros_like
from .kernels.creation_ops import range as _range
from .kernels.gather_ops import gather
from .kernels.manip_ops import add_n, squeeze
from .kernels.math_ops import (
    abs,  # noqa: A004 - the op, not the builtin
    add,
    cast,
    equal,
    greater,
    log,
    maximum,
    minimum,
    multiply,
    realdiv,
    relu,
    square,
    squared_difference,
    subtract,
    where,
)
from .kernels.reduction_ops import reduce_prod, reduce_sum

__all__ = [
    "Reduction", "compute_weighted_loss", "absolute_difference", "mean_squared_error", "log_loss",
    "huber_loss", "hinge_loss", "cosine_distance", "softmax_cross_entropy", "sparse_softmax_cross_entropy",
    "sigmoid_cross_entropy", "add_loss", "get_losses", "get_regularization_loss",
    "get_regularization_losses", "get_total_loss", "mean_pairwise_squared_error",
]


class Reduction:
    """How a weighted loss is reduced (TF1's `tf.losses.Reduction`)."""

    NONE = "none"  # the weighted losses, unreduced
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"  # sum / number of loss elements
    MEAN = "weighted_mean"  # sum / sum of the (broadcast) weights
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"  # sum / number of non-zero weights
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_OVER_NONZERO_WEIGHTS,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of {cls.all()}.")


# ---- collections ---------------------------------------------------------------------------------


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Adds `loss` to `loss_collection` (nothing when the collection is None or empty)."""
    if loss_collection:
        add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    """The losses in `loss_collection` whose names match `scope` (a regex from the start)."""
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    """The tensors in REGULARIZATION_LOSSES (e.g. from `get_variable(regularizer=...)`)."""
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularization losses, or a float32 constant 0.0 when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return add_n(losses, name=name)
    return constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the LOSSES collection (and the regularization losses); ValueError if empty."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    return add_n(losses, name=name)


# ---- weighting and reduction -------------------------------------------------------------------


def _check_weights(weights, losses):
    """TF1's assert_broadcastable, on static shapes (unknown dims pass)."""
    ws, ls = weights.shape, losses.shape
    if ws.ndims is None or ls.ndims is None or ws.ndims == 0:
        return
    msg = (f"weights can not be broadcast to values. values.rank={ls.ndims}. weights.rank={ws.ndims}. "
           f"values.shape={ls}. weights.shape={ws}.")
    if ws.ndims != ls.ndims:
        raise ValueError(msg)
    for i, (w, v) in enumerate(zip(ws.as_list(), ls.as_list())):
        if w is not None and v is not None and w != 1 and w != v:
            raise ValueError(f"weights can not be broadcast to values. Mismatch at dim {i}. "
                             f"values.shape={ls}. weights.shape={ws}.")


def _broadcast_count(weights, losses, dtype):
    """How many loss elements each weight element stands for after broadcasting: the product of
    the losses' dims where weights have size 1. Built from static dims or `shape(losses)` (int
    ops), never from `ones_like(losses)`, so nothing on the losses' gradient path is added."""
    ls = losses.shape
    wr = weights.shape.ndims
    if wr is None or ls.ndims is None:
        raise ValueError(f"weights and losses need known ranks (weights {weights.shape}, losses {ls})")
    axes = list(range(ls.ndims)) if wr == 0 else \
        [i for i, d in enumerate(weights.shape.as_list()) if d == 1]
    dims = [ls.as_list()[i] for i in axes]
    if all(d is not None for d in dims):
        return convert_to_tensor(int(np.prod(dims, dtype=np.int64)), dtype=dtype)
    picked = gather(shape(losses), np.array(axes, dtype=np.int32))
    return cast(reduce_prod(picked), dtype)


def _safe_div(num, den, name="value"):
    """num / den, or 0 where den == 0 (TF1's div_no_nan), with finite gradients."""
    zero = equal(den, convert_to_tensor(0, dtype=den.dtype))
    safe = where(zero, convert_to_tensor(1, dtype=den.dtype), den)
    return where(zero, convert_to_tensor(0, dtype=num.dtype), realdiv(num, safe), name=name)


def _num_present(losses, weights, weights_value):
    if isinstance(weights_value, float) and weights_value != 0.0:
        return _num_elements(losses)
    with name_scope(None, "num_present", [losses, weights]):
        zero = convert_to_tensor(0, dtype=weights.dtype)
        present = where(equal(weights, zero), zero, convert_to_tensor(1, dtype=weights.dtype))
        return multiply(reduce_sum(present), _broadcast_count(weights, losses, weights.dtype))


def _num_elements(losses):
    with name_scope(None, "num_elements", [losses]) as scope:
        return cast(size(losses, name=scope), losses.dtype)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """`losses * weights` reduced by `reduction` and added to `loss_collection`.

    Returns losses' dtype; losses' shape for Reduction.NONE, else a scalar. ValueError for an
    unknown reduction or weights that do not broadcast to the losses (see the module doc).
    Gradients flow into both losses and weights, as TF1.
    """
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss", [losses, weights]):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype
        work = dtypes.float64 if input_dtype == dtypes.float64 else dtypes.float32
        weights_value = weights
        losses = cast(losses, work)
        w = convert_to_tensor(weights, preferred_dtype=work)
        w = cast(w, work)
        _check_weights(w, losses)
        weighted = multiply(losses, w)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_div(loss, multiply(reduce_sum(w), _broadcast_count(w, losses, work)))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_div(loss, _num_present(losses, w, weights_value))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_div(loss, _num_elements(losses))
        loss = cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


# ---- the losses --------------------------------------------------------------------------------


def _require(**args):
    for k, v in args.items():
        if v is None:
            raise ValueError(f"Argument `{k}` must not be None.")


def _float_pair(labels, predictions):
    """Both cast to float32 (TF1), with compatible static shapes (ValueError otherwise)."""
    predictions = cast(convert_to_tensor(predictions), dtypes.float32)
    labels = cast(convert_to_tensor(labels), dtypes.float32)
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError(f"Shapes {predictions.shape} and {labels.shape} are incompatible")
    return labels, predictions


def _doc(what):
    return (f"{what}\n\n    labels and predictions of compatible shapes (ValueError otherwise, or if None); "
            "weights/reduction/loss_collection as `compute_weighted_loss`. float32 result.")


def absolute_difference(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "absolute_difference", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        losses = abs(subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_squared_error", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        losses = squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None, loss_collection=GraphKeys.LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "log_loss", [predictions, labels, weights]) as scope:
        labels, p = _float_pair(labels, predictions)
        one = convert_to_tensor(1.0, dtype=dtypes.float32)
        eps = convert_to_tensor(epsilon, dtype=dtypes.float32)
        losses = subtract(-multiply(labels, log(add(p, eps))),
                          multiply(subtract(one, labels), log(add(subtract(one, p), eps))))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "huber_loss", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        abs_error = abs(subtract(predictions, labels))
        d = convert_to_tensor(delta, dtype=dtypes.float32)
        quadratic = minimum(abs_error, d)
        linear = subtract(abs_error, quadratic)
        losses = add(multiply(convert_to_tensor(0.5, dtype=dtypes.float32), multiply(quadratic, quadratic)),
                     multiply(d, linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _require(labels=labels, logits=logits)
    with name_scope(scope, "hinge_loss", [logits, labels, weights]) as scope:
        labels, logits = _float_pair(labels, logits)
        one = convert_to_tensor(1.0, dtype=dtypes.float32)
        signs = subtract(multiply(convert_to_tensor(2.0, dtype=dtypes.float32), labels), one)
        losses = relu(subtract(one, multiply(signs, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        dots = reduce_sum(multiply(predictions, labels), axis=(axis,), keepdims=True)
        losses = subtract(convert_to_tensor(1.0, dtype=dtypes.float32), dots)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


absolute_difference.__doc__ = _doc("Elementwise |predictions - labels|, weighted and reduced.")
mean_squared_error.__doc__ = _doc("Elementwise (predictions - labels) ** 2, weighted and reduced.")
log_loss.__doc__ = _doc("-z log(p + eps) - (1 - z) log(1 - p + eps) for labels z, predictions p.")
huber_loss.__doc__ = _doc("0.5 e ** 2 for |e| <= delta, else delta * (|e| - 0.5 delta), e = predictions - labels.")
hinge_loss.__doc__ = _doc("max(0, 1 - (2 labels - 1) * logits) for labels in {0, 1}.")
cosine_distance.__doc__ = _doc("1 - sum(labels * predictions, axis) (inputs assumed unit-normalized).")


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross-entropy of [batch, classes] logits against one-hot (or soft) labels.

    label_smoothing s replaces labels by labels * (1 - s) + s / num_classes. Labels get no
    gradient. weights: scalar or [batch] (the losses are [batch]); result in logits' dtype.
    """
    _require(onehot_labels=onehot_labels, logits=logits)
    with name_scope(scope, "softmax_cross_entropy_loss", [logits, onehot_labels, weights]) as scope:
        logits = convert_to_tensor(logits)
        onehot_labels = cast(convert_to_tensor(onehot_labels), logits.dtype)
        if not logits.shape.is_compatible_with(onehot_labels.shape):
            raise ValueError(f"Shapes {logits.shape} and {onehot_labels.shape} are incompatible")
        if label_smoothing > 0:
            n = onehot_labels.shape.as_list()[-1] if onehot_labels.shape.ndims else None
            num_classes = (convert_to_tensor(float(n), dtype=logits.dtype) if n is not None
                           else cast(shape(onehot_labels)[-1], logits.dtype))
            onehot_labels = add(multiply(onehot_labels, convert_to_tensor(1.0 - label_smoothing, dtype=logits.dtype)),
                                realdiv(convert_to_tensor(label_smoothing, dtype=logits.dtype), num_classes))
        onehot_labels = stop_gradient(onehot_labels, name="labels_stop_gradient")
        losses = nn.softmax_cross_entropy_with_logits_v2(labels=onehot_labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def _squeeze_last(t):
    return squeeze(t, [-1])


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross-entropy of [batch, classes] logits against integer labels [batch] (or
    [batch, 1], squeezed; weights of rank labels + 1 are squeezed too, as TF1)."""
    _require(labels=labels, logits=logits)
    with name_scope(scope, "sparse_softmax_cross_entropy_loss", [logits, labels, weights]) as scope:
        labels, logits = convert_to_tensor(labels), convert_to_tensor(logits)
        lr, gr = labels.shape.ndims, logits.shape.ndims
        if lr is not None and gr is not None:
            # TF1's remove_squeezable_dimensions with expected_rank_diff=1
            if gr - lr == 0 and lr > 0 and labels.shape[-1].is_compatible_with(1):
                labels = _squeeze_last(labels)
            elif gr - lr == 2 and logits.shape[-1].is_compatible_with(1):
                logits = _squeeze_last(logits)
        if not isinstance(weights, Tensor):
            weights = convert_to_tensor(weights, preferred_dtype=dtypes.float32)
        wr, lr = weights.shape.ndims, labels.shape.ndims
        if wr is not None and lr is not None and wr - lr == 1:
            weights = _squeeze_last(weights)
        losses = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Elementwise sigmoid cross-entropy of logits against {0, 1} (or soft) labels.

    label_smoothing s replaces labels by labels * (1 - s) + s / 2. Labels are cast to logits'
    dtype (shapes must be compatible); result in logits' dtype.
    """
    _require(multi_class_labels=multi_class_labels, logits=logits)
    with name_scope(scope, "sigmoid_cross_entropy_loss", [logits, multi_class_labels, weights]) as scope:
        logits = convert_to_tensor(logits)
        labels = cast(convert_to_tensor(multi_class_labels), logits.dtype)
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(f"Shapes {logits.shape} and {labels.shape} are incompatible")
        if label_smoothing > 0:
            labels = add(multiply(labels, convert_to_tensor(1 - label_smoothing, dtype=logits.dtype)),
                         convert_to_tensor(0.5 * label_smoothing, dtype=logits.dtype))
        losses = nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)

from .tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES):
    """The mean over pairs of entries (i, j) within each batch row of ((p_i - p_j) - (l_i - l_j))^2,
    weighted per row and summed (TF1's formula: 2 * sum(d^2) / (n - 1) - 2 * sum(d)^2 / (n (n - 1))
    for the n present entries of the row's differences d); 0 when no entry is present. float32."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_pairwise_squared_error", [predictions, labels, weights]) as scope:
        weights = cast(convert_to_tensor(weights), dtypes.float32)
        labels, predictions = _float_pair(labels, predictions)
        diffs = subtract(predictions, labels)
        axis = _range(1, rank(diffs))
        sum_squares = reduce_sum(square(diffs), axis=axis, keepdims=True)
        with name_scope(None, "num_present", [diffs, weights]):
            present = where(equal(weights, 0.0), zeros_like(weights), ones_like(weights))
            present = multiply(present, ones_like(diffs))  # broadcast to the differences
            n = reduce_sum(present, axis=_range(1, rank(present)), keepdims=True)
        term1 = multiply(2.0, _safe_div(sum_squares, maximum(n - 1.0, 0.0)))
        sum_diff = reduce_sum(diffs, axis=axis, keepdims=True)
        term2 = multiply(2.0, _safe_div(square(sum_diff), maximum(multiply(n, n - 1.0), 0.0)))
        loss = reduce_sum(multiply(subtract(term1, term2), weights))
        mean_loss = where(greater(reduce_sum(n), 0.0), loss, zeros_like(loss), name="value")
        add_loss(mean_loss, loss_collection)
        return mean_loss
