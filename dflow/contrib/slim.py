"""`tf.contrib.slim` (TF 1.15): `arg_scope` and the variable helpers of contrib.framework, the
layers of contrib.layers, their initializers and regularizers, and `slim.losses`
(contrib.losses)."""

from __future__ import annotations

from ..tf1_names import missing_attribute
from . import losses, metrics
from .framework import (
    add_arg_scope,
    arg_scope,
    arg_scoped_arguments,
    current_arg_scope,
    filter_variables,
    get_local_variables,
    get_model_variables,
    get_trainable_variables,
    get_unique_variable,
    get_variables,
    get_variables_by_name,
    get_variables_by_suffix,
    get_variables_to_restore,
    has_arg_scope,
    local_variable,
    model_variable,
    variable,
)
from .layers import (
    apply_regularization,
    avg_pool2d,
    batch_norm,
    bias_add,
    conv1d,
    conv2d,
    conv2d_transpose,
    convolution,
    convolution1d,
    convolution2d,
    convolution2d_transpose,
    dropout,
    flatten,
    fully_connected,
    l1_l2_regularizer,
    l1_regularizer,
    l2_regularizer,
    layer_norm,
    linear,
    max_pool2d,
    one_hot_encoding,
    optimize_loss,
    relu,
    relu6,
    repeat,
    separable_conv2d,
    separable_convolution2d,
    softmax,
    stack,
    sum_regularizer,
    variance_scaling_initializer,
    xavier_initializer,
    xavier_initializer_conv2d,
)

__all__ = [
    "losses", "metrics", "add_arg_scope", "arg_scope", "arg_scoped_arguments", "current_arg_scope", "filter_variables",
    "get_local_variables", "get_model_variables", "get_trainable_variables", "get_unique_variable", "get_variables",
    "get_variables_by_name", "get_variables_by_suffix", "get_variables_to_restore", "has_arg_scope",
    "local_variable", "model_variable", "variable", "apply_regularization", "avg_pool2d", "batch_norm", "bias_add",
    "conv1d", "conv2d", "conv2d_transpose", "convolution", "convolution1d", "convolution2d",
    "convolution2d_transpose", "dropout", "flatten", "fully_connected", "l1_l2_regularizer", "l1_regularizer",
    "l2_regularizer", "layer_norm", "one_hot_encoding", "softmax", "linear", "max_pool2d", "optimize_loss", "relu", "relu6", "repeat", "separable_conv2d", "separable_convolution2d", "stack", "sum_regularizer",
    "variance_scaling_initializer", "xavier_initializer", "xavier_initializer_conv2d",
]

__getattr__ = missing_attribute(__name__)
