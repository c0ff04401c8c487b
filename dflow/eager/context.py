"""The eager executor: a `Graph` whose `create_op` runs the op's registered kernel at once.

`dflow/graph` keeps a stack of executors (`push_executor`); while one is installed and no graph is
entered with `as_default()`, it is the default graph, so every op function, every gradient rule
and every composite runs eagerly through the same registry as graph mode: the op's shape rule
checks its inputs (its ValueError/TypeError becomes the op's InvalidArgumentError, as TF's eager
errors), its `eager` kernel computes the value on the inputs' array namespace (numpy, or cupy for
tensors moved with `.gpu()`), and the outputs come back as `EagerTensor`s. Ops with only a Dask
lowering (Zarr reads and sinks) run as a one-op graph in a Session.

Variables: a `VariableV2` op makes a `HandleTensor` over a `Slot`; ops of `state="assign"` or
`"update"` (Assign, AssignAdd, scatters: everything optimizers use) write their result into the
slot of their input 0, so `dflow.Variable` and every optimizer work unchanged.

Tapes (dflow/eager/tape.py) register here: an op is recorded, with an `Operation` holding its
inputs and outputs, only while a tape watches one of its inputs; otherwise the outputs share one
anonymous op and keep no history.
"""

from __future__ import annotations

import contextlib
import random
import weakref

import numpy as np

from ..errors import InvalidArgumentError, UnimplementedError
from ..graph import graph as graph_mod
from ..graph.dtypes import DType, as_dtype
from ..graph.evaluate import evaluate, namespace, np_xp
from ..graph.graph import Graph
from ..graph.keys import GraphKeys
from ..graph.ops import Operation, Tensor
from ..graph.registry import OpState, get_opdef
from ..kernels.common import convert_to_tensor
from ..platform.app import run as app_run
from . import tensor as _tensor
from .gpus import gpu_namespace, num_gpus
from .lazy import LazyPlan
from .tensor import EagerTensor, HandleTensor, ReadTensor, Slot

__all__ = ["EagerGraph", "context", "eager_mode", "graph_mode", "enable_eager_execution", "executing_eagerly",
           "to_tensor", "num_gpus", "gpu_namespace"]

_make = EagerTensor.make


class EagerArgumentError(InvalidArgumentError):
    """An op refused its inputs in eager mode (TF's eager InvalidArgumentError), also the Python class
    graph mode raises there (ValueError/TypeError), so callers that catch those still do."""

    def __reduce__(self):  # pickled as the plain InvalidArgumentError
        return (InvalidArgumentError, (self.node_def, None, self.message))


class _ArgValueError(EagerArgumentError, ValueError):
    pass


class _ArgTypeError(EagerArgumentError, TypeError):
    pass


for _cls in (EagerArgumentError, _ArgValueError, _ArgTypeError):  # tracebacks say what TF's say
    _cls.__name__ = _cls.__qualname__ = "InvalidArgumentError"


class _RunCtx:
    """The `ctx=` of a run_state kernel in eager mode: per-op draw counters, the context's seed."""

    __slots__ = ("graph", "op")

    def __init__(self, graph, op):
        self.graph = graph
        self.op = op

    def run_param(self, spec, shape=(), dtype=np.int64):
        kind = spec[0]
        g = self.graph
        if kind == "counter":
            n = g._counters.get(spec[1], 0)
            g._counters[spec[1]] = n + 1
            return n
        if kind == "session_seed":
            return g._session_seed
        if kind == "initialized":
            return any(s.name == spec[1] and s.value is not None for s in g._slots())
        raise UnimplementedError(None, self.op, f"{self.op.type}: per-run value {spec!r} has no meaning in eager mode")


class EagerGraph(Graph):
    """The executor of eager mode (see the module doc)."""

    def __init__(self):
        super().__init__()
        self._anon = Operation(self, "", "EagerValue", (), {}, [], "", None, -1)
        self._tapes = []  # active tapes, innermost last (dflow/eager/tape.py)
        self._counters = {}
        self._session_seed = random.getrandbits(62)
        self._variable_slots = weakref.WeakSet()
        self._var_names = {}
        self._infer_cache = {}
        self._lazy = None  # the LazyPlan of out-of-core values, made on first use

    def __repr__(self):
        return "<dflow eager context>"

    # ---- running ops -------------------------------------------------------------------------
    def create_op(self, op_type, inputs, attrs=None, name=None, default_name=None):
        try:
            opdef = get_opdef(op_type)
        except KeyError:
            raise ValueError(f"Op type not registered: {op_type!r}") from None
        if attrs is None:
            attrs = {}
        name = name[:-1] if name and name.endswith("/") else (name or default_name or op_type)
        lazy = False
        for t in inputs:
            if not getattr(t, "_is_eager", False):
                _not_eager(t, op_type)
            if t._lazy:
                lazy = True
        state = opdef.state
        if state is not OpState.NONE:
            if state is OpState.VARIABLE:
                return self._new_variable(opdef, name, attrs)
            if state is OpState.SINK and lazy:  # a Zarr sink of a plan: written chunk by chunk, now
                op = self._lazy_plan().build(self, opdef, op_type, inputs, attrs, name)
                for t in op._outputs:
                    t._v  # noqa: B018 - runs the plan
                return op
            if state in (OpState.HOST, OpState.SINK) or opdef.eager is None:
                return self._via_graph(op_type, inputs, attrs, name)
        elif lazy or (opdef.traits.cheap_source and opdef.traits.stateful and not inputs):  # out of core: a plan
            return self._lazy_plan().build(self, opdef, op_type, inputs, attrs, name)
        elif opdef.eager is None:
            return self._via_graph(op_type, inputs, attrs, name)
        # The shape rule checks the inputs and gives the output dtypes (the shapes are the values').
        # Its result is cached per op type, input dtypes and shapes, and attrs: a rule that depends
        # on an input's value (a reshape's target) is then not run again for another value of the
        # same shape, and a failure there is the kernel's, worded by that rule (`evaluate.raise_failure`).
        try:
            key = (op_type, tuple(attrs.items()) if attrs else (), *[(t._dtype, t._v.shape) for t in inputs]) \
                if state is OpState.NONE else None
            dtypes = self._infer_cache.get(key) if key is not None else None
        except TypeError:  # an unhashable attr (a list, an array): no caching
            key = dtypes = None
        if dtypes is None:
            try:
                outs = opdef.infer(inputs if type(inputs) is list else list(inputs), attrs)
            except ValueError as e:
                raise _ArgValueError({"name": name, "op": op_type}, None, f"{e} [Op:{op_type}]") from None
            except TypeError as e:
                raise _ArgTypeError({"name": name, "op": op_type}, None, f"{e} [Op:{op_type}]") from None
            if type(outs) is tuple and len(outs) == 2 and type(outs[0]) is not tuple:
                outs = (outs,)
            dtypes = tuple(dt if dt.__class__ is DType else as_dtype(dt) for _, dt in outs)
            if key is not None:
                if len(self._infer_cache) > 4096:
                    self._infer_cache.clear()
                self._infer_cache[key] = dtypes
        if state is OpState.ASSIGN:  # overwrites its variable without reading it
            values = [None] + [t._v for t in inputs[1:]]
        else:
            values = [t._v for t in inputs]
        xp = None
        if self._device_stack:
            xp = namespace(values)
            if xp is np_xp:
                xp, values = self._placed(xp, values)
        op = Operation(self, name, op_type, inputs, attrs, (), "", opdef, -1)
        outs = evaluate(op, values, dtypes, xp, _RunCtx(self, op) if opdef.traits.run_state else None)
        tensors = [_make(outs[0], dtypes[0], self._anon)] if len(outs) == 1 else \
            [_make(v, dt, self._anon) for dt, v in zip(dtypes, outs)]
        if state is not OpState.NONE:  # Assign, AssignAdd, scatters: the result is the variable's new value
            slot = inputs[0]._slot
            slot.value = tensors[0]._v
        op._outputs = tuple(tensors)
        if self._tapes and state is OpState.NONE:
            self._offer(op, values, tensors)
        return op

    def _offer(self, op, values, tensors):
        """Hands an op that ran to the active tapes; a variable's handle among its inputs becomes a
        ReadTensor of the value the op read."""
        if any(t.__class__ is HandleTensor for t in op._inputs):
            op._inputs = tuple(ReadTensor.make_read(v, t._dtype, t._slot, self._anon) if t.__class__ is HandleTensor
                               else t for t, v in zip(op._inputs, values))
        override = self._gradient_override_stack[-1]
        if override:
            op._gradient_override = override.get(op._type)
        recorded = False
        for tape in self._tapes:
            recorded = tape._record(op) or recorded
        if recorded:  # the outputs know their op (rules may look at their inputs' producers)
            for t in tensors:
                t._op = op

    def lazy_value(self, array, dtype=None):
        """The executor's protocol for `convert_to_tensor` of a dask array: a LazyTensor."""
        return self._lazy_plan().from_dask(self, array, dtype)

    def _lazy_plan(self):
        if self._lazy is None:
            self._lazy = LazyPlan()
        return self._lazy

    def _placed(self, xp, values):
        """Inputs moved to the GPU when ops are placed on one (`with tf.device("/gpu:0")`)."""
        device = self._current_device()
        if "GPU" not in device.upper():
            return xp, values
        try:
            cp = gpu_namespace(0)
        except InvalidArgumentError:
            return xp, values  # TF1 eager places on the CPU when there is no GPU
        values = [None if v is None else cp.asarray(v) for v in values]
        return namespace([v for v in values if v is not None] or [cp.zeros(1)]), values

    def _new_variable(self, opdef, name, attrs):
        n = self._var_names.get(name, 0)  # unique, so optimizer slots and savers tell variables apart
        self._var_names[name] = n + 1
        if n:
            name = f"{name}_{n}"
        op = Operation(self, name, "VariableV2", (), attrs, (), "", opdef, -1)
        slot = Slot(name)
        self._variable_slots.add(slot)
        op._outputs = (HandleTensor.make_handle(slot, as_dtype(attrs["dtype"]), attrs["shape"], op),)
        return op

    def _slots(self):
        return list(self._variable_slots)

    def _via_graph(self, op_type, inputs, attrs, name):
        """An op with no whole-array kernel (a Zarr read or sink), or a host op: run as a one-op
        graph in a Session, its inputs fed (function.py installs `_single_op_runner`)."""
        return self._single_op_runner(self, op_type, inputs, attrs, name)

    _single_op_runner = None  # set by dflow/eager/function.py
    compute_gradients = None  # set by dflow/eager/tape.py: (loss_fn, var_list, grad_loss) -> (loss, [(g, v)])

    # ---- what TF's eager context does with graph structure ----------------------------------
    def reset_names(self):
        """Variable names count from 0 again (`tf.keras.backend.clear_session` in eager mode)."""
        self._var_names.clear()

    def unique_name(self, name, mark_as_used=True):
        return self._name_stack + "/" + name if self._name_stack else name  # eager ops have no unique names

    @contextlib.contextmanager
    def name_scope(self, name):
        old = self._name_stack
        if not name:
            new = ""
        elif name[-1] == "/":
            new = name[:-1]
        else:
            new = old + "/" + name if old else name
        self._name_stack = new
        try:
            yield new + "/" if new else ""
        finally:
            self._name_stack = old

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        yield  # ops run in program order: nothing to wait for

    def add_to_collection(self, name, value):
        handle = getattr(value, "_handle", None)
        if isinstance(handle, HandleTensor):
            handle._slot.variable = value
            if name == GraphKeys.TRAINABLE_VARIABLES:
                handle._slot.trainable = True
        super().add_to_collection(name, value)

    def finalize(self):
        raise RuntimeError("An eager context cannot be finalized")


def _not_eager(t, op_type):
    if isinstance(t, Tensor):
        raise ValueError(f"Tensor {t.name!r} of a graph cannot be an input of op {op_type!r} in eager "
                         "mode: build graph tensors inside `with graph.as_default():` and run them in "
                         "a Session")
    raise TypeError(f"Input to op {op_type!r} must be a Tensor, got {type(t).__name__}")


# ---- modes ------------------------------------------------------------------------------------

_context = None  # the process's eager context (one, as TF's)


def context():
    """The process's eager context (made on first use)."""
    global _context
    if _context is None:
        _context = EagerGraph()
        _tensor._ANON[0] = _context._anon
    return _context


def executing_eagerly():
    """True when ops run at once (eager mode, outside any graph entered with `as_default()`)."""
    return graph_mod.executing_eagerly()


@contextlib.contextmanager
def eager_mode():
    """Ops created inside run at once in this thread (TF's `tfe.eager_mode()`); the mode before is
    restored after."""
    ctx = context()
    graph_mod.push_executor(ctx)
    try:
        yield
    finally:
        graph_mod.pop_executor(ctx)


@contextlib.contextmanager
def graph_mode():
    """Ops created inside build the default graph in this thread (TF's `tfe.graph_mode()`)."""
    graph_mod.push_executor(None)
    try:
        yield
    finally:
        graph_mod.pop_executor(None)


_enabled = False


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """Runs every op at once from now on, for the rest of the process (TF1's
    `tf.enable_eager_execution`). ValueError once a graph op was built, as TF1."""
    global _enabled
    if _enabled:
        return
    if graph_mod.global_graph_has_ops() or graph_mod._default_graph_stack.stack:
        raise ValueError("tf.enable_eager_execution must be called at program startup.")
    graph_mod.push_executor(context(), process_wide=True)
    _enabled = True


def to_tensor(value, dtype=None):
    """`value` as an EagerTensor (TF1's conversion rules)."""
    with eager_mode():
        return convert_to_tensor(value, dtype=dtype)




def in_eager_mode():
    """True in eager mode (TF1.5's `tfe.in_eager_mode`)."""
    return executing_eagerly()


def in_graph_mode():
    """True in graph mode (TF1.5's `tfe.in_graph_mode`)."""
    return not executing_eagerly()


def run(main=None, argv=None):
    """Enables eager execution, then runs `main` as `tf.app.run` does (TF1.5's `tfe.run`)."""
    enable_eager_execution()
    return app_run(main=main, argv=argv)
