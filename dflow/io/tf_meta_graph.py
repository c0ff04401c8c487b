"""TensorFlow's MetaGraphDef and SavedModel protobufs ⇄ the fields of dflow's MetaGraphDef
(dflow/io/meta_graph.py) and SavedModel (dflow/io/saved_model.py).

Reading a TF meta graph: its graph is converted by dflow/io/tf_graph.py with pruning (TF's training
and save/restore subgraphs hold ops dflow lacks, such as ApplyAdam or SaveV2; they are dropped, with
a warning, and dflow builds its own optimizer and Saver); `variables` and `trainable_variables`
(VariableDef protos) become dflow variable items; node lists become tensor or operation items;
number and string lists become values; items naming dropped nodes are left out. The saver_def
becomes a saver over the global variables (the checkpoint names are the variables' op names, as
TF1's Saver writes them). SignatureDefs become dflow/io/signature.py's.

Writing: the inverse, plus TF's save/restore subgraph when the meta graph has a saver and
variables (`add_saver_subgraph`: `save/Const` the filename, `save/SaveV2` + `save/control_dependency`,
`save/RestoreV2` with one `save/Assign` per variable and `save/restore_all`, and the SaverDef (V2)
naming them), which is what TensorFlow runs to restore: `import_meta_graph(...).restore()` and the
SavedModel loader. Reading such a file back, that subgraph is dropped quietly (`_saver_nodes`).
"""

from __future__ import annotations

import warnings

import numpy as np
from tensorboard.compat.proto import meta_graph_pb2, node_def_pb2, saver_pb2, variable_pb2

from ..errors import InvalidArgumentError
from ..graph.dtypes import as_dtype
from ..graph.keys import GraphKeys
from ..graph.serialize import parse_input
from ..graph.shape import TensorShape
from ..graph.tensor_proto import dtype_from_tf, dtype_to_tf, shape_from_tf, shape_to_tf
from .signature import SignatureDef, TensorInfo
from .tf_graph import graph_def_from_tf, graph_def_to_tf, parse_proto_bytes, without_unwritable
from .tf_graph_values import attr_to_tf

__all__ = ["meta_graph_fields_from_tf", "meta_graph_fields_from_bytes", "meta_graph_to_tf"]

# the ops of TF's save/restore subgraph: dropped silently (dflow's Saver replaces them)
_SAVER_OPS = {"SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename", "StaticRegexFullMatch", "StringJoin",
              "SaveSlices", "RestoreSlice", "Save", "Restore"}
_VARIABLE_KEYS = {GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, "local_variables", "model_variables",
                  "moving_average_variables"}


def meta_graph_fields_from_bytes(data, what="MetaGraphDef"):
    """The MetaGraphDef(...) keyword arguments of a TF MetaGraphDef's binary or text bytes."""
    return meta_graph_fields_from_tf(parse_proto_bytes(data, meta_graph_pb2.MetaGraphDef, what))


def _saver_nodes(proto):
    """The names of the meta graph's save/restore subgraph: the nodes under the saver's scope that
    its SaverDef's filename, save and restore endpoints depend on (variables excluded)."""
    if not proto.HasField("saver_def"):
        return set()
    sd = proto.saver_def
    scope = sd.filename_tensor_name.split("/")[0]
    if not scope or "/" not in sd.filename_tensor_name:
        return set()
    nodes = {n.name: n for n in proto.graph_def.node}
    stack = [t.lstrip("^").split(":")[0] for t in (sd.filename_tensor_name, sd.save_tensor_name,
                                                   sd.restore_op_name) if t]
    found = set()
    while stack:
        name = stack.pop()
        n = nodes.get(name)
        if name in found or n is None or not name.startswith(scope + "/"):
            continue
        found.add(name)
        stack.extend(i.lstrip("^").split(":")[0] for i in n.input)
    # anything else under the scope that only these feed (TF's sharded saver's helpers)
    for n in proto.graph_def.node:
        if n.name.startswith(scope + "/") and n.op in _SAVER_OPS | {"Const", "PlaceholderWithDefault", "NoOp",
                                                                    "Identity", "Assign", "AssignVariableOp"} \
                and all(i.lstrip("^").split(":")[0] in found for i in n.input) and n.input:
            found.add(n.name)
    return found


def meta_graph_fields_from_tf(proto):
    saver_nodes = _saver_nodes(proto)
    if saver_nodes:
        graph = type(proto.graph_def)()
        graph.CopyFrom(proto.graph_def)
        del graph.node[:]
        graph.node.extend(n for n in proto.graph_def.node if n.name not in saver_nodes)
    else:
        graph = proto.graph_def
    graph_def, dropped, roots = graph_def_from_tf(graph, prune=True)
    ops = sorted({n.op for n in graph.node if n.name in roots} - _SAVER_OPS)
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
    if proto.asset_file_def:  # the loader points these tensors at the SavedModel's assets/
        meta_info["asset_file_def"] = [{"tensor": a.tensor_info.name, "filename": a.filename}
                                       for a in proto.asset_file_def]
    signatures = {k: _signature_from_tf(s) for k, s in proto.signature_def.items()}
    return {"graph_def": graph_def, "meta_info_def": meta_info, "saver_def": saver_def,
            "collection_def": collections, "signature_def": signatures}


def _signature_from_tf(sig):
    def info(t):
        return TensorInfo(t.name, dtype_from_tf(t.dtype) if t.dtype else None,
                          shape_from_tf(t.tensor_shape) if t.HasField("tensor_shape") else None)
    return SignatureDef({k: info(v) for k, v in sig.inputs.items()}, {k: info(v) for k, v in sig.outputs.items()},
                        sig.method_name)


def meta_graph_to_tf(meta, assets=None):
    """The TF MetaGraphDef message of a dflow MetaGraphDef; `assets`: [(tensor name, file name
    in the SavedModel's assets/)] for its asset_file_def."""
    out = meta_graph_pb2.MetaGraphDef()
    graph_def, dropped = without_unwritable(meta.graph_def)
    for key, sig in meta.signature_def.items():
        for t in list(sig.inputs.values()) + list(sig.outputs.values()):
            name = (parse_input(t.name) or ("",))[0]
            if name in dropped:
                raise InvalidArgumentError(None, None, f"signature {key!r}: tensor {t.name!r} has no TensorFlow "
                                           f"form: {_why(name, dropped)}")
    if dropped:
        types = sorted({dropped[n] for n in dropped if dropped[n] not in dropped})
        warnings.warn(f"meta graph written for TensorFlow without {len(dropped)} nodes that depend on dflow op "
                      f"types with no TensorFlow form ({', '.join(types[:12])}{', ...' if len(types) > 12 else ''}"
                      "): usually a training graph's optimizer and gradient ops; the model and its variables "
                      "are written", stacklevel=3)
    out.graph_def.CopyFrom(graph_def_to_tf(graph_def))
    info = meta.meta_info_def
    out.meta_info_def.meta_graph_version = str(info.get("meta_graph_version", ""))
    out.meta_info_def.tags.extend(info.get("tags") or [])
    def kept(item):
        (kind, v), = item.items()
        refs = [v["handle"], v["initializer"], v["snapshot"], v["initial_value"]] if kind == "variable" else \
            [v] if kind in ("tensor", "operation") else []
        return not any((parse_input(r) or ("",))[0] in dropped for r in refs)

    for key, items in meta.collection_def.items():
        col = out.collection_def[key]
        for item in filter(kept, items):
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
    for tensor, filename in assets or ():
        out.asset_file_def.add(filename=filename).tensor_info.name = tensor
    add_saver_subgraph(out, meta)
    return out


def _why(name, dropped):
    seen = [name]
    while dropped.get(seen[-1]) in dropped and len(seen) < 50:
        seen.append(dropped[seen[-1]])
    return f"node {name!r} depends on {seen[-1]!r}, a dflow {dropped[seen[-1]]} op" if len(seen) > 1 else \
        f"node {name!r} is a dflow {dropped[name]} op"


def _tf_node(name, op, inputs, **attrs):
    proto = node_def_pb2.NodeDef(name=name, op=op, input=[i[:-2] if i.endswith(":0") else i for i in inputs])
    for k, v in attrs.items():
        proto.attr[k].CopyFrom(attr_to_tf(v, f"node {name!r} ({op}) attr {k!r}"))
    return proto


def _strings(values):
    return np.array([v.encode("utf-8") for v in values], dtype=object)


def add_saver_subgraph(out, meta):
    """Adds TF1's save/restore subgraph (Saver, V2, not sharded) over the meta graph's saver
    variables to the TF MetaGraphDef `out` and sets its saver_def; nothing when there is no saver
    or no variable. Checkpoint names are the saver's (`var_list`), else the variables' op names."""
    sd = meta.saver_def
    if not sd:
        return
    nodes = {n.name: n for n in out.graph_def.node}
    var_list = sd.get("var_list")
    if var_list is None:
        var_list = {}
        for item in meta.collection_def.get(GraphKeys.GLOBAL_VARIABLES, []):
            v = item.get("variable")
            if v:
                var_list[v["handle"]] = v["handle"]
    items = [(ckpt, op) for ckpt, op in sorted(var_list.items()) if op in nodes and
             nodes[op].op == "VariableV2"]
    if not items:
        return
    scope, i = str(sd.get("name") or "save"), 0
    base = scope
    while any(n == scope or n.startswith(scope + "/") for n in nodes):
        i += 1
        scope = f"{base}_{i}"
    string = as_dtype("string")
    dtypes = [dtype_from_tf(nodes[op].attr["dtype"].type) for _, op in items]
    names = _strings([c for c, _ in items])
    slices = _strings(["" for _ in items])
    s = scope
    new = [
        _tf_node(f"{s}/filename/input", "Const", [], dtype=string, value=np.array(b"model", dtype=object)),
        _tf_node(f"{s}/filename", "PlaceholderWithDefault", [f"{s}/filename/input"], dtype=string,
                 shape=TensorShape([])),
        _tf_node(f"{s}/Const", "PlaceholderWithDefault", [f"{s}/filename"], dtype=string,
                 shape=TensorShape([])),
        _tf_node(f"{s}/SaveV2/tensor_names", "Const", [], dtype=string, value=names),
        _tf_node(f"{s}/SaveV2/shape_and_slices", "Const", [], dtype=string, value=slices),
        _tf_node(f"{s}/SaveV2", "SaveV2", [f"{s}/Const", f"{s}/SaveV2/tensor_names",
                                           f"{s}/SaveV2/shape_and_slices"] + [op for _, op in items],
                 dtypes=dtypes),
        _tf_node(f"{s}/control_dependency", "Identity", [f"{s}/Const", f"^{s}/SaveV2"], T=string),
        _tf_node(f"{s}/RestoreV2/tensor_names", "Const", [], dtype=string, value=names),
        _tf_node(f"{s}/RestoreV2/shape_and_slices", "Const", [], dtype=string, value=slices),
        _tf_node(f"{s}/RestoreV2", "RestoreV2", [f"{s}/Const", f"{s}/RestoreV2/tensor_names",
                                                 f"{s}/RestoreV2/shape_and_slices"], dtypes=dtypes),
    ]
    assigns = []
    for k, ((_, op), dt) in enumerate(zip(items, dtypes)):
        name = f"{s}/Assign" + (f"_{k}" if k else "")
        assigns.append(name)
        new.append(_tf_node(name, "Assign", [op, f"{s}/RestoreV2:{k}"], T=dt, validate_shape=True,
                            use_locking=True))
    new.append(_tf_node(f"{s}/restore_all", "NoOp", [f"^{a}" for a in assigns]))
    out.graph_def.node.extend(new)
    out.saver_def.CopyFrom(saver_pb2.SaverDef(
        filename_tensor_name=f"{s}/Const:0", save_tensor_name=f"{s}/control_dependency:0",
        restore_op_name=f"{s}/restore_all", max_to_keep=int(sd.get("max_to_keep") or 0), sharded=False,
        keep_checkpoint_every_n_hours=float(sd.get("keep_checkpoint_every_n_hours") or 10000.0),
        version=saver_pb2.SaverDef.V2))
