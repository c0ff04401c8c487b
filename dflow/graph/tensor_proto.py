"""TensorFlow's `TensorProto`, `DataType` and `TensorShapeProto` (tensorboard's compat protos, TF's
wire format) against numpy arrays, dflow `DType`s and `TensorShape`s: the one conversion that
graph files (dflow/io/tf_graph_values.py, attr values), checkpoints and the kernels
(`tf.serialize_tensor` / `tf.parse_tensor`, kernels/serialization_ops.py) share.

Encoding writes what TensorFlow's `AsProtoTensorContent` writes (numbers as little-endian
`tensor_content`, strings in `string_val`), byte for byte. Decoding builds read-only arrays; a
malformed tensor (content of the wrong size, too many values) is a DataLossError, a dtype dflow
lacks an InvalidArgumentError.
"""

from __future__ import annotations

import math

import numpy as np
from tensorboard.compat.proto import tensor_pb2, tensor_shape_pb2, types_pb2

from ..errors import DataLossError, InvalidArgumentError
from .dtypes import as_dtype
from .shape import TensorShape

__all__ = ["dtype_from_tf", "dtype_to_tf", "tensor_to_numpy", "numpy_to_tensor", "shape_from_tf", "shape_to_tf"]

# TF's DataType enum names -> dflow dtype names (the ones dflow has)
_TF_DTYPES = {"DT_FLOAT": "float32", "DT_DOUBLE": "float64", "DT_INT32": "int32", "DT_UINT8": "uint8",
              "DT_INT16": "int16", "DT_INT8": "int8", "DT_STRING": "string", "DT_COMPLEX64": "complex64",
              "DT_INT64": "int64", "DT_BOOL": "bool", "DT_UINT16": "uint16", "DT_COMPLEX128": "complex128",
              "DT_HALF": "float16", "DT_UINT32": "uint32", "DT_UINT64": "uint64", "DT_VARIANT": "variant"}
_FROM_ENUM = {types_pb2.DataType.Value(k): v for k, v in _TF_DTYPES.items()}
_TO_ENUM = {v: k for k, v in _FROM_ENUM.items()}
_REF = 100  # TF's reference dtypes (a VariableV2's output) are the value dtype + 100


def dtype_from_tf(enum, where="attr"):
    """The dflow DType of a TF DataType enum (reference types as their value type)."""
    if enum > _REF:
        enum -= _REF
    name = _FROM_ENUM.get(enum)
    if name is None:
        tf_name = types_pb2.DataType.Name(enum) if enum in types_pb2.DataType.values() else str(enum)
        raise InvalidArgumentError(None, None, f"{where}: TensorFlow dtype {tf_name} has no dflow equivalent "
                                   f"(dflow has {sorted(_TF_DTYPES)})")
    return as_dtype(name)


def dtype_to_tf(dtype, where="attr"):
    name = as_dtype(dtype).name
    if name not in _TO_ENUM:
        raise InvalidArgumentError(None, None, f"{where}: dtype {name} has no TensorFlow equivalent")
    return _TO_ENUM[name]


def shape_from_tf(proto):
    if proto.unknown_rank:
        return TensorShape(None)
    return TensorShape([None if d.size < 0 else int(d.size) for d in proto.dim])


def shape_to_tf(shape):
    shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    if shape.ndims is None:
        return tensor_shape_pb2.TensorShapeProto(unknown_rank=True)
    return tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=-1 if d is None else d)
                                                  for d in shape.as_list()])


# the repeated field holding a tensor's values when it has no tensor_content
_VAL_FIELDS = {"float32": "float_val", "float64": "double_val", "int32": "int_val", "int16": "int_val",
               "int8": "int_val", "uint8": "int_val", "uint16": "int_val", "int64": "int64_val", "bool": "bool_val",
               "uint32": "uint32_val", "uint64": "uint64_val", "float16": "half_val", "complex64": "scomplex_val",
               "complex128": "dcomplex_val", "string": "string_val"}


def tensor_to_numpy(proto, where="tensor"):
    """A read-only numpy array of a TensorProto (string tensors: an object array of bytes)."""
    dt = dtype_from_tf(proto.dtype, where)
    shape = shape_from_tf(proto.tensor_shape)
    if shape.ndims is None or not shape.is_fully_defined():
        raise DataLossError(None, None, f"{where}: a tensor value needs a fully defined shape")
    dims = shape.as_list()
    n = math.prod(dims)
    if dt.name == "string":
        vals = list(proto.string_val)
        arr = np.empty(n, dtype=object)
        if vals and len(vals) not in (1, n):
            raise DataLossError(None, None, f"{where}: {len(vals)} strings for shape {dims}")
        arr[:] = vals * (n if len(vals) == 1 else 1) if vals else [b""] * n
    elif dt.name == "variant":
        raise InvalidArgumentError(None, None, f"{where}: variant tensors cannot be constants in dflow")
    else:
        npdt = np.dtype(dt.name)
        if proto.tensor_content:
            raw = proto.tensor_content
            if len(raw) != n * npdt.itemsize:
                raise DataLossError(None, None, f"{where}: tensor content has {len(raw)} bytes, shape {dims} of "
                                    f"{dt.name} needs {n * npdt.itemsize}")
            arr = np.frombuffer(raw, dtype=npdt.newbyteorder("<")).astype(npdt)
        else:
            vals = list(getattr(proto, _VAL_FIELDS[dt.name]))
            if dt.name == "float16":
                vals = np.array(vals, dtype=np.uint16).view(np.float16)
            elif dt.is_complex:
                vals = np.array(vals, dtype=np.float64).reshape(-1, 2) @ np.array([1, 1j]) if vals else []
            vals = np.asarray(vals).astype(npdt)
            if len(vals) > n:
                raise DataLossError(None, None, f"{where}: {len(vals)} values for shape {dims}")
            # TF repeats the last value to fill the shape (zeros when there is none)
            arr = np.full(n, vals[-1] if len(vals) else 0, dtype=npdt)
            arr[:len(vals)] = vals
    arr = arr.reshape(dims)
    arr.setflags(write=False)
    return arr


def numpy_to_tensor(arr, dtype=None, where="tensor"):
    """The TensorProto of an array (numbers as little-endian tensor_content, strings as string_val)."""
    arr = np.asarray(arr)
    dt = as_dtype(dtype) if dtype is not None else (as_dtype("string") if arr.dtype.kind in "OUS"
                                                    else as_dtype(arr.dtype))
    proto = tensor_pb2.TensorProto(dtype=dtype_to_tf(dt, where), tensor_shape=shape_to_tf(list(arr.shape)))
    if dt.name == "string":
        proto.string_val.extend(s if isinstance(s, bytes) else str(s).encode("utf-8") for s in arr.reshape(-1))
    else:
        npdt = np.dtype(dt.name)
        proto.tensor_content = np.ascontiguousarray(arr, dtype=npdt.newbyteorder("<")).tobytes()
    return proto


# ---- TF1's public helpers (`tf.make_tensor_proto`, `tf.make_ndarray`) ---------------------------------


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False, allow_broadcast=False):
    """The TensorProto of `values` (of `dtype`, reshaped to `shape`: a scalar fills it; a value of
    as many elements is reshaped unless `verify_shape`). TypeError/ValueError as TF1."""
    arr = np.asarray(values.numpy() if hasattr(values, "numpy") else values)
    if dtype is not None:
        dt = as_dtype(dtype)
        if dt.name != "string":
            if arr.dtype.kind in "fc" and dt.is_integer:
                raise TypeError(f"Expected {dt.name}, but got {values!r} of type '{arr.dtype.name}'.")
            arr = arr.astype(np.dtype(dt.name))
    if shape is not None:
        shape = [int(d) for d in shape]
        n = int(np.prod(shape))
        if verify_shape and list(arr.shape) != shape:
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {arr.shape}.")
        if arr.size == 1 and n != 1:
            arr = np.full(shape, arr.reshape(()), dtype=arr.dtype)
        elif allow_broadcast:
            arr = np.broadcast_to(arr, shape)
        elif arr.size != n:
            raise ValueError(f"Too many elements provided. Needed at most {n}, but received {arr.size}"
                             if arr.size > n else f"Expected {n} elements for shape {shape}, got {arr.size}")
        else:
            arr = arr.reshape(shape)
    return numpy_to_tensor(arr, dtype=dtype)


def make_ndarray(tensor):
    """The numpy array of a TensorProto (its dtype and shape). DataLossError for malformed content."""
    return np.array(tensor_to_numpy(tensor, "make_ndarray"))
