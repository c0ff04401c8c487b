"""TF1 control flow as TensorFlow writes it (Switch, Merge, Enter, Exit, NextIteration, LoopCond)
becomes dflow's own `Cond` and `While` ops when a TensorFlow GraphDef is imported.

`lower_control_flow(nodes)` takes a graph's TensorFlow NodeDef protos and returns a list in which
every cond context and while frame is replaced by dflow `serialize.NodeDef`s, the other nodes
staying TensorFlow protos (copies, their inputs rewired); the GraphDef converter passes the dflow
NodeDefs through and converts the protos.

How the graph is read (TF's own reading is tensorflow/core/graph/control_flow.cc):
- Every tensor gets a context: a stack of ("frame", name) entries (pushed by Enter, popped by
  Exit) and ("cond", pred, branch) entries (pushed by output `branch` of a cond Switch, popped by a
  cond Merge), propagated in topological order (a NextIteration → Merge edge is a back edge).
  A Switch whose predicate is a LoopCond belongs to a loop; any other Switch to a cond.
- A cond: the Merges popping the same predicate form one dflow `Cond` (inputs: the predicate and
  the tensors its branches read from outside; attrs: each Merge's inputs as true/false outputs).
  Branch ops read the outer tensors directly: a cond Switch's outputs become its data input.
  Each Merge's name stays as an `Identity` of its Cond output (`cond/Merge_1:0` is fetchable, as
  the Exits' are as Identities of the While's outputs); the graph's own nodes read the Cond.
- A while frame: each loop Merge (Merge(Enter, NextIteration)) is a loop variable, a `Placeholder`
  the condition (the LoopCond's input) and the body (the NextIterations' inputs) read instead of
  the Merge and the loop Switch; the condition's ops are copied once more (`cond_next`) reading
  the body's outputs; the Exits become the `While`'s outputs; constant Enters are their inputs.
  TF's `maximum_iterations` is an ordinary counter in the condition, so the While has none.
- TensorArrays: TF's ops take a handle and a flow; dflow's TensorArray is its flow alone, so each
  TensorArray*V3 op becomes its dflow op reading the flow (attrs from the TensorArrayV3 the handle
  comes from), and a loop variable carrying a flow is a variant Placeholder.

Tensor-valued attrs (branch outputs, loop variables, body) are `serialize.TensorRef`s naming
tensors of the output list; dflow/io/graph_io.py resolves them on import. Anything else this
module cannot read (a Merge's value_index, a frame without LoopCond) is an InvalidArgumentError
naming the node.
"""

from __future__ import annotations

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.serialize import NodeDef, TensorRef, parse_input, tensor_refs
from ..graph.shape import TensorShape

__all__ = ["lower_control_flow", "CONTROL_FLOW_OPS"]

CONTROL_FLOW_OPS = frozenset(["Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "RefSwitch",
                              "RefMerge", "RefEnter", "RefExit", "RefNextIteration"])
_STRUCTURE = CONTROL_FLOW_OPS
# TF DataType enum → dflow dtype name (the dtypes a loop variable or TensorArray may have)
_TF_DTYPES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 7: "string",
              8: "complex64", 9: "int64", 10: "bool", 17: "uint16", 18: "complex128", 19: "float16",
              22: "uint32", 23: "uint64", 21: "variant"}
# TensorArray ops: TF's inputs (handle first, flow last) → dflow's (flow first), by TF input index
_TA_INPUTS = {
    "TensorArrayWriteV3": [3, 1, 2], "TensorArrayReadV3": [2, 1], "TensorArrayGatherV3": [2, 1],
    "TensorArrayScatterV3": [3, 1, 2], "TensorArraySizeV3": [1], "TensorArraySplitV3": [3, 1, 2],
    "TensorArrayConcatV3": [1],
}
_TA_FLOW_OPS = {"TensorArrayWriteV3", "TensorArrayScatterV3", "TensorArraySplitV3"}
_PASS_THROUGH = {"Identity", "Enter", "RefEnter", "Exit", "RefExit", "Switch", "RefSwitch", "Merge", "RefMerge",
                 "NextIteration", "RefNextIteration"}


def _fail(node, message):
    return InvalidArgumentError(None, None, f"TensorFlow control flow: node {node!r}: {message}")


def _base(op):
    return op[3:] if op.startswith("Ref") and op[3:] in ("Switch", "Merge", "Enter", "Exit", "NextIteration") else op


def _dtype(node, key):
    enum = node.attr[key].type if key in node.attr else 0
    if enum not in _TF_DTYPES:
        raise _fail(node.name, f"attr {key!r} has a TensorFlow dtype ({enum}) dflow has no equivalent of")
    return dtypes.as_dtype(_TF_DTYPES[enum])


def _shape(node, key):
    if key not in node.attr or node.attr[key].WhichOneof("value") != "shape":
        return TensorShape(None)
    s = node.attr[key].shape
    return TensorShape(None) if s.unknown_rank else TensorShape([d.size if d.size >= 0 else None for d in s.dim])


def _recorded_shape(node):
    """Output 0's shape from a node's `_output_shapes` (graphs written with add_shapes=True)."""
    if "_output_shapes" not in node.attr or not node.attr["_output_shapes"].list.shape:
        return TensorShape(None)
    s = node.attr["_output_shapes"].list.shape[0]
    return TensorShape(None) if s.unknown_rank else TensorShape([d.size if d.size >= 0 else None for d in s.dim])


def _tensor(s):
    """("op", index) of an input string; index -1 for a control input."""
    parsed = parse_input(s)
    if parsed is None:
        raise InvalidArgumentError(None, None, f"TensorFlow control flow: malformed input {s!r}")
    return parsed


def _name(t):
    return f"^{t[0]}" if t[1] < 0 else f"{t[0]}:{t[1]}"


class _Lowering:
    def __init__(self, nodes):
        self.nodes = list(nodes)
        self.by_name = {}
        for n in self.nodes:
            if n.name in self.by_name:
                raise _fail(n.name, "duplicate node name")
            self.by_name[n.name] = n
        self.inputs = {n.name: [_tensor(s) for s in n.input] for n in self.nodes}
        for n in self.nodes:
            for src, _ in self.inputs[n.name]:
                if src not in self.by_name:
                    raise _fail(n.name, f"input from unknown node {src!r}")
        self.taken = set(self.by_name)  # names in use, new ones made unique against them
        self.out = []  # the result: TF protos (copies) and dflow NodeDefs
        self.ctx_of = {}  # output node name → context (tuple)
        self.resolved = {}
        self.copies = set()  # cond_next copies of a loop condition's nodes

    # ---- reading the structure ------------------------------------------------------------------

    def op(self, name):
        return _base(self.by_name[name].op)

    def is_loop_switch(self, name):
        pred = self.inputs[name][1][0] if len(self.inputs[name]) > 1 else None
        return pred is not None and self.op(pred) == "LoopCond"

    def is_loop_merge(self, name):
        return any(self.op(src) in ("Enter", "NextIteration") for src, i in self.inputs[name] if i >= 0)

    def instance(self, switch):
        """The predicate tensor naming the tf.cond a cond Switch belongs to. TF's cond switches
        its inputs on `pred_id` (an Identity of the predicate) and the predicate on itself (the
        pivots switch_t / switch_f that the branches' constants depend on): that pivot Switch is
        the cond's whose `pred_id` sits in its name scope."""
        pred = self.inputs[switch][1]
        if self.inputs[switch][0] != pred:
            return _name(pred)
        pred_id = switch.rpartition("/")[0] + "/pred_id"
        if pred_id in self.by_name and self.by_name[pred_id].op == "Identity" and \
                self.inputs[pred_id][:1] == [pred]:
            return f"{pred_id}:0"
        return _name(pred)

    def order(self):
        """Topological order without the NextIteration → Merge back edges."""
        deps = {n: {src for src, _ in self.inputs[n] if not (self.op(n) == "Merge" and self.op(src) == "NextIteration")}
                for n in self.by_name}
        users = {n: [] for n in self.by_name}
        for n, d in deps.items():
            for s in d:
                users[s].append(n)
        pending = {n: len(d) for n, d in deps.items()}
        ready = [n.name for n in self.nodes if not deps[n.name]]
        out = []
        while ready:
            n = ready.pop()
            out.append(n)
            for u in users[n]:
                pending[u] -= 1
                if pending[u] == 0:
                    ready.append(u)
        if len(out) != len(self.by_name):
            stuck = sorted(n for n, c in pending.items() if c)[:5]
            raise InvalidArgumentError(None, None, f"TensorFlow control flow: the graph has a cycle that is not a "
                                       f"while loop's back edge (through nodes {stuck})")
        return out

    def contexts(self):
        """ctx[node] for every node, cond merges {merge: (pred, base ctx)}, frames {name: parts}."""
        ctx = {}
        self.cond_merges, self.frames, self.frame_outer = {}, {}, {}

        def tensor_ctx(t):
            name, idx = t
            c = ctx[name]
            if idx >= 0 and self.op(name) == "Switch" and not self.is_loop_switch(name):
                return c + (("cond", self.instance(name), idx),)
            return c

        for n in self.order():
            op = self.op(n)
            ins = [t for t in self.inputs[n] if not (op == "Merge" and self.op(t[0]) == "NextIteration")]
            cs = [tensor_ctx(t) for t in ins]
            base = max(cs, key=len) if cs else ()
            if op == "Enter":
                frame = self.by_name[n].attr["frame_name"].s.decode()
                self.frame_outer.setdefault(frame, tensor_ctx(ins[0]))
                ctx[n] = tensor_ctx(ins[0]) + (("frame", frame),)
                self.frames.setdefault(frame, {"enters": []})["enters"].append(n)
            elif op == "Exit":
                c = tensor_ctx(ins[0])
                if not c or c[-1][0] != "frame":
                    raise _fail(n, "an Exit outside a while frame")
                ctx[n] = c[:-1]
            elif op == "Merge" and not self.is_loop_merge(n):
                data = [tensor_ctx(t) for t in ins if t[1] >= 0]
                last = {c[-1] for c in data if c and c[-1][0] == "cond"}
                preds = {e[1] for e in last}
                if len(data) != 2 or len(preds) != 1 or {e[2] for e in last} != {0, 1}:
                    raise _fail(n, "a Merge that is neither a while loop's nor a tf.cond's (its inputs do not come "
                                   "from both branches of one Switch predicate)")
                ctx[n] = base[:-1]
                self.cond_merges[n] = (preds.pop(), ctx[n])
            else:
                ctx[n] = base
        self.ctx = ctx

    # ---- rewiring -------------------------------------------------------------------------------

    def unique(self, name):
        out, k = name, 0
        while out in self.taken:
            k += 1
            out = f"{name}_{k}"
        self.taken.add(out)
        return out

    def resolve(self, t):
        """The output-list tensor ("op:i") that TF tensor `t` becomes; control inputs as "^op"."""
        if t in self.resolved:
            return self.resolved[t]
        name, idx = t
        op = self.op(name)
        control = idx < 0
        i = max(idx, 0)
        if op == "Switch":
            if self.is_loop_switch(name):
                out = self.loop_var_of[self.inputs[name][0][0]] if i == 1 or control else None
                if out is None:
                    raise _fail(name, "a loop Switch's false output is read by something other than an Exit")
            else:
                out = self.resolve(self.inputs[name][0])
        elif op == "Merge":
            if name in self.loop_var_of:
                out = self.loop_var_of[name]
            elif i == 0:
                out = self.cond_output[name]
            else:
                raise _fail(name, "the value_index output of a tf.cond Merge is not supported")
        elif op == "Enter":
            out = self.resolve(self.inputs[name][0])
        elif op == "Exit":
            out = self.exit_output[name]
        elif op in ("NextIteration", "LoopCond"):
            raise _fail(name, f"a {op} read by a node other than its loop's Merge or Switch")
        elif self.by_name[name].op == "TensorArrayV3":
            out = f"{name}:0"  # dflow's TensorArray is its flow (TF's output 1); the handle is not read
        else:
            out = f"{name}:{i}"
        if control:
            out = "^" + out.lstrip("^").rpartition(":")[0] if ":" in out else out
        self.resolved[t] = out
        return out

    def is_flow(self, t):
        """Whether TF tensor `t` is a TensorArray's flow (through Enter, Merge, Switch, Exit...)."""
        seen = set()
        while t[0] not in seen:
            seen.add(t[0])
            node = self.by_name[t[0]]
            if node.op == "TensorArrayV3":
                return t[1] == 1
            if node.op in _TA_FLOW_OPS:
                return True
            if node.op not in _PASS_THROUGH or not self.inputs[t[0]]:
                return False
            t = self.inputs[t[0]][0]
        return False

    def array_of(self, name):
        """The TensorArrayV3 node a TensorArray op's handle comes from."""
        t = self.inputs[name][0]
        for _ in range(len(self.by_name)):
            node = self.by_name[t[0]]
            if node.op == "TensorArrayV3":
                return node
            if node.op not in _PASS_THROUGH:
                break
            t = self.inputs[t[0]][0]
        raise _fail(name, f"its TensorArray handle does not come from a TensorArrayV3 (it comes from "
                          f"{self.by_name[t[0]].op} {t[0]!r}); gradient TensorArrays are not supported")

    # ---- building the output ----------------------------------------------------------------------

    def emit(self, node, ctx):
        self.out.append(node)
        self.ctx_of[node.name] = ctx

    def plan(self):
        """Names of the Cond and While nodes, loop variables and the tensors they stand for."""
        self.loop_var_of, self.cond_output, self.exit_output = {}, {}, {}
        self.conds = {}  # pred → [merges]
        for n in self.nodes:  # in the graph's order: Merge, Merge_1, ... are outputs 0, 1, ...
            if n.name in self.cond_merges:
                self.conds.setdefault(self.cond_merges[n.name][0], []).append(n.name)
        self.cond_name = {}
        for pred, merges in self.conds.items():
            scope = merges[0].rpartition("/")[0] or "cond"
            self.cond_name[pred] = name = self.unique(scope)
            for k, m in enumerate(merges):
                self.cond_output[m] = f"{name}:{k}"
        self.loops = {}
        for frame, parts in self.frames.items():
            enters = set(parts["enters"])
            merges = [n.name for n in self.nodes if self.op(n.name) == "Merge" and self.is_loop_merge(n.name)
                      and any(t[0] in enters for t in self.inputs[n.name])]
            scope = frame[:-len("/while_context")] if frame.endswith("/while_context") else frame
            name = self.unique(scope or "while")
            loop = {"name": name, "merges": merges, "vars": [], "switch": {}, "exit": {}}
            for k, m in enumerate(merges):
                var = self.unique(f"{name}/loop_var_{k}")
                loop["vars"].append(var)
                self.loop_var_of[m] = f"{var}:0"
            self.loops[frame] = loop
        merge_index = {m: (f, k) for f, lp in self.loops.items() for k, m in enumerate(lp["merges"])}
        for n in self.nodes:
            op = self.op(n.name)
            if op == "Switch" and self.is_loop_switch(n.name):
                m = self.inputs[n.name][0][0]
                if m not in merge_index:
                    raise _fail(n.name, "a loop Switch whose data input is not a loop Merge")
                f, k = merge_index[m]
                self.loops[f]["switch"][k] = n.name
                self.loops[f]["loop_cond"] = self.inputs[n.name][1][0]
            elif op == "Merge" and self.is_loop_merge(n.name) and n.name not in merge_index:
                raise _fail(n.name, "a loop Merge without a frame")
        for f, lp in self.loops.items():
            if "loop_cond" not in lp:
                raise _fail(lp["merges"][0] if lp["merges"] else f, f"while frame {f!r} has no LoopCond")
            by_switch = {s: k for k, s in lp["switch"].items()}
            for n in self.nodes:
                if self.op(n.name) == "Exit":
                    src = self.inputs[n.name][0][0]
                    if src in by_switch:
                        self.exit_output[n.name] = f"{lp['name']}:{by_switch[src]}"

    def rewrite(self):
        for n in self.nodes:
            name, op = n.name, self.op(n.name)
            if op in _STRUCTURE or op == "LoopCond":
                continue
            if n.op in _TA_INPUTS or n.op == "TensorArrayV3":
                self.emit(self.tensor_array_op(n), self.ctx[name])
                continue
            if n.op == "TensorArrayCloseV3":
                self.emit(NodeDef(name=name, op="NoOp", input=[], attr={}), self.ctx[name])
                continue
            copy = type(n)()
            copy.CopyFrom(n)
            del copy.input[:]
            copy.input.extend(self.rewired(name))
            self.emit(copy, self.ctx[name])

    def rewired(self, name):
        """`name`'s inputs as output-list tensors, data inputs first, duplicate controls dropped."""
        data, controls = [], []
        for t in self.inputs[name]:
            if t[1] >= 0:
                data.append(self.resolve(t))
            elif self.op(t[0]) not in ("NextIteration", "LoopCond"):
                c = self.resolve(t)
                if c not in controls:
                    controls.append(c)
        return data + controls

    def tensor_array_op(self, n):
        ta = self.array_of(n.name) if n.op != "TensorArrayV3" else n
        attrs = {"dtype": _dtype(ta, "dtype"), "element_shape": _shape(ta, "element_shape"),
                 "dynamic_size": bool(ta.attr["dynamic_size"].b) if "dynamic_size" in ta.attr else False}
        if n.op == "TensorArrayGatherV3" and attrs["element_shape"].ndims is None:
            attrs["element_shape"] = _shape(n, "element_shape")
        data = [t for t in self.inputs[n.name] if t[1] >= 0]
        if n.op == "TensorArrayV3":
            inputs = [self.resolve(data[0])]
        else:
            inputs = [self.resolve(data[i]) for i in _TA_INPUTS[n.op]]
        controls = [self.resolve(t) for t in self.inputs[n.name] if t[1] < 0]
        return NodeDef(name=n.name, op=n.op, input=inputs + controls, attr=attrs)

    def add_conds(self):
        for pred, merges in self.conds.items():
            true_out, false_out = [], []
            for m in merges:
                for t in self.inputs[m]:
                    if t[1] < 0:
                        continue
                    branch = self.tensor_ctx_last(t)
                    (true_out if branch == 1 else false_out).append(TensorRef(self.resolve(t)))
            base = self.cond_merges[merges[0]][1]
            name = self.cond_name[pred]
            node = NodeDef(name=name, op="Cond", input=[self.resolve(_tensor(pred))], attr={
                "true_outputs": tuple(true_out), "false_outputs": tuple(false_out), "out_specs": None,
                "n_captures": 0})
            self.emit(node, base)
            for k, m in enumerate(merges):  # TF1's names of the outputs (`cond/Merge_1:0`) stay fetchable
                self.emit(NodeDef(name=m, op="Identity", input=[f"{name}:{k}"]), base)

    def tensor_ctx_last(self, t):
        name, idx = t
        if self.op(name) == "Switch" and not self.is_loop_switch(name):
            return idx
        return self.ctx[name][-1][2]

    def add_loops(self):
        for frame, lp in self.loops.items():
            inner = self.frame_outer[frame] + (("frame", frame),)
            init, body = [], []
            for k, m in enumerate(lp["merges"]):
                enter = next(t for t in self.inputs[m] if t[1] >= 0 and self.op(t[0]) == "Enter")
                nxt = next(t for t in self.inputs[m] if t[1] >= 0 and self.op(t[0]) == "NextIteration")
                flow = self.is_flow(enter)
                dtype = dtypes.variant if flow else _dtype(self.by_name[enter[0]], "T")
                shape = TensorShape([]) if flow else _recorded_shape(self.by_name[m])
                self.emit(NodeDef(name=lp["vars"][k], op="Placeholder", input=[],
                                  attr={"dtype": dtype, "shape": shape, "chunks": None}), inner)
                init.append(self.resolve(enter))
                body.append(self.resolve(self.inputs[nxt[0]][0]))
                lp.setdefault("specs", []).append((shape, dtype))
            cond = self.resolve(self.inputs[lp["loop_cond"]][0])
            lp.update(init=init, body=body, cond=cond)

    def finish_loops(self):
        """cond_next copies and the While nodes, innermost frames first (an inner While is part
        of the outer body, and its cond_next copy of the outer condition, if any, too)."""
        for frame in sorted(self.loops, key=lambda f: -len(self.frame_outer[f])):
            lp = self.loops[frame]
            subst = {f"{v}:0": b for v, b in zip(lp["vars"], lp["body"])}
            cond_next = self.copy_ancestors(lp["cond"], frame, subst, lp["name"] + "/cond_next")
            caps = self.captures(lambda c, frame=frame: ("frame", frame) in c)
            self.emit(NodeDef(name=lp["name"], op="While", input=lp["init"] + caps, attr={
                "loop_vars": tuple(TensorRef(f"{v}:0") for v in lp["vars"]), "cond": TensorRef(lp["cond"]),
                "body": tuple(TensorRef(b) for b in lp["body"]), "cond_next": TensorRef(cond_next),
                "maximum_iterations": None, "n_loop_vars": len(lp["vars"]), "out_specs": tuple(lp["specs"])}),
                self.frame_outer[frame])
            for exit_name, out in self.exit_output.items():  # and the loop's (`while/Exit_2:0`)
                if out.rpartition(":")[0] == lp["name"]:
                    self.emit(NodeDef(name=exit_name, op="Identity", input=[out]), self.frame_outer[frame])

    def finish_conds(self):
        """Each Cond's captures: what its branches read from outside (the loops inside a branch
        included, so this runs again once the While nodes are there)."""
        names = {n: p for p, n in self.cond_name.items()}
        for node in self.out:
            if isinstance(node, NodeDef) and node.op == "Cond" and node.name in names:
                pred, key = node.input[0], names[node.name]
                caps = [c for c in self.captures(lambda c, key=key: any(e[0] == "cond" and e[1] == key for e in c),
                                                 skip=self.copies) if c != pred]
                node.input = [pred] + caps
                node.attr["n_captures"] = len(caps)

    def reads(self, node):
        """Output-list tensors `node` reads: data inputs and attr TensorRefs (controls excluded)."""
        out = [s for s in node.input if not s.startswith("^")]
        if isinstance(node, NodeDef):
            out += [r.name for v in node.attr.values() for r in tensor_refs(v)]
        return out

    def captures(self, member, skip=()):
        """Tensors read by the output nodes whose context `member` accepts (but `skip`), made
        outside them."""
        inside = {n.name for n in self.out if member(self.ctx_of[n.name]) and n.name not in skip}
        caps = []
        for n in self.out:
            if n.name in inside:
                for s in self.reads(n):
                    if s.rpartition(":")[0] not in inside and s not in caps:
                        caps.append(s)
        return caps

    def copy_ancestors(self, tensor, frame, subst, scope):
        """Copies the frame's ops `tensor` depends on, reading subst[t] for t; the copy's tensor."""
        if tensor in subst:
            return subst[tensor]
        by_name = {n.name: n for n in self.out}
        member = {n.name for n in self.out if ("frame", frame) in self.ctx_of[n.name]}
        names, stack = {}, [tensor.rpartition(":")[0]]
        order = []
        while stack:
            n = stack.pop()
            if n in names or n not in member or f"{n}:0" in subst:
                continue
            names[n] = self.unique(f"{scope}/{n}")
            order.append(n)
            node = by_name[n]
            stack.extend(s.lstrip("^").rpartition(":")[0] if ":" in s else s.lstrip("^") for s in node.input)
            if isinstance(node, NodeDef):
                stack.extend(r.name.rpartition(":")[0] for v in node.attr.values() for r in tensor_refs(v))

        def remap(s):
            if s.startswith("^"):
                op = s[1:]
                if f"{op}:0" in subst:
                    return "^" + subst[f"{op}:0"].rpartition(":")[0]
                return "^" + names.get(op, op)
            if s in subst:
                return subst[s]
            op, _, i = s.rpartition(":")
            return f"{names[op]}:{i}" if op in names else s

        def remap_attr(v):
            if isinstance(v, TensorRef):
                return TensorRef(remap(v.name))
            if type(v) in (list, tuple):
                return type(v)(remap_attr(x) for x in v)
            if type(v) is dict:
                return {k: remap_attr(x) for k, x in v.items()}
            return v

        for n in order:
            node = by_name[n]
            if isinstance(node, NodeDef):
                copy = node.copy()
                copy.attr = {k: remap_attr(v) for k, v in copy.attr.items()}
                copy.input = [remap(s) for s in node.input]
            else:
                copy = type(node)()
                copy.CopyFrom(node)
                del copy.input[:]
                copy.input.extend(remap(s) for s in node.input)
            copy.name = names[n]
            self.copies.add(copy.name)
            self.emit(copy, self.ctx_of[n])
        return remap(tensor)

    def run(self):
        self.contexts()
        self.plan()
        self.rewrite()
        self.add_conds()
        self.add_loops()
        self.finish_conds()  # a cond's captures before loops copy their conditions
        self.finish_loops()
        self.finish_conds()  # and with the inputs of the loops inside its branches
        return self.out


def lower_control_flow(nodes):
    """`nodes` (TensorFlow NodeDef protos) with TF1 control flow replaced by dflow Cond/While
    NodeDefs; other nodes are copies of their protos with inputs rewired. A graph without
    control flow comes back as it went in. InvalidArgumentError for structures it cannot read."""
    nodes = list(nodes)
    if not any(_base(n.op) in CONTROL_FLOW_OPS or n.op.startswith("TensorArray") for n in nodes):
        return nodes
    return _Lowering(nodes).run()
