"""Resolve state: turn variable reads and assigns into plain data flow, deterministically.

Rules (ARCHITECTURE "State"):
- A consumer of a variable's handle sees the value at the start of the run, unless an assign to
  that variable is among its ancestors (through data or control edges): then it sees the value of
  the latest such assign.
- Assigns to one variable within one run must be totally ordered by those edges; two that are not
  are an InvalidArgumentError naming the variable and both ops (never a race).
- The variable's new value is the output of its last assign; it is committed only if the whole
  run succeeds (the Session does that).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InvalidArgumentError
from ..graph.registry import OpState

_EMPTY = frozenset()


@dataclass
class StatePlan:
    # (consumer op, input index) -> the assign op whose output it sees; absent = start of run
    sources: dict = field(default_factory=dict)
    start_vars: dict = field(default_factory=dict)  # var name -> VariableV2 op read at run start
    commits: dict = field(default_factory=dict)  # var name -> last assign op
    var_ops: dict = field(default_factory=dict)  # var name -> VariableV2 op

    @property
    def empty(self):
        return not (self.start_vars or self.commits)


def reads_input(op, i):
    """False for input 0 of a plain assign: the old value is not read (its kernel gets None)."""
    return not (i == 0 and op.op_def.state is OpState.ASSIGN)


def variable_of(t):
    """The VariableV2 op whose handle `t` is, or None."""
    return t.op if t.op.op_def.state is OpState.VARIABLE else None


def resolve_state(ops, fed, fetch_elements, inputs_of=None):
    plan = StatePlan()
    assigns = {}  # var name -> [assign ops] in topological order
    for op in ops:
        if op.op_def.state is OpState.VARIABLE:
            plan.var_ops[op.name] = op
        elif op.op_def.state in (OpState.ASSIGN, OpState.UPDATE):
            var = variable_of(op.inputs[0])
            if var is None:
                raise InvalidArgumentError(None, op, f"{op.type} op {op.name!r}: input 0 must be a variable, "
                                           f"got {op.inputs[0].name!r}")
            plan.var_ops[var.name] = var
            assigns.setdefault(var.name, []).append(op)
    if not plan.var_ops:
        return plan

    assign_set = {a for lst in assigns.values() for a in lst}
    anc = {}
    for op in ops:
        ins = inputs_of(op) if inputs_of is not None else op._inputs
        parents = [t.op for t in ins if t not in fed] + list(op.control_inputs)
        acc = _EMPTY
        for p in parents:
            pa = anc.get(p, _EMPTY)
            if p in assign_set:
                pa = pa | {p}
            if pa and pa is not acc:
                acc = pa if not acc else acc | pa
        anc[op] = acc

    position = {}
    for var, lst in assigns.items():
        chain = sorted(lst, key=lambda a: len([b for b in anc[a] if b in lst]))
        for i in range(1, len(chain)):
            if chain[i - 1] not in anc[chain[i]]:
                a, b = chain[i - 1], chain[i]
                raise InvalidArgumentError(
                    None, b, f"Variable {var!r} is assigned twice in one run by ops {a.name!r} and {b.name!r} "
                    "with no control dependency ordering them; order them with control_dependencies or run "
                    "them separately.")
        for i, a in enumerate(chain):
            position[a] = i
        plan.commits[var] = chain[-1]

    for op in ops:
        for i, t in enumerate(op.inputs):
            if t in fed or (i == 0 and op.op_def.state is OpState.ASSIGN):
                continue  # a plain assign does not read the value it overwrites
            var = variable_of(t)
            if var is None:
                continue
            latest = _latest(anc[op], assigns.get(var.name, ()), position)
            if latest is None:
                plan.start_vars[var.name] = var
            else:
                plan.sources[(op, i)] = latest
    for e in fetch_elements:
        if hasattr(e, "value_index") and e not in fed and variable_of(e) is not None:
            plan.start_vars[e.op.name] = e.op
    return plan


def _latest(ancestors, var_assigns, position):
    best = None
    if not ancestors or not var_assigns:
        return None
    for a in var_assigns:
        if a in ancestors and (best is None or position[a] > position[best]):
            best = a
    return best
