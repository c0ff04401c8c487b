"""Graph files: `import_graph_def`, `write_graph` / `read_graph_def`, `export_meta_graph` /
`import_meta_graph` (graph + collections + saver: a training job restarts from files alone).

Documents are the JSON of dflow/graph/serialize.py. A file at PATH keeps arrays of at least
`LARGE_CONST_ELEMENTS` elements (Const values, frozen variables) in a Zarr v3 group `PATH.consts`
beside it, one array per value, referenced from the JSON by name, dtype, shape and sha256 (never
inline); `GraphDef.SerializeToString()` in memory keeps them inline as base64. Both are written to
temporary names and renamed into place, the group first. Reading verifies every checksum.

Loading runs no code: no pickle, eval or exec; Zarr arrays are opened only with an allow-list of
codecs (no pickle filters) and numeric dtypes. A malformed or hostile document raises
DataLossError (cannot be read) or InvalidArgumentError (read, but not a valid graph); the graph
is left as it was. Running an imported graph still reads and writes the Zarr paths its
ZarrSource/ZarrSink ops name: import graphs from people you trust before running them.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil

import numpy as np
import zarr

from ..devices import machine_memory
from ..errors import (
    DataLossError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    ResourceExhaustedError,
)
from ..graph import serialize
from ..graph.dtypes import as_dtype
from ..graph.graph import get_default_graph
from ..graph.ops import Operation, Tensor
from ..graph.registry import get_registered_gradient, is_registered
from ..graph.serialize import (
    ExternalArray,
    GraphDef,
    NodeDef,
    ObjectRef,
    TensorRef,
    parse_input,
    tensor_refs,
)
from ..graph.shape import TensorShape
from ..storage import files
from .tf_graph import UNSUPPORTED, serialize_graph_def, unsupported_message
from .zarr_io import Target

__all__ = ["import_graph_def", "write_graph", "read_graph_def", "GraphDef", "NodeDef"]

LARGE_CONST_ELEMENTS = 1024
CONSTS_FORMAT = "dflow.graph_consts"
_UNBOUND = "$unbound_inputs_"
# Attrs holding op names (not tensors): renamed with their ops on import and export_scope.
_NAME_ATTRS = {"IsVariableInitialized": "var", "ReportUninitializedVariables": "names"}


class GraphImportError(InvalidArgumentError, ValueError):
    """A GraphDef that cannot be imported (ValueError, as TF1's import_graph_def raises)."""


def _fail(message, node=None):
    return GraphImportError(None, None, f"Node {node!r}: {message}" if node else message)


# ---- object attrs: Zarr arrays and write targets -----------------------------------------------

_V3_CODECS = {"BytesCodec", "ZstdCodec", "GzipCodec", "BloscCodec", "TransposeCodec", "Crc32cCodec",
              "ShardingCodec"}
_V2_COMPRESSORS = {"zstd", "blosc", "gzip", "zlib", "bz2", "lzma", "lz4"}


def _check_codecs(codecs, where):
    for c in codecs:
        if type(c).__name__ not in _V3_CODECS:
            raise InvalidArgumentError(None, None, f"{where}: Zarr codec {type(c).__name__} is not allowed in "
                                       f"a graph file (allowed: {sorted(_V3_CODECS)})")
        for inner in ("codecs", "index_codecs"):
            _check_codecs(getattr(c, inner, ()) or (), where)


def open_zarr_safely(path, where):
    """A read-only zarr.Array at `path` with a numeric dtype and allow-listed codecs only (no
    pickle or other code-carrying filters); NotFoundError if absent, InvalidArgumentError if unsafe."""
    try:
        arr = zarr.open_array(path, mode="r")
    except Exception as e:  # noqa: BLE001 - zarr raises many types for a missing or foreign node
        raise NotFoundError(None, None, f"{where}: no readable Zarr array at {path!r} ({type(e).__name__})") \
            from None
    meta = arr.metadata
    if meta.zarr_format == 3:
        _check_codecs(meta.codecs, where)
        if getattr(meta, "storage_transformers", ()):
            raise InvalidArgumentError(None, None, f"{where}: Zarr storage transformers are not allowed")
    else:
        if meta.filters:
            raise InvalidArgumentError(None, None, f"{where}: Zarr v2 filters are not allowed in a graph file")
        cid = getattr(meta.compressor, "codec_id", None)
        if meta.compressor is not None and cid not in _V2_COMPRESSORS:
            raise InvalidArgumentError(None, None, f"{where}: Zarr compressor {cid!r} is not allowed")
    if arr.dtype.kind not in "biufc":
        raise InvalidArgumentError(None, None, f"{where}: Zarr array of dtype {arr.dtype} is not allowed")
    return arr


def _encode_zarr_array(arr, where):
    root = getattr(arr.store, "root", None)
    if type(arr.store).__name__ != "LocalStore" or root is None:
        raise InvalidArgumentError(None, None, f"{where}: a Zarr array on a {type(arr.store).__name__} cannot be "
                                   "serialized; only arrays in a local directory can")
    return {"store": os.path.abspath(os.fspath(root)), "path": arr.path}


def _encode_target(target, where):
    if not target.local:
        raise InvalidArgumentError(None, None, f"{where}: a Zarr target on a {type(target.root).__name__} "
                                   "cannot be serialized; only local directories can")
    return {"root": os.path.abspath(target.root), "path": target.path, "grouped": bool(target.grouped)}


serialize.register_object_attr(zarr.Array, "zarr.Array", _encode_zarr_array)
serialize.register_object_attr(Target, "zarr.Target", _encode_target)


def _resolve_object(ref, where):
    f = ref.fields
    if ref.type == "zarr.Array" and set(f) == {"store", "path"} and all(isinstance(f[k], str) for k in f):
        if not f["store"] or "\0" in f["store"] + f["path"]:
            raise _fail(f"{where}: bad Zarr array location")
        try:
            return open_zarr_safely(os.path.join(f["store"], f["path"]) if f["path"] else f["store"], where)
        except NotFoundError as e:
            raise _fail(str(e)) from None
    if ref.type == "zarr.Target" and set(f) == {"root", "path", "grouped"} and isinstance(f["root"], str) \
            and isinstance(f["path"], str) and isinstance(f["grouped"], bool) and f["root"] \
            and "\0" not in f["root"] + f["path"]:
        return Target(f["root"], f["path"], f["grouped"])
    raise _fail(f"{where}: unknown or malformed object attr of type {ref.type!r}")


def _resolve_attr(value, where, tensor=None):
    """An attr's value with its objects reopened and its TensorRefs replaced by `tensor(ref)`."""
    if isinstance(value, ObjectRef):
        return _resolve_object(value, where)
    if isinstance(value, TensorRef):
        if tensor is None:
            raise _fail(f"{where}: a tensor reference ({value.name}) outside a graph's node")
        return tensor(value)
    if isinstance(value, ExternalArray):
        raise _fail(f"{where}: its array {value.group}/{value.array} lives in the Zarr group beside the file the "
                    "document came from; read the file with dflow read_graph_def(path) or import_meta_graph(path)")
    if type(value) in (list, tuple):
        return type(value)(_resolve_attr(v, where, tensor) for v in value)
    if type(value) is dict:
        return {k: _resolve_attr(v, where, tensor) for k, v in value.items()}
    return value


def _referenced(node):
    """The tensors `node` reads: its inputs, then the TensorRefs in its attrs (a Cond's branch
    outputs), as (op name, index or -1) pairs."""
    return [parse_input(s) for s in node.input] + [parse_input(r.name) for v in node.attr.values()
                                                    for r in tensor_refs(v)]


# ---- import_graph_def ----------------------------------------------------------------------------


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None,
                     producer_op_list=None):
    """Imports the ops of `graph_def` into the default graph (TF1's `tf.import_graph_def`).

    Names get the prefix `name/` ("import" by default, made unique; "" for none). `input_map`
    {"op:0": Tensor, "^op": Operation} replaces those tensors; `return_elements` names ops ("op")
    or tensors ("op:0") to return (in order); returns None without it. All or nothing: on error
    the graph is unchanged. Raises TypeError for a non-GraphDef, InvalidArgumentError (also a
    ValueError) for unknown ops, dangling inputs, cycles, bad attrs or shape/dtype conflicts.
    """
    graph = get_default_graph()
    created, _ = _import(graph, graph_def, input_map, "import" if name is None else name)
    if return_elements is None:
        return None
    if isinstance(return_elements, str):
        raise TypeError("return_elements must be a list of strings")
    out = []
    for r in return_elements:
        parsed = parse_input(r) if isinstance(r, str) else None
        if parsed is None or parsed[1] < 0 or parsed[0] not in created:
            raise _fail(f"Requested return node {r!r} not found in graph def")
        op = created[parsed[0]]
        if ":" not in r:
            out.append(op)
        elif parsed[1] >= len(op.outputs):
            raise _fail(f"Invalid return output {parsed[1]} of node {parsed[0]!r}, which has "
                        f"{len(op.outputs)} output(s)")
        else:
            out.append(op.outputs[parsed[1]])
    return out


def _import(graph, graph_def, input_map, name, clear_devices=False):
    """Creates the ops; returns ({node name: Operation}, scope). Rolls the graph back on error."""
    if not isinstance(graph_def, GraphDef):
        raise TypeError(f"graph_def must be a dflow GraphDef, got {type(graph_def).__name__}")
    if graph.finalized:
        raise RuntimeError("Graph is finalized and cannot be modified.")
    if not isinstance(name, str) or (name and not serialize.NODE_NAME.match(name.rstrip("/"))):
        raise ValueError(f"{name!r} is not a valid import name scope")
    nodes = _check_nodes(graph_def)
    mapping = _check_input_map(graph, input_map, nodes)
    order = _topological_order(nodes, mapping)
    with graph._lock:
        n_ops, names = len(graph._ops), dict(graph._names_in_use)
        try:
            return _create_ops(graph, nodes, order, mapping, name, clear_devices)
        except BaseException:
            _rollback(graph, n_ops, names)
            raise


def _check_nodes(graph_def):
    nodes = {}
    for n in graph_def.node:
        if not isinstance(n, NodeDef):
            raise TypeError(f"graph_def.node must hold NodeDefs, got {type(n).__name__}")
        if not isinstance(n.name, str) or not serialize.NODE_NAME.match(n.name):
            raise _fail(f"invalid node name {n.name!r}")
        if n.name in nodes:
            raise _fail(f"Duplicate node name in graph: {n.name!r}")
        if isinstance(n.attr, dict) and UNSUPPORTED in n.attr:  # a TensorFlow node dflow cannot run
            raise _fail(unsupported_message(n.op, n.name, n.attr[UNSUPPORTED]))
        if not isinstance(n.op, str) or not is_registered(n.op):
            raise _fail(f"Op type not registered {n.op!r}", n.name)
        if not isinstance(n.attr, dict) or not isinstance(n.device, str) or not isinstance(n.input, list):
            raise _fail("attr must be a dict, device a string and input a list", n.name)
        for s in n.input:
            if parse_input(s) is None:
                raise _fail(f"malformed input {s!r}", n.name)
        nodes[n.name] = n
    return nodes


def _check_input_map(graph, input_map, nodes):
    """{(node name, index or -1): Tensor/Operation}; ValueError for unknown keys or foreign values."""
    if input_map is not None and not isinstance(input_map, dict):
        raise TypeError(f"input_map must be a dict, got {type(input_map).__name__}")
    mapping, missing = {}, []
    used = {src for n in nodes.values() for src in _referenced(n)}
    for key, value in (input_map or {}).items():
        parsed = parse_input(key) if isinstance(key, str) else None
        if parsed is None:
            raise _fail(f"input_map key {key!r} is not a tensor name")
        if parsed[0] not in nodes and (_UNBOUND + parsed[0], parsed[1]) in used:
            parsed = (_UNBOUND + parsed[0], parsed[1])  # an input from outside an export_scope
        if hasattr(value, "_as_graph_element"):
            value = value._as_graph_element()
        if parsed[1] < 0:
            value = value.op if isinstance(value, Tensor) else value
            ok = isinstance(value, Operation)
        else:
            ok = isinstance(value, Tensor)
        if not ok or value.graph is not graph:
            raise _fail(f"input_map[{key!r}] must be a {'Operation' if parsed[1] < 0 else 'Tensor'} of the "
                        f"graph imported into, got {value!r}")
        mapping[parsed] = value
        if parsed[0] not in nodes and parsed not in used:
            missing.append(key)
    if missing:
        raise _fail(f"Attempted to map inputs that were not found in graph_def: [{', '.join(missing)}]")
    return mapping


def _topological_order(nodes, mapping):
    deps, users = {}, {n: [] for n in nodes}
    for n in nodes.values():
        d = set()
        for src in _referenced(n):
            if src in mapping:
                continue
            if src[0] not in nodes:
                s = f"^{src[0]}" if src[1] < 0 else f"{src[0]}:{src[1]}"
                raise _fail(f"Unknown input node {s!r}", n.name)
            d.add(src[0])
        deps[n.name] = d
        for s in d:
            users[s].append(n.name)
    ready = [n for n in nodes if not deps[n]]
    order = []
    pending = {n: len(d) for n, d in deps.items()}
    while ready:
        nxt = []
        for n in ready:
            order.append(n)
            for u in users[n]:
                pending[u] -= 1
                if pending[u] == 0:
                    nxt.append(u)
        ready = nxt
    if len(order) != len(nodes):
        stuck = sorted(n for n, c in pending.items() if c > 0)[:5]
        raise _fail(f"graph_def has a cycle (through nodes {stuck})")
    return order


def _create_ops(graph, nodes, order, mapping, name, clear_devices):
    scope = name[:-1] if name.endswith("/") else (graph.unique_name(name) if name else "")
    created = {}
    for node_name in order:
        node = nodes[node_name]
        full = f"{scope}/{node_name}" if scope else node_name
        saved, graph._name_stack = graph._name_stack, ""
        try:
            op_name = graph.unique_name(full)
        finally:
            graph._name_stack = saved
        inputs, controls = [], []
        for s in node.input:
            src = parse_input(s)
            if src in mapping:
                (controls if src[1] < 0 else inputs).append(mapping[src])
                continue
            op = created[src[0]]
            if src[1] < 0:
                controls.append(op)
            elif src[1] >= len(op.outputs):
                raise _fail(f"input {s!r}: node {src[0]!r} has {len(op.outputs)} output(s)", node_name)
            else:
                inputs.append(op.outputs[src[1]])
        _check_input_dtypes(node, nodes, inputs)

        def tensor(ref, node_name=node_name):
            src = parse_input(ref.name)
            if src in mapping:
                return mapping[src]
            op = created[src[0]]
            if src[1] >= len(op.outputs):
                raise _fail(f"attr reference {ref.name!r}: node {src[0]!r} has {len(op.outputs)} output(s)",
                            node_name)
            return op.outputs[src[1]]

        attrs = {k: _resolve_attr(v, f"attr {k!r} of node {node_name!r}", tensor) for k, v in node.attr.items()}
        _rename_name_attrs(node.op, attrs, created, scope)
        _check_attrs(node, attrs)
        try:
            op = graph.create_op(node.op, inputs, attrs, name=op_name + "/")
        except Exception as e:  # noqa: BLE001 - whatever an op's inference raises, it is a bad node
            raise _fail(f"cannot create op {node.op!r}: {type(e).__name__}: {e}", node_name) from None
        for c in controls:
            op._add_control_input(c)
        if node.device and not clear_devices:
            op._set_device(node.device)
        elif clear_devices:
            op._set_device("")
        if node.gradient_op_type and get_registered_gradient(node.gradient_op_type) is not None:
            op._gradient_override = node.gradient_op_type
        _check_outputs(node, op)
        created[node_name] = op
    return created, scope


def _check_input_dtypes(node, nodes, inputs):
    for i, t in enumerate(inputs):
        src = parse_input([s for s in node.input if not s.startswith("^")][i])
        dts = nodes[src[0]].output_dtypes if src[0] in nodes else None
        if dts and src[1] < len(dts) and as_dtype(dts[src[1]]) != t.dtype:
            raise _fail(f"input {i} was passed {t.dtype.name} from {t.name!r}, incompatible with the expected "
                        f"{dts[src[1]]}", node.name)


def _rename_name_attrs(op_type, attrs, created, scope):
    key = _NAME_ATTRS.get(op_type)
    if key is None or key not in attrs:
        return

    def rename(n):
        if not isinstance(n, str):
            raise _fail(f"attr {key!r} must hold op names")
        return created[n].name if n in created else (f"{scope}/{n}" if scope else n)

    v = attrs[key]
    attrs[key] = [rename(n) for n in v] if isinstance(v, (list, tuple)) else rename(v)


def _check_attrs(node, attrs):
    if node.op == "Const":
        v, dt = attrs.get("value"), attrs.get("dtype")
        if not isinstance(v, np.ndarray) or dt is None or not hasattr(dt, "np_dtype") or v.dtype != dt.np_dtype:
            raise _fail("a Const needs an array 'value' of its 'dtype'", node.name)
    elif node.op == "VariableV2":
        shape = attrs.get("shape")
        if not isinstance(shape, TensorShape) or not shape.is_fully_defined():
            raise _fail("a VariableV2 needs a fully defined TensorShape 'shape'", node.name)
    elif node.op == "ZarrSource":
        arr = attrs.get("array")
        if not isinstance(arr, zarr.Array) or tuple(arr.shape) != tuple(attrs.get("shape") or ()) or \
                as_dtype(arr.dtype) != attrs.get("dtype"):
            raise _fail("the Zarr array's shape or dtype differs from the node's", node.name)


def _check_outputs(node, op):
    dts, shapes = node.output_dtypes, node.output_shapes
    if dts is not None:
        if len(dts) != len(op.outputs):
            raise _fail(f"recorded {len(dts)} outputs, the op has {len(op.outputs)}", node.name)
        for t, d in zip(op.outputs, dts):
            if t.dtype != as_dtype(d):
                raise _fail(f"output {t.value_index} has dtype {t.dtype.name}, the document says {d}", node.name)
    if shapes is not None:
        if len(shapes) != len(op.outputs):
            raise _fail(f"recorded {len(shapes)} output shapes, the op has {len(op.outputs)}", node.name)
        for t, s in zip(op.outputs, shapes):
            try:
                t.set_shape(TensorShape(s))
            except ValueError as e:
                raise _fail(str(e), node.name) from None


def _rollback(graph, n_ops, names):
    for op in graph._ops[n_ops:]:
        graph._ops_by_name.pop(op.name, None)
        for t in op.inputs:
            t._consumers[:] = [c for c in t._consumers if c is not op]
    del graph._ops[n_ops:]
    graph._names_in_use = names


# ---- files ---------------------------------------------------------------------------------------


def _checksum(arr):
    data = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
    return "sha256:" + hashlib.sha256(data.tobytes()).hexdigest()


def _write_document(path, to_json, large):
    """Writes to_json(external) to `path`, arrays of >= `large` elements into `path.consts`."""
    path = os.fspath(path)
    group = os.path.basename(path) + ".consts"
    group_path = os.path.join(os.path.dirname(os.path.abspath(path)), group)
    arrays = []

    def external(node, key, arr):
        if arr.dtype == object or arr.dtype.kind not in "biufc" or arr.size < large:
            return None
        ref = ExternalArray(group, f"c{len(arrays)}", as_dtype(arr.dtype).name, arr.shape, _checksum(arr))
        arrays.append((ref, arr, node.name, key))
        return ref

    data = serialize._dumps(to_json(external))
    kind = files.node_kind(path)
    if kind not in ("missing", "file"):
        what = "a symbolic link" if kind == "link" else "a directory"
        raise FailedPreconditionError(None, None, f"Cannot write the graph file {path!r}: {what} is there. "
                                      "Nothing was changed.")
    consts_kind = files.node_kind(group_path)
    if consts_kind not in ("missing", "empty") and not _is_consts_group(group_path):
        raise FailedPreconditionError(None, None, f"Cannot write the constants of {path!r}: {group_path!r} exists "
                                      "and is not a constants group of a graph file. Nothing was changed.")
    files.sweep(os.path.dirname(group_path))  # temporaries of writers that were killed
    if arrays:
        tmp = files.temp_path(group_path, "tmp")
        try:
            g = zarr.open_group(tmp, mode="w")
            for ref, arr, node, key in arrays:
                z = g.create_array(ref.array, shape=arr.shape, dtype=arr.dtype, chunks="auto")
                z[...] = arr
                z.attrs.update({"node": node, "attr": key, "checksum": ref.checksum})
            g.attrs.update({"format": CONSTS_FORMAT, "version": serialize.VERSION})
            old = files.swap_in(tmp, group_path)  # one atomic step: the old group or the new one
            if old is not None:
                files.remove(old)
        except BaseException as e:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(e, OSError):
                raise files.os_error(e, f"Writing the constants of {path!r}") from None
            raise
    files.write_file(path, data, f"Writing the graph file {path!r}")
    if not arrays and os.path.isdir(group_path) and _is_consts_group(group_path):
        shutil.rmtree(group_path, ignore_errors=True)  # stale arrays of an earlier version of the file


def _is_consts_group(path):
    try:
        return zarr.open_group(path, mode="r").attrs.get("format") == CONSTS_FORMAT
    except Exception:  # noqa: BLE001 - not a group of ours
        return False


def _read_document(path, cls):
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(None, None, f"No graph file at {path!r}") from None
    except OSError as e:  # a directory, no permission
        raise files.os_error(e, f"Cannot read the graph file {path!r}") from None
    obj = cls()
    try:
        obj.ParseFromString(data)
    except DataLossError as e:
        raise DataLossError(None, None, f"{path}: {e.message}") from None
    # a MetaGraphDef holds one graph, a SavedModel several (its `graph_defs()`)
    graph_defs = obj.graph_defs() if hasattr(obj, "graph_defs") else [getattr(obj, "graph_def", obj)]
    base = os.path.dirname(os.path.abspath(path))
    cache = {}
    for graph_def in graph_defs:
        for node in graph_def.node:
            for k, v in node.attr.items():
                node.attr[k] = _load_external(v, base, cache, f"{path}: node {node.name!r} attr {k!r}")
    return obj


def _check_loadable(value, where):
    """A constant is loaded whole: refuse (ResourceExhaustedError) one that this machine could not
    hold, before reading it (a Zarr array with missing chunks reads as its fill value, so a tiny
    file can declare a huge constant)."""
    nbytes = math.prod(value.shape) * np.dtype(value.dtype).itemsize
    machine = machine_memory()
    if machine and nbytes > machine // 2:
        raise ResourceExhaustedError(None, None, f"{where}: the constant of shape {list(value.shape)} and type "
                                     f"{value.dtype} needs {nbytes} bytes, more than this machine's memory "
                                     f"({machine} bytes) can hold with a copy")


def _load_external(value, base, cache, where):
    if isinstance(value, ExternalArray):
        key = (value.group, value.array)
        if key not in cache:
            try:
                arr = open_zarr_safely(os.path.join(base, value.group, value.array), where)
            except NotFoundError as e:
                raise DataLossError(None, None, f"{e} (the constants group beside the file is missing or "
                                    "incomplete)") from None
            if list(arr.shape) != list(value.shape) or str(arr.dtype) != value.dtype:
                raise DataLossError(None, None, f"{where}: stored array is {arr.dtype}{list(arr.shape)}, the "
                                    f"document says {value.dtype}{list(value.shape)}")
            _check_loadable(value, where)
            out = np.asarray(arr[...])
            if _checksum(out) != value.checksum:
                raise DataLossError(None, None, f"{where}: checksum mismatch: the stored constant is corrupted")
            out.setflags(write=False)
            cache[key] = out
        return cache[key]
    if type(value) in (list, tuple):
        return type(value)(_load_external(v, base, cache, where) for v in value)
    if type(value) is dict:
        return {k: _load_external(v, base, cache, where) for k, v in value.items()}
    return value


def write_graph(graph_or_graph_def, logdir, name, as_text=True, large_constant_elements=LARGE_CONST_ELEMENTS,
                format="dflow"):  # noqa: A002 - the keyword users pass
    """Writes a Graph or GraphDef to `logdir/name`; returns the path.

    format="dflow" (default): JSON (`as_text` is ignored), arrays of >= `large_constant_elements`
    in the Zarr group `name.consts` beside it. format="tensorflow": TensorFlow's GraphDef protobuf,
    binary or text (`as_text`), every constant inline, for `tf.compat.v1.import_graph_def`.
    InvalidArgumentError for ops that cannot be serialized (Python callables, or ops with no
    TensorFlow form)."""
    if hasattr(graph_or_graph_def, "as_graph_def"):
        graph_or_graph_def = graph_or_graph_def.as_graph_def()
    if not isinstance(graph_or_graph_def, GraphDef):
        raise TypeError(f"write_graph needs a Graph or GraphDef, got {type(graph_or_graph_def).__name__}")
    if format not in ("dflow", "tensorflow"):
        raise InvalidArgumentError(None, None, f"write_graph: format must be 'dflow' or 'tensorflow', got {format!r}")
    logdir = os.fspath(logdir)
    if logdir:
        files.ensure_dir(logdir, "write_graph")
    path = os.path.join(logdir, name)
    if format == "tensorflow":
        files.write_file(path, serialize_graph_def(graph_or_graph_def, as_text), f"Writing the graph file {path!r}")
    else:
        _write_document(path, graph_or_graph_def.to_json, large_constant_elements)
    return path



def read_graph_def(path):
    """The GraphDef in a file written by `write_graph`, its external constants loaded and verified.

    NotFoundError for a missing file, DataLossError for a malformed one."""
    return _read_document(path, GraphDef)

