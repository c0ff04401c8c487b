"""Array manipulation ops: filled arrays (zeros, ones, fill, range, linspace), transpose, expand_dims,
squeeze, concat, unstack, split, tile, pad, reverse and add_n.

Shape-like arguments (shapes, axes, perms, multiples, paddings, split sizes) are int tensors: Python
values become constants, tensors (e.g. `dflow.shape(x)`) pass through. Static shapes are inferred
from their build-time values where known (`constant_value`, `partial_shape_value`); the lowerings
need them on the host when the plan is compiled (`ctx.host_value`), never data computed in the run.
Filled arrays are built lazily chunk by chunk (`da.full`): a huge `zeros` costs nothing until used.
"""

from __future__ import annotations

import builtins
import functools
import math

import numpy as np

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import name_scope
from ..graph.ops import Tensor, constant_value
from ..graph.registry import register_op
from ..graph.shape import Dimension, TensorShape, unknown_shape
from .array_ops import identity, partial_shape_value, stack
from .common import apply_op, convert_to_tensor, graph_of, normalize_axis, to_numpy
from .math_ops import cast

__all__ = ["zeros", "ones", "zeros_like", "ones_like", "fill", "range", "linspace", "lin_space",
           "transpose", "expand_dims", "squeeze", "concat", "unstack", "split", "tile", "pad",
           "reverse", "reverse_v2", "add_n"]

_pyrange = builtins.range  # this module defines TF1's `range`
_HOST_MAX_ELEMENTS = 1 << 16  # the compiler's limit for values it folds on the host

# ---- shared helpers ----------------------------------------------------------------------------


def _is_tensor(v):
    return isinstance(v, Tensor) or hasattr(v, "_as_graph_element")


def _has_tensor(v):
    return any(_is_tensor(e) or (isinstance(e, (list, tuple)) and _has_tensor(e)) for e in v)


def _plain(v):
    """Dimensions in (nested) lists as ints, as TF1 accepts `[x.shape[0], 3]`."""
    if isinstance(v, Dimension):
        return v.value
    if isinstance(v, TensorShape):
        return None if v.dims is None else [d.value for d in v.dims]
    return [_plain(e) for e in v] if isinstance(v, (list, tuple)) else v


def _tensor(value, dtype=None, name=None):
    """`value` as a tensor; in a list mixing numbers and tensors, the numbers take the tensors' dtype
    (so `[size(x), 2]` stacks whatever the int type of `size(x)`)."""
    if isinstance(value, (list, tuple)) and not _is_tensor(value) and _has_tensor(value):
        if dtype is None:
            dtype = next(convert_to_tensor(e).dtype for e in value if _is_tensor(e))
        return stack([_tensor(e, dtype) for e in value], name=name or "stack")
    return convert_to_tensor(value, dtype=dtype, name=name)


def _int_input(value, what, op_type):
    """A shape-like argument as an int tensor (int32 unless values need int64); TypeError if not ints."""
    value = _plain(value)
    if not _is_tensor(value) and not (isinstance(value, (list, tuple)) and _has_tensor(value)):
        arr = np.asarray(value)
        if arr.dtype == object or (arr.size and arr.dtype.kind not in "iuf"):
            raise TypeError(f"{op_type}: {what} must be integers, got {value!r}")
        big = arr.size and arr.dtype.kind in "iu" and (arr.min() < -(2**31) or arr.max() >= 2**31)
        value = value if arr.size else arr.astype(np.int32)
        return _tensor(value, dtypes.int64 if big else dtypes.int32, name=what)
    t = _tensor(value, name=what)
    if not t.dtype.is_integer:
        raise TypeError(f"{op_type}: {what} must be an integer tensor, got {t.dtype.name} ({t.name!r})")
    return t


def _ints(v):
    """A host value (numpy or cupy array, or Python) as a flat list of Python ints."""
    v = v.tolist() if hasattr(v, "tolist") else v
    return np.asarray(v, dtype=np.int64).reshape(-1).tolist()


def _partial_shape(t):
    """A 1-D shape tensor's values where known when building: `shape(x)` gives x's static dims."""
    if t.op.type == "Shape" and t.op.inputs[0].shape.ndims is not None:
        return t.op.inputs[0].shape.as_list()
    return partial_shape_value(t)


def _static_scalar(t):
    v = constant_value(t)
    return None if v is None or np.size(v) != 1 else np.asarray(v).reshape(-1)[0].item()


def _dims(shape):
    return None if shape.ndims is None else shape.as_list()


def _check_rank(t, rank, op_type, what):
    if t.shape.ndims is not None and t.shape.ndims != rank:
        raise ValueError(f"{op_type}: {what} must be rank {rank} but is rank {t.shape.ndims} "
                         f"(shape {t.shape}, {t.name!r})")


def _outputs(arrays):
    # A single-output op's kernel returns the bare array (the eager plan stores it as is).
    return arrays[0] if len(arrays) == 1 else tuple(arrays)


def _on_host(ctx, n, *inputs):
    """Whether a lowering of host `inputs` returns a host array (n elements, small): values such as
    `range(rank(x))` then stay known on the host for the shape arguments of later ops."""
    return n <= _HOST_MAX_ELEMENTS and not any(isinstance(v, ctx.da.Array) for v in inputs)


def _create_multi(op_type, inputs, attrs, name):
    """Creates a multi-output op; always returns the list of its outputs (even of one)."""
    return graph_of(inputs).create_op(op_type, inputs, attrs, name=name).outputs


# ---- fill, zeros, ones ---------------------------------------------------------------------------


def _fill_infer(inputs, attrs):
    dims, value = inputs
    _check_rank(dims, 1, "Fill", "dims")
    _check_rank(value, 0, "Fill", "value")
    shape = _partial_shape(dims)
    if shape is not None and any(d is not None and d < 0 for d in shape):
        raise ValueError(f"Fill: dimensions must be >= 0, got {shape}")
    return (unknown_shape() if shape is None else TensorShape(shape)), value.dtype


def _fill_lower(ctx, dims, value):
    shape = tuple(_ints(ctx.host_value(dims, "Fill dims")))
    if any(d < 0 for d in shape):
        raise ValueError(f"Fill: dimensions must be >= 0, got {list(shape)}")
    if _on_host(ctx, math.prod(shape), value):
        return np.full(shape, value, dtype=value.dtype)
    chunks = ctx.default_chunks(shape, value.dtype)
    if isinstance(value, ctx.da.Array):  # a value computed in this run
        return ctx.da.broadcast_to(value, shape, chunks=chunks)
    value = np.asarray(value)
    return ctx.da.full(shape, value[()], dtype=value.dtype, chunks=chunks)


register_op("Fill", _fill_infer, lower=_fill_lower,
            eager=lambda xp, dims, value: xp.full(tuple(_ints(dims)), value, dtype=value.dtype))


def fill(dims, value, name=None):
    """A tensor of shape `dims` (1-D ints or int tensor) filled with scalar `value`, of its dtype.

    ValueError for negative dims or a non-scalar value.
    """
    with name_scope(name, "Fill", [dims, value]) as scope:
        dims = _int_input(dims, "dims", "Fill")
        return apply_op("Fill", [dims, _tensor(value, name="value")], name=scope)


def _filled(shape, dtype, fill_value, name, default_name):
    dtype = as_dtype(dtype)
    with name_scope(name, default_name, [shape]) as scope:
        dims = _int_input(shape, "shape", default_name)
        if dims.shape.ndims == 0:  # `zeros(3)` means `zeros([3])`, as TF1
            dims = stack([dims])
        value = _tensor(np.full((), fill_value, dtype=dtype.np_dtype), name="value")
        return apply_op("Fill", [dims, value], name=scope)


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of `shape` (ints, TensorShape or int tensor) and `dtype`, all 0 (op `Fill`)."""
    return _filled(shape, dtype, 0, name, "zeros")


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of `shape` (ints, TensorShape or int tensor) and `dtype`, all 1 (op `Fill`)."""
    return _filled(shape, dtype, 1, name, "ones")


def _register_like(op_type, fill_value):
    def fold(op):
        s = op.inputs[0].shape
        if s.is_fully_defined() and s.num_elements() <= 1 << 12:
            return np.full(s.as_list(), fill_value, dtype=op.get_attr("dtype").np_dtype)
        return None

    # From the input's chunks, not its data: the result does not wait for `x` to be computed.
    register_op(op_type, lambda inputs, attrs: (inputs[0].shape, attrs["dtype"]), fold=fold,
                eager=lambda xp, x, dtype: xp.full(x.shape, fill_value, dtype=dtype.np_dtype),
                lower=lambda ctx, x, dtype: ctx.da.full_like(ctx.as_dask(x), fill_value, dtype=dtype.np_dtype))


_register_like("ZerosLike", 0)
_register_like("OnesLike", 1)


def _like(op_type, tensor, dtype, name, default_name):
    with name_scope(name, default_name, [tensor]) as scope:
        tensor = _tensor(tensor, name="tensor")
        dtype = tensor.dtype if dtype is None else as_dtype(dtype)
        return apply_op(op_type, [tensor], {"dtype": dtype}, name=scope)


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """Zeros with the shape (and chunks) of `tensor`, of `dtype` or `tensor`'s dtype."""
    return _like("ZerosLike", tensor, dtype, name, "zeros_like")


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """Ones with the shape (and chunks) of `tensor`, of `dtype` or `tensor`'s dtype."""
    return _like("OnesLike", tensor, dtype, name, "ones_like")


# ---- range, linspace -----------------------------------------------------------------------------

_RANGE_DTYPES = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]


def _range_spec(start, limit, delta, dtype):
    """(Python start, limit, delta, length) as numpy's arange; ValueError as TF's Range."""
    conv = int if dtype.is_integer else float
    start, limit, delta = conv(start), conv(limit), conv(delta)
    if delta == 0:
        raise ValueError("Range: requires delta != 0")
    if (delta > 0 and start > limit) or (delta < 0 and start < limit):
        raise ValueError(f"Range: requires start {'<=' if delta > 0 else '>='} limit when delta "
                         f"{'>' if delta > 0 else '<'} 0: {start}/{limit}")
    n = len(_pyrange(start, limit, delta)) if dtype.is_integer else math.ceil((limit - start) / delta)
    return start, limit, delta, max(n, 0)


def _range_infer(inputs, attrs):
    for t, what in zip(inputs, ("start", "limit", "delta")):
        _check_rank(t, 0, "Range", what)
    dtype = inputs[0].dtype
    if dtype not in _RANGE_DTYPES or any(t.dtype != dtype for t in inputs):
        raise TypeError(f"Range: start, limit and delta must have one dtype of int32, int64, float32, "
                        f"float64; got {[t.dtype.name for t in inputs]}")
    vals = [_static_scalar(t) for t in inputs]
    n = None if None in vals else _range_spec(*vals, dtype)[3]
    return TensorShape([n]), dtype


def _range_eager(xp, start, limit, delta):
    dtype = as_dtype(start.dtype)
    return xp.arange(*_range_spec(start, limit, delta, dtype)[:3], dtype=dtype.np_dtype)


def _range_lower(ctx, start, limit, delta):
    dtype = as_dtype(start.dtype)
    vals = [ctx.host_value(v, "Range " + w) for v, w in zip((start, limit, delta), ("start", "limit", "delta"))]
    s, lim, d, n = _range_spec(*vals, dtype)
    if _on_host(ctx, n):
        return np.arange(s, lim, d, dtype=dtype.np_dtype)
    return ctx.da.arange(s, lim, d, dtype=dtype.np_dtype, chunks=ctx.default_chunks((n,), dtype.np_dtype))


register_op("Range", _range_infer, eager=_range_eager, lower=_range_lower)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TF1 public name
    """The 1-D sequence start, start+delta, ... before limit; `range(n)` is 0..n-1.

    dtype: `dtype` if given (tensors are cast), else the widest argument's (int32 < int64 <
    float32 < float64).
    ValueError when delta is 0 or points away from limit.
    """
    if limit is None:
        start, limit = 0, start
    names = ("start", "limit", "delta")
    with name_scope(name, "Range", [start, limit, delta]) as scope:
        args = [_tensor(v, name=w) if _is_tensor(v) else v for v, w in zip((start, limit, delta), names)]
        if dtype is None:
            kinds = [a.dtype if _is_tensor(a) else as_dtype(to_numpy(a).dtype) for a in args]
            if any(k not in _RANGE_DTYPES for k in kinds):
                raise TypeError(f"range: arguments must be int32, int64, float32 or float64, got "
                                f"{[k.name for k in kinds]}")
            dtype = max(kinds, key=_RANGE_DTYPES.index)
        dtype = as_dtype(dtype)
        args = [(cast(a, dtype) if a.dtype != dtype else a) if _is_tensor(a) else _tensor(a, dtype, name=w)
                for a, w in zip(args, names)]
        return apply_op("Range", args, name=scope)


def _linspace_infer(inputs, attrs):
    start, stop, num = inputs
    for t, what in zip(inputs, ("start", "stop", "num")):
        _check_rank(t, 0, "LinSpace", what)
    if not start.dtype.is_floating or stop.dtype != start.dtype:
        raise TypeError(f"LinSpace: start and stop must be floats of one dtype, got {start.dtype.name} "
                        f"and {stop.dtype.name}")
    if not num.dtype.is_integer:
        raise TypeError(f"LinSpace: num must be an integer, got {num.dtype.name}")
    n = _static_scalar(num)
    if n is not None and n <= 0:
        raise ValueError(f"LinSpace: requires num > 0, got {n}")
    return TensorShape([n]), start.dtype


def _linspace_num(num):
    n = int(num)
    if n <= 0:
        raise ValueError(f"LinSpace: requires num > 0, got {n}")
    return n


def _linspace_lower(ctx, start, stop, num):
    n = _linspace_num(ctx.host_value(num, "LinSpace num"))
    dt = start.dtype
    if _on_host(ctx, n, start, stop):
        return np.linspace(float(start), float(stop), n, dtype=dt)
    chunks = ctx.default_chunks((n,), dt)
    if isinstance(start, ctx.da.Array) or isinstance(stop, ctx.da.Array):  # endpoints computed in the run
        step = (stop - start) / max(n - 1, 1)
        return (start + step * ctx.da.arange(n, chunks=chunks, dtype=dt)).astype(dt)
    return ctx.da.linspace(float(start), float(stop), n, chunks=chunks, dtype=dt)


register_op("LinSpace", _linspace_infer, lower=_linspace_lower,
            eager=lambda xp, start, stop, num: xp.linspace(float(start), float(stop), _linspace_num(num),
                                                           dtype=start.dtype))


def linspace(start, stop, num, name=None):
    """`num` evenly spaced values from `start` to `stop` inclusive, of start's float dtype (Python
    numbers: float32, or the other endpoint's dtype). ValueError for num <= 0."""
    with name_scope(name, "LinSpace", [start, stop, num]) as scope:
        dt = next((v.dtype for v in (start, stop) if _is_tensor(v)), dtypes.float32)
        start, stop = [_tensor(float(v) if not _is_tensor(v) else v, dt, name=w)
                       for v, w in ((start, "start"), (stop, "stop"))]
        return apply_op("LinSpace", [start, stop, _int_input(num, "num", "LinSpace")], name=scope)


lin_space = linspace

# ---- transpose, expand_dims, squeeze ---------------------------------------------------------------


def _norm_perm(perm, rank, x_shape):
    """`perm` (ints or None) with negative entries wrapped; ValueError unless a permutation of rank."""
    n = len(perm)
    if rank is not None and n != rank:
        raise ValueError(f"Transpose: perm {perm} has {n} entries but the input shape {x_shape} has rank "
                         f"{rank}")
    if any(p is not None and not -n <= p < n for p in perm):
        raise ValueError(f"Transpose: perm {perm} has entries out of range for rank {n}")
    out = [None if p is None else p % n for p in perm]
    known = [p for p in out if p is not None]
    if len(set(known)) != len(known):
        raise ValueError(f"Transpose: perm {perm} is not a permutation of 0..{n - 1}")
    return out


def _transpose_infer(inputs, attrs):
    x = inputs[0]
    dims = _dims(x.shape)
    if len(inputs) == 1:  # no perm and unknown rank: reverse the dims
        return unknown_shape(), x.dtype
    _check_rank(inputs[1], 1, "Transpose", "perm")
    perm = partial_shape_value(inputs[1])
    if perm is None:
        return (unknown_shape() if dims is None else TensorShape([None] * len(dims))), x.dtype
    perm = _norm_perm(perm, None if dims is None else len(dims), x.shape)
    return TensorShape([None if p is None or dims is None else dims[p] for p in perm]), x.dtype


def _perm_of(x, perm):
    if perm is None:
        return tuple(_pyrange(x.ndim - 1, -1, -1))
    return tuple(_norm_perm(_ints(perm), x.ndim, x.shape))


def _transpose_eager(xp, x, perm=None, conjugate=False):
    y = xp.permute_dims(x, _perm_of(x, perm))
    return xp.conj(y) if conjugate else y


def _transpose_lower(ctx, x, perm=None, conjugate=False):
    x = ctx.as_dask(x)
    y = x.transpose(_perm_of(x, None if perm is None else ctx.host_value(perm, "Transpose perm")))
    return y.conj() if conjugate else y


register_op("Transpose", _transpose_infer, eager=_transpose_eager, lower=_transpose_lower)
register_op("ConjugateTranspose", _transpose_infer, eager=functools.partial(_transpose_eager, conjugate=True),
            lower=functools.partial(_transpose_lower, conjugate=True))


def transpose(a, perm=None, name="transpose", conjugate=False):
    """`a` with dims permuted: output dim i is input dim perm[i]; no perm reverses the dims.

    `conjugate=True` also conjugates complex values. ValueError if perm's length is not a's rank
    or perm is not a permutation.
    """
    with name_scope(name, "transpose", [a]) as scope:
        a = _tensor(a, name="a")
        op_type = "ConjugateTranspose" if conjugate and a.dtype.is_complex else "Transpose"
        if perm is None and a.shape.ndims is not None:
            perm = list(_pyrange(a.shape.ndims - 1, -1, -1))
        inputs = [a] if perm is None else [a, _int_input(perm, "perm", "Transpose")]
        return apply_op(op_type, inputs, name=scope)


def _expand_dims_infer(inputs, attrs):
    x, axis = inputs
    if axis.shape.num_elements() not in (None, 1):
        raise ValueError(f"ExpandDims: axis must be a scalar, got shape {axis.shape}")
    a, dims = _static_scalar(axis), _dims(x.shape)
    if dims is None:
        return unknown_shape(), x.dtype
    if a is None:
        return TensorShape([None] * (len(dims) + 1)), x.dtype
    a = _expand_axis(a, len(dims), x.shape)
    return TensorShape(dims[:a] + [1] + dims[a:]), x.dtype


def _expand_axis(a, ndim, shape):
    if not -ndim - 1 <= a <= ndim:
        raise ValueError(f"ExpandDims: axis {a} not in the interval [{-ndim - 1}, {ndim}] for input shape "
                         f"{shape}")
    return a % (ndim + 1)


register_op("ExpandDims", _expand_dims_infer,
            eager=lambda xp, x, axis: xp.expand_dims(x, axis=_expand_axis(_ints(axis)[0], x.ndim, x.shape)),
            lower=lambda ctx, x, axis: ctx.da.expand_dims(ctx.as_dask(x), _expand_axis(
                _ints(ctx.host_value(axis, "ExpandDims axis"))[0], x.ndim, x.shape)))


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002 - TF1 signature
    """`input` with a dim of size 1 inserted at `axis`, in [-rank-1, rank] (ValueError otherwise)."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    with name_scope(name, "ExpandDims", [input]) as scope:
        input = _tensor(input, name="input")
        return apply_op("ExpandDims", [input, _int_input(axis, "dim", "ExpandDims")], name=scope)


def _squeeze_axes(dims, squeeze_dims, shape):
    """The dims to drop (all known 1s if none listed); ValueError for a listed dim known != 1."""
    r = len(dims)
    if not squeeze_dims:
        return [i for i, d in enumerate(dims) if d == 1]
    for i, a in enumerate(squeeze_dims):
        if not -r <= a < r:
            raise ValueError(f"Squeeze: squeeze_dims[{i}] = {a} not in [{-r}, {r}) for input shape {shape}")
        if dims[a] is not None and dims[a] != 1:
            raise ValueError(f"Squeeze: can not squeeze dim[{a % r}], expected a dimension of 1, got "
                             f"{dims[a]} (input shape {shape})")
    return sorted({a % r for a in squeeze_dims})


def _squeeze_infer(inputs, attrs):
    (x,) = inputs
    dims = _dims(x.shape)
    if dims is None or (not attrs["squeeze_dims"] and None in dims):
        return unknown_shape(), x.dtype  # an unknown dim may or may not be 1
    drop = _squeeze_axes(dims, attrs["squeeze_dims"], x.shape)
    return TensorShape([d for i, d in enumerate(dims) if i not in drop]), x.dtype


register_op("Squeeze", _squeeze_infer,
            eager=lambda xp, x, squeeze_dims: xp.squeeze(
                x, axis=tuple(_squeeze_axes(list(x.shape), squeeze_dims, x.shape))),
            lower=lambda ctx, x, squeeze_dims: ctx.da.squeeze(ctx.as_dask(x), axis=tuple(
                _squeeze_axes(list(ctx.known_shape(x)), squeeze_dims, x.shape))))


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002 - TF1 signature
    """`input` without the size-1 dims listed in `axis` (Python ints; all size-1 dims if None).

    ValueError if a listed dim is out of range or known to differ from 1.
    """
    if squeeze_dims is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'squeeze_dims' and 'axis'")
        axis = squeeze_dims
    if _is_tensor(axis):  # TF1 takes only Python ints; a build-time value is as good
        v = constant_value(convert_to_tensor(axis))
        if v is None:
            raise TypeError(f"squeeze: axis must be known when the graph is built, got {axis!r}")
        axis = v
    axis = [] if axis is None else [int(a) for a in np.asarray(axis).reshape(-1).tolist()]
    return apply_op("Squeeze", [_tensor(input)], {"squeeze_dims": axis}, name=name,
                    default_name="Squeeze")


# ---- concat, unstack, split --------------------------------------------------------------------------


def _concat_infer(inputs, attrs):
    values, axis_t = inputs[:-1], inputs[-1]
    _check_rank(axis_t, 0, "ConcatV2", "axis")
    dt = values[0].dtype
    if any(v.dtype != dt for v in values):
        raise TypeError(f"ConcatV2: values have types {[v.dtype.name for v in values]} that don't all match")
    ranks = {v.shape.ndims for v in values} - {None}
    if len(ranks) > 1:
        raise ValueError(f"ConcatV2: values must have one rank, got shapes {[str(v.shape) for v in values]}")
    if not ranks:
        return unknown_shape(), dt
    r = ranks.pop()
    if r == 0:
        raise ValueError("ConcatV2: can't concatenate scalars (use stack instead)")
    a = _static_scalar(axis_t)
    if a is None:
        return TensorShape([None] * r), dt
    a = normalize_axis(a, r, "ConcatV2")
    out = [None] * r
    total = 0
    for v in values:
        dims = _dims(v.shape)
        if dims is None:
            total = None
            continue
        for i, d in enumerate(dims):
            if i == a:
                total = None if total is None or d is None else total + d
            elif d is not None:
                if out[i] is not None and out[i] != d:
                    raise ValueError(f"ConcatV2: dimension {i} of the inputs must be equal, but are {out[i]} and "
                                     f"{d}; shapes {[str(t.shape) for t in values]} (axis {a})")
                out[i] = d
    out[a] = total
    return TensorShape(out), dt


def _concat_axis(axis, ndim):
    return normalize_axis(_ints(axis)[0], ndim, "ConcatV2")


register_op("ConcatV2", _concat_infer,
            eager=lambda xp, *args: xp.concat(args[:-1], axis=_concat_axis(args[-1], args[0].ndim)),
            lower=lambda ctx, *args: ctx.da.concatenate(
                [ctx.as_dask(v) for v in args[:-1]],
                axis=_concat_axis(ctx.host_value(args[-1], "ConcatV2 axis"), args[0].ndim)))


def concat(values, axis, name="concat"):
    """`values` (tensors of one rank and dtype) joined along `axis`; the other dims must match.

    TypeError for mixed dtypes; ValueError for mixed ranks, mismatched dims or scalars.
    """
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        return identity(_tensor(values[0]), name=name)
    with name_scope(name, "concat", values) as scope:
        values = [_tensor(v) for v in values]
        return apply_op("ConcatV2", values + [_int_input(axis, "axis", "ConcatV2")], name=scope)


def _unpack_infer(inputs, attrs):
    (x,) = inputs
    num, axis = attrs["num"], attrs["axis"]
    dims = _dims(x.shape)
    if dims is None:
        return [(unknown_shape(), x.dtype)] * num
    a = normalize_axis(axis, len(dims), "Unpack")
    if dims[a] is not None and dims[a] != num:
        raise ValueError(f"Unpack: dimension {a} of input shape {x.shape} is not num={num}")
    return [(TensorShape(dims[:a] + dims[a + 1:]), x.dtype)] * num


def _unpack_take(x, num, axis):
    a = normalize_axis(axis, x.ndim, "Unpack")
    if x.shape[a] != num:
        raise ValueError(f"Unpack: input to unpack has shape {tuple(x.shape)}, dimension {a} is not {num}")
    return _outputs([x[(slice(None),) * a + (i,)] for i in _pyrange(num)])


register_op("Unpack", _unpack_infer, eager=lambda xp, x, num, axis: _unpack_take(x, num, axis),
            lower=lambda ctx, x, num, axis: _unpack_take(ctx.as_dask(x), num, axis), num_outputs=None)


def unstack(value, num=None, axis=0, name="unstack"):
    """The rank-(R-1) slices of `value` along `axis`, as a list of `num` tensors.

    ValueError if `num` is None and the dim is not known, or axis is out of range.
    """
    value = _tensor(value)
    r = value.shape.ndims
    if r is not None:
        if not -r <= axis < r:
            raise ValueError(f"Argument `axis` = {axis} not in range [{-r}, {r})")
        axis %= r
        if num is None:
            num = value.shape.as_list()[axis]
    if num is None:
        raise ValueError(f"Cannot infer argument `num` from shape {value.shape}")
    return _create_multi("Unpack", [value], {"num": int(num), "axis": int(axis)}, name)


def _split_sizes(sizes, dim, op_type):
    """Split sizes with their one -1 resolved against `dim` (None: unknown); ValueError if they can't fit."""
    if sum(1 for s in sizes if s == -1) > 1:
        raise ValueError(f"{op_type}: size_splits can only have one -1, got {sizes}")
    if any(s is not None and s < -1 for s in sizes):
        raise ValueError(f"{op_type}: invalid split sizes {sizes}")
    if dim is None or None in sizes:
        return [None if s == -1 else s for s in sizes]
    rest = dim - sum(s for s in sizes if s != -1)
    if (-1 in sizes and rest < 0) or (-1 not in sizes and rest != 0):
        raise ValueError(f"{op_type}: can't split axis of size {dim} into pieces of size {sizes}")
    return [rest if s == -1 else s for s in sizes]


def _split_shapes(x, axis_t, sizes_of_dim, op_type, num):
    dims = _dims(x.shape)
    a = _static_scalar(axis_t)
    if dims is None:
        return [(unknown_shape(), x.dtype)] * num
    if a is None:
        return [(TensorShape([None] * len(dims)), x.dtype)] * num
    a = normalize_axis(a, len(dims), op_type)
    return [(TensorShape(dims[:a] + [s] + dims[a + 1:]), x.dtype) for s in sizes_of_dim(dims[a])]


def _split_even(dim, num):
    if dim is not None and dim % num:
        raise ValueError(f"Split: dimension size {dim} must be evenly divisible by {num}")
    return [None if dim is None else dim // num] * num


def _split_infer(inputs, attrs):
    axis_t, x = inputs
    num = attrs["num_split"]
    return _split_shapes(x, axis_t, lambda d: _split_even(d, num), "Split", num)


def _splitv_infer(inputs, attrs):
    x, sizes_t, axis_t = inputs
    num = attrs["num_split"]
    sizes = partial_shape_value(sizes_t) or [None] * num
    if len(sizes) != num:
        raise ValueError(f"SplitV: length of size_splits ({len(sizes)}) should be equal to num ({num})")
    return _split_shapes(x, axis_t, lambda d: _split_sizes(sizes, d, "SplitV"), "SplitV", num)


def _slice_pieces(x, axis, sizes):
    a = normalize_axis(axis, x.ndim, "Split")
    bounds = np.cumsum([0] + sizes).tolist()
    return _outputs([x[(slice(None),) * a + (slice(b, e),)] for b, e in zip(bounds[:-1], bounds[1:])])


def _split_run(x, axis, num):
    a = normalize_axis(_ints(axis)[0], x.ndim, "Split")
    return _slice_pieces(x, a, _split_even(int(x.shape[a]), num))


def _splitv_run(x, sizes, axis, num):
    a = normalize_axis(_ints(axis)[0], x.ndim, "SplitV")
    return _slice_pieces(x, a, _split_sizes(_ints(sizes), int(x.shape[a]), "SplitV"))


register_op("Split", _split_infer, eager=lambda xp, axis, x, num_split: _split_run(x, axis, num_split),
            lower=lambda ctx, axis, x, num_split: _split_run(
                ctx.as_dask(x), ctx.host_value(axis, "Split axis"), num_split), num_outputs=None)
register_op("SplitV", _splitv_infer,
            eager=lambda xp, x, sizes, axis, num_split: _splitv_run(x, sizes, axis, num_split),
            lower=lambda ctx, x, sizes, axis, num_split: _splitv_run(
                ctx.as_dask(x), ctx.host_value(sizes, "SplitV size_splits"), ctx.host_value(axis, "SplitV axis"),
                num_split), num_outputs=None)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """`value` cut along `axis` into a list of tensors: an int count of equal pieces, or a list of
    sizes (one may be -1: the rest).

    ValueError if the count does not divide the dim, or the sizes do not sum to it.
    """
    value = _tensor(value)
    with name_scope(name, "split", [value]) as scope:
        axis_t = _int_input(axis, "split_dim", "Split")
        count = num_or_size_splits
        if _is_tensor(count) and convert_to_tensor(count).shape.ndims == 0:  # a count known when building
            count = _static_scalar(convert_to_tensor(count))
            if count is None:
                raise ValueError(f"Cannot infer num from the shape of {num_or_size_splits!r}")
        if isinstance(count, (int, np.integer)) and not isinstance(count, bool):
            n = int(count)
            if n < 1:
                raise ValueError(f"Split: num_split must be >= 1, got {n}")
            return _create_multi("Split", [axis_t, value], {"num_split": n}, scope)
        sizes_t = _int_input(num_or_size_splits, "size_splits", "SplitV")
        _check_rank(sizes_t, 1, "SplitV", "size_splits")
        if num is None:
            num = sizes_t.shape.num_elements()
            if num is None:
                raise ValueError(f"Cannot infer argument `num` from shape {sizes_t.shape}")
        return _create_multi("SplitV", [value, sizes_t, axis_t], {"num_split": int(num)}, scope)


# ---- tile, pad, reverse ----------------------------------------------------------------------------


def _tile_infer(inputs, attrs):
    x, mult_t = inputs
    _check_rank(mult_t, 1, "Tile", "multiples")
    mult = _partial_shape(mult_t)
    dims = _dims(x.shape)
    if mult is not None and dims is not None and len(mult) != len(dims):
        raise ValueError(f"Tile: multiples {mult} must have one entry per dim of the input shape {x.shape}")
    if mult is not None and any(m is not None and m < 0 for m in mult):
        raise ValueError(f"Tile: multiples must be >= 0, got {mult}")
    if dims is None:
        return (unknown_shape() if mult is None else TensorShape([None] * len(mult))), x.dtype
    mult = mult or [None] * len(dims)
    return TensorShape([None if d is None or m is None else d * m for d, m in zip(dims, mult)]), x.dtype


def _tile_reps(x, mult):
    reps = _ints(mult)
    if len(reps) != x.ndim or any(m < 0 for m in reps):
        raise ValueError(f"Tile: multiples {reps} must be >= 0, one per dim of the input shape {tuple(x.shape)}")
    return tuple(reps)


register_op("Tile", _tile_infer, eager=lambda xp, x, mult: xp.tile(x, _tile_reps(x, mult)),
            lower=lambda ctx, x, mult: ctx.da.tile(  # copies of the input's chunks, concatenated
                ctx.as_dask(x), _tile_reps(x, ctx.host_value(mult, "Tile multiples"))))


def tile(input, multiples, name=None):  # noqa: A002 - TF1 signature
    """`input` repeated multiples[i] times along dim i; ValueError if len(multiples) != rank."""
    with name_scope(name, "Tile", [input]) as scope:
        input = _tensor(input, name="input")
        return apply_op("Tile", [input, _int_input(multiples, "multiples", "Tile")], name=scope)


_MIRROR_LIMIT = {"REFLECT": 1, "SYMMETRIC": 0}  # each pad must be <= dim - limit


def _pad_infer(inputs, attrs):
    x, pad_t = inputs[:2]
    op_type = "MirrorPad" if "mode" in attrs else "PadV2" if len(inputs) == 3 else "Pad"
    if len(inputs) == 3:
        _check_rank(inputs[2], 0, op_type, "constant_values")
        if inputs[2].dtype != x.dtype:
            raise TypeError(f"PadV2: constant_values is {inputs[2].dtype.name}, the input {x.dtype.name}")
    dims, ps = _dims(x.shape), _dims(pad_t.shape)
    if ps is not None and (len(ps) != 2 or ps[1] not in (None, 2) or None not in (dims, ps[0])
                           and ps[0] != len(dims)):
        raise ValueError(f"{op_type}: paddings must have shape [rank, 2], got {pad_t.shape} for input "
                         f"shape {x.shape}")
    pads = constant_value(pad_t)
    rank = len(dims) if dims is not None else len(pads) if pads is not None else ps and ps[0]
    if rank is None:
        return unknown_shape(), x.dtype
    if pads is None or dims is None:
        return TensorShape([None] * rank), x.dtype
    pads = _check_pads(np.asarray(pads).reshape(-1, 2).tolist(), dims, attrs.get("mode"), op_type)
    return TensorShape([None if d is None else d + b + a for d, (b, a) in zip(dims, pads)]), x.dtype


def _check_pads(pads, dims, mode, op_type):
    if len(pads) != len(dims):
        raise ValueError(f"{op_type}: paddings has {len(pads)} rows, the input has rank {len(dims)}")
    for i, ((b, a), d) in enumerate(zip(pads, dims)):
        if b < 0 or a < 0:
            raise ValueError(f"{op_type}: paddings must be non-negative, got {pads}")
        if mode is not None and d is not None and max(b, a) > d - _MIRROR_LIMIT[mode]:
            raise ValueError(f"{op_type}: {mode} paddings {b, a} of dim {i} must be <= {d - _MIRROR_LIMIT[mode]}"
                             f" for input dims {dims}")
    return [(int(b), int(a)) for b, a in pads]


def _pads(x, paddings, mode=None):
    flat = _ints(paddings)
    return _check_pads([flat[i:i + 2] for i in _pyrange(0, len(flat), 2)], list(x.shape), mode,
                       "MirrorPad" if mode else "Pad")


def _pad_constant_lower(ctx, x, paddings, value=None):
    # Concatenating broadcast pieces keeps x's chunks and lets the value be computed in the run.
    x = ctx.as_dask(x)
    pads = _pads(x, ctx.host_value(paddings, "Pad paddings"))
    value = ctx.as_dask(np.zeros((), x.dtype) if value is None else value)
    for ax, (b, a) in enumerate(pads):
        parts = []
        for n in (b, a):
            chunks = x.chunks[:ax] + ((n,),) + x.chunks[ax + 1:]
            parts.append(ctx.da.broadcast_to(value, x.shape[:ax] + (n,) + x.shape[ax + 1:], chunks=chunks)
                         if n else None)
        pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
        x = ctx.da.concatenate(pieces, axis=ax) if len(pieces) > 1 else x
    return x


register_op("Pad", _pad_infer, eager=lambda xp, x, p: xp.pad(x, _pads(x, p)), lower=_pad_constant_lower)
register_op("PadV2", _pad_infer, eager=lambda xp, x, p, v: xp.pad(x, _pads(x, p), constant_values=v),
            lower=_pad_constant_lower)
register_op("MirrorPad", _pad_infer,
            eager=lambda xp, x, p, mode: xp.pad(x, _pads(x, p, mode), mode=mode.lower()),
            lower=lambda ctx, x, p, mode: ctx.da.pad(
                ctx.as_dask(x), _pads(x, ctx.host_value(p, "MirrorPad paddings"), mode), mode=mode.lower()))


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """`tensor` padded by paddings[i] = [before, after] along dim i.

    mode: CONSTANT (with `constant_values`), REFLECT (mirror without the edge; pads < dim) or
    SYMMETRIC (mirror with the edge; pads <= dim). ValueError for another mode, paddings not of
    shape [rank, 2], negative pads or mirror pads too large.
    """
    mode = str(mode).upper()
    if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError(f'Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or '
                         f'"SYMMETRIC". Received `mode` = {mode}')
    tensor = _tensor(tensor)
    default = "MirrorPad" if mode != "CONSTANT" else "Pad"
    cv_zero = not _is_tensor(constant_values) and np.all(np.asarray(constant_values) == 0)
    if mode == "CONSTANT" and not cv_zero:
        default = "PadV2"
    with name_scope(name, default, [tensor]) as scope:
        p = _int_input(paddings, "paddings", default)
        if default == "MirrorPad":
            return apply_op("MirrorPad", [tensor, p], {"mode": mode}, name=scope)
        if default == "Pad":
            return apply_op("Pad", [tensor, p], name=scope)
        cv = _tensor(constant_values, tensor.dtype, name="constant_values")
        return apply_op("PadV2", [tensor, p, cv], name=scope)


def _reverse_infer(inputs, attrs):
    x, axis_t = inputs
    if axis_t.shape.ndims not in (None, 0, 1):
        raise ValueError(f"ReverseV2: axis must be a 1-D list of dims, got shape {axis_t.shape}")
    axes = constant_value(axis_t)
    if axes is not None and x.shape.ndims is not None:
        _reverse_axes(np.asarray(axes).reshape(-1).tolist(), x.shape.ndims)
    return x.shape, x.dtype


def _reverse_axes(axes, ndim):
    out = []
    for i, a in enumerate(axes):
        if not -ndim <= a < ndim:
            raise ValueError(f"ReverseV2: axis[{i}] = {a} is out of the valid range [{-ndim}, {ndim})")
        if a % ndim in out:
            raise ValueError(f"ReverseV2: axis {a % ndim} specified more than once")
        out.append(a % ndim)
    return out


def _flip_index(x, axis):
    axes = _reverse_axes(_ints(axis), x.ndim)
    return tuple(slice(None, None, -1) if i in axes else slice(None) for i in _pyrange(x.ndim))


register_op("ReverseV2", _reverse_infer, eager=lambda xp, x, axis: x[_flip_index(x, axis)],
            lower=lambda ctx, x, axis: ctx.as_dask(x)[_flip_index(x, ctx.host_value(axis, "ReverseV2 axis"))])


def reverse(tensor, axis, name=None):
    """`tensor` with the order of elements reversed along each dim in `axis` (1-D, may be negative).

    ValueError for an axis out of range or given twice.
    """
    with name_scope(name, "ReverseV2", [tensor]) as scope:
        tensor = _tensor(tensor, name="tensor")
        return apply_op("ReverseV2", [tensor, _int_input(axis, "axis", "ReverseV2")], name=scope)


reverse_v2 = reverse


# ---- add_n -----------------------------------------------------------------------------------------


def _add_n_infer(inputs, attrs):
    shape, dt = inputs[0].shape, inputs[0].dtype
    for t in inputs[1:]:
        if t.dtype != dt:
            raise TypeError(f"AddN: inputs must share one dtype, got {dt.name} and {t.dtype.name} ({t.name!r})")
        try:
            shape = shape.merge_with(t.shape)
        except ValueError:
            raise ValueError(f"AddN: inputs must have one shape, got {[str(i.shape) for i in inputs]}") from None
    if not dt.is_numeric:
        raise TypeError(f"AddN: inputs must be numeric, got {dt.name}")
    return shape, dt


# Elementwise: fused with its neighbours, chunk by chunk; the sum runs left to right, as numpy's.
register_op("AddN", _add_n_infer, eager=lambda xp, *xs: functools.reduce(xp.add, xs), elementwise=True)


def add_n(inputs, name=None):
    """The elementwise sum of a list of tensors of one shape and dtype (no broadcasting).

    ValueError for an empty list or mismatched shapes; TypeError for mixed dtypes.
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("Inputs must be an iterable of at least one Tensor with the same dtype and shape.")
    inputs = [_tensor(t) for t in inputs]
    if len(inputs) == 1:
        return identity(inputs[0], name=name) if name else inputs[0]
    return apply_op("AddN", inputs, name=name, default_name="AddN")
