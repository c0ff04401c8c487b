"""TensorFlow's attr values ⇄ dflow's plain attr values: `AttrValue` (tensorboard's compat proto,
TensorFlow's wire format) against numpy arrays, `DType`s, `TensorShape`s and Python scalars and
tuples. Tensors, dtypes and shapes inside it convert with dflow/graph/tensor_proto.py.

Used by dflow/io/tf_graph_ops.py (the op table) in both directions. Decoding builds only plain
values; a malformed tensor (content of the wrong size, an unknown dtype) is a DataLossError.
"""

from __future__ import annotations

import numpy as np
from tensorboard.compat.proto import attr_value_pb2

from ..errors import InvalidArgumentError
from ..graph.dtypes import DType
from ..graph.shape import TensorShape
from ..graph.tensor_proto import (
    dtype_from_tf,
    dtype_to_tf,
    numpy_to_tensor,
    shape_from_tf,
    shape_to_tf,
    tensor_to_numpy,
)

__all__ = ["attr_from_tf", "attr_to_tf"]


def attr_from_tf(value, where="attr"):
    """The plain Python value of an AttrValue: str (from bytes, when UTF-8), int, float, bool, DType,
    TensorShape, numpy array, or a tuple of those; a function name for `func`."""
    kind = value.WhichOneof("value")
    if kind == "s":
        try:
            return value.s.decode("utf-8")
        except UnicodeDecodeError:
            return bytes(value.s)
    if kind in ("i", "f", "b"):
        return getattr(value, kind)
    if kind == "type":
        return dtype_from_tf(value.type, where)
    if kind == "shape":
        return shape_from_tf(value.shape)
    if kind == "tensor":
        return tensor_to_numpy(value.tensor, where)
    if kind == "func":
        return {"func": value.func.name}
    if kind == "placeholder":
        return {"placeholder": value.placeholder}
    if kind == "list":
        lst = value.list
        for field in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
            items = getattr(lst, field)
            if len(items):
                sub = attr_value_pb2.AttrValue()
                out = []
                for it in items:
                    (getattr(sub, field).CopyFrom(it) if field in ("shape", "tensor", "func")
                     else setattr(sub, field, it))
                    out.append(attr_from_tf(sub, where))
                return tuple(out)
        return ()
    return None


def attr_to_tf(value, where="attr"):
    """The AttrValue of a plain Python value (the inverse of `attr_from_tf`)."""
    if isinstance(value, attr_value_pb2.AttrValue):
        return value
    if isinstance(value, bool):
        return attr_value_pb2.AttrValue(b=value)
    if isinstance(value, (int, np.integer)):
        return attr_value_pb2.AttrValue(i=int(value))
    if isinstance(value, (float, np.floating)):
        return attr_value_pb2.AttrValue(f=float(value))
    if isinstance(value, str):
        return attr_value_pb2.AttrValue(s=value.encode("utf-8"))
    if isinstance(value, bytes):
        return attr_value_pb2.AttrValue(s=value)
    if isinstance(value, DType):
        return attr_value_pb2.AttrValue(type=dtype_to_tf(value, where))
    if isinstance(value, TensorShape):
        return attr_value_pb2.AttrValue(shape=shape_to_tf(value))
    if isinstance(value, np.ndarray):
        return attr_value_pb2.AttrValue(tensor=numpy_to_tensor(value, where=where))
    if isinstance(value, (list, tuple)):
        lst = attr_value_pb2.AttrValue.ListValue()
        for v in value:
            one = attr_to_tf(v, where)
            kind = one.WhichOneof("value")
            if kind in ("shape", "tensor"):
                getattr(lst, kind).add().CopyFrom(getattr(one, kind))
            else:
                getattr(lst, kind).append(getattr(one, kind))
        return attr_value_pb2.AttrValue(list=lst)
    raise InvalidArgumentError(None, None, f"{where}: a {type(value).__name__} has no TensorFlow attr form")
