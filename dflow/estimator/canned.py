"""TF1's canned estimators over feature columns (TF 1.15's v1 `LinearClassifier`,
`LinearRegressor`, `DNNClassifier`, `DNNRegressor`), with TF1's variable names:
`linear/linear_model/<key>/weights`, `linear/linear_model/bias_weights`;
`dnn/hiddenlayer_<i>/kernel|bias`, `dnn/logits/kernel|bias`; and TF1's default optimizers:
Ftrl at min(0.2, 1/√(number of columns)) for linear models, Adagrad at 0.05 for DNNs.
"""

from __future__ import annotations

import math

from .. import feature_column as fc
from .. import layers as layers_lib
from ..graph.dtypes import float32
from ..graph.graph import control_dependencies, get_collection
from ..graph.keys import GraphKeys
from ..kernels.control_ops import group
from ..kernels.math_ops import cast, equal
from ..kernels.reduction_ops import reduce_mean
from ..kernels.state_ops import assign_add
from ..losses import Reduction
from ..nn.activations import relu
from ..state.initializers import glorot_uniform_initializer
from ..state.scope import variable_scope
from ..summary import histogram, scalar
from ..train import optimizer as optimizer_lib
from ..train.schedules import get_global_step
from .estimator import Estimator
from .head import RegressionHead, classification_head
from .model_fn import ModeKeys

__all__ = ["LinearClassifier", "LinearRegressor", "DNNClassifier", "DNNRegressor", "DNNLinearCombinedClassifier",
           "DNNLinearCombinedRegressor"]

_OPTIMIZERS = {
    "Adagrad": optimizer_lib.AdagradOptimizer,
    "Adam": optimizer_lib.AdamOptimizer,
    "Ftrl": optimizer_lib.FtrlOptimizer,
    "RMSProp": optimizer_lib.RMSPropOptimizer,
    "SGD": optimizer_lib.GradientDescentOptimizer,
}
_DNN_LEARNING_RATE = 0.05
_LINEAR_LEARNING_RATE = 0.2


def _optimizer(opt, learning_rate):
    """An Optimizer from a name of TF1's table (at `learning_rate`), an instance, or a callable."""
    if isinstance(opt, str):
        if opt not in _OPTIMIZERS:
            raise ValueError(f"Unsupported optimizer name: {opt}. Supported names are: {tuple(sorted(_OPTIMIZERS))}")
        return _OPTIMIZERS[opt](learning_rate=learning_rate)
    if callable(opt) and not isinstance(opt, optimizer_lib.Optimizer):
        opt = opt()
    if not isinstance(opt, optimizer_lib.Optimizer):
        raise ValueError(f"The given object is not an Optimizer instance. Given: {opt}")
    return opt


def _feature_columns(feature_columns):
    columns = list(feature_columns or [])
    if not columns:
        raise ValueError("feature_columns must be provided and non-empty.")
    return columns


def _features(features):
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
    return features


def _linear_model_fn(features, labels, mode, head, feature_columns, optimizer, sparse_combiner):
    features = _features(features)
    opt = _optimizer(optimizer, min(_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(len(feature_columns))))
    with variable_scope("linear"):
        logits = fc.linear_model(features, feature_columns, units=head.logits_dimension,
                                 sparse_combiner=sparse_combiner)
        return head.create_estimator_spec(features, mode, logits, labels=labels, optimizer=opt)


def _hidden_layer_summary(value, tag):
    """TF1's summaries of a layer's output: the fraction of zeros and a histogram (tags under the
    enclosing `dnn` name scope, e.g. `dnn/dnn/hiddenlayer_0/activation`, as TF1 writes them)."""
    scalar(f"{tag}/fraction_of_zero_values", reduce_mean(cast(equal(value, 0.0), float32)))
    histogram(f"{tag}/activation", value)


def _dnn_logits(features, mode, head, hidden_units, feature_columns, activation_fn, dropout, batch_norm):
    """TF1's dnn logit fn, under the caller's `dnn` scope: input_from_feature_columns/input_layer,
    hiddenlayer_<i>/kernel|bias, logits/kernel|bias."""
    if batch_norm:
        raise NotImplementedError("DNN estimators: batch_norm=True is not supported by dflow")
    training = mode == ModeKeys.TRAIN
    with variable_scope("input_from_feature_columns"):
        net = fc.input_layer(features, feature_columns)
    for i, units in enumerate(hidden_units):
        with variable_scope(f"hiddenlayer_{i}") as scope:
            net = layers_lib.dense(net, units, activation=activation_fn,
                                   kernel_initializer=glorot_uniform_initializer(), name=scope)
            if dropout is not None and training:
                net = layers_lib.dropout(net, rate=dropout, training=True)
        _hidden_layer_summary(net, scope.name)
    with variable_scope("logits") as scope:
        logits = layers_lib.dense(net, head.logits_dimension, kernel_initializer=glorot_uniform_initializer(),
                                  name=scope)
    _hidden_layer_summary(logits, scope.name)
    return logits


def _dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns, optimizer, activation_fn, dropout,
                  batch_norm):
    features = _features(features)
    if batch_norm:
        raise NotImplementedError("DNN estimators: batch_norm=True is not supported by dflow")
    opt = _optimizer(optimizer, _DNN_LEARNING_RATE)
    with variable_scope("dnn"):
        logits = _dnn_logits(features, mode, head, hidden_units, feature_columns, activation_fn, dropout, batch_norm)
        return head.create_estimator_spec(features, mode, logits, labels=labels, optimizer=opt)


def _dnn_linear_combined_model_fn(features, labels, mode, head, linear_feature_columns, linear_optimizer,
                                  dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                                  dnn_dropout, batch_norm, linear_sparse_combiner):
    """TF1's wide & deep: the `linear` model's logits plus the `dnn` network's, each part trained
    by its own optimizer over its own variables; then the global step is incremented once."""
    features = _features(features)
    if not linear_feature_columns and not dnn_feature_columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
    dnn_logits = linear_logits = None
    if dnn_feature_columns:
        if not dnn_hidden_units:
            raise ValueError("dnn_hidden_units must be defined when dnn_feature_columns is specified.")
        dnn_opt = _optimizer(dnn_optimizer, _DNN_LEARNING_RATE)
        with variable_scope("dnn") as scope:
            dnn_scope = scope.name
            dnn_logits = _dnn_logits(features, mode, head, dnn_hidden_units, dnn_feature_columns,
                                     dnn_activation_fn, dnn_dropout, batch_norm)
    if linear_feature_columns:
        linear_opt = _optimizer(linear_optimizer,
                                min(_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(len(linear_feature_columns))))
        with variable_scope("linear") as scope:
            linear_scope = scope.name
            linear_logits = fc.linear_model(features, linear_feature_columns, units=head.logits_dimension,
                                            sparse_combiner=linear_sparse_combiner)
            _hidden_layer_summary(linear_logits, scope.name)
    if dnn_logits is None:
        logits = linear_logits
    elif linear_logits is None:
        logits = dnn_logits
    else:
        logits = dnn_logits + linear_logits

    def train_op_fn(loss):
        ops = []
        if dnn_logits is not None:
            ops.append(dnn_opt.minimize(loss, var_list=get_collection(GraphKeys.TRAINABLE_VARIABLES, dnn_scope)))
        if linear_logits is not None:
            ops.append(linear_opt.minimize(loss,
                                           var_list=get_collection(GraphKeys.TRAINABLE_VARIABLES, linear_scope)))
        with control_dependencies([group(*ops)]):
            return assign_add(get_global_step(), 1)

    return head.create_estimator_spec(features, mode, logits, labels=labels, train_op_fn=train_op_fn)


class LinearClassifier(Estimator):
    """A linear model of the feature columns for `n_classes` classes (logistic for 2, softmax above)."""

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None, label_vocabulary=None,
                 optimizer="Ftrl", config=None, partitioner=None, warm_start_from=None,
                 loss_reduction=Reduction.SUM, sparse_combiner="sum"):
        columns = _feature_columns(feature_columns)
        head = classification_head(n_classes, weight_column, loss_reduction, label_vocabulary)

        def model_fn(features, labels, mode, config):
            return _linear_model_fn(features, labels, mode, head, columns, optimizer, sparse_combiner)

        super().__init__(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearRegressor(Estimator):
    """A linear model of the feature columns for real targets of width `label_dimension`."""

    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None, optimizer="Ftrl",
                 config=None, partitioner=None, warm_start_from=None, loss_reduction=Reduction.SUM,
                 sparse_combiner="sum"):
        columns = _feature_columns(feature_columns)
        head = RegressionHead(label_dimension, weight_column, loss_reduction)

        def model_fn(features, labels, mode, config):
            return _linear_model_fn(features, labels, mode, head, columns, optimizer, sparse_combiner)

        super().__init__(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNClassifier(Estimator):
    """A feed-forward network (`hidden_units` wide, `activation_fn`, optional dropout) for `n_classes`."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Adagrad", activation_fn=relu, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None, loss_reduction=Reduction.SUM,
                 batch_norm=False):
        columns = _feature_columns(feature_columns)
        head = classification_head(n_classes, weight_column, loss_reduction, label_vocabulary)
        hidden_units = list(hidden_units)

        def model_fn(features, labels, mode, config):
            return _dnn_model_fn(features, labels, mode, head, hidden_units, columns, optimizer, activation_fn,
                                 dropout, batch_norm)

        super().__init__(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNRegressor(Estimator):
    """A feed-forward network for real targets of width `label_dimension`."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Adagrad", activation_fn=relu, dropout=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=Reduction.SUM, batch_norm=False):
        columns = _feature_columns(feature_columns)
        head = RegressionHead(label_dimension, weight_column, loss_reduction)
        hidden_units = list(hidden_units)

        def model_fn(features, labels, mode, config):
            return _dnn_model_fn(features, labels, mode, head, hidden_units, columns, optimizer, activation_fn,
                                 dropout, batch_norm)

        super().__init__(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedClassifier(Estimator):
    """Wide & deep for `n_classes`: a linear model of `linear_feature_columns` (Ftrl) plus a DNN of
    `dnn_feature_columns` (Adagrad), variables under `linear/linear_model/...` and `dnn/...`."""

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None, dnn_activation_fn=relu,
                 dnn_dropout=None, n_classes=2, weight_column=None, label_vocabulary=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None, loss_reduction=Reduction.SUM,
                 batch_norm=False, linear_sparse_combiner="sum"):
        linear_columns, dnn_columns = list(linear_feature_columns or []), list(dnn_feature_columns or [])
        if not linear_columns and not dnn_columns:
            raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
        head = classification_head(n_classes, weight_column, loss_reduction, label_vocabulary)
        hidden = list(dnn_hidden_units or [])

        def model_fn(features, labels, mode, config):
            return _dnn_linear_combined_model_fn(features, labels, mode, head, linear_columns, linear_optimizer,
                                                 dnn_columns, dnn_optimizer, hidden, dnn_activation_fn, dnn_dropout,
                                                 batch_norm, linear_sparse_combiner)

        super().__init__(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedRegressor(Estimator):
    """Wide & deep for real targets of width `label_dimension`."""

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None, dnn_activation_fn=relu,
                 dnn_dropout=None, label_dimension=1, weight_column=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=Reduction.SUM, batch_norm=False, linear_sparse_combiner="sum"):
        linear_columns, dnn_columns = list(linear_feature_columns or []), list(dnn_feature_columns or [])
        if not linear_columns and not dnn_columns:
            raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
        head = RegressionHead(label_dimension, weight_column, loss_reduction)
        hidden = list(dnn_hidden_units or [])

        def model_fn(features, labels, mode, config):
            return _dnn_linear_combined_model_fn(features, labels, mode, head, linear_columns, linear_optimizer,
                                                 dnn_columns, dnn_optimizer, hidden, dnn_activation_fn, dnn_dropout,
                                                 batch_norm, linear_sparse_combiner)

        super().__init__(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)
