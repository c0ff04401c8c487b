"""Graphs inside eager mode: `defun` (a Python function traced once per input signature into a
graph, then run through a Session's cached plan) and the executor's fallback for ops with no
whole-array kernel (a one-op graph run in a Session).

A traced graph captures what the function reads from outside: an eager tensor (whose value never
changes) becomes a constant, an eager variable a graph variable whose value is loaded into the
function's Session before each call and copied back into the eager variable after a call that
assigned it.
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np

from ..graph.dtypes import as_dtype
from ..graph.graph import Graph, executing_eagerly
from ..graph.ops import Tensor
from ..graph.registry import OpState, get_opdef
from ..kernels.array_ops import placeholder
from ..kernels.state_ops import variable_op
from ..schedule.session import Session
from .context import EagerGraph, context
from .tape import flatten, pack_as
from .tensor import EagerTensor, HandleTensor

__all__ = ["defun", "function", "Function", "run_single_op"]


def _to_eager(value, dtype):
    value = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if value.dtype != dtype.np_dtype:
        value = value.astype(dtype.np_dtype)
    return EagerTensor.make(value, dtype, context()._anon)


def run_single_op(ctx, op_type, inputs, attrs, name):
    """Runs one op with no whole-array kernel as a graph in a Session; its outputs as eager tensors."""
    opdef = get_opdef(op_type)
    if opdef.traits.must_feed:
        raise RuntimeError(f"tf.placeholder() is not compatible with eager execution ({op_type!r})")
    if opdef.state is OpState.HOST:
        raise RuntimeError(f"Op {op_type!r} runs in a Session only: it is not compatible with eager execution")
    g = Graph()
    with g.as_default():
        phs = [placeholder(t.dtype, t.shape) for t in inputs]
        op = g.create_op(op_type, phs, attrs, name=name)
    outs = op.outputs
    result_op = ctx._anon.__class__(ctx, name, op_type, inputs, attrs, (), "", opdef, -1)
    if outs:
        with Session(graph=g) as sess:
            values = sess.run(outs, dict(zip(phs, [t.numpy() for t in inputs])))
        result_op._outputs = tuple(_to_eager(v, t.dtype) for v, t in zip(values, outs))
    else:
        with Session(graph=g) as sess:
            sess.run(op, dict(zip(phs, [t.numpy() for t in inputs])))
    return result_op


EagerGraph._single_op_runner = staticmethod(run_single_op)


class _TraceGraph(Graph):
    """The graph a defun traces into: eager tensors read from outside are fed, variables loaded."""

    def __init__(self):
        super().__init__()
        self.variables = []  # (slot, graph handle)
        self._by_id = {}
        self._last_use = {}  # captured variable op -> the last op made that used it

    def create_op(self, op_type, inputs, attrs=None, name=None, default_name=None):
        """As Graph's, with TF's automatic control dependencies: the ops using one captured variable
        run in the order the function made them (an assign, then the read after it)."""
        op = super().create_op(op_type, inputs, attrs, name=name, default_name=default_name)
        for t in op.inputs:
            if t.op in self._last_use:
                prev = self._last_use[t.op]
                if prev is not None and prev is not op and prev not in op.control_inputs:
                    op._add_control_input(prev)
                self._last_use[t.op] = op
        return op

    def _capture_eager(self, t):
        hit = self._by_id.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        if not isinstance(t, HandleTensor):  # an eager tensor's value never changes: a constant
            return super()._capture_eager(t)
        with self.as_default(), self.name_scope(None):
            inner = variable_op(t.shape, t.dtype, name=f"captured_{len(self.variables)}/")
        self.variables.append((t._slot, inner))
        self._by_id[id(t)] = (t, inner)
        self._last_use[inner.op] = None
        return inner


class _Traced:
    def __init__(self, fn, args, kwargs):
        g = _TraceGraph()
        flat = flatten((args, kwargs))
        self.params = []
        leaves = []
        with g.as_default():
            for v in flat:
                if isinstance(v, (EagerTensor, np.ndarray)):
                    ph = placeholder(v.dtype if isinstance(v, EagerTensor) else _dtype(v), tuple(np.shape(v)))
                    self.params.append(ph)
                    leaves.append(ph)
                else:
                    leaves.append(v)
            a, k = pack_as((args, kwargs), leaves)
            out = fn(*a, **k)
        self.structure = out
        self.outputs = [t for t in flatten(out) if isinstance(t, Tensor)]
        self.graph = g
        self.assigned = [(slot, h) for slot, h in g.variables
                         if any(c.op_def.state in (OpState.ASSIGN, OpState.UPDATE) for c in h.consumers())]
        self.session = Session(graph=g)
        # the function's effects run with it, as in TF's functions: every assign it made
        self.effects = [op for op in g.get_operations()
                        if op.op_def.state in (OpState.ASSIGN, OpState.UPDATE, OpState.SINK)]
        self.fetches = list(self.outputs)
        self.var_names = [(slot, h.op.name) for slot, h in g.variables]
        self.assigned_names = [(slot, h.op.name) for slot, h in self.assigned]

    def __call__(self, flat_args):
        sess = self.session
        for slot, name in self.var_names:
            sess.load_variable(name, slot.value)
        feeds = {ph: (v._v if isinstance(v, EagerTensor) else v) for ph, v in zip(self.params, flat_args)}
        values = sess.run([self.fetches, self.effects], feeds)[0] if self.fetches or self.effects else []
        for slot, name in self.assigned_names:
            slot.value = sess.variables.host_value(name)
        it = iter(_to_eager(v, t.dtype) for v, t in zip(values, self.outputs))
        return pack_as(self.structure, [next(it) if isinstance(x, Tensor) else x for x in flatten(self.structure)])


def _dtype(v):
    return as_dtype(v.dtype)


def _signature(flat):
    key = []
    for v in flat:
        if isinstance(v, EagerTensor):
            key.append(("T", v.dtype.name, tuple(v.shape.as_list())))
        elif isinstance(v, np.ndarray):
            key.append(("A", str(v.dtype), v.shape))
        else:
            try:
                hash(v)
                key.append(("P", v))
            except TypeError:
                key.append(("O", id(v)))
    return tuple(key)


def defun(func):
    """`func` traced once per input signature (dtypes and shapes of tensor arguments, values of the
    others) into a graph, and run through a Session's cached plan (TF1.5's `tfe.defun`). In graph
    mode the function is called as it is."""

    cache = {}

    def call(*args, **kwargs):
        if not executing_eagerly():
            return func(*args, **kwargs)
        flat = flatten((args, kwargs))
        key = _signature(flat)
        traced = cache.get(key)
        if traced is None:
            traced = cache[key] = _Traced(func, args, kwargs)
        return traced([v for v in flat if isinstance(v, (EagerTensor, np.ndarray))])

    call.__name__ = getattr(func, "__name__", "defun")
    call.__doc__ = func.__doc__
    call.python_function = func
    return call


# ---- tf.function (TF 1.15) -----------------------------------------------------------------------


class Function:
    """What `tf.function` makes of a Python function (TF 1.15's `def_function.Function`). Called
    eagerly it is traced once per input signature into a graph and run as a cached plan
    (`defun`); in graph mode it is called as it is, its ops added to the caller's graph (TF adds
    one call op running the same graph: the values are the same). `input_signature` (TensorSpecs)
    fixes the accepted arguments: each is converted to its spec's dtype and checked against its
    shape, ValueError/TypeError in TF's words otherwise, and one trace serves every call.

    Autograph: TF rewrites Python `if`/`while` on tensors into `cond`/`while_loop` while tracing.
    Here, a function whose trace branches on a tensor's value (TypeError: a tensor used as a
    Python bool) runs op by op eagerly from then on, which gives the values autograph's graph
    would; in graph mode such a function raises that TypeError (write `tf.cond`)."""

    def __init__(self, python_function, input_signature=None, autograph=True):
        self._python_function = python_function
        self._input_signature = None if input_signature is None else tuple(input_signature)
        self._autograph = autograph
        self._traced = defun(python_function)
        self._eager_only = False
        functools.update_wrapper(self, python_function)

    python_function = property(lambda self: self._python_function)
    input_signature = property(lambda self: self._input_signature)

    def __get__(self, instance, owner):  # a decorated method: bound to its instance, traces cached per instance
        if instance is None:
            return self
        bound = instance.__dict__.get(("tf.function", id(self)))
        if bound is None:
            bound = Function(self._python_function.__get__(instance, owner), self._input_signature,
                             self._autograph)
            with contextlib.suppress(AttributeError, TypeError):
                instance.__dict__[("tf.function", id(self))] = bound
        return bound

    def __call__(self, *args, **kwargs):
        if self._input_signature is not None:
            args = self._conform(args, kwargs)
        if not executing_eagerly() or self._eager_only or context()._tapes:
            # (under a GradientTape the ops run one by one, so the tape records them: TF records the
            # function's call op with its gradient; the values are the same)
            return self._python_function(*args, **kwargs)
        try:
            return self._traced(*args, **kwargs)
        except TypeError as e:
            if not (self._autograph and "as a Python `bool`" in str(e)):
                raise
        self._eager_only = True
        return self._python_function(*args, **kwargs)

    def _conform(self, args, kwargs):
        specs = self._input_signature
        if kwargs or len(args) != len(specs):
            raise TypeError(f"{self.__name__}() takes {len(specs)} positional argument(s) as its input_signature "
                            f"says, got {len(args)}{' and keyword arguments ' + str(sorted(kwargs)) if kwargs else ''}")
        out = []
        for i, (value, spec) in enumerate(zip(args, specs)):
            dtype, shape = as_dtype(spec.dtype), spec.shape
            if isinstance(value, Tensor) or isinstance(value, EagerTensor):
                if value.dtype.base_dtype != dtype.base_dtype:
                    raise ValueError(self._incompatible(args))
                got = value.shape
            else:
                try:
                    arr = np.asarray(value, dtype=dtype.np_dtype)
                except (TypeError, ValueError) as e:
                    raise TypeError(f"{self.__name__}: argument {i} ({value!r}) cannot be converted to "
                                    f"{dtype.name} as its input_signature requires") from e
                if np.asarray(value).dtype.kind != arr.dtype.kind and not (
                        np.asarray(value).dtype.kind in "iub" and arr.dtype.kind in "iuf"):
                    raise ValueError(self._incompatible(args))
                value, got = arr, arr.shape
            if not _shape_fits(got, shape):
                raise ValueError(self._incompatible(args))
            out.append(value if not isinstance(value, np.ndarray) or not executing_eagerly()
                       else _to_eager(value, dtype))
        return tuple(out)

    def _incompatible(self, args):
        return (f"Python inputs incompatible with input_signature:\n  inputs: ({', '.join(map(repr, args))})\n"
                f"  input_signature: ({', '.join(map(repr, self._input_signature))})")

    def get_concrete_function(self, *args, **kwargs):
        """The function for one input signature (the Function's own when it has one)."""
        return _ConcreteFunction(self, args, kwargs)


class _ConcreteFunction:
    """`Function.get_concrete_function(...)`: callable with tensors matching the signature it was
    made for, or, with no arguments, with the Function's `input_signature`."""

    def __init__(self, function, args, kwargs):
        if not args and not kwargs and function.input_signature is None:
            raise ValueError("get_concrete_function() needs arguments (or TensorSpecs) when the tf.function "
                             "has no input_signature")
        self._function = function
        self.structured_input_signature = (tuple(args) or function.input_signature, dict(kwargs))

    def __call__(self, *args, **kwargs):
        return self._function(*args, **kwargs)


def _dims(shape):
    """[dims or None] of a TensorShape, tuple or list; None for an unknown rank."""
    if isinstance(shape, (tuple, list)):
        return [None if d is None else int(d) for d in shape]
    return None if getattr(shape, "ndims", None) is None else shape.as_list()


def _shape_fits(got, want):
    g, w = _dims(got), _dims(want)
    return g is None or w is None or (len(g) == len(w) and all(a is None or b is None or a == b
                                                                  for a, b in zip(g, w)))


def function(func=None, input_signature=None, autograph=True, experimental_autograph_options=None,
             experimental_relax_shapes=False, experimental_compile=None):
    """TF 1.15's `tf.function`: a decorator (with or without arguments) making a `Function`."""
    if func is None:
        return lambda f: Function(f, input_signature, autograph)
    return Function(func, input_signature, autograph)
