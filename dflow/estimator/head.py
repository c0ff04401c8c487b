"""The heads of TF1's canned estimators (TF 1.15's `estimator/canned/head.py`, v1): from logits
to predictions, loss, eval metrics and the train op, for binary classification (sigmoid), multi-
class classification (softmax) and regression (squared error).

The loss is reduced by `loss_reduction`, `tf.losses.Reduction.SUM` by default as TF1's v1
estimators do; `average_loss` (the weighted mean per example) is logged and evaluated beside it.
"""

from __future__ import annotations

from .. import losses as losses_lib
from .. import metrics as metrics_lib
from ..graph.dtypes import float32, int64, string
from ..graph.graph import control_dependencies, name_scope
from ..kernels.array_ops import identity, reshape, shape
from ..kernels.check_ops import assert_less, assert_non_negative
from ..kernels.common import convert_to_tensor
from ..kernels.creation_ops import ones_like, zeros_like
from ..kernels.creation_ops import range as range_
from ..kernels.manip_ops import concat, expand_dims
from ..kernels.math_ops import cast, maximum, sigmoid
from ..kernels.pad_ops import tile
from ..kernels.reduction_ops import argmax, reduce_sum
from ..kernels.string_ops import as_string
from ..lookup import index_table_from_tensor, index_to_string_table_from_tensor
from ..nn.activations import softmax
from ..nn.classification import (
    sigmoid_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
)
from ..saved_model.signature_constants import DEFAULT_SERVING_SIGNATURE_DEF_KEY
from ..summary import scalar
from ..train.schedules import get_global_step
from .export_output import ClassificationOutput, PredictOutput, RegressionOutput
from .model_fn import AVERAGE_LOSS_METRIC_KEY, LOSS_METRIC_KEY, EstimatorSpec, ModeKeys

__all__ = ["BinaryClassHead", "MultiClassHead", "RegressionHead"]


def _labels_2d(labels, width, what):
    if labels is None:
        raise ValueError("You must provide a labels Tensor. Given: None. Suggested troubleshooting steps: Check "
                         "that your data contain your label feature. Check that your input_fn properly parses and "
                         "returns labels.")
    if isinstance(labels, dict):
        raise ValueError(f"{what}: labels must be a Tensor, got a dict with keys {sorted(labels)}")
    labels = convert_to_tensor(labels)
    if labels.shape.ndims == 1:
        labels = expand_dims(labels, -1)
    if labels.shape.ndims is not None and labels.shape.ndims != 2:
        raise ValueError(f"{what}: labels must have shape [batch_size, {width}], given: {labels.shape}")
    if labels.shape.ndims == 2 and labels.shape[1].value not in (None, width):
        raise ValueError(f"Mismatched label shape. Expected labels dimension={width}. Received {labels.shape[1].value}.")
    return labels


def _assert_range(labels, n_classes):
    """labels, checked when they are read: InvalidArgumentError for an id outside [0, n_classes)."""
    with name_scope("assert_range"):
        checks = [assert_less(labels, convert_to_tensor(n_classes, dtype=labels.dtype),
                              message="Label IDs must < n_classes"),
                  assert_non_negative(labels, message="Label IDs must >= 0")]
        with control_dependencies(checks):
            return identity(labels)


class _Head:
    """The shared flow of TF1's `create_estimator_spec`: PREDICT returns predictions; EVAL and TRAIN
    compute the per-example loss, weight it, and add metrics or the optimizer's train op."""

    def __init__(self, logits_dimension, weight_column=None, loss_reduction=losses_lib.Reduction.SUM):
        if loss_reduction not in (losses_lib.Reduction.SUM, losses_lib.Reduction.SUM_OVER_BATCH_SIZE,
                                  losses_lib.Reduction.MEAN, losses_lib.Reduction.SUM_BY_NONZERO_WEIGHTS,
                                  losses_lib.Reduction.SUM_OVER_NONZERO_WEIGHTS):
            raise ValueError(f"Invalid loss_reduction: {loss_reduction}")
        self.logits_dimension = logits_dimension
        self._weight_column, self._loss_reduction = weight_column, loss_reduction

    def _weights(self, features, logits):
        if self._weight_column is None:
            return 1.0
        key = self._weight_column if isinstance(self._weight_column, str) else self._weight_column.key
        if key not in features:
            raise ValueError(f"weight_column {key!r} is not in features (keys: {sorted(features)})")
        return reshape(cast(features[key], float32), [-1, 1])

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None, train_op_fn=None):
        with name_scope("head"):
            predictions = self._predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=predictions, export_outputs=self._export_outputs(predictions))
            labels = self._labels(labels)
            unreduced = self._unreduced_loss(labels, logits)
            weights = self._weights(features, logits)
            loss = losses_lib.compute_weighted_loss(unreduced, weights=weights, reduction=self._loss_reduction)
            if mode == ModeKeys.EVAL:
                metric_weights = None if self._weight_column is None else weights
                with name_scope("metrics"):
                    metrics = {AVERAGE_LOSS_METRIC_KEY: metrics_lib.mean(unreduced, metric_weights,
                                                                         name=AVERAGE_LOSS_METRIC_KEY)}
                    metrics.update(self._metrics(labels, predictions, metric_weights))
                return EstimatorSpec(mode, predictions=predictions, loss=loss, eval_metric_ops=metrics)
            example_weight_sum = reduce_sum(weights * ones_like(unreduced))
            mean_loss = reduce_sum(unreduced * weights) / example_weight_sum
        if optimizer is not None:
            if train_op_fn is not None:
                raise ValueError("train_op_fn and optimizer cannot both be set.")
            train_op = optimizer.minimize(loss, global_step=get_global_step())
        elif train_op_fn is not None:
            train_op = train_op_fn(loss)
        else:
            raise ValueError("train_op_fn and optimizer cannot both be None.")
        with name_scope(""):
            scalar(LOSS_METRIC_KEY, loss)
            scalar(AVERAGE_LOSS_METRIC_KEY, mean_loss)
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)


def _class_predictions(logits, class_logits, probabilities, n_classes, vocabulary=None):
    class_ids = expand_dims(argmax(class_logits, axis=-1), -1)
    batch = shape(logits)[0:1]
    all_ids = tile(expand_dims(range_(n_classes), 0), concat([batch, [1]], 0))
    if vocabulary is None:
        classes, all_classes = as_string(class_ids, name="str_classes"), as_string(all_ids)
    else:  # TF1's class_string_lookup table (initialized with the tables)
        table = index_to_string_table_from_tensor(list(vocabulary), name="class_string_lookup")
        classes, all_classes = table.lookup(class_ids), table.lookup(cast(all_ids, int64))
    return {"class_ids": class_ids, "classes": classes, "all_class_ids": all_ids, "all_classes": all_classes}, class_ids


def _classification_output(scores, n_classes, vocabulary=None):
    """TF1's: the scores, with the class names (the vocabulary, or "0".."n-1") tiled per example."""
    batch = shape(scores)[0:1]
    names = convert_to_tensor(list(vocabulary), dtype=string) if vocabulary is not None else \
        as_string(range_(n_classes))
    classes = tile(expand_dims(names, 0), concat([batch, [1]], 0))
    return ClassificationOutput(scores=scores, classes=classes)


def _check_vocabulary(label_vocabulary, n_classes):
    if label_vocabulary is None:
        return None
    vocab = list(label_vocabulary)
    if not all(isinstance(v, str) for v in vocab):
        raise ValueError(f"label_vocabulary should be a list or a tuple of strings. Given: {label_vocabulary}")
    if len(vocab) != n_classes:
        raise ValueError(f"Length of label_vocabulary ({len(vocab)}) must equal n_classes ({n_classes}).")
    if len(set(vocab)) != len(vocab):
        raise ValueError(f"label_vocabulary has duplicates: {label_vocabulary}")
    return tuple(vocab)


def _vocabulary_ids(labels, vocabulary, n_classes):
    """String labels as their ids in `vocabulary` (TF1's class_id_lookup table); a label outside it
    fails the range check at run time."""
    if labels.dtype != string:
        raise ValueError(f"Labels dtype should be string if there is a vocabulary. Got {labels.dtype.name}")
    ids = index_table_from_tensor(list(vocabulary), name="class_id_lookup").lookup(labels)
    return _assert_range(ids, n_classes)


class BinaryClassHead(_Head):
    """Two classes from one logit: sigmoid cross-entropy; predictions logits, logistic,
    probabilities, class_ids, classes (and all_class_ids, all_classes)."""

    def __init__(self, weight_column=None, loss_reduction=losses_lib.Reduction.SUM, label_vocabulary=None):
        super().__init__(1, weight_column, loss_reduction)
        self._vocabulary = _check_vocabulary(label_vocabulary, 2)

    def _predictions(self, logits):
        with name_scope("predictions"):
            logistic = sigmoid(logits, name="logistic")
            two = concat([zeros_like(logits), logits], axis=-1, name="two_class_logits")
            probabilities = softmax(two, name="probabilities")
            out, _ = _class_predictions(logits, two, probabilities, 2, self._vocabulary)
        return {"logits": logits, "logistic": logistic, "probabilities": probabilities, **out}

    def _export_outputs(self, predictions):
        """TF1's signatures: classify (also the default), regress (the logistic) and predict."""
        classify = _classification_output(predictions["probabilities"], 2, self._vocabulary)
        return {DEFAULT_SERVING_SIGNATURE_DEF_KEY: classify, "classification": classify,
                "regression": RegressionOutput(predictions["logistic"]), "predict": PredictOutput(predictions)}

    def _labels(self, labels):
        labels = _labels_2d(labels, 1, "BinaryClassHead")
        if self._vocabulary is not None:
            return cast(_vocabulary_ids(labels, self._vocabulary, 2), float32)
        if not (labels.dtype.is_integer or labels.dtype.is_floating):
            raise ValueError(f"Labels dtype should be numeric (dflow has no label_vocabulary). Got {labels.dtype.name}.")
        return _assert_range(cast(labels, float32), 2)

    def _unreduced_loss(self, labels, logits):
        return sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

    def _metrics(self, labels, predictions, weights):
        class_ids = cast(predictions["class_ids"], float32)
        label_mean = metrics_lib.mean(labels, weights, name="label/mean")
        value, update = label_mean
        return {
            "accuracy": metrics_lib.accuracy(labels, class_ids, weights, name="accuracy"),
            "precision": metrics_lib.precision(labels, class_ids, weights, name="precision"),
            "recall": metrics_lib.recall(labels, class_ids, weights, name="recall"),
            "prediction/mean": metrics_lib.mean(predictions["logistic"], weights, name="prediction/mean"),
            "label/mean": label_mean,
            "accuracy_baseline": (maximum(value, 1.0 - value), maximum(update, 1.0 - update)),
            "auc": metrics_lib.auc(labels, predictions["logistic"], weights, name="auc"),
            "auc_precision_recall": metrics_lib.auc(labels, predictions["logistic"], weights, curve="PR",
                                                    name="auc_precision_recall"),
        }


class MultiClassHead(_Head):
    """n_classes > 2 from n logits: sparse softmax cross-entropy over integer labels in [0, n)."""

    def __init__(self, n_classes, weight_column=None, loss_reduction=losses_lib.Reduction.SUM, label_vocabulary=None):
        if n_classes is None or n_classes <= 2:
            raise ValueError(f"n_classes must be > 2: {n_classes}.")
        super().__init__(n_classes, weight_column, loss_reduction)
        self._vocabulary = _check_vocabulary(label_vocabulary, n_classes)

    def _predictions(self, logits):
        with name_scope("predictions"):
            probabilities = softmax(logits, name="probabilities")
            out, _ = _class_predictions(logits, logits, probabilities, self.logits_dimension, self._vocabulary)
        return {"logits": logits, "probabilities": probabilities, **out}

    def _export_outputs(self, predictions):
        """TF1's signatures: classify (also the default) and predict."""
        classify = _classification_output(predictions["probabilities"], self.logits_dimension, self._vocabulary)
        return {DEFAULT_SERVING_SIGNATURE_DEF_KEY: classify, "classification": classify,
                "predict": PredictOutput(predictions)}

    def _labels(self, labels):
        labels = _labels_2d(labels, 1, "MultiClassHead")
        if self._vocabulary is not None:
            return _vocabulary_ids(labels, self._vocabulary, self.logits_dimension)
        if not labels.dtype.is_integer:
            raise ValueError(f"Labels dtype should be integer. Instead got {labels.dtype.name}.")
        return _assert_range(cast(labels, int64), self.logits_dimension)

    def _unreduced_loss(self, labels, logits):
        flat = reshape(labels, [-1])
        return expand_dims(sparse_softmax_cross_entropy_with_logits(labels=flat, logits=logits), -1)

    def _metrics(self, labels, predictions, weights):
        return {"accuracy": metrics_lib.accuracy(labels, predictions["class_ids"], weights, name="accuracy")}


class RegressionHead(_Head):
    """Real-valued targets of width `label_dimension`: squared error; prediction key `predictions`."""

    def __init__(self, label_dimension=1, weight_column=None, loss_reduction=losses_lib.Reduction.SUM):
        if label_dimension < 1:
            raise ValueError(f"Invalid label_dimension {label_dimension}.")
        super().__init__(label_dimension, weight_column, loss_reduction)

    def _predictions(self, logits):
        return {"predictions": logits}

    def _export_outputs(self, predictions):
        """TF1's signatures: regress (also the default) and predict."""
        regress = RegressionOutput(predictions["predictions"])
        return {DEFAULT_SERVING_SIGNATURE_DEF_KEY: regress, "regression": regress,
                "predict": PredictOutput(predictions)}

    def _labels(self, labels):
        return cast(_labels_2d(labels, self.logits_dimension, "RegressionHead"), float32)

    def _unreduced_loss(self, labels, logits):
        d = logits - labels
        return d * d

    def _metrics(self, labels, predictions, weights):
        return {"prediction/mean": metrics_lib.mean(predictions["predictions"], weights, name="prediction/mean"),
                "label/mean": metrics_lib.mean(labels, weights, name="label/mean")}


def classification_head(n_classes, weight_column=None, loss_reduction=losses_lib.Reduction.SUM,
                        label_vocabulary=None):
    """BinaryClassHead for n_classes == 2, MultiClassHead above; ValueError below 2. With
    `label_vocabulary` (n_classes strings) labels are those strings and `classes` predicts them."""
    if n_classes is None or n_classes < 2:
        raise ValueError(f"n_classes must be >= 2: {n_classes}.")
    if n_classes == 2:
        return BinaryClassHead(weight_column, loss_reduction, label_vocabulary)
    return MultiClassHead(n_classes, weight_column, loss_reduction, label_vocabulary)
