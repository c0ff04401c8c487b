"""Graph ⇄ a versioned JSON document (`GraphDef`). Loading never runs code."""

from __future__ import annotations

import json

import numpy as np

FORMAT = "dflow.GraphDef"
VERSION = 1


def _attr_to_json(value):
    from .dtypes import DType
    from .shape import TensorShape

    if isinstance(value, DType):
        return {"dtype": value.name}
    if isinstance(value, TensorShape):
        return {"shape": None if value.ndims is None else value.as_list()}
    if isinstance(value, np.ndarray):
        return {"array": value.tolist(), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, np.generic):
        return {"array": value.item(), "dtype": str(value.dtype), "shape": []}
    if isinstance(value, (list, tuple)):
        return {"list": [_attr_to_json(v) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    if isinstance(value, slice):
        return {"slice": [value.start, value.stop, value.step]}
    if value is Ellipsis:
        return {"ellipsis": True}
    raise TypeError(f"attr of type {type(value).__name__} cannot be serialized")


class GraphDef:
    """A serializable description of a graph: `node` (list of dicts) and `versions`."""

    def __init__(self, nodes=None, versions=None):
        self.node = list(nodes or [])
        self.versions = dict(versions or {"producer": VERSION})

    def SerializeToString(self):  # noqa: N802 - TF1 name
        doc = {"format": FORMAT, "version": VERSION, "node": self.node}
        return json.dumps(doc, sort_keys=True).encode("utf-8")

    def ParseFromString(self, data):  # noqa: N802 - TF1 name
        from ..errors import DataLossError

        try:
            doc = json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)
        except (ValueError, UnicodeDecodeError) as e:
            raise DataLossError(None, None, f"GraphDef is not valid JSON: {e}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("node"), list):
            raise DataLossError(None, None, "Document is not a dflow GraphDef")
        self.node = doc["node"]
        return len(data)

    def __len__(self):
        return len(self.node)


def graph_to_def(graph):
    nodes = []
    for op in graph.get_operations():
        attrs = {}
        for k, v in op._attrs.items():
            try:
                attrs[k] = _attr_to_json(v)
            except TypeError:
                attrs[k] = {"unserializable": type(v).__name__}
        nodes.append({
            "name": op.name,
            "op": op.type,
            "input": [t.name for t in op.inputs] + ["^" + c.name for c in op.control_inputs],
            "device": op.device,
            "attr": attrs,
            "output_shapes": [None if t.shape.ndims is None else t.shape.as_list() for t in op.outputs],
            "output_dtypes": [t.dtype.name for t in op.outputs],
        })
    return GraphDef(nodes)
