"""Meta graphs (TF1's `tf.train.export_meta_graph` / `import_meta_graph`): a graph with its
collections and saver, so a training job restarts from files alone.

Collections are stored by name: variables as their handle, initializer, snapshot and initial-value
names (rebuilt on import as `dflow.Variable`s bound to the imported ops, adding no op), tensors and
ops by name, plain values as they are. The saver is its checkpoint-name → variable map. File
layout, safety and errors are those of dflow/io/graph_io.py.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
from google.protobuf import text_format

from ..errors import DataLossError, InvalidArgumentError
from ..graph import serialize
from ..graph.graph import get_default_graph
from ..graph.keys import GraphKeys
from ..graph.ops import Operation, Tensor
from ..graph.registry import OpState, get_opdef
from ..graph.serialize import GraphDef, parse_input
from ..state.variables import Variable
from ..storage import files
from ..version import __version__
from .graph_io import (
    _NAME_ATTRS,
    _UNBOUND,
    LARGE_CONST_ELEMENTS,
    _fail,
    _import,
    _read_document,
    _rollback,
    _write_document,
)
from .saver import Saver, set_meta_graph_writer
from .signature import signature_map_from_json
from .tf_meta_graph import meta_graph_fields_from_bytes, meta_graph_to_tf

__all__ = ["export_meta_graph", "import_meta_graph", "read_meta_graph_file", "MetaGraphDef"]

FORMAT = "dflow.MetaGraphDef"


class MetaGraphDef:
    """A graph with its collections and saver (TF1's `tf.MetaGraphDef`).

    `collection_def`: {key: [item]}, each item one of {"variable": {handle, initializer, snapshot,
    initial_value, trainable}}, {"tensor": name}, {"operation": name}, {"value": scalar}.
    `signature_def`: {key: SignatureDef} (dflow/io/signature.py; a SavedModel's signatures).
    `saver_def`: None or {name, max_to_keep, keep_checkpoint_every_n_hours, var_list: {ckpt name:
    variable op name} | null}. `meta_info_def`: plain JSON data (version, tags, op types used).
    """

    def __init__(self, graph_def=None, meta_info_def=None, saver_def=None, collection_def=None,
                 signature_def=None):
        self.graph_def = graph_def if graph_def is not None else GraphDef()
        self.meta_info_def = MetaInfoDef(meta_info_def or {})
        self.saver_def = saver_def
        self.collection_def = dict(collection_def or {})
        self.signature_def = dict(signature_def or {})

    def HasField(self, name):  # noqa: N802 - protobuf name
        return bool(getattr(self, name, None))

    def to_json(self, external=None):
        return {"format": FORMAT, "version": serialize.VERSION, "meta_info_def": self.meta_info_def,
                "graph_def": self.graph_def.to_json(external), "saver_def": self.saver_def,
                "collection_def": self.collection_def,
                "signature_def": {k: v.to_json() for k, v in self.signature_def.items()}}

    @classmethod
    def from_json(cls, doc):
        keys = {"format", "version", "meta_info_def", "graph_def", "saver_def", "collection_def", "signature_def"}
        serialize._check_header(doc, FORMAT, keys, "MetaGraphDef")
        info = doc.get("meta_info_def", {})
        if type(info) is not dict or not _plain(info):
            raise DataLossError(None, None, "MetaGraphDef: meta_info_def must be plain JSON data")
        graph_def = GraphDef.from_json(doc.get("graph_def"))
        return cls(graph_def, info, _check_saver_def(doc.get("saver_def")),
                   _check_collections(doc.get("collection_def", {})),
                   signature_map_from_json(doc.get("signature_def", {})))

    def SerializeToString(self, deterministic=None):  # noqa: N802 - TF1 name
        return serialize._dumps(self.to_json())

    def ParseFromString(self, data):  # noqa: N802 - TF1 name
        """dflow's JSON or TensorFlow's MetaGraphDef protobuf (binary or text); DataLossError if neither."""
        if isinstance(data, (bytes, bytearray, memoryview, str)) and not serialize.looks_like_json(data):
            other = MetaGraphDef(**meta_graph_fields_from_bytes(data))
        else:
            other = MetaGraphDef.from_json(serialize._loads(data, "MetaGraphDef"))
        self.graph_def, self.meta_info_def = other.graph_def, other.meta_info_def
        self.saver_def, self.collection_def = other.saver_def, other.collection_def
        self.signature_def = other.signature_def
        return len(data)

    def CopyFrom(self, other):  # noqa: N802 - protobuf name
        self.graph_def = GraphDef()
        self.graph_def.CopyFrom(other.graph_def)
        self.meta_info_def = MetaInfoDef(other.meta_info_def)
        self.signature_def = dict(other.signature_def)
        self.saver_def = None if other.saver_def is None else dict(other.saver_def)
        self.collection_def = {k: list(v) for k, v in other.collection_def.items()}

    def __repr__(self):
        return f"<dflow.MetaGraphDef with {len(self.graph_def.node)} nodes, collections " \
               f"{sorted(self.collection_def)}>"


class MetaInfoDef(dict):
    """A meta graph's plain JSON facts (version, tags, op types used), read as items or, as TF1's
    proto fields, as attributes (`meta_info_def.tags`)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"MetaInfoDef has no field {name!r}") from None


def _plain(x, depth=0):
    if depth > 16:
        return False
    if x is None or isinstance(x, (str, bool, int)) or (type(x) is float and math.isfinite(x)):
        return True
    if type(x) is list:
        return all(_plain(v, depth + 1) for v in x)
    if type(x) is dict:
        return all(_plain(v, depth + 1) for v in x.values())
    return False


def _is_name(s, tensor=False):
    if not isinstance(s, str) or len(s) > 4200:
        return False
    m = serialize._INPUT.match(s)
    return bool(m) and not m.group(1) and not m.group(2) and (m.group(4) is not None) == tensor


_VAR_KEYS = {"handle", "initializer", "snapshot", "initial_value", "trainable"}


def _check_collections(doc):
    if type(doc) is not dict:
        raise DataLossError(None, None, "MetaGraphDef: collection_def must be an object")
    for key, items in doc.items():
        where = f"MetaGraphDef collection {key!r}"
        if type(items) is not list:
            raise DataLossError(None, None, f"{where} must be a list")
        for it in items:
            if type(it) is not dict or len(it) != 1:
                raise DataLossError(None, None, f"{where}: bad item {serialize._short(it)}")
            (kind, v), = it.items()
            ok = {
                "variable": lambda v: type(v) is dict and set(v) == _VAR_KEYS and _is_name(v["handle"]) and
                _is_name(v["initializer"]) and _is_name(v["snapshot"], True) and
                _is_name(v["initial_value"], True) and isinstance(v["trainable"], bool),
                "tensor": lambda v: _is_name(v, True),
                "operation": lambda v: _is_name(v),
                "value": lambda v: v is None or isinstance(v, (str, bool, int)) or
                (type(v) is float and math.isfinite(v)),
            }.get(kind)
            if ok is None or not ok(v):
                raise DataLossError(None, None, f"{where}: bad item {serialize._short(it)}")
    return doc


def _check_saver_def(doc):
    if doc is None:
        return None
    ok = type(doc) is dict and set(doc) == {"name", "max_to_keep", "keep_checkpoint_every_n_hours", "var_list"}
    ok = ok and isinstance(doc["name"], str) and (doc["max_to_keep"] is None or type(doc["max_to_keep"]) is int)
    ok = ok and type(doc["keep_checkpoint_every_n_hours"]) in (int, float)
    vl = doc.get("var_list") if ok else None
    ok = ok and (vl is None or (type(vl) is dict and all(isinstance(k, str) and _is_name(v) for k, v in vl.items())))
    if not ok:
        raise DataLossError(None, None, "MetaGraphDef: malformed saver_def")
    return doc


def read_meta_graph_file(filename):
    """The MetaGraphDef in a file written by `export_meta_graph` (constants loaded and verified)."""
    return _read_document(filename, MetaGraphDef)


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None, collection_list=None,
                      as_text=False, graph=None, export_scope=None, clear_devices=False,
                      clear_extraneous_savers=False, strip_default_attrs=False, saver=None, format=None,  # noqa: A002
                      **kwargs):
    """The MetaGraphDef of a graph (default graph): ops, collections and saver; written to
    `filename` when given: format="dflow" (default) as JSON whatever `as_text`, large arrays in
    `filename.consts`; format="tensorflow" (also the default for a `saver` made with that format) as
    TensorFlow's MetaGraphDef protobuf, binary or `as_text`, which `tf.compat.v1.train.import_meta_graph`
    reads (it holds no save/restore ops: build `tf.train.Saver()` after importing).

    `export_scope` keeps only ops under that scope, with the scope stripped (inputs from outside
    become "$unbound_inputs_<name>", to be given in `input_map` on import). Collection items that
    cannot be described (Python objects) drop their collection with a warning, as TF1.
    InvalidArgumentError for ops that cannot be serialized (Python callables).
    """
    large = kwargs.pop("large_constant_elements", LARGE_CONST_ELEMENTS)
    kwargs.pop("save_debug_info", None)
    if kwargs:
        raise TypeError(f"export_meta_graph got unexpected arguments {sorted(kwargs)}")
    graph = graph if graph is not None else get_default_graph()
    source = graph_def if graph_def is not None else graph.as_graph_def()
    if not isinstance(source, GraphDef):
        raise TypeError(f"graph_def must be a dflow GraphDef, got {type(source).__name__}")
    rename = _scope_renamer(export_scope)
    nodes = []
    for n in source.node:
        new_name = rename(n.name)
        if new_name is None:
            continue
        n = n.copy()
        n.name = new_name
        n.input = [_rename_input(s, rename) for s in n.input]
        if n.op in _NAME_ATTRS and _NAME_ATTRS[n.op] in n.attr:
            v = n.attr[_NAME_ATTRS[n.op]]
            n.attr[_NAME_ATTRS[n.op]] = [rename(x) or x for x in v] if isinstance(v, (list, tuple)) else \
                (rename(v) or v if isinstance(v, str) else v)
        if clear_devices:
            n.device = ""
        nodes.append(n)
    out_def = GraphDef(nodes, source.versions)
    names = {n.name for n in nodes}
    info = {"meta_graph_version": "", "tags": [], "dflow_version": _version(),
            "stripped_op_list": sorted({n.op for n in nodes})}
    if meta_info_def is not None:
        if not isinstance(meta_info_def, dict) or not _plain(meta_info_def):
            raise TypeError("meta_info_def must be a dict of plain JSON data")
        info.update(meta_info_def)
    meta = MetaGraphDef(out_def, info, _saver_def(saver, saver_def, rename, names),
                        _export_collections(graph, collection_list, rename, names))
    if format is None:
        format = getattr(saver, "_format", "dflow") or "dflow"  # noqa: A001
    if format not in ("dflow", "tensorflow"):
        raise InvalidArgumentError(None, None, f"export_meta_graph: format must be 'dflow' or 'tensorflow', got "
                                   f"{format!r}")
    if filename is not None and format == "tensorflow":
        proto = meta_graph_to_tf(meta)
        data = text_format.MessageToString(proto).encode("utf-8") if as_text else \
            proto.SerializeToString(deterministic=True)
        files.write_file(os.fspath(filename), data, f"Writing the meta graph file {os.fspath(filename)!r}")
    elif filename is not None:
        _write_document(filename, meta.to_json, large)
    return meta


def _version():
    return __version__


def _scope_renamer(scope):
    if not scope:
        return lambda n: n
    prefix = scope.rstrip("/") + "/"
    return lambda n: n[len(prefix):] if n.startswith(prefix) else None


def _rename_input(s, rename):
    ctrl = "^" if s.startswith("^") else ""
    base = s[len(ctrl):]
    op_name, colon, idx = base.partition(":")
    new = rename(op_name)
    if new is None:
        return f"{ctrl}{_UNBOUND}{op_name}{colon}{idx}"
    return f"{ctrl}{new}{colon}{idx}"


def _saver_def(saver, saver_def, rename, names):
    if saver is None and saver_def is None:
        return None
    if saver_def is not None and not isinstance(saver_def, dict):
        raise TypeError(f"saver_def must be a dict (Saver.as_saver_def()), got {type(saver_def).__name__}")
    base = dict(saver_def or {})
    if saver is not None:
        base = {**saver.as_saver_def(), **base}
    out = {"name": str(base.get("name") or "save"), "max_to_keep": base.get("max_to_keep", 5),
           "keep_checkpoint_every_n_hours": float(base.get("keep_checkpoint_every_n_hours", 10000.0)),
           "var_list": None}
    if out["max_to_keep"] is not None:
        out["max_to_keep"] = int(out["max_to_keep"])
    if saver is not None:
        var_list = {}
        for ckpt_name, v in saver._vars().items():
            handle = rename(v.op.name)
            if handle is not None and handle in names:
                var_list[ckpt_name] = handle
        out["var_list"] = var_list
    return out


def _export_collections(graph, collection_list, rename, names):
    keys = graph.get_all_collection_keys() if collection_list is None else list(collection_list)
    out = {}
    for key in keys:
        if not isinstance(key, str) or key == GraphKeys.SAVERS:
            continue  # the savers are described by the meta graph's saver entry
        items, ok = [], True
        for v in graph.get_collection(key):
            if isinstance(v, Variable):
                refs = [rename(v.op.name), rename(getattr(v._initializer_op, "name", "")),
                        _rename_tensor(v._snapshot, rename), _rename_tensor(v._initial_value, rename)]
                if not all(refs) or not all(r.rpartition(":")[0] in names if ":" in r else r in names
                                            for r in refs):
                    continue  # a variable whose ops are not all exported
                items.append({"variable": {"handle": refs[0], "initializer": refs[1], "snapshot": refs[2],
                                           "initial_value": refs[3], "trainable": bool(v.trainable)}})
            elif isinstance(v, Tensor):
                n = _rename_tensor(v, rename)
                if n is not None and n.rpartition(":")[0] in names:
                    items.append({"tensor": n})
            elif isinstance(v, Operation):
                n = rename(v.name)
                if n is not None and n in names:
                    items.append({"operation": n})
            elif isinstance(v, np.generic):
                items.append({"value": v.item()})
            elif v is None or isinstance(v, (str, bool, int)) or (isinstance(v, float) and np.isfinite(v)):
                items.append({"value": v})
            else:
                warnings.warn(f"export_meta_graph: collection {key!r} holds a {type(v).__name__}, which a meta "
                              "graph cannot describe; the collection is not exported", stacklevel=3)
                ok = False
                break
        if ok and items:
            out[key] = items
    return out


def _rename_tensor(t, rename):
    if not isinstance(t, Tensor):
        return None
    n = rename(t.op.name)
    return None if n is None else f"{n}:{t.value_index}"


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """Imports a meta graph (a MetaGraphDef or the path of an exported file) into the default
    graph, rebuilding its collections and variables; returns a `Saver` restoring the imported
    variables, or None when there are none (TF1's `tf.train.import_meta_graph`).

    kwargs: `input_map`, `restore_collections_predicate(key) -> bool`.
    NotFoundError / DataLossError for missing or malformed files, InvalidArgumentError for
    documents that do not describe a valid graph.
    """
    input_map = kwargs.pop("input_map", None)
    predicate = kwargs.pop("restore_collections_predicate", None) or (lambda key: True)
    kwargs.pop("unbound_inputs_col_name", None)
    if kwargs:
        raise TypeError(f"import_meta_graph got unexpected arguments {sorted(kwargs)}")
    if isinstance(meta_graph_or_file, MetaGraphDef):
        meta = meta_graph_or_file
    elif isinstance(meta_graph_or_file, (str, os.PathLike)):
        meta = read_meta_graph_file(meta_graph_or_file)
    else:
        raise TypeError(f"import_meta_graph needs a MetaGraphDef or a file name, got "
                        f"{type(meta_graph_or_file).__name__}")
    graph = get_default_graph()
    n_ops, names = len(graph._ops), dict(graph._names_in_use)
    created, _ = _import(graph, meta.graph_def, input_map, import_scope or "", clear_devices)
    try:
        variables = {}
        staged = []
        for key, items in meta.collection_def.items():
            if predicate(key):
                staged.append((key, [_rebuild_item(graph, it, created, variables) for it in items]))
        saver_vars = _saver_variables(graph, meta, created, variables)
    except BaseException:
        with graph._lock:
            _rollback(graph, n_ops, names)
        raise
    for key, values in staged:
        for v in values:
            graph.add_to_collection(key, v)
    for v in variables.values():
        graph._variables_by_handle = getattr(graph, "_variables_by_handle", {})
        graph._variables_by_handle[v.op.name] = v
    if not saver_vars:
        return None
    sd = meta.saver_def or {}
    return Saver(var_list=saver_vars, max_to_keep=sd.get("max_to_keep", 5), name=sd.get("name"),
                 keep_checkpoint_every_n_hours=sd.get("keep_checkpoint_every_n_hours", 10000.0))


def _lookup(created, name, what, tensor=False):
    parsed = parse_input(name)
    op = created.get(parsed[0]) if parsed else None
    if op is None:
        raise _fail(f"meta graph {what} names {name!r}, which is not among the imported ops")
    if not tensor:
        return op
    if parsed[1] >= len(op.outputs):
        raise _fail(f"meta graph {what} names {name!r}, but {parsed[0]!r} has {len(op.outputs)} output(s)")
    return op.outputs[parsed[1]]


def _rebuild_item(graph, item, created, variables):
    (kind, v), = item.items()
    if kind == "variable":
        return _rebuild_variable(graph, v, created, variables)
    if kind == "tensor":
        return _lookup(created, v, "collection item", tensor=True)
    if kind == "operation":
        return _lookup(created, v, "collection item")
    return v


def _rebuild_variable(graph, d, created, variables):
    """A `dflow.Variable` bound to the imported ops (no op is added), as Variable.__init__ leaves it."""
    handle = _lookup(created, d["handle"], "variable")
    if handle in variables:
        return variables[handle]
    if get_opdef(handle.type).state is not OpState.VARIABLE:
        raise _fail(f"meta graph variable {d['handle']!r} is a {handle.type} op, not a variable")
    v = Variable.__new__(Variable)
    v._handle = handle.outputs[0]
    v._initializer_op = _lookup(created, d["initializer"], "variable initializer")
    v._snapshot = _lookup(created, d["snapshot"], "variable snapshot", tensor=True)
    v._initial_value = _lookup(created, d["initial_value"], "variable initial value", tensor=True)
    v._trainable = d["trainable"]
    v._constraint = None
    v._graph = graph
    variables[handle] = v
    return v


def _saver_variables(graph, meta, created, variables):
    """{checkpoint name: Variable} of the saver to return (the saver_def's, else every variable)."""
    sd = meta.saver_def
    if sd is not None and sd.get("var_list") is not None:
        out = {}
        for ckpt_name, handle_name in sd["var_list"].items():
            op = _lookup(created, handle_name, "saver variable")
            if op not in variables:
                if get_opdef(op.type).state is not OpState.VARIABLE:
                    raise _fail(f"saver variable {handle_name!r} is a {op.type} op, not a variable")
                v = Variable.__new__(Variable)
                v._handle, v._initializer_op, v._snapshot = op.outputs[0], None, op.outputs[0]
                v._initial_value, v._trainable, v._graph = None, False, graph
                v._constraint = None
                variables[op] = v
            out[ckpt_name] = variables[op]
        return out
    globals_ = [it["variable"]["handle"] for it in meta.collection_def.get(GraphKeys.GLOBAL_VARIABLES, [])
                if "variable" in it]
    return {h: variables[created[h]] for h in globals_ if h in created and created[h] in variables}


set_meta_graph_writer(export_meta_graph)
