"""`dflow.Variable` and the functions over the graph's variables (initializers, collections)."""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.graph import (
    _session_for,
    control_dependencies,
    executing_eagerly,
    get_default_graph,
    name_scope,
)
from ..graph.keys import GraphKeys
from ..graph.registry import register_op
from ..graph.shape import TensorShape
from ..kernels import scatter_nd_ops, state_ops
from ..kernels.array_ops import identity
from ..kernels.common import apply_op, convert_to_tensor
from ..kernels.control_ops import group, no_op

__all__ = [
    "Variable", "VariableV1", "global_variables", "all_variables", "trainable_variables", "local_variables",
    "model_variables", "moving_average_variables", "global_variables_initializer", "initialize_all_variables",
    "local_variables_initializer", "initialize_local_variables", "variables_initializer",
    "initialize_variables", "report_uninitialized_variables", "assert_variables_initialized", "GraphKeys",
]


class LoadError(InvalidArgumentError, ValueError):
    """`Variable.load` of a value of the wrong shape (ValueError, as TF1's feed of the initializer)."""


class Variable:
    """A value kept by the session across runs (TF1's `tf.Variable`).

    `name` is the handle tensor's name (`v:0`, `scope/v:0`); using the variable in an op, fetching
    it or `eval()` reads it. Within a run a read sees the value at the start of the run unless it is
    ordered after an assign by a control dependency (see dflow/schedule/state.py).
    """

    def __init__(self, initial_value=None, trainable=True, collections=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None, expected_shape=None,
                 import_scope=None, constraint=None, use_resource=None, synchronization=None,
                 aggregation=None, shape=None, chunks=None):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if constraint is not None and not callable(constraint):
            raise ValueError(f"The `constraint` argument must be a callable, got {constraint!r}.")
        init_from_fn = callable(initial_value)
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        graph = get_default_graph()
        with control_dependencies(None):  # a variable's creation never waits for the context's ops
            with name_scope(name, "Variable", [] if init_from_fn else [initial_value]) as scope:
                if init_from_fn:
                    with name_scope("Initializer"):
                        value = initial_value()
                    self._initial_value = convert_to_tensor(value, dtype=dtype, name="initial_value")
                else:
                    self._initial_value = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
                vshape = TensorShape(shape) if shape is not None else self._initial_value.shape
                if validate_shape and not vshape.is_fully_defined():
                    raise ValueError(f"initial_value must have a shape specified: {self._initial_value!r}")
                if not vshape.is_fully_defined():
                    raise ValueError(f"Variable {scope[:-1]!r}: dflow needs a fully defined shape, got {vshape}")
                self._handle = state_ops.variable_op(vshape, self._initial_value.dtype, name=scope, chunks=chunks)
                self._initializer_op = state_ops.assign(self._handle, self._initial_value,
                                                        validate_shape=validate_shape, name="Assign").op
                self._snapshot = identity(self._handle, name="read")
        self._trainable = trainable
        self._constraint = constraint
        self._graph = graph
        graph.add_to_collections(collections, self)
        graph._variables_by_handle = getattr(graph, "_variables_by_handle", {})
        graph._variables_by_handle[self._handle.op.name] = self

    # ---- identity ----------------------------------------------------------------------------
    @property
    def name(self):
        return self._handle.name

    @property
    def op(self):
        return self._handle.op

    @property
    def graph(self):
        return self._graph

    @property
    def dtype(self):
        return self._handle.dtype

    @property
    def shape(self):
        return self._handle.shape

    def get_shape(self):
        return self._handle.shape

    @property
    def device(self):
        return self._handle.device

    @property
    def trainable(self):
        return self._trainable

    @property
    def constraint(self):
        """The projection an optimizer applies to this variable after each update (or None)."""
        return self._constraint

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    def initialized_value(self):
        """The value this variable is initialized to (usable in other variables' initial values)."""
        return self._initial_value

    # ---- reading -----------------------------------------------------------------------------
    def value(self):
        """The variable's value as a tensor (its snapshot `v/read:0`; in eager mode its value now)."""
        if executing_eagerly():
            return identity(self._handle, name="read")
        return self._snapshot

    def numpy(self):
        """The value as a numpy array (eager mode only, as TF1)."""
        if not hasattr(self._handle, "numpy"):
            raise NotImplementedError("numpy() is only available when eager execution is enabled.")
        return self._handle.numpy()

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.numpy(), dtype=dtype)

    def read_value(self):
        """A new read, ordered after the control dependencies open where it is called."""
        return identity(self._handle, name="read")

    def _as_graph_element(self):
        return self._handle

    def _as_control_op(self):
        return self._handle.op

    def eval(self, session=None):
        return self._handle.eval(session=session)

    def load(self, value, session=None):
        """Sets the variable's value in `session` directly (no op is added to the graph)."""
        session = _session_for(self._graph, session, what=f"variable {self.name!r}")
        arr = np.asarray(value)
        if arr.dtype != self.dtype.np_dtype:
            if not np.can_cast(arr.dtype, self.dtype.np_dtype, casting="same_kind"):
                raise InvalidArgumentError(None, self.op, f"load: value of dtype {arr.dtype} for variable "
                                           f"{self.name!r} of dtype {self.dtype.name}")
            arr = arr.astype(self.dtype.np_dtype)
        if not self.shape.is_compatible_with(arr.shape):
            raise LoadError(None, self.op, f"load: value of shape {arr.shape} for variable "
                            f"{self.name!r} of shape {self.shape}")
        session.load_variable(self.op.name, arr)

    # ---- writing -----------------------------------------------------------------------------
    def assign(self, value, use_locking=False, name=None, read_value=True):
        out = state_ops.assign(self._handle, value, name=name)
        return out if read_value else out.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        out = state_ops.assign_add(self._handle, delta, name=name)
        return out if read_value else out.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        out = state_ops.assign_sub(self._handle, delta, name=name)
        return out if read_value else out.op

    # TF1's scatter methods take an IndexedSlices `sparse_delta` (TypeError otherwise); dflow also
    # keeps its older spelling `v.scatter_add(indices, updates)` (an array as the second argument).
    def _sparse(self, sparse_delta, use_locking):
        if hasattr(sparse_delta, "indices") and hasattr(sparse_delta, "values"):
            return sparse_delta.indices, sparse_delta.values
        if use_locking is None or isinstance(use_locking, bool):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta}")
        return sparse_delta, use_locking

    def _scatter(self, fn, sparse_delta, use_locking, name):
        indices, updates = self._sparse(sparse_delta, use_locking)
        return fn(self._handle, indices, updates, name=name)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.scatter_update, sparse_delta, use_locking, name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.scatter_add, sparse_delta, use_locking, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.scatter_sub, sparse_delta, use_locking, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.scatter_mul, sparse_delta, use_locking, name)

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.scatter_div, sparse_delta, use_locking, name)

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.scatter_max, sparse_delta, use_locking, name)

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.scatter_min, sparse_delta, use_locking, name)

    def batch_scatter_update(self, sparse_delta, use_locking=False, name=None):
        indices, updates = self._sparse(sparse_delta, use_locking)
        return scatter_nd_ops.batch_scatter_update(self._handle, indices, updates, name=name)

    def scatter_nd_update(self, indices, updates, name=None):
        return scatter_nd_ops.scatter_nd_update(self._handle, indices, updates, name=name)

    def scatter_nd_add(self, indices, updates, name=None):
        return scatter_nd_ops.scatter_nd_add(self._handle, indices, updates, name=name)

    def scatter_nd_sub(self, indices, updates, name=None):
        return scatter_nd_ops.scatter_nd_sub(self._handle, indices, updates, name=name)

    def scatter_nd_max(self, indices, updates, name=None):
        return scatter_nd_ops.variable_scatter_nd("max", self._handle, indices, updates, name)

    def scatter_nd_min(self, indices, updates, name=None):
        return scatter_nd_ops.variable_scatter_nd("min", self._handle, indices, updates, name)

    def count_up_to(self, limit):
        """The value before an increment that fails with OutOfRangeError at `limit` (TF1)."""
        return state_ops.count_up_to(self._handle, limit)

    def __repr__(self):
        if hasattr(self._handle, "numpy"):  # eager: TF's ResourceVariable, with its value
            return (f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, "
                    f"numpy={np.array_repr(self.numpy()) if self.shape.ndims else str(self.numpy())}>")
        # TF1's RefVariable: its dtype is printed as the reference type (float32_ref)
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}_ref>"

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __bool__(self):
        raise TypeError("Using a `tf.Variable` as a Python `bool` is not allowed.")

    def __iter__(self):
        raise TypeError(f"Variable {self.name!r} is not iterable.")

    def __reduce__(self):
        raise TypeError(f"Variable {self.name!r} cannot be pickled")

    __array_priority__ = 100
    __array_ufunc__ = None


def _forward(meth):
    def f(self, *args):
        return getattr(self._handle, meth)(*args)

    f.__name__ = meth
    return f


for _m in ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
           "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__",
           "__matmul__", "__rmatmul__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__",
           "__lt__", "__le__", "__gt__", "__ge__", "__neg__", "__abs__", "__invert__", "__getitem__"]:
    setattr(Variable, _m, _forward(_m))

VariableV1 = Variable


# ---- collections ---------------------------------------------------------------------------------


def global_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def trainable_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    """An op running the initializers of `var_list` (a NoOp when it is empty)."""
    var_list = list(var_list)
    if var_list:
        return group(*[v.initializer for v in var_list], name=name)
    return no_op(name=name)


initialize_variables = variables_initializer


def global_variables_initializer():
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer():
    return variables_initializer(local_variables())


initialize_local_variables = local_variables_initializer


# ---- initialization reports ------------------------------------------------------------------


def _report_eager(xp, ctx, names):
    return np.array([n for n in names if not ctx.run_param(("initialized", n))], dtype=object)


def _report_lower(ctx, names):
    flags = [ctx.run_param(("initialized", n), (), np.bool_) for n in names]
    return ctx.delayed(_uninitialized_names, names, *flags, shape=(np.nan,), dtype=object)


def _uninitialized_names(names, *flags):
    return np.array([n for n, f in zip(names, flags) if not f], dtype=object)


register_op("ReportUninitializedVariables", lambda inputs, attrs: (TensorShape([None]), dtypes.string),
            eager=_report_eager, lower=_report_lower, run_state=True, stateful=True)


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor with the names of the variables that have no value in the session."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    names = [v.op.name for v in var_list]
    return apply_op("ReportUninitializedVariables", [], {"names": names}, name=name,
                    graph=get_default_graph())


def assert_variables_initialized(var_list=None):
    """An op that fails with FailedPreconditionError when run while a variable is uninitialized."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    return group(*[identity(v._handle) for v in var_list])



