"""`tf.train.SequenceExample` parsing: `parse_single_sequence_example` (a scalar) and
`parse_sequence_example` (a vector), with `FixedLenSequenceFeature` (one dense step of a fixed
shape per entry of a feature list).

One op, "ParseSequenceExample", a host kernel over the records (one task: sizes depend on every
record). Context features are parsed as parsing_ops parses an Example's (FixedLenFeature with its
default, VarLenFeature as a SparseTensor); a feature list's FixedLenSequenceFeature becomes
[batch, steps] + shape (shorter lists padded with the feature's default_value, or 0 / ""), its
VarLenFeature a SparseTensor [batch, steps, values]. A single record drops the batch dimension.
Mismatches are InvalidArgumentErrors naming the key and the record.
"""

from __future__ import annotations

import collections

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape
from ..proto import SequenceExample
from .common import apply_op, convert_to_tensor
from .manip_ops import squeeze
from .parsing_ops import FixedLenFeature, VarLenFeature, _array, _record_values
from .sparse_ops import SparseTensor
from .string_ops import _host
from .whole_task import lower_whole

__all__ = ["FixedLenSequenceFeature", "parse_single_sequence_example"]

_KINDS = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}


class FixedLenSequenceFeature(collections.namedtuple("FixedLenSequenceFeature",
                                                     ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature list whose every entry is a dense value of `shape` and `dtype`; `allow_missing`
    lets a record lack the list (0 steps); `default_value` pads shorter lists in a batch."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


def _values(feature, dt, where):
    kind, vals = _record_values(feature)
    if kind is not None and kind != _KINDS[dt]:
        raise InvalidArgumentError(None, None, f"{where}: data types don't match. Expected type: {dt.name}, "
                                   f"got {kind.replace('_list', '')}")
    return _array(list(vals), dt)


def _parse_records(records, ctx_sparse, ctx_dense, seq_sparse, seq_dense):
    protos = []
    for b, data in enumerate(records):
        p = SequenceExample()
        try:
            p.ParseFromString(data if isinstance(data, bytes) else str(data).encode("utf-8"))
        except Exception:  # noqa: BLE001 - protobuf's DecodeError and friends
            raise InvalidArgumentError(None, None, f"Could not parse example input, value: record {b}") from None
        protos.append(p)
    n = len(protos)
    outs = []
    for key, dt in ctx_sparse:
        rows = [_values(p.context.feature[key], dt, f"Context feature '{key}' of record {b}")
                if key in p.context.feature else _array([], dt) for b, p in enumerate(protos)]
        outs += _sparse(rows, dt, n)
    for key, dt, shape, default in ctx_dense:
        size = int(np.prod(shape, dtype=np.int64))
        vals = []
        for b, p in enumerate(protos):
            v = _values(p.context.feature[key], dt, f"Context feature '{key}' of record {b}") \
                if key in p.context.feature else None
            if v is None or v.size == 0:
                if default is None:
                    raise InvalidArgumentError(None, None, f"Name: <unknown>, Context feature '{key}' is required but "
                                               f"could not be found (record {b}).")
                v = _array(list(default), dt)
            if v.size != size:
                raise InvalidArgumentError(None, None, f"Name: <unknown>, Key: {key}, Index: {b}.  Number of values "
                                           f"!= expected.  values size: {v.size} but output shape: {list(shape)}")
            vals.append(v.reshape(shape))
        outs.append(np.stack(vals) if vals else np.zeros((0,) + tuple(shape), dt.np_dtype))
    for key, dt in seq_sparse:
        per_record = []
        for b, p in enumerate(protos):
            fl = p.feature_lists.feature_list[key].feature if key in p.feature_lists.feature_list else []
            per_record.append([_values(f, dt, f"Feature list '{key}' of record {b}") for f in fl])
        steps = max((len(r) for r in per_record), default=0)
        width = max((len(v) for r in per_record for v in r), default=0)
        idx = [(b, s, i) for b, r in enumerate(per_record) for s, v in enumerate(r) for i in range(len(v))]
        vals = [x for r in per_record for v in r for x in v]
        outs += [np.asarray(idx, np.int64).reshape(-1, 3), _array(vals, dt), np.asarray([n, steps, width], np.int64)]
    lengths = []
    for key, dt, shape, allow_missing, default in seq_dense:
        size = int(np.prod(shape, dtype=np.int64))
        per_record = []
        for b, p in enumerate(protos):
            if key not in p.feature_lists.feature_list:
                if not allow_missing:
                    raise InvalidArgumentError(None, None, f"Name: <unknown>, Feature list '{key}' is required but "
                                               f"could not be found (record {b}).  Did you mean to include it in "
                                               "feature_list_dense_missing_assumed_empty or "
                                               "feature_list_dense_defaults?")
                per_record.append([])
                continue
            steps = []
            for s, f in enumerate(p.feature_lists.feature_list[key].feature):
                v = _values(f, dt, f"Feature list '{key}' of record {b}")
                if v.size != size:
                    raise InvalidArgumentError(None, None, f"Name: <unknown>, Key: {key}, Index: {s}.  Number of "
                                               f"values != expected.  values size: {v.size} but output shape: "
                                               f"{list(shape)}")
                steps.append(v.reshape(shape))
            per_record.append(steps)
        t = max((len(r) for r in per_record), default=0)
        fill = (b"" if dt == dtypes.string else 0) if default is None else default
        out = np.empty((n, t) + tuple(shape), dtype=object if dt == dtypes.string else dt.np_dtype)
        out[...] = fill
        for b, r in enumerate(per_record):
            if r:
                out[b, :len(r)] = np.stack(r)
        outs.append(out)
        lengths.append(np.asarray([len(r) for r in per_record], np.int64))
    return tuple(outs + lengths)


def _sparse(rows, dt, n):
    idx = [(b, i) for b, r in enumerate(rows) for i in range(len(r))]
    vals = np.concatenate(rows) if rows else _array([], dt)
    width = max((len(r) for r in rows), default=0)
    return [np.asarray(idx, np.int64).reshape(-1, 2), vals if len(vals) else _array([], dt),
            np.asarray([n, width], np.int64)]


def _eager(xp, serialized, ctx_sparse, ctx_dense, seq_sparse, seq_dense):
    records = np.asarray(_host(serialized), dtype=object).reshape(-1)
    return _parse_records(list(records), ctx_sparse, ctx_dense, seq_sparse, seq_dense)


def _infer(inputs, attrs):
    s = inputs[0]
    if s.dtype != dtypes.string or s.shape.ndims not in (None, 1):
        raise ValueError(f"ParseSequenceExample: serialized must be a string vector, got {s.dtype.name} {s.shape}")
    n = s.shape[0].value if s.shape.ndims else None
    out = []
    for _, dt in attrs["ctx_sparse"]:
        out += [(TensorShape([None, 2]), dtypes.int64), (TensorShape([None]), dt), (TensorShape([2]), dtypes.int64)]
    for _, dt, shape, _ in attrs["ctx_dense"]:
        out.append((TensorShape([n] + list(shape)), dt))
    for _, dt in attrs["seq_sparse"]:
        out += [(TensorShape([None, 3]), dtypes.int64), (TensorShape([None]), dt), (TensorShape([3]), dtypes.int64)]
    for _, dt, shape, _, _ in attrs["seq_dense"]:
        out.append((TensorShape([n, None] + list(shape)), dt))
    out += [(TensorShape([n]), dtypes.int64)] * len(attrs["seq_dense"])
    return out


register_op("ParseSequenceExample", _infer, eager=_eager, lower=lower_whole(_eager), num_outputs=None)
not_differentiable("ParseSequenceExample")


def _dt(feature, key):
    dt = dtypes.as_dtype(feature.dtype)
    if dt not in _KINDS:
        raise TypeError(f"Feature '{key}': dtype must be float32, int64 or string, got {dt.name}")
    return dt


def _as_bytes(v):
    return v if isinstance(v, bytes) else str(v).encode("utf-8")


def _split(features, sequence):
    sparse, dense = [], []
    for key in sorted(features or {}):
        f = features[key]
        if isinstance(f, VarLenFeature):
            sparse.append((key, _dt(f, key)))
        elif sequence and isinstance(f, FixedLenSequenceFeature):
            dt = _dt(f, key)
            default = None if f.default_value is None else _as_bytes(f.default_value) if dt == dtypes.string \
                else np.asarray(f.default_value, dt.np_dtype).item()
            dense.append((key, dt, tuple(int(d) for d in f.shape), bool(f.allow_missing), default))
        elif not sequence and isinstance(f, FixedLenFeature):
            dt = _dt(f, key)
            default = None if f.default_value is None else tuple(np.asarray(
                f.default_value, dt.np_dtype if dt != dtypes.string else object).reshape(-1).tolist())
            dense.append((key, dt, tuple(int(d) for d in f.shape), default))
        else:
            kinds = "VarLenFeature or FixedLenSequenceFeature" if sequence else "VarLenFeature or FixedLenFeature"
            raise ValueError(f"Feature '{key}' of {'sequence_features' if sequence else 'context_features'} must be "
                             f"a {kinds}, got {type(f).__name__}")
    return tuple(sparse), tuple(dense)


def _parse(serialized, context_features, sequence_features, name, default_name):
    ctx_sparse, ctx_dense = _split(context_features, False)
    seq_sparse, seq_dense = _split(sequence_features, True)
    attrs = {"ctx_sparse": ctx_sparse, "ctx_dense": ctx_dense, "seq_sparse": seq_sparse, "seq_dense": seq_dense}
    out = apply_op("ParseSequenceExample", [serialized], attrs, name=name, default_name=default_name)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]  # one output comes as a bare Tensor
    context, seq = {}, {}
    for key, _ in ctx_sparse:
        context[key] = outs[:3]
        outs = outs[3:]
    for key, *_ in ctx_dense:
        context[key] = outs.pop(0)
    for key, _ in seq_sparse:
        seq[key] = outs[:3]
        outs = outs[3:]
    for key, *_ in seq_dense:
        seq[key] = outs.pop(0)
    lengths = {key: outs.pop(0) for key, *_ in seq_dense}
    return context, seq, lengths


def parse_sequence_example(serialized, context_features=None, sequence_features=None, example_names=None,
                           name=None):
    """(context, feature_lists, feature_list_lengths) of a vector of serialized SequenceExamples:
    dicts of dense tensors ([batch] + shape; [batch, steps] + shape) and SparseTensors, and the
    number of steps of each FixedLenSequenceFeature per record."""
    s = convert_to_tensor(serialized, dtype=None if hasattr(serialized, "dtype") else dtypes.string,
                          name="serialized")
    context, seq, lengths = _parse(s, context_features, sequence_features, name, "ParseSequenceExample")
    wrap = {k: SparseTensor(*v) if isinstance(v, list) else v for k, v in context.items()}
    return wrap, {k: SparseTensor(*v) if isinstance(v, list) else v for k, v in seq.items()}, lengths


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None, example_name=None,
                                  name=None):
    """(context, feature_lists) of one serialized SequenceExample (a scalar string): dense tensors of
    `shape` and [steps] + shape, SparseTensors [values] and [steps, values]."""
    s = convert_to_tensor(serialized, dtype=None if hasattr(serialized, "dtype") else dtypes.string,
                          name="serialized")
    if s.shape.ndims not in (None, 0):
        raise ValueError(f"parse_single_sequence_example: serialized must be a scalar, got shape {s.shape}")
    context, seq, _ = _parse(s[None], context_features, sequence_features, name, "ParseSingleSequenceExample")

    def single(v, rank):
        if isinstance(v, list):  # drop the batch column of the indices and the batch dimension of the shape
            return SparseTensor(v[0][:, 1:], v[1], v[2][1:])
        return squeeze(v, [0])

    return {k: single(v, 1) for k, v in context.items()}, {k: single(v, 2) for k, v in seq.items()}
