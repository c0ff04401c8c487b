"""Signatures of a meta graph (TF1's `TensorInfo` and `SignatureDef` protos, as plain classes).

A `TensorInfo` names a tensor of the graph with its dtype and static shape; a `SignatureDef` maps
input and output keys to TensorInfos, with a method name ("tensorflow/serving/predict"). They
are kept in `MetaGraphDef.signature_def` and written as plain JSON; reading validates every
field (DataLossError for anything else), so a signature never carries code.
"""

from __future__ import annotations

from ..errors import DataLossError
from ..graph import serialize
from ..graph.dtypes import as_dtype
from ..graph.shape import TensorShape

__all__ = ["TensorInfo", "SignatureDef"]


class TensorInfo:
    """A tensor of a graph by name (`"x:0"`), with its `dtype` (a DType) and `tensor_shape`
    (a TensorShape, possibly of unknown rank)."""

    def __init__(self, name="", dtype=None, tensor_shape=None):
        self.name = name
        self.dtype = None if dtype is None else as_dtype(dtype)
        self.tensor_shape = tensor_shape if isinstance(tensor_shape, TensorShape) else TensorShape(tensor_shape)

    def to_json(self):
        dims = None if self.tensor_shape.dims is None else list(self.tensor_shape.as_list())
        return {"name": self.name, "dtype": None if self.dtype is None else self.dtype.name, "tensor_shape": dims}

    @classmethod
    def from_json(cls, doc, where):
        ok = type(doc) is dict and set(doc) == {"name", "dtype", "tensor_shape"} and _is_tensor_name(doc["name"])
        dims = doc.get("tensor_shape") if ok else None
        ok = ok and (dims is None or (type(dims) is list and len(dims) <= 64 and
                                      all(d is None or (type(d) is int and d >= 0) for d in dims)))
        dtype = doc.get("dtype") if ok else None
        if ok and dtype is not None:
            try:
                dtype = as_dtype(dtype) if isinstance(dtype, str) else None
            except TypeError:
                dtype = None
            ok = dtype is not None
        if not ok:
            raise DataLossError(None, None, f"{where}: malformed TensorInfo {serialize._short(doc)}")
        return cls(doc["name"], dtype, dims)

    def __eq__(self, other):
        return isinstance(other, TensorInfo) and self.to_json() == other.to_json()

    def __repr__(self):
        return f"TensorInfo(name={self.name!r}, dtype={self.dtype!r}, tensor_shape={self.tensor_shape})"


class SignatureDef:
    """A graph's named inputs and outputs: `inputs` and `outputs` ({key: TensorInfo}) and `method_name`."""

    def __init__(self, inputs=None, outputs=None, method_name=""):
        self.inputs = dict(inputs or {})
        self.outputs = dict(outputs or {})
        self.method_name = method_name or ""

    def to_json(self):
        return {"inputs": {k: v.to_json() for k, v in self.inputs.items()},
                "outputs": {k: v.to_json() for k, v in self.outputs.items()}, "method_name": self.method_name}

    @classmethod
    def from_json(cls, doc, where):
        if type(doc) is not dict or set(doc) != {"inputs", "outputs", "method_name"} or \
                not isinstance(doc["method_name"], str) or type(doc["inputs"]) is not dict or \
                type(doc["outputs"]) is not dict:
            raise DataLossError(None, None, f"{where}: malformed SignatureDef {serialize._short(doc)}")
        return cls({k: TensorInfo.from_json(v, f"{where} input {k!r}") for k, v in doc["inputs"].items()},
                   {k: TensorInfo.from_json(v, f"{where} output {k!r}") for k, v in doc["outputs"].items()},
                   doc["method_name"])

    def __eq__(self, other):
        return isinstance(other, SignatureDef) and self.to_json() == other.to_json()

    def __repr__(self):
        return f"SignatureDef(inputs={sorted(self.inputs)}, outputs={sorted(self.outputs)}, " \
               f"method_name={self.method_name!r})"


def _is_tensor_name(s):
    if not isinstance(s, str) or len(s) > 4200:
        return False
    m = serialize._INPUT.match(s)
    return bool(m) and not m.group(1) and not m.group(2) and m.group(4) is not None


def signature_map_from_json(doc, where="MetaGraphDef signature_def"):
    """{key: SignatureDef} of a document's `signature_def` object; DataLossError if malformed."""
    if type(doc) is not dict:
        raise DataLossError(None, None, f"{where} must be an object")
    return {k: SignatureDef.from_json(v, f"{where} {k!r}") for k, v in doc.items()}
