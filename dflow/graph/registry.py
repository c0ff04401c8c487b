"""The op registry: one `OpDef` per op type, filled by `dflow/kernels`, read by everyone else.

An OpDef is the whole definition of an op type, side by side (as a JAX primitive):

- ``infer(inputs, attrs) -> [(shape, dtype), ...]``: static shapes and dtypes of the outputs, from
  the input `Tensor`s and the op's attrs; raises ValueError/TypeError for impossible inputs.
- ``eager(xp, *arrays, **attrs)``: the kernel on whole arrays (or on chunks, for elementwise ops) of
  the array namespace ``xp`` (numpy or cupy through array_api_compat). Returns an array, or a
  tuple of arrays for multi-output ops.
- ``lower(ctx, *dask_arrays, **attrs)``: the chunked lowering to dask.array. Elementwise ops need
  none: the compiler fuses them and runs their eager kernels chunk by chunk.
- ``grad(op, *output_grads) -> [input_grad or None, ...]``: builds graph ops (autodiff).

``state`` (an `OpState`): how the op touches state the compiler orders — VARIABLE for an op whose
output is a variable's handle (its consumers see the value the compiler resolves for them: the
value at the start of the run, or the latest assign ordered before them); ASSIGN for an op whose
input 0 is the handle of a variable it overwrites without reading (its kernel gets None there);
UPDATE for one that reads and writes it (AssignAdd) — the output of both is the variable's new
value; SINK for an op writing outside the session (Zarr), whose lowering registers hooks through
`ctx.before_run/on_success/on_publish/on_failure` and which always runs on Dask; HOST for an op the
Session decides on the host before compiling (cond, while_loop, a queue, an iterator): no kernel,
its ``host`` hook (set with `def_host`) makes the decision; NONE for every other op.
``fold(op)``: the op's value when it is known from static facts alone (`shape` of a fully defined
shape), used by `constant_value`.
``bind(op, known) -> kernel or None``: the eager kernel specialized, once per in-process plan, to
the inputs known when the plan is compiled (`known`: input index -> value; a reshape's target, a
slice's bounds, a reduction's axes, parsed and checked once instead of every run). The kernel takes
`xp` and the other inputs in order; None leaves the op to `eager`. A bound kernel computes what
`eager` would, and `eager` with every input is what reports a failure (the plan runs it again).
``traits`` (a `Traits`): what the schedulers may assume of the op; each field is documented there.
Registration takes them as keywords (`register_op(..., elementwise=True)`), or later, next to the
op's other definitions, with `set_traits`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Callable


class OpState(Enum):
    """How an op touches state that the compiler must order (see the module doc)."""

    NONE = "none"
    VARIABLE = "variable"
    ASSIGN = "assign"
    UPDATE = "update"
    SINK = "sink"
    HOST = "host"


@dataclass(frozen=True)
class Traits:
    """What the schedulers may assume of an op; all off by default."""

    # output chunk = function of input chunks at the same index, with numpy broadcasting: fusable
    elementwise: bool = False
    run_state: bool = False  # its kernels take `ctx=` for per-run state (a random op's draw counter)
    stateful: bool = False  # never constant-folded or deduplicated
    must_feed: bool = False  # a Placeholder: running it unfed is an error
    shape_only: bool = False  # reads only its inputs' shapes (OnesLike, Shape): not a value dependency
    cheap_source: bool = False  # a source that is cheap to read again (a feed, a Zarr read, a constant)
    takes_whole: bool = False  # takes inputs of unknown rank as whole values (py_func, identity)
    takes_fused: bool = False  # its lowering may take an elementwise chain unbuilt (`ctx.fused`)
    # its eager kernel takes `epilogue=f` and applies f to each row slab of its single output while
    # the slab is in cache (written back with f's result, of the same shape and dtype): the
    # in-process plan runs an elementwise chain that only reads this output that way (Conv2D +
    # BiasAdd + Relu in one pass; see schedule/fusion.py `epilogue_producers`)
    epilogue: bool = False
    sparse_grad: bool = False  # its gradient rule takes an IndexedSlices output gradient (Identity)
    row_patch: bool = False  # a row scatter into a variable: its eager value may be a RowPatch (state_ops)
    reads_rows: bool = False  # may read only some rows of input 0 (a gather along axis 0)
    # input positions in which an elementwise op is non-decreasing, exactly in floating point (a
    # correctly rounded op), and that give NaN only for a NaN or an infinite operand: a max over a
    # window of its result is then its result on the window's max (the Dask path pools a conv's
    # output before such a chain: compiler `LowerContext.row_tail`)
    monotone: tuple = ()


@dataclass(frozen=True)
class OpDef:
    name: str
    infer: Callable
    eager: Callable | None = None
    lower: Callable | None = None
    grad: Callable | None = None
    num_outputs: int | None = 1  # None: decided by infer
    state: OpState = OpState.NONE
    traits: Traits = field(default_factory=Traits)
    fold: Callable | None = None  # fold(op) -> build-time value (numpy) or None
    bind: Callable | None = None  # bind(op, known) -> kernel of the other inputs, or None
    host: Callable | None = None  # host(h, op): decides a HOST op (see schedule/host.py)


_REGISTRY: dict[str, OpDef] = {}


def register_op(name, infer, eager=None, lower=None, grad=None, *, num_outputs=1, fold=None, state="none",
                replace=False, **traits):
    """Registers the OpDef of op type `name`, with `state` an `OpState` or its value ("assign") and
    `traits` the `Traits` fields it sets (`elementwise=True`); ValueError if the type exists (unless
    `replace`)."""
    if name in _REGISTRY and not replace:
        raise ValueError(f"Op type {name!r} is already registered")
    state, traits = OpState(state), Traits(**traits)
    if eager is None and lower is None and not traits.must_feed and state is not OpState.HOST:
        raise ValueError(f"Op type {name!r} needs an eager kernel or a lowering")
    opdef = OpDef(name, infer, eager, lower, grad, num_outputs, state, traits, fold)
    _REGISTRY[name] = opdef
    return opdef


def def_grad(*op_types):
    """Decorator giving op types their gradient rule `grad(op, *output_grads) -> [input grads]`,
    written next to the ops in their kernel module (as autograd's `defvjp`)."""

    def deco(fn):
        for t in op_types:
            _REGISTRY[t] = replace(get_opdef(t), grad=fn)
        return fn

    return deco


def def_bind(*op_types):
    """Decorator giving op types their `bind(op, known)` (see the module doc), written next to the
    op's eager kernel."""

    def deco(fn):
        for t in op_types:
            _REGISTRY[t] = replace(get_opdef(t), bind=fn)
        return fn

    return deco


def def_host(*op_types):
    """Decorator giving host ops (`OpState.HOST`) the hook that decides them on the host before a
    plan is compiled: `fn(h, op)` with `h` the run's host side (schedule/host.py)."""

    def deco(fn):
        for t in op_types:
            _REGISTRY[t] = replace(get_opdef(t), host=fn)
        return fn

    return deco


def set_traits(*op_types, **traits):
    """Sets `Traits` fields (`shape_only`, `monotone`, `row_patch`...) on op types, next to their
    other definitions."""
    for t in op_types:
        opdef = get_opdef(t)
        _REGISTRY[t] = replace(opdef, traits=replace(opdef.traits, **traits))


def not_differentiable(*op_types):
    """Declares op types whose inputs get no gradient (TF1's `ops.NotDifferentiable`)."""
    def_grad(*op_types)(no_gradient)


def no_gradient(op, *grads):
    """The gradient rule of an op whose inputs get none (`register_op(..., grad=no_gradient)`)."""
    return [None] * len(op.inputs)


def get_opdef(name) -> OpDef:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"No op type {name!r} is registered") from None


def is_registered(name):
    return name in _REGISTRY


def registered_op_types():
    return sorted(_REGISTRY)


# Gradient functions registered by name (`dflow.RegisterGradient`), for gradient_override_map.
_GRADIENTS: dict[str, Callable] = {}


class RegisterGradient:
    """Decorator registering a gradient function under a name (TF1's `tf.RegisterGradient`)."""

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn):
        if self._op_type in _GRADIENTS:
            raise KeyError(f"Registering two gradient with name {self._op_type!r}!")
        _GRADIENTS[self._op_type] = fn
        return fn


def get_registered_gradient(name):
    return _GRADIENTS.get(name)


def unregister_gradient(name):
    """Forgets a gradient registered by name (an eager `custom_gradient` call's, once its op is gone)."""
    _GRADIENTS.pop(name, None)
