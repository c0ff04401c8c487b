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

Flags: ``elementwise`` (output chunk = function of input chunks at the same index, with numpy
broadcasting: fusable); ``run_state`` (the kernels take ``ctx=`` for per-run state such as a
random op's draw counter); ``stateful`` (never constant-folded or deduplicated).
``state``: "variable" for an op whose output is a variable's handle (its consumers see the value
the compiler resolves for them: the value at the start of the run, or the latest assign ordered
before them); "assign" for an op whose input 0 is the handle of a variable it overwrites without
reading (its kernel gets None there); "update" for one that reads and writes it (AssignAdd). The
output of both is the variable's new value. "sink": an op writing outside the session (Zarr); its
lowering registers hooks through `ctx.before_run/on_success/on_publish/on_failure`, and it always runs on Dask.
"host": an op the Session decides on the host before compiling (cond, while_loop): no kernel; its
``host`` hook (set with `def_host` by `dflow/schedule/host.py`) makes the decision.
``epilogue``: the eager kernel takes ``epilogue=f`` and applies f to each row slab of its single
output while the slab is in cache (the slab written back with f's result, of the same shape and
dtype): the in-process plan runs an elementwise chain that only reads this output that way
(Conv2D + BiasAdd + Relu in one pass; see schedule/fusion.py `epilogue_producers`).
``fold(op)``: the op's value when it is known from static facts alone (`shape` of a fully defined
shape), used by `constant_value`.
``bind(op, known) -> kernel or None``: the eager kernel specialized, once per in-process plan, to
the inputs known when the plan is compiled (`known`: input index -> value; a reshape's target, a
slice's bounds, a reduction's axes, parsed and checked once instead of every run). The kernel takes
`xp` and the other inputs in order; None leaves the op to `eager`. A bound kernel computes what
`eager` would, and `eager` with every input is what reports a failure (the plan runs it again).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable


@dataclass(frozen=True)
class OpDef:
    name: str
    infer: Callable
    eager: Callable | None = None
    lower: Callable | None = None
    grad: Callable | None = None
    elementwise: bool = False
    run_state: bool = False
    stateful: bool = False
    num_outputs: int | None = 1  # None: decided by infer
    fold: Callable | None = None  # fold(op) -> build-time value (numpy) or None
    must_feed: bool = False  # a Placeholder: running it unfed is an error
    state: str | None = None  # "variable" | "assign" | "update": see the module doc
    shape_only: bool = False  # reads only its input's shape (OnesLike, Shape): not a value dependency
    host: Callable | None = None  # host(h, op): decides a state="host" op (see schedule/host.py)
    cheap_source: bool = False  # a source that is cheap to read again (a feed, a Zarr read, a constant)
    takes_whole: bool = False  # takes inputs of unknown rank as whole values (py_func, identity)
    takes_fused: bool = False  # its lowering may take an elementwise chain unbuilt (`ctx.fused`)
    epilogue: bool = False  # its eager kernel takes `epilogue=` (see the module doc)
    sparse_grad: bool = False  # its gradient rule takes an IndexedSlices output gradient (Identity)
    row_patch: bool = False  # a row scatter into a variable: its eager value may be a RowPatch (state_ops)
    reads_rows: bool = False  # may read only some rows of input 0 (a gather along axis 0)
    bind: Callable | None = None  # bind(op, known) -> kernel of the other inputs, or None (module doc)
    # input positions in which an elementwise op is non-decreasing, exactly in floating point (a
    # correctly rounded op), and that give NaN only for a NaN or an infinite operand: a max over a
    # window of its result is then its result on the window's max (the Dask path pools a conv's
    # output before such a chain: compiler `LowerContext.row_tail`)
    monotone: tuple = ()


_REGISTRY: dict[str, OpDef] = {}


def register_op(name, infer, eager=None, lower=None, grad=None, *, elementwise=False, run_state=False,
                stateful=False, num_outputs=1, fold=None, must_feed=False, state=None,
                replace=False, cheap_source=False, takes_whole=False, takes_fused=False, epilogue=False):
    """Registers the OpDef of op type `name`; ValueError if it exists (unless `replace`)."""
    if name in _REGISTRY and not replace:
        raise ValueError(f"Op type {name!r} is already registered")
    if eager is None and lower is None and not must_feed and state != "host":
        raise ValueError(f"Op type {name!r} needs an eager kernel or a lowering")
    opdef = OpDef(name, infer, eager, lower, grad, elementwise, run_state, stateful, num_outputs, fold,
                  must_feed, state, cheap_source=cheap_source, takes_whole=takes_whole,
                  takes_fused=takes_fused, epilogue=epilogue)
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
    """Decorator giving host ops (state="host") the hook that decides them on the host before a
    plan is compiled: `fn(h, op)` with `h` the run's host side (schedule/host.py)."""

    def deco(fn):
        for t in op_types:
            _REGISTRY[t] = replace(get_opdef(t), host=fn)
        return fn

    return deco


def shape_only(*op_types):
    """Declares op types that read only their inputs' shapes, never their values."""
    for t in op_types:
        _REGISTRY[t] = replace(get_opdef(t), shape_only=True)


def set_flags(*op_types, **flags):
    """Sets OpDef flags (`cheap_source`, `takes_whole`, `monotone`...) on op types, next to their definitions."""
    for t in op_types:
        _REGISTRY[t] = replace(get_opdef(t), **flags)


def not_differentiable(*op_types):
    """Declares op types whose inputs get no gradient (TF1's `ops.NotDifferentiable`)."""
    def_grad(*op_types)(_no_grad)


def _no_grad(op, *grads):
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
