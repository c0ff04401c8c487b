"""The session Keras runs in, the learning phase, name counters, symbolic history and masks,
Keras's settings (floatx, epsilon, image data format), and tensors and variables (placeholder,
variable, get/set_value, function, gradients)."""

from __future__ import annotations

import contextlib
import weakref

import numpy as np

from ...eager.context import executing_eagerly
from ...graph import graph as graph_mod
from ...graph.dtypes import as_dtype
from ...graph.gradients import gradients as _gradients
from ...graph.graph import get_default_graph, name_scope
from ...graph.ops import Tensor, get_default_session
from ...kernels import (
    array_ops,
)
from ...kernels.common import constant as _constant
from ...kernels.common import convert_to_tensor
from ...kernels.control_ops import group
from ...layers.base import _LAYER_UIDS, next_layer_uid
from ...schedule.session import Session
from ...state.variables import Variable, report_uninitialized_variables, variables_initializer

__all__ = ["get_uid", "reset_uids", "clear_session", "get_session", "set_session", "learning_phase",
           "set_learning_phase", "learning_phase_scope", "floatx", "set_floatx", "epsilon", "set_epsilon",
           "image_data_format", "set_image_data_format", "placeholder", "is_placeholder", "variable",
           "constant", "is_keras_tensor", "eval", "get_value", "set_value", "batch_get_value",
           "batch_set_value", "int_shape", "shape", "ndim", "dtype", "count_params", "function", "gradients",
           "stop_gradient", "manual_variable_initialization", "track_variable", "name_scope"]

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
