"""TensorFlow's MetaGraphDef and SavedModel protobufs ⇄ the fields of dflow's MetaGraphDef
(dflow/io/meta_graph.py) and SavedModel (dflow/io/saved_model.py).

Reading a TF meta graph: its graph is converted by dflow/io/tf_graph.py with pruning (TF's training
and save/restore subgraphs hold ops dflow lacks, such as ApplyAdam or SaveV2; they are dropped, with
a warning, and dflow builds its own optimizer and Saver); `variables` and `trainable_variables`
(VariableDef protos) become dflow variable items; node lists become tensor or operation items;
number and string lists become values; items naming dropped nodes are left out. The saver_def
becomes a saver over the global variables (the checkpoint names are the variables' op names, as
TF1's Saver writes them). SignatureDefs become dflow/io/signature.py's.

Writing: the inverse, without save/restore ops in the graph: TF's `import_meta_graph` then returns
no saver, and `tf.compat.v1.train.Saver()` built after the import restores the variables.
"""

from __future__ import annotations

import warnings

from tensorboard.compat.proto import meta_graph_pb2, variable_pb2

from ..graph.keys import GraphKeys
from ..graph.serialize import parse_input
from .signature import SignatureDef, TensorInfo
from .tf_graph import graph_def_from_tf, graph_def_to_tf, parse_proto_bytes
from .tf_graph_values import dtype_from_tf, dtype_to_tf, shape_from_tf, shape_to_tf

__all__ = ["meta_graph_fields_from_tf", "meta_graph_fields_from_bytes", "meta_graph_to_tf"]

# the ops of TF's save/restore subgraph: dropped silently (dflow's Saver replaces them)
_SAVER_OPS = {"SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename", "StaticRegexFullMatch", "StringJoin",
              "SaveSlices", "RestoreSlice", "Save", "Restore"}
_VARIABLE_KEYS = {GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, "local_variables", "model_variables",
                  "moving_average_variables"}


def meta_graph_fields_from_bytes(data, what="MetaGraphDef"):
    """The MetaGraphDef(...) keyword arguments of a TF MetaGraphDef's binary or text bytes."""
    return meta_graph_fields_from_tf(parse_proto_bytes(data, meta_graph_pb2.MetaGraphDef, what))


def meta_graph_fields_from_tf(proto):
    graph_def, dropped, roots = graph_def_from_tf(proto.graph_def, prune=True)
    ops = sorted({n.op for n in proto.graph_def.node if n.name in roots} - _SAVER_OPS)
    if ops:
        warnings.warn(f"import of a TensorFlow meta graph: {len(dropped)} nodes depending on op types dflow lacks "
                      f"({', '.join(ops[:12])}{', ...' if len(ops) > 12 else ''}) were left out: TF's training "
                      "and save/restore ops; build the optimizer and Saver in dflow", stacklevel=4)
    names = {n.name for n in graph_def.node}

    def known(name):
        parsed = parse_input(name)
        return parsed is not None and parsed[0] in names

    collections = {}
    for key, col in proto.collection_def.items():
        kind = col.WhichOneof("kind")
        items = []
        if key in _VARIABLE_KEYS and kind == "bytes_list":
            for raw in col.bytes_list.value:
                v = variable_pb2.VariableDef.FromString(raw)
                refs = [v.variable_name.split(":")[0], v.initializer_name, v.snapshot_name, v.initial_value_name]
                if all(r and known(r) for r in refs):
                    items.append({"variable": {"handle": refs[0], "initializer": refs[1], "snapshot": refs[2],
                                               "initial_value": refs[3], "trainable": bool(v.trainable)}})
        elif kind == "node_list":
            items = [{"tensor" if ":" in n else "operation": n} for n in col.node_list.value if known(n)]
        elif kind in ("int64_list", "float_list"):
            items = [{"value": v} for v in getattr(col, kind).value]
        elif kind == "bytes_list":
            try:
                items = [{"value": v.decode("utf-8")} for v in col.bytes_list.value]
            except UnicodeDecodeError:
                items = []  # serialized protos of contexts dflow does not keep (cond/while contexts)
        if items:
            collections[key] = items
    saver_def = None
    if proto.HasField("saver_def"):
        sd = proto.saver_def
        saver_def = {"name": sd.filename_tensor_name.split("/")[0] or "save",
                     "max_to_keep": int(sd.max_to_keep) if sd.max_to_keep else 5,
                     "keep_checkpoint_every_n_hours": float(sd.keep_checkpoint_every_n_hours or 10000.0),
                     "var_list": None}
    info = proto.meta_info_def
    meta_info = {"meta_graph_version": info.meta_graph_version, "tags": list(info.tags),
                 "tensorflow_version": info.tensorflow_version,
                 "stripped_op_list": sorted({n.op for n in graph_def.node})}
    signatures = {k: _signature_from_tf(s) for k, s in proto.signature_def.items()}
    return {"graph_def": graph_def, "meta_info_def": meta_info, "saver_def": saver_def,
            "collection_def": collections, "signature_def": signatures}


def _signature_from_tf(sig):
    def info(t):
        return TensorInfo(t.name, dtype_from_tf(t.dtype) if t.dtype else None,
                          shape_from_tf(t.tensor_shape) if t.HasField("tensor_shape") else None)
    return SignatureDef({k: info(v) for k, v in sig.inputs.items()}, {k: info(v) for k, v in sig.outputs.items()},
                        sig.method_name)


def meta_graph_to_tf(meta):
    """The TF MetaGraphDef message of a dflow MetaGraphDef."""
    out = meta_graph_pb2.MetaGraphDef()
    out.graph_def.CopyFrom(graph_def_to_tf(meta.graph_def))
    info = meta.meta_info_def
    out.meta_info_def.meta_graph_version = str(info.get("meta_graph_version", ""))
    out.meta_info_def.tags.extend(info.get("tags") or [])
    for key, items in meta.collection_def.items():
        col = out.collection_def[key]
        for item in items:
            (kind, v), = item.items()
            if kind == "variable":
                vd = variable_pb2.VariableDef(variable_name=v["handle"] + ":0", initializer_name=v["initializer"],
                                              snapshot_name=v["snapshot"], initial_value_name=v["initial_value"],
                                              trainable=v["trainable"])
                col.bytes_list.value.append(vd.SerializeToString())
            elif kind in ("tensor", "operation"):
                col.node_list.value.append(v)
            elif isinstance(v, bool) or isinstance(v, int):
                col.int64_list.value.append(int(v))
            elif isinstance(v, float):
                col.float_list.value.append(v)
            elif isinstance(v, str):
                col.bytes_list.value.append(v.encode("utf-8"))
        if not col.WhichOneof("kind"):
            del out.collection_def[key]
    for key, sig in meta.signature_def.items():
        s = out.signature_def[key]
        s.method_name = sig.method_name
        for side, infos in (("inputs", sig.inputs), ("outputs", sig.outputs)):
            for k, t in infos.items():
                ti = getattr(s, side)[k]
                ti.name = t.name
                if t.dtype is not None:
                    ti.dtype = dtype_to_tf(t.dtype)
                ti.tensor_shape.CopyFrom(shape_to_tf(t.tensor_shape))
    return out
