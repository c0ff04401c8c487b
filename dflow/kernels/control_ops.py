"""Ordering ops: `no_op`, `group`, `tuple` (control dependencies are in the graph layer)."""

from __future__ import annotations

from ..graph.graph import control_dependencies, get_default_graph, name_scope
from ..graph.ops import Operation, Tensor
from ..graph.registry import register_op
from .array_ops import identity
from .common import apply_op, graph_of

__all__ = ["no_op", "group", "tuple"]

register_op("NoOp", lambda inputs, attrs: [], eager=lambda xp: (), lower=lambda ctx: ())


def no_op(name=None):
    """An op that does nothing; with control inputs it waits for them (the body of `group`)."""
    return apply_op("NoOp", [], name=name, graph=get_default_graph())


def _as_op(x):
    if hasattr(x, "_as_control_op"):
        return x._as_control_op()
    if isinstance(x, Tensor):
        return x.op
    if isinstance(x, Operation):
        return x
    raise TypeError(f"Expected a Tensor or Operation, got {x!r}")


def group(*inputs, name=None):
    """An op that runs after all `inputs` (tensors or ops); fetching it returns None."""
    ops = [_as_op(x) for x in inputs if x is not None]
    g = graph_of(ops) if ops else get_default_graph()
    with g.as_default(), name_scope(name, "group_deps", ops) as scope:
        with control_dependencies(ops):
            return apply_op("NoOp", [], name=scope, graph=g)


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TF1 public name
    """The same tensors, each available only after all of them (and `control_inputs`) are computed."""
    tensors = list(tensors)
    with name_scope(name, "tuple", [t for t in tensors if t is not None]) as scope:
        deps = [t for t in tensors if t is not None] + list(control_inputs or [])
        gate = group(*deps)
        out = []
        with control_dependencies([gate]):
            for t in tensors:
                out.append(None if t is None else identity(t, name="control_dependency"))
        del scope
        return out
