"""`GradientTape`: records the ops that run on watched tensors, then hands them to the one
reverse-mode walk of `tf.gradients` (`graph/gradients.py` `backward`; the rules build ops, which
run at once, and a tape that is still recording records them too: higher-order gradients by
nesting tapes).

A tape watches tensors (by identity; it keeps them alive) and variables (their slots). The executor
(context.py) offers each op that ran to every active tape (`_record`); a tape keeps the op, with its
inputs and outputs, when one input is watched or produced by a recorded op. A variable used as an
op's input is recorded as a `ReadTensor` (its value at that moment) tied to its slot, so a
gradient with respect to the variable is the sum over its reads, and a later assign does not
change what the rules see.
"""

from __future__ import annotations

import contextlib

from ..graph.gradients import backward, gradients
from ..graph.indexed_slices import IndexedSlices, densify
from ..graph.ops import Tensor
from ..kernels.common import convert_to_tensor
from .context import EagerGraph, context
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
        targets = flatten(target)
        for y in targets:
            if not isinstance(y, EagerTensor):
                raise ValueError(f"GradientTape.gradient: target must be a Tensor, got {y!r}")
        seeds = flatten(output_gradients) if output_gradients is not None else None
        if seeds is not None and len(seeds) != len(targets):
            raise ValueError(f"GradientTape.gradient: {len(seeds)} output_gradients for {len(targets)} targets")
        flat = []  # (tensor for zeros, the tensors whose gradients sum into it) per source
        for s in flatten(sources):
            slot = _slot_of(s)
            if slot is not None:  # a variable: the sum over its reads
                flat.append((getattr(s, "_handle", s), [r for r, sl in self._reads if sl is slot]))
            elif isinstance(s, EagerTensor):
                flat.append((s, [s]))
            else:
                raise ValueError(f"GradientTape.gradient: sources must be Tensors or Variables, got {s!r}")
        self._used = True
        ctx = context()
        was = self in ctx._tapes
        if was:  # the tape does not record its own backward pass (an outer tape does)
            i = ctx._tapes.index(self)
            ctx._tapes.remove(self)
        try:
            out = backward(ctx, targets, seeds, flat, ops=self._ops, needed=self._ids,
                           unconnected_gradients=unconnected_gradients, caller="GradientTape.gradient")
        finally:
            if was:
                ctx._tapes.insert(min(i, len(ctx._tapes)), self)
            if not self._persistent:
                self._ops, self._reads, self._ids = [], [], {}
        return pack_as(sources, [densify(g) if isinstance(g, IndexedSlices) else g for g in out])

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
