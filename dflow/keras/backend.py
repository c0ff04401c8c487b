"""`tf.keras.backend` as TF 1.x shipped it: the session Keras runs in, the learning phase, layer
name counters, and the backend's tensor functions over dflow's ops.

Graph mode: `get_session()` is the default session when one is entered (`with sess.as_default()`)
or `set_session`'s, else one Keras makes for the default graph; either way the variables Keras
made and never initialized are initialized there first (TF1's `_initialize_variables`), so a
Keras model works inside a user's Session program and on its own. The learning phase is a
`placeholder_with_default(False)` named `keras_learning_phase`, fed 1 while `fit` trains, unless
`set_learning_phase` fixed it to a Python 0 or 1.
"""

from __future__ import annotations

import builtins
import contextlib
import weakref

import numpy as np

from .. import errors, nn
from ..eager.context import executing_eagerly
from ..graph import graph as graph_mod
from ..graph.dtypes import as_dtype
from ..graph.gradients import gradients as _gradients
from ..graph.graph import get_default_graph, name_scope
from ..graph.ops import Tensor, get_default_session
from ..kernels import (
    array_ops,
    creation_ops,
    cumulative_ops,
    functional_ops,
    image_ops,
    manip_ops,
    math_ops,
    pad_ops,
    random_ops,
    reduction_ops,
)
from ..kernels.check_ops import Print
from ..kernels.common import constant as _constant
from ..kernels.common import convert_to_tensor
from ..kernels.control_flow_ops import cond, while_loop
from ..kernels.control_ops import group
from ..kernels.gather_ops import gather as _gather
from ..kernels.gather_ops import one_hot as _one_hot
from ..kernels.linalg_ops import matmul, tensordot
from ..kernels.sparse_ops import SparseTensor, sparse_tensor_to_dense
from ..kernels.state_ops import assign, assign_add, assign_sub
from ..kernels.tensor_array_ops import TensorArray
from ..layers.base import _LAYER_UIDS, next_layer_uid
from ..schedule.session import Session
from ..state.variables import Variable, report_uninitialized_variables, variables_initializer

__all__ = [
    "get_uid", "reset_uids", "clear_session", "get_session", "set_session", "learning_phase", "set_learning_phase",
    "learning_phase_scope", "floatx", "set_floatx", "epsilon", "set_epsilon", "image_data_format",
    "set_image_data_format", "placeholder", "is_placeholder", "variable", "constant", "is_keras_tensor", "eval",
    "get_value", "set_value", "batch_get_value", "batch_set_value", "int_shape", "shape", "ndim", "dtype",
    "count_params", "function", "gradients", "stop_gradient", "manual_variable_initialization", "name_scope",
    "zeros", "ones", "zeros_like", "ones_like", "eye", "cast", "sum", "mean", "max", "min", "prod", "std", "var",
    "any", "all", "argmax", "argmin", "square", "sqrt", "abs", "exp", "log", "pow", "sign", "round", "clip",
    "maximum", "minimum", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "dot",
    "batch_dot", "transpose", "reshape", "flatten", "batch_flatten", "expand_dims", "squeeze", "concatenate",
    "stack", "permute_dimensions", "repeat", "tile", "gather", "relu", "elu", "sigmoid", "hard_sigmoid", "tanh",
    "softmax", "softplus", "softsign", "categorical_crossentropy", "sparse_categorical_crossentropy",
    "binary_crossentropy", "l2_normalize", "dropout", "random_normal", "random_uniform", "switch",
    "in_train_phase", "in_test_phase", "update", "update_add", "update_sub", "moving_average_update",
    "track_variable",
]

_FLOATX = "float32"
_EPSILON = 1e-7
_IMAGE_DATA_FORMAT = "channels_last"
_MANUAL_VAR_INIT = False

# per graph: the learning-phase placeholder, a fixed phase, the variables
# Keras made (initialized by get_session) and the session Keras made for the graph
_PHASE = weakref.WeakKeyDictionary()
_FIXED_PHASE = {}  # graph (or "eager") -> 0/1; cleared with the graph by clear_session
_KERAS_VARIABLES = weakref.WeakKeyDictionary()
_SESSIONS = weakref.WeakKeyDictionary()
_SESSION = None  # set_session's
# tensor -> (layer, node index, tensor index): the layer call that made a symbolic tensor (the
# functional API walks these back from a model's outputs); tensor -> its Keras mask
_HISTORY = weakref.WeakKeyDictionary()
_MASKS = weakref.WeakKeyDictionary()


_SYMBOLIC_GRAPH = None


def symbolic_graph():
    """The graph holding eager-mode functional models' symbolic structure (their `Input`s and the
    layer calls on them); the values are always computed eagerly."""
    global _SYMBOLIC_GRAPH
    if _SYMBOLIC_GRAPH is None:
        _SYMBOLIC_GRAPH = graph_mod.Graph()
    return _SYMBOLIC_GRAPH


def keras_history(x):
    return _HISTORY.get(x) if isinstance(x, Tensor) else None


def set_keras_history(x, history):
    _HISTORY[x] = history


def keras_mask(x):
    return _MASKS.get(x) if isinstance(x, Tensor) else None


def set_keras_mask(x, mask):
    if isinstance(x, Tensor):
        if mask is None:
            _MASKS.pop(x, None)
        else:
            _MASKS[x] = mask


def get_uid(prefix=""):
    """1, 2, 3, ... for each `prefix` in the default graph (Keras's layer and model naming; the
    counter tf.layers uses too, as in TF1)."""
    return next_layer_uid(prefix)


def reset_uids():
    _LAYER_UIDS.pop(get_default_graph(), None)


def clear_session():
    """A fresh default graph and Keras state (names count from 0 again; the old session closed)."""
    global _SESSION
    graph = get_default_graph()
    for table in (_LAYER_UIDS, _PHASE, _FIXED_PHASE, _KERAS_VARIABLES):
        table.pop(graph, None)
    session = _SESSIONS.pop(graph, None)
    if session is not None:
        session.close()
    _SESSION = None
    if not executing_eagerly():
        graph_mod.reset_default_graph()
    else:  # eager variable names count from 0 again
        graph.reset_names()


def track_variable(v):
    """Marks `v` as Keras's own: `get_session()` initializes it if it never was."""
    if not executing_eagerly():
        _KERAS_VARIABLES.setdefault(v.graph, []).append(v)


def _initialize_variables(session):
    pending = [v for v in _KERAS_VARIABLES.get(session.graph, []) if not getattr(v, "_keras_initialized", False)]
    if not pending or _MANUAL_VAR_INIT:
        return
    with session.graph.as_default():
        names = {n.decode() if isinstance(n, bytes) else n
                 for n in session.run(report_uninitialized_variables(pending))}
        fresh = [v for v in pending if v.op.name in names]
        if fresh:
            session.run(variables_initializer(fresh))
    for v in pending:
        v._keras_initialized = True


def get_session():
    """The session Keras runs in (see the module docstring); RuntimeError in eager mode."""
    if executing_eagerly():
        raise RuntimeError("tf.keras.backend.get_session is not available when eager execution is enabled.")
    session = get_default_session()
    if session is None:
        session = _SESSION if _SESSION is not None and _SESSION.graph is get_default_graph() else None
    if session is None:
        graph = get_default_graph()
        session = _SESSIONS.get(graph)
        if session is None or session._closed:
            session = _SESSIONS[graph] = Session(graph=graph)
    _initialize_variables(session)
    return session


def set_session(session):
    """Keras runs in `session` from now on (its graph must be the default graph when used)."""
    global _SESSION
    _SESSION = session


def learning_phase():
    """The learning phase: a Python 0/1 when fixed, else the graph's bool placeholder (False
    unless fed); in eager mode 0 unless fixed."""
    if executing_eagerly():
        return _FIXED_PHASE.get("eager", 0)
    graph = get_default_graph()
    if graph in _FIXED_PHASE:
        return _FIXED_PHASE[graph]
    phase = _PHASE.get(graph)
    if phase is None:
        with name_scope(""):
            phase = _PHASE[graph] = array_ops.placeholder_with_default(False, shape=[], name="keras_learning_phase")
    return phase


def _phase_placeholder():
    """The graph's learning-phase placeholder if one was made (what `fit` feeds), else None."""
    return None if executing_eagerly() else _PHASE.get(get_default_graph())


def set_learning_phase(value):
    """Fixes the learning phase to 0 (test) or 1 (train); ValueError otherwise."""
    if value not in (0, 1):
        raise ValueError("Expected learning phase to be 0 or 1.")
    _FIXED_PHASE["eager" if executing_eagerly() else get_default_graph()] = value


@contextlib.contextmanager
def learning_phase_scope(value):
    key = "eager" if executing_eagerly() else get_default_graph()
    had, old = key in _FIXED_PHASE, _FIXED_PHASE.get(key)
    set_learning_phase(value)
    try:
        yield
    finally:
        if had:
            _FIXED_PHASE[key] = old
        else:
            _FIXED_PHASE.pop(key, None)


def floatx():
    return _FLOATX


def set_floatx(value):
    global _FLOATX
    if value not in ("float16", "float32", "float64"):
        raise ValueError(f"Unknown floatx type: {value}")
    _FLOATX = str(value)


def epsilon():
    return _EPSILON


def set_epsilon(value):
    global _EPSILON
    _EPSILON = float(value)


def image_data_format():
    return _IMAGE_DATA_FORMAT


def set_image_data_format(data_format):
    global _IMAGE_DATA_FORMAT
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"Unknown data_format: {data_format}")
    _IMAGE_DATA_FORMAT = str(data_format)


def manual_variable_initialization(value):
    """True: `get_session` leaves variables for the user to initialize."""
    global _MANUAL_VAR_INIT
    _MANUAL_VAR_INIT = bool(value)


# ---- tensors and variables -------------------------------------------------------------------------
def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    if shape is None and ndim is not None:
        shape = (None,) * ndim
    return array_ops.placeholder(as_dtype(dtype or floatx()), shape=shape, name=name)


def is_placeholder(x):
    return isinstance(x, Tensor) and not executing_eagerly() and x.op.type == "Placeholder"


def variable(value, dtype=None, name=None, constraint=None):
    """A variable holding `value` (Keras-tracked: `get_session` initializes it)."""
    value = np.asarray(value, dtype=as_dtype(dtype or floatx()).as_numpy_dtype)
    v = Variable(value, name=name, constraint=constraint)
    track_variable(v)
    return v


def constant(value, dtype=None, shape=None, name=None):
    return _constant(value, dtype=as_dtype(dtype or floatx()), shape=shape, name=name)


def is_keras_tensor(x):
    """True for a tensor a Keras layer or `Input` produced (ValueError for a non-tensor)."""
    if not isinstance(x, (Tensor, Variable)):
        raise ValueError(f"Unexpectedly found an instance of type `{type(x)}`. Expected a symbolic tensor instance.")
    return keras_history(x) is not None


def _run(fetches):
    if executing_eagerly():
        return [f.numpy() for f in fetches]
    return get_session().run(list(fetches))


def eval(x):  # noqa: A001 - Keras's name
    return _run([x])[0]


def get_value(x):
    return _run([x])[0]


def batch_get_value(tensors):
    return _run(list(tensors)) if tensors else []


def set_value(x, value):
    batch_set_value([(x, value)])


def batch_set_value(tuples):
    for variable_, value in tuples:
        value = np.asarray(value, dtype=variable_.dtype.as_numpy_dtype)
        if executing_eagerly():
            variable_.assign(value)
        else:
            variable_.load(value, get_session())


def _set_weights_checked(params, weights, kind, owner):
    """Loads `weights` into the variables `params` of a `kind` ('layer', 'optimizer') named `owner`;
    ValueError with Keras's wording when the count or a shape differs (nothing is loaded then)."""
    if len(params) != len(weights):
        raise ValueError(f"You called `set_weights(weights)` on {kind} {owner} with a weight list of "
                         f"length {len(weights)}, but the {kind} was expecting {len(params)} weights. "
                         f"Provided weights: {str(weights)[:50]}...")
    for variable_, value in zip(params, weights):
        if tuple(variable_.shape.as_list()) != np.shape(value):
            raise ValueError(f"{kind.capitalize()} weight shape {tuple(variable_.shape.as_list())} not compatible "
                             f"with provided weight shape {np.shape(value)}")
    batch_set_value(list(zip(params, weights)))


def int_shape(x):
    """The static shape as a tuple of ints and None (None when the rank is unknown)."""
    shape = x.shape if hasattr(x, "shape") else convert_to_tensor(x).shape
    if not hasattr(shape, "as_list"):
        return tuple(shape)
    return tuple(shape.as_list()) if shape.ndims is not None else None


def shape(x):
    return array_ops.shape(x)


def ndim(x):
    return convert_to_tensor(x).shape.ndims


def dtype(x):
    return convert_to_tensor(x).dtype.base_dtype.name


def count_params(x):
    return int(np.prod(int_shape(x)))


class Function:
    """`K.function(inputs, outputs, updates)`: called with a list of input values, runs the outputs
    (and the updates) in the Keras session, feeding each input."""

    def __init__(self, inputs, outputs, updates=None, name=None, **session_kwargs):
        self.inputs = list(inputs)
        self._single = not isinstance(outputs, (list, tuple))
        self.outputs = [outputs] if self._single else list(outputs)
        self.updates_op = group(*updates) if updates else None
        self.name = name

    def __call__(self, inputs):
        inputs = inputs if isinstance(inputs, (list, tuple)) else [inputs]
        if len(inputs) != len(self.inputs):
            raise ValueError(f"Function {self.name or ''!s}: expected {len(self.inputs)} input values, got {len(inputs)}")
        feed = {}
        for tensor, value in zip(self.inputs, inputs):
            if isinstance(tensor, int) or value is None:
                continue
            feed[tensor] = value
        fetches = self.outputs + ([self.updates_op] if self.updates_op is not None else [])
        values = get_session().run(fetches, feed_dict=feed)
        return values[:len(self.outputs)]


def function(inputs, outputs, updates=None, name=None, **kwargs):
    return Function(inputs, outputs, updates=updates, name=name, **kwargs)


def gradients(loss, variables):
    return _gradients(loss, variables)


def stop_gradient(variables):
    if isinstance(variables, (list, tuple)):
        return [array_ops.stop_gradient(v) for v in variables]
    return array_ops.stop_gradient(variables)


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


def _normalize_data_format(data_format):
    data_format = image_data_format() if data_format is None else data_format
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("Unknown data_format: " + str(data_format))
    return data_format


def _padding_mode(padding):
    if padding == "same":
        return "SAME"
    if padding == "valid":
        return "VALID"
    raise ValueError("Invalid padding: " + str(padding))


def _to_last(x, data_format, rank):
    """channels_first -> channels_last (Keras transposes around TF's NHWC ops)."""
    return manip_ops.transpose(x, [0] + list(range(2, rank)) + [1]) if data_format == "channels_first" else x


def _to_first(x, data_format, rank):
    return manip_ops.transpose(x, [0, rank - 1] + list(range(1, rank - 1))) if data_format == "channels_first" else x


def _pair(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def temporal_padding(x, padding=(1, 1)):
    """Zeros added before/after axis 1 of a [batch, time, features] tensor."""
    if len(padding) != 2:
        raise ValueError(f"temporal_padding: padding must be a pair, got {padding!r}")
    return pad_ops.pad(x, [[0, 0], list(padding), [0, 0]])


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    data_format = _normalize_data_format(data_format)
    if len(padding) != 2 or len(padding[0]) != 2 or len(padding[1]) != 2:
        raise ValueError(f"spatial_2d_padding: padding must be 2 pairs, got {padding!r}")
    spatial = [list(padding[0]), list(padding[1])]
    pads = [[0, 0], [0, 0]] + spatial if data_format == "channels_first" else [[0, 0]] + spatial + [[0, 0]]
    return pad_ops.pad(x, pads)


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    data_format = _normalize_data_format(data_format)
    if len(padding) != 3 or builtins.any(len(p) != 2 for p in padding):
        raise ValueError(f"spatial_3d_padding: padding must be 3 pairs, got {padding!r}")
    spatial = [list(p) for p in padding]
    pads = [[0, 0], [0, 0]] + spatial if data_format == "channels_first" else [[0, 0]] + spatial + [[0, 0]]
    return pad_ops.pad(x, pads)


def bias_add(x, bias, data_format=None):
    """x + bias over the channels axis (a bias of rank ndim(x) - 1 is added as a whole)."""
    data_format = _normalize_data_format(data_format)
    x = convert_to_tensor(x)
    bias_shape = int_shape(bias)
    if len(bias_shape) != 1 and len(bias_shape) != ndim(x) - 1:
        raise ValueError("Unexpected bias dimensions %d, expect to be 1 or %d dimensions" % (
            len(bias_shape), ndim(x)))
    if len(bias_shape) == 1:
        if data_format == "channels_first" and ndim(x) > 2:
            return x + array_ops.reshape(bias, [1, bias_shape[0]] + [1] * (ndim(x) - 2))
        return nn.bias_add(x, bias)
    if data_format == "channels_first":
        return x + array_ops.reshape(bias, (1, bias_shape[-1]) + tuple(bias_shape[:-1]))
    return x + array_ops.reshape(bias, (1,) + tuple(bias_shape))


def conv1d(x, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """1-D convolution of [batch, steps, channels] (or channels_first) by [k, in, out];
    padding 'causal' pads the left with dilation_rate * (k - 1) zeros."""
    data_format = _normalize_data_format(data_format)
    if padding == "causal":
        left = dilation_rate * (int_shape(kernel)[0] - 1)
        x = _to_first(temporal_padding(_to_last(x, data_format, 3), (left, 0)), data_format, 3)
        padding = "valid"
    x = _to_last(x, data_format, 3)
    y = nn.conv1d(x, kernel, stride=strides, padding=_padding_mode(padding), data_format="NWC",
                  dilations=dilation_rate)
    return _to_first(y, data_format, 3)


def conv2d(x, kernel, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1)):
    """2-D convolution of [batch, rows, cols, channels] (or channels_first) by [kh, kw, in, out]."""
    data_format = _normalize_data_format(data_format)
    x = _to_last(x, data_format, 4)
    y = nn.conv2d(x, kernel, strides=(1,) + _pair(strides, 2) + (1,), padding=_padding_mode(padding),
                  data_format="NHWC", dilations=(1,) + _pair(dilation_rate, 2) + (1,))
    return _to_first(y, data_format, 4)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    """The transpose of conv2d: `kernel` [kh, kw, out, in], `output_shape` in `data_format`'s
    layout (a None batch is the input's)."""
    data_format = _normalize_data_format(data_format)
    if tuple(_pair(dilation_rate, 2)) != (1, 1):
        raise errors.UnimplementedError(None, None, "conv2d_transpose: dflow's Conv2DBackpropInput has no "
                                                    f"dilations; got dilation_rate={dilation_rate}")
    x = _to_last(x, data_format, 4)
    if isinstance(output_shape, (list, tuple)):
        output_shape = list(output_shape)
        if data_format == "channels_first":
            output_shape = [output_shape[0], output_shape[2], output_shape[3], output_shape[1]]
        if output_shape[0] is None:
            output_shape = array_ops.stack([array_ops.shape(x)[0]] + output_shape[1:])
    y = nn.conv2d_transpose(x, kernel, output_shape, strides=(1,) + _pair(strides, 2) + (1,),
                            padding=_padding_mode(padding), data_format="NHWC")
    return _to_first(y, data_format, 4)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    data_format = _normalize_data_format(data_format)
    x = _to_last(x, data_format, 4)
    y = nn.depthwise_conv2d(x, depthwise_kernel, strides=(1,) + _pair(strides, 2) + (1,),
                            padding=_padding_mode(padding), rate=_pair(dilation_rate, 2), data_format="NHWC")
    return _to_first(y, data_format, 4)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    data_format = _normalize_data_format(data_format)
    if ndim(x) != 4:
        raise ValueError("Input should have rank 4.")
    x = _to_last(x, data_format, 4)
    y = nn.separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1,) + _pair(strides, 2) + (1,),
                            padding=_padding_mode(padding), rate=_pair(dilation_rate, 2), data_format="NHWC")
    return _to_first(y, data_format, 4)


def conv3d(x, kernel, strides=(1, 1, 1), padding="valid", data_format=None, dilation_rate=(1, 1, 1)):
    """3-D convolution of [batch, d, h, w, channels] (or channels_first) by [kd, kh, kw, in, out].

    dflow has no Conv3D op: the output is summed from 2-D convolutions of depth slices, so the
    depth must be static (ValueError otherwise)."""
    data_format = _normalize_data_format(data_format)
    x = _to_last(convert_to_tensor(x), data_format, 5)
    strides, dilation_rate = _pair(strides, 3), _pair(dilation_rate, 3)
    depth = x.shape[1].value
    if depth is None:
        raise ValueError(f"conv3d: dflow builds 3-D convolutions from 2-D ones and needs a static depth; "
                         f"got an input of shape {x.shape}")
    kd, sd, dd = int_shape(kernel)[0], strides[0], dilation_rate[0]
    span = (kd - 1) * dd + 1
    if padding == "same":
        out_depth = -(-depth // sd)
        total = builtins.max((out_depth - 1) * sd + span - depth, 0)
        x = pad_ops.pad(x, [[0, 0], [total // 2, total - total // 2], [0, 0], [0, 0], [0, 0]])
    elif padding == "valid":
        out_depth = (depth - span) // sd + 1
    else:
        raise ValueError("Invalid padding: " + str(padding))
    mode = _padding_mode(padding)
    kernels = manip_ops.unstack(kernel, num=kd, axis=0)
    slices = manip_ops.unstack(x, axis=1)
    outputs = []
    for od in range(out_depth):
        terms = [nn.conv2d(slices[od * sd + k * dd], kernels[k], strides=[1, strides[1], strides[2], 1],
                           padding=mode, dilations=[1, dilation_rate[1], dilation_rate[2], 1])
                 for k in range(kd)]
        outputs.append(manip_ops.add_n(terms) if len(terms) > 1 else terms[0])
    return _to_first(array_ops.stack(outputs, axis=1), data_format, 5)


def _pool(x, pool_size, strides, padding, data_format, pool_mode, rank, max_fn, avg_fn):
    data_format = _normalize_data_format(data_format)
    if pool_mode not in ("max", "avg"):
        raise ValueError("Invalid pooling mode: " + str(pool_mode))
    n = rank - 2
    x = _to_last(x, data_format, rank)
    fn = max_fn if pool_mode == "max" else avg_fn
    y = fn(x, (1,) + _pair(pool_size, n) + (1,), (1,) + _pair(strides, n) + (1,), _padding_mode(padding))
    return _to_first(y, data_format, rank)


def pool2d(x, pool_size, strides=(1, 1), padding="valid", data_format=None, pool_mode="max"):
    if len(pool_size) != 2:
        raise ValueError("`pool_size` must be a tuple of 2 integers.")
    if len(strides) != 2:
        raise ValueError("`strides` must be a tuple of 2 integers.")
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 4, nn.max_pool2d, nn.avg_pool2d)


def pool3d(x, pool_size, strides=(1, 1, 1), padding="valid", data_format=None, pool_mode="max"):
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 5, nn.max_pool3d, nn.avg_pool3d)


def _local_conv(inputs, kernel, kernel_size, strides, output_shape, data_format):
    """Keras's local_conv: a separate kernel per output position ([positions, k * in, out])."""
    data_format = _normalize_data_format(data_format)
    rank = len(output_shape)
    x = _to_last(convert_to_tensor(inputs), data_format, rank + 2)
    feature_dim = int_shape(kernel)[1]
    channels = int_shape(kernel)[-1]
    patches = []
    for position in np.ndindex(*output_shape):
        index = (slice(None),) + tuple(slice(p * s, p * s + k) for p, s, k in zip(position, strides, kernel_size))
        patches.append(array_ops.reshape(x[index], [1, -1, feature_dim]))
    xs = manip_ops.concat(patches, 0)  # [positions, batch, feature_dim]
    output = matmul(xs, kernel)  # [positions, batch, filters]
    output = array_ops.reshape(output, list(output_shape) + [-1, channels])
    output = manip_ops.transpose(output, [rank] + list(range(rank)) + [rank + 1])  # batch first
    return _to_first(output, data_format, rank + 2)


def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """Unshared 1-D convolution: `kernel` [output_length, k * in, filters]."""
    output_length = int_shape(kernel)[0]
    return _local_conv(inputs, kernel, _pair(kernel_size, 1), _pair(strides, 1), (output_length,), data_format)


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """Unshared 2-D convolution: `kernel` [rows * cols, kh * kw * in, filters]."""
    return _local_conv(inputs, kernel, _pair(kernel_size, 2), _pair(strides, 2), tuple(output_shape), data_format)


def resize_images(x, height_factor, width_factor, data_format, interpolation="nearest"):
    """Rows and columns scaled by integer factors ('nearest' or 'bilinear')."""
    data_format = _normalize_data_format(data_format)
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError("interpolation should be one of \"nearest\" or \"bilinear\".")
    x = _to_last(convert_to_tensor(x), data_format, 4)
    rows, cols = x.shape[1].value, x.shape[2].value
    if rows is not None and cols is not None:
        size = [rows * height_factor, cols * width_factor]
    else:
        dims = array_ops.shape(x)
        size = array_ops.stack([dims[1] * height_factor, dims[2] * width_factor])
    if interpolation == "nearest":
        y = image_ops.resize_nearest_neighbor(x, size)
    else:
        y = image_ops.resize_bilinear(x, size)
    return _to_first(y, data_format, 4)


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """Depth, rows and columns repeated by integer factors."""
    data_format = _normalize_data_format(data_format)
    first = 2 if data_format == "channels_first" else 1
    y = repeat_elements(x, depth_factor, axis=first)
    y = repeat_elements(y, height_factor, axis=first + 1)
    return repeat_elements(y, width_factor, axis=first + 2)


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta (beta/gamma may be None)."""
    return nn.batch_normalization(x, mean, var, beta, gamma, epsilon)


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """(normalized x, mean, variance) with the batch's statistics over `reduction_axes`; the
    statistics keep the other axes (shape of x without the reduced ones)."""
    x = convert_to_tensor(x)
    rank = x.shape.ndims
    reduction_axes = sorted(a % rank for a in reduction_axes)
    mean_, variance = nn.moments(x, reduction_axes)
    kept = [a for a in range(rank) if a not in reduction_axes]
    dims = array_ops.shape(x)
    target = array_ops.stack([dims[a] if a in kept else 1 for a in range(rank)])

    def broadcast(t):
        return None if t is None else array_ops.reshape(t, target)

    normed = nn.batch_normalization(x, broadcast(mean_), broadcast(variance), broadcast(beta), broadcast(gamma),
                                    epsilon)
    return normed, mean_, variance


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None, constants=None, unroll=False,
        input_length=None, time_major=False, zero_output_for_mask=False):
    """Keras's loop: `step_function(x_t, states + constants) -> (output, new_states)` over the time
    axis of `inputs` ([batch, time, ...], or [time, batch, ...] when time_major).

    Returns (last_output, outputs [batch, time, ...], new_states). Where `mask` ([batch, time]) is
    False the states are carried over and the output is the previous one (zeros when
    zero_output_for_mask). A static time axis is unrolled when `unroll` (or eagerly); otherwise
    a while_loop runs over a TensorArray."""
    del input_length
    inputs = convert_to_tensor(inputs)
    rank = inputs.shape.ndims
    if rank is None or rank < 3:
        raise ValueError("Input should be at least 3D.")
    x = inputs if time_major else manip_ops.transpose(inputs, [1, 0] + list(range(2, rank)))
    constants = list(constants or [])
    states = list(initial_states)
    if mask is not None:
        mask = convert_to_tensor(mask)
        if mask.dtype != "bool":
            mask = math_ops.cast(mask, "bool")
        if mask.shape.ndims == 2:
            mask = manip_ops.expand_dims(mask, -1)
        if not time_major:
            mask = manip_ops.transpose(mask, [1, 0] + list(range(2, mask.shape.ndims)))
    if go_backwards:
        x = manip_ops.reverse(x, [0])
        if mask is not None:
            mask = manip_ops.reverse(mask, [0])

    def select(m, new, old):
        m = convert_to_tensor(m)
        for _ in range(new.shape.ndims - m.shape.ndims):
            m = manip_ops.expand_dims(m, -1)
        return math_ops.where(m, new, old)

    steps = x.shape[0].value
    if unroll or executing_eagerly():
        if steps is None:
            raise ValueError("Unrolling requires a fixed number of timesteps.")
        xs = manip_ops.unstack(x, num=steps)
        ms = manip_ops.unstack(mask, num=steps) if mask is not None else [None] * steps
        outputs, prev = [], None
        for x_t, m_t in zip(xs, ms):
            out, new_states = step_function(x_t, tuple(states) + tuple(constants))
            new_states = list(new_states) if isinstance(new_states, (list, tuple)) else [new_states]
            if m_t is not None:
                base = creation_ops.zeros_like(out) if prev is None or zero_output_for_mask else prev
                out = select(m_t, out, base)
                new_states = [select(m_t, n, s) for n, s in zip(new_states, states)]
            prev, states = out, new_states
            outputs.append(out)
        stacked = array_ops.stack(outputs)
        out_rank = stacked.shape.ndims
        if not time_major:
            stacked = manip_ops.transpose(stacked, [1, 0] + list(range(2, out_rank)))
        return prev, stacked, states

    # while_loop: one step on the first input fixes the output's shape and dtype
    first_out, _ = step_function(x[0], tuple(states) + tuple(constants))
    steps_t = array_ops.shape(x)[0] if steps is None else steps
    input_ta = TensorArray(x.dtype, size=steps_t, element_shape=x.shape[1:], tensor_array_name="input_ta").unstack(x)
    mask_ta = TensorArray("bool", size=steps_t, element_shape=mask.shape[1:],
                          tensor_array_name="mask_ta").unstack(mask) if mask is not None else None
    output_ta = TensorArray(first_out.dtype, size=steps_t, element_shape=first_out.shape,
                            tensor_array_name="output_ta")
    n_states = len(states)
    zero_output = creation_ops.zeros_like(first_out)

    def body(t, out_ta, prev, *st):
        x_t = input_ta.read(t)
        x_t.set_shape(x.shape[1:])
        out, new_states = step_function(x_t, tuple(st) + tuple(constants))
        new_states = list(new_states) if isinstance(new_states, (list, tuple)) else [new_states]
        if mask_ta is not None:
            m_t = mask_ta.read(t)
            m_t.set_shape(mask.shape[1:])
            out = select(m_t, out, zero_output if zero_output_for_mask else prev)
            new_states = [select(m_t, n, s) for n, s in zip(new_states, st)]
        for n, s in zip(new_states, st):
            n.set_shape(s.shape)
        out.set_shape(first_out.shape)
        return (math_ops.add(t, 1), out_ta.write(t, out), out) + tuple(new_states)

    time = convert_to_tensor(0, dtype="int32", name="time")
    result = while_loop(lambda t, *_: math_ops.less(t, steps_t), body,
                        (time, output_ta, zero_output) + tuple(states), maximum_iterations=steps_t)
    outputs = result[1].stack()
    out_rank = outputs.shape.ndims
    if not time_major:
        outputs = manip_ops.transpose(outputs, [1, 0] + list(range(2, out_rank)))
    return result[2], outputs, list(result[3:3 + n_states])


def _no_ctc(name, tf_op):
    def missing(*args, **kwargs):
        raise errors.UnimplementedError(None, None, f"tf.keras.backend.{name} needs TensorFlow's {tf_op}, which "
                                                    "dflow does not implement (it has no CTC ops)")
    missing.__name__ = name
    missing.__doc__ = f"Not available: dflow has no {tf_op} (raises UnimplementedError)."
    return missing


ctc_label_dense_to_sparse = _no_ctc("ctc_label_dense_to_sparse", "tf.nn.ctc_loss label conversion")
ctc_batch_cost = _no_ctc("ctc_batch_cost", "tf.nn.ctc_loss (op CTCLoss)")
ctc_decode = _no_ctc("ctc_decode", "tf.nn.ctc_greedy_decoder / ctc_beam_search_decoder")

__all__ += [
    "backend", "cast_to_floatx", "is_sparse", "to_dense", "identity", "sin", "cos", "arange", "cumsum", "cumprod",
    "map_fn", "foldl", "foldr", "in_top_k", "one_hot", "reverse", "print_tensor", "truncated_normal",
    "random_binomial", "random_normal_variable", "random_uniform_variable", "repeat_elements", "temporal_padding",
    "spatial_2d_padding", "spatial_3d_padding", "bias_add", "conv1d", "conv2d", "conv2d_transpose",
    "depthwise_conv2d", "separable_conv2d", "conv3d", "pool2d", "pool3d", "local_conv1d", "local_conv2d",
    "resize_images", "resize_volumes", "batch_normalization", "normalize_batch_in_training", "rnn",
    "ctc_label_dense_to_sparse", "ctc_batch_cost", "ctc_decode",
]
