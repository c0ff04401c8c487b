"""Slicing ops: strided slices (and `Tensor.__getitem__`) and `slice` (gather, one_hot and top_k
are `gather_ops`).

Slice bounds known when the graph is built give exact static shapes and build-time ValueErrors;
bounds that are data (a fed scalar, `x[i]`) are read inside the Dask graph, so one plan serves
every value, and an out-of-range index raises InvalidArgumentError when the plan runs.
"""

from __future__ import annotations

import builtins
import numbers

import array_api_compat.numpy as np_xp
import dask.array as da
import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.evaluate import namespace
from ..graph.graph import name_scope
from ..graph.ops import Tensor, constant_value
from ..graph.registry import def_bind, def_grad, register_op
from ..graph.shape import Dimension, TensorShape, unknown_shape
from .array_ops import partial_shape_value, shape, stack
from .common import apply_op, constant, convert_to_tensor, to_numpy
from .math_ops import cast

_py_slice = builtins.slice

__all__ = ["strided_slice", "slice"]

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
_DROP = "drop"  # output size of a shrunk dim: the dim is removed
_runtime_error = lambda msg: InvalidArgumentError(None, None, msg)
_is_data = lambda v: isinstance(v, da.Array)  # a value read when the plan runs


def _tensor(value, dtype=None, name="Const", preferred_dtype=None):
    """A tensor from a tensor or value (TF1 dtype rules). Builds 0-d Consts itself, because
    `common.constant` gives them shape (1,) (np.ascontiguousarray promotes 0-d arrays)."""
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element") or np.ndim(value):
        return convert_to_tensor(value, dtype=dtype, name=name, preferred_dtype=preferred_dtype)
    try:
        arr = np.array(to_numpy(value, dtype or preferred_dtype, what=name))
    except (TypeError, ValueError):
        if dtype is not None or preferred_dtype is None:
            raise
        arr = np.array(to_numpy(value, None, what=name))
    arr.setflags(write=False)
    return apply_op("Const", [], {"value": arr, "dtype": dtypes.as_dtype(arr.dtype)}, name=name)


def _ints(a):
    """A 1-D host array (numpy or cupy) as a list of Python ints."""
    return [int(v) for v in a.reshape(-1).tolist()]


# ---- strided slice: TF's sparse spec -> one numpy index item per output step --------------------


def _expand_spec(ndims, n, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask):
    """The spec's `n` entries against a rank-`ndims` input, as (kind, entry, input dim); kind:
    "full" (under `...` or after the last entry), "new" (newaxis; wins over shrink, as TF), "shrink"
    (an integer index) or "range". ValueError on two ellipses or more indexed dims than ndims."""
    bits = [1 << i for i in range(n)]
    n_ellipses = sum(1 for b in bits if ellipsis_mask & b)
    if n_ellipses > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    consumed = sum(1 for b in bits if not (ellipsis_mask & b) and not (new_axis_mask & b))
    if consumed > ndims:
        raise ValueError(f"Index out of range: the slice spec indexes {consumed} dims of a tensor "
                         f"of rank {ndims}")
    kinds = []
    for i, b in enumerate(bits):
        if ellipsis_mask & b:
            kinds += [("full", i)] * (ndims - consumed)
        else:
            kinds.append(("new" if new_axis_mask & b else "shrink" if shrink_axis_mask & b else "range", i))
    kinds += [("full", None)] * (0 if n_ellipses else ndims - consumed)
    dims = iter(range(ndims))
    return [(kind, i, None if kind == "new" else next(dims)) for kind, i in kinds]


def _entry_index(kind, i, dim, n, begin, end, strides, begin_mask, end_mask, error):
    """(numpy index item, output size or _DROP) of one entry; None where unknown (in `n`, the
    dim's size, and begin/end/strides). Python slices clamp and wrap bounds exactly as TF does.
    `error(msg)` makes the exception for an impossible spec."""
    if kind == "full":
        return _py_slice(None), n
    if kind == "new":
        return None, 1
    s = strides[i]
    if s == 0:
        raise error(f"strides[{i}] must be non-zero")
    if kind == "shrink":
        b = begin[i]
        if s is not None and s < 0:
            raise error("only stride 1 allowed on non-range indexing.")
        if b is None or n is None:
            return None, _DROP
        x = b + n if b < 0 else b
        if not 0 <= x < n:
            raise error(f"slice index {b} of dimension {dim} out of bounds.")
        return x, _DROP
    b = None if begin_mask >> i & 1 else begin[i]
    e = None if end_mask >> i & 1 else end[i]
    if s is None or (b is None and not begin_mask >> i & 1) or (e is None and not end_mask >> i & 1):
        return None, None
    item = _py_slice(b, e, s)
    if n is None:
        return item, None
    r = range(*item.indices(n))
    # explicit non-negative bounds: dask misreads a negative-step slice whose start lies before
    # the first element (x[-2::-1] of length 1 must be empty)
    return (_py_slice(r.start, r.stop if r.stop >= 0 else None, r.step) if len(r) else _py_slice(0, 0, 1)), len(r)


def _masks(attrs):
    return {k: int(attrs[k]) for k in _MASKS}


def _ss_infer(inputs, attrs):
    x, *bes = inputs
    if len({t.dtype for t in bes}) > 1 or bes[0].dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"StridedSlice: begin, end and strides must all be int32 or int64, got "
                        f"{[t.dtype.name for t in bes]}")
    vals = [partial_shape_value(t) for t in bes]
    if any(t.shape.ndims not in (None, 1) for t in bes) or len({len(v) for v in vals if v}) > 1:
        raise ValueError(f"StridedSlice: begin, end and strides must be 1-D of one length, got "
                         f"shapes {[str(t.shape) for t in bes]}")
    if x.shape.ndims is None or any(v is None for v in vals):
        return unknown_shape(), x.dtype
    m, shape = _masks(attrs), x.shape.as_list()
    try:
        sizes = [_entry_index(kind, i, d, None if d is None else shape[d], *vals, m["begin_mask"],
                              m["end_mask"], ValueError)[1]
                 for kind, i, d in _expand_spec(len(shape), len(vals[0]), **m)]
        out = [n for n in sizes if n is not _DROP]
    except ValueError as e:
        raise ValueError(f"strided_slice of {x.name!r} with shape {x.shape}: {e}") from None
    return TensorShape(out), x.dtype


def _ss_eager(xp, x, begin, end, strides, **attrs):
    m, spec = _masks(attrs), (_ints(begin), _ints(end), _ints(strides))
    idx = tuple(_entry_index(kind, i, d, None if d is None else int(x.shape[d]), *spec, m["begin_mask"],
                             m["end_mask"], _runtime_error)[0]
                for kind, i, d in _expand_spec(x.ndim, len(spec[0]), **m))
    return xp.asarray(x[idx])


def _spec_values(ctx, v, t):
    """A begin/end/strides input in a lowering: ints where known, 0-d dask arrays where data."""
    if not isinstance(v, da.Array):
        return _ints(np.asarray(v))
    known = partial_shape_value(t) or [None] * int(v.shape[0])
    return [k if k is not None else v[j] for j, k in enumerate(known)]


def _ss_lower(ctx, x, begin, end, strides, **attrs):
    x = ctx.as_dask(x)
    masks = _masks(attrs)
    bm, em = masks["begin_mask"], masks["end_mask"]
    b, e, s = (_spec_values(ctx, v, t) for v, t in zip((begin, end, strides), ctx.op.inputs[1:]))
    error = lambda msg: InvalidArgumentError(None, ctx.op, f"StridedSlice op {ctx.op.name!r}: {msg}")
    sval = [None if _is_data(v) else v for v in s]  # data strides are checked in the graph
    if 0 in sval:
        raise error(f"strides[{sval.index(0)}] must be non-zero")
    static, data, axis = [], [], 0
    for kind, i, d in _expand_spec(x.ndim, len(b), **masks):
        n = None if d is None else x.shape[d]
        if kind in ("shrink", "range") and n != n:
            n = ctx.known_shape(x)[d]  # raises: a slice of a data-dependent size
        bit = 0 if i is None else 1 << i
        if kind == "shrink" and _is_data(b[i]) or kind == "range" and (
                _is_data(s[i]) or _is_data(b[i]) and not bm & bit or _is_data(e[i]) and not em & bit):
            static.append(_py_slice(None))  # read in the graph below
            data.append((axis, kind, i, d, n))
            axis += 1
            continue
        item, size = _entry_index(kind, i, d, n, b, e, sval, bm, em, error)
        static.append(item)
        axis += size is not _DROP
    out = x[tuple(static)]
    if data:  # dask's int-array indexing loses zero-size chunks of other axes (a dask bug)
        out = out.rechunk(tuple(tuple(c for c in cs if c) or (0,) for cs in out.chunks))
    # Data indices first (gathers of known length 1), as dask cannot index next to unknown sizes;
    # then data ranges, whose lengths are unknown until the plan runs.
    drop = [axis for axis, kind, *_ in data if kind == "shrink"]
    for axis, kind, i, d, n in data:
        if kind == "shrink":
            idx = da.asarray(b[i]).map_blocks(_checked_shrink, n=n, dim=d, dtype=np.int64).reshape(1)
            out = out[(_py_slice(None),) * axis + (idx,)]
    out = out[tuple(0 if a in drop else _py_slice(None) for a in range(out.ndim))] if drop else out
    ranges = [(axis - sum(a < axis for a in drop), i, n) for axis, kind, i, d, n in data if kind == "range"]
    vals = [v for _, i, _ in ranges for v in (b[i], e[i], s[i], bm >> i & 1, em >> i & 1)]
    if len(ranges) == 1:  # a gather by positions: chunks of `out` stay as they are
        (axis, i, n), = ranges
        idx = da.map_blocks(_range_positions, *vals, n=n, new_axis=0, chunks=((np.nan,),), dtype=np.int64)
        out = out[(_py_slice(None),) * axis + (idx,)]
    elif ranges:  # several: each task slices whole rows of those axes
        axes = [a for a, _, _ in ranges]
        out = out.rechunk(dict.fromkeys(axes, -1))
        chunks = tuple((np.nan,) if a in axes else c for a, c in enumerate(out.chunks))
        out = out.map_blocks(_slice_block, *vals, axes=axes, chunks=chunks, dtype=out.dtype)
    return out


def _checked_shrink(b, n, dim):
    v = int(b)
    if not -n <= v < n:
        raise _runtime_error(f"slice index {v} of dimension {dim} out of bounds.")
    return namespace((b,)).asarray(v % n, dtype=np.int64)


def _run_slice(b, e, s, b_masked, e_masked):
    """A range entry as a Python slice, from values read when the plan runs."""
    if int(s) == 0:
        raise _runtime_error("strides must be non-zero")
    return _py_slice(None if b_masked else int(b), None if e_masked else int(e), int(s))


def _range_positions(*vals, n):
    xp = namespace([v for v in vals if hasattr(v, "shape")])
    return xp.arange(*_run_slice(*vals).indices(n), dtype=xp.int64)


def _slice_block(block, *vals, axes):
    idx = [_py_slice(None)] * block.ndim
    for j, a in enumerate(axes):
        idx[a] = _run_slice(*vals[5 * j:5 * j + 5])
    return block[tuple(idx)]


def _ss_fold(op):
    """`shape(x)[...]` where the picked dims of a partially known shape are known."""
    src, spec = op.inputs[0], [constant_value(t) for t in op.inputs[1:]]
    if src.op.type != "Shape" or src.op.inputs[0].shape.ndims is None or any(v is None for v in spec):
        return None
    dims = np.array([-1 if d is None else d for d in src.op.inputs[0].shape.as_list()], dtype=src.dtype.np_dtype)
    try:
        out = np.asarray(_ss_eager(np_xp, dims, *spec, **op.attrs))
    except Exception:  # noqa: BLE001 - an impossible spec folds to nothing; running it raises
        return None
    return None if np.any(out < 0) else out


register_op("StridedSlice", _ss_infer, eager=_ss_eager, lower=_ss_lower, fold=_ss_fold)


@def_grad("StridedSlice")
def _strided_slice_grad(op, g):
    """Scatters g into zeros of x's shape (the StridedSliceGrad op of scatter_ops, by its type)."""
    x = op.inputs[0]
    in_shape = x.shape.as_list() if x.shape.is_fully_defined() else shape(x)
    in_shape = convert_to_tensor(in_shape, dtype=dtypes.int32) if isinstance(in_shape, list) else in_shape
    attrs = {k: op.get_attr(k) for k in _MASKS}
    dx = apply_op("StridedSliceGrad", [in_shape, *op.inputs[1:], g], attrs)
    return [dx, None, None, None]


def _index_dtype(values):
    """int64 if an entry (int or scalar tensor) needs it, else int32."""
    big = [v.dtype == dtypes.int64 if isinstance(v, Tensor) else not -2**31 <= v < 2**31 for v in values]
    return dtypes.int64 if any(big) else dtypes.int32


def _index_tensors(values, name, dt=None):
    """begin/end/strides entries (ints or scalar int tensors) as one 1-D tensor of dtype `dt`."""
    dt = dt or _index_dtype(values)
    if not any(isinstance(v, Tensor) for v in values):
        return constant(np.array(values, dtype=dt.np_dtype), name=name)
    return stack([(v if v.dtype == dt else cast(v, dt)) if isinstance(v, Tensor) else _tensor(v, dt)
                  for v in values], name=name)


def _as_spec(value, what):
    """`value` as a 1-D int tensor, or a list of ints / scalar tensors (stacked)."""
    if isinstance(value, (list, tuple)):
        return _index_tensors([_check_index(v) for v in value], what)
    return convert_to_tensor(value, preferred_dtype=dtypes.int32)


# ---- Slice: TF1's tf.slice(input, begin, size), size -1 = to the end --------------------------
def _slice_bounds(shape, begin, size, error):
    """Per-axis (start, stop) of a Slice on an array of `shape` (ints), as TF checks them."""
    begin = [int(b) for b in np.asarray(begin).reshape(-1)]
    size = [int(z) for z in np.asarray(size).reshape(-1)]
    if len(begin) != len(shape) or len(size) != len(shape):
        raise error(f"Expected begin and size arguments to be 1-D tensors of size {len(shape)}, but got "
                    f"shapes [{len(begin)}] and [{len(size)}] instead.")
    out = []
    for d, (n, b, z) in enumerate(zip(shape, begin, size)):
        z = n - b if z == -1 else z
        if not (0 <= b <= n and 0 <= z and b + z <= n):
            raise error(f"Expected begin[{d}] in [0, {n}] and size[{d}] in [0, {n - b}], but got {b} and "
                        f"{size[d]}")
        out.append((b, b + z))
    return out


def _slice_infer(inputs, attrs):
    x, begin, size = inputs
    for t, what in ((begin, "begin"), (size, "size")):
        if not t.dtype.is_integer:
            raise TypeError(f"Slice: {what} must be int32 or int64, got {t.dtype.name}")
        if t.shape.ndims not in (None, 1):
            raise ValueError(f"Slice: {what} must be 1-D, got shape {t.shape}")
    b, z = partial_shape_value(begin), partial_shape_value(size)
    rank = x.shape.ndims
    for v in (b, z):
        if v is not None and rank is None:
            rank = len(v)
        elif v is not None and len(v) != rank:
            raise ValueError(f"Slice: begin and size must have {rank} elements, got {len(v)}")
    if rank is None:
        return unknown_shape(), x.dtype
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * rank
    out = []
    for d in range(rank):
        bd = None if b is None else b[d]
        zd = None if z is None else z[d]
        if zd is not None and zd != -1:
            out.append(zd)
        elif zd == -1 and bd is not None and dims[d] is not None:
            out.append(dims[d] - bd)
        else:
            out.append(None)
    return TensorShape(out), x.dtype


def _slice_error(op):
    return lambda msg: InvalidArgumentError(None, op, f"Slice op {getattr(op, 'name', '?')!r}: {msg}")


def _slice_eager(xp, x, begin, size):
    bounds = _slice_bounds(tuple(x.shape), begin, size, _slice_error(None))
    return x[tuple(_py_slice(a, b) for a, b in bounds)]


def _slice_lower(ctx, x, begin, size):
    x = ctx.as_dask(x)
    b, z = ctx.host_values((begin, "Slice begin"), (size, "Slice size"))
    bounds = _slice_bounds(ctx.known_shape(x), b, z, _slice_error(ctx.op))
    return x[tuple(_py_slice(a, e) for a, e in bounds)]


register_op("Slice", _slice_infer, eager=_slice_eager, lower=_slice_lower)


@def_bind("Slice")
def _slice_bind(op, known):
    x = op.inputs[0]
    if set(known) != {1, 2} or not x.shape.is_fully_defined():
        return None
    index = tuple(_py_slice(a, b) for a, b in _slice_bounds(tuple(x.shape.as_list()), known[1], known[2],
                                                            _slice_error(op)))
    return lambda xp, x: x[index]


def _slice_grad(op, g):
    """The gradient pads g back to x's shape: `begin` before, the rest after (TF1's _SliceGrad);
    ops are made by their registered types."""
    x, begin, _ = op.inputs
    out_type = {"out_type": begin.dtype}
    after = apply_op("Sub", [apply_op("Sub", [apply_op("Shape", [x], out_type),
                                               apply_op("Shape", [op.outputs[0]], out_type)]), begin])
    pads = apply_op("Pack", [begin, after], {"axis": 1})
    return [apply_op("Pad", [g, pads]), None, None]


def_grad("Slice")(_slice_grad)


def slice(input_, begin, size, name=None):  # noqa: A001 - TF1's public name
    """`size[i]` elements of `input_` from `begin[i]` along each axis i (size -1: to the end)."""
    x = convert_to_tensor(input_)
    begin = convert_to_tensor(begin, dtype=dtypes.int32) if not isinstance(begin, Tensor) else begin
    size = convert_to_tensor(size, dtype=begin.dtype) if not isinstance(size, Tensor) else size
    return apply_op("Slice", [x, begin, size], name=name, default_name="Slice")


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """TF1's strided slice: `input_[begin:end:strides]` per dim, with the masks' TF1 meanings.

    begin/end/strides: 1-D int32/int64 (lists may mix ints and scalar tensors); strides default to
    1. Bit i of begin_mask/end_mask ignores begin[i]/end[i]; ellipsis_mask marks `...`,
    new_axis_mask a new dim of size 1, shrink_axis_mask an integer index (dim removed). ValueError
    for a spec known to be impossible when building (index out of range, zero stride, two
    ellipses); InvalidArgumentError for one found at run time. `var` is unused."""
    x, b, e = convert_to_tensor(input_), _as_spec(begin, "begin"), _as_spec(end, "end")
    if strides is None:
        if partial_shape_value(b) is None:
            raise ValueError("strided_slice: strides are needed when begin's length is unknown")
        strides = np.ones(len(partial_shape_value(b)), b.dtype.np_dtype)
    s = _as_spec(strides, "strides")
    attrs = dict(zip(_MASKS, map(int, (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask))))
    return apply_op("StridedSlice", [x, b, e, s], attrs, name=name, default_name="StridedSlice")


def _check_index(v):
    """A valid index value: an int or a scalar int32/int64 tensor; TypeError otherwise."""
    if isinstance(v, Dimension):
        v = v.value
    if isinstance(v, numbers.Integral) or isinstance(v, np.ndarray) and v.shape == () and v.dtype.kind in "iu":
        return int(v)
    if hasattr(v, "_as_graph_element") and not isinstance(v, Tensor):
        v = v._as_graph_element()
    if isinstance(v, Tensor) and v.dtype in (dtypes.int32, dtypes.int64) and v.shape.ndims in (None, 0):
        return v
    raise TypeError("Only integers, slices (`:`), ellipsis (`...`), dflow.newaxis (`None`) and scalar "
                    f"int32/int64 tensors are valid indices, got {v!r}")


def _getitem(tensor, slice_spec):
    """`tensor[...]` as TF1: ints, slices (steps may be negative), `...`, None (newaxis) and scalar
    int tensors; a list is a spec, as a tuple. One `StridedSlice` op named "strided_slice"."""
    spec = slice_spec if isinstance(slice_spec, (list, tuple)) else [slice_spec]
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    with name_scope(None, "strided_slice", [tensor]) as scope:
        for i, s in enumerate(spec):
            bit = 1 << i
            if isinstance(s, _py_slice):
                for val, out, mask in ((s.start, begin, "begin_mask"), (s.stop, end, "end_mask")):
                    if val is None or (isinstance(val, Dimension) and val.value is None):
                        out.append(0)
                        masks[mask] |= bit
                    else:
                        out.append(_check_index(val))
                strides.append(1 if s.step is None else _check_index(s.step))
            elif s is Ellipsis or s is None:
                begin, end, strides = begin + [0], end + [0], strides + [1]
                masks["ellipsis_mask" if s is Ellipsis else "new_axis_mask"] |= bit
            else:
                idx = _check_index(s)
                # end is unused for a shrunk dim; TF writes idx + 1, an extra op for a tensor
                begin, end, strides = begin + [idx], end + [idx + 1 if isinstance(idx, int) else idx], strides + [1]
                masks["shrink_axis_mask"] |= bit
        dt = _index_dtype(begin + end + strides)  # one dtype for all three, as the op needs
        parts = [_index_tensors(v, "stack", dt) for v in (begin, end, strides)]
        return apply_op("StridedSlice", [tensor, *parts], masks, name=scope)


Tensor._override_operator("__getitem__", _getitem)
