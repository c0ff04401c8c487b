"""`tf.contrib.metrics` (TF 1.15): the streaming metrics as `tf.metrics` with contrib's argument
order (predictions before labels), `aggregate_metrics`/`aggregate_metric_map`, and the one-shot
`accuracy`."""

from __future__ import annotations

from .. import metrics as _metrics
from ..graph import dtypes
from ..graph.graph import name_scope
from ..kernels.common import convert_to_tensor
from ..kernels.creation_ops import ones_like
from ..kernels.math_ops import cast, equal, multiply, truediv
from ..kernels.reduction_ops import reduce_mean, reduce_sum
from ..tf1_names import missing_attribute

__all__ = ["accuracy", "aggregate_metrics", "aggregate_metric_map", "streaming_accuracy", "streaming_mean",
           "streaming_precision", "streaming_recall", "streaming_auc", "streaming_mean_absolute_error",
           "streaming_mean_squared_error", "streaming_root_mean_squared_error", "streaming_mean_iou"]


def accuracy(predictions, labels, weights=None, name=None):
    """The (weighted) fraction of predictions equal to labels, computed in one run (no state).

    ValueError unless labels are bool, integer or string and predictions have their dtype.
    """
    with name_scope(name, "accuracy", [predictions, labels]):
        predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
        if not (labels.dtype.is_integer or labels.dtype in (dtypes.bool, dtypes.string)):
            raise ValueError(f"Labels should have bool, integer, or string dtype, not {labels.dtype!r}")
        if predictions.dtype != labels.dtype:
            raise ValueError(f"Dtypes of predictions and labels should match. Given: predictions "
                             f"({predictions.dtype!r}) and labels ({labels.dtype!r})")
        is_correct = cast(equal(predictions, labels), dtypes.float32)
        if weights is None:
            return reduce_mean(is_correct)
        weights = convert_to_tensor(weights, dtype=dtypes.float32)
        num_values = multiply(weights, ones_like(is_correct))
        return truediv(reduce_sum(multiply(is_correct, weights)), reduce_sum(num_values))


def streaming_mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    return _metrics.mean(values, weights, metrics_collections, updates_collections, name)


def _pair(fn):
    def streaming(predictions, labels, weights=None, metrics_collections=None, updates_collections=None, name=None):
        return fn(labels, predictions, weights, metrics_collections, updates_collections, name)

    streaming.__name__ = "streaming_" + fn.__name__
    streaming.__doc__ = f"`tf.metrics.{fn.__name__}` with predictions first: a (value, update_op) pair."
    return streaming


streaming_accuracy = _pair(_metrics.accuracy)
streaming_precision = _pair(_metrics.precision)
streaming_recall = _pair(_metrics.recall)
streaming_mean_absolute_error = _pair(_metrics.mean_absolute_error)
streaming_mean_squared_error = _pair(_metrics.mean_squared_error)
streaming_root_mean_squared_error = _pair(_metrics.root_mean_squared_error)


def streaming_auc(predictions, labels, weights=None, num_thresholds=200, metrics_collections=None,
                  updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal"):
    return _metrics.auc(labels, predictions, weights=weights, num_thresholds=num_thresholds,
                        metrics_collections=metrics_collections, updates_collections=updates_collections,
                        curve=curve, name=name, summation_method=summation_method)


def streaming_mean_iou(predictions, labels, num_classes, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    return _metrics.mean_iou(labels, predictions, num_classes, weights=weights,
                             metrics_collections=metrics_collections, updates_collections=updates_collections,
                             name=name)


def aggregate_metrics(*value_update_tuples):
    """([values], [update_ops]) from (value, update_op) pairs; ValueError for none."""
    if not value_update_tuples:
        raise ValueError("Expected at least one value_tensor/update_op pair")
    values, updates = zip(*value_update_tuples)
    return list(values), list(updates)


def aggregate_metric_map(names_to_tuples):
    """({name: value}, {name: update_op}) from {name: (value, update_op)}."""
    names = sorted(names_to_tuples)
    values, updates = aggregate_metrics(*[names_to_tuples[n] for n in names])
    return dict(zip(names, values)), dict(zip(names, updates))


__getattr__ = missing_attribute(__name__)
