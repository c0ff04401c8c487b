"""`dflow.graph_util`: GraphDef rewriting (TF1's `tf.graph_util`): freeze variables into constants,
extract the subgraph some outputs need, drop training-only nodes."""

from __future__ import annotations

import logging

import numpy as np

from .errors import InvalidArgumentError
from .graph import dtypes
from .graph.dtypes import as_dtype
from .graph.ops import Operation
from .graph.registry import OpState, get_opdef, is_registered
from .graph.serialize import GraphDef, NodeDef, parse_input, tensor_refs
from .io.graph_io import import_graph_def

__all__ = ["convert_variables_to_constants", "extract_sub_graph", "remove_training_nodes",
           "tensor_shape_from_node_def_name", "import_graph_def", "must_run_on_cpu"]

_log = logging.getLogger(__name__)


class _NotInGraph(InvalidArgumentError, AssertionError):
    """A destination node missing from the GraphDef (AssertionError, as TF1)."""


def _node_name(s):
    parsed = parse_input(s)
    return parsed[0] if parsed else s.lstrip("^").split(":")[0]


def _check_graph_def(graph_def):
    if not isinstance(graph_def, GraphDef):
        raise TypeError(f"graph_def must be a dflow GraphDef, got {type(graph_def).__name__}")


def extract_sub_graph(graph_def, dest_nodes):
    """A new GraphDef with only the nodes `dest_nodes` (node names) need through data and control
    inputs, in their original order. TypeError for bad arguments; an InvalidArgumentError that is
    also an AssertionError (as TF1) for a name not in the graph."""
    _check_graph_def(graph_def)
    if isinstance(dest_nodes, str):
        raise TypeError(f"dest_nodes must be an iterable of strings, but got type {type(dest_nodes)}.")
    by_name = {n.name: n for n in graph_def.node}
    keep, stack = set(), []
    for d in dest_nodes:
        if not isinstance(d, str):
            raise TypeError(f"dest_nodes must be an iterable of strings, got {d!r}")
        name = _node_name(d)
        if name not in by_name:
            raise _NotInGraph(None, None, f"{d} is not in graph")
        stack.append(name)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        node = by_name[name]
        refs = [_node_name(r.name) for v in node.attr.values() for r in tensor_refs(v)]  # a Cond's branches, a While's body
        for src in [_node_name(s) for s in node.input] + refs:
            if src in by_name and src not in keep:
                stack.append(src)
    return GraphDef([n.copy() for n in graph_def.node if n.name in keep], graph_def.versions)


def _is_variable(node):
    return is_registered(node.op) and get_opdef(node.op).state is OpState.VARIABLE


def convert_variables_to_constants(sess, input_graph_def, output_node_names, variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """Freezes a graph: the subgraph `output_node_names` need, its variables (those whitelisted and
    not blacklisted) replaced by Const nodes holding their values in `sess`.

    Raises FailedPreconditionError for an uninitialized variable, InvalidArgumentError if a frozen
    variable is written by an op the outputs need (an assign cannot write a constant).
    """
    _check_graph_def(input_graph_def)
    inference = extract_sub_graph(input_graph_def, output_node_names)
    white = None if variable_names_whitelist is None else set(variable_names_whitelist)
    black = set(variable_names_blacklist or ())
    frozen = {n.name for n in inference.node if _is_variable(n) and (white is None or n.name in white)
              and n.name not in black}
    for n in inference.node:
        if is_registered(n.op) and get_opdef(n.op).state in (OpState.ASSIGN, OpState.UPDATE) and n.input:
            target = parse_input(n.input[0])
            if target and target[0] in frozen:
                raise InvalidArgumentError(None, None, f"convert_variables_to_constants: variable {target[0]!r} "
                                           f"is written by {n.name!r} ({n.op}), which the outputs need; a frozen "
                                           "variable cannot be assigned")
    out = []
    for n in inference.node:
        if n.name not in frozen:
            out.append(n)
            continue
        value = np.array(sess.variables.host_value(n.name), copy=True, order="C")
        dtype = n.attr.get("dtype")
        if dtype is not None and as_dtype(value.dtype) != dtype:
            value = value.astype(as_dtype(dtype).np_dtype)
        value.setflags(write=False)
        out.append(NodeDef(name=n.name, op="Const", input=[], device=n.device,
                           attr={"value": value, "dtype": as_dtype(value.dtype)},
                           output_shapes=[list(value.shape)], output_dtypes=[as_dtype(value.dtype).name]))
    _log.info("Froze %d variables; converted %d variables to const ops.", len(frozen), len(frozen))
    return GraphDef(out, inference.versions)


def remove_training_nodes(input_graph, protected_nodes=None):
    """A GraphDef without CheckNumerics nodes and with Identity/StopGradient nodes spliced out
    (those not in `protected_nodes` and not involved in control edges), as TF1."""
    _check_graph_def(input_graph)
    protected = set(protected_nodes or ())
    removed = {n.name for n in input_graph.node if n.op == "CheckNumerics" and n.name not in protected}
    nodes = []
    for n in input_graph.node:
        if n.name in removed:
            continue
        n = n.copy()
        n.input = [s for s in n.input if _node_name(s) not in removed]
        nodes.append(n)
    control_sources, with_control = set(), set()
    for n in nodes:
        for s in n.input:
            if s.startswith("^"):
                control_sources.add(_node_name(s))
                with_control.add(n.name)
    splice = {n.name: n.input[0] for n in nodes
              if n.op in ("Identity", "StopGradient") and n.name not in protected and n.input
              and n.name not in with_control and n.name not in control_sources}
    out = []
    for n in nodes:
        if n.name in splice:
            continue
        inputs = []
        for s in n.input:
            ctrl = s.startswith("^")
            while _node_name(s) in splice and (ctrl or parse_input(s)[1] == 0):
                s = splice[_node_name(s)]
            inputs.append("^" + _node_name(s) if ctrl and not s.startswith("^") else s)
        n.input = inputs
        out.append(n)
    return GraphDef(out, input_graph.versions)


def tensor_shape_from_node_def_name(graph, input_name):
    """The static shape of tensor `input_name` ("op" meaning "op:0") of `graph`."""
    if ":" not in input_name:
        input_name += ":0"
    return graph.get_tensor_by_name(input_name).get_shape()


_VARIABLE_OPS = {"Assign", "AssignAdd", "AssignSub", "Queue", "ScatterAdd", "ScatterSub", "ScatterUpdate",
                 "TruncatedNormal", "Variable", "VariableV2"}


def must_run_on_cpu(node, pin_variables_on_cpu=False):
    """TF1's placement rule for an Operation or NodeDef: True for variable ops (when
    `pin_variables_on_cpu`), string or int32 Consts, int32 DynamicStitch and Casts from int32."""
    if isinstance(node, Operation):
        op_type = node.type
        out = node.outputs[0].dtype if node.outputs else None
        src = node.inputs[0].dtype if node.inputs else None
    elif isinstance(node, NodeDef):
        op_type = node.op
        out = as_dtype(node.output_dtypes[0]) if node.output_dtypes else None
        src = as_dtype(node.attr["SrcT"]) if node.attr.get("SrcT") is not None else None
    else:
        raise TypeError(f"must_run_on_cpu: expected an Operation or a NodeDef, got {type(node).__name__}")
    if pin_variables_on_cpu and op_type in _VARIABLE_OPS:
        return True
    if op_type == "Const":
        return out in (dtypes.string, dtypes.int32)
    if op_type in ("DynamicStitch", "ParallelDynamicStitch"):
        return out == dtypes.int32
    if op_type == "Cast":
        return src == dtypes.int32
    return False
