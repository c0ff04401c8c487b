"""`GradientTape`: records the ops that run on watched tensors, then runs the graph-mode gradient
rules backwards over them (the rules build ops; in eager mode those run at once, and a tape that
is still recording records them too: higher-order gradients by nesting tapes).

A tape watches tensors (by identity; it keeps them alive) and variables (their slots). The executor
(context.py) offers each op that ran to every active tape (`_record`); a tape keeps the op, with its
inputs and outputs, when one input is watched or produced by a recorded op. A variable used as an
op's input is recorded as a `ReadTensor` (its value at that moment) tied to its slot, so a
gradient with respect to the variable is the sum over its reads, and a later assign does not
change what the rules see.
"""

from __future__ import annotations

import contextlib

from ..graph.gradients import _grad_fn, differentiable, gradients, set_skipped
from ..graph.ops import Operation, Tensor
from ..kernels.common import convert_to_tensor
from .context import EagerGraph, context, to_tensor
from .tensor import EagerTensor, HandleTensor, ReadTensor

__all__ = ["GradientTape", "flatten", "pack_as"]


# ---- nested structures (lists, tuples, namedtuples, dicts) ------------------------------------------


def flatten(x):
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [leaf for v in x for leaf in flatten(v)]
    return [x]


def pack_as(structure, flat):
    it = iter(flat)

    def build(s):
        if isinstance(s, dict):
            return {k: build(s[k]) for k in sorted(s)}
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            return type(s)(*[build(v) for v in s])
        if isinstance(s, (list, tuple)):
            return type(s)(build(v) for v in s)
        return next(it)

    return build(structure)


def _slot_of(x):
    """The variable slot of a Variable or handle, else None."""
    handle = getattr(x, "_handle", None)
    if isinstance(handle, HandleTensor):
        return handle._slot
    if isinstance(x, HandleTensor):
        return x._slot
    return None


class GradientTape:
    """Records operations for automatic differentiation (TF's `tf.GradientTape`).

    `persistent`: `gradient` may be called more than once. `watch_accessed_variables`: trainable
    variables read while recording are watched automatically.
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._ids = {}  # id(tensor) -> tensor: watched tensors and outputs of recorded ops
        self._ops = []
        self._reads = []  # (ReadTensor, slot)
        self._slots = {}  # id(slot) -> slot, in the order watched
        self._used = False
        self._recording = False

    # ---- recording ---------------------------------------------------------------------------
    def __enter__(self):
        context()._tapes.append(self)
        self._recording = True
        return self

    def __exit__(self, *exc):
        self._stop()

    def _stop(self):
        tapes = context()._tapes
        if self in tapes:
            tapes.remove(self)
        self._recording = False

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops run inside are not recorded by this tape."""
        if not self._recording:
            raise ValueError("Tape must be recording to stop recording.")
        tapes = context()._tapes
        i = tapes.index(self)
        tapes.remove(self)
        try:
            yield
        finally:
            tapes.insert(min(i, len(tapes)), self)

    def reset(self):
        """Forgets everything recorded so far (the tape keeps recording)."""
        self._ids.clear()
        self._ops.clear()
        self._reads.clear()
        self._slots.clear()

    def watch(self, tensor):
        """Watches a tensor, a variable, or a nested structure of them."""
        for t in flatten(tensor):
            if isinstance(t, Tensor) and not isinstance(t, EagerTensor):
                continue  # a graph tensor (a defun trace): gradients are symbolic there
            slot = _slot_of(t)
            if slot is not None:
                self._slots.setdefault(id(slot), slot)
            elif isinstance(t, EagerTensor):
                self._ids[id(t)] = t
            else:
                raise ValueError(f"GradientTape.watch: expected a Tensor or Variable, got {type(t).__name__} "
                                 f"{t!r}")

    def watched_variables(self):
        """The variables this tape watched (explicitly or by reading them), in order."""
        return tuple(s.variable for s in self._slots.values() if s.variable is not None)

    def _record(self, op):
        ids = self._ids
        hit = False
        for t in op._inputs:
            if id(t) in ids:
                hit = True
            elif t.__class__ is ReadTensor:
                slot = t._slot
                if id(slot) in self._slots or (self._watch_accessed and slot.trainable):
                    self._slots.setdefault(id(slot), slot)
                    ids[id(t)] = t
                    self._reads.append((t, slot))
                    hit = True
        if not hit:
            return False
        self._ops.append(op)
        for t in op._outputs:
            ids[id(t)] = t
        return True

    # ---- gradients ----------------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """d(sum of target)/d(source) for each source (a nested structure of tensors or variables),
        None where the target does not depend on it (zeros with `unconnected_gradients="zero"`)."""
        if not any(isinstance(t, EagerTensor) for t in flatten(target)):  # inside a defun trace: symbolic
            return _graph_gradient(target, sources, output_gradients, unconnected_gradients)
        if self._used and not self._persistent:
            raise RuntimeError("GradientTape.gradient can only be called once on non-persistent tapes.")
        if unconnected_gradients not in ("none", "zero"):
            raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}")
        self._used = True
        targets = flatten(target)
        flat_sources = flatten(sources)
        seeds = flatten(output_gradients) if output_gradients is not None else [None] * len(targets)
        if len(seeds) != len(targets):
            raise ValueError(f"GradientTape.gradient: {len(seeds)} output_gradients for {len(targets)} targets")
        ctx = context()
        was = self in ctx._tapes
        if was:  # the tape does not record its own backward pass (an outer tape does)
            i = ctx._tapes.index(self)
            ctx._tapes.remove(self)
        try:
            grads = _backward(ctx, self._ops, targets, seeds, self._ids)
            out = []
            for s in flat_sources:
                slot = _slot_of(s)
                if slot is not None:
                    g = _sum(ctx, [g for r, sl in self._reads if sl is slot
                                   for g in [_total(ctx, grads.get(id(r)))] if g is not None])
                elif isinstance(s, EagerTensor):
                    g = _total(ctx, grads.get(id(s)))
                else:
                    raise ValueError(f"GradientTape.gradient: sources must be Tensors or Variables, got {s!r}")
                if g is None and unconnected_gradients == "zero":
                    g = _zeros_like(ctx, s)
                out.append(g)
        finally:
            if was:
                ctx._tapes.insert(min(i, len(ctx._tapes)), self)
            if not self._persistent:
                self._ops, self._reads, self._ids = [], [], {}
        return pack_as(sources, out)

    def jacobian(self, target, sources, unconnected_gradients="none"):
        raise NotImplementedError("GradientTape.jacobian is not provided by dflow")


def _graph_gradient(target, sources, output_gradients, unconnected_gradients):
    """A tape used while a function is traced into a graph (`defun`): `tf.gradients` there."""
    targets = flatten(target)
    graph = targets[0].graph
    flat = []
    for s in flatten(sources):
        t = convert_to_tensor(s)
        flat.append(graph._capture_eager(t) if getattr(t, "_is_eager", False) else t)
    with graph.as_default():
        grads = gradients(targets, flat, grad_ys=output_gradients, unconnected_gradients=unconnected_gradients)
    return pack_as(sources, grads)


def _op(ctx, op_type, inputs, attrs=None):
    return ctx.create_op(op_type, inputs, attrs or {})._outputs[0]


def _total(ctx, gs):
    if not gs:
        return None
    return gs[0] if len(gs) == 1 else _op(ctx, "AddN", gs)


def _sum(ctx, gs):
    return _total(ctx, gs)


def _zeros_like(ctx, s):
    handle = getattr(s, "_handle", s)
    return _op(ctx, "ZerosLike", [handle], {"dtype": handle.dtype})


def _backward(ctx, ops, targets, seeds, ids):
    """{id(tensor): [gradient tensors]} after running the rules of `ops` in reverse."""
    grads = {}
    for y, gy in zip(targets, seeds):
        if not isinstance(y, EagerTensor):
            raise ValueError(f"GradientTape.gradient: target must be a Tensor, got {y!r}")
        if gy is None:
            if not differentiable(y.dtype):
                raise TypeError(f"GradientTape.gradient: target has dtype {y.dtype.name}, which is not "
                                "differentiable")
            gy = _op(ctx, "OnesLike", [y], {"dtype": y.dtype})
        elif not isinstance(gy, EagerTensor):
            gy = to_tensor(gy, y.dtype)
        grads.setdefault(id(y), []).append(gy)
    for op in reversed(ops):
        outs = op._outputs
        out_grads = []
        any_grad = False
        for t in outs:
            gs = grads.get(id(t))
            if gs and len(gs) > 1:
                gs[:] = [_total(ctx, gs)]
            g = gs[0] if gs else None
            any_grad = any_grad or g is not None
            out_grads.append(g)
        if not any_grad:
            continue
        inputs = op._inputs
        if not any(differentiable(t._dtype) for t in inputs):
            continue
        fn = _grad_fn(op)
        if fn is None:
            raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type})")
        out_grads = [g if g is not None or not differentiable(t._dtype)
                     else _op(ctx, "ZerosLike", [t], {"dtype": t._dtype}) for t, g in zip(outs, out_grads)]
        skipped = frozenset(i for i, t in enumerate(inputs) if id(t) not in ids)
        if skipped:
            set_skipped(op, skipped)
            try:
                in_grads = fn(op, *out_grads)
            finally:
                set_skipped(None, None)
        else:
            in_grads = fn(op, *out_grads)
        in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
        if len(in_grads) != len(inputs):
            raise ValueError(f"Gradient rule of {op.type} returned {len(in_grads)} gradients for {len(inputs)} "
                             "inputs")
        for t, g in zip(inputs, in_grads):
            if g is None or not differentiable(t._dtype):
                continue
            if isinstance(g, Operation):
                raise TypeError(f"Gradient rule of {op.type} returned an Operation")
            if not isinstance(g, EagerTensor):
                g = convert_to_tensor(g)
            grads.setdefault(id(t), []).append(g)
    return grads


def _compute_gradients(loss_fn, var_list=None, grad_loss=None):
    """The executor's protocol for `Optimizer.compute_gradients(loss_fn)` in eager mode:
    (loss, [(gradient, variable), ...]), var_list defaulting to the trainable variables read."""
    with GradientTape() as tape:
        if var_list is not None:
            tape.watch(list(var_list))
        loss = loss_fn()
    variables = list(var_list) if var_list is not None else list(tape.watched_variables())
    grads = tape.gradient(loss, variables, output_gradients=grad_loss) if variables else []
    return loss, list(zip(grads, variables))


EagerGraph.compute_gradients = staticmethod(_compute_gradients)
