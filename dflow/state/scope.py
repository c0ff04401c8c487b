"""Variable scopes and sharing: `variable_scope`, `get_variable`, `make_template` (TF1 rules).

`variable_scope` names both ops (through a name scope it opens) and `get_variable` variables;
`name_scope` names ops and `Variable`s but not `get_variable` ones. Creating an existing variable
without reuse, or reusing a missing one, raises ValueError with TF1's messages.
"""

from __future__ import annotations

import contextlib
import enum
import functools

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import get_default_graph, name_scope
from ..graph.keys import GraphKeys
from ..graph.shape import as_shape
from ..kernels.common import convert_to_tensor
from .initializers import glorot_uniform_initializer, zeros_initializer
from .variables import Variable, global_variables, trainable_variables

__all__ = ["AUTO_REUSE", "VariableScope", "variable_scope", "variable_op_scope", "get_variable",
           "get_variable_scope", "make_template", "get_local_variable"]


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


class VariableScope:
    """The settings `get_variable` uses: name prefix, reuse, default initializer/regularizer/dtype."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, dtype=dtypes.float32,
                 name_scope="", constraint=None):
        self._name = name
        self._constraint = constraint
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._dtype = as_dtype(dtype)
        self._name_scope = name_scope

    @property
    def name(self):
        return self._name

    @property
    def original_name_scope(self):
        return self._name_scope

    @property
    def reuse(self):
        return self._reuse

    @property
    def initializer(self):
        return self._initializer

    @property
    def regularizer(self):
        return self._regularizer

    @property
    def dtype(self):
        return self._dtype

    @property
    def constraint(self):
        return self._constraint

    def reuse_variables(self):
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_dtype(self, dtype):
        self._dtype = as_dtype(dtype)

    def get_variable(self, name, shape=None, dtype=None, initializer=None, regularizer=None, reuse=None,
                     trainable=True, collections=None, **kwargs):
        full = f"{self._name}/{name}" if self._name else name
        reuse = self._reuse if reuse is None else reuse
        if kwargs.get("constraint") is None and self._constraint is not None:
            kwargs["constraint"] = self._constraint
        return _store(get_default_graph()).get(
            full, shape, dtype if dtype is not None else self._dtype,
            initializer if initializer is not None else self._initializer,
            regularizer if regularizer is not None else self._regularizer, reuse, trainable, collections, kwargs)


class _VariableStore:
    """The variables made by `get_variable` in one graph, by full name."""

    def __init__(self):
        self.vars = {}
        self.scope_counts = {}

    def get(self, name, shape, dtype, initializer, regularizer, reuse, trainable, collections, kwargs):
        dtype = as_dtype(dtype)
        if name in self.vars:
            if reuse is False or reuse is None:
                raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set reuse=True "
                                 "or reuse=tf.AUTO_REUSE in VarScope?")
            v = self.vars[name]
            if shape is not None and not as_shape(shape).is_compatible_with(v.shape):
                raise ValueError(f"Trying to share variable {name}, but specified shape {as_shape(shape)} and "
                                 f"found shape {v.shape}.")
            if dtype != v.dtype and kwargs.get("_dtype_given", True):
                raise ValueError(f"Trying to share variable {name}, but specified dtype {dtype.name} and found "
                                 f"dtype {v.dtype.name}.")
            return v
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with tf.get_variable(). Did "
                             "you mean to set reuse=tf.AUTO_REUSE in VarScope?")
        init_value = _initial_value(name, shape, dtype, initializer)
        with name_scope(None):  # get_variable ignores name scopes: the variable is named `name`
            v = Variable(init_value, trainable=trainable, collections=collections, name=name,
                         dtype=dtype, chunks=kwargs.get("chunks"), constraint=kwargs.get("constraint"))
        self.vars[name] = v
        if regularizer is not None:
            with name_scope(None), name_scope(name + "/Regularizer/"):
                loss = regularizer(v)
            if loss is not None:
                get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return v


def _initial_value(name, shape, dtype, initializer):
    if initializer is not None and not callable(initializer):
        t = convert_to_tensor(initializer, dtype=dtype if not hasattr(initializer, "dtype") else None)
        if shape is not None and not as_shape(shape).is_compatible_with(t.shape):
            raise ValueError(f"The initializer passed to get_variable({name!r}) has shape {t.shape}, not {shape}")
        return lambda: t
    if shape is None:
        raise ValueError(f"Shape of a new variable ({name}) must be fully defined, but instead was None.")
    shape = as_shape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new variable ({name}) must be fully defined, but instead was {shape}.")
    if initializer is None:
        initializer = glorot_uniform_initializer() if dtype.is_floating else zeros_initializer()
    if isinstance(initializer, type):
        initializer = initializer(dtype=dtype)
    return lambda: initializer(shape.as_list(), dtype=dtype)


def _store(graph):
    store = getattr(graph, "_variable_store", None)
    if store is None:
        store = graph._variable_store = _VariableStore()
    return store


def get_variable_scope():
    """The current VariableScope of the default graph."""
    g = get_default_graph()
    stack = g._variable_scope_stack
    if not stack:
        stack.append(VariableScope(False))
    return stack[-1]


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=True,
                 collections=None, caching_device=None, partitioner=None, validate_shape=True,
                 use_resource=None, custom_getter=None, constraint=None, **kwargs):
    """Gets an existing variable under the current variable scope or creates a new one.

    Raises ValueError when creating an existing name without reuse or reusing a missing one.
    """
    scope = get_variable_scope()
    if dtype is None:
        kwargs["_dtype_given"] = False
    if constraint is not None:
        kwargs["constraint"] = constraint
    return scope.get_variable(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                              trainable=trainable, collections=collections, **kwargs)


def get_local_variable(name, shape=None, dtype=None, initializer=None, **kwargs):
    return get_variable(name, shape, dtype, initializer, trainable=False,
                        collections=[GraphKeys.LOCAL_VARIABLES], **kwargs)


@contextlib.contextmanager
def variable_scope(name_or_scope=None, default_name=None, values=None, initializer=None, regularizer=None,
                   caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None,
                   use_resource=None, constraint=None, auxiliary_name_scope=True):
    """Opens a variable scope (and a name scope for ops), as TF1's `tf.variable_scope`.

    reuse: None (inherit), True, or AUTO_REUSE; a reusing parent makes every child reuse.
    """
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if reuse is False:
        reuse = None
    g = get_default_graph()
    parent = get_variable_scope()
    store = _store(g)
    if isinstance(name_or_scope, VariableScope):
        full = name_or_scope.name
        ns_name = name_or_scope.original_name_scope
        base_reuse = name_or_scope.reuse
        defaults = name_or_scope
    else:
        if name_or_scope is None:
            prefix = f"{parent.name}/" if parent.name else ""
            base = prefix + default_name
            count = store.scope_counts.get(base, 0)
            store.scope_counts[base] = count + 1
            local = default_name if count == 0 else f"{default_name}_{count}"
        else:
            local = name_or_scope
            base = (f"{parent.name}/" if parent.name else "") + local
            store.scope_counts[base] = store.scope_counts.get(base, 0) + 1
        full = (f"{parent.name}/" if parent.name else "") + local
        ns_name = None
        base_reuse = None
        defaults = parent
    # TF1: an explicit True/AUTO_REUSE wins; otherwise the parent's (or captured scope's) flag.
    inherited = parent.reuse or base_reuse
    new_reuse = reuse if reuse else (inherited if inherited else False)

    @contextlib.contextmanager
    def open_name_scope():
        if not auxiliary_name_scope:
            yield g.get_name_scope() + "/" if g.get_name_scope() else ""
        elif ns_name is not None:
            with g.name_scope(ns_name) as s:
                yield s
        else:
            local_name = full.rsplit("/", 1)[-1]
            with name_scope(local_name) as s:
                yield s

    with open_name_scope() as ns:
        scope = VariableScope(
            new_reuse, full,
            initializer=initializer if initializer is not None else defaults.initializer,
            regularizer=regularizer if regularizer is not None else defaults.regularizer,
            dtype=dtype if dtype is not None else defaults.dtype,
            name_scope=ns, constraint=constraint if constraint is not None else defaults.constraint)
        g._variable_scope_stack.append(scope)
        # TF1: leaving a scope opened by name resets the default-name counters of its sub-scopes, so
        # `variable_scope("gen", reuse=AUTO_REUSE)` entered again makes `gen/dense` again (not
        # `gen/dense_1`); a captured scope (make_template's later calls) restores them as they were
        counts = dict(store.scope_counts) if isinstance(name_or_scope, VariableScope) else None
        try:
            yield scope
        finally:
            g._variable_scope_stack.pop()
            if counts is not None:
                store.scope_counts = counts
            else:
                for key in store.scope_counts:
                    if key.startswith(full + "/"):
                        store.scope_counts[key] = 0


def variable_op_scope(values, name_or_scope, default_name=None, **kwargs):
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)


class Template:
    """`func` wrapped so that its first call creates variables and later calls reuse them."""

    def __init__(self, name, func, create_scope_now=False, unique_name=None):
        self._name = name
        self._func = func
        self._unique_name = unique_name
        self._scope = None
        self._variables_created = False
        if create_scope_now:
            with variable_scope(unique_name, default_name=name) as vs:
                self._scope = vs

    @property
    def name(self):
        return self._name

    @property
    def variable_scope(self):
        return self._scope

    @property
    def variable_scope_name(self):
        return self._scope.name if self._scope is not None else None

    def __call__(self, *args, **kwargs):
        if self._scope is None:
            with variable_scope(self._unique_name, default_name=self._name) as vs:
                self._scope = vs
                out = self._func(*args, **kwargs)
            self._variables_created = True
            return out
        if not self._variables_created:
            with variable_scope(self._scope):
                out = self._func(*args, **kwargs)
            self._variables_created = True
            return out
        with variable_scope(self._scope, reuse=True):
            return self._func(*args, **kwargs)

    @property
    def trainable_variables(self):
        return trainable_variables(self._scope.name + "/") if self._scope else []

    @property
    def global_variables(self):
        return global_variables(self._scope.name + "/") if self._scope else []


def make_template(name_, func_, create_scope_now_=False, unique_name_=None, custom_getter_=None, **kwargs):
    """Wraps `func_` so that all its calls share variables (TF1's `tf.make_template`)."""
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now_, unique_name_)


