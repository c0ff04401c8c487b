"""dflow's `Cond` and `While` ops written as TF1 control flow, for TensorFlow GraphDefs.

The form chosen is TF1's own (what `tf.cond` / `tf.while_loop` write in TF1 graph mode):
Switch/Merge for a cond; Enter/Merge/Switch/LoopCond/NextIteration/Exit frames for a loop. Why not
the functional `If`/`While` with a FunctionDef library: a FunctionDef's node inputs name each
output by its OpDef argument name ("mul:z:0"), which would need TensorFlow's OpDef of every op type
written; TF1 control flow is plain GraphDef nodes, TensorFlow 2.x still imports and runs it in
graph mode, and dflow/io/tf_control_flow.py reads the same form back into Cond/While (round trip).

dflow's branches and loop bodies are ordinary nodes of the same graph, named in the Cond/While
attrs (`TensorRef`s) and reading the tensors of the outside directly. Lowering, outermost first
(a Cond or While is created after everything inside it, so reverse node order):
- cond: `pred_id = Identity(pred)`; `Switch(pred_id, pred_id)` gives the pivots `switch_t` /
  `switch_f`; every captured tensor goes through its own `Switch(t, pred_id)` and the branch nodes
  read output 1 (true) or 0 (false) of it; a branch node without data inputs (a Const) gets a
  control input on its branch's pivot; each output is `Merge(false, true)`, named as the
  output's TF1-named Identity (`cond/Merge_1`, made by dflow's cond) which it replaces. The Cond
  node's name becomes an `IdentityN` (`Identity` for one output) of the Merges, so `cond:i` keeps
  its name.
- while: each loop variable is `Enter -> Merge(Enter, NextIteration) -> Switch(., LoopCond)`, the
  condition reads the Merges, the body the Identity of the Switches' true output, the
  NextIterations take the body's outputs and the Exits (false outputs, named as the outputs'
  `while/Exit_k` Identities) are the results, again renamed to the While's name by an IdentityN. Captured tensors are constant Enters.
  `maximum_iterations` is a counter loop variable and-ed into the condition (as TF1 does). dflow's
  copy of the condition over the body's outputs (`cond_next`) and the loop-variable placeholders
  are not written.
A node's pivot is that of its innermost construct. `WhileGrad` (a loop's gradient) and
TensorArrays have no TensorFlow form here; the writer names them.
"""

from __future__ import annotations

import re

import numpy as np
from tensorboard.compat.proto import node_def_pb2

from ..graph.dtypes import as_dtype
from ..graph.serialize import TensorRef, parse_input, tensor_refs
from .tf_graph_values import attr_to_tf

__all__ = ["lower_control_flow_for_tf"]

_INT32, _BOOL = as_dtype("int32"), as_dtype("bool")
_TF1_OUTPUT = re.compile(r"(Merge|Exit)(_[0-9]+)?")
PARALLEL_ITERATIONS = 10


def _key(t):
    """(node, index) of a data input 'name', 'name:i' (None for a control input)."""
    if t.startswith("^"):
        return None
    parsed = parse_input(t)
    return (parsed[0], max(parsed[1], 0)) if parsed else None


def _str(key):
    return f"{key[0]}:{key[1]}"


class _Lowering:
    def __init__(self, graph_def):
        self.nodes = [n.copy() for n in graph_def.node]
        self.by_name = {n.name: n for n in self.nodes}
        self.names = set(self.by_name)
        self.dtypes = {n.name: [as_dtype(d) for d in (n.output_dtypes or [])] for n in self.nodes}
        self.extra = []  # new TF NodeDef protos
        self.pivot = {}  # node name -> the control input it needs when it has no data input
        self.drop = set()
        # tensors of reference type (a VariableV2's output): they go through RefSwitch / RefEnter,
        # so an Assign in a branch or body still gets a reference, as TF1 writes them
        self.refs = {n.name for n in self.nodes if n.op == "VariableV2"}
        # the Identity dflow's cond/while_loop gives each output, named as TF1 names it (`cond/Merge_1`,
        # `while/Exit`): the Merge or Exit written here takes that name (the Identity is dropped), so
        # the TensorFlow graph has TF1's own nodes under TF1's names
        self.tf1_named = {}
        for n in self.nodes:
            scope, _, last = n.name.rpartition("/")
            k = _key(n.input[0]) if n.op == "Identity" and len(n.input) == 1 else None
            if k and k[0] == scope and _TF1_OUTPUT.fullmatch(last):
                self.tf1_named[k] = n.name

    # ---- helpers ----

    def unique(self, name):
        out, i = name, 0
        while out in self.names:
            i += 1
            out = f"{name}_{i}"
        self.names.add(out)
        return out

    def dtype(self, tensor):
        name, index = _key(tensor)
        return self.dtypes[name][index]

    def output_name(self, key, default):
        """The name of the Merge/Exit giving output `key` of a Cond/While: its TF1-named Identity's."""
        name = self.tf1_named.get(key)
        if name is None or name in self.drop:
            return default
        self.drop.add(name)
        self.names.discard(name)
        return name

    def emit(self, name, op, inputs, dtypes, **attrs):
        name = self.unique(name)
        proto = node_def_pb2.NodeDef(name=name, op=op, input=[i[:-2] if i.endswith(":0") else i for i in inputs])
        for k, v in attrs.items():
            proto.attr[k].CopyFrom(attr_to_tf(v, f"node {name!r} ({op}) attr {k!r}"))
        self.extra.append(proto)
        self.dtypes[name] = list(dtypes)
        return name

    def deps(self, name):
        node = self.by_name.get(name)
        if node is None:
            return []
        out = [parse_input(i)[0] if not i.startswith("^") else i[1:] for i in node.input]
        for v in node.attr.values():
            out.extend(_key(r.name)[0] for r in tensor_refs(v))
        return out

    def ancestors(self, tensors):
        seen, stack = set(), [_key(t)[0] if not t.startswith("^") else t[1:] for t in tensors]
        while stack:
            n = stack.pop()
            if n in seen or n not in self.by_name:
                continue
            seen.add(n)
            stack.extend(self.deps(n))
        return seen

    def closure(self, roots, stop):
        """The nodes `roots` (tensor names) depend on, not walking into `stop`."""
        seen, stack = set(), [parse_input(r)[0] for r in roots]
        while stack:
            n = stack.pop()
            if n in seen or n in stop or n not in self.by_name:
                continue
            seen.add(n)
            stack.extend(self.deps(n))
        return seen

    def rewire(self, names, mapping, pivot):
        """Data inputs (and TensorRefs) of the nodes `names` through `mapping` {(node, i): tensor}."""
        def one(t):
            k = _key(t)
            return mapping.get(k, t) if k is not None else t

        def ref(r):
            k = _key(r.name)
            return TensorRef(_norm(mapping[k])) if k in mapping else r

        for name in names:
            node = self.by_name[name]
            node.input = [one(i) for i in node.input]
            for k, v in list(node.attr.items()):
                if any(True for _ in tensor_refs(v)):
                    node.attr[k] = map_refs(v, ref)
            self.pivot[name] = pivot

    # ---- cond ----

    def cond(self, n):
        data = [i for i in n.input if not i.startswith("^")]
        ctrl = [i for i in n.input if i.startswith("^")]
        pred, caps = data[0], data[1:]
        outside = self.ancestors(data + ctrl)
        t_out = [r.name for r in n.attr["true_outputs"]]
        f_out = [r.name for r in n.attr["false_outputs"]]
        t_set, f_set = self.closure(t_out, outside), self.closure(f_out, outside)
        base = n.name
        pred_id = self.emit(f"{base}/pred_id", "Identity", [pred] + ctrl, [_BOOL], T=_BOOL)
        sw = self.emit(f"{base}/Switch", "Switch", [pred_id, pred_id], [_BOOL, _BOOL], T=_BOOL)
        pivots = {1: self.emit(f"{base}/switch_t", "Identity", [f"{sw}:1"], [_BOOL], T=_BOOL),
                  0: self.emit(f"{base}/switch_f", "Identity", [f"{sw}:0"], [_BOOL], T=_BOOL)}
        switches = {}
        for c in caps:
            k = _key(c)
            if k not in switches:
                dt = self.dtype(c)
                op = "RefSwitch" if k[0] in self.refs else "Switch"
                switches[k] = self.emit(f"{base}/Switch_1", op, [c, pred_id], [dt, dt], T=dt)
                if op == "RefSwitch":
                    self.refs.add(switches[k])
        maps = {side: {k: f"{s}:{side}" for k, s in switches.items()} for side in (0, 1)}
        self.rewire(t_set, maps[1], pivots[1])
        self.rewire(f_set, maps[0], pivots[0])
        merges, dts = [], []
        for i, (f, t) in enumerate(zip(f_out, t_out)):
            dt = as_dtype(n.attr["out_specs"][i][1])
            f, t = maps[0].get(_key(f), f), maps[1].get(_key(t), t)
            merges.append(self.emit(self.output_name((base, i), f"{base}/Merge"), "Merge", [f, t], [dt, _INT32], T=dt,
                                    N=2) + ":0")
            dts.append(dt)
        self.replace(n, merges, dts, [pivots[0], pivots[1]])

    def replace(self, n, outputs, dts, live):
        """The Cond/While node `n` becomes an Identity(N) of `outputs`, keeping its name."""
        self.drop.add(n.name)
        self.names.discard(n.name)
        if len(outputs) == 1:
            self.emit(n.name, "Identity", outputs, dts, T=dts[0])
        elif outputs:
            self.emit(n.name, "IdentityN", outputs, dts, T=list(dts))
        else:  # no outputs: a NoOp that runs after the construct
            self.emit(n.name, "NoOp", [f"^{x}" for x in live], [])

    # ---- while ----

    def while_(self, n):
        nv = int(n.attr["n_loop_vars"])
        data = [i for i in n.input if not i.startswith("^")]
        ctrl = [i for i in n.input if i.startswith("^")]
        init, caps = data[:nv], data[nv:]
        phs = [_key(r.name)[0] for r in n.attr["loop_vars"]]
        outside = self.ancestors(data + ctrl)
        stop = outside | set(phs)
        c0 = n.attr["cond"].name
        body = [r.name for r in n.attr["body"]]
        cond_set = self.closure([c0], stop)
        body_set = self.closure(body, stop) - cond_set
        next_set = self.closure([n.attr["cond_next"].name], stop) - cond_set - body_set
        self.drop |= next_set | set(phs)
        base = n.name
        frame = f"{base}/while_context"
        enter = dict(frame_name=frame, parallel_iterations=PARALLEL_ITERATIONS)
        const_map = {}
        for c in caps:
            k = _key(c)
            if k not in const_map:
                dt = self.dtype(c)
                op = "RefEnter" if k[0] in self.refs else "Enter"
                const_map[k] = self.emit(f"{base}/Enter", op, [c] + ctrl, [dt], T=dt, is_constant=True,
                                         **enter) + ":0"
                if op == "RefEnter":
                    self.refs.add(const_map[k][:-2])
        dts = [as_dtype(s[1]) for s in n.attr["out_specs"]]
        nexts = [self.unique(f"{base}/NextIteration") for _ in range(nv)]
        merges = []
        for k in range(nv):
            e = self.emit(f"{base}/Enter", "Enter", [init[k]] + ctrl, [dts[k]], T=dts[k], is_constant=False, **enter)
            merges.append(self.emit(f"{base}/Merge", "Merge", [e, nexts[k]], [dts[k], _INT32], T=dts[k], N=2))
        limit = n.attr.get("maximum_iterations")
        if limit is not None:  # a counter loop variable, as TF1's maximum_iterations
            nexts.append(self.unique(f"{base}/NextIteration"))
            zero = self.emit(f"{base}/iteration_counter", "Const", [] + ctrl, [_INT32], dtype=_INT32,
                             value=_np_int32(0))
            e = self.emit(f"{base}/Enter", "Enter", [zero], [_INT32], T=_INT32, is_constant=False, **enter)
            merges.append(self.emit(f"{base}/Merge", "Merge", [e, nexts[-1]], [_INT32, _INT32], T=_INT32, N=2))
            if isinstance(limit, TensorRef):
                limit_t = limit.name
                if self.dtype(limit_t) != _INT32:
                    limit_t = self.emit(f"{base}/maximum_iterations_int32", "Cast", [limit_t], [_INT32],
                                        SrcT=self.dtype(limit_t), DstT=_INT32, Truncate=False)
            else:
                limit_t = self.emit(f"{base}/maximum_iterations", "Const", [], [_INT32], dtype=_INT32,
                                    value=_np_int32(int(limit)))
            limit_e = self.emit(f"{base}/Enter", "Enter", [limit_t], [_INT32], T=_INT32, is_constant=True, **enter)
        cond_map = dict(const_map)
        cond_map.update({(p, 0): f"{m}:0" for p, m in zip(phs, merges)})
        self.rewire(cond_set, cond_map, merges[0])
        pred = cond_map.get(_key(c0), c0)
        if limit is not None:
            less = self.emit(f"{base}/Less", "Less", [f"{merges[-1]}:0", limit_e], [_BOOL], T=_INT32)
            pred = self.emit(f"{base}/LogicalAnd", "LogicalAnd", [less, pred], [_BOOL])
        loop_cond = self.emit(f"{base}/LoopCond", "LoopCond", [pred], [_BOOL])
        exits, idents = [], []
        for k, m in enumerate(merges):
            dt = self.dtypes[m][0]
            sw = self.emit(f"{base}/Switch", "Switch", [f"{m}:0", loop_cond], [dt, dt], T=dt)
            name = self.output_name((base, k), f"{base}/Exit") if k < nv else f"{base}/Exit"
            exits.append(self.emit(name, "Exit", [f"{sw}:0"], [dt], T=dt) + ":0")
            idents.append(self.emit(f"{base}/Identity", "Identity", [f"{sw}:1"], [dt], T=dt))
        body_map = dict(const_map)
        body_map.update({(p, 0): f"{i}:0" for p, i in zip(phs, idents)})
        self.rewire(body_set, body_map, idents[0])
        outs = [body_map.get(_key(b), b) for b in body]
        if limit is not None:
            one = self.emit(f"{base}/add/y", "Const", [f"^{idents[-1]}"], [_INT32], dtype=_INT32, value=_np_int32(1))
            outs.append(self.emit(f"{base}/add", "AddV2", [idents[-1], one], [_INT32], T=_INT32))
        for name, out, m in zip(nexts, outs, merges):
            dt = self.dtypes[m][0]
            self.names.discard(name)
            self.emit(name, "NextIteration", [out], [dt], T=dt)
        self.replace(n, exits[:nv], dts, [e[:-2] for e in exits])

    # ---- all ----

    def run(self):
        for n in reversed(self.nodes):
            if n.name in self.drop:
                continue
            if n.op == "Cond":
                self.cond(n)
            elif n.op == "While":
                self.while_(n)
        nodes = [n for n in self.nodes if n.name not in self.drop]
        for n in nodes:
            piv = self.pivot.get(n.name)
            if piv and not any(not i.startswith("^") for i in n.input) and f"^{piv}" not in n.input:
                n.input.append(f"^{piv}")
        return nodes, self.extra, self.dtypes


def _np_int32(v):
    return np.asarray(v, np.int32)


def map_refs(value, fn):
    """The attr value with each TensorRef replaced by fn(ref)."""
    if isinstance(value, TensorRef):
        return fn(value)
    if type(value) in (list, tuple):
        return type(value)(map_refs(v, fn) for v in value)
    if type(value) is dict:
        return {k: map_refs(v, fn) for k, v in value.items()}
    return value


def _norm(t):
    k = _key(t)
    return _str(k) if k else t


def lower_control_flow_for_tf(graph_def):
    """(dflow NodeDefs to write, extra TF NodeDef protos, {node: [DType]} of every node) of a dflow
    GraphDef whose Cond/While nodes are replaced by TF1 control flow (see the module doc)."""
    if not any(n.op in ("Cond", "While") for n in graph_def.node):
        return list(graph_def.node), [], None
    return _Lowering(graph_def).run()
