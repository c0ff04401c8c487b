"""Tensors as TensorFlow's protobuf bytes: `serialize_tensor` (a tensor → the scalar string of its
`TensorProto`, byte for byte what TensorFlow writes), `parse_tensor` (the inverse, its dtype
checked) and `decode_json_example` (JSON `tf.train.Example`s → serialized Examples).

The TensorProto conversion is dflow/graph/tensor_proto.py's, the one graph files use. Serialize
and parse need whole values (one scalar string holds a whole tensor; a parsed tensor's shape is
known only at run time) and run as one task; decode_json_example is elementwise. None has a
gradient (as in TF1). Run-time errors are TF1's InvalidArgumentErrors, naming the op.
"""

from __future__ import annotations

import base64

import numpy as np
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from tensorboard.compat.proto import tensor_pb2

from ..errors import DataLossError, InvalidArgumentError
from ..graph import dtypes
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape
from ..graph.tensor_proto import dtype_from_tf, numpy_to_tensor, tensor_to_numpy
from ..proto import Example
from .common import STRING, apply_op, check_dtype, convert_to_tensor
from .string_ops import _host, _objects
from .whole_task import lower_whole

__all__ = ["serialize_tensor", "parse_tensor", "decode_json_example"]


def _scalar_bytes(value):
    out = np.empty((), dtype=object)
    out[()] = value
    return out


# ---- serialize_tensor -----------------------------------------------------------------------------


def _serialize_infer(inputs, attrs):
    if inputs[0].dtype == dtypes.variant:
        raise TypeError(f"SerializeTensor: input {inputs[0].name!r} is a variant tensor (a TensorArray's flow), "
                        "which has no TensorProto form in dflow")
    return TensorShape([]), dtypes.string


def _serialize_eager(xp, x, T):
    return _scalar_bytes(numpy_to_tensor(_host(x), dtype=T).SerializeToString())


register_op("SerializeTensor", _serialize_infer, eager=_serialize_eager, lower=lower_whole(_serialize_eager))
not_differentiable("SerializeTensor")


def serialize_tensor(tensor, name=None):
    """The scalar string of `tensor`'s TensorProto (TF1's `tf.serialize_tensor`, `tf.io.serialize_tensor`):
    TensorFlow's own bytes (numbers little-endian in tensor_content, strings in string_val)."""
    t = convert_to_tensor(tensor, name="tensor")
    return apply_op("SerializeTensor", [t], {"T": t.dtype}, name=name, default_name="SerializeTensor")


# ---- parse_tensor ---------------------------------------------------------------------------------


def _parse_infer(inputs, attrs):
    check_dtype(inputs[0], STRING, "ParseTensor", arg="serialized")
    if inputs[0].shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {inputs[0].shape.ndims} for 'ParseTensor' (op: "
                         f"'ParseTensor') with input shapes: {inputs[0].shape}.")
    return TensorShape(None), attrs["out_type"]


def _parse_eager(xp, serialized, out_type):
    s = _host(serialized)
    if s.shape != ():
        raise InvalidArgumentError(None, None, f"Expected `serialized` to be a scalar, got shape: {list(s.shape)}")
    data = s[()]
    proto = tensor_pb2.TensorProto()
    try:
        proto.ParseFromString(data if isinstance(data, bytes) else str(data).encode("utf-8"))
        parsed = dtype_from_tf(proto.dtype, "ParseTensor") if proto.dtype else None
    except (DecodeError, InvalidArgumentError):
        parsed = None
    if parsed is None:
        raise InvalidArgumentError(None, None, "Could not parse `serialized` as TensorProto, base64: "
                                   + _b64(data))
    if parsed != out_type:
        raise InvalidArgumentError(None, None, f"Type mismatch between parsed tensor ({_tf_name(parsed)}) and dtype "
                                   f"({_tf_name(out_type)})")
    try:
        value = tensor_to_numpy(proto, "ParseTensor")
    except DataLossError as e:
        raise InvalidArgumentError(None, None, f"Could not parse `serialized` as TensorProto: {e.message}") from None
    return np.array(value, dtype=object) if out_type == dtypes.string else np.array(value)


def _b64(data):
    return base64.b64encode(data if isinstance(data, bytes) else b"").decode("ascii")


def _tf_name(dt):
    """TF's short dtype name in messages (DataTypeString: float32 is 'float', float64 'double')."""
    return {"float32": "float", "float64": "double", "float16": "half"}.get(dt.name, dt.name)


register_op("ParseTensor", _parse_infer, eager=_parse_eager, lower=lower_whole(_parse_eager))
not_differentiable("ParseTensor")


def parse_tensor(serialized, out_type, name=None):
    """The tensor a serialized TensorProto holds (TF1's `tf.parse_tensor`, `tf.io.parse_tensor`);
    its shape is known only when run. InvalidArgumentError when the bytes are not a TensorProto or
    its dtype is not `out_type`."""
    s = convert_to_tensor(serialized, dtype=None if hasattr(serialized, "dtype") else dtypes.string,
                          name="serialized")
    return apply_op("ParseTensor", [s], {"out_type": dtypes.as_dtype(out_type)}, name=name, default_name="ParseTensor")


# ---- decode_json_example --------------------------------------------------------------------------


def _json_example(text):
    try:
        msg = json_format.Parse(text.decode("utf-8") if isinstance(text, bytes) else str(text), Example())
    except (json_format.ParseError, UnicodeDecodeError) as e:
        raise InvalidArgumentError(None, None, f"Error while parsing JSON: {e}") from None
    return msg.SerializeToString()


def _json_infer(inputs, attrs):
    check_dtype(inputs[0], STRING, "DecodeJSONExample", arg="json_examples")
    return inputs[0].shape, dtypes.string


def _json_eager(xp, x):
    return _objects(np.frompyfunc(_json_example, 1, 1)(_host(x)))


register_op("DecodeJSONExample", _json_infer, eager=_json_eager, elementwise=True)
not_differentiable("DecodeJSONExample")


def decode_json_example(json_examples, name=None):
    """Each JSON `tf.train.Example` (protobuf's JSON mapping: `{"features": {"feature": {"x":
    {"floatList": {"value": [1.5]}}}}}`) as a serialized Example, for `parse_example` (TF1's
    `tf.decode_json_example`). InvalidArgumentError naming the op for text that is not one."""
    x = convert_to_tensor(json_examples, dtype=None if hasattr(json_examples, "dtype") else dtypes.string,
                          name="json_examples")
    return apply_op("DecodeJSONExample", [x], {}, name=name, default_name="DecodeJSONExample")
