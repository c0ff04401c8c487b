"""`tf.contrib.graph_editor`: the common calls of TF 1.x's graph editor, over dflow's graphs.

`get_tensors(graph)` lists a graph's tensors (the seed's call); `sgv(...)` makes a subgraph view
(its ops, the tensors it reads from outside, the tensors it produces); `reroute_ts(ts0, ts1)`
makes the consumers of `ts1` read `ts0` instead; `connect(sgv0, sgv1)` feeds sgv1's inputs from
sgv0's outputs; `graph_replace(targets, {old: new})` copies the ops between the replaced tensors
and the targets, reading the new tensors, and returns the copies of the targets (the original
ops are left as they were). Rewiring goes through `Operation._update_input`, as in TF 1.x, and
bumps the graph's version, so Sessions plan again.
"""

from __future__ import annotations

from ..graph.graph import get_default_graph
from ..graph.ops import Operation, Tensor
from ..tf1_names import missing_attribute

__all__ = ["get_tensors", "SubGraphView", "sgv", "make_view", "reroute_ts", "swap_ts", "connect", "graph_replace",
           "get_consuming_ops", "get_generating_ops", "get_backward_walk_ops", "get_forward_walk_ops", "select_ops",
           "select_ts"]


def get_tensors(graph):
    """Every tensor of `graph`, op by op in creation order (TF 1.x: a list of tf.Tensor)."""
    if not hasattr(graph, "get_operations"):
        raise TypeError(f"Expected a graph, got: {type(graph).__name__}")
    return [t for op in graph.get_operations() for t in op.outputs]


def _flatten(args):
    out = []
    for a in args:
        if isinstance(a, (list, tuple, set, frozenset)):
            out += _flatten(list(a))
        elif isinstance(a, SubGraphView):
            out += a.ops
        elif a is not None:
            out.append(a)
    return out


def _ops(args):
    ops = []
    for a in _flatten(args):
        op = a.op if isinstance(a, Tensor) else a
        if not isinstance(op, Operation):
            raise TypeError(f"Expected an Operation or a Tensor, got {type(a).__name__}")
        if op not in ops:
            ops.append(op)
    return ops


def _ts(args):
    ts = _flatten([args])
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f"Expected a tf.Tensor, got {type(t).__name__}")
    return ts


class SubGraphView:
    """Ops of one graph, with the tensors they read from outside (`inputs`) and the tensors they
    produce that are read outside or by nothing (`outputs`)."""

    def __init__(self, inside_ops=(), passthrough_ts=()):
        self._ops = _ops([inside_ops])
        graphs = {op.graph for op in self._ops}
        if len(graphs) > 1:
            raise ValueError("a subgraph view's ops must be of one graph")
        inside = set(self._ops)
        self._inputs, self._outputs = [], []
        for op in self._ops:
            for t in op.inputs:
                if t.op not in inside and t not in self._inputs:
                    self._inputs.append(t)
            for t in op.outputs:
                if not t.consumers() or any(c not in inside for c in t.consumers()):
                    self._outputs.append(t)
        for t in _ts(passthrough_ts):
            self._inputs.append(t)
            self._outputs.append(t)

    ops = property(lambda self: list(self._ops))
    inputs = property(lambda self: list(self._inputs))
    outputs = property(lambda self: list(self._outputs))
    graph = property(lambda self: self._ops[0].graph if self._ops else None)

    def __len__(self):
        return len(self._ops)

    def __bool__(self):
        return bool(self._ops)

    def __repr__(self):
        return (f"SubGraphView(ops={[op.name for op in self._ops]}, inputs={[t.name for t in self._inputs]}, "
                f"outputs={[t.name for t in self._outputs]})")


def sgv(*args, **kwargs):
    """A SubGraphView of the given ops (tensors stand for their ops; a view is returned as it is)."""
    if len(args) == 1 and isinstance(args[0], SubGraphView) and not kwargs:
        return args[0]
    return SubGraphView(_ops(args), kwargs.get("passthrough_ts", ()))


make_view = sgv


def get_consuming_ops(ts):
    return _ops([t.consumers() for t in _ts(ts)])


def get_generating_ops(ts):
    return _ops([t.op for t in _ts(ts)])


def _reroute(ts0, ts1, can_modify=None, cannot_modify=None):
    """Consumers of each ts1[i] (within `can_modify`, not in `cannot_modify`) read ts0[i]."""
    ts0, ts1 = _ts(ts0), _ts(ts1)
    if len(ts0) != len(ts1):
        raise ValueError(f"reroute: {len(ts0)} tensors to route to {len(ts1)} destinations")
    allowed = set(_ops([can_modify])) if can_modify is not None else None
    blocked = set(_ops([cannot_modify])) if cannot_modify is not None else set()
    modified = []
    for src, dst in zip(ts0, ts1):
        if src is dst:
            continue
        if src.dtype.base_dtype != dst.dtype.base_dtype:
            raise TypeError(f"reroute: {src.name!r} is {src.dtype.name} but {dst.name!r} is {dst.dtype.name}")
        for op in list(dict.fromkeys(dst.consumers())):
            if op in blocked or (allowed is not None and op not in allowed):
                continue
            for i, t in enumerate(op.inputs):
                if t is dst:
                    op._update_input(i, src)
            if op not in modified:
                modified.append(op)
    return modified


def reroute_ts(ts0, ts1, can_modify=None, cannot_modify=None):
    """The consumers of `ts1` read `ts0` instead; returns the ops changed."""
    return _reroute(ts0, ts1, can_modify, cannot_modify)


def swap_ts(ts0, ts1, can_modify=None, cannot_modify=None):
    """The consumers of `ts0` and of `ts1` swap the tensors they read; returns the ops changed."""
    ts0, ts1 = _ts(ts0), _ts(ts1)
    if len(ts0) != len(ts1):
        raise ValueError(f"swap_ts: {len(ts0)} tensors against {len(ts1)}")
    allowed = set(_ops([can_modify])) if can_modify is not None else None
    blocked = set(_ops([cannot_modify])) if cannot_modify is not None else set()
    edits = []  # (op, input index, new tensor), all read before any is made
    for a, b in zip(ts0, ts1):
        for src, dst in ((a, b), (b, a)):
            for op in dict.fromkeys(dst.consumers()):
                if op in blocked or (allowed is not None and op not in allowed):
                    continue
                edits += [(op, i, src) for i, t in enumerate(op.inputs) if t is dst]
    for op, i, t in edits:
        op._update_input(i, t)
    return list(dict.fromkeys(op for op, _, _ in edits))


def connect(sgv0, sgv1, disconnect_first=False):
    """sgv1's inputs read sgv0's outputs (in order); returns (sgv0, sgv1) as views."""
    sgv0, sgv1 = sgv(sgv0), sgv(sgv1)
    outs, ins = sgv0.outputs, sgv1.inputs
    if len(outs) != len(ins):
        raise ValueError(f"connect: {len(outs)} outputs of the first view for {len(ins)} inputs of the second")
    _reroute(outs, ins, can_modify=sgv1.ops)
    return sgv0, SubGraphView(sgv1.ops)


def get_backward_walk_ops(seed_ops, inclusive=True, stop_at_ts=(), control_inputs=False):
    """The ops the seed ops depend on (through data inputs; control inputs too when asked)."""
    stop = set(_ts(stop_at_ts)) if stop_at_ts else set()
    seeds = _ops([seed_ops])
    seen, stack = [], list(seeds)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.append(op)
        stack += [t.op for t in op.inputs if t not in stop]
        if control_inputs:
            stack += op.control_inputs
    return seen if inclusive else [op for op in seen if op not in seeds]


def get_forward_walk_ops(seed_ops, inclusive=True, stop_at_ts=()):
    """The ops that depend on the seed ops through data edges."""
    stop = set(_ts(stop_at_ts)) if stop_at_ts else set()
    seeds = _ops([seed_ops])
    seen, stack = [], list(seeds)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.append(op)
        stack += [c for t in op.outputs if t not in stop for c in t.consumers()]
    return seen if inclusive else [op for op in seen if op not in seeds]


def select_ops(*args, graph=None):
    """The ops among args, with op-name regular expressions matched against `graph`'s ops."""
    import re

    out = []
    for a in args:
        if isinstance(a, str):
            g = graph or get_default_graph()
            out += [op for op in g.get_operations() if re.search(a, op.name)]
        else:
            out += _ops([a])
    return list(dict.fromkeys(out))


def select_ts(*args, graph=None):
    out = []
    for a in args:
        if isinstance(a, str):
            import re

            g = graph or get_default_graph()
            out += [t for t in get_tensors(g) if re.search(a, t.name)]
        else:
            out += _ts(a)
    return list(dict.fromkeys(out))


def graph_replace(target_ts, replacement_ts, dst_scope="", src_scope="", reuse_dst_scope=False):
    """Copies of `target_ts` computed with each key tensor of `replacement_ts` replaced by its
    value: the ops between the keys and the targets are copied (the originals are untouched)
    and the copies of the targets returned, in the structure of `target_ts` (a tensor, a list,
    a tuple or a dict). Targets that do not depend on a key are returned as they are."""
    del src_scope, reuse_dst_scope
    mapping = {}
    for old, new in replacement_ts.items():
        if not isinstance(old, Tensor) or not isinstance(new, Tensor):
            raise TypeError("graph_replace: replacement_ts must map tf.Tensor to tf.Tensor")
        if old.dtype.base_dtype != new.dtype.base_dtype:
            raise TypeError(f"graph_replace: {old.name!r} is {old.dtype.name} but its replacement {new.name!r} is "
                            f"{new.dtype.name}")
        mapping[old] = new
    flat = _ts([list(target_ts.values()) if isinstance(target_ts, dict) else target_ts])
    if not flat:
        return target_ts
    graph = flat[0].graph
    keys = set(mapping)
    # the ops a target needs that depend on a key: those are copied, in creation order
    behind = set(get_backward_walk_ops([t.op for t in flat], stop_at_ts=list(keys)))
    ahead = set(get_forward_walk_ops([c for k in keys for c in k.consumers()]))
    to_copy = sorted(behind & ahead, key=lambda op: op._id)
    copied = {}

    def new_of(t):
        if t in mapping:
            return mapping[t]
        return copied[t.op].outputs[t.value_index] if t.op in copied else t

    prefix = dst_scope.rstrip("/") + "/" if dst_scope else ""
    for op in to_copy:
        inputs = [new_of(t) for t in op.inputs]
        with graph.as_default(), graph.control_dependencies(None):
            new_op = graph.create_op(op.type, inputs, op.attrs, name=prefix + op.name)
        new_op._control_inputs = list(op.control_inputs)
        if op._gradient_override is not None:
            new_op._gradient_override = op._gradient_override
        for t_old, t_new in zip(op.outputs, new_op.outputs):
            t_new.set_shape(t_old.shape)
        copied[op] = new_op

    if isinstance(target_ts, Tensor):
        return new_of(target_ts)
    if isinstance(target_ts, dict):
        return {k: new_of(v) for k, v in target_ts.items()}
    return type(target_ts)(new_of(t) for t in target_ts)


__getattr__ = missing_attribute(__name__)
