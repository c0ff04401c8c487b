"""TensorFlow's GraphDef protobuf ⇄ dflow's GraphDef (the op table is dflow/io/tf_graph_ops.py).

Reading: `parse_graph_bytes` takes what a `.pb` or `.pbtxt` holds (binary protobuf, or text
format parsed by google.protobuf.text_format) and gives dflow NodeDefs; `GraphDef.ParseFromString`
calls it for anything that is not dflow's JSON (which starts with `{`), so `tf.import_graph_def`
keeps its one import path. TF1 control flow (Switch/Merge/Enter/...) is lowered by
dflow/io/tf_control_flow.py when that module is there. A TF op dflow lacks becomes a placeholder
node marked `_dflow_unsupported`, refused when the graph is imported (naming the op type, the node
and what is supported), so a graph can still be inspected; `prune=True` (meta graphs) drops such
nodes and all that depend on them instead (TF's training and saving subgraphs: dflow builds its
own optimizers and Saver).

Writing: `graph_def_to_tf` gives a `tensorboard.GraphDef` message (TensorFlow's wire format) of a
dflow GraphDef; `serialize_graph_def(graph_def, as_text)` its bytes. Cond and While become TF1
control flow (dflow/io/tf_graph_control_flow.py). InvalidArgumentError names a dflow op with no
TensorFlow form (a while loop's gradient, TensorArrays, Zarr ops, py_func).
"""

from __future__ import annotations

import importlib

import numpy as np
from google.protobuf import message, text_format
from tensorboard.compat.proto import graph_pb2, node_def_pb2

from ..errors import DataLossError, InvalidArgumentError
from ..graph import serialize
from ..graph.dtypes import as_dtype
from ..graph.serialize import GraphDef, NodeDef, parse_input
from .tf_graph_control_flow import lower_control_flow_for_tf
from .tf_graph_ops import READ, WRITE, supported_tf_ops
from .tf_graph_values import attr_from_tf, attr_to_tf

__all__ = ["parse_graph_bytes", "parse_proto_bytes", "graph_def_from_tf", "graph_def_to_tf", "serialize_graph_def",
           "without_unwritable",
           "is_json", "UNSUPPORTED", "unsupported_message"]

UNSUPPORTED = "_dflow_unsupported"
TF_PRODUCER = 1645  # a GraphDef version TensorFlow 2.x reads without upgrading the graph
_CONTROL_FLOW = ("Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "RefSwitch", "RefMerge",
                 "RefEnter", "RefExit", "RefNextIteration")
_MISSING = object()
# optional until it lands (another branch); named by a variable because the layering test resolves a
# literal name of a missing module to its package. tf_control_flow must not import this module.
_CONTROL_FLOW_MODULE = "dflow.io.tf_control_flow"


is_json = serialize.looks_like_json


def parse_proto_bytes(data, message_type, what):
    """A protobuf message from binary or text-format bytes; DataLossError if it is neither."""
    msg = message_type()
    if isinstance(data, str):
        data = data.encode("utf-8")
    data = bytes(data)
    if not data:
        raise DataLossError(None, None, f"{what} is empty")
    text = None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    errors = []
    # text format first when the bytes read as text and start like a field name or comment
    if text is not None and (text.lstrip()[:1].isalpha() or text.lstrip()[:1] == "#"):
        try:
            text_format.Parse(text, msg)
            return msg
        except text_format.ParseError as e:
            errors.append(f"as text: {str(e)[:160]}")
            msg = message_type()
    try:
        msg.ParseFromString(data)
        if msg.FindInitializationErrors():
            raise message.DecodeError("missing required fields")
        return msg
    except (message.DecodeError, RuntimeError, ValueError) as e:
        errors.append(f"as binary: {str(e)[:160]}")
    raise DataLossError(None, None, f"{what} is neither dflow's JSON nor a TensorFlow {message_type.DESCRIPTOR.name} "
                        f"(binary or text protobuf): {'; '.join(errors)}; the file is truncated, damaged or of "
                        "another kind")


def parse_graph_bytes(data, what="GraphDef", prune=False):
    """A dflow GraphDef from a TensorFlow GraphDef's binary or text bytes."""
    return graph_def_from_tf(parse_proto_bytes(data, graph_pb2.GraphDef, what), prune=prune)[0]


# ---- TF -> dflow ---------------------------------------------------------------------------------


def _lower_control_flow(nodes):
    """dflow/io/tf_control_flow.py's `lower_control_flow`, when that module exists."""
    if not any(n.op in _CONTROL_FLOW for n in nodes):
        return nodes
    try:
        module = importlib.import_module(_CONTROL_FLOW_MODULE)
    except ImportError:
        return nodes  # Switch/Merge/... are then refused on import as unsupported
    return list(module.lower_control_flow(nodes))


class _ReadCtx:
    """What a table entry's `read` sees: attrs as plain values, constant inputs, new nodes."""

    def __init__(self, tf_nodes):
        self.tf_nodes = tf_nodes
        self.aliases = {}

    def attr(self, node, key, default=_MISSING):
        if key not in node.attr:
            if default is _MISSING:
                raise InvalidArgumentError(None, None, f"TensorFlow node {node.name!r} ({node.op}) lacks its attr "
                                           f"{key!r}")
            return default
        return attr_from_tf(node.attr[key], f"TensorFlow node {node.name!r} ({node.op}) attr {key!r}")

    @staticmethod
    def inputs(node):
        return [i for i in node.input if not i.startswith("^")]

    @staticmethod
    def node(name, op_type, inputs, attrs, device=""):
        return NodeDef(name=name, op=op_type, input=list(inputs), device=device, attr=attrs)

    def const(self, name, value, node):
        value = np.asarray(value)
        value.setflags(write=False)
        return NodeDef(name=name, op="Const", device=node.device, attr={"value": value,
                                                                         "dtype": as_dtype(value.dtype)})

    def const_input(self, node, index, what):
        src = self.inputs(node)[index].split(":")[0]
        seen = 0
        n = self.tf_nodes.get(src)
        while n is not None and n.op == "Identity" and seen < 64:
            n, seen = self.tf_nodes.get(n.input[0].split(":")[0]), seen + 1
        if n is None or n.op != "Const":
            raise InvalidArgumentError(None, None, f"TensorFlow node {node.name!r} ({node.op}): its {what} must be a "
                                       "constant for dflow to import it")
        return self.attr(n, "value")

    def alias(self, name, index, target):
        self.aliases[(name, index)] = target

    def unsupported(self, node, reason):
        return [NodeDef(name=node.name, op=node.op, input=list(node.input), device=node.device,
                        attr={UNSUPPORTED: reason})]


_PY_FUNCS = ("PyFunc", "PyFuncStateless", "EagerPyFunc")
_PY_FUNC_REASON = ("it is a tf.py_func: it calls a Python function of the process that built the graph, and "
                   "a graph file holds only the function's token, never its code (TensorFlow itself fails "
                   "running it elsewhere: 'callback pyfunc_0 is not found'); rebuild that part of the graph "
                   "in Python around the imported one")


def unsupported_message(op_type, node_name, reason):
    if op_type in _PY_FUNCS:  # the list of op types would bury the reason
        return f"TensorFlow op type {op_type!r} of node {node_name!r} cannot be imported: {reason}."
    return (f"TensorFlow op type {op_type!r} of node {node_name!r} cannot be imported: {reason}. dflow imports "
            f"these TensorFlow op types: {', '.join(supported_tf_ops())}")


def graph_def_from_tf(proto, prune=False):
    """(dflow GraphDef, [names of nodes dropped], {names of the unsupported nodes among them}) of a
    TF GraphDef message. With `prune`, nodes of unsupported op types and every node depending on
    them are dropped instead of kept marked."""
    nodes = _lower_control_flow(list(proto.node))
    tf_nodes = {n.name: n for n in nodes if not isinstance(n, NodeDef)}
    ctx = _ReadCtx(tf_nodes)
    out = []
    for n in nodes:
        if isinstance(n, NodeDef):
            out.append(n)
            continue
        reader = READ.get(n.op)
        if reader is None:
            why = "TF1 control flow needs dflow/io/tf_control_flow.py" if n.op in _CONTROL_FLOW else \
                _PY_FUNC_REASON if n.op in _PY_FUNCS else "dflow has no such op"
            made = ctx.unsupported(n, why)
        else:
            try:
                made = reader(n, ctx)
            except InvalidArgumentError as e:
                made = ctx.unsupported(n, e.message if hasattr(e, "message") else str(e))
        controls = [i for i in n.input if i.startswith("^")]
        for m in made:
            m.input += [c for c in controls if c not in m.input]
        out.extend(made)
    for m in out:
        m.input = [_resolve(i, ctx.aliases) for i in m.input]
        if any(True for v in m.attr.values() for _ in serialize.tensor_refs(v)):  # a lowered Cond/While's
            m.attr = {k: _resolve_refs(v, ctx.aliases) for k, v in m.attr.items()}
    dropped, roots = [], {n.name for n in out if UNSUPPORTED in n.attr}
    if prune:
        out, dropped = _prune(out)
    versions = {"producer": serialize.VERSION, "min_consumer": 1, "tensorflow_producer": int(proto.versions.producer)}
    return GraphDef(out, versions), dropped, roots


def _resolve(inp, aliases):
    parsed = parse_input(inp)
    if parsed is None or parsed[1] < 0:
        return inp
    return aliases.get(parsed, inp)


def _resolve_refs(value, aliases):
    """An attr with its TensorRefs (a lowered Cond's branch outputs) renamed as inputs are."""
    if isinstance(value, serialize.TensorRef):
        return serialize.TensorRef(_resolve(value.name, aliases))
    if type(value) in (list, tuple):
        return type(value)(_resolve_refs(v, aliases) for v in value)
    return value


def _prune(nodes):
    """Drops unsupported nodes and everything downstream of them (data or control)."""
    bad = {n.name for n in nodes if UNSUPPORTED in n.attr}
    changed = True
    while changed:
        changed = False
        for n in nodes:
            if n.name not in bad and any((parse_input(i) or ("",))[0] in bad for i in n.input):
                bad.add(n.name)
                changed = True
    return [n for n in nodes if n.name not in bad], sorted(bad)


# ---- dflow -> TF ---------------------------------------------------------------------------------


class _WriteCtx:
    """What a table entry's `write` sees: the dtypes of the inputs, new TF nodes."""

    def __init__(self, graph_def):
        self.dtypes = {n.name: n.output_dtypes for n in graph_def.node}

    def dtype_of(self, inp):
        name, index = parse_input(inp)
        dts = self.dtypes.get(name)
        if not dts or index >= len(dts):
            raise InvalidArgumentError(None, None, f"the dtype of {inp!r} is not recorded in the GraphDef; write "
                                       "the graph itself (tf.get_default_graph()) or a GraphDef from as_graph_def()")
        return as_dtype(dts[index])

    @staticmethod
    def data_inputs(node):
        return [i for i in node.input if not i.startswith("^")]

    def types(self, node, spec):
        data = self.data_inputs(node)
        out = {}
        for key, src in spec.items():
            if src == "o0":
                out[key] = as_dtype(node.output_dtypes[0])
            else:
                out[key] = self.dtype_of(data[src])
        return out

    @staticmethod
    def tf_node(node, op_type, inputs, attrs, name=None):
        where = f"node {node.name!r} ({node.op})"
        proto = node_def_pb2.NodeDef(name=name or node.name, op=op_type, device=node.device or "",
                                     input=[i[:-2] if i.endswith(":0") else i for i in inputs])
        for k, v in attrs.items():
            proto.attr[k].CopyFrom(attr_to_tf(v, f"{where} attr {k!r}"))
        return proto

    def tf_const(self, name, value):
        value = np.asarray(value)
        proto = node_def_pb2.NodeDef(name=name, op="Const")
        proto.attr["value"].CopyFrom(attr_to_tf(value))
        proto.attr["dtype"].CopyFrom(attr_to_tf(as_dtype(value.dtype)))
        return proto


_NO_TF_FORM = {"WhileGrad": "the gradient of a tf.while_loop: export the graph before building gradients, or "
                            "only the inference part of it"}


def without_unwritable(graph_def):
    """(GraphDef, {dropped node: its op type or the node it depends on}): `graph_def` without the
    nodes that have no TensorFlow form and everything depending on them (data, control or a
    branch/body reference) — a training graph's dflow-only ops (label checks, a loop's gradient),
    left out of meta graphs and SavedModels written for TensorFlow."""
    ok = set(WRITE) | {"Cond", "While"}
    bad = {n.name: n.op for n in graph_def.node if n.op not in ok}
    if not bad:
        return graph_def, {}
    deps = {}
    for n in graph_def.node:
        d = [(parse_input(i) or ("",))[0] for i in n.input]
        d += [parse_input(r.name)[0] for v in n.attr.values() for r in serialize.tensor_refs(v)]
        deps[n.name] = d
    changed = True
    while changed:
        changed = False
        for n in graph_def.node:
            if n.name not in bad:
                hit = next((d for d in deps[n.name] if d in bad), None)
                if hit is not None:
                    bad[n.name] = hit
                    changed = True
    return GraphDef([n for n in graph_def.node if n.name not in bad], graph_def.versions), bad


def graph_def_to_tf(graph_def):
    """The TensorFlow GraphDef message of a dflow GraphDef (or Graph)."""
    if hasattr(graph_def, "as_graph_def"):
        graph_def = graph_def.as_graph_def()
    nodes, extra, dtypes = lower_control_flow_for_tf(graph_def)
    ctx = _WriteCtx(graph_def)
    if dtypes is not None:
        ctx.dtypes.update(dtypes)
    out = graph_pb2.GraphDef()
    out.versions.producer = TF_PRODUCER
    out.node.extend(extra)
    for node in nodes:
        writer = WRITE.get(node.op)
        if writer is None:
            what = f" ({_NO_TF_FORM[node.op]})" if node.op in _NO_TF_FORM else \
                " (a TensorArray: TensorArrays are not written for TensorFlow; unroll the loop, e.g. " \
                "tf.nn.static_rnn)" if node.op.startswith("TensorArray") else ""
            raise InvalidArgumentError(None, None, f"dflow op type {node.op!r} of node {node.name!r} has no "
                                       f"TensorFlow form{what}; ops that can be written for TensorFlow: "
                                       f"{', '.join(sorted(WRITE))}")
        out.node.extend(writer(node, ctx))
    return out


def serialize_graph_def(graph_def, as_text=False):
    """TensorFlow's bytes of a dflow GraphDef: binary protobuf, or text format with `as_text`."""
    proto = graph_def_to_tf(graph_def)
    if as_text:
        return text_format.MessageToString(proto).encode("utf-8")
    return proto.SerializeToString(deterministic=True)


serialize.register_foreign_parser(parse_graph_bytes)
