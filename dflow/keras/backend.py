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

import contextlib
import weakref

import numpy as np

from .. import nn
from ..eager.context import executing_eagerly
from ..graph import graph as graph_mod
from ..graph.dtypes import as_dtype
from ..graph.gradients import gradients as _gradients
from ..graph.graph import get_default_graph, name_scope
from ..graph.ops import Tensor, get_default_session
from ..kernels import array_ops, manip_ops, math_ops, random_ops, reduction_ops
from ..kernels.common import constant as _constant
from ..kernels.common import convert_to_tensor
from ..kernels.control_flow_ops import cond
from ..kernels.control_ops import group
from ..kernels.gather_ops import gather as _gather
from ..kernels.linalg_ops import matmul, tensordot
from ..kernels.state_ops import assign, assign_add, assign_sub
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
    return manip_ops.zeros_like(x, dtype=dtype, name=name)


def ones_like(x, dtype=None, name=None):
    return manip_ops.ones_like(x, dtype=dtype, name=name)


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
