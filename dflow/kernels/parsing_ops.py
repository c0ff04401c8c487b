"""`tf.train.Example` parsing: `parse_example` (a vector of serialized Examples) and
`parse_single_example` (a scalar), with `FixedLenFeature` (a dense tensor of a fixed shape, with an
optional default) and `VarLenFeature` (a SparseTensor of the values each Example holds).

One op, "ParseExample", a host kernel over an object array of bytes: each record is decoded with
`dflow.proto.Example` (TF's wire format under dflow's proto package) and its
features copied out, so it runs in a Session, inside `Dataset.map` (per element) and on the Dask
path: chunk by chunk when every feature is dense (the outputs chunked like the records), else as
one task over all records (a sparse output's size depends on every record). Outputs in
TF's order: the sparse features' indices, values and dense shapes (sorted by key), then the dense
features (sorted by key). Run-time errors carry TF1's messages (TF 2.21's ParseExampleV2 for
vectors; for a scalar, TF 1.15's ParseSingleExample: no "Name:"/"Index:" parts) in an
InvalidArgumentError naming the op; build-time errors are TF1's ValueError/TypeError.
"""

from __future__ import annotations

import collections
import functools
import math

import numpy as np

from ..graph import dtypes
from ..graph.evaluate import OpTask
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape
from ..proto import Example
from .common import apply_op, convert_to_tensor
from .sparse_manip_ops import sparse_merge
from .sparse_ops import SparseTensor

__all__ = ["FixedLenFeature", "VarLenFeature", "SparseFeature", "parse_example", "parse_single_example"]


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A dense feature of a fixed `shape` and `dtype` (float32, int64 or string); Examples without
    it take `default_value` (an error at run time when None)."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any number of values of `dtype`, parsed into a SparseTensor."""


class SparseFeature(collections.namedtuple("SparseFeature",
                                           ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A SparseTensor of dense shape [size] (a list of sizes for several index keys) whose indices
    are the int64 feature(s) `index_key` and values the feature `value_key` of each Example."""

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def _expand_sparse_features(features):
    """features with each SparseFeature's index and value keys as VarLenFeatures, and the
    SparseFeatures by key (TF1 parses them so, then merges: `sparse_merge`)."""
    plain = {k: f for k, f in features.items() if not isinstance(f, SparseFeature)}
    merged = {k: f for k, f in features.items() if isinstance(f, SparseFeature)}
    for key, f in merged.items():
        index_keys = [f.index_key] if isinstance(f.index_key, str) else list(f.index_key)
        sizes = [f.size] if isinstance(f.size, (int, np.integer)) else list(f.size)
        if len(index_keys) != len(sizes):
            raise ValueError(f"SparseFeature {key!r}: {len(index_keys)} index keys but {len(sizes)} sizes")
        for k, want in [(k, dtypes.int64) for k in index_keys] + [(f.value_key, dtypes.as_dtype(f.dtype))]:
            have = plain.get(k)
            if have is not None and (not isinstance(have, VarLenFeature) or dtypes.as_dtype(have.dtype) != want):
                raise ValueError(f"SparseFeature {key!r}: feature {k!r} is also given as {have}")
            plain[k] = VarLenFeature(want)
    return plain, merged


_KINDS = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
_TF_NAMES = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}
_ALLOWED = "float32, int64, string"


class ParseFailure(ValueError):
    """A record that does not match the features (the op's InvalidArgumentError)."""


def _dtype(feature, key, param):
    dt = dtypes.as_dtype(feature.dtype)
    if dt not in _KINDS:
        raise TypeError(f"Value passed to parameter '{param}' has DataType {dt.name} not in list of allowed values: "
                        f"{_ALLOWED}")
    return dt


def _default(feature, key, dt, shape):
    """A feature's default as a flat list of Python values (floats, ints or bytes: an attr that
    graph files can hold), or None."""
    if feature.default_value is None:
        return None
    value = np.asarray(feature.default_value, dtype=object if dt == dtypes.string else dt.np_dtype)
    n = math.prod(shape)
    if value.size != n:
        raise ValueError(f"Cannot reshape a tensor with {value.size} elements to shape {list(shape)} ({n} elements) "
                         f"for the default_value of feature {key!r}")
    if dt == dtypes.string:
        return [v.encode() if isinstance(v, str) else bytes(v) for v in value.reshape(-1)]
    return value.reshape(-1).tolist()


def _specs(features):
    """(sparse [(key, dtype)], dense [(key, dtype, shape, default)]) sorted by key, checked."""
    if not features:
        raise ValueError(f"Argument `features` cannot be None or falsy. Got {features}")
    if not isinstance(features, dict):
        raise TypeError(f"features must be a dict of feature specs, got {type(features).__name__}")
    sparse, dense = [], []
    for key in sorted(features):
        f = features[key]
        if isinstance(f, VarLenFeature):
            sparse.append((key, _dtype(f, key, "sparse_types")))
        elif isinstance(f, FixedLenFeature):
            if f.shape is None:
                raise ValueError(f"Missing shape for feature {key}. Received feature={f}.")
            dims = TensorShape(f.shape).as_list()
            if dims and dims[0] is None:  # TF 2.21's message
                raise ValueError(f"First dimension of shape for feature {key} unknown. Consider using "
                                 f"FixedLenSequenceFeature. Received feature={f}.")
            if None in dims:
                raise ValueError(f"All dimensions of shape for feature {key} need to be known but received "
                                 f"{f.shape!s}.")
            shape = tuple(int(d) for d in dims)
            dt = _dtype(f, key, "dense_defaults")
            dense.append((key, dt, shape, _default(f, key, dt, shape)))
        else:
            raise ValueError(f"Unsupported {type(f).__name__} {f} for key '{key}'")
    return sparse, dense


# ---- the op ---------------------------------------------------------------------------------------


def _parse_infer(inputs, attrs):
    serialized = inputs[0]
    if serialized.dtype != dtypes.string:
        raise TypeError(f"Input 'serialized' of 'ParseExample' Op has type {serialized.dtype.name} that does not "
                        "match expected type of string.")
    rank = serialized.shape.ndims
    if rank is not None and rank > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {rank} for 'ParseExample' (serialized has shape "
                         f"{serialized.shape})")
    if len(inputs) > 1 and (inputs[1].shape.ndims or 0) > 1:
        raise ValueError(f"ParseExample: example_names must be a vector, got shape {inputs[1].shape}")
    single = rank == 0
    lead = [] if single else [serialized.shape[0].value if rank else None]
    r = len(lead) + 1
    n = len(attrs["sparse_keys"])
    out = [(TensorShape([None, r]), dtypes.int64)] * n
    out += [(TensorShape([None]), dt) for dt in attrs["sparse_types"]]
    out += [(TensorShape([r]), dtypes.int64)] * n
    out += [(TensorShape(lead + list(s)), dt) for dt, s in zip(attrs["dense_types"], attrs["dense_shapes"])]
    return out


def _record_values(feature):
    """The values of one Feature proto: (its kind or None when empty, the values)."""
    which = feature.WhichOneof("kind")
    return which, ([] if which is None else getattr(feature, which).value)


def _parse_records(serialized, names, sparse_keys, sparse_types, dense_keys, dense_types, dense_shapes,
                   dense_defaults, offset=0):
    """The op's outputs (numpy) for an object array of serialized Examples; ParseFailure on a bad one
    (`offset`: the index of the first record in the op's input, for the messages)."""
    ser = np.asarray(serialized, dtype=object)
    if ser.ndim > 1:
        raise ParseFailure(f"Expected serialized to be a scalar or vector, got shape: [{','.join(map(str, ser.shape))}]")
    single = ser.ndim == 0
    records = ser.reshape(-1)
    names = None if names is None else np.asarray(names, dtype=object).reshape(-1)
    if names is not None and names.size and names.size != records.size:
        raise ParseFailure(f"Expected len(names) == len(serialized), but got: {names.size} vs. {records.size}")

    def where(b, key):
        if single:
            return f"Key: {key}."
        name = "<unknown>" if names is None or not names.size else _text(names[b])
        return f"Name: {name}, Key: {key}, Index: {b + offset}."

    # per feature: (key, proto kind, TF's type name, values per record, default as a flat list)
    dense_specs = [(key, _KINDS[dt], _TF_NAMES[_KINDS[dt]], math.prod(shape),
                    default)
                   for key, dt, shape, default in zip(dense_keys, dense_types, dense_shapes, dense_defaults)]
    sparse_specs = [(key, _KINDS[dt], _TF_NAMES[_KINDS[dt]]) for key, dt in zip(sparse_keys, sparse_types)]
    dense_flat = [[] for _ in dense_keys]  # every record's values, converted once per batch
    sparse = [([], []) for _ in sparse_keys]  # (per-record counts, values)
    example = Example()
    for b, record in enumerate(records):
        try:
            example.ParseFromString(record)
        except Exception:  # noqa: BLE001 - protobuf's DecodeError, or a value that is not bytes
            raise ParseFailure(f"Could not parse example input, value: '{_text(record, escape=True)}'") from None
        fmap = example.features.feature
        for (key, kind, tf_name, n, default), flat in zip(dense_specs, dense_flat):
            if key not in fmap:
                if default is None:
                    name = "" if single else (f"Name: {'<unknown>' if names is None or not names.size else _text(names[b])}, ")
                    raise ParseFailure(f"{name}Feature: {key} (data type: {tf_name}) is required but could not be "
                                       "found.")
                flat.extend(default)
                continue
            got, values = _record_values(fmap[key])
            if got is not None and got != kind:
                raise ParseFailure(f"{where(b, key)}  Data types don't match. Data type: {_TF_NAMES[got]} but expected "
                                   f"type: {tf_name}")
            if len(values) != n:
                shape = dense_shapes[dense_keys.index(key)]
                raise ParseFailure(f"{where(b, key)}  Number of {tf_name} values != expected.  Values size: "
                                   f"{len(values)} but output shape: [{','.join(map(str, shape))}]")
            flat.extend(values)
        for (key, kind, tf_name), (counts, flat) in zip(sparse_specs, sparse):
            got, values = (None, ()) if key not in fmap else _record_values(fmap[key])
            if got is not None and got != kind:
                raise ParseFailure(f"{where(b, key)}  Data types don't match. Expected type: {tf_name}, "
                                   f"Actual type: {_TF_NAMES[got]}")
            counts.append(len(values))
            flat.extend(values)
    dense = [_array(flat, dt).reshape((records.size,) + tuple(shape))
             for flat, dt, shape in zip(dense_flat, dense_types, dense_shapes)]
    out_indices, out_values, out_shapes = [], [], []
    for (counts, values), dt in zip(sparse, sparse_types):
        counts = np.asarray(counts, dtype=np.int64)
        total = int(counts.sum())
        position = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        width = int(counts.max()) if counts.size else 0
        if single:
            out_indices.append(position.reshape(-1, 1))
            out_shapes.append(np.asarray([width], dtype=np.int64))
        else:
            rows = np.repeat(np.arange(records.size, dtype=np.int64), counts)
            out_indices.append(np.stack([rows, position], axis=1).reshape(-1, 2))
            out_shapes.append(np.asarray([records.size, width], dtype=np.int64))
        out_values.append(_array(values, dt))
    if single:
        dense = [d[0] for d in dense]
    return tuple(out_indices + out_values + out_shapes + dense)


def _array(values, dt):
    """A flat list of proto values as a numpy array of `dt` (bytes in an object array)."""
    if dt != dtypes.string:
        return np.asarray(values, dtype=dt.np_dtype).reshape(len(values))
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _text(value, escape=False):
    if isinstance(value, bytes):
        return repr(value)[2:-1] if escape else value.decode("utf-8", "replace")
    return str(value)


def _parse_eager(xp, serialized, *names, **attrs):
    return _parse_records(serialized, names[0] if names else None, **attrs)


def _pick(values, i):
    return values[i]


def _parse_chunk(attrs, block, block_info=None):
    """The task of one chunk of records, when every feature is dense: the dense outputs (a tuple,
    picked per output by the next layer; dask fuses the two into one task)."""
    offset = block_info[0]["array-location"][0][0] if block_info else 0
    return _parse_records(block, None, offset=offset, **attrs)


def _parse_lower(ctx, serialized, *names, **attrs):
    """Chunk by chunk when the features are all dense (the outputs are chunked like the records);
    else one task over all records (a sparse output's size depends on every record)."""
    op = ctx.op
    if not attrs["sparse_keys"] and not names and getattr(serialized, "ndim", 0) == 1 and \
            getattr(serialized, "numblocks", (1,))[0] > 1:
        parsed = serialized.map_blocks(OpTask(functools.partial(_parse_chunk, attrs), "ParseExample", op.name), dtype=object, meta=np.empty((0,), object),
                                       name=ctx.name("-parse"))
        outs = []
        for j, (t, shape) in enumerate(zip(op.outputs, attrs["dense_shapes"])):
            dt = t.dtype.np_dtype
            outs.append(parsed.map_blocks(_pick, j, dtype=dt, chunks=(serialized.chunks[0],) + tuple((d,) for d in shape),
                                          new_axis=list(range(1, 1 + len(shape))) or None,
                                          meta=np.empty((0,) * (1 + len(shape)), dt), name=ctx.name(f"-parse{j}")))
        return outs
    task = OpTask(functools.partial(_parse_eager, None, **attrs), "ParseExample", op.name)
    values = ctx.delayed(task, serialized, *names, shape=(), dtype=object)
    outs = []
    for i, t in enumerate(op.outputs):
        shape = tuple(float("nan") if d is None else int(d) for d in t.shape.as_list())
        if shape and shape[0] != shape[0] and i >= 3 * len(attrs["sparse_keys"]):
            rows = getattr(serialized, "shape", (float("nan"),))
            shape = (rows[0] if rows else float("nan"),) + shape[1:]  # a dense output has the batch's rows
        dt = t.dtype.np_dtype
        outs.append(ctx.delayed(_pick, values, i, shape=shape, dtype=dt, meta=np.empty((0,) * len(shape), dt)))
    return outs


register_op("ParseExample", _parse_infer, eager=_parse_eager, lower=_parse_lower, num_outputs=None)
not_differentiable("ParseExample")


def _parse(serialized, features, name, example_names, single):
    plain, merged = _expand_sparse_features(features)
    result = _parse_plain(serialized, plain, name, example_names, single)
    for key, f in merged.items():
        index_keys = [f.index_key] if isinstance(f.index_key, str) else list(f.index_key)
        sizes = [f.size] if isinstance(f.size, (int, np.integer)) else list(f.size)
        ids = [result[k] for k in index_keys]
        result[key] = sparse_merge(ids if len(ids) > 1 else ids[0], result[f.value_key],
                                   sizes if len(sizes) > 1 else sizes[0], already_sorted=f.already_sorted)
    return {k: v for k, v in result.items() if k in features}


def _parse_plain(serialized, features, name, example_names, single):
    sparse, dense = _specs(features)
    serialized = convert_to_tensor(serialized, dtype=None if hasattr(serialized, "dtype") else dtypes.string)
    if single and serialized.shape.ndims not in (None, 0):
        raise ValueError("Input serialized must be a scalar")
    inputs = [serialized]
    if example_names is not None:
        inputs.append(convert_to_tensor(example_names, dtype=dtypes.string))
    attrs = {"sparse_keys": [k for k, _ in sparse], "sparse_types": [dt for _, dt in sparse],
             "dense_keys": [k for k, *_ in dense], "dense_types": [d[1] for d in dense],
             "dense_shapes": [d[2] for d in dense], "dense_defaults": [d[3] for d in dense]}
    outs = apply_op("ParseExample", inputs, attrs, name=name,
                    default_name="ParseSingleExample" if single else "ParseExample")
    outs = outs if isinstance(outs, list) else [outs]
    n = len(sparse)
    result = {key: SparseTensor(outs[j], outs[n + j], outs[2 * n + j]) for j, (key, _) in enumerate(sparse)}
    result.update({d[0]: outs[3 * n + j] for j, d in enumerate(dense)})
    return result


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a vector of serialized `tf.train.Example`s (TF1's `tf.io.parse_example`).

    features: {key: FixedLenFeature | VarLenFeature | SparseFeature}. Returns {key: Tensor of shape [B] + shape
    (FixedLenFeature) | SparseTensor with indices [N, 2] = (example, position), dense_shape
    [B, most values] (VarLenFeature)}. dtypes float32, int64 or string (TypeError otherwise).
    At run time InvalidArgumentError for a record that is not an Example, a required feature
    missing, values of another type or (FixedLenFeature) another count; `example_names` (a vector
    of strings) name the records in these messages."""
    return _parse(serialized, features, name, example_names, single=False)


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized `tf.train.Example` (a scalar string; TF1's
    `tf.io.parse_single_example`): as `parse_example` without the batch dimension (a
    VarLenFeature's SparseTensor has indices [N, 1] and dense_shape [number of values])."""
    return _parse(serialized, features, name, example_names, single=True)
