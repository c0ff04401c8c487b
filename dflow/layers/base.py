"""`Layer` (TF1's `tf.layers.Layer`) and `InputSpec`.

A layer owns a variable scope, captured on its first use: `dense`, `dense_1`, ... (the
`variable_scope(None, default_name=...)` rule), or exactly `name` when the layer reuses. Its
variables come from `get_variable` inside that scope, so `variable_scope(..., reuse=True)`,
`reuse=tf.AUTO_REUSE`, the `reuse=` argument and scope initializers work as in TF1; calling a
layer object again reuses its variables. Ops go in the scope's original name scope (`dense/`,
then `dense/MatMul_1` on the second call).

Regularization losses (weights and activity) go to REGULARIZATION_LOSSES once per variable;
updates made by `add_update` (batch-norm moving statistics) go to UPDATE_OPS.

`_getter(get_variable, name, **kwargs)` (a constructor argument, TF1's custom-getter role) lets
`tf.contrib.layers` rename `kernel` to `weights` and add MODEL_VARIABLES.
"""

from __future__ import annotations

import re
import weakref

from ..graph.dtypes import as_dtype, float32
from ..graph.graph import add_to_collection, get_default_graph, name_scope
from ..graph.keys import GraphKeys
from ..graph.ops import Tensor, get_default_session
from ..graph.shape import TensorShape
from ..kernels.array_ops import shape as shape_op
from ..kernels.common import convert_to_tensor
from ..kernels.math_ops import cast, truediv
from ..state.scope import VariableScope, get_variable, variable_scope
from ..state.variables import global_variables, trainable_variables

__all__ = ["Layer", "InputSpec", "next_layer_uid"]

# per graph: how many layers of each base name exist, for `layer.name` (TF1 counts from 1:
# the first unnamed Dense is named "dense_1" while its variable scope is "dense")
_LAYER_UIDS = weakref.WeakKeyDictionary()


def _to_snake_case(name):
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return insecure if insecure[0] != "_" else "private" + insecure


def next_layer_uid(base):
    """1, 2, ... for each base name in the default graph: the counter TF1's layers and Keras share."""
    uids = _LAYER_UIDS.setdefault(get_default_graph(), {})
    uids[base] = uids.get(base, 0) + 1
    return uids[base]


def _unique_layer_name(base):
    return f"{base}_{next_layer_uid(base)}"


def _plain_getter(getter, name, **kwargs):
    return getter(name, **kwargs)


class InputSpec:
    """What a layer accepts: dtype, shape, ndim, max_ndim, min_ndim, and `axes` ({axis: size})."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None):
        self.dtype = dtype
        self.shape = shape
        self.ndim = len(shape) if shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = dict(axes or {})

    def __repr__(self):
        parts = [f"{k}={v}" for k, v in (("dtype", self.dtype), ("shape", self.shape), ("ndim", self.ndim),
                                          ("max_ndim", self.max_ndim), ("min_ndim", self.min_ndim),
                                          ("axes", self.axes or None)) if v is not None]
        return f"InputSpec({', '.join(parts)})"


def _check_input(spec, x, layer_name):
    """ValueError (Keras's wording) when tensor `x` does not satisfy `spec`."""
    if spec is None:
        return
    shape = x.shape
    ndim = shape.ndims
    where = f"Input 0 of layer {layer_name} is incompatible with the layer"
    full = f"Full shape received: {shape.as_list() if ndim is not None else None}"
    if spec.ndim is not None and ndim is not None and ndim != spec.ndim:
        raise ValueError(f"{where}: expected ndim={spec.ndim}, found ndim={ndim}. {full}")
    if spec.max_ndim is not None and ndim is not None and ndim > spec.max_ndim:
        raise ValueError(f"{where}: expected max_ndim={spec.max_ndim}, found ndim={ndim}. {full}")
    if spec.min_ndim is not None and ndim is not None and ndim < spec.min_ndim:
        raise ValueError(f"{where}: expected min_ndim={spec.min_ndim}, found ndim={ndim}. {full}")
    if spec.dtype is not None and x.dtype != as_dtype(spec.dtype):
        raise ValueError(f"{where}: expected dtype={as_dtype(spec.dtype).name}, found dtype={x.dtype.name}")
    if ndim is not None:
        for axis, value in spec.axes.items():
            dim = shape[int(axis)].value
            if value is not None and dim is not None and dim != value:
                raise ValueError(f"{where}: expected axis {axis} of input shape to have value {value} but "
                                 f"received input with shape {shape.as_list()}")


class Layer:
    """Base class of the TF1 layers: variables in a captured variable scope, `build` on the first
    call (with the inputs' static shape), then `call(inputs, ...)`."""

    _ALLOWED_KWARGS = {"input_shape", "batch_input_shape", "batch_size", "weights", "autocast"}

    def __init__(self, trainable=True, name=None, dtype=None, activity_regularizer=None, **kwargs):
        scope = kwargs.pop("_scope", None)
        self._reuse = kwargs.pop("_reuse", None)
        self._getter = kwargs.pop("_getter", None) or _plain_getter
        for k in kwargs:
            if k not in self._ALLOWED_KWARGS:
                raise TypeError(f"Keyword argument not understood: {k}")
        self.trainable = bool(trainable)
        self.built = False
        self.input_spec = None
        self.activity_regularizer = activity_regularizer
        self._dtype = None if dtype is None else as_dtype(dtype)
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._updates = []
        self._losses = []
        # a VariableScope is used as it is; a string (the functional `dense(..., name=)`) names the
        # scope exactly, without the `_1` suffixes a layer object's default name gets
        self._scope = scope if isinstance(scope, VariableScope) else None
        self._scope_arg = scope if isinstance(scope, str) and scope else None
        self._current_scope = None
        default = _to_snake_case(type(self).__name__)
        if isinstance(name, VariableScope):
            self._base_name = name.name
            self._name = self._unique_name(default)
        elif name:
            self._base_name = self._name = name
        else:
            self._base_name = default
            self._name = self._unique_name(default)

    @staticmethod
    def _unique_name(base):
        """`base_N`, counting from 1 per graph (Keras layers count from 0 on the same counter)."""
        return _unique_layer_name(base)

    # ---- identity and state ------------------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def scope_name(self):
        if self._scope is None:
            raise ValueError("No name available for layer scope because the layer \"" + self._name +
                             "\" has not been used yet. The scope name is determined the first time the layer "
                             "instance is called.")
        return self._scope.name

    @property
    def trainable_weights(self):
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self):
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    def _trackable_children(self):
        """Object-checkpoint children (train/trackable.py): the layer's weights by their short names
        (`kernel`, `bias`), as TF's `add_weight` tracks them."""
        return _weight_children(list(self._trainable_weights) + list(self._non_trainable_weights))

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    @property
    def updates(self):
        return list(self._updates)

    @property
    def losses(self):
        return list(self._losses)

    def get_weights(self):
        """The values of `weights` (numpy arrays), read in the default session.

        ValueError without a default session (`with sess.as_default():`).
        """
        session = get_default_session()
        if session is None:
            raise ValueError(f"Layer {self._name!r}: get_weights reads the variables in the default session; "
                             "call it inside `with sess.as_default():` (or run sess.run(layer.weights))")
        return session.run(self.weights)

    def set_weights(self, weights):
        """Loads numpy values into `weights` (same order and shapes) in the default session.

        ValueError for a wrong count; InvalidArgumentError for a wrong shape or dtype.
        """
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f"You called `set_weights(weights)` on layer {self._name!r} with a weight list of "
                             f"length {len(weights)}, but the layer was expecting {len(params)} weights.")
        for variable, value in zip(params, weights):
            variable.load(value)

    # ---- building blocks for subclasses ------------------------------------------------------
    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None, trainable=None,
                   constraint=None, partitioner=None, use_resource=None, synchronization=None,
                   aggregation=None, getter=None, **kwargs):
        """A variable `<scope>/<name>` made (or reused) through `get_variable`.

        The regularizer's loss goes to REGULARIZATION_LOSSES only when the variable is new; a
        `constraint` is the variable's (optimizers apply it after each update, as TF1's).
        """
        if constraint is not None:
            kwargs["constraint"] = constraint
        trainable = True if trainable is None else bool(trainable)
        dtype = as_dtype(dtype if dtype is not None else (self._dtype or float32))
        self._set_scope(None)
        existing = {id(v) for v in global_variables()}
        with variable_scope(self._scope, reuse=self.built or self._reuse, auxiliary_name_scope=False) as vs:
            self._current_scope = vs
            with name_scope(self._scope.original_name_scope):
                variable = self._getter(get_variable, name, shape=shape, dtype=dtype, initializer=initializer,
                                        trainable=trainable and self.trainable, **kwargs)
                if regularizer is not None and id(variable) not in existing:
                    with name_scope(name + "/Regularizer"):
                        loss = regularizer(variable)
                    if loss is not None:
                        self._add_regularization_loss(loss)
        if trainable and self.trainable and any(v is variable for v in trainable_variables()):
            self._trainable_weights.append(variable)
        else:
            self._non_trainable_weights.append(variable)
        return variable

    add_variable = add_weight

    def add_update(self, updates, inputs=None):
        """Records update ops (a tensor, op, or list of them) and adds them to UPDATE_OPS."""
        updates = updates if isinstance(updates, (list, tuple)) else [updates]
        for u in updates:
            self._updates.append(u)
            add_to_collection(GraphKeys.UPDATE_OPS, u)

    def add_loss(self, losses, inputs=None):
        for loss in losses if isinstance(losses, (list, tuple)) else [losses]:
            if loss is not None:
                self._add_regularization_loss(loss)

    def _add_regularization_loss(self, loss):
        self._losses.append(loss)
        add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    def compute_output_shape(self, input_shape):
        raise NotImplementedError(f"{type(self).__name__}.compute_output_shape")

    # ---- scope and call ----------------------------------------------------------------------
    def _set_scope(self, scope=None):
        if self._scope is not None:
            return
        scope = scope if scope is not None else self._scope_arg
        if self._reuse:
            with variable_scope(scope if scope is not None else self._base_name) as captured:
                self._scope = captured
        else:
            with variable_scope(scope, default_name=self._base_name) as captured:
                self._scope = captured

    def __call__(self, inputs, *args, **kwargs):
        """Builds the layer on its first call, then applies `call`; returns its outputs."""
        self._set_scope(kwargs.pop("scope", None))
        reuse = True if self.built else self._reuse
        with variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as vs:
            self._current_scope = vs
            with name_scope(self._scope.original_name_scope):
                if not isinstance(inputs, (list, tuple, dict)):
                    inputs = convert_to_tensor(inputs)
                    _check_input(self.input_spec, inputs, self._name)
                if not self.built:
                    first = inputs if isinstance(inputs, Tensor) else None
                    if self._dtype is None and first is not None:
                        self._dtype = first.dtype
                    self.build(first.shape if first is not None else
                               [convert_to_tensor(x).shape for x in inputs])
                    self.built = True
                    if isinstance(inputs, Tensor):
                        _check_input(self.input_spec, inputs, self._name)
                outputs = self.call(inputs, *args, **kwargs)
                if self.activity_regularizer is not None:
                    self._activity_loss(outputs)
        return outputs

    apply = __call__

    def _activity_loss(self, outputs):
        with name_scope("ActivityRegularizer"):
            loss = self.activity_regularizer(outputs)
            if loss is None:
                return
            batch = cast(shape_op(outputs)[0], loss.dtype)
            self._add_regularization_loss(truediv(loss, batch))

    def __repr__(self):
        return f"<dflow.layers.{type(self).__name__} {self._name!r}>"


def input_shape_of(input_shape):
    """A TensorShape of a build() argument (TensorShape, list, or tuple)."""
    return input_shape if isinstance(input_shape, TensorShape) else TensorShape(input_shape)


def _weight_children(weights):
    """(short name, weight) pairs; a short name met twice is replaced by the full name."""
    out, seen = [], set()
    for w in weights:
        short = w.op.name.rsplit("/", 1)[-1]
        name = short if short not in seen else w.op.name
        seen.add(name)
        out.append((name, w))
    return out
