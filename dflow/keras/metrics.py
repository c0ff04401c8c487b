"""`tf.keras.metrics` as TensorFlow 1.15 shipped it.

Metric functions `fn(y_true, y_pred)` give one value per sample (the training loop averages them).
Metric classes are Keras layers whose state lives in non-trainable, Keras-tracked variables
(`add_weight(initializer='zeros')`): `update_state(y_true, y_pred, sample_weight=None)` returns the
update op in graph mode (and runs at once in eager mode), `result()` reads the value,
`reset_states()` zeroes the state, and calling the metric does update then result.
"""

from __future__ import annotations

import numpy as np

from .. import nn
from ..eager.context import executing_eagerly
from ..graph.graph import control_dependencies, name_scope
from ..kernels import array_ops, creation_ops, manip_ops, math_ops, reduction_ops
from ..kernels.common import constant, convert_to_tensor
from ..kernels.control_ops import group
from ..kernels.gather_ops import one_hot, top_k
from ..kernels.linalg_ops import matmul
from ..kernels.state_ops import assign_add
from . import backend as K
from . import losses as L
from .engine.base_layer import Layer
from .losses import (
    binary_crossentropy,
    categorical_crossentropy,
    categorical_hinge,
    hinge,
    kld,
    kullback_leibler_divergence,
    logcosh,
    mae,
    mape,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
    mse,
    msle,
    poisson,
    sparse_categorical_crossentropy,
    squared_hinge,
)
from .utils.generic_utils import (
    _RAISE,
    deserialize_keras_object,
    get_identified,
    serialize_keras_object,
)

__all__ = [
    "accuracy", "binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy",
    "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy", "cosine_proximity", "cosine",
    "Metric", "Reduce", "Sum", "Mean", "MeanMetricWrapper", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy",
    "SparseCategoricalAccuracy", "TopKCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "MeanSquaredError",
    "MeanAbsoluteError", "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "RootMeanSquaredError",
    "Precision", "Recall", "AUC", "TruePositives", "FalsePositives", "TrueNegatives", "FalseNegatives", "MeanIoU",
    "CosineSimilarity", "Hinge", "SquaredHinge", "CategoricalHinge", "KLDivergence", "LogCoshError", "Poisson",
    "CategoricalCrossentropy", "BinaryCrossentropy", "SparseCategoricalCrossentropy", "get", "serialize",
    "deserialize",
    # the loss functions by name
    "mean_squared_error", "mse", "mean_absolute_error", "mae", "mean_absolute_percentage_error", "mape",
    "mean_squared_logarithmic_error", "msle", "squared_hinge", "hinge", "categorical_hinge", "logcosh",
    "categorical_crossentropy", "sparse_categorical_crossentropy", "binary_crossentropy",
    "kullback_leibler_divergence", "kld", "poisson", "MSE", "MAE", "MAPE", "MSLE", "KLD", "MeanRelativeError",
    "MeanTensor", "SensitivityAtSpecificity", "SpecificityAtSensitivity",
]


# ---- metric functions (one value per sample) ----------------------------------------------------------
def accuracy(y_true, y_pred):
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    if y_true.dtype != y_pred.dtype:
        y_pred = math_ops.cast(y_pred, y_true.dtype)
    return math_ops.cast(math_ops.equal(y_true, y_pred), K.floatx())


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(y_true, y_pred.dtype)
    y_pred = math_ops.cast(math_ops.greater(y_pred, math_ops.cast(threshold, y_pred.dtype)), y_pred.dtype)
    return K.mean(math_ops.cast(math_ops.equal(y_true, y_pred), K.floatx()), axis=-1)


def categorical_accuracy(y_true, y_pred):
    return math_ops.cast(math_ops.equal(reduction_ops.argmax(y_true, -1), reduction_ops.argmax(y_pred, -1)),
                         K.floatx())


def _sparse_labels(y_true, y_pred):
    """Integer labels of rank y_pred's - 1 (a trailing axis of 1 squeezed)."""
    y_true = convert_to_tensor(y_true)
    if y_true.shape.ndims is not None and y_pred.shape.ndims is not None and \
            y_true.shape.ndims == y_pred.shape.ndims:
        y_true = manip_ops.squeeze(y_true, [-1])
    return y_true


def sparse_categorical_accuracy(y_true, y_pred):
    y_pred = convert_to_tensor(y_pred)
    y_true = _sparse_labels(y_true, y_pred)
    labels = math_ops.cast(reduction_ops.argmax(y_pred, -1), "int64")
    return math_ops.cast(math_ops.equal(math_ops.cast(y_true, "int64"), labels), K.floatx())


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_pred = convert_to_tensor(y_pred)
    return math_ops.cast(nn.in_top_k(y_pred, math_ops.cast(reduction_ops.argmax(y_true, -1), "int32"), k), K.floatx())


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_pred = convert_to_tensor(y_pred)
    labels = math_ops.cast(array_ops.reshape(_sparse_labels(y_true, y_pred), [-1]), "int32")
    return math_ops.cast(nn.in_top_k(y_pred, labels, k), K.floatx())


def cosine_proximity(y_true, y_pred, axis=-1):
    """The cosine of the angle between y_true and y_pred (a metric: larger is better)."""
    return -L.cosine_similarity(y_true, y_pred, axis=axis)


cosine = cosine_proximity
acc = ACC = accuracy


# ---- stateful metrics ------------------------------------------------------------------------------
class Metric(Layer):
    """Base class: `update_state`, `result`, `reset_states`; state in `add_weight` variables."""

    def __init__(self, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype or K.floatx(), **kwargs)
        self.stateful = True
        self.built = True
        with name_scope(self.name) as scope:  # the state variables' scope, taken once
            self._state_scope = scope

    def __call__(self, *args, **kwargs):
        """Updates the state with this batch and returns the result."""
        update = self.update_state(*args, **kwargs)
        if executing_eagerly():
            return self.result()
        with control_dependencies([update] if update is not None else None):
            return array_ops.identity(self.result())

    def add_weight(self, name, shape=(), dtype=None, initializer="zeros", **kwargs):
        with name_scope(self._state_scope or None):
            return super().add_weight(name=name, shape=shape, dtype=dtype or self.dtype, initializer=initializer,
                                      trainable=False, **kwargs)

    def reset_states(self):
        K.batch_set_value([(v, np.zeros(v.shape.as_list())) for v in self.variables])

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("Must be implemented in subclasses.")

    def result(self):
        raise NotImplementedError("Must be implemented in subclasses.")

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype.name if hasattr(self.dtype, "name") else self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<dflow.keras.metrics.{type(self).__name__} {self.name!r}>"


def _weights_like(values, sample_weight):
    """`sample_weight` cast and broadcast to `values` (a trailing axis of 1 squeezed, axes added)."""
    weight = math_ops.cast(sample_weight, values.dtype)
    v_rank, w_rank = values.shape.ndims, weight.shape.ndims
    if v_rank is not None and w_rank is not None:
        if w_rank == v_rank + 1 and weight.shape.as_list()[-1] == 1:
            weight = manip_ops.squeeze(weight, [-1])
        while weight.shape.ndims < v_rank:
            weight = manip_ops.expand_dims(weight, -1)
    return weight * creation_ops.ones_like(values)


class Reduce(Metric):
    """Sums values ('sum') or their weighted mean ('weighted_mean') over batches."""

    def __init__(self, reduction, name, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.reduction = reduction
        self.total = self.add_weight("total")
        if reduction != "sum":
            self.count = self.add_weight("count")

    def update_state(self, values, sample_weight=None):
        values = math_ops.cast(values, self.dtype)
        if sample_weight is not None:
            weights = _weights_like(values, sample_weight)
            values = values * weights
        update_total = assign_add(self.total, reduction_ops.reduce_sum(values))
        if self.reduction == "sum":
            return update_total.op
        count = reduction_ops.reduce_sum(weights) if sample_weight is not None else \
            math_ops.cast(array_ops.size(values), self.dtype)
        return group(update_total.op, assign_add(self.count, count).op)

    def result(self):
        if self.reduction == "sum":
            return array_ops.identity(self.total)
        return math_ops.divide_no_nan(self.total, self.count)


class Sum(Reduce):
    def __init__(self, name="sum", dtype=None):
        super().__init__("sum", name=name, dtype=dtype)


class Mean(Reduce):
    def __init__(self, name="mean", dtype=None):
        super().__init__("weighted_mean", name=name, dtype=dtype)


class MeanMetricWrapper(Mean):
    """The weighted mean of `fn(y_true, y_pred, **kwargs)` over all samples seen."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = convert_to_tensor(y_pred)
        y_true = math_ops.cast(y_true, y_pred.dtype) if self._fn not in (sparse_categorical_accuracy,
                                                                           sparse_top_k_categorical_accuracy,
                                                                           sparse_categorical_crossentropy) \
            else convert_to_tensor(y_true)
        return super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight=sample_weight)

    def get_config(self):
        return {**self._fn_kwargs, **super().get_config()}


def _wrapper(class_name, fn, default_name, **defaults):
    def __init__(self, name=default_name, dtype=None, **kwargs):
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{class_name}.__init__() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **{**defaults, **kwargs})
    return type(class_name, (MeanMetricWrapper,), {"__init__": __init__, "__module__": __name__})


Accuracy = _wrapper("Accuracy", accuracy, "accuracy")
BinaryAccuracy = _wrapper("BinaryAccuracy", binary_accuracy, "binary_accuracy", threshold=0.5)
CategoricalAccuracy = _wrapper("CategoricalAccuracy", categorical_accuracy, "categorical_accuracy")
SparseCategoricalAccuracy = _wrapper("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                     "sparse_categorical_accuracy")
TopKCategoricalAccuracy = _wrapper("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                   "top_k_categorical_accuracy", k=5)
SparseTopKCategoricalAccuracy = _wrapper("SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
                                         "sparse_top_k_categorical_accuracy", k=5)
MeanSquaredError = _wrapper("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _wrapper("MeanAbsolutePercentageError", mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _wrapper("MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error")
CosineSimilarity = _wrapper("CosineSimilarity", cosine_proximity, "cosine_similarity", axis=-1)
Hinge = _wrapper("Hinge", hinge, "hinge")
SquaredHinge = _wrapper("SquaredHinge", squared_hinge, "squared_hinge")
CategoricalHinge = _wrapper("CategoricalHinge", categorical_hinge, "categorical_hinge")
KLDivergence = _wrapper("KLDivergence", kullback_leibler_divergence, "kullback_leibler_divergence")
LogCoshError = _wrapper("LogCoshError", logcosh, "logcosh")
Poisson = _wrapper("Poisson", poisson, "poisson")
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", categorical_crossentropy, "categorical_crossentropy",
                                   from_logits=False, label_smoothing=0)
BinaryCrossentropy = _wrapper("BinaryCrossentropy", binary_crossentropy, "binary_crossentropy",
                              from_logits=False, label_smoothing=0)
SparseCategoricalCrossentropy = _wrapper("SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
                                         "sparse_categorical_crossentropy", from_logits=False, axis=-1)


class RootMeanSquaredError(Mean):
    """√(weighted mean of (y_pred - y_true)²)."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = math_ops.cast(y_pred, self.dtype)
        y_true = math_ops.cast(y_true, self.dtype)
        return super().update_state(math_ops.squared_difference(y_pred, y_true), sample_weight=sample_weight)

    def result(self):
        return math_ops.sqrt(math_ops.divide_no_nan(self.total, self.count))


# ---- confusion-matrix metrics -------------------------------------------------------------------------
def _thresholds(thresholds, default=0.5):
    if thresholds is None:
        return [default]
    values = list(thresholds) if isinstance(thresholds, (list, tuple, np.ndarray)) else [thresholds]
    for t in values:
        if not 0.0 <= t <= 1.0:
            raise ValueError(f"Threshold values must be in [0, 1]. Invalid values: {values}")
    return [float(t) for t in values]


def _update_confusion(variables, y_true, y_pred, thresholds, top_k=None, class_id=None, sample_weight=None):
    """assign_add to each of `variables` ({'tp'|'fp'|'tn'|'fn': Variable[len(thresholds)]}) the
    weighted count over thresholds: a prediction counts as positive when y_pred > threshold."""
    y_pred = math_ops.cast(y_pred, "float32")
    y_true = math_ops.cast(y_true, "float32")
    if top_k is not None:
        values = _top_k_values(y_pred, top_k)
        kth = reduction_ops.reduce_min(values, axis=-1, keepdims=True)
        y_pred = math_ops.where(math_ops.greater_equal(y_pred, kth), y_pred,
                                creation_ops.ones_like(y_pred) * np.float32(-np.inf))
    if class_id is not None:
        y_true, y_pred = y_true[..., class_id], y_pred[..., class_id]
    preds = array_ops.reshape(y_pred, [1, -1])
    labels = math_ops.cast(array_ops.reshape(y_true, [1, -1]), "bool")
    th = constant(np.asarray(thresholds, np.float32).reshape(-1, 1))
    pred_pos = math_ops.greater(preds, th)
    weight = creation_ops.ones_like(preds) if sample_weight is None else \
        array_ops.reshape(_weights_like(math_ops.cast(y_true, "float32"), sample_weight), [1, -1])
    masks = {"tp": math_ops.logical_and(labels, pred_pos),
             "fp": math_ops.logical_and(math_ops.logical_not(labels), pred_pos),
             "tn": math_ops.logical_and(math_ops.logical_not(labels), math_ops.logical_not(pred_pos)),
             "fn": math_ops.logical_and(labels, math_ops.logical_not(pred_pos))}
    ops = []
    for key, var in variables.items():
        count = reduction_ops.reduce_sum(math_ops.cast(masks[key], "float32") * weight, axis=1)
        ops.append(assign_add(var, math_ops.cast(count, var.dtype)).op)
    return group(*ops)


def _top_k_values(y_pred, k):
    return top_k(y_pred, k)[0]


class _ConfusionMatrixConditionCount(Metric):
    _KEY = None

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.thresholds = _thresholds(thresholds)
        self.accumulator = self.add_weight("accumulator", shape=(len(self.thresholds),))

    def update_state(self, y_true, y_pred, sample_weight=None):
        return _update_confusion({self._KEY: self.accumulator}, y_true, y_pred, self.thresholds,
                                 sample_weight=sample_weight)

    def result(self):
        if len(self.thresholds) == 1:
            return array_ops.identity(self.accumulator[0])
        return array_ops.identity(self.accumulator)

    def get_config(self):
        return {"thresholds": self.init_thresholds, **super().get_config()}


def _count_class(class_name, key, default_name):
    def __init__(self, thresholds=None, name=default_name, dtype=None):
        _ConfusionMatrixConditionCount.__init__(self, thresholds=thresholds, name=name, dtype=dtype)
    return type(class_name, (_ConfusionMatrixConditionCount,), {"_KEY": key, "__init__": __init__,
                                                                 "__module__": __name__})


TruePositives = _count_class("TruePositives", "tp", "true_positives")
FalsePositives = _count_class("FalsePositives", "fp", "false_positives")
TrueNegatives = _count_class("TrueNegatives", "tn", "true_negatives")
FalseNegatives = _count_class("FalseNegatives", "fn", "false_negatives")


class _PrecisionRecall(Metric):
    _OTHER = None  # "fp" (precision) or "fn" (recall)

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.top_k, self.class_id = top_k, class_id
        self.thresholds = _thresholds(thresholds, default=0.5 if top_k is None else -1e10)  # TF's NEG_INF
        n = len(self.thresholds)
        self.true_positives = self.add_weight("true_positives", shape=(n,))
        other = "false_positives" if self._OTHER == "fp" else "false_negatives"
        setattr(self, other, self.add_weight(other, shape=(n,)))
        self._other = getattr(self, other)

    def update_state(self, y_true, y_pred, sample_weight=None):
        return _update_confusion({"tp": self.true_positives, self._OTHER: self._other}, y_true, y_pred,
                                 self.thresholds, top_k=self.top_k, class_id=self.class_id,
                                 sample_weight=sample_weight)

    def result(self):
        value = math_ops.divide_no_nan(self.true_positives, self.true_positives + self._other)
        return value[0] if len(self.thresholds) == 1 else value

    def get_config(self):
        return {"thresholds": self.init_thresholds, "top_k": self.top_k, "class_id": self.class_id,
                **super().get_config()}


class Precision(_PrecisionRecall):
    """tp / (tp + fp) at each threshold (0.5 by default)."""
    _OTHER = "fp"

    def __init__(self, thresholds=None, top_k=None, class_id=None, name="precision", dtype=None):
        super().__init__(thresholds, top_k, class_id, name, dtype)


class Recall(_PrecisionRecall):
    """tp / (tp + fn) at each threshold (0.5 by default)."""
    _OTHER = "fn"

    def __init__(self, thresholds=None, top_k=None, class_id=None, name="recall", dtype=None):
        super().__init__(thresholds, top_k, class_id, name, dtype)


class AUC(Metric):
    """The area under the ROC or PR curve, from confusion counts at `num_thresholds` thresholds
    spread evenly over [0, 1] (TF's Riemann sum; 'interpolation' for PR is Davis & Goadrich's)."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name="auc", dtype=None,
                 thresholds=None):
        super().__init__(name=name, dtype=dtype)
        curve, summation_method = str(curve).upper(), str(summation_method).lower()
        if curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value "{curve}". Expected values are ["ROC", "PR"]')
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value "{summation_method}". Expected values are '
                             '["interpolation", "majoring", "minoring"]')
        if thresholds is not None:
            self.num_thresholds = len(thresholds) + 2
            inner = sorted(_thresholds(thresholds))
        else:
            if num_thresholds <= 1:
                raise ValueError("`num_thresholds` must be > 1.")
            self.num_thresholds = num_thresholds
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        eps = 1e-7
        self.thresholds = [0.0 - eps] + inner + [1.0 + eps]
        self.curve, self.summation_method = curve, summation_method
        n = self.num_thresholds
        self.true_positives = self.add_weight("true_positives", shape=(n,))
        self.true_negatives = self.add_weight("true_negatives", shape=(n,))
        self.false_positives = self.add_weight("false_positives", shape=(n,))
        self.false_negatives = self.add_weight("false_negatives", shape=(n,))

    def update_state(self, y_true, y_pred, sample_weight=None):
        return _update_confusion({"tp": self.true_positives, "tn": self.true_negatives, "fp": self.false_positives,
                                  "fn": self.false_negatives}, y_true, y_pred, self.thresholds,
                                 sample_weight=sample_weight)

    def _interpolate_pr_auc(self):
        n = self.num_thresholds
        tp, fp, fn = (convert_to_tensor(v) for v in (self.true_positives, self.false_positives, self.false_negatives))
        dtp = tp[:n - 1] - tp[1:]
        p = tp + fp
        dp = p[:n - 1] - p[1:]
        slope = math_ops.divide_no_nan(dtp, math_ops.maximum(dp, 0.0))
        intercept = tp[1:] - slope * p[1:]
        ratio = math_ops.where(math_ops.logical_and(math_ops.greater(p[:n - 1], 0.0), math_ops.greater(p[1:], 0.0)),
                               math_ops.divide_no_nan(p[:n - 1], math_ops.maximum(p[1:], 0.0)),
                               creation_ops.ones_like(p[1:]))
        return reduction_ops.reduce_sum(math_ops.divide_no_nan(
            slope * (dtp + intercept * math_ops.log(ratio)), math_ops.maximum(tp[1:] + fn[1:], 0.0)))

    def result(self):
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolate_pr_auc()
        n = self.num_thresholds
        tp, tn, fp, fn = (convert_to_tensor(v) for v in (self.true_positives, self.true_negatives,
                                                         self.false_positives, self.false_negatives))
        recall = math_ops.divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = math_ops.divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, math_ops.divide_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = math_ops.minimum(y[:n - 1], y[1:])
        else:
            heights = math_ops.maximum(y[:n - 1], y[1:])
        return reduction_ops.reduce_sum((x[:n - 1] - x[1:]) * heights)

    def get_config(self):
        return {"num_thresholds": self.num_thresholds, "curve": self.curve,
                "summation_method": self.summation_method, **super().get_config()}


class MeanIoU(Metric):
    """The mean over classes of TP / (TP + FP + FN), from a confusion matrix of class ids."""

    def __init__(self, num_classes, name="mean_io_u", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.num_classes = num_classes
        self.total_cm = self.add_weight("total_confusion_matrix", shape=(num_classes, num_classes),
                                        dtype="float64")

    def update_state(self, y_true, y_pred, sample_weight=None):
        n = self.num_classes
        labels = math_ops.cast(array_ops.reshape(y_true, [-1]), "int64")
        preds = math_ops.cast(array_ops.reshape(y_pred, [-1]), "int64")
        rows = one_hot(labels, n, dtype="float64")
        if sample_weight is not None:
            rows = rows * math_ops.cast(array_ops.reshape(sample_weight, [-1, 1]), "float64")
        cm = matmul(rows, one_hot(preds, n, dtype="float64"), transpose_a=True)
        return assign_add(self.total_cm, cm).op

    def result(self):
        cm = convert_to_tensor(self.total_cm)
        rows, cols = reduction_ops.reduce_sum(cm, axis=0), reduction_ops.reduce_sum(cm, axis=1)
        tp = array_ops.reshape(reduction_ops.reduce_sum(cm * constant(np.eye(self.num_classes)), axis=1), [-1])
        denominator = rows + cols - tp
        valid = reduction_ops.reduce_sum(math_ops.cast(math_ops.not_equal(denominator, 0.0), "float64"))
        iou = math_ops.divide_no_nan(tp, denominator)
        return math_ops.cast(math_ops.divide_no_nan(reduction_ops.reduce_sum(iou), valid), self.dtype)

    def get_config(self):
        return {"num_classes": self.num_classes, **super().get_config()}


# ---- lookup ------------------------------------------------------------------------------------------
# ---- the rest of TF 1.15's metrics ------------------------------------------------------------------
class MeanRelativeError(Mean):
    """The weighted mean of |y_true - y_pred| / normalizer (elementwise; 0 where it is 0)."""

    def __init__(self, normalizer, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.normalizer = math_ops.cast(normalizer, self.dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = math_ops.cast(y_pred, self.dtype)
        y_true = math_ops.cast(y_true, self.dtype)
        relative = math_ops.divide_no_nan(math_ops.abs(y_true - y_pred), self.normalizer)
        return super().update_state(relative, sample_weight=sample_weight)

    def get_config(self):
        normalizer = self.normalizer
        value = normalizer.numpy() if executing_eagerly() else K.get_session().run(normalizer)
        return {"normalizer": np.asarray(value).tolist(), **super().get_config()}


class MeanTensor(Metric):
    """The elementwise weighted mean of the values' tensors (state shaped as the first values)."""

    def __init__(self, name="mean_tensor", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._shape = None
        self._total = self._count = None

    def _build(self, shape):
        self._shape = shape
        self._total = self.add_weight("total", shape=shape.as_list(), initializer="zeros")
        self._count = self.add_weight("count", shape=shape.as_list(), initializer="zeros")

    @property
    def total(self):
        return self._total

    @property
    def count(self):
        return self._count

    def update_state(self, values, sample_weight=None):
        values = math_ops.cast(values, self.dtype)
        if self._shape is None:
            if not values.shape.is_fully_defined():
                raise ValueError(f"MeanTensor needs values of a static shape, got {values.shape}")
            self._build(values.shape)
        elif values.shape != self._shape:
            raise ValueError("MeanTensor input values must always have the same shape. Expected shape (set during "
                             f"the first call): {self._shape}. Got: {values.shape}")
        counts = creation_ops.ones_like(values)
        if sample_weight is not None:
            weights = _weights_like(values, sample_weight)
            values, counts = values * weights, weights
        return group(assign_add(self._total, values).op, assign_add(self._count, counts).op)

    def result(self):
        if self._shape is None:
            raise ValueError("MeanTensor does not have any result yet. Please call the MeanTensor instance or use "
                             "`.update_state(value)` before retrieving the result.")
        return math_ops.divide_no_nan(self._total, self._count)

    def reset_states(self):
        if self._shape is not None:
            super().reset_states()


class _SensitivitySpecificityBase(Metric):
    """tp/tn/fp/fn at `num_thresholds` thresholds evenly over [0, 1] (as AUC's)."""

    def __init__(self, value, num_thresholds=200, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        if num_thresholds <= 0:
            raise ValueError("`num_thresholds` must be > 0.")
        self.value = value
        self.num_thresholds = num_thresholds
        inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.thresholds = [0.0 - K.epsilon()] + inner + [1.0 + K.epsilon()] if num_thresholds > 1 else [0.5]
        n = len(self.thresholds)
        self.true_positives = self.add_weight("true_positives", shape=(n,), initializer="zeros")
        self.true_negatives = self.add_weight("true_negatives", shape=(n,), initializer="zeros")
        self.false_positives = self.add_weight("false_positives", shape=(n,), initializer="zeros")
        self.false_negatives = self.add_weight("false_negatives", shape=(n,), initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        return _update_confusion({"tp": self.true_positives, "tn": self.true_negatives, "fp": self.false_positives,
                                  "fn": self.false_negatives}, y_true, y_pred, self.thresholds,
                                 sample_weight=sample_weight)

    def _at_closest(self, rate_num, rate_other, num, other):
        """num/(num+other) at the threshold whose rate_num/(rate_num+rate_other) is closest to value."""
        rates = math_ops.divide_no_nan(rate_num, rate_num + rate_other)
        index = math_ops.cast(reduction_ops.argmin(math_ops.abs(rates - self.value), 0), "int32")
        return math_ops.divide_no_nan(num[index], num[index] + other[index])


class SensitivityAtSpecificity(_SensitivitySpecificityBase):
    """The sensitivity (tp / (tp + fn)) at the threshold whose specificity is closest to `specificity`."""

    def __init__(self, specificity, num_thresholds=200, name=None, dtype=None):
        if specificity < 0 or specificity > 1:
            raise ValueError("`specificity` must be in the range [0, 1].")
        self.specificity = specificity
        super().__init__(specificity, num_thresholds=num_thresholds, name=name, dtype=dtype)

    def result(self):
        return self._at_closest(self.true_negatives, self.false_positives, self.true_positives,
                                self.false_negatives)

    def get_config(self):
        return {"num_thresholds": self.num_thresholds, "specificity": self.specificity, **super().get_config()}


class SpecificityAtSensitivity(_SensitivitySpecificityBase):
    """The specificity (tn / (tn + fp)) at the threshold whose sensitivity is closest to `sensitivity`."""

    def __init__(self, sensitivity, num_thresholds=200, name=None, dtype=None):
        if sensitivity < 0 or sensitivity > 1:
            raise ValueError("`sensitivity` must be in the range [0, 1].")
        self.sensitivity = sensitivity
        super().__init__(sensitivity, num_thresholds=num_thresholds, name=name, dtype=dtype)

    def result(self):
        return self._at_closest(self.true_positives, self.false_negatives, self.true_negatives,
                                self.false_positives)

    def get_config(self):
        return {"num_thresholds": self.num_thresholds, "sensitivity": self.sensitivity, **super().get_config()}


MSE, MAE, MAPE, MSLE, KLD = L.MSE, L.MAE, L.MAPE, L.MSLE, L.KLD


_FUNCTIONS = {f.__name__: f for f in (accuracy, binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
                                       top_k_categorical_accuracy, sparse_top_k_categorical_accuracy,
                                       cosine_proximity)}
_FUNCTIONS.update(acc=accuracy, ACC=accuracy, cosine=cosine_proximity)
_FUNCTIONS.update({name: getattr(L, name) for name in
                   ("mean_squared_error", "mse", "MSE", "mean_absolute_error", "mae", "MAE",
                    "mean_absolute_percentage_error", "mape", "MAPE", "mean_squared_logarithmic_error", "msle",
                    "MSLE", "squared_hinge", "hinge", "categorical_hinge", "logcosh", "categorical_crossentropy",
                    "sparse_categorical_crossentropy", "binary_crossentropy", "kullback_leibler_divergence", "kld",
                    "KLD", "poisson")})
_TABLE = dict(_FUNCTIONS)
_TABLE.update({name: obj for name, obj in globals().items() if isinstance(obj, type) and issubclass(obj, Metric)})
_ = (mse, mae, mape, msle, kld)  # re-exported names


def serialize(metric):
    return serialize_keras_object(metric)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, _TABLE, custom_objects, "metric function")


def get(identifier):
    """A metric function or object for a name, a config dict or a callable; ValueError otherwise."""
    return get_identified(identifier, deserialize, "metric function", none=_RAISE)
