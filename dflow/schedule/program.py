"""The program walk: what one (fetches, feed signature, host decisions) computes, decided once.

Both the in-process plan (`EagerPlan`) and the Dask lowering consume a `Program`; nothing else
walks the graph. Building one:

1. prune to the ops the fetches need (data and control inputs), stopping at fed tensors and at
   tensors whose value a host decision already fixed;
2. stop with `pending` if a host op (cond, while loop) is not decided yet: the session decides it
   first (`schedule/host.py`) and builds the program again;
3. refuse unfed placeholders and ops placed on missing devices;
4. resolve state (`schedule/state.py`): which value of a variable each input reads;
5. one `Step` per op to run, with the tensors its inputs read (an assign's overwritten handle
   reads nothing: None), and how often each tensor is read (fusion and freeing use the counts).
"""

from __future__ import annotations

import copy

from ..errors import InvalidArgumentError
from ..graph.evaluate import fold, known_inputs
from ..graph.ops import Operation, Tensor
from ..graph.registry import OpState
from .placement import check_placement
from .state import reads_input, resolve_state


class Step:
    """One op to run: its input tensors as resolved (None: not read) and its outputs. `select`:
    a decided host op (a cond) whose outputs are simply its inputs (the taken branch's outputs)."""

    __slots__ = ("op", "opdef", "inputs", "outputs", "select")

    def __init__(self, op, inputs, select=False):
        self.op = op
        self.opdef = op._opdef
        self.inputs = inputs
        self.outputs = op._outputs
        self.select = select


def inputs_of(op, decisions):
    """An op's data inputs, where a decided cond reads its taken branch's outputs and a decided
    host op without outputs (an iterator initializer: its effect happened on the host) reads nothing."""
    if op._opdef.state is OpState.HOST and op in decisions:
        if not op._outputs:
            return []
        return op._attrs["true_outputs" if decisions[op] else "false_outputs"]
    return op._inputs


def prune(fetch_elements, fed, decisions=None):
    """The ops needed to compute `fetch_elements` given the fed tensors, in topological order."""
    decisions = decisions or {}
    needed = set()
    stack = []
    for e in fetch_elements:
        if isinstance(e, Tensor):
            if e not in fed:
                stack.append(e._op)
        else:
            stack.append(e)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        if op._outputs and all(t in fed for t in op._outputs):
            continue  # reached by a control edge, every output fed (a host op already run): reads nothing
        for t in (inputs_of(op, decisions) if decisions else op._inputs):
            if t not in fed and t._op not in needed:
                stack.append(t._op)
        for c in op._control_inputs:
            if c not in needed:
                stack.append(c)
    return sorted(needed, key=lambda o: o._id)


def check_feeds_complete(ops, fed):
    missing = [op.outputs[0] for op in ops if op._opdef.traits.must_feed and op.outputs[0] not in fed]
    if missing:
        lines = "; ".join(f"placeholder tensor {t.name!r} with dtype {t.dtype.name} and shape {t.shape}"
                          for t in missing)
        raise InvalidArgumentError(None, missing[0].op, f"You must feed a value for {lines}")


class Program:
    """See the module doc. Attributes:

    - `ops`: the pruned ops in topological order; `pending`: an undecided host op, or None;
    - `state`: the StatePlan; `steps`: the ops to run, in order;
    - `fetch_tensors`: per fetch element, its tensor or None (an op); `commit_tensors`: variable
      name -> the tensor holding its new value; `run_only`: tensors computed only for their
      effects (outputs of control inputs and of fetched ops);
    - `reads`: tensor -> how many step inputs read it; `kept`: tensors fetched or committed.
    """

    def __init__(self, fetch_elements, fed, decisions, options=None):
        self.fetch_elements = list(fetch_elements)
        self.fed = fed
        self.decisions = decisions
        self.ops = prune(self.fetch_elements, fed, decisions)
        self.pending = next((op for op in self.ops if op._opdef.state is OpState.HOST and op not in decisions and
                             not (op._outputs and all(t in fed for t in op._outputs))), None)
        if self.pending is not None:
            return  # topological: it depends on no other pending decision
        check_feeds_complete(self.ops, fed)
        if options is not None and (options.config is not None or any(op._device for op in self.ops)):
            check_placement(self.ops, options.config, options.gpus)  # refuses ops on missing devices
        self.state = resolve_state(self.ops, fed, self.fetch_elements, lambda op: inputs_of(op, decisions))
        self.steps = self._walk()
        self.fetch_tensors = [e if isinstance(e, Tensor) else None for e in self.fetch_elements]
        self.commit_tensors = {var: a.outputs[0] for var, a in self.state.commits.items()}
        run_only = [c for op in self.ops for c in op._control_inputs]
        run_only += [e for e in self.fetch_elements if isinstance(e, Operation)]
        self.run_only = [t for op in dict.fromkeys(run_only) for t in op.outputs]
        self.kept = {t for t in self.fetch_tensors if t is not None} | set(self.commit_tensors.values())
        self.reads = _reads(self.steps)

    def _walk(self):
        state, fed, steps = self.state, self.fed, []
        for op in self.ops:
            outs = op._outputs
            if outs and all(t in fed for t in outs):
                continue  # every output fed
            opdef = op._opdef
            if opdef.state is OpState.VARIABLE and op._name not in state.start_vars:
                continue  # only assigned in this run: its current value is never read
            if opdef.state is OpState.HOST:  # a decided cond: its outputs are the taken branch's
                steps.append(Step(op, list(inputs_of(op, self.decisions)), select=True))
                continue
            if state.empty:
                inputs = list(op._inputs)
            else:
                inputs = []
                for i, t in enumerate(op._inputs):
                    if not reads_input(op, i):
                        inputs.append(None)
                    else:
                        src = state.sources.get((op, i))
                        inputs.append(src.outputs[0] if src is not None else t)
            steps.append(Step(op, inputs))
        return steps

    def folded(self):
        """(values, program): the value of every tensor this program computes from constants
        alone, computed once now, and a copy of this program without those steps (the in-process
        plan then runs none of them: a gradient's Shape, Sub, Pack and OnesLike on known shapes).
        Folded: Const ops, then what the evaluator folds (`evaluate.fold`, the rule of build-time
        folding and of the Dask lowering too) from such values or, for an op reading only its
        input's shape, a fully known static shape. Values are read-only: every run shares them."""
        values, steps = {}, []
        for step in self.steps:
            if step.op._type == "Const":
                values[step.outputs[0]] = step.op._attrs["value"]
                continue
            out = _fold_step(step, values, self.fed)
            if out is None:
                steps.append(step)
                continue
            for t, v in zip(step.outputs, out):
                v.setflags(write=False)
                values[t] = v
        if len(steps) == len(self.steps):
            return values, self
        program = copy.copy(self)
        program.steps = steps
        program.reads = _reads(steps)
        return values, program

    def fuses_into_consumer(self, t):
        """Whether elementwise `t` may live only inside its consumer's fused kernel: read by one
        step, and neither fetched, committed nor run for its effects (the one fusion rule of both
        the in-process and the Dask path)."""
        return self.reads.get(t, 0) == 1 and t not in self.kept


def _reads(steps):
    """tensor -> how many step inputs read it."""
    reads = {}
    for step in steps:
        for t in step.inputs:
            if t is not None:
                reads[t] = reads.get(t, 0) + 1
    return reads


def _fold_step(step, known, fed):
    """The output values of `step` if the evaluator folds them from `known` values (or, for an op
    reading only its input's shape, from a fully known static shape), else None."""
    if step.select or not step.outputs or any(t in fed for t in step.outputs):
        return None
    values = known_inputs(step.op, step.inputs, known.get)
    return fold(step.op, values) if values is not None else None
