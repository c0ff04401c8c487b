"""A dflow graph as the protos TensorBoard reads: `GraphDef` for the graph dashboard, and
`RunMetadata` (step stats) for `FileWriter.add_run_metadata`.

Each op becomes a `NodeDef` with its name (scopes are the `/` in it), type, device and inputs
(`op` for output 0, `op:i` for the others, `^op` for control inputs). Its outputs' static shapes
go in the `_output_shapes` attr (TensorBoard labels edges with them), their dtypes in
`_output_types`. Plain attrs are carried over: numbers, strings, bools, dtypes (`dtype`, `T`, ...),
shapes and lists of those; a constant's value is written whole up to 1024 elements, above that
its dtype and shape only (the dashboard shows no values). Attrs that hold sub-graphs or Python
objects (cond branches, py_func callables, Zarr targets) are left out.
"""

from __future__ import annotations

import numbers

import numpy as np
from tensorboard.compat.proto import (
    attr_value_pb2,
    config_pb2,
    graph_pb2,
    meta_graph_pb2,
    node_def_pb2,
    step_stats_pb2,
    versions_pb2,
)

from ..graph.dtypes import DType
from ..graph.serialize import GraphDef, graph_to_def
from ..graph.shape import TensorShape
from .common import data_type, shape_proto, tensor_proto

__all__ = ["graph_def_proto", "meta_graph_proto", "run_metadata_proto"]

_CONST_LIMIT = 1024  # elements of a constant written whole


def _input_name(name):
    if name.startswith("^"):
        return name
    op, _, index = name.rpartition(":")
    return op if index == "0" and op else name


def _shape_dims(shape):
    if isinstance(shape, TensorShape):
        return None if shape.ndims is None else shape.as_list()
    return None if shape is None else list(shape)


def _attr_value(value):
    """An AttrValue for a plain attr value, or None where it has no TF form."""
    A = attr_value_pb2.AttrValue
    if isinstance(value, (bool, np.bool_)):
        return A(b=bool(value))
    if isinstance(value, numbers.Integral):
        return A(i=int(value))
    if isinstance(value, numbers.Real):
        return A(f=float(value))
    if isinstance(value, str):
        return A(s=value.encode("utf-8"))
    if isinstance(value, bytes):
        return A(s=value)
    if isinstance(value, DType):
        try:
            return A(type=data_type(value))
        except ValueError:
            return None
    if isinstance(value, TensorShape):
        return A(shape=shape_proto(_shape_dims(value)))
    if isinstance(value, np.ndarray):
        try:
            return A(tensor=tensor_proto(value, with_content=value.size <= _CONST_LIMIT))
        except (TypeError, ValueError):
            return None
    if isinstance(value, (list, tuple)):
        items = list(value)
        lv = A.ListValue()
        if all(isinstance(v, (bool, np.bool_)) for v in items):
            lv.b.extend(bool(v) for v in items)
        elif all(isinstance(v, numbers.Integral) for v in items):
            lv.i.extend(int(v) for v in items)
        elif all(isinstance(v, numbers.Real) for v in items):
            lv.f.extend(float(v) for v in items)
        elif all(isinstance(v, (str, bytes)) for v in items):
            lv.s.extend(v if isinstance(v, bytes) else v.encode("utf-8") for v in items)
        elif all(isinstance(v, DType) for v in items):
            try:
                lv.type.extend(data_type(v) for v in items)
            except ValueError:
                return None
        elif all(isinstance(v, TensorShape) for v in items):
            lv.shape.extend(shape_proto(_shape_dims(v)) for v in items)
        else:
            return None
        return A(list=lv)
    return None


def _node(node):
    out = node_def_pb2.NodeDef(name=node.name, op=node.op, input=[_input_name(i) for i in node.input],
                               device=node.device or "")
    for key, value in node.attr.items():
        av = _attr_value(value)
        if av is not None:
            out.attr[key].CopyFrom(av)
    if node.output_shapes is not None:
        shapes = attr_value_pb2.AttrValue.ListValue(shape=[shape_proto(s) for s in node.output_shapes])
        out.attr["_output_shapes"].CopyFrom(attr_value_pb2.AttrValue(list=shapes))
    if node.output_dtypes:
        try:
            types = attr_value_pb2.AttrValue.ListValue(type=[data_type(d) for d in node.output_dtypes])
            out.attr["_output_types"].CopyFrom(attr_value_pb2.AttrValue(list=types))
        except ValueError:
            pass
    return out


def graph_def_proto(graph):
    """The TensorBoard `GraphDef` proto of a dflow `Graph` or `GraphDef` (one NodeDef per op)."""
    gdef = graph if isinstance(graph, GraphDef) else graph_to_def(graph)
    out = graph_pb2.GraphDef(versions=versions_pb2.VersionDef(producer=gdef.versions.get("producer", 1)))
    out.node.extend(_node(n) for n in gdef.node)
    return out


def meta_graph_proto(meta_graph):
    """TensorBoard's `MetaGraphDef` proto holding the GraphDef proto of a `Graph`, a dflow `GraphDef`
    or a dflow `MetaGraphDef` (its graph only: dflow's saver and collections have no proto form);
    a proto is returned as it is."""
    if isinstance(meta_graph, meta_graph_pb2.MetaGraphDef):
        return meta_graph
    graph = getattr(meta_graph, "graph_def", meta_graph)
    return meta_graph_pb2.MetaGraphDef(graph_def=graph_def_proto(graph))


def run_metadata_proto(run_metadata):
    """TensorBoard's `RunMetadata` proto of a dflow `RunMetadata` (its step stats); a proto is
    returned as it is."""
    if isinstance(run_metadata, config_pb2.RunMetadata):
        return run_metadata
    out = config_pb2.RunMetadata()
    for dev in getattr(getattr(run_metadata, "step_stats", None), "dev_stats", ()):
        d = out.step_stats.dev_stats.add(device=dev.device)
        for n in dev.node_stats:
            d.node_stats.append(step_stats_pb2.NodeExecStats(
                node_name=n.node_name, all_start_micros=n.all_start_micros,
                op_start_rel_micros=n.op_start_rel_micros, op_end_rel_micros=n.op_end_rel_micros,
                all_end_rel_micros=n.all_end_rel_micros, timeline_label=n.timeline_label,
                thread_id=int(n.thread_id) & 0xFFFFFFFF))
    return out
