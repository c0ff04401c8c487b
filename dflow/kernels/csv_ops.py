"""`decode_csv` (TF1's DecodeCSV): CSV records (a string tensor) into one tensor per column.

The record defaults are op inputs, one per column (TF1's: each a scalar or a 1-element vector of
the column's dtype, or an empty vector: the column is required). Every output has the records'
shape. Fields follow TF's `ExtractFields`: `field_delim` separates them; with `use_quote_delim`,
a field that starts with '"' ends at '"' before a delimiter or the end, '""' inside it is a quote;
`na_value` and an empty field mean missing (the default). `select_cols` (strictly increasing)
keeps those columns only. All-numeric records are parsed in one pass by pandas' C tokenizer;
others are split in Python, column values parsed by numpy a column at a time; a record neither
can take is parsed again field by field, for TF1's message naming the field and record
(InvalidArgumentError, the op's node in it).
On Dask the records are parsed chunk by chunk (the outputs chunked like them).
"""

from __future__ import annotations

import csv
import functools
import io
import re

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.evaluate import OpTask
from ..graph.registry import not_differentiable, register_op
from .common import apply_op, convert_to_tensor
from .whole_task import lower_whole

__all__ = ["decode_csv"]

_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)
_TYPE_WORDS = {"float32": "float", "float64": "double", "int32": "int32", "int64": "int64"}


def _infer(inputs, attrs):
    records, defaults = inputs[0], inputs[1:]
    if records.dtype != dtypes.string:
        raise TypeError(f"DecodeCSV: records must be a string tensor, got {records.dtype.name}")
    if not defaults:
        raise ValueError("DecodeCSV: record_defaults must name at least one column")
    for i, d in enumerate(defaults):
        if d.shape.ndims is not None and d.shape.ndims > 1:
            raise ValueError(f"Shape must be at most rank 1 but is rank {d.shape.ndims} for 'DecodeCSV' "
                             f"(record_defaults[{i}] has shape {d.shape})")
        if d.shape.ndims == 1 and d.shape[0].value is not None and d.shape[0].value > 1:
            raise ValueError(f"Shape of a default must be a length-0 or length-1 vector, or a scalar; "
                             f"record_defaults[{i}] has shape {d.shape}")
    return [(records.shape, d.dtype) for d in defaults]


def _split_record(record, delim, quote, select):
    """The fields of one record (bytes), TF's `ExtractFields`; `select`: a set of kept columns or
    None. Raises InvalidArgumentError with TF1's words for misplaced quotes."""
    fields, n, i, col = [], len(record), 0, 0
    last = max(select) if select else None
    if not record:
        return fields
    while i < n:
        c = record[i]
        if c in (10, 13):  # TF skips a CR/LF between fields
            i += 1
            continue
        if quote and c == 34:
            i += 1
            field, closed = bytearray(), False
            while i < n:
                if record[i] == 34:
                    if i + 1 < n and record[i + 1] == 34:
                        field.append(34)
                        i += 2
                    elif i + 1 == n or record[i + 1] == delim:
                        closed, i = True, i + 2
                        break
                    else:
                        raise InvalidArgumentError(None, None, "Quote inside a string has to be escaped by another "
                                                   "quote")
                else:
                    field.append(record[i])
                    i += 1
            if not closed:
                raise InvalidArgumentError(None, None, "Quoted field has to end with quote followed by delim or end")
            field = bytes(field)
        else:
            j = i
            while j < n and record[j] != delim:
                if (quote and record[j] == 34) or record[j] in (10, 13):
                    raise InvalidArgumentError(None, None, "Unquoted fields cannot have quotes/CRLFs inside")
                j += 1
            field, i = record[i:j], j + 1
        if select is None or col in select:
            fields.append(field)
        col += 1
        if last is not None and col > last:
            return fields
    if record[-1] == delim and (select is None or col in select):
        fields.append(b"")  # a trailing delimiter ends an empty last field
    return fields


def _convert(field, dtype, default, column, record, na):
    """One field as a value of `dtype` (the default when missing), TF1's errors."""
    if field == b"" or (na and field == na):
        if default is None:
            raise InvalidArgumentError(None, None, f"Field {column} is required but missing in record {record}!")
        return default
    if dtype == dtypes.string:
        return field
    try:  # (Python's float and int take "1_000"; TF's strtod and strtol do not)
        v = None if b"_" in field else float(field) if dtype.is_floating else int(field)
    except ValueError:
        v = None
    if v is None or (dtype.is_integer and not np.iinfo(dtype.np_dtype).min <= v <= np.iinfo(dtype.np_dtype).max):
        raise InvalidArgumentError(None, None, f"Field {column} in record {record} is not a valid "
                                   f"{_TYPE_WORDS[dtype.name]}: {field.decode('utf-8', 'replace')}")
    return v


def _column_fast(col, dtype, default):
    """A column of fields (bytes) parsed by numpy, or None when a field needs the slow path."""
    if dtype == dtypes.string:
        out = np.empty(len(col), dtype=object)
        out[:] = col
        if default is not None:
            out[out == b""] = default
        return out if default is not None or b"" not in col else None
    arr = np.array(col, dtype=bytes)
    if any(b"_" in f for f in col):  # numpy's parsers take "1_000"; TF's error path
        return None
    empty = arr == b""
    if empty.any():
        if default is None:
            return None
        arr = np.where(empty, b"0", arr)
    try:
        with np.errstate(all="ignore"):
            values = arr.astype(np.float64 if dtype.is_floating else np.int64)
    except (ValueError, OverflowError):
        return None
    if dtype.is_integer and values.size and (values.min() < np.iinfo(dtype.np_dtype).min or
                                             values.max() > np.iinfo(dtype.np_dtype).max):
        return None
    values = values.astype(dtype.np_dtype)
    if empty.any():
        values[empty] = default
    return values


def _numbers_fast(text, count, delim, ncols, out_types):
    """All-numeric records (`count` of them, joined by "\\n" in `text`) parsed by pandas' C tokenizer (its float parser gives strtod's values),
    or None when anything needs the field-by-field path: whitespace (the slow path's float()
    takes it), a record of another field count, an empty or malformed field, a non-integral or
    out-of-range value for an integer column. Columns as the out_types' arrays. Integer columns
    come as text and are checked to be written as integers ("1.0", "1e3", "1_000": TF's error
    path), then converted. numpy's own text scanner (fromstring) took 2.5x pandas' time."""
    if b" " in text or b"\t" in text or \
            np.count_nonzero(np.frombuffer(text, np.uint8) == delim) != count * (ncols - 1):  # (SIMD: 8x bytes.count)
        return None
    import pandas as pd

    kinds = {c: (object if dt.is_integer else np.float64) for c, dt in enumerate(out_types)}
    try:
        table = pd.read_csv(io.BytesIO(text), header=None, names=list(range(ncols)), sep=chr(delim), dtype=kinds,
                            na_filter=False, quoting=csv.QUOTE_NONE, skip_blank_lines=False, engine="c",
                            index_col=False)
    except (ValueError, OverflowError, pd.errors.ParserError):
        return None
    if table.shape != (count, ncols):
        return None
    out = []
    for c, dt in enumerate(out_types):
        col = table[c].to_numpy()
        if dt.is_integer:
            if _NOT_INTEGER.search("".join(col)):
                return None
            try:
                col = col.astype(np.int64)
            except (ValueError, OverflowError):
                return None
            info = np.iinfo(dt.np_dtype)
            if col.size and (col.min() < info.min or col.max() > info.max):
                return None
        out.append(col.astype(dt.np_dtype))
    return out


_NOT_INTEGER = re.compile(r"[^0-9+\-]")


def decode_text(text, count, *, field_delim, use_quote_delim, na_value, select_cols, out_types):
    """The columns of `count` records joined by "\\n" in `text` (bytes), parsed at once when they
    take decode_records' first path (all-numeric records, no quotes, no missing fields: the same
    checks and parser, so the same values); None when any record needs another path, for the
    caller to decode the records themselves (decode_records, TF1's errors)."""
    delim = field_delim.encode() if isinstance(field_delim, str) else bytes(field_delim)
    if not count or len(delim) != 1 or select_cols or na_value or b"\r" in text or \
            (use_quote_delim and b'"' in text) or any(dt == dtypes.string for dt in out_types):
        return None
    return _numbers_fast(text, count, delim[0], len(out_types), out_types)


def decode_records(records, defaults, *, field_delim, use_quote_delim, na_value, select_cols, out_types, offset=0):
    """The columns of `records` (an object array of bytes): a tuple of arrays of its shape."""
    records = np.asarray(records, dtype=object)
    flat = records.reshape(-1)
    delim = field_delim.encode() if isinstance(field_delim, str) else bytes(field_delim)
    if len(delim) != 1:
        raise InvalidArgumentError(None, None, "field_delim should be only 1 char")
    delim = delim[0]
    na = na_value.encode() if isinstance(na_value, str) else bytes(na_value)
    select = set(select_cols) if select_cols else None
    defs = []
    for d, dt in zip(defaults, out_types):
        d = np.asarray(d).reshape(-1)
        defs.append(None if d.size == 0 else (d[0] if dt == dtypes.string else d[0].item()))
    ncols = len(out_types)
    try:  # one C pass over the records' bytes (every record bytes: the slow path reports others)
        joined = b"".join(flat)
    except TypeError:
        joined = None
    simple = select is None and not na and joined is not None and b"\r" not in joined and b"\n" not in joined \
        and not (use_quote_delim and b'"' in joined)
    if simple and flat.size and all(dt != dtypes.string for dt in out_types):
        numbers = _numbers_fast(b"\n".join(flat), flat.size, delim, ncols, out_types)
        if numbers is not None:
            return tuple(c.reshape(records.shape) for c in numbers)
    if simple:
        sep = bytes([delim])
        rows = [r.split(sep) if r else [] for r in flat]
        bad = next((k for k, r in enumerate(rows) if len(r) != ncols), None)
        if bad is None:
            columns = list(zip(*rows)) if rows else [()] * ncols
            out = [_column_fast(list(c), dt, d) for c, dt, d in zip(columns, out_types, defs)]
            if all(o is not None for o in out):
                return tuple(o.reshape(records.shape) for o in out)
    # the slow path: field by field, TF's errors naming the field and record
    out = [[] for _ in out_types]
    for k, r in enumerate(flat):
        fields = _split_record(bytes(r), delim, use_quote_delim, select)
        if len(fields) != ncols:
            raise InvalidArgumentError(None, None, f"Expect {ncols} fields but have {len(fields)} in record "
                                       f"{k + offset}")
        for c, (f, dt, d) in enumerate(zip(fields, out_types, defs)):
            out[c].append(_convert(f, dt, d, c, k + offset, na))
    result = []
    for values, dt in zip(out, out_types):
        arr = np.empty(len(values), dtype=object) if dt == dtypes.string else np.asarray(values, dt.np_dtype)
        if dt == dtypes.string:
            arr[:] = values
        result.append(arr.reshape(records.shape))
    return tuple(result)


def _eager(xp, records, *defaults, **attrs):
    return decode_records(records, defaults, **attrs)


def _chunk(defaults, attrs, block, block_info=None):
    """The task of one chunk of records (1-D): all columns, as a tuple."""
    offset = block_info[0]["array-location"][0][0] if block_info else 0
    return decode_records(block, defaults, offset=offset, **attrs)


def _pick(values, i):
    return values[i]


_whole = lower_whole(_eager)


def _lower(ctx, records, *defaults, **attrs):
    """Chunk by chunk along a 1-D records vector when the defaults are known now; else one task."""
    if getattr(records, "ndim", 0) != 1 or getattr(records, "numblocks", (1,))[0] < 2 or \
            any(hasattr(d, "dask") for d in defaults):
        return _whole(ctx, records, *defaults, **attrs)
    chunk = OpTask(functools.partial(_chunk, [np.asarray(d) for d in defaults], attrs), "DecodeCSV", ctx.op.name)
    parsed = records.map_blocks(chunk, dtype=object, meta=np.empty((0,), object), name=ctx.name("-csv"))
    return [parsed.map_blocks(_pick, j, dtype=t.dtype.np_dtype, meta=np.empty((0,), t.dtype.np_dtype),
                              name=ctx.name(f"-csv{j}")) for j, t in enumerate(ctx.op.outputs)]


register_op("DecodeCSV", _infer, eager=_eager, lower=_lower, num_outputs=None)
not_differentiable("DecodeCSV")


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """The columns of CSV `records` (TF1's `tf.decode_csv`, `tf.io.decode_csv`): a list of tensors
    of the records' shape, one per `record_defaults` entry, of its dtype (float32, float64, int32,
    int64 or string). A default is a value (a scalar or a 1-element list or tensor), or `[]` for a
    required column. `na_value`: a field meaning missing; `select_cols`: the column indices to
    keep (strictly increasing, one per default). TypeError/ValueError when the graph is built;
    InvalidArgumentError at run time for a bad record, in TF1's words ("Expect 3 fields but have 2
    in record 0", "Field 0 is required but missing in record 1!", "Field 1 in record 0 is not a
    valid float: x", "Quote inside a string has to be escaped by another quote")."""
    if select_cols is not None:
        select_cols = [int(c) for c in select_cols]
        if any(b <= a for a, b in zip(select_cols, select_cols[1:])):
            raise ValueError("select_cols is not strictly increasing.")
        if select_cols and select_cols[0] < 0:
            raise ValueError("select_cols contains negative values.")
        if len(select_cols) != len(record_defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    records = convert_to_tensor(records, dtype=None if hasattr(records, "dtype") else dtypes.string, name="records")
    defaults = []
    for d in record_defaults:
        t = convert_to_tensor(d) if hasattr(d, "dtype") or not isinstance(d, (list, tuple)) or d else \
            convert_to_tensor(np.zeros([0], np.float32))
        if t.dtype not in _TYPES:
            raise TypeError(f"Value passed to parameter 'record_defaults' has DataType {t.dtype.name} not in list of "
                            "allowed values: float32, float64, int32, int64, string")
        defaults.append(t)
    attrs = {"field_delim": str(field_delim), "use_quote_delim": bool(use_quote_delim), "na_value": str(na_value),
             "select_cols": list(select_cols or []), "out_types": [t.dtype for t in defaults]}
    outs = apply_op("DecodeCSV", [records] + defaults, attrs, name=name, default_name="DecodeCSV")
    return list(outs) if isinstance(outs, (list, tuple)) else [outs]
