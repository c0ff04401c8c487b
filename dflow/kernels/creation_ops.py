"""Filled arrays and sequences: zeros, ones, zeros_like, ones_like, fill, range and linspace (only
Fill's value has a gradient); and the helpers the array-manipulation modules use for shape-like
arguments.

Shape-like arguments (shapes, axes, perms, multiples, paddings, split sizes) are int tensors: Python
values become constants, tensors (e.g. `dflow.shape(x)`) pass through. Static shapes are inferred
from their build-time values where known (`constant_value`, `partial_shape_value`); the lowerings
need them on the host when the plan is compiled (`ctx.host_value`), never data computed in the run.
Filled arrays are built lazily chunk by chunk (`da.full`): a huge `zeros` costs nothing until used.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.evaluate import FOLD_MAX_ELEMENTS
from ..graph.graph import name_scope
from ..graph.ops import Tensor, constant_value
from ..graph.registry import def_grad, not_differentiable, register_op
from ..graph.shape import Dimension, TensorShape, too_many_elements, unknown_shape
from .array_ops import partial_shape_value, stack
from .common import apply_op, check_allocation, convert_to_tensor, host_ints, to_numpy
from .math_ops import cast
from .reduction_ops import reduce_sum

__all__ = ["zeros", "ones", "zeros_like", "ones_like", "fill", "range", "linspace", "lin_space"]

_pyrange = builtins.range  # this module defines TF1's `range`

# ---- shape-like arguments (manip_ops uses these helpers too) -------------------------------------


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


_ints = host_ints  # (the name the kernel modules above import)


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


def _on_host(ctx, n, *inputs):
    """Whether a lowering of host `inputs` returns a host array (n elements, small): values such as
    `range(rank(x))` then stay known on the host for the shape arguments of later ops."""
    return n <= FOLD_MAX_ELEMENTS and not any(isinstance(v, ctx.da.Array) for v in inputs)


# ---- fill, zeros, ones ---------------------------------------------------------------------------


def _fill_infer(inputs, attrs):
    dims, value = inputs
    _check_rank(dims, 1, "Fill", "dims")
    _check_rank(value, 0, "Fill", "value")
    shape = _partial_shape(dims)
    if shape is not None and any(d is not None and d < 0 for d in shape):
        raise ValueError(f"Fill: dimensions must be >= 0, got {shape}")
    return (unknown_shape() if shape is None else TensorShape(shape)), value.dtype


def _fill_shape(dims):
    """Fill's run-time dims as a tuple; ValueError (TF1's words; the plan reports it as the op's
    InvalidArgumentError) for negative dims or more than 2**63 - 1 elements."""
    shape = tuple(_ints(dims))
    if any(d < 0 for d in shape):
        raise ValueError(f"Fill: dimensions must be >= 0, got {list(shape)}")
    if too_many_elements(shape):
        raise ValueError(f"Shape [{','.join(map(str, shape))}] would have more than 2**63 - 1 elements")
    return shape


def _fill_eager(xp, dims, value):
    shape = _fill_shape(dims)
    check_allocation(shape, value.dtype, "Fill")  # run-time dims: over the budget, the plan goes to Dask
    return xp.full(shape, value, dtype=value.dtype)


def _fill_lower(ctx, dims, value):
    shape = _fill_shape(ctx.host_value(dims, "Fill dims"))
    if _on_host(ctx, math.prod(shape), value):
        return np.full(shape, value, dtype=value.dtype)
    chunks = ctx.default_chunks(shape, value.dtype)
    if isinstance(value, ctx.da.Array):  # a value computed in this run
        return ctx.da.broadcast_to(value, shape, chunks=chunks)
    value = np.asarray(value)
    out = ctx.da.full(shape, value[()], dtype=value.dtype, chunks=chunks)
    ctx.note_fill(out, value)  # a reduction of it needs no chunk of it (reduction_ops.fold_fill)
    return out


register_op("Fill", _fill_infer, lower=_fill_lower, eager=_fill_eager)


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
    def value(dtype):  # a string tensor's zero is b"" (TF1); it has no one
        return b"" if dtype == dtypes.string else fill_value

    def infer(inputs, attrs):
        if attrs["dtype"] == dtypes.string and fill_value != 0:
            raise TypeError(f"Expected string, but got {fill_value} of type 'int'.")
        return inputs[0].shape, attrs["dtype"]

    def fold(op):
        s = op.inputs[0].shape
        if s.is_fully_defined() and s.num_elements() <= 1 << 12:
            dtype = op.get_attr("dtype")
            return np.full(s.as_list(), value(dtype), dtype=dtype.np_dtype)
        return None

    # From the input's chunks, not its data: the result does not wait for `x` to be computed.
    register_op(op_type, infer, fold=fold, shape_only=True,
                eager=lambda xp, x, dtype: xp.full(x.shape, value(dtype), dtype=dtype.np_dtype),
                lower=lambda ctx, x, dtype: ctx.da.full_like(ctx.as_dask(x), value(dtype), dtype=dtype.np_dtype))


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


# ---- gradient rules --------------------------------------------------------------------------------


@def_grad("Fill")
def _fill_grad(op, g):
    return [None, reduce_sum(g)]  # every element is the one value


not_differentiable("ZerosLike", "OnesLike", "Range", "LinSpace")  # as TF1: the values depend on shapes only
