"""Graph ⇄ a versioned JSON document: `GraphDef`, `NodeDef`. Loading never runs code.

In memory a `GraphDef` is a list of `NodeDef`s whose attrs are plain Python values (numpy arrays,
`DType`, `TensorShape`, numbers, strings, lists, tuples, dicts, slices, Ellipsis), so it can be
inspected and rewritten (`dflow.graph_util`). `SerializeToString()` gives one JSON document that
holds everything inline: arrays as base64 of their little-endian bytes with dtype and shape.
Files written by `dflow.train.write_graph` / `export_meta_graph` instead keep large arrays in a Zarr
group beside the JSON (see dflow/io/graph_io.py); the document then holds a `const_ref` (name,
dtype, shape, sha256) that the file reader resolves and verifies.

Attr encoding: JSON scalars stand for themselves (null, bools, ints, finite floats, strings); all
else is a one-key object naming its type: {"list": [...]}, {"tuple": [...]}, {"dict": {...}},
{"float": "nan"|"inf"|"-inf"}, {"complex": [re, im]}, {"bytes": b64}, {"dtype": name},
{"shape": null|[dims]}, {"tensor": {dtype, shape, data|strings}}, {"scalar": {dtype, data}},
{"slice": [start, stop, step]}, {"ellipsis": true}, {"const_ref": {...}},
{"tensor_ref": "op:0"} (a tensor of the same document: a Cond's branch outputs, a While's loop
variables; the importer resolves it and creates the op after it) and
{"object": {"type", "fields"}} (objects such as a Zarr array, described by plain fields and
reopened by the importer). Decoding only ever builds these types; anything else in a document is
a `DataLossError`. Python callables (py_func-style ops) refuse to serialize (InvalidArgumentError).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re

import numpy as np

from ..errors import DataLossError, InvalidArgumentError
from .dtypes import DType, as_dtype
from .ops import Tensor
from .shape import TensorShape

FORMAT = "dflow.GraphDef"
VERSION = 1
_MAX_DEPTH = 64
_MAX_RANK = 32
_MAX_DIM = 1 << 62
_ARRAY_DTYPES = frozenset(["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                           "uint16", "uint32", "uint64", "bool", "complex64", "complex128"])
_DTYPE_NAMES = _ARRAY_DTYPES | {"string", "variant"}  # variant: a TensorArray flow (never an array value)
NODE_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_INPUT = re.compile(r"^(\^)?(\$unbound_inputs_)?([A-Za-z0-9.][A-Za-z0-9_.\\/>-]*?)(?::(\d{1,9}))?$")
_ATTR_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")

# ---- attr values ---------------------------------------------------------------------------------


class ExternalArray:
    """An array attr kept outside the document (in the Zarr group beside a graph file)."""

    __slots__ = ("group", "array", "dtype", "shape", "checksum")

    def __init__(self, group, array, dtype, shape, checksum):
        self.group, self.array, self.dtype = group, array, dtype
        self.shape, self.checksum = tuple(shape), checksum

    def to_json(self):
        return {"group": self.group, "array": self.array, "dtype": self.dtype, "shape": list(self.shape),
                "checksum": self.checksum}

    def __repr__(self):
        return f"<ExternalArray {self.group}/{self.array} {self.dtype}{list(self.shape)}>"


class ObjectRef:
    """An object attr (a Zarr array, a Zarr write target) as a type tag and plain fields; the
    importer reopens it (dflow/io/graph_io.py)."""

    __slots__ = ("type", "fields")

    def __init__(self, type, fields):  # noqa: A002 - the document's key
        self.type, self.fields = type, dict(fields)

    def __repr__(self):
        return f"<ObjectRef {self.type} {self.fields}>"


class TensorRef:
    """An attr naming a tensor of the same document ("op:0"); the importer resolves it to the
    imported tensor (dflow/io/graph_io.py)."""

    __slots__ = ("name",)

    def __init__(self, name):
        parsed = parse_input(name)
        if parsed is None or parsed[1] < 0:
            raise InvalidArgumentError(None, None, f"TensorRef needs a tensor name 'op:index', got {name!r}")
        self.name = f"{parsed[0]}:{parsed[1]}"

    def __eq__(self, other):
        return isinstance(other, TensorRef) and other.name == self.name

    def __hash__(self):
        return hash(("TensorRef", self.name))

    def __repr__(self):
        return f"<TensorRef {self.name}>"


def tensor_refs(value):
    """The TensorRefs in an attr value (nested in lists, tuples and dicts)."""
    if isinstance(value, TensorRef):
        yield value
    elif type(value) in (list, tuple):
        for v in value:
            yield from tensor_refs(v)
    elif type(value) is dict:
        for v in value.values():
            yield from tensor_refs(v)


# {python type: (tag, encode(value) -> dict of plain fields)}, filled by dflow/io (Zarr objects).
_OBJECT_ENCODERS: dict = {}


def register_object_attr(py_type, tag, encode):
    """Lets attrs of `py_type` serialize as {"object": {"type": tag, "fields": encode(value)}}."""
    _OBJECT_ENCODERS[py_type] = (tag, encode)


def _le(dtype):
    return np.dtype(dtype).newbyteorder("<")


def encode_attr(value, where="attr", external=None, depth=0):
    """The JSON form of one attr value; InvalidArgumentError for values a document cannot hold.

    `external(array) -> ExternalArray | None` may move an array out of the document."""
    if depth > _MAX_DEPTH:
        raise InvalidArgumentError(None, None, f"{where}: nested too deeply to serialize")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and type(value) is int:
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, np.ndarray):
        ext = external(value) if external is not None else None
        if ext is not None:
            return {"const_ref": ext.to_json()}
        return {"tensor": _encode_array(value, where)}
    if isinstance(value, np.generic):
        return {"scalar": _encode_array(np.asarray(value), where)}
    if isinstance(value, ExternalArray):
        return {"const_ref": value.to_json()}
    if isinstance(value, DType):
        return {"dtype": value.name}
    if isinstance(value, TensorShape):
        return {"shape": None if value.ndims is None else value.as_list()}
    if type(value) in (list, tuple):
        items = [encode_attr(v, where, external, depth + 1) for v in value]
        return {"list" if type(value) is list else "tuple": items}
    if type(value) is dict:
        if not all(isinstance(k, str) for k in value):
            raise InvalidArgumentError(None, None, f"{where}: dict attrs need string keys to serialize")
        return {"dict": {k: encode_attr(v, where, external, depth + 1) for k, v in value.items()}}
    if type(value) is complex:
        return {"complex": [encode_attr(value.real), encode_attr(value.imag)]}
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, slice):
        parts = [value.start, value.stop, value.step]
        if not all(p is None or type(p) is int for p in parts):
            raise InvalidArgumentError(None, None, f"{where}: a slice of non-integers cannot be serialized")
        return {"slice": parts}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, ObjectRef):
        return {"object": {"type": value.type, "fields": dict(value.fields)}}
    if isinstance(value, TensorRef):
        return {"tensor_ref": value.name}
    for py_type, (tag, enc) in _OBJECT_ENCODERS.items():
        if isinstance(value, py_type):
            return {"object": {"type": tag, "fields": enc(value, where)}}
    if callable(value):
        raise InvalidArgumentError(None, None, f"{where} holds a Python callable ({value!r}); graph files never "
                                   "hold code, so an op built from Python functions (py_func) cannot be serialized")
    raise InvalidArgumentError(None, None, f"{where}: a value of type {type(value).__name__} cannot be serialized")


def _encode_array(arr, where):
    if arr.dtype == object or arr.dtype.kind in "US":
        flat = arr.reshape(-1).tolist()
        if flat and all(isinstance(s, bytes) for s in flat):  # a string tensor's value (TF1's bytes)
            return {"dtype": "string", "shape": list(arr.shape),
                    "bytes": [base64.b64encode(s).decode("ascii") for s in flat]}
        if not all(isinstance(s, str) for s in flat):
            raise InvalidArgumentError(None, None, f"{where}: only arrays of str or of bytes can be serialized "
                                       f"among object arrays")
        return {"dtype": "string", "shape": list(arr.shape), "strings": flat}
    name = as_dtype(arr.dtype).name if arr.dtype in _NP_OK else None
    if name is None:
        raise InvalidArgumentError(None, None, f"{where}: arrays of dtype {arr.dtype} cannot be serialized")
    data = np.ascontiguousarray(arr, dtype=_le(arr.dtype)).tobytes()
    return {"dtype": name, "shape": list(arr.shape), "data": base64.b64encode(data).decode("ascii")}


_NP_OK = {np.dtype(n) for n in _ARRAY_DTYPES}


def _bad(where, what):
    return DataLossError(None, None, f"{where}: {what}")


def decode_attr(doc, where="attr", depth=0):
    """Inverse of `encode_attr`; builds only plain types; DataLossError for anything else."""
    if depth > _MAX_DEPTH:
        raise _bad(where, "nested too deeply")
    if doc is None or isinstance(doc, (bool, str, int)) or type(doc) is float:
        return doc
    if type(doc) is not dict or len(doc) != 1:
        raise _bad(where, f"not an attr value: {_short(doc)}")
    (tag, body), = doc.items()
    if tag in ("list", "tuple"):
        if type(body) is not list:
            raise _bad(where, f"{tag} must hold a JSON array")
        items = [decode_attr(v, where, depth + 1) for v in body]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        if type(body) is not dict:
            raise _bad(where, "dict must hold a JSON object")
        return {k: decode_attr(v, where, depth + 1) for k, v in body.items()}
    if tag == "float":
        if body not in ("nan", "inf", "-inf"):
            raise _bad(where, f"bad float {_short(body)}")
        return float(body)
    if tag == "complex":
        if type(body) is not list or len(body) != 2:
            raise _bad(where, "complex needs [re, im]")
        re_, im = (decode_attr(v, where, depth + 1) for v in body)
        if not all(type(v) in (int, float) for v in (re_, im)):
            raise _bad(where, "complex parts must be numbers")
        return complex(re_, im)
    if tag == "bytes":
        return _b64(body, where)
    if tag == "dtype":
        return _dtype(body, where, allow_string=True)
    if tag == "shape":
        return TensorShape(None) if body is None else TensorShape(_dims(body, where, allow_none=True))
    if tag in ("tensor", "scalar"):
        arr = decode_array(body, where)
        if tag == "scalar":
            if arr.shape != ():
                raise _bad(where, "a scalar must have shape []")
            return arr[()]
        return arr
    if tag == "slice":
        if type(body) is not list or len(body) != 3 or not all(p is None or type(p) is int for p in body):
            raise _bad(where, "slice needs [start, stop, step] of ints or nulls")
        return slice(*body)
    if tag == "ellipsis":
        if body is not True:
            raise _bad(where, "ellipsis must be true")
        return Ellipsis
    if tag == "const_ref":
        return _external(body, where)
    if tag == "tensor_ref":
        parsed = parse_input(body) if isinstance(body, str) and len(body) <= 4200 else None
        if parsed is None or parsed[1] < 0:
            raise _bad(where, f"tensor_ref must name a tensor 'op:index', got {_short(body)}")
        return TensorRef(body)
    if tag == "object":
        if type(body) is not dict or set(body) != {"type", "fields"} or not isinstance(body["type"], str) \
                or type(body["fields"]) is not dict:
            raise _bad(where, "object needs a type and fields")
        for k, v in body["fields"].items():
            if not (v is None or isinstance(v, (str, bool, int)) or type(v) is float):
                raise _bad(where, f"object field {k!r} must be a JSON scalar")
        return ObjectRef(body["type"], body["fields"])
    raise _bad(where, f"unknown attr type {_short(tag)}")


def decode_array(body, where):
    """A read-only numpy array from {dtype, shape, data|strings}; DataLossError on any mismatch."""
    if type(body) is not dict:
        raise _bad(where, "an array needs dtype, shape and data")
    name = _dtype(body.get("dtype"), where, allow_string=True).name
    shape = _dims(body.get("shape"), where)
    n = math.prod(shape)
    if name == "string":
        if set(body) == {"dtype", "shape", "bytes"}:  # bytes, base64-encoded
            encoded = body["bytes"]
            if type(encoded) is not list or len(encoded) != n:
                raise _bad(where, f"a string array of shape {shape} needs {n} strings")
            strings = [_b64(e, where) for e in encoded]
        elif set(body) != {"dtype", "shape", "strings"}:
            raise _bad(where, "a string array needs dtype, shape and strings")
        else:
            strings = body["strings"]
        if type(strings) is not list or len(strings) != n or not all(isinstance(s, (str, bytes)) for s in strings):
            raise _bad(where, f"a string array of shape {shape} needs {n} strings")
        arr = np.empty(len(strings), dtype=object)
        arr[:] = strings
        arr = arr.reshape(shape)
    else:
        if set(body) != {"dtype", "shape", "data"}:
            raise _bad(where, "an array needs dtype, shape and data")
        raw = _b64(body["data"], where)
        dt = np.dtype(name)
        if len(raw) != n * dt.itemsize:
            raise _bad(where, f"array data has {len(raw)} bytes, shape {shape} of {name} needs {n * dt.itemsize}")
        arr = np.frombuffer(raw, dtype=_le(dt)).astype(dt).reshape(shape)
    arr.setflags(write=False)
    return arr


def _b64(body, where):
    if not isinstance(body, str):
        raise _bad(where, "binary data must be a base64 string")
    try:
        return base64.b64decode(body.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise _bad(where, "binary data is not valid base64") from None


def _dtype(name, where, allow_string=False):
    if not isinstance(name, str) or name not in (_DTYPE_NAMES if allow_string else _ARRAY_DTYPES):
        raise _bad(where, f"unknown dtype {_short(name)}")
    return as_dtype(name)


def _dims(body, where, allow_none=False):
    if type(body) is not list or len(body) > _MAX_RANK:
        raise _bad(where, f"a shape must be a list of at most {_MAX_RANK} dims")
    for d in body:
        if d is None and allow_none:
            continue
        if type(d) is not int or not 0 <= d < _MAX_DIM:
            raise _bad(where, f"bad dim {_short(d)} in shape")
    if not allow_none and math.prod(body) >= _MAX_DIM:
        raise _bad(where, f"shape {body} is too large")
    return body


_REF_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,255}$")


def _external(body, where):
    if type(body) is not dict or set(body) != {"group", "array", "dtype", "shape", "checksum"}:
        raise _bad(where, "const_ref needs group, array, dtype, shape and checksum")
    for k in ("group", "array"):
        if not isinstance(body[k], str) or not _REF_NAME.match(body[k]) or body[k] in (".", ".."):
            raise _bad(where, f"const_ref {k} {_short(body[k])} is not a plain name")
    if not isinstance(body["checksum"], str) or not re.fullmatch(r"sha256:[0-9a-f]{64}", body["checksum"]):
        raise _bad(where, "const_ref checksum must be sha256:<hex>")
    dt = _dtype(body["dtype"], where)
    return ExternalArray(body["group"], body["array"], dt.name, _dims(body["shape"], where), body["checksum"])


def _short(x):
    s = repr(x)
    return s if len(s) <= 60 else s[:57] + "..."


# ---- nodes and graphs ----------------------------------------------------------------------------


class NodeDef:
    """One op of a GraphDef: name, op type, inputs ("op:0", "^ctrl"), device, attrs, output dtypes and
    static shapes. Fields read as attributes (`node.name`) or items (`node["name"]`)."""

    __slots__ = ("name", "op", "input", "device", "attr", "output_shapes", "output_dtypes", "gradient_op_type")
    _FIELDS = __slots__

    def __init__(self, name="", op="", input=None, device="", attr=None, output_shapes=None,  # noqa: A002
                 output_dtypes=None, gradient_op_type=None):
        self.name, self.op, self.input, self.device = name, op, list(input or []), device
        self.attr = dict(attr or {})
        self.output_shapes = None if output_shapes is None else list(output_shapes)
        self.output_dtypes = None if output_dtypes is None else list(output_dtypes)
        self.gradient_op_type = gradient_op_type

    def __getitem__(self, key):
        if key not in self._FIELDS:
            raise KeyError(key)
        return getattr(self, key)

    def CopyFrom(self, other):  # noqa: N802 - protobuf name
        for f in self._FIELDS:
            setattr(self, f, copy_attr(getattr(other, f)))

    def copy(self):
        n = NodeDef()
        n.CopyFrom(self)
        return n

    def to_json(self, external=None):
        where = f"node {self.name!r} ({self.op})"
        attrs = {}
        for k, v in self.attr.items():
            ext = (lambda a, k=k: external(self, k, a)) if external is not None else None
            attrs[k] = encode_attr(v, f"{where} attr {k!r}", ext)
        doc = {"name": self.name, "op": self.op, "input": list(self.input), "device": self.device, "attr": attrs}
        if self.output_shapes is not None:
            doc["output_shapes"] = [None if s is None else list(s) for s in self.output_shapes]
        if self.output_dtypes is not None:
            doc["output_dtypes"] = list(self.output_dtypes)
        if self.gradient_op_type:
            doc["gradient_op_type"] = self.gradient_op_type
        return doc

    @classmethod
    def from_json(cls, doc, index):
        where = f"node {index}"
        if type(doc) is not dict or not {"name", "op", "input", "attr"} <= set(doc) or \
                not set(doc) <= set(cls._FIELDS):
            raise _bad(where, "a node needs name, op, input and attr (and nothing unknown)")
        name, op = doc["name"], doc["op"]
        if not isinstance(name, str) or len(name) > 4096 or not NODE_NAME.match(name):
            raise _bad(where, f"invalid node name {_short(name)}")
        where = f"node {name!r}"
        if not isinstance(op, str) or not re.fullmatch(r"[A-Za-z0-9_.>-]{1,128}", op):
            raise _bad(where, f"invalid op type {_short(op)}")
        inputs = doc["input"]
        if type(inputs) is not list or not all(isinstance(s, str) and len(s) <= 4200 and _INPUT.match(s)
                                               for s in inputs):
            raise _bad(where, "inputs must be a list of tensor names ('op:0' or '^op')")
        device = doc.get("device", "")
        if not isinstance(device, str) or len(device) > 1024:
            raise _bad(where, "device must be a string")
        if type(doc["attr"]) is not dict:
            raise _bad(where, "attr must be an object")
        attrs = {}
        for k, v in doc["attr"].items():
            if not _ATTR_KEY.match(k):
                raise _bad(where, f"invalid attr name {_short(k)}")
            attrs[k] = decode_attr(v, f"{where} attr {k!r}")
        shapes = doc.get("output_shapes")
        if shapes is not None:
            if type(shapes) is not list:
                raise _bad(where, "output_shapes must be a list")
            shapes = [None if s is None else _dims(s, where, allow_none=True) for s in shapes]
        dts = doc.get("output_dtypes")
        if dts is not None:
            if type(dts) is not list:
                raise _bad(where, "output_dtypes must be a list")
            dts = [_dtype(d, where, allow_string=True).name for d in dts]
            if shapes is not None and len(shapes) != len(dts):
                raise _bad(where, "output_shapes and output_dtypes differ in length")
        grad = doc.get("gradient_op_type")
        if grad is not None and (not isinstance(grad, str) or len(grad) > 256):
            raise _bad(where, "gradient_op_type must be a string")
        return cls(name, op, inputs, device, attrs, shapes, dts, grad)

    def __repr__(self):
        return f"NodeDef(name={self.name!r}, op={self.op!r}, input={self.input!r})"

    __str__ = __repr__


class _NodeList(list):
    """`graph_def.node`: a list with protobuf's `add()`."""

    def add(self, **fields):
        n = NodeDef(**fields)
        self.append(n)
        return n


# parse(bytes) -> GraphDef for documents that are not dflow's JSON (TensorFlow's protobuf GraphDef,
# registered by dflow/io/tf_graph.py, a higher layer)
_FOREIGN_PARSERS: list = []


def register_foreign_parser(parse):
    """Lets `GraphDef.ParseFromString` read non-JSON bytes with `parse(data) -> GraphDef`."""
    if parse not in _FOREIGN_PARSERS:
        _FOREIGN_PARSERS.append(parse)


def looks_like_json(data):
    """Whether `data` is (meant to be) a JSON document: its first non-blank character is `{`."""
    head = data[:4096] if isinstance(data, str) else bytes(data[:4096]).decode("latin-1")
    return head.lstrip()[:1] == "{"


def _loads(data, what):
    """JSON → Python, refusing NaN/Infinity tokens and duplicate keys; DataLossError if malformed."""
    def no_constants(token):
        raise ValueError(f"non-standard JSON token {token}")

    def pairs(items):
        out = {}
        for k, v in items:
            if k in out:
                raise ValueError(f"duplicate key {k!r}")
            out[k] = v
        return out

    try:
        if isinstance(data, (bytes, bytearray, memoryview)):
            data = bytes(data).decode("utf-8")
        if not isinstance(data, str):
            raise TypeError(f"expected bytes or str, got {type(data).__name__}")
        return json.loads(data, parse_constant=no_constants, object_pairs_hook=pairs)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise DataLossError(None, None, f"{what} is not valid JSON: {str(e)[:200]}") from None
    except TypeError as e:
        raise InvalidArgumentError(None, None, f"{what}: {e}") from None


def _dumps(doc):
    try:
        return json.dumps(doc, sort_keys=True, allow_nan=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as e:  # hand-built documents holding non-JSON values
        raise InvalidArgumentError(None, None, f"cannot serialize the document: {e}") from None


def _check_header(doc, fmt, keys, what):
    if type(doc) is not dict or doc.get("format") != fmt:
        raise DataLossError(None, None, f"Document is not a {fmt} (no matching 'format' field)")
    if not set(doc) <= keys:
        raise DataLossError(None, None, f"{what}: unknown fields {sorted(set(doc) - keys)}")
    v = doc.get("version")
    if type(v) is not int:
        raise DataLossError(None, None, f"{what}: missing format version")
    if v > VERSION:
        raise DataLossError(None, None, f"{what} has format version {v}; this dflow reads up to {VERSION}")


class GraphDef:
    """A serializable graph (TF1's `tf.GraphDef`): `node` (a list of NodeDef) and `versions`."""

    def __init__(self, nodes=None, versions=None):
        self.node = _NodeList(nodes or [])
        self.versions = dict(versions or {"producer": VERSION, "min_consumer": 1})

    def to_json(self, external=None):
        return {"format": FORMAT, "version": VERSION, "versions": dict(self.versions),
                "node": [n.to_json(external) for n in self.node]}

    @classmethod
    def from_json(cls, doc):
        _check_header(doc, FORMAT, {"format", "version", "versions", "node"}, "GraphDef")
        versions = doc.get("versions", {})
        if type(versions) is not dict or not all(type(v) is int for v in versions.values()):
            raise DataLossError(None, None, "GraphDef: versions must map names to ints")
        if versions.get("min_consumer", 0) > VERSION:
            raise DataLossError(None, None, f"GraphDef needs a consumer of version {versions['min_consumer']}; "
                                f"this dflow is version {VERSION}")
        nodes = doc.get("node")
        if type(nodes) is not list:
            raise DataLossError(None, None, "GraphDef: 'node' must be a list")
        return cls([NodeDef.from_json(n, i) for i, n in enumerate(nodes)], versions)

    def SerializeToString(self, deterministic=None):  # noqa: N802 - TF1 name
        """The JSON document (bytes), arrays inline; InvalidArgumentError for unserializable attrs."""
        return _dumps(self.to_json())

    def ParseFromString(self, data):  # noqa: N802 - TF1 name
        """Replaces this GraphDef by the document `data` (dflow's JSON, or TensorFlow's GraphDef protobuf
        in binary or text form once dflow.io is loaded); DataLossError if it is malformed."""
        if _FOREIGN_PARSERS and isinstance(data, (bytes, bytearray, memoryview, str)) and not looks_like_json(data):
            other = _FOREIGN_PARSERS[-1](data)
        else:
            other = GraphDef.from_json(_loads(data, "GraphDef"))
        self.node, self.versions = other.node, other.versions
        return len(data)

    @classmethod
    def FromString(cls, data):  # noqa: N802 - protobuf name
        g = cls()
        g.ParseFromString(data)
        return g

    def CopyFrom(self, other):  # noqa: N802 - protobuf name
        self.node = _NodeList(n.copy() for n in other.node)
        self.versions = dict(other.versions)

    def MergeFrom(self, other):  # noqa: N802 - protobuf name
        self.node.extend(n.copy() for n in other.node)

    def ByteSize(self):  # noqa: N802 - protobuf name
        return len(self.SerializeToString())

    def __len__(self):
        return len(self.node)

    def __repr__(self):
        return f"<dflow.GraphDef with {len(self.node)} nodes>"


def copy_attr(value):
    """A copy of an attr value deep enough that editing it leaves the original alone (read-only
    arrays and other immutable values are shared); a graph's tensors become `TensorRef`s."""
    if isinstance(value, Tensor):
        return TensorRef(value.name)
    if type(value) in (list, tuple):
        return type(value)(copy_attr(v) for v in value)
    if type(value) is dict:
        return {k: copy_attr(v) for k, v in value.items()}
    if isinstance(value, np.ndarray) and value.flags.writeable:
        return value.copy()
    return value


# ---- graph → GraphDef ----------------------------------------------------------------------------


def graph_to_def(graph):
    """The GraphDef of `graph`: every op, attrs as Python values (arrays shared, read-only)."""
    nodes = []
    for op in graph.get_operations():
        override = getattr(op, "_gradient_override", None)
        nodes.append(NodeDef(
            name=op.name, op=op.type,
            input=[t.name for t in op.inputs] + ["^" + c.name for c in op.control_inputs],
            device=op.device, attr={k: copy_attr(v) for k, v in op._attrs.items()},
            output_shapes=[None if t.shape.ndims is None else t.shape.as_list() for t in op.outputs],
            output_dtypes=[t.dtype.name for t in op.outputs],
            gradient_op_type=override if isinstance(override, str) else None))
    return GraphDef(nodes)


def parse_input(s):
    """("op", index) for "op:index" / "op", ("op", -1) for "^op"; None if malformed."""
    m = _INPUT.match(s) if isinstance(s, str) else None
    if not m:
        return None
    name = (m.group(2) or "") + m.group(3)
    if m.group(1):
        return (name, -1) if m.group(4) is None else None
    return name, int(m.group(4) or 0)
