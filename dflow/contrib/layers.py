"""`tf.contrib.layers` (TF 1.15): slim-style layer functions with `arg_scope` support.

Each function opens TF1's variable scope (`fully_connected`, `Conv`, `Conv2d_transpose`,
`BatchNorm`, `Dropout`, `BiasAdd`; the pools and `flatten` only a name scope) and, as TF 1.15
does, applies the `tf.layers` class with variables renamed `kernel` -> `weights`, `bias` ->
`biases` and added to MODEL_VARIABLES, so checkpoints read `fully_connected/weights:0`,
`Conv/biases:0`, `BatchNorm/moving_mean:0`. `normalizer_fn` replaces the biases; the default
activation is relu (batch_norm: none).
"""

from __future__ import annotations

import numbers

from .. import nn
from ..graph import dtypes
from ..graph.graph import (
    add_to_collection,
    add_to_collections,
    control_dependencies,
    get_collection,
    name_scope,
)
from ..graph.keys import GraphKeys
from ..kernels.array_ops import identity
from ..kernels.common import convert_to_tensor
from ..kernels.gather_ops import one_hot
from ..kernels.math_ops import cast
from ..layers.convolutional import Conv1D, Conv2D, Conv2DTranspose, SeparableConv2D
from ..layers.core import Dense, Dropout, Flatten
from ..layers.normalization import batch_moments, moving_average_update, normalize
from ..layers.utils import constant_value, normalize_tuple, smart_cond
from ..regularizers import (
    apply_regularization,
    l1_l2_regularizer,
    l1_regularizer,
    l2_regularizer,
    sum_regularizer,
)
from ..state.initializers import ones_initializer, zeros_initializer
from ..state.scope import variable_scope
from ..tf1_names import missing_attribute
from .framework import add_arg_scope, model_variable, variable
from .initializers import (
    variance_scaling_initializer,
    xavier_initializer,
    xavier_initializer_conv2d,
)
from .optimizers import OPTIMIZER_CLS_NAMES, OPTIMIZER_SUMMARIES, optimize_loss

__all__ = [
    "fully_connected", "linear", "relu", "relu6", "convolution", "convolution1d", "convolution2d", "conv1d",
    "conv2d", "convolution2d_transpose", "conv2d_transpose", "separable_convolution2d", "separable_conv2d",
    "max_pool2d", "avg_pool2d", "flatten", "dropout",
    "batch_norm", "bias_add", "layer_norm", "one_hot_encoding", "softmax", "repeat", "stack", "l1_regularizer", "l2_regularizer", "l1_l2_regularizer",
    "sum_regularizer", "apply_regularization", "xavier_initializer", "xavier_initializer_conv2d",
    "variance_scaling_initializer", "optimize_loss", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES", "variable",
    "model_variable",
]

DATA_FORMAT_NCHW = "NCHW"
DATA_FORMAT_NHWC = "NHWC"
_RENAMES = {"kernel": "weights", "bias": "biases", "depthwise_kernel": "depthwise_weights",
            "pointwise_kernel": "pointwise_weights"}


def _model_getter(get_variable, name, **kwargs):
    """A layer's variable made with `model_variable`, renamed as slim names it."""
    return model_variable(_RENAMES.get(name, name), **kwargs)


def _variable_collections(collections, name):
    if isinstance(collections, dict):
        return collections.get(name)
    return collections


def _add_variable_to_collections(var, collections, name):
    for c in _variable_collections(collections, name) or []:
        if not any(v is var for v in get_collection(c)):
            add_to_collection(c, var)


def collect_named_outputs(collections, alias, outputs):
    """Adds `outputs` to `collections` (if any) and returns it."""
    if collections:
        add_to_collections(collections, outputs)
    return outputs


def _finish(layer, outputs, sc, normalizer_fn, normalizer_params, activation_fn, variables_collections,
            outputs_collections):
    _add_variable_to_collections(layer.kernel, variables_collections, "weights")
    if layer.bias is not None:
        _add_variable_to_collections(layer.bias, variables_collections, "biases")
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=nn.relu, normalizer_fn=None, normalizer_params=None,
                    weights_initializer=xavier_initializer(), weights_regularizer=None,
                    biases_initializer=zeros_initializer(), biases_regularizer=None, reuse=None,
                    variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """activation_fn(inputs · weights + biases) in scope `fully_connected` (inputs of rank > 2 are
    contracted along their last axis). ValueError when num_outputs is not an int."""
    if not isinstance(num_outputs, numbers.Integral):
        raise ValueError(f"num_outputs type should be one of [<class 'int'>], got {type(num_outputs)}.")
    with variable_scope(scope, "fully_connected", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        layer = Dense(num_outputs, activation=None,
                      use_bias=normalizer_fn is None and biases_initializer is not None,
                      kernel_initializer=weights_initializer, bias_initializer=biases_initializer,
                      kernel_regularizer=weights_regularizer, bias_regularizer=biases_regularizer,
                      trainable=trainable, name=sc.name, dtype=inputs.dtype, _scope=sc, _reuse=reuse,
                      _getter=_model_getter)
        outputs = layer.apply(inputs)
        return _finish(layer, outputs, sc, normalizer_fn, normalizer_params, activation_fn, variables_collections,
                       outputs_collections)


def linear(inputs, num_outputs, **kwargs):
    return fully_connected(inputs, num_outputs, activation_fn=None, **kwargs)


def relu(inputs, num_outputs, **kwargs):
    return fully_connected(inputs, num_outputs, activation_fn=nn.relu, **kwargs)


def relu6(inputs, num_outputs, **kwargs):
    return fully_connected(inputs, num_outputs, activation_fn=nn.relu6, **kwargs)


@add_arg_scope
def convolution(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1,
                activation_fn=nn.relu, normalizer_fn=None, normalizer_params=None,
                weights_initializer=xavier_initializer(), weights_regularizer=None,
                biases_initializer=zeros_initializer(), biases_regularizer=None, reuse=None, variables_collections=None,
                outputs_collections=None, trainable=True, scope=None, conv_dims=None):
    """An N-D convolution (N = 1, 2 from the input rank) in scope `Conv`: weights
    [k..., in, num_outputs], biases [num_outputs]. ValueError for another rank or data_format."""
    if data_format not in (None, "NWC", "NCW", "NHWC", "NCHW", "NDHWC", "NCDHW"):
        raise ValueError(f"Invalid data_format: {data_format!r}")
    with variable_scope(scope, "Conv", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if conv_dims is not None and rank is not None and conv_dims + 2 != rank:
            raise ValueError(f"Convolution expects input with rank {conv_dims + 2}, got {rank}")
        layer_class = {3: Conv1D, 4: Conv2D}.get(rank)
        if layer_class is None:
            raise ValueError(f"Convolution not supported for input with rank {rank} (dflow provides 1-D and 2-D "
                             "convolutions)")
        df = "channels_first" if data_format and data_format.startswith("NC") else "channels_last"
        layer = layer_class(num_outputs, kernel_size, strides=stride, padding=padding, data_format=df,
                            dilation_rate=rate, activation=None,
                            use_bias=normalizer_fn is None and biases_initializer is not None,
                            kernel_initializer=weights_initializer, bias_initializer=biases_initializer,
                            kernel_regularizer=weights_regularizer, bias_regularizer=biases_regularizer,
                            trainable=trainable, name=sc.name, dtype=inputs.dtype, _scope=sc, _reuse=reuse,
                            _getter=_model_getter)
        outputs = layer.apply(inputs)
        return _finish(layer, outputs, sc, normalizer_fn, normalizer_params, activation_fn, variables_collections,
                       outputs_collections)


@add_arg_scope
def convolution1d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1,
                  activation_fn=nn.relu, normalizer_fn=None, normalizer_params=None,
                  weights_initializer=xavier_initializer(), weights_regularizer=None,
                  biases_initializer=zeros_initializer(), biases_regularizer=None, reuse=None,
                  variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    return convolution(inputs, num_outputs, kernel_size, stride, padding, data_format, rate, activation_fn,
                       normalizer_fn, normalizer_params, weights_initializer, weights_regularizer,
                       biases_initializer, biases_regularizer, reuse, variables_collections, outputs_collections,
                       trainable, scope, conv_dims=1)


@add_arg_scope
def convolution2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1,
                  activation_fn=nn.relu, normalizer_fn=None, normalizer_params=None,
                  weights_initializer=xavier_initializer(), weights_regularizer=None,
                  biases_initializer=zeros_initializer(), biases_regularizer=None, reuse=None,
                  variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    return convolution(inputs, num_outputs, kernel_size, stride, padding, data_format, rate, activation_fn,
                       normalizer_fn, normalizer_params, weights_initializer, weights_regularizer,
                       biases_initializer, biases_regularizer, reuse, variables_collections, outputs_collections,
                       trainable, scope, conv_dims=2)


conv1d = convolution1d
conv2d = convolution2d


@add_arg_scope
def convolution2d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=DATA_FORMAT_NHWC,
                            activation_fn=nn.relu, normalizer_fn=None, normalizer_params=None,
                            weights_initializer=xavier_initializer(), weights_regularizer=None,
                            biases_initializer=zeros_initializer(), biases_regularizer=None, reuse=None,
                            variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """A transposed 2-D convolution in scope `Conv2d_transpose`: weights [kh, kw, num_outputs, in]."""
    with variable_scope(scope, "Conv2d_transpose", [inputs], reuse=reuse) as sc:
        if data_format not in (DATA_FORMAT_NCHW, DATA_FORMAT_NHWC):
            raise ValueError("data_format has to be either NCHW or NHWC.")
        inputs = convert_to_tensor(inputs)
        df = "channels_first" if data_format.startswith("NC") else "channels_last"
        layer = Conv2DTranspose(num_outputs, kernel_size, strides=stride, padding=padding, data_format=df,
                                activation=None, use_bias=normalizer_fn is None and biases_initializer is not None,
                                kernel_initializer=weights_initializer, bias_initializer=biases_initializer,
                                kernel_regularizer=weights_regularizer, bias_regularizer=biases_regularizer,
                                trainable=trainable, name=sc.name, dtype=inputs.dtype, _scope=sc, _reuse=reuse,
                                _getter=_model_getter)
        outputs = layer.apply(inputs)
        return _finish(layer, outputs, sc, normalizer_fn, normalizer_params, activation_fn, variables_collections,
                       outputs_collections)


conv2d_transpose = convolution2d_transpose


@add_arg_scope
def separable_convolution2d(inputs, num_outputs, kernel_size, depth_multiplier=1, stride=1, padding="SAME",
                            data_format=DATA_FORMAT_NHWC, rate=1, activation_fn=nn.relu, normalizer_fn=None,
                            normalizer_params=None, weights_initializer=xavier_initializer(),
                            pointwise_initializer=None, weights_regularizer=None,
                            biases_initializer=zeros_initializer(), biases_regularizer=None, reuse=None,
                            variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """A depthwise 2-D convolution, then (unless num_outputs is None) a 1x1 pointwise one, in scope
    `SeparableConv2d`: depthwise_weights [kh, kw, in, depth_multiplier], pointwise_weights
    [1, 1, in·depth_multiplier, num_outputs], biases."""
    if data_format not in (DATA_FORMAT_NCHW, DATA_FORMAT_NHWC):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with variable_scope(scope, "SeparableConv2d", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        pointwise_initializer = pointwise_initializer if pointwise_initializer is not None else weights_initializer
        df = "channels_first" if data_format.startswith("NC") else "channels_last"
        if num_outputs is not None:
            layer = SeparableConv2D(num_outputs, kernel_size, strides=stride, padding=padding, data_format=df,
                                    dilation_rate=normalize_tuple(rate, 2, "rate"), depth_multiplier=depth_multiplier,
                                    use_bias=normalizer_fn is None and biases_initializer is not None,
                                    depthwise_initializer=weights_initializer,
                                    pointwise_initializer=pointwise_initializer, bias_initializer=biases_initializer,
                                    depthwise_regularizer=weights_regularizer,
                                    pointwise_regularizer=weights_regularizer, bias_regularizer=biases_regularizer,
                                    trainable=trainable, name=sc.name, dtype=inputs.dtype, _scope=sc, _reuse=reuse,
                                    _getter=_model_getter)
            outputs = layer.apply(inputs)
            _add_variable_to_collections(layer.depthwise_kernel, variables_collections, "weights")
            _add_variable_to_collections(layer.pointwise_kernel, variables_collections, "weights")
            if layer.bias is not None:
                _add_variable_to_collections(layer.bias, variables_collections, "biases")
            if normalizer_fn is not None:
                outputs = normalizer_fn(outputs, **(normalizer_params or {}))
        else:
            kh, kw = normalize_tuple(kernel_size, 2, "kernel_size")
            sh, sw = normalize_tuple(stride, 2, "stride")
            channels = inputs.shape[1 if df == "channels_first" else -1].value if inputs.shape.ndims == 4 else None
            if channels is None:
                raise ValueError(f"separable_conv2d: inputs {inputs.name} need rank 4 and a known channel "
                                 f"dimension, got shape {inputs.shape}")
            depthwise = model_variable("depthwise_weights", shape=[kh, kw, channels, depth_multiplier],
                                       dtype=inputs.dtype, initializer=weights_initializer,
                                       regularizer=weights_regularizer, trainable=trainable,
                                       collections=_variable_collections(variables_collections, "weights"))
            strides = [1, 1, sh, sw] if df == "channels_first" else [1, sh, sw, 1]
            outputs = nn.depthwise_conv2d(inputs, depthwise, strides, padding, rate=normalize_tuple(rate, 2, "rate"),
                                          data_format=data_format)
            if normalizer_fn is not None:
                outputs = normalizer_fn(outputs, **(normalizer_params or {}))
            elif biases_initializer is not None:
                biases = model_variable("biases", shape=[channels * depth_multiplier], dtype=inputs.dtype,
                                        initializer=biases_initializer, regularizer=biases_regularizer,
                                        trainable=trainable,
                                        collections=_variable_collections(variables_collections, "biases"))
                outputs = nn.bias_add(outputs, biases, data_format=data_format)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


separable_conv2d = separable_convolution2d


def _pool(op, default_name, inputs, kernel_size, stride, padding, data_format, outputs_collections, scope):
    if data_format not in (DATA_FORMAT_NCHW, DATA_FORMAT_NHWC):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with name_scope(scope, default_name, [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        kh, kw = normalize_tuple(kernel_size, 2, "kernel_size")
        sh, sw = normalize_tuple(stride, 2, "strides")
        if data_format == DATA_FORMAT_NCHW:
            ksize, strides = [1, 1, kh, kw], [1, 1, sh, sw]
        else:
            ksize, strides = [1, kh, kw, 1], [1, sh, sw, 1]
        outputs = op(inputs, ksize=ksize, strides=strides, padding=padding.upper(), data_format=data_format)
        return collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format=DATA_FORMAT_NHWC, outputs_collections=None,
               scope=None):
    """2-D max pooling in name scope `MaxPool2D` (kernel_size/stride: an int or a pair)."""
    return _pool(nn.max_pool, "MaxPool2D", inputs, kernel_size, stride, padding, data_format, outputs_collections,
                 scope)


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format=DATA_FORMAT_NHWC, outputs_collections=None,
               scope=None):
    """2-D average pooling in name scope `AvgPool2D` (kernel_size/stride: an int or a pair)."""
    return _pool(nn.avg_pool, "AvgPool2D", inputs, kernel_size, stride, padding, data_format, outputs_collections,
                 scope)


@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    """[batch, ...] -> [batch, k] in name scope `Flatten`."""
    with name_scope(scope, "Flatten", [inputs]) as sc:
        outputs = Flatten().apply(convert_to_tensor(inputs))
        return collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None, scope=None,
            seed=None):
    """Keeps each element with probability keep_prob (scaled by 1/keep_prob) when is_training (a
    Python bool or a bool tensor); the inputs otherwise. Variable scope `Dropout`."""
    with variable_scope(scope, "Dropout", [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        layer = Dropout(rate=1 - keep_prob, noise_shape=noise_shape, seed=seed, name=sc.name, _scope=sc)
        outputs = layer.apply(inputs, training=is_training)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def bias_add(inputs, activation_fn=None, initializer=zeros_initializer(), regularizer=None, reuse=None,
             variables_collections=None, outputs_collections=None, trainable=True, data_format=DATA_FORMAT_NHWC,
             scope=None):
    """inputs + biases (a model variable `BiasAdd/biases` over the channel axis)."""
    if data_format not in (DATA_FORMAT_NCHW, DATA_FORMAT_NHWC):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with variable_scope(scope, "BiasAdd", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError("Dims of shape must be known but is None")
        if rank != 4 and data_format == DATA_FORMAT_NCHW:
            raise ValueError("Data format NCHW only supports 4D Tensor")
        channels = inputs.shape[1 if data_format == DATA_FORMAT_NCHW else -1].value
        if channels is None:
            raise ValueError("`C` dimension must be known but is None")
        biases = model_variable("biases", shape=[channels], dtype=inputs.dtype, initializer=initializer,
                                regularizer=regularizer, collections=_variable_collections(variables_collections,
                                                                                           "biases"),
                                trainable=trainable)
        outputs = nn.bias_add(inputs, biases, data_format=data_format)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
               param_initializers=None, param_regularizers=None, updates_collections=GraphKeys.UPDATE_OPS,
               is_training=True, reuse=None, variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format=DATA_FORMAT_NHWC, zero_debias_moving_mean=False,
               scope=None, renorm=False, renorm_clipping=None, renorm_decay=0.99, adjustment=None):
    """Batch normalization over all axes but the channels, in variable scope `BatchNorm`.

    Variables (MODEL_VARIABLES): beta (center), gamma (scale), moving_mean, moving_variance.
    Training (is_training true or a bool tensor) makes the moving-average updates
    (moving -= (1 - decay)(moving - batch statistic)) and adds them to `updates_collections`; with
    updates_collections=None the output waits for them instead. As TF 1.15, the moving variance
    gets Bessel's correction where TF takes its fused kernel (rank 4 with fused not False, or rank
    2 / custom update collections with fused not False).
    """
    for what, given in (("batch_weights", batch_weights is not None), ("renorm", renorm),
                        ("zero_debias_moving_mean", zero_debias_moving_mean), ("adjustment", adjustment)):
        if given:
            raise NotImplementedError(f"batch_norm: dflow does not support {what} yet")
    if data_format not in (DATA_FORMAT_NCHW, DATA_FORMAT_NHWC):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    inputs = convert_to_tensor(inputs)
    rank = inputs.shape.ndims
    if rank is None:
        raise ValueError(f"Inputs {inputs.name} has undefined rank.")
    fused = fused is None or bool(fused)
    fused_fn = fused and rank in (2, 4) and (rank == 2 or updates_collections != GraphKeys.UPDATE_OPS)
    core_layer = not fused_fn and updates_collections == GraphKeys.UPDATE_OPS
    bessel = fused_fn or (core_layer and fused and rank == 4)
    with variable_scope(scope, "BatchNorm", [inputs], reuse=reuse) as sc:
        axis = 1 if data_format == DATA_FORMAT_NCHW else rank - 1
        channels = inputs.shape[axis].value
        if channels is None:
            raise ValueError(f"Inputs {inputs.name} has undefined channels dimension {inputs.shape[axis]}.")
        inits, regs = param_initializers or {}, param_regularizers or {}

        def param(name, default_init, is_trainable):
            return model_variable(name, shape=[channels], dtype=inputs.dtype, initializer=inits.get(name, default_init),
                                  regularizer=regs.get(name) if is_trainable else None,
                                  collections=_variable_collections(variables_collections, name),
                                  trainable=trainable and is_trainable)

        beta = gamma = None
        order = ["gamma", "beta"] if core_layer else ["beta", "gamma"]  # TF 1.15 makes them in this order
        for name in order:
            if name == "beta" and center:
                beta = param("beta", zeros_initializer(), True)
            if name == "gamma" and scale:
                gamma = param("gamma", ones_initializer(), True)
        moving_mean = param("moving_mean", zeros_initializer(), False)
        moving_variance = param("moving_variance", ones_initializer(), False)

        if constant_value(is_training) is False:
            mean, variance = moving_mean, moving_variance
        else:
            reduction = [i for i in range(rank) if i != axis]
            batch_mean, batch_var, update_var = batch_moments(inputs, reduction, bessel)

            def updates():
                return (moving_average_update(moving_mean, batch_mean, decay),
                        moving_average_update(moving_variance, update_var, decay))

            def moving():
                return identity(moving_mean), identity(moving_variance)

            if updates_collections is None:
                def forced():
                    with control_dependencies(list(updates())):
                        return identity(batch_mean), identity(batch_var)

                mean, variance = smart_cond(is_training, forced, moving)
            else:
                update_mean, update_variance = smart_cond(is_training, updates, moving)
                collections = [updates_collections] if isinstance(updates_collections, str) else updates_collections
                add_to_collections(collections, update_mean)
                add_to_collections(collections, update_variance)
                mean, variance = smart_cond(is_training, lambda: (batch_mean, batch_var), moving)
        outputs = normalize(inputs, mean, variance, beta, gamma, epsilon, [axis])
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None, variables_collections=None,
               outputs_collections=None, trainable=True, begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """Normalizes each example over axes begin_norm_axis.. (mean 0, variance 1, epsilon 1e-12), then
    gamma · x + beta with parameters over axes begin_params_axis.. (variable scope `LayerNorm`).

    ValueError for an input of unknown rank or parameter axes of unknown size.
    """
    with variable_scope(scope, "LayerNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        begin_norm_axis = begin_norm_axis % rank if begin_norm_axis < 0 else begin_norm_axis
        begin_params_axis = begin_params_axis % rank if begin_params_axis < 0 else begin_params_axis
        if begin_norm_axis >= rank:
            raise ValueError(f"begin_norm_axis ({begin_norm_axis}) must be < rank(inputs) ({rank})")
        params_shape = inputs.shape.as_list()[begin_params_axis:]
        if any(d is None for d in params_shape):
            raise ValueError(f"Inputs {inputs.name}: incomplete shape {inputs.shape} from axis {begin_params_axis}")
        beta = gamma = None
        if center:
            beta = model_variable("beta", shape=params_shape, dtype=inputs.dtype, initializer=zeros_initializer(),
                                  collections=_variable_collections(variables_collections, "beta"),
                                  trainable=trainable)
        if scale:
            gamma = model_variable("gamma", shape=params_shape, dtype=inputs.dtype, initializer=ones_initializer(),
                                   collections=_variable_collections(variables_collections, "gamma"),
                                   trainable=trainable)
        mean, variance = nn.moments(inputs, list(range(begin_norm_axis, rank)), keep_dims=True)
        outputs = nn.batch_normalization(inputs, mean, variance, offset=beta, scale=gamma, variance_epsilon=1e-12)
        outputs.set_shape(inputs.shape)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0, outputs_collections=None, scope=None):
    """one_hot(labels, num_classes) in name scope `OneHotEncoding` (int32 labels become int64)."""
    with name_scope(scope, "OneHotEncoding", [labels, num_classes]) as sc:
        labels = convert_to_tensor(labels)
        if labels.dtype == dtypes.int32:
            labels = cast(labels, dtypes.int64)
        outputs = one_hot(labels, num_classes, on_value=on_value, off_value=off_value)
        return collect_named_outputs(outputs_collections, sc, outputs)


def softmax(logits, scope=None):
    """Softmax over the last axis of N-D logits (variable scope `softmax`)."""
    with variable_scope(scope, "softmax", [logits]):
        logits = convert_to_tensor(logits)
        return nn.softmax(logits)


def repeat(inputs, repetitions, layer, *args, **kwargs):
    """Applies `layer` `repetitions` times, in scope `scope/scope_1`, `scope/scope_2`, ...
    (scope defaults to the layer's name, under a `Repeat` scope)."""
    scope = kwargs.pop("scope", None)
    with variable_scope(scope, "Repeat", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope if scope is not None else _layer_name(layer, "repeat")
        for i in range(repetitions):
            kwargs["scope"] = f"{scope}_{i + 1}"
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def stack(inputs, layer, stack_args, **kwargs):
    """Applies `layer` once per entry of `stack_args` (its positional arguments), in scopes
    `scope/scope_1`, ... (scope defaults to the layer's name, under a `Stack` scope)."""
    scope = kwargs.pop("scope", None)
    if not isinstance(stack_args, (list, tuple)):
        raise ValueError("stack_args need to be a list or tuple")
    with variable_scope(scope, "Stack", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope if scope is not None else _layer_name(layer, "stack")
        for i, layer_args in enumerate(stack_args):
            kwargs["scope"] = f"{scope}_{i + 1}"
            if not isinstance(layer_args, (list, tuple)):
                layer_args = [layer_args]
            outputs = layer(outputs, *layer_args, **kwargs)
        return outputs


def _layer_name(layer, default):
    if hasattr(layer, "__name__"):
        return layer.__name__
    if hasattr(layer, "func") and hasattr(layer.func, "__name__"):  # a functools.partial
        return layer.func.__name__
    return default


__getattr__ = missing_attribute(__name__)
