"""`BatchNormalization` and `batch_normalization` (TF1's `tf.layers.normalization`).

Training normalizes with the batch's mean and (biased) variance and makes two update ops,
`moving = moving - (moving - batch statistic) · (1 - momentum)`, added to UPDATE_OPS (the TF1
idiom: `with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)): train_op = ...`).
Inference uses the moving statistics. `training` is a Python bool or a bool tensor (a `cond`).

Where TF1 would take its fused kernel (4-D inputs normalized along axis 1 or 3, `fused` not False)
the moving variance is fed the batch variance with Bessel's correction, n/(n-1), as TF1's
FusedBatchNorm reports it; elsewhere the biased one. dflow computes both paths with `nn.moments`.
"""

from __future__ import annotations

from .. import nn
from ..graph import dtypes
from ..graph.graph import name_scope
from ..kernels.array_ops import identity, reshape, size
from ..kernels.common import convert_to_tensor
from ..kernels.math_ops import cast, multiply, subtract, truediv
from ..kernels.state_ops import assign_sub
from ..state.initializers import ones_initializer, zeros_initializer
from .base import InputSpec, Layer, input_shape_of
from .utils import constant_value, smart_cond

__all__ = ["BatchNormalization", "BatchNorm", "batch_normalization", "moving_average_update", "batch_moments"]


def moving_average_update(variable, value, momentum):
    """variable -= (variable - value) · (1 - momentum), in a name scope `AssignMovingAvg` (TF1's)."""
    with name_scope(None, "AssignMovingAvg", [variable, value]) as scope:
        decay = convert_to_tensor(1.0 - momentum, name="decay")
        if decay.dtype != variable.dtype:
            decay = cast(decay, variable.dtype)
        delta = multiply(subtract(variable, cast(value, variable.dtype)), decay)
        return assign_sub(variable, delta, name=scope)


def batch_moments(inputs, reduction_axes, bessel):
    """(mean, variance, variance for the moving average) over `reduction_axes`, in float32 for
    float16 inputs; the third is variance · n/(n - 1) when `bessel`, else the variance itself."""
    x = cast(inputs, dtypes.float32) if inputs.dtype == dtypes.float16 else inputs
    mean, variance = nn.moments(x, reduction_axes)
    if not bessel:
        return mean, variance, variance
    dims = inputs.shape.as_list() if inputs.shape.ndims is not None else None
    if dims is not None and all(dims[a] is not None for a in reduction_axes):
        n = 1
        for a in reduction_axes:
            n *= dims[a]
        factor = convert_to_tensor(n / max(n - 1, 1) if n > 1 else float("inf"), dtype=variance.dtype)
    else:
        n = truediv(cast(size(x), variance.dtype), cast(size(variance), variance.dtype))
        factor = truediv(n, subtract(n, convert_to_tensor(1.0, dtype=variance.dtype)))
    return mean, variance, multiply(variance, factor)


def _axes(axis, ndims):
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    out = []
    for a in axes:
        if not isinstance(a, int):
            raise TypeError(f"axis must be an int or a list of ints, got {axis!r}")
        b = a + ndims if a < 0 else a
        if not 0 <= b < ndims:
            raise ValueError(f"Invalid axis: {a} (inputs of rank {ndims})")
        out.append(b)
    if len(set(out)) != len(out):
        raise ValueError(f"Duplicate axis: {axis!r}")
    return sorted(out)


class BatchNormalization(Layer):
    """Batch normalization along `axis` (the channels); variables gamma, beta (trainable),
    moving_mean, moving_variance (not trainable, global)."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=zeros_initializer(), gamma_initializer=ones_initializer(),
                 moving_mean_initializer=zeros_initializer(), moving_variance_initializer=ones_initializer(),
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None, trainable=True,
                 virtual_batch_size=None, adjustment=None, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        for what, given in (("renorm", renorm), ("virtual_batch_size", virtual_batch_size),
                            ("adjustment", adjustment)):
            if given:
                raise NotImplementedError(f"BatchNormalization: dflow does not support {what} yet")
        self.axis = axis
        self.momentum = momentum
        self.epsilon = epsilon
        self.center, self.scale = center, scale
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.fused = fused
        self.beta = self.gamma = None

    def build(self, input_shape):
        input_shape = input_shape_of(input_shape)
        ndims = input_shape.ndims
        if ndims is None:
            raise ValueError(f"Input has undefined rank: {input_shape}")
        self._axes = _axes(self.axis, ndims)
        for a in self._axes:
            if input_shape[a].value is None:
                raise ValueError(f"Input has undefined `axis` dimension. Received input with shape "
                                 f"{input_shape.as_list()}. Axis value: {self.axis}")
        self.input_spec = InputSpec(ndim=ndims, axes={a: input_shape[a].value for a in self._axes})
        self.fused = self.fused is not False and ndims == 4 and self._axes in ([1], [3])
        param_shape = [input_shape[a].value for a in self._axes]
        dtype = self.dtype
        param_dtype = dtypes.float32 if dtype is None or dtype == dtypes.float16 else dtype
        if self.scale:
            self.gamma = self.add_weight("gamma", param_shape, dtype=param_dtype, initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint,
                                         trainable=True)
        if self.center:
            self.beta = self.add_weight("beta", param_shape, dtype=param_dtype, initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint,
                                        trainable=True)
        self.moving_mean = self.add_weight("moving_mean", param_shape, dtype=param_dtype,
                                           initializer=self.moving_mean_initializer, trainable=False)
        self.moving_variance = self.add_weight("moving_variance", param_shape, dtype=param_dtype,
                                               initializer=self.moving_variance_initializer, trainable=False)
        self.built = True

    def call(self, inputs, training=False):
        ndims = inputs.shape.ndims
        reduction = [i for i in range(ndims) if i not in self._axes]
        training_value = constant_value(training)
        if training_value is False:
            mean, variance = self.moving_mean, self.moving_variance
        else:
            batch_mean, batch_var, update_var = batch_moments(inputs, reduction, self.fused)
            mean = smart_cond(training, lambda: batch_mean, lambda: identity(self.moving_mean))
            variance = smart_cond(training, lambda: batch_var, lambda: identity(self.moving_variance))
            self.add_update([self._update(self.moving_mean, batch_mean, training),
                             self._update(self.moving_variance, update_var, training)])
        return normalize(inputs, mean, variance, self.beta, self.gamma, self.epsilon, self._axes)

    def _update(self, variable, value, training):
        return smart_cond(training, lambda: moving_average_update(variable, value, self.momentum),
                          lambda: identity(variable))

    def compute_output_shape(self, input_shape):
        return input_shape_of(input_shape)


def normalize(inputs, mean, variance, beta, gamma, epsilon, axes):
    """(inputs - mean) · gamma / sqrt(variance + epsilon) + beta with the [C] statistics and
    parameters reshaped to broadcast along `axes` of `inputs` (beta/gamma may be None)."""
    ndims = inputs.shape.ndims
    if axes != [ndims - 1]:
        shape = [1] * ndims
        for a in axes:
            shape[a] = inputs.shape[a].value
        mean, variance = reshape(mean, shape), reshape(variance, shape)
        beta = reshape(beta, shape) if beta is not None else None
        gamma = reshape(gamma, shape) if gamma is not None else None
    out = nn.batch_normalization(inputs, mean, variance, beta, gamma, epsilon)
    out.set_shape(inputs.shape)
    return out


BatchNorm = BatchNormalization


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=zeros_initializer(), gamma_initializer=ones_initializer(),
                        moving_mean_initializer=zeros_initializer(), moving_variance_initializer=ones_initializer(),
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                        training=False, trainable=True, name=None, reuse=None, renorm=False, renorm_clipping=None,
                        renorm_momentum=0.99, fused=None, virtual_batch_size=None, adjustment=None):
    """The functional form of `BatchNormalization`; with `training` true (or a tensor) the moving
    statistics' update ops go to UPDATE_OPS."""
    layer = BatchNormalization(axis, momentum, epsilon, center, scale, beta_initializer, gamma_initializer,
                               moving_mean_initializer, moving_variance_initializer, beta_regularizer,
                               gamma_regularizer, beta_constraint, gamma_constraint, renorm, renorm_clipping,
                               renorm_momentum, fused, trainable, virtual_batch_size, adjustment, name,
                               _scope=name, _reuse=reuse)
    return layer.apply(inputs, training=training)
