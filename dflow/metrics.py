"""`dflow.metrics`: TF1's `tf.metrics` — streaming metrics as `(value, update_op)` pairs.

Each metric opens `variable_scope(name, default_name)` and keeps its running totals in float32
(float64 for mean_iou's confusion matrix) local variables named as TF1 names them
(`accuracy/total:0`, `precision/true_positives/count:0`, `auc/true_positives:0`...), in the
LOCAL_VARIABLES and METRIC_VARIABLES collections (never GLOBAL or TRAINABLE), zeroed by
`local_variables_initializer()`. `value` reads the totals; `update_op` adds one batch to them
and returns the value computed from the updated totals. Running the update once per batch of a
stream (or over one chunked dask/Zarr batch) gives the metric of the whole stream; a ratio over
an empty total is 0 (TF1's div_no_nan).

Inputs are checked and cast as TF1 does when the graph is built: labels and predictions of
compatible shapes (a trailing dim of 1 on one side is squeezed), weights a scalar or of the
values' rank with dims 1 or equal (ValueError otherwise), predictions cast to bool for the
counting metrics, to float32 in [0, 1] for auc and the threshold metrics (checked when the update
runs: InvalidArgumentError), class ids cast to int64 and checked against `num_classes`.

Built from registered ops only: the threshold metrics compare predictions with a column of
thresholds ([num_thresholds, n] per chunk, as TF1 tiles them) and sum along the batch; the
confusion matrix of mean_iou and the per-class sums are `unsorted_segment_sum`s, so a chunked
batch is one partial sum per chunk.
"""

from __future__ import annotations

import numpy as np

from .graph import dtypes
from .graph.graph import add_to_collections, control_dependencies
from .graph.keys import GraphKeys
from .kernels.array_ops import identity, reshape, size
from .kernels.check_ops import (
    assert_greater_equal,
    assert_less,
    assert_less_equal,
    assert_non_negative,
)
from .kernels.common import constant, convert_to_tensor
from .kernels.creation_ops import ones_like, zeros, zeros_like
from .kernels.gather_ops import gather
from .kernels.manip_ops import expand_dims, squeeze
from .kernels.math_ops import (
    abs,  # noqa: A004 - the op, not the builtin
    add,
    cast,
    divide,
    divide_no_nan,
    equal,
    greater,
    less,
    log,
    logical_and,
    logical_not,
    maximum,
    minimum,
    multiply,
    not_equal,
    sqrt,
    squared_difference,
    subtract,
    where,
)
from .kernels.reduction_ops import argmax, argmin, cumsum, reduce_mean, reduce_min, reduce_sum
from .kernels.scatter_ops import unsorted_segment_sum
from .kernels.state_ops import assign_add
from .state.scope import variable_scope
from .state.variables import Variable

__all__ = [
    "accuracy", "mean", "mean_tensor", "precision", "recall", "auc", "mean_squared_error",
    "mean_absolute_error", "root_mean_squared_error", "percentage_below", "true_positives",
    "false_positives", "true_negatives", "false_negatives", "true_positives_at_thresholds",
    "false_positives_at_thresholds", "true_negatives_at_thresholds", "false_negatives_at_thresholds",
    "precision_at_thresholds", "recall_at_thresholds", "mean_iou", "mean_per_class_accuracy",
    "mean_cosine_distance", "mean_relative_error", "sensitivity_at_specificity", "specificity_at_sensitivity",
]


# ---- variables, collections and argument checks ------------------------------------------------


def metric_variable(shape, dtype, validate_shape=True, name=None):
    """A zero-initialized, non-trainable variable in LOCAL_VARIABLES and METRIC_VARIABLES."""
    return Variable(lambda: zeros(shape, dtype), trainable=False,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                    validate_shape=validate_shape, name=name)


def _publish(value, update_op, metrics_collections, updates_collections):
    if metrics_collections:
        add_to_collections(metrics_collections, value)
    if updates_collections:
        add_to_collections(updates_collections, update_op)
    return value, update_op


def _remove_squeezable_dimensions(predictions, labels, weights):
    """TF1's static rule: squeeze a trailing 1 of predictions or labels when their ranks differ by
    one, then squeeze or expand weights' last dim to predictions' rank (scalars stay scalars)."""
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels = convert_to_tensor(labels)
        pr, lr = predictions.shape.ndims, labels.shape.ndims
        if pr is not None and lr is not None:
            if pr - lr == 1 and predictions.shape.dims[-1].is_compatible_with(1):
                predictions = squeeze(predictions, [-1])
            elif lr - pr == 1 and labels.shape.dims[-1].is_compatible_with(1):
                labels = squeeze(labels, [-1])
        predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    wr, pr = weights.shape.ndims, predictions.shape.ndims
    if wr == 0 or wr is None or pr is None:
        return predictions, labels, weights
    if wr - pr == 1:
        weights = squeeze(weights, [-1])
    elif pr - wr == 1:
        weights = expand_dims(weights, -1)
    return predictions, labels, weights


def _broadcast_weights(weights, values):
    """`weights` (float32) broadcast to `values`' shape; ValueError, as TF1's
    assert_broadcastable, unless weights are a scalar or of values' rank with dims 1 or equal."""
    weights = cast(convert_to_tensor(weights), values.dtype)
    ws, vs = weights.shape, values.shape
    if ws.is_fully_defined() and vs.is_fully_defined() and ws.is_compatible_with(vs):
        return weights
    if ws.ndims is not None and vs.ndims is not None and ws.ndims != 0:
        if ws.ndims != vs.ndims:
            raise ValueError(f"weights can not be broadcast to values. values.rank={vs.ndims}. "
                             f"weights.rank={ws.ndims}. values.shape={vs}. weights.shape={ws}.")
        for i, (w, v) in enumerate(zip(ws.as_list(), vs.as_list())):
            if w is not None and v is not None and w not in (1, v):
                raise ValueError(f"weights can not be broadcast to values. Mismatch at dim {i}. "
                                 f"values.shape={vs}, weights.shape={ws}.")
    return multiply(weights, ones_like(values))


# ---- means -------------------------------------------------------------------------------------


def _running_mean(values, weights, metrics_collections, updates_collections, name, default_name,
                  per_element):
    """The (weighted) running mean of `values`: totals summed over everything, or per element."""
    with variable_scope(name, default_name, (values, weights)):
        values = cast(values, dtypes.float32)
        if per_element:
            if not values.shape.is_fully_defined():
                raise ValueError(f"mean_tensor: values need a fully defined shape, got {values.shape}")
            total = metric_variable(values.shape, dtypes.float32, name="total_tensor")
            count = metric_variable(values.shape, dtypes.float32, name="count_tensor")
        else:
            total = metric_variable([], dtypes.float32, name="total")
            count = metric_variable([], dtypes.float32, name="count")
        num_values = ones_like(values) if per_element else cast(size(values), dtypes.float32)
        if weights is not None:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = _broadcast_weights(weights, values)
            values = multiply(values, weights)
            num_values = multiply(num_values, weights) if per_element else reduce_sum(weights)
        update_total = assign_add(total, values if per_element else reduce_sum(values))
        with control_dependencies([values]):
            update_count = assign_add(count, num_values)
        value = divide_no_nan(total, maximum(count, 0.0), name="value")
        update_op = divide_no_nan(update_total, maximum(update_count, 0.0), name="update_op")
        return _publish(value, update_op, metrics_collections, updates_collections)


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The weighted mean of `values` over the stream: scalar float32 (variables total, count)."""
    return _running_mean(values, weights, metrics_collections, updates_collections, name, "mean", False)


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The elementwise weighted mean of `values` (a fully defined shape) over the stream."""
    return _running_mean(values, weights, metrics_collections, updates_collections, name, "mean", True)


def accuracy(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
             name=None):
    """The (weighted) fraction of `predictions` equal to `labels`; predictions are cast to labels'
    dtype. ValueError for shapes that are not compatible."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    if labels.dtype != predictions.dtype:
        predictions = cast(predictions, labels.dtype)
    is_correct = cast(equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """The weighted mean of (labels - predictions)^2 over the stream."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    return mean(squared_difference(labels, predictions), weights, metrics_collections, updates_collections,
                name or "mean_squared_error")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """The weighted mean of |predictions - labels| over the stream."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    return mean(abs(subtract(predictions, labels)), weights, metrics_collections, updates_collections,
                name or "mean_absolute_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """sqrt of `mean_squared_error` over the stream (its variables in `root_mean_squared_error/`)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None,
                                         name or "root_mean_squared_error")
    return _publish(sqrt(mse), sqrt(update_mse), metrics_collections, updates_collections)


def percentage_below(values, threshold, weights=None, metrics_collections=None, updates_collections=None,
                     name=None):
    """The weighted fraction of `values` below `threshold`."""
    is_below = cast(less(values, threshold), dtypes.float32)
    return mean(is_below, weights, metrics_collections, updates_collections, name or "percentage_below_threshold")


# ---- counts of a condition ------------------------------------------------------------------------


def _count_condition(values, weights, metrics_collections, updates_collections):
    count = metric_variable([], dtypes.float32, name="count")
    values = cast(values, dtypes.float32)
    if weights is not None:
        wr, vr = weights.shape.ndims, values.shape.ndims
        if wr is not None and vr is not None and wr not in (0, vr):
            raise ValueError(f"weights {weights.name!r} must have rank in (0, {vr}), got rank {wr}, "
                             f"shape {weights.shape}")
        values = multiply(values, cast(weights, dtypes.float32))
    value = identity(count)
    update_op = assign_add(count, reduce_sum(values))
    return _publish(value, update_op, metrics_collections, updates_collections)


def _bool_counter(default_name, label_value, prediction_value):
    def metric(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
               name=None):
        with variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _remove_squeezable_dimensions(
                cast(predictions, dtypes.bool), cast(labels, dtypes.bool), weights)
            is_case = logical_and(equal(labels, label_value), equal(predictions, prediction_value))
            return _count_condition(is_case, weights, metrics_collections, updates_collections)

    metric.__name__ = default_name
    metric.__doc__ = (f"The weighted number of {default_name.replace('_', ' ')} (labels and predictions "
                      "cast to bool) over the stream: a float32 scalar in `<scope>/count`.")
    return metric


true_positives = _bool_counter("true_positives", True, True)
false_positives = _bool_counter("false_positives", False, True)
true_negatives = _bool_counter("true_negatives", False, False)
false_negatives = _bool_counter("false_negatives", True, False)


def _ratio_of_counts(labels, predictions, weights, metrics_collections, updates_collections, name,
                     default_name, other):
    """tp / (tp + other) over the stream, 0 while that is 0 (precision: other = false_positives)."""
    with variable_scope(name, default_name, (predictions, labels, weights)):
        predictions, labels, weights = _remove_squeezable_dimensions(
            cast(predictions, dtypes.bool), cast(labels, dtypes.bool), weights)
        tp, update_tp = true_positives(labels, predictions, weights)
        nb, update_nb = other(labels, predictions, weights)

        def ratio(tp, nb, name):
            both = add(tp, nb)
            some = greater(both, 0.0)  # 0/0 is never computed (no warning), as TF1's output is 0
            return where(some, divide(tp, where(some, both, ones_like(both))), constant(0.0), name=name)

        return _publish(ratio(tp, nb, "value"), ratio(update_tp, update_nb, "update_op"),
                        metrics_collections, updates_collections)


def precision(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
              name=None):
    """tp / (tp + fp) over the stream (labels and predictions cast to bool); 0 with no positive."""
    return _ratio_of_counts(labels, predictions, weights, metrics_collections, updates_collections, name,
                            "precision", false_positives)


def recall(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """tp / (tp + fn) over the stream (labels and predictions cast to bool); 0 with no true label."""
    return _ratio_of_counts(labels, predictions, weights, metrics_collections, updates_collections, name,
                            "recall", false_negatives)


# ---- confusion counts at thresholds -------------------------------------------------------------

_COUNTS = {"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives", "fp": "false_positives"}


def _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights=None, includes=None):
    """({key: variable}, {key: update}) of the weighted counts at each threshold, for `includes`
    among 'tp', 'fn', 'tn', 'fp': predicted positive means predictions > threshold."""
    includes = tuple(_COUNTS) if includes is None else tuple(includes)
    for key in includes:
        if key not in _COUNTS:
            raise ValueError(f"Invalid key: {key}")
    predictions = convert_to_tensor(predictions)
    if not (predictions.dtype.is_floating or predictions.dtype.is_integer):
        raise TypeError(f"predictions {predictions.name!r} must be real numbers in [0, 1], got "
                        f"{predictions.dtype.name}")
    msg = "predictions must be in [0, 1]"
    with control_dependencies([assert_greater_equal(predictions, cast(0.0, predictions.dtype), message=msg),
                               assert_less_equal(predictions, cast(1.0, predictions.dtype), message=msg)]):
        predictions, labels, weights = _remove_squeezable_dimensions(
            cast(predictions, dtypes.float32), cast(labels, dtypes.bool), weights)
    # [num_thresholds, 1] against [1, n]: TF1's tiled layout, by broadcasting
    column = constant(np.asarray(thresholds, dtype=np.float32).reshape(-1, 1))
    pred_is_pos = greater(reshape(predictions, [1, -1]), column)
    label_is_pos = reshape(labels, [1, -1])
    weights_row = None if weights is None else reshape(_broadcast_weights(weights, predictions), [1, -1])
    cases = {"tp": (label_is_pos, pred_is_pos), "fn": (label_is_pos, logical_not(pred_is_pos)),
             "tn": (logical_not(label_is_pos), logical_not(pred_is_pos)),
             "fp": (logical_not(label_is_pos), pred_is_pos)}
    values, updates = {}, {}
    for key in _COUNTS:  # TF1's creation order: tp, fn, tn, fp
        if key not in includes:
            continue
        var = metric_variable([len(thresholds)], dtypes.float32, name=_COUNTS[key])
        hits = cast(logical_and(*cases[key]), dtypes.float32)
        if weights_row is not None:
            hits = multiply(hits, weights_row)
        updates[key] = assign_add(var, reduce_sum(hits, 1))
        values[key] = var
    return values, updates


def _counter_at_thresholds(key):
    default_name = _COUNTS[key]

    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name, (predictions, labels, weights)):
            values, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights, (key,))
            return _publish(identity(values[key]), updates[key], metrics_collections, updates_collections)

    metric.__name__ = f"{default_name}_at_thresholds"
    metric.__doc__ = (f"The weighted number of {default_name.replace('_', ' ')} at each threshold "
                      "(predicted positive: predictions > threshold): float32 [len(thresholds)].")
    return metric


true_positives_at_thresholds = _counter_at_thresholds("tp")
false_negatives_at_thresholds = _counter_at_thresholds("fn")
true_negatives_at_thresholds = _counter_at_thresholds("tn")
false_positives_at_thresholds = _counter_at_thresholds("fp")


def precision_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """tp / (tp + fp + 1e-7) at each threshold, over the stream: float32 [len(thresholds)]."""
    with variable_scope(name, "precision_at_thresholds", (predictions, labels, weights)):
        values, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights, ("tp", "fp"))

        def prec(tp, fp, name):
            return divide(tp, add(add(1e-7, tp), fp), name="precision_" + name)

        return _publish(prec(values["tp"], values["fp"], "value"), prec(updates["tp"], updates["fp"], "update_op"),
                        metrics_collections, updates_collections)


def recall_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """tp / (tp + fn + 1e-7) at each threshold, over the stream: float32 [len(thresholds)]."""
    with variable_scope(name, "recall_at_thresholds", (predictions, labels, weights)):
        values, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights, ("tp", "fn"))

        def rec(tp, fn, name):
            return divide(tp, add(add(1e-7, tp), fn), name="recall_" + name)

        return _publish(rec(values["tp"], values["fn"], "value"), rec(updates["tp"], updates["fn"], "update_op"),
                        metrics_collections, updates_collections)


# ---- area under the curve -----------------------------------------------------------------------

_SUMMATIONS = ("trapezoidal", "careful_interpolation", "minoring", "majoring")


def _interpolate_pr_auc(tp, fp, fn, n):
    """PR-AUC with precision interpolated between thresholds as TF1 does (Davis & Goadrich 2006)."""
    dtp = subtract(tp[:n - 1], tp[1:])
    p = add(tp, fp)
    prec_slope = divide_no_nan(dtp, maximum(subtract(p[:n - 1], p[1:]), 0.0), name="prec_slope")
    intercept = subtract(tp[1:], multiply(prec_slope, p[1:]))
    safe_p_ratio = where(logical_and(greater(p[:n - 1], 0.0), greater(p[1:], 0.0)),
                         divide_no_nan(p[:n - 1], maximum(p[1:], 0.0), name="recall_relative_ratio"),
                         ones_like(p[1:]))
    increments = divide_no_nan(multiply(prec_slope, add(dtp, multiply(intercept, log(safe_p_ratio)))),
                               maximum(add(tp[1:], fn[1:]), 0.0), name="pr_auc_increment")
    return reduce_sum(increments, name="interpolate_pr_auc")


def _area(tp, fn, tn, fp, n, curve, summation_method, name):
    if curve == "PR" and summation_method == "careful_interpolation":
        return _interpolate_pr_auc(tp, fp, fn, n)
    epsilon = 1.0e-6
    rec = divide(add(tp, epsilon), add(add(tp, fn), epsilon))
    if curve == "ROC":
        x, y = divide(fp, add(add(fp, tn), epsilon)), rec
    else:
        x, y = rec, divide(add(tp, epsilon), add(add(tp, fp), epsilon))
    widths = subtract(x[:n - 1], x[1:])
    left, right = y[:n - 1], y[1:]
    if summation_method == "minoring":
        heights = minimum(left, right)
    elif summation_method == "majoring":
        heights = maximum(left, right)
    else:
        heights = divide(add(left, right), 2.0)
    return reduce_sum(multiply(widths, heights), name=name)


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal", thresholds=None):
    """The area under the ROC or PR curve, discretized at `num_thresholds` thresholds as TF1.

    Thresholds: -1e-7, then (i + 1) / (num_thresholds - 1) for i < num_thresholds - 2, then
    1 + 1e-7 (or sorted `thresholds` between those two ends). Predictions: floats in [0, 1]
    (InvalidArgumentError when the update runs otherwise); labels cast to bool. Variables
    `auc/true_positives`, `false_negatives`, `true_negatives`, `false_positives`, each
    [num_thresholds]. ValueError for an unknown `curve` or `summation_method`.
    """
    with variable_scope(name, "auc", (labels, predictions, weights)):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"Curve must be either ROC or PR. Curve {curve} is unknown.")
        if summation_method not in _SUMMATIONS:
            raise ValueError(f"Invalid summation_method: {summation_method} summation_method should be "
                             "'trapezoidal', 'careful_interpolation', 'minoring', or 'majoring'.")
        kepsilon = 1e-7  # so that predictions of exactly 0 and 1 fall inside the end thresholds
        if thresholds is not None:
            inner = sorted(thresholds)
            num_thresholds = len(inner) + 2
        else:
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        thresholds = [0.0 - kepsilon] + inner + [1.0 + kepsilon]
        values, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights)
        args = (num_thresholds, curve, summation_method)
        value = _area(values["tp"], values["fn"], values["tn"], values["fp"], *args, "value")
        update_op = _area(updates["tp"], updates["fn"], updates["tn"], updates["fp"], *args, "update_op")
        return _publish(value, update_op, metrics_collections, updates_collections)


# ---- per-class metrics ----------------------------------------------------------------------------


def _class_ids(ids, num_classes, what):
    """`ids` as flat int64, checked (when it runs) to lie in [0, num_classes)."""
    ids = cast(ids, dtypes.int64)
    if ids.shape.ndims is None or ids.shape.ndims != 1:
        ids = reshape(ids, [-1])
    with control_dependencies([assert_non_negative(ids, message=f"`{what}` contains negative values"),
                               assert_less(ids, cast(num_classes, dtypes.int64), message=f"`{what}` out of bound")]):
        return identity(ids)


def _flat(t):
    return t if t.shape.ndims is not None and t.shape.ndims <= 1 else reshape(t, [-1])


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """The mean over classes of intersection / union, from a streamed confusion matrix.

    Variable `mean_iou/total_confusion_matrix` (float64 [num_classes, num_classes], rows labels,
    columns predictions); classes absent from both are left out of the mean (0 if none is
    present). As TF1, `update_op` returns the updated confusion matrix, not the mean.
    """
    with variable_scope(name, "mean_iou", (predictions, labels, weights)):
        predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
        predictions.shape.assert_is_compatible_with(labels.shape)
        total_cm = metric_variable([num_classes, num_classes], dtypes.float64, name="total_confusion_matrix")
        labels = _class_ids(labels, num_classes, "labels")
        predictions = _class_ids(predictions, num_classes, "predictions")
        if weights is None:
            weights = ones_like(labels, dtype=dtypes.float64)
        else:
            weights = _flat(convert_to_tensor(weights))
            predictions.shape.assert_is_compatible_with(weights.shape)
            weights = cast(weights, dtypes.float64)
        cells = add(multiply(labels, np.int64(num_classes)), predictions)
        current = reshape(unsorted_segment_sum(weights, cells, num_classes * num_classes),
                          [num_classes, num_classes])
        update_op = assign_add(total_cm, current)

        sum_over_row = cast(reduce_sum(total_cm, 0), dtypes.float32)
        sum_over_col = cast(reduce_sum(total_cm, 1), dtypes.float32)
        diag = cast(_diag(total_cm, num_classes), dtypes.float32)
        denominator = subtract(add(sum_over_row, sum_over_col), diag)
        num_valid = reduce_sum(cast(not_equal(denominator, 0.0), dtypes.float32))
        denominator = where(greater(denominator, 0.0), denominator, ones_like(denominator))
        iou = divide(diag, denominator)
        value = where(greater(num_valid, 0.0), divide(reduce_sum(iou, name="mean_iou"), maximum(num_valid, 1.0)),
                      constant(0.0))
        return _publish(value, update_op, metrics_collections, updates_collections)


def _diag(matrix, n):
    """The diagonal of an [n, n] matrix: its flat elements 0, n+1, 2(n+1), ..."""
    flat = reshape(matrix, [-1])
    return flat[::n + 1]


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """The mean over classes of the (weighted) fraction of each label's examples predicted right.

    Variables `mean_accuracy/total` (weight of each label) and `mean_accuracy/count` (weight
    predicted right), float32 [num_classes]. As TF1, `update_op` returns the per-class accuracies.
    """
    with variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = _flat(cast(labels, dtypes.int64))
        predictions = _flat(convert_to_tensor(predictions))
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        ones = ones_like(labels, dtype=dtypes.float32)
        if labels.dtype != predictions.dtype:
            predictions = cast(predictions, labels.dtype)
        is_correct = cast(equal(predictions, labels), dtypes.float32)
        if weights is not None:
            weights = cast(_flat(convert_to_tensor(weights)), dtypes.float32)
            is_correct = multiply(is_correct, weights)
            ones = multiply(ones, weights)
        labels = _class_ids(labels, num_classes, "labels")
        update_total = assign_add(total, unsorted_segment_sum(ones, labels, num_classes))
        update_count = assign_add(count, unsorted_segment_sum(is_correct, labels, num_classes))
        value = reduce_mean(divide_no_nan(count, maximum(total, 0.0)), name="mean_accuracy")
        update_op = divide_no_nan(update_count, maximum(update_total, 0.0), name="update_op")
        return _publish(value, update_op, metrics_collections, updates_collections)

# ---- distances and rates at a chosen operating point -------------------------------------------


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """1 - the weighted mean over the stream of sum(labels * predictions) along `dim` (the inputs
    are taken as unit vectors, as TF1): variables `mean_cosine_distance/total`, `count`."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    radial = reduce_sum(multiply(predictions, labels), axis=[dim], keepdims=True)
    dist, update = mean(radial, weights, None, None, name or "mean_cosine_distance")
    return _publish(subtract(1.0, dist), subtract(1.0, update), metrics_collections, updates_collections)


def mean_relative_error(labels, predictions, normalizer, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """The weighted mean of |labels - predictions| / normalizer (0 where normalizer is 0).
    ValueError for a normalizer whose shape is not compatible with predictions'."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    predictions, normalizer, _ = _remove_squeezable_dimensions(predictions, normalizer, None)
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    normalizer = cast(normalizer, predictions.dtype)
    zero = equal(normalizer, cast(0.0, normalizer.dtype))
    safe = where(zero, ones_like(normalizer), normalizer)
    errors = where(zero, zeros_like(labels, dtype=predictions.dtype),
                   divide(abs(subtract(cast(labels, predictions.dtype), predictions)), safe))
    return mean(errors, weights, metrics_collections, updates_collections, name or "mean_relative_error")


def _at_operating_point(labels, predictions, target, weights, num_thresholds, metrics_collections,
                        updates_collections, name, default_name, pick):
    if target < 0 or target > 1:
        raise ValueError(f"`{default_name.split('_at_')[1]}` must be in the range [0, 1].")
    with variable_scope(name, default_name, (predictions, labels, weights)):
        kepsilon = 1e-7
        thresholds = [0.0 - kepsilon] + [(i + 1) * 1.0 / (num_thresholds - 1)
                                         for i in range(num_thresholds - 2)] + [1.0 + kepsilon]
        values, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights)
        value = pick(values["tp"], values["tn"], values["fp"], values["fn"], kepsilon, "value")
        update_op = pick(updates["tp"], updates["tn"], updates["fp"], updates["fn"], kepsilon, "update_op")
        return _publish(value, update_op, metrics_collections, updates_collections)


def sensitivity_at_specificity(labels, predictions, specificity, weights=None, num_thresholds=200,
                               metrics_collections=None, updates_collections=None, name=None):
    """tp / (tp + fn) at the threshold whose specificity tn / (tn + fp) is closest to `specificity`
    (the first such), over the stream. ValueError for a specificity outside [0, 1]."""
    def pick(tp, tn, fp, fn, eps, name):
        spec = divide(tn, add(add(tn, fp), eps))
        i = cast(argmin(abs(subtract(spec, specificity)), 0), dtypes.int32)
        tp_i, fn_i = gather(tp, i), gather(fn, i)
        return divide(tp_i, add(add(tp_i, fn_i), eps), name=name)

    return _at_operating_point(labels, predictions, specificity, weights, num_thresholds, metrics_collections,
                               updates_collections, name, "sensitivity_at_specificity", pick)


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None, num_thresholds=200,
                               metrics_collections=None, updates_collections=None, name=None):
    """tn / (tn + fp) at the threshold whose sensitivity tp / (tp + fn) is closest to `sensitivity`
    (the last such, as TF1), over the stream. ValueError for a sensitivity outside [0, 1]."""
    def pick(tp, tn, fp, fn, eps, name):
        gap = abs(subtract(divide(tp, add(add(tp, fn), eps)), sensitivity))
        at_min = cumsum(cast(equal(gap, reduce_min(gap)), dtypes.int64))
        i = cast(argmax(at_min, 0), dtypes.int32)
        tn_i, fp_i = gather(tn, i), gather(fp, i)
        return divide(tn_i, add(add(tn_i, fp_i), eps), name=name)

    return _at_operating_point(labels, predictions, sensitivity, weights, num_thresholds, metrics_collections,
                               updates_collections, name, "specificity_at_sensitivity", pick)


from .tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)


from .metrics_topk import (  # noqa: E402 - the top-k family lives in its own module
    average_precision_at_k,
    precision_at_k,
    precision_at_top_k,
    recall_at_k,
    recall_at_top_k,
    sparse_average_precision_at_k,
    sparse_precision_at_k,
)

__all__ += ["average_precision_at_k", "sparse_average_precision_at_k", "precision_at_k", "sparse_precision_at_k",
            "precision_at_top_k", "recall_at_k", "recall_at_top_k"]
