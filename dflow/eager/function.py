"""Graphs inside eager mode: `defun` (a Python function traced once per input signature into a
graph, then run through a Session's cached plan) and the executor's fallback for ops with no
whole-array kernel (a one-op graph run in a Session).

A traced graph captures what the function reads from outside: an eager tensor (whose value never
changes) becomes a constant, an eager variable a graph variable whose value is loaded into the
function's Session before each call and copied back into the eager variable after a call that
assigned it.
"""

from __future__ import annotations

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

__all__ = ["defun", "run_single_op"]


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
