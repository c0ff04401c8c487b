"""Byte encodings of TF1's `tf.io`: web-safe base64 (EncodeBase64/DecodeBase64), zlib/gzip
(DecodeCompressed), FarmHash fingerprints (Fingerprint), sparse tensors as serialized
TensorProto triples (serialize_sparse, SerializeManySparse, DeserializeManySparse) and the
wall-clock `timestamp`.

Base64 and decompression are elementwise string ops (chunk by chunk on Dask); the others need
whole rows or whole inputs and run as one task. Bytes are TF's: the fingerprints are FarmHash
Fingerprint64 little-endian (rows of strings hash the concatenation of their strings' hashes),
and each serialized sparse part is the TensorProto `serialize_tensor` writes. None has a gradient.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import struct
import time
import zlib

import numpy as np
from google.protobuf.message import DecodeError
from tensorboard.compat.proto import tensor_pb2

from ..errors import DataLossError, InvalidArgumentError
from ..graph import dtypes
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape
from ..graph.tensor_proto import dtype_from_tf, numpy_to_tensor, tensor_to_numpy
from .array_ops import stack
from .common import STRING, apply_op, check_dtype, convert_to_tensor
from .fingerprint import fingerprint64
from .serialization_ops import serialize_tensor
from .sparse_ops import SparseTensor
from .string_ops import _host, _objects
from .whole_task import lower_whole

__all__ = ["encode_base64", "decode_base64", "decode_compressed", "fingerprint", "serialize_sparse",
           "serialize_many_sparse", "deserialize_many_sparse", "timestamp"]


def _strings(x, name):
    return convert_to_tensor(x, dtype=None if hasattr(x, "dtype") else dtypes.string, name=name)


def _elementwise(op_type, fn):
    def infer(inputs, attrs):
        check_dtype(inputs[0], STRING, op_type, arg="input")
        return inputs[0].shape, dtypes.string

    def eager(xp, x, **attrs):
        return _objects(np.frompyfunc(lambda b: fn(b, **attrs), 1, 1)(_host(x)))

    register_op(op_type, infer, eager=eager, elementwise=True)
    not_differentiable(op_type)


# ---- base64 and compression ------------------------------------------------------------------------


def _b64encode(b, pad):
    out = base64.urlsafe_b64encode(b)
    return out if pad else out.rstrip(b"=")


def _b64decode(b):
    if not set(b) <= set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=") or \
            b"=" in b.rstrip(b"=") or len(b.rstrip(b"=")) % 4 == 1:
        raise InvalidArgumentError(None, None, "Invalid character found in base64.")
    s = b.rstrip(b"=")
    try:
        return base64.urlsafe_b64decode(s + b"=" * (-len(s) % 4))
    except binascii.Error:
        raise InvalidArgumentError(None, None, "Invalid character found in base64.") from None


def _decompress(b, compression_type):
    try:
        if compression_type == "ZLIB":
            return zlib.decompress(b)
        if compression_type == "GZIP":
            return gzip.decompress(b)
    except (zlib.error, OSError, EOFError) as e:
        raise DataLossError(None, None, f"DecodeCompressed: {compression_type} data is corrupt: {e}") from None
    return b


_elementwise("EncodeBase64", _b64encode)
_elementwise("DecodeBase64", lambda b: _b64decode(b))
_elementwise("DecodeCompressed", _decompress)


def encode_base64(input, pad=False, name=None):  # noqa: A002 - TF1 signature
    """Each string in web-safe base64 (- and _ for + and /), '=' padded only with `pad`."""
    return apply_op("EncodeBase64", [_strings(input, "input")], {"pad": bool(pad)}, name=name,
                    default_name="EncodeBase64")


def decode_base64(input, name=None):  # noqa: A002 - TF1 signature
    """Each web-safe base64 string decoded (padding optional). InvalidArgumentError for other characters."""
    return apply_op("DecodeBase64", [_strings(input, "input")], name=name, default_name="DecodeBase64")


def decode_compressed(bytes, compression_type="", name=None):  # noqa: A002 - TF1 signature
    """Each string decompressed: compression_type "ZLIB", "GZIP" or "" (unchanged). DataLossError for
    corrupt data."""
    if compression_type not in ("", "ZLIB", "GZIP"):
        raise ValueError(f"decode_compressed: compression_type must be '', 'ZLIB' or 'GZIP', got {compression_type!r}")
    return apply_op("DecodeCompressed", [_strings(bytes, "bytes")], {"compression_type": compression_type}, name=name,
                    default_name="DecodeCompressed")


# ---- fingerprint ------------------------------------------------------------------------------------


def _fp_infer(inputs, attrs):
    x = inputs[0]
    if x.shape.ndims == 0:
        raise ValueError(f"Fingerprint: data must have rank >= 1, got a scalar ({x.name!r})")
    n = x.shape[0].value if x.shape.ndims else None
    return TensorShape([n, 8]), dtypes.uint8


def _fp_eager(xp, x, method):
    x = _host(x)
    rows = x.reshape(x.shape[0], -1) if x.shape[0] else x.reshape(0, 0)
    out = np.zeros((x.shape[0], 8), np.uint8)
    for i, row in enumerate(rows):
        if x.dtype == object:
            parts = [s if isinstance(s, bytes) else str(s).encode("utf-8") for s in row]
            data = parts[0] if len(parts) == 1 else b"".join(struct.pack("<Q", fingerprint64(p)) for p in parts)
        else:
            data = np.ascontiguousarray(row).astype(row.dtype.newbyteorder("<"), copy=False).tobytes()
        out[i] = np.frombuffer(struct.pack("<Q", fingerprint64(data)), np.uint8)
    return out


register_op("Fingerprint", _fp_infer, eager=_fp_eager, lower=lower_whole(_fp_eager))
not_differentiable("Fingerprint")


def fingerprint(data, method="farmhash64", name=None):
    """[data.shape[0], 8] uint8: FarmHash Fingerprint64 of each row of `data` (rank >= 1), little-endian."""
    if method != "farmhash64":
        raise ValueError(f"fingerprint: method must be 'farmhash64', got {method!r}")
    return apply_op("Fingerprint", [convert_to_tensor(data, name="data")], {"method": method}, name=name,
                    default_name="Fingerprint")


# ---- sparse tensors as strings ---------------------------------------------------------------------


def _sparse(sp_input, fn):
    if not isinstance(sp_input, SparseTensor):
        if hasattr(sp_input, "indices") and hasattr(sp_input, "dense_shape"):
            return SparseTensor.from_value(sp_input)
        raise TypeError(f"{fn}: sp_input must be a SparseTensor, got {type(sp_input).__name__}")
    return sp_input


def serialize_sparse(sp_input, name=None, out_type=dtypes.string):
    """[3] strings: the serialized TensorProtos of sp_input's indices, values and dense_shape."""
    if dtypes.as_dtype(out_type) != dtypes.string:
        raise ValueError("serialize_sparse: dflow provides out_type=string only (variant has no bytes here)")
    sp = _sparse(sp_input, "serialize_sparse")
    return stack([serialize_tensor(sp.indices), serialize_tensor(sp.values), serialize_tensor(sp.dense_shape)],
                 name=name or "SerializeSparse")


def _part(b):
    return numpy_to_tensor(b).SerializeToString()


def _serialize_many(xp, indices, values, shape):
    indices, values, shape = np.asarray(indices, np.int64), _host(values), np.asarray(shape, np.int64)
    if shape.shape[0] < 2:
        raise InvalidArgumentError(None, None, f"SerializeManySparse: the rank of the SparseTensor must be >= 2, got "
                                   f"{shape.shape[0]}")
    out = np.empty((int(shape[0]), 3), dtype=object)
    for b in range(int(shape[0])):
        rows = indices[:, 0] == b
        out[b] = [_part(indices[rows, 1:]), _part(values[rows]), _part(shape[1:])]
    return out


def _many_infer(inputs, attrs):
    return TensorShape([None, 3]), dtypes.string


register_op("SerializeManySparse", _many_infer, eager=_serialize_many, lower=lower_whole(_serialize_many))
not_differentiable("SerializeManySparse")


def serialize_many_sparse(sp_input, name=None, out_type=dtypes.string):
    """[N, 3] strings: each minibatch entry (first dimension) of sp_input as serialize_sparse would write it."""
    if dtypes.as_dtype(out_type) != dtypes.string:
        raise ValueError("serialize_many_sparse: dflow provides out_type=string only")
    sp = _sparse(sp_input, "serialize_many_sparse")
    return apply_op("SerializeManySparse", [sp.indices, sp.values, sp.dense_shape], name=name,
                    default_name="SerializeManySparse")


def _parse(data, want, what):
    proto = tensor_pb2.TensorProto()
    try:
        proto.ParseFromString(data if isinstance(data, bytes) else str(data).encode("utf-8"))
        got = dtype_from_tf(proto.dtype, "DeserializeManySparse")
        value = tensor_to_numpy(proto, "DeserializeManySparse")
    except (DecodeError, InvalidArgumentError, DataLossError):
        raise InvalidArgumentError(None, None, f"DeserializeManySparse: could not parse {what} as a TensorProto") \
            from None
    if got != want:
        raise InvalidArgumentError(None, None, f"DeserializeManySparse: {what} has dtype {got.name}, expected "
                                   f"{want.name}")
    return value


def _deserialize_many(xp, serialized, dtype, rank):
    s = _host(serialized)
    if s.ndim != 2 or s.shape[1] != 3:
        raise InvalidArgumentError(None, None, f"DeserializeManySparse: serialized_sparse must be [N, 3], got shape "
                                   f"{list(s.shape)}")
    all_idx, all_vals, shapes = [], [], []
    for b, (i, v, sh) in enumerate(s):
        idx = np.asarray(_parse(i, dtypes.int64, f"row {b}'s indices"), np.int64)
        vals = np.asarray(_parse(v, dtype, f"row {b}'s values"))
        shape = np.asarray(_parse(sh, dtypes.int64, f"row {b}'s shape"), np.int64)
        if shapes and len(shape) != len(shapes[0]):
            raise InvalidArgumentError(None, None, f"DeserializeManySparse: row {b} has rank {len(shape)}, row 0 "
                                       f"{len(shapes[0])}")
        idx = idx.reshape(-1, len(shape))
        all_idx.append(np.concatenate([np.full((len(idx), 1), b, np.int64), idx], axis=1))
        all_vals.append(vals.reshape(-1))
        shapes.append(shape)
    got = len(shapes[0]) + 1 if shapes else rank or 1
    if rank is not None and got != rank:
        raise InvalidArgumentError(None, None, f"DeserializeManySparse: expected rank {rank}, got {got}")
    rank = got
    shape = np.concatenate([[len(s)], np.max(shapes, axis=0)]).astype(np.int64) if shapes else np.zeros(1, np.int64)
    vals = np.concatenate(all_vals) if all_vals else np.zeros(0, dtype.np_dtype)
    return (np.concatenate(all_idx).reshape(-1, rank) if all_idx else np.zeros((0, rank), np.int64),
            np.array(vals, dtype=object) if dtype == dtypes.string else vals, shape)


def _deserialize_infer(inputs, attrs):
    check_dtype(inputs[0], STRING, "DeserializeManySparse", arg="serialized_sparse")
    if inputs[0].shape.ndims not in (None, 2):
        raise ValueError(f"DeserializeManySparse: serialized_sparse must be [N, 3], got {inputs[0].shape}")
    r = attrs["rank"]
    return [(TensorShape([None, r]), dtypes.int64), (TensorShape([None]), attrs["dtype"]),
            (TensorShape([r]), dtypes.int64)]


register_op("DeserializeManySparse", _deserialize_infer, eager=_deserialize_many,
            lower=lower_whole(_deserialize_many), num_outputs=3)
not_differentiable("DeserializeManySparse")


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """The SparseTensor of [N, 3] serialized entries (serialize_many_sparse's), stacked along a new
    first dimension; its dense shape is the largest of each dimension. InvalidArgumentError for bytes
    that are not TensorProtos of the expected dtypes."""
    s = _strings(serialized_sparse, "serialized_sparse")
    out = apply_op("DeserializeManySparse", [s], {"dtype": dtypes.as_dtype(dtype),
                                                  "rank": None if rank is None else int(rank)},
                   name=name, default_name="DeserializeManySparse")
    return SparseTensor(*out)


# ---- timestamp --------------------------------------------------------------------------------------


def _timestamp_eager(xp):
    return np.float64(time.time())


register_op("Timestamp", lambda inputs, attrs: (TensorShape([]), dtypes.float64), eager=_timestamp_eager,
            lower=lower_whole(_timestamp_eager), stateful=True)
not_differentiable("Timestamp")


def timestamp(name=None):
    """The float64 seconds since the epoch when the op runs (each run)."""
    return apply_op("Timestamp", [], name=name, default_name="Timestamp")
