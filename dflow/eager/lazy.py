"""Lazy eager tensors: out-of-core values in eager mode.

An eager op whose source is a lazy one (a Zarr array read with `tf.io.read_zarr`: an op with no
inputs flagged `cheap_source` and `stateful`; a dask array converted to a tensor, through the
executor's `lazy_value` protocol), or that takes a `LazyTensor`, is not
computed: the executor builds it into the context's lazy graph (other eager inputs are captured
there as constants) and returns a `LazyTensor` naming the graph tensor. `.numpy()`, printing,
`float()`/`bool()` (a Python branch) or an op that needs the value whole (an assign) materializes
it by running the graph in a Session, so the plan is lowered to Dask chunk by chunk under the
Session's memory budget (process-wide settings: `dflow.config.set_default_session_settings`).
Tapes do not record lazy ops: gradients flow through eager values only.
"""

from __future__ import annotations

import threading

from ..graph.dtypes import as_dtype
from ..graph.graph import Graph
from ..graph.ops import Operation
from ..kernels.array_ops import placeholder
from ..schedule.session import Session
from . import tensor as _tensor
from .tensor import EagerTensor

__all__ = ["LazyTensor", "LazyPlan"]

_new = object.__new__


class LazyPlan:
    """The graph lazy eager tensors are built in, and the Session that materializes them."""

    def __init__(self):
        self.graph = Graph()
        self._session = None
        self._lock = threading.Lock()
        self._feeds = {}  # placeholders of dask arrays -> the arrays

    def build(self, executor, opdef, op_type, inputs, attrs, name):
        g = self.graph
        with g.as_default():
            syms = [t._sym if t._lazy else g._capture_eager(t) for t in inputs]
            op = g.create_op(op_type, syms, attrs, name=name)
        result = Operation(executor, name, op_type, inputs, attrs, (), "", opdef, -1)
        result._outputs = tuple(LazyTensor.make_lazy(t, self) for t in op.outputs)
        return result

    def from_dask(self, executor, array, dtype=None):
        """A LazyTensor of a dask array: a placeholder of the lazy graph, fed with the array (its
        chunks stay lazy: the Session lowers the plan over them)."""
        dtype = as_dtype(dtype if dtype is not None else array.dtype)
        if array.dtype != dtype.np_dtype:
            array = array.astype(dtype.np_dtype)
        with self.graph.as_default():
            ph = placeholder(dtype, array.shape, name="dask_array")
        self._feeds[ph] = array
        return LazyTensor.make_lazy(ph, self)

    def value(self, sym):
        with self._lock:
            if self._session is None:
                self._session = Session(graph=self.graph)
            session = self._session
            feeds = dict(self._feeds)
        return session.run(sym, feeds or None)


class LazyTensor(EagerTensor):
    """An eager tensor whose value is a plan (see the module doc); static shape and dtype known."""

    __slots__ = ("_sym", "_plan", "_value")
    _lazy = True

    @staticmethod
    def make_lazy(sym, plan):
        t = _new(LazyTensor)
        t._op = _tensor._ANON[0]
        t._value_index = 0
        t._dtype = sym.dtype
        t._shape = sym.shape
        t._const_cache = None
        t._sym = sym
        t._plan = plan
        t._value = None
        return t

    @property
    def _v(self):
        v = self._value
        if v is None:
            v = self._value = self._plan.value(self._sym)
        return v

    @property
    def shape(self):
        return self._shape

    def _const(self):
        return None  # not known without computing it

    @property
    def is_lazy(self):
        """True until the value is materialized."""
        return self._value is None
