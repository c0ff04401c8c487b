"""`tf.contrib.losses` (also `slim.losses`), TF 1.15's deprecated losses: the same values as
`tf.losses` (a weighted mean over the non-zero weights), with contrib's argument order
(predictions or logits first) and `weights` named as there."""

from __future__ import annotations

from .. import losses as _losses
from ..graph.keys import GraphKeys
from ..tf1_names import missing_attribute

__all__ = ["absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance", "get_losses",
           "get_regularization_losses", "get_total_loss", "hinge_loss", "log_loss", "mean_squared_error",
           "sigmoid_cross_entropy", "softmax_cross_entropy", "sparse_softmax_cross_entropy"]

add_loss = _losses.add_loss
get_losses = _losses.get_losses
get_regularization_losses = _losses.get_regularization_losses


def get_total_loss(add_regularization_losses=True, name="total_loss"):
    return _losses.get_total_loss(add_regularization_losses=add_regularization_losses, name=name)


def compute_weighted_loss(losses, weights=1.0, scope=None):
    return _losses.compute_weighted_loss(losses, weights=weights, scope=scope)


def softmax_cross_entropy(logits, onehot_labels, weights=1.0, label_smoothing=0, scope=None):
    return _losses.softmax_cross_entropy(onehot_labels, logits, weights=weights, label_smoothing=label_smoothing,
                                         scope=scope)


def sparse_softmax_cross_entropy(logits, labels, weights=1.0, scope=None):
    return _losses.sparse_softmax_cross_entropy(labels, logits, weights=weights, scope=scope)


def sigmoid_cross_entropy(logits, multi_class_labels, weights=1.0, label_smoothing=0, scope=None):
    return _losses.sigmoid_cross_entropy(multi_class_labels, logits, weights=weights,
                                         label_smoothing=label_smoothing, scope=scope)


def mean_squared_error(predictions, labels=None, weights=1.0, scope=None):
    return _losses.mean_squared_error(labels, predictions, weights=weights, scope=scope)


def absolute_difference(predictions, labels=None, weights=1.0, scope=None):
    return _losses.absolute_difference(labels, predictions, weights=weights, scope=scope)


def log_loss(predictions, labels=None, weights=1.0, epsilon=1e-7, scope=None):
    return _losses.log_loss(labels, predictions, weights=weights, epsilon=epsilon, scope=scope)


def hinge_loss(logits, labels=None, scope=None):
    """The element-wise hinge loss max(0, 1 - (2·labels - 1)·logits), unreduced (as contrib)."""
    return _losses.hinge_loss(labels, logits, scope=scope, loss_collection=None,
                              reduction=_losses.Reduction.NONE)


def cosine_distance(predictions, labels=None, axis=None, weights=1.0, scope=None, dim=None):
    return _losses.cosine_distance(labels, predictions, axis=axis if axis is not None else dim, weights=weights,
                                   scope=scope)


LOSSES = GraphKeys.LOSSES

__getattr__ = missing_attribute(__name__)
