"""`tf.contrib.framework`: `arg_scope` / `add_arg_scope`, and the variable helpers slim uses
(`variable`, `model_variable`, `get_variables`, `get_variables_by_name`, ...), as in TF 1.15.

`arg_scope([f, g], k=v)` gives every call of the decorated functions f and g inside it the
default `k=v` (explicit arguments win; inner scopes update outer ones). The scope stack is
module-global, as TF's.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re

from ..graph import dtypes
from ..graph.graph import get_collection
from ..graph.keys import GraphKeys
from ..state.scope import VariableScope, get_variable
from ..state.variables import Variable
from ..tf1_names import missing_attribute
from ..train.schedules import create_global_step, get_global_step, get_or_create_global_step

__all__ = ["arg_scope", "add_arg_scope", "current_arg_scope", "has_arg_scope", "arg_scoped_arguments",
           "arg_scope_func_key", "variable", "model_variable", "local_variable", "get_variables",
           "get_model_variables", "get_trainable_variables", "get_local_variables", "get_variables_by_name",
           "get_variables_by_suffix", "get_unique_variable", "get_variables_to_restore", "filter_variables",
           "get_global_step", "get_or_create_global_step", "create_global_step"]

_ARGSTACK = [{}]
_DECORATED_OPS = {}


# ---- arg_scope -----------------------------------------------------------------------------------


def arg_scope_func_key(op):
    return getattr(op, "_key_op", str(op))


def current_arg_scope():
    """The innermost scope's {function key: {argument: default}}."""
    return _ARGSTACK[-1]


def has_arg_scope(func):
    """Whether `func` was decorated with `add_arg_scope`."""
    return arg_scope_func_key(func) in _DECORATED_OPS


def arg_scoped_arguments(func):
    """The argument names `arg_scope` may set for the decorated `func`."""
    return _DECORATED_OPS[arg_scope_func_key(func)]


def add_arg_scope(func):
    """Decorates `func` so that the enclosing `arg_scope`s supply its keyword defaults."""
    key = arg_scope_func_key(func)

    @functools.wraps(func)
    def func_with_args(*args, **kwargs):
        scope = current_arg_scope()
        if key in scope:
            merged = dict(scope[key])
            merged.update(kwargs)
            kwargs = merged
        return func(*args, **kwargs)

    try:
        params = inspect.signature(func).parameters.values()
        _DECORATED_OPS[key] = [p.name for p in params if p.default is not inspect.Parameter.empty]
    except (TypeError, ValueError):
        _DECORATED_OPS[key] = []
    func_with_args._key_op = key
    return func_with_args


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    """Sets keyword defaults of the listed `add_arg_scope` functions for the calls inside it.

    list_ops_or_scope: a list/tuple of decorated functions (ValueError for an undecorated one), or
    a scope dict yielded by an earlier `arg_scope` to re-enter (then no kwargs: ValueError).
    TypeError for anything else.
    """
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("When attempting to re-use a scope by suppling a dictionary, kwargs must be empty.")
        scope = dict(list_ops_or_scope)
    else:
        if not isinstance(list_ops_or_scope, (list, tuple)):
            raise TypeError("list_ops_or_scope must either be a list/tuple or reused scope (i.e. dict)")
        scope = dict(current_arg_scope())
        for op in list_ops_or_scope:
            if not has_arg_scope(op):
                name = getattr(op, "__name__", repr(op))
                raise ValueError(f"{getattr(op, '__module__', '?')}.{name} is not decorated with @add_arg_scope")
            key = arg_scope_func_key(op)
            merged = dict(scope.get(key, {}))
            merged.update(kwargs)
            scope[key] = merged
    _ARGSTACK.append(scope)
    try:
        yield scope
    finally:
        _ARGSTACK.pop()


# ---- variables -----------------------------------------------------------------------------------


def _unique(items):
    out = []
    for i in items:
        if i not in out:
            out.append(i)
    return out


@add_arg_scope
def variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=True, collections=None,
             caching_device=None, device=None, partitioner=None, custom_getter=None, use_resource=None,
             synchronization=None, aggregation=None):
    """`get_variable` in the collections given (default: GLOBAL_VARIABLES), TRAINABLE if trainable."""
    collections = _unique(collections if collections is not None else [GraphKeys.GLOBAL_VARIABLES])
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                        trainable=trainable, collections=collections)


@add_arg_scope
def model_variable(name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, trainable=True,
                   collections=None, caching_device=None, device=None, partitioner=None, custom_getter=None,
                   use_resource=None, synchronization=None, aggregation=None):
    """A `variable` also in MODEL_VARIABLES (what slim's layers make)."""
    collections = list(collections or []) + [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    return variable(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                    trainable=trainable, collections=collections)


@add_arg_scope
def local_variable(initial_value, validate_shape=True, name=None, use_resource=None):
    """A non-trainable variable in LOCAL_VARIABLES holding `initial_value`."""
    return Variable(initial_value, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                    validate_shape=validate_shape, name=name)


def get_variables(scope=None, suffix=None, collection=GraphKeys.GLOBAL_VARIABLES):
    """Variables of `collection` whose names match `scope` (a regex from the start, or a
    VariableScope) and end with `suffix`."""
    if isinstance(scope, VariableScope):
        scope = scope.name
    if suffix is not None:
        if ":" not in suffix:
            suffix += ":"
        scope = (scope or "") + ".*" + suffix
    return get_collection(collection, scope)


def get_model_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.MODEL_VARIABLES)


def get_local_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.LOCAL_VARIABLES)


def get_trainable_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.TRAINABLE_VARIABLES)


def get_variables_by_suffix(suffix, scope=None):
    return get_variables(scope=scope, suffix=suffix)


def get_variables_by_name(given_name, scope=None):
    """Global variables whose last name component is `given_name` (`weights` finds `fc/weights:0`)."""
    suffix = "/" + given_name + ":|^" + given_name + ":"
    return get_variables(scope=scope, suffix=suffix)


def get_unique_variable(var_op_name):
    """The one global variable whose op is named `var_op_name`; ValueError if none or several."""
    candidates = get_variables(scope=var_op_name)
    if not candidates:
        raise ValueError(f"Couldn't find variable {var_op_name}")
    for candidate in candidates:
        if candidate.op.name == var_op_name:
            return candidate
    raise ValueError(f"Variable {var_op_name} does not uniquely identify a variable")


def get_variables_to_restore(include=None, exclude=None):
    """Global variables under the `include` scopes (all by default) and not under `exclude`."""
    if include is None:
        chosen = get_variables()
    else:
        chosen = [v for s in include for v in get_variables(s)]
    excluded = {id(v) for s in (exclude or []) for v in get_variables(s)}
    return [v for v in chosen if id(v) not in excluded]


def filter_variables(var_list, include_patterns=None, exclude_patterns=None, reg_search=True):
    """The variables of `var_list` whose names match an include pattern and no exclude pattern."""
    def matches(name, patterns):
        return any((re.search(p, name) if reg_search else re.match(p, name)) for p in patterns)

    out = list(var_list)
    if include_patterns is not None:
        out = [v for v in out if matches(v.op.name, include_patterns)]
    if exclude_patterns is not None:
        out = [v for v in out if not matches(v.op.name, exclude_patterns)]
    return out


__getattr__ = missing_attribute(__name__)
