"""The backend's tensor functions over dflow's ops: reductions, elementwise math, shapes, the
activations and cross-entropies with Keras's clipping, random draws and the small helpers."""

from __future__ import annotations

import numpy as np

from ... import nn
from ...eager.context import executing_eagerly
from ...graph.dtypes import as_dtype
from ...kernels import (
    array_ops,
    creation_ops,
    cumulative_ops,
    functional_ops,
    manip_ops,
    math_ops,
    random_ops,
    reduction_ops,
)
from ...kernels.check_ops import Print
from ...kernels.common import convert_to_tensor
from ...kernels.control_flow_ops import cond
from ...kernels.gather_ops import gather as _gather
from ...kernels.gather_ops import one_hot as _one_hot
from ...kernels.linalg_ops import matmul, tensordot
from ...kernels.sparse_ops import SparseTensor, sparse_tensor_to_dense
from ...kernels.state_ops import assign, assign_add, assign_sub
from ...state.variables import Variable
from .session import epsilon, floatx, learning_phase, track_variable, variable

__all__ = ["zeros", "ones", "zeros_like", "ones_like", "eye", "cast", "sum", "mean", "max", "min", "prod",
           "std", "var", "any", "all", "argmax", "argmin", "square", "sqrt", "abs", "exp", "log", "pow",
           "sign", "round", "clip", "maximum", "minimum", "equal", "not_equal", "greater", "greater_equal",
           "less", "less_equal", "dot", "batch_dot", "transpose", "reshape", "flatten", "batch_flatten",
           "expand_dims", "squeeze", "concatenate", "stack", "permute_dimensions", "repeat", "tile", "gather",
           "relu", "elu", "sigmoid", "hard_sigmoid", "tanh", "softmax", "softplus", "softsign",
           "categorical_crossentropy", "sparse_categorical_crossentropy", "binary_crossentropy",
           "l2_normalize", "dropout", "random_normal", "random_uniform", "switch", "in_train_phase",
           "in_test_phase", "update", "update_add", "update_sub", "moving_average_update", "backend",
           "cast_to_floatx", "is_sparse", "to_dense", "identity", "sin", "cos", "arange", "cumsum", "cumprod",
           "map_fn", "foldl", "foldr", "in_top_k", "one_hot", "reverse", "print_tensor", "truncated_normal",
           "random_binomial", "random_normal_variable", "random_uniform_variable", "repeat_elements"]

# ---- math (Keras's axis/keepdims names over dflow's ops) ---------------------------------------
def zeros(shape, dtype=None, name=None):
    return variable(np.zeros(shape), dtype=dtype, name=name)


def ones(shape, dtype=None, name=None):
    return variable(np.ones(shape), dtype=dtype, name=name)


def eye(size, dtype=None, name=None):
    return variable(np.eye(size), dtype=dtype, name=name)


def zeros_like(x, dtype=None, name=None):
    return creation_ops.zeros_like(x, dtype=dtype, name=name)


def ones_like(x, dtype=None, name=None):
    return creation_ops.ones_like(x, dtype=dtype, name=name)


def cast(x, dtype):
    return math_ops.cast(x, as_dtype(dtype))


def _reducer(fn):
    def reduce(x, axis=None, keepdims=False):
        return fn(x, axis=axis, keepdims=keepdims)
    reduce.__name__ = fn.__name__
    return reduce


sum = _reducer(reduction_ops.reduce_sum)  # noqa: A001 - Keras's names
mean = _reducer(reduction_ops.reduce_mean)
max = _reducer(reduction_ops.reduce_max)  # noqa: A001
min = _reducer(reduction_ops.reduce_min)  # noqa: A001
prod = _reducer(reduction_ops.reduce_prod)
std = _reducer(reduction_ops.reduce_std)
var = _reducer(reduction_ops.reduce_variance)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return reduction_ops.reduce_any(math_ops.cast(x, "bool"), axis=axis, keepdims=keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    return reduction_ops.reduce_all(math_ops.cast(x, "bool"), axis=axis, keepdims=keepdims)


def argmax(x, axis=-1):
    return reduction_ops.argmax(x, axis)


def argmin(x, axis=-1):
    return reduction_ops.argmin(x, axis)


square, sqrt, abs, exp, log, sign, round = (  # noqa: A001
    math_ops.square, math_ops.sqrt, math_ops.abs, math_ops.exp, math_ops.log, math_ops.sign, math_ops.round)
maximum, minimum, equal, not_equal = math_ops.maximum, math_ops.minimum, math_ops.equal, math_ops.not_equal
greater, greater_equal, less, less_equal = (math_ops.greater, math_ops.greater_equal, math_ops.less,
                                            math_ops.less_equal)


def pow(x, a):  # noqa: A001
    return math_ops.pow(x, a)


def clip(x, min_value, max_value):
    if max_value is not None and min_value is not None and max_value < min_value:
        max_value = min_value
    return math_ops.clip_by_value(x, min_value, max_value)


def dot(x, y):
    """Keras's dot: matmul, contracting x's last axis with y's second-to-last for rank > 2."""
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    if x.shape.ndims is not None and y.shape.ndims is not None and (x.shape.ndims > 2 or y.shape.ndims > 2):
        return tensordot(x, y, [[x.shape.ndims - 1], [y.shape.ndims - 2 if y.shape.ndims > 1 else 0]])
    return matmul(x, y)


def batch_dot(x, y, axes=None):
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    if axes is None or tuple(axes if isinstance(axes, (list, tuple)) else (axes, axes)) == (x.shape.ndims - 1,
                                                                                       y.shape.ndims - 2):
        return matmul(x, y)
    axes = axes if isinstance(axes, (list, tuple)) else (axes, axes)
    if x.shape.ndims == 2 and y.shape.ndims == 2:
        return reduction_ops.reduce_sum(x * y, axis=axes[0], keepdims=True)
    return matmul(x, y, adjoint_a=axes[0] == 1, adjoint_b=axes[1] == y.shape.ndims - 1)


def transpose(x):
    return manip_ops.transpose(x)


def reshape(x, shape):
    return array_ops.reshape(x, shape)


def permute_dimensions(x, pattern):
    return manip_ops.transpose(x, perm=list(pattern))


def flatten(x):
    return array_ops.reshape(x, [-1])


def batch_flatten(x):
    return array_ops.reshape(x, array_ops.stack([array_ops.shape(x)[0], -1]))


def expand_dims(x, axis=-1):
    return manip_ops.expand_dims(x, axis)


def squeeze(x, axis):
    return manip_ops.squeeze(x, [axis])


def concatenate(tensors, axis=-1):
    return manip_ops.concat(list(tensors), axis)


def stack(x, axis=0):
    return array_ops.stack(x, axis=axis)


def repeat(x, n):
    """[batch, dim] -> [batch, n, dim]."""
    return manip_ops.tile(manip_ops.expand_dims(x, 1), [1, n, 1])


def tile(x, n):
    return manip_ops.tile(x, [n] if isinstance(n, int) else n)


def gather(reference, indices):
    return _gather(reference, indices)


def relu(x, alpha=0.0, max_value=None, threshold=0):
    """Keras's relu: max(x, 0), leaky below `threshold` by `alpha`, capped at `max_value`."""
    x = convert_to_tensor(x)
    if alpha != 0.0:
        negative = nn.relu(-x + threshold) if threshold != 0 else nn.relu(-x)
    if threshold != 0:
        y = x * math_ops.cast(math_ops.greater(x, threshold), x.dtype)
    else:
        y = nn.relu(x)
    if max_value is not None:
        y = math_ops.clip_by_value(y, 0.0, max_value)
    if alpha != 0.0:
        y = y - alpha * negative
    return y


def elu(x, alpha=1.0):
    y = nn.elu(x)
    return y if alpha == 1 else math_ops.where(math_ops.greater(x, 0.0), y, alpha * y)


sigmoid, tanh, softplus, softsign = nn.sigmoid, nn.tanh, nn.softplus, nn.softsign


def hard_sigmoid(x):
    return math_ops.clip_by_value(0.2 * convert_to_tensor(x) + 0.5, 0.0, 1.0)


def softmax(x, axis=-1):
    return nn.softmax(x, axis=axis)


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross entropy of one-hot `target` and probabilities `output` (logits when from_logits),
    per sample; probabilities are renormalized and clipped to [eps, 1 - eps] as Keras does."""
    if from_logits:
        return nn.softmax_cross_entropy_with_logits_v2(labels=target, logits=output, axis=axis)
    output = convert_to_tensor(output)
    output = output / reduction_ops.reduce_sum(output, axis=axis, keepdims=True)
    output = math_ops.clip_by_value(output, epsilon(), 1.0 - epsilon())
    return -reduction_ops.reduce_sum(math_ops.cast(target, output.dtype) * math_ops.log(output), axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross entropy of integer `target` and probabilities `output` (logits when from_logits)."""
    output = convert_to_tensor(output)
    if not from_logits:
        output = math_ops.log(math_ops.clip_by_value(output, epsilon(), 1.0 - epsilon()))
    target = convert_to_tensor(target)
    if target.shape.ndims is not None and output.shape.ndims is not None and \
            target.shape.ndims == output.shape.ndims:
        target = manip_ops.squeeze(target, [-1])
    return nn.sparse_softmax_cross_entropy_with_logits(labels=math_ops.cast(target, "int64"), logits=output)


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise binary cross entropy (probabilities clipped to [eps, 1 - eps] unless logits)."""
    output = convert_to_tensor(output)
    target = math_ops.cast(target, output.dtype)
    if from_logits:
        return nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    output = math_ops.clip_by_value(output, epsilon(), 1.0 - epsilon())
    return -(target * math_ops.log(output + epsilon()) + (1.0 - target) * math_ops.log(1.0 - output + epsilon()))


def l2_normalize(x, axis=None):
    return nn.l2_normalize(x, axis=axis)


def dropout(x, level, noise_shape=None, seed=None):
    return nn.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return random_ops.random_normal(shape, mean=mean, stddev=stddev, dtype=as_dtype(dtype or floatx()), seed=seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return random_ops.random_uniform(shape, minval=minval, maxval=maxval, dtype=as_dtype(dtype or floatx()),
                                     seed=seed)


def switch(condition, then_expression, else_expression):
    """`then` where the (scalar) condition holds, else `else`; either may be a callable."""
    then_fn = then_expression if callable(then_expression) else (lambda: then_expression)
    else_fn = else_expression if callable(else_expression) else (lambda: else_expression)
    if isinstance(condition, (bool, int, np.bool_)):
        return then_fn() if condition else else_fn()
    return cond(math_ops.cast(condition, "bool"), then_fn, else_fn)


def in_train_phase(x, alt, training=None):
    training = learning_phase() if training is None else training
    return switch(training, x, alt)


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


def update(x, new_x):
    return assign(x, new_x)


def update_add(x, increment):
    return assign_add(x, increment)


def update_sub(x, decrement):
    return assign_sub(x, decrement)


def moving_average_update(x, value, momentum):
    """x <- x * momentum + value * (1 - momentum) (batch-norm's moving statistics)."""
    return assign_sub(x, (x - math_ops.cast(value, x.dtype)) * (1.0 - momentum))


# ---- the rest of TF 1.15's tf.keras.backend ----------------------------------------------------------
def backend():
    """The name of the backend Keras runs on: 'tensorflow', as TF's tf.keras says."""
    return "tensorflow"


def cast_to_floatx(x):
    """A numpy array of `x` in floatx() (Keras's helper for numpy values)."""
    return np.asarray(x, dtype=floatx())


def is_sparse(tensor):
    return isinstance(tensor, SparseTensor)


def to_dense(tensor):
    return sparse_tensor_to_dense(tensor) if is_sparse(tensor) else tensor


def identity(x, name=None):
    return array_ops.identity(x, name=name)


sin, cos = math_ops.sin, math_ops.cos


def arange(start, stop=None, step=1, dtype="int32"):
    """range(start, stop, step) as a 1-D tensor (arange(-n) is empty, as Keras)."""
    if stop is None and isinstance(start, (int, float)) and start < 0:
        start = 0
    result = creation_ops.range(start, limit=stop, delta=step, name="arange")
    return result if dtype == "int32" else cast(result, dtype)


def cumsum(x, axis=0):
    return reduction_ops.cumsum(x, axis=axis)


def cumprod(x, axis=0):
    return cumulative_ops.cumprod(x, axis=axis)


def map_fn(fn, elems, name=None, dtype=None):
    return functional_ops.map_fn(fn, elems, name=name, dtype=dtype)


def foldl(fn, elems, initializer=None, name=None):
    return functional_ops.foldl(fn, elems, initializer=initializer, name=name)


def foldr(fn, elems, initializer=None, name=None):
    return functional_ops.foldr(fn, elems, initializer=initializer, name=name)


def in_top_k(predictions, targets, k):
    return nn.in_top_k(predictions, targets, k)


def one_hot(indices, num_classes):
    """[..., num_classes] one-hot rows of integer `indices` (float32)."""
    return _one_hot(indices, depth=num_classes, axis=-1)


def reverse(x, axes):
    return manip_ops.reverse(x, [axes] if isinstance(axes, int) else list(axes))


def print_tensor(x, message=""):
    """`x`, printing `message` and its value whenever it is computed (eagerly: printed now)."""
    if executing_eagerly():
        print(message, x.numpy() if hasattr(x, "numpy") else x)
        return x
    return Print(x, [x], message)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    if seed is None:
        seed = np.random.randint(10e6)
    return random_ops.truncated_normal(shape, mean=mean, stddev=stddev, dtype=as_dtype(dtype or floatx()),
                                       seed=seed)


def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """1 with probability `p`, else 0 (Keras: uniform draws <= p)."""
    dtype = as_dtype(dtype or floatx())
    if seed is None:
        seed = np.random.randint(10e6)
    draws = random_ops.random_uniform(shape, dtype=dtype, seed=seed)
    return math_ops.cast(math_ops.less_equal(draws, p), dtype)


def _random_variable(draw, dtype, name):
    v = Variable(draw, name=name, dtype=as_dtype(dtype or floatx()))
    track_variable(v)
    return v


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """A (Keras-tracked) variable drawn from N(mean, scale**2)."""
    if seed is None:
        seed = np.random.randint(10e8)
    return _random_variable(random_normal(shape, mean=mean, stddev=scale, dtype=dtype, seed=seed), dtype, name)


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """A (Keras-tracked) variable drawn from U(low, high)."""
    if seed is None:
        seed = np.random.randint(10e8)
    return _random_variable(random_uniform(shape, minval=low, maxval=high, dtype=dtype, seed=seed), dtype, name)


def repeat_elements(x, rep, axis):
    """Each slice of `x` along `axis` repeated `rep` times (np.repeat); the axis must be static."""
    x = convert_to_tensor(x)
    x_shape = x.shape.as_list()
    if x_shape[axis] is not None:
        splits = manip_ops.split(x, x_shape[axis], axis=axis)
        return manip_ops.concat([s for s in splits for _ in range(rep)], axis)
    # unknown length: tile a new axis after `axis`, then merge it into `axis`
    axis = axis % len(x_shape)
    tiled = manip_ops.tile(manip_ops.expand_dims(x, axis + 1), [1] * (axis + 1) + [rep] + [1] * (len(x_shape) - axis - 1))
    dims = array_ops.shape(x)
    new_shape = array_ops.stack([dims[i] if i != axis else dims[i] * rep for i in range(len(x_shape))])
    return array_ops.reshape(tiled, new_shape)
