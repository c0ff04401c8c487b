"""Lookup tables (TF1's `HashTableV2` family): session state read and written by host ops.

A table is a handle op (`HashTableV2`, `MutableHashTableV2`, `MutableDenseHashTableV2`: a scalar
string naming the table) and ops taking that handle: `InitializeTableV2`,
`InitializeTableFromTextFileV2`, `LookupTableFindV2`, `LookupTableSizeV2`, `LookupTableInsertV2`,
`LookupTableRemoveV2`, `LookupTableExportV2`. The contents live in the session
(`HostRun.resources`, beside an iterator's position), keyed by the handle op's name, so each
session has its own tables, as in TF1; they are host ops (schedule/host.py): the hook computes
the keys with a nested run, reads or changes the table, and feeds the result to the plan. Changes
go through the run's transaction (an initializer installs its table only if the run succeeds).
A static table read before its initializer ran is TF1's `FailedPreconditionError: Table not
initialized.`; initializing it again with the same contents is allowed, with others refused.

`StringToHashBucketFast` (FarmHash Fingerprint64 modulo the bucket count, kernels/fingerprint.py)
gives out-of-vocabulary keys their buckets.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from ..graph import dtypes
from ..graph.graph import get_default_graph
from ..graph.keys import GraphKeys
from ..graph.registry import def_host, not_differentiable, register_op
from ..graph.shape import TensorShape
from .common import apply_op, convert_to_tensor, to_bytes_array
from .control_ops import group
from .fingerprint import CROSS_HASH_KEY, fingerprint64, fingerprint_cat64
from .hash_ops import string_to_hash_bucket_fast  # noqa: F401 - the lookup namespaces take it from here

__all__ = ["tables_initializer"]

WHOLE_LINE = -2
LINE_NUMBER = -1

# ---- the table's state in a session ----------------------------------------------------------------


class TableState:
    """One session's contents of one table: {key: value row} and whether it was initialized."""

    def __init__(self, handle_op, entries=None, initialized=False):
        self.key_dtype = handle_op.get_attr("key_dtype")
        self.value_dtype = handle_op.get_attr("value_dtype")
        self.value_shape = tuple(handle_op.get_attr("value_shape") or ())
        self.entries = dict(entries or {})
        self.initialized = initialized

    def copy(self, handle_op):
        return TableState(handle_op, self.entries, self.initialized)


def _table_op(op):
    handle = op.inputs[0].op
    if handle.type not in _HANDLE_TYPES:
        raise InvalidArgumentError(None, op, f"{op.name}: input 0 must be a lookup table handle, got {handle.type} "
                                   f"{handle.name!r}")
    return handle


def _key(handle):
    return ("lookup_table", handle.get_attr("shared_name") or handle.name)


def _state(h, op, need_init=True):
    """The table `op` works on, in this session; a static one must have been initialized."""
    handle = _table_op(op)
    state = h.resources.get(_key(handle))
    if state is None:
        if handle.type == "HashTableV2":
            if need_init:
                raise FailedPreconditionError(None, op, "Table not initialized.")
            return handle, None
        state = TableState(handle, initialized=True)  # mutable tables start empty
    return handle, state


def _py_key(k):
    return k if isinstance(k, bytes) else k.item() if hasattr(k, "item") else k


def _as_keys(arr, dtype):
    if dtype == dtypes.string:
        return to_bytes_array(arr)
    return np.asarray(arr, dtype=dtype.as_numpy_dtype)


def _as_values(arr, dtype):
    return to_bytes_array(arr) if dtype == dtypes.string else np.asarray(arr, dtype=dtype.as_numpy_dtype)


def _value_repr(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


def _entries(op, keys, values, value_shape, what):
    """{key: value row} from parallel arrays; InvalidArgumentError for mismatched sizes or one key
    given two values (TF1's checks)."""
    keys = keys.reshape(-1)
    if values.shape[:1] != keys.shape or tuple(values.shape[1:]) != value_shape:
        raise InvalidArgumentError(None, op, f"{op.name}: {what} expects keys and values of matching size, got "
                                   f"keys of shape {list(keys.shape)} and values of shape {list(values.shape)}")
    out = {}
    for k, v in zip(keys, values):
        k = _py_key(k)
        v = v if value_shape else _py_key(v)
        if k in out and not np.array_equal(out[k], v):
            raise FailedPreconditionError(None, op, f"HashTable has different value for same key. Key "
                                          f"{_value_repr(k)} has {_value_repr(out[k])} and trying to add value "
                                          f"{_value_repr(v)}")
        out[k] = v
    return out


def _install(h, op, handle, entries):
    """Installs an initialized static table when the run succeeds; the same contents again is
    allowed, other contents are refused (TF1's InitializableLookupTable)."""
    old = h.resources.get(_key(handle))
    if old is not None and old.initialized:
        if old.entries.keys() != entries.keys() or any(not np.array_equal(old.entries[k], v)
                                                       for k, v in entries.items()):
            raise FailedPreconditionError(None, op, "Table was already initialized with different data.")
        return
    state = TableState(handle, entries, initialized=True)
    h.txn.on_success(lambda: h.resources.__setitem__(_key(handle), state))


# ---- handles -------------------------------------------------------------------------------------------


def _handle_infer(inputs, attrs):
    return TensorShape([]), dtypes.string


def _handle_eager(xp, **attrs):
    return to_bytes_array(attrs.get("shared_name") or "table")


_HANDLE_TYPES = ("HashTableV2", "MutableHashTableV2", "MutableDenseHashTableV2")
for _t in _HANDLE_TYPES:
    register_op(_t, _handle_infer, eager=_handle_eager, stateful=True)


def table_handle(op_type, key_dtype, value_dtype, shared_name=None, value_shape=(), name=None, extra=None):
    """A table's handle op (a scalar string tensor)."""
    attrs = {"key_dtype": dtypes.as_dtype(key_dtype), "value_dtype": dtypes.as_dtype(value_dtype),
             "shared_name": shared_name or "", "container": "", "value_shape": list(value_shape)}
    attrs.update(extra or {})
    return apply_op(op_type, [], attrs, name=name, default_name="hash_table", graph=get_default_graph())


# ---- initializers --------------------------------------------------------------------------------------

register_op("InitializeTableV2", lambda inputs, attrs: [], stateful=True, state="host", num_outputs=0)
register_op("InitializeTableFromTextFileV2", lambda inputs, attrs: [], stateful=True, state="host", num_outputs=0)


@def_host("InitializeTableV2")
def _initialize_host(h, op):
    handle = _table_op(op)
    keys, values = h.evaluate(op.inputs[1:])
    st = TableState(handle)
    entries = _entries(op, _as_keys(keys, st.key_dtype), _as_values(values, st.value_dtype), st.value_shape,
                       "InitializeTable")
    _install(h, op, handle, entries)
    h.decisions[op] = True


def _read_lines(op, filename, vocab_size):
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(None, op, f"{filename}; No such file or directory") from None
    except OSError as e:
        raise NotFoundError(None, op, f"{filename}: cannot read the vocabulary file: {e}") from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if vocab_size is not None and vocab_size >= 0:
        if len(lines) < vocab_size:
            raise InvalidArgumentError(None, op, f"Invalid vocab_size in {filename}: expected: {vocab_size} got: "
                                       f"{len(lines)}")
        lines = lines[:vocab_size]
    return lines


def _field(op, filename, n, line, index, delimiter, dtype):
    if index == WHOLE_LINE:
        s = line
    elif index == LINE_NUMBER:
        return n
    else:
        cols = line.split(delimiter) if delimiter else line.split()
        if index >= len(cols):
            raise InvalidArgumentError(None, op, f"Invalid number of columns in {filename} line {n} "
                                       f"({line.decode('utf-8', 'replace')}) : expected {index + 1} got {len(cols)}")
        s = cols[index]
    if dtype == dtypes.string:
        return s
    try:
        return int(s) if dtype.is_integer else float(s)
    except ValueError:
        raise InvalidArgumentError(None, op, f"Field {s.decode('utf-8', 'replace')} in line {n} is not a valid "
                                   f"{dtype.name}.") from None


@def_host("InitializeTableFromTextFileV2")
def _initialize_from_file_host(h, op):
    handle = _table_op(op)
    (filename,) = h.evaluate(op.inputs[1:])
    filename = os.fsdecode(_py_key(np.asarray(filename, dtype=object).reshape(()).item()))
    st = TableState(handle)
    vocab_size = op.get_attr("vocab_size")
    delimiter = op.get_attr("delimiter").encode()
    lines = _read_lines(op, filename, vocab_size)
    keys = [_field(op, filename, n, line, op.get_attr("key_index"), delimiter, st.key_dtype)
            for n, line in enumerate(lines)]
    values = [_field(op, filename, n, line, op.get_attr("value_index"), delimiter, st.value_dtype)
              for n, line in enumerate(lines)]
    entries = _entries(op, _as_keys(np.asarray(keys, dtype=object), st.key_dtype),
                       _as_values(np.asarray(values, dtype=object), st.value_dtype), (), "InitializeTableFromTextFile")
    _install(h, op, handle, entries)
    h.decisions[op] = True


# ---- reading and writing --------------------------------------------------------------------------------


def _find_infer(inputs, attrs):
    handle, keys, default = inputs
    value_shape = attrs.get("value_shape") or []
    return keys.shape.concatenate(value_shape), attrs["value_dtype"]


register_op("LookupTableFindV2", _find_infer, stateful=True, state="host")
register_op("LookupTableSizeV2", lambda inputs, attrs: (TensorShape([]), dtypes.int64), stateful=True, state="host")
register_op("LookupTableExportV2", lambda inputs, attrs: [
    (TensorShape([None]), attrs["key_dtype"]),
    (TensorShape([None] + list(attrs.get("value_shape") or [])), attrs["value_dtype"])],
    stateful=True, state="host", num_outputs=2)
register_op("LookupTableInsertV2", lambda inputs, attrs: [], stateful=True, state="host", num_outputs=0)
register_op("LookupTableRemoveV2", lambda inputs, attrs: [], stateful=True, state="host", num_outputs=0)
not_differentiable("InitializeTableV2", "InitializeTableFromTextFileV2", "LookupTableFindV2", "LookupTableSizeV2",
                   "LookupTableExportV2", "LookupTableInsertV2", "LookupTableRemoveV2", *_HANDLE_TYPES)


@def_host("LookupTableFindV2")
def _find_host(h, op):
    handle, state = _state(h, op)
    keys, default = h.evaluate(op.inputs[1:])
    keys = _as_keys(keys, state.key_dtype)
    default = _as_values(default, state.value_dtype)
    if default.shape != state.value_shape and default.size != 1:
        raise InvalidArgumentError(None, op, f"{op.name}: the default value must have the table's value shape "
                                   f"{list(state.value_shape)}, got {list(default.shape)}")
    out = np.empty(keys.shape + state.value_shape, dtype=state.value_dtype.as_numpy_dtype)
    flat = out.reshape((-1,) + state.value_shape)
    dflt = default.reshape(()) if not state.value_shape else np.broadcast_to(default, state.value_shape)
    get = state.entries.get
    for i, k in enumerate(keys.reshape(-1)):
        flat[i] = get(_py_key(k), dflt)
    h.feed(op.outputs, [out])


@def_host("LookupTableSizeV2")
def _size_host(h, op):
    _, state = _state(h, op)
    h.feed(op.outputs, [np.asarray(len(state.entries), dtype=np.int64)])


@def_host("LookupTableExportV2")
def _export_host(h, op):
    _, state = _state(h, op)
    keys = list(state.entries)
    k = _as_keys(np.asarray(keys, dtype=object), state.key_dtype).reshape(len(keys))
    vals = [state.entries[x] for x in keys]
    v = np.empty((len(keys),) + state.value_shape, dtype=state.value_dtype.as_numpy_dtype)
    for i, x in enumerate(vals):
        v[i] = x
    h.feed(op.outputs, [k, v])


def _change(h, op, update):
    """Applies `update(entries)` to a copy of the table; the copy replaces it now and is undone if
    the run fails."""
    handle, state = _state(h, op)
    new = state.copy(handle)
    update(new)
    key = _key(handle)
    old = h.resources.get(key)
    h.resources[key] = new
    h.txn.on_failure(lambda: h.resources.__setitem__(key, old) if old is not None else h.resources.pop(key, None))
    h.decisions[op] = True


def _check_empty_key(op, state, keys):
    if op.inputs[0].op.type != "MutableDenseHashTableV2":
        return
    empty = op.inputs[0].op.get_attr("empty_key")
    deleted = op.inputs[0].op.get_attr("deleted_key")
    for k in keys:
        if _py_key(k) == empty:
            raise InvalidArgumentError(None, op, "Using the empty_key as a table key is not allowed")
        if deleted is not None and _py_key(k) == deleted:
            raise InvalidArgumentError(None, op, "Using the deleted_key as a table key is not allowed")


@def_host("LookupTableInsertV2")
def _insert_host(h, op):
    handle, state = _state(h, op)
    keys, values = h.evaluate(op.inputs[1:])
    keys = _as_keys(keys, state.key_dtype)
    values = _as_values(values, state.value_dtype)
    if tuple(values.shape) != tuple(keys.shape) + state.value_shape:
        raise InvalidArgumentError(None, op, f"{op.name}: expected values of shape "
                                   f"{list(keys.shape) + list(state.value_shape)} for keys of shape "
                                   f"{list(keys.shape)}, got {list(values.shape)}")
    flat_k = keys.reshape(-1)
    flat_v = values.reshape((-1,) + state.value_shape)
    _check_empty_key(op, state, flat_k)

    def update(s):
        for k, v in zip(flat_k, flat_v):
            s.entries[_py_key(k)] = np.array(v) if state.value_shape else _py_key(v)

    _change(h, op, update)


@def_host("LookupTableRemoveV2")
def _remove_host(h, op):
    _, state = _state(h, op)
    (keys,) = h.evaluate(op.inputs[1:])
    flat_k = _as_keys(keys, state.key_dtype).reshape(-1)
    _check_empty_key(op, state, flat_k)

    def update(s):
        for k in flat_k:
            s.entries.pop(_py_key(k), None)

    _change(h, op, update)




def tables_initializer(name="init_all_tables"):
    """An op running every initializer of the TABLE_INITIALIZERS collection (a no-op if none)."""
    inits = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    return group(*inits, name=name)


def _cross_infer(inputs, attrs):
    shape = TensorShape(inputs[0].shape)
    for x in inputs:
        if x.dtype != dtypes.string and not x.dtype.is_integer:
            raise TypeError(f"CrossHashed: inputs must be string or integer tensors, got {x.dtype.name}")
        shape = shape.merge_with(x.shape)
    return shape, dtypes.int64


def _cross_eager(xp, *xs, num_buckets, hash_key):
    """Per position, FingerprintCat64 over the inputs (a string's Fingerprint64, an integer as it
    is) from `hash_key`, modulo `num_buckets` (TF1's SparseCross, hashed, one value per column)."""
    arrs = np.broadcast_arrays(*[np.asarray(x) for x in xs])
    out = np.empty(arrs[0].shape, dtype=np.int64)
    flat = [a.reshape(-1) for a in arrs]
    mod = num_buckets if num_buckets > 0 else (1 << 63) - 1
    for i in range(out.size):
        h = hash_key
        for a in flat:
            v = a[i]
            h = fingerprint_cat64(h, fingerprint64(v) if isinstance(v, bytes) else int(v) & ((1 << 64) - 1))
        out.reshape(-1)[i] = h % mod
    return out


register_op("CrossHashed", _cross_infer, eager=_cross_eager, elementwise=True)
not_differentiable("CrossHashed")


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """int64 ids of the crossing of same-shaped string/integer tensors, one value per position
    (a `crossed_column` of single-valued features): FingerprintCat64 chained as TF1's
    `sparse_cross_hashed`, modulo `num_buckets` (> 0)."""
    xs = [convert_to_tensor(x) for x in inputs]
    return apply_op("CrossHashed", xs, {"num_buckets": int(num_buckets),
                                        "hash_key": CROSS_HASH_KEY if hash_key is None else int(hash_key)},
                    name=name, default_name="SparseCross")
