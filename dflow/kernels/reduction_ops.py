"""Reductions: sum, mean, max, min, prod, any, all, logsumexp, argmax/argmin, cumsum, count_nonzero.

Each reduction op takes the tensor and, as a second input, its axes (`reduction_indices`, an
int32/int64 tensor whose value must be known when the plan is built: a constant or folded from
static shapes). A reduction over all axes of a tensor of unknown rank has no axes input.
Chunked lowerings are dask tree reductions (`da.sum`, `da.reduction`): memory stays bounded by a
few chunks however many chunks the reduced axes span. Gradient rules (TF1's) are at the end.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..dask_compat import meta_from_array
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.evaluate import namespace
from ..graph.graph import name_scope
from ..graph.ops import Tensor, constant_value
from ..graph.registry import def_bind, no_gradient, register_op
from ..graph.shape import TensorShape, unknown_shape
from .array_ops import rank, reshape, shape, size
from .common import (
    BOOL,
    FLOAT,
    NUMERIC,
    REAL,
    apply_op,
    check_dtype,
    constant,
    convert_to_tensor,
    host_ints,
)
from .grad_util import broadcast_like
from .math_ops import cast, equal, exp, floormod, maximum, not_equal, sqrt, square, subtract, where

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any",
           "reduce_all", "reduce_logsumexp", "argmax", "argmin", "arg_max", "arg_min", "cumsum", "count_nonzero", "reduce_variance",
           "reduce_std", "reduce_euclidean_norm"]


# ---- axes --------------------------------------------------------------------------------------


_host_ints = host_ints  # the ints of a small numpy/cupy array (axes), on the host


def _normalize_axes(axes, ndims, op_type):
    """`axes` (ints, may be negative) as a sorted tuple in 0..ndims-1; ValueError if out of range or
    repeated."""
    out = []
    for a in axes:
        if not -ndims <= a < ndims:
            raise ValueError(f"{op_type}: Invalid reduction dimension {a} for input with {ndims} "
                             "dimensions.")
        a %= ndims
        if a in out:
            raise ValueError(f"{op_type}: Axes contains duplicate dimension {a} (axes {list(axes)})")
        out.append(a)
    return tuple(sorted(out))


def _axis_tensor(axis, name):
    """`axis` (int, list, numpy value or integer Tensor) as an integer Tensor; TypeError otherwise."""
    if isinstance(axis, Tensor) or hasattr(axis, "_as_graph_element"):
        axis = convert_to_tensor(axis)
        if not axis.dtype.is_integer:
            raise TypeError(f"Value passed to parameter {name!r} has DataType {axis.dtype.name} not in "
                            "list of allowed values: int32, int64")
        return axis
    arr = np.asarray(axis)
    if arr.size == 0:
        arr = arr.astype(np.int32)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"Value passed to parameter {name!r} has DataType {arr.dtype} not in list of "
                        f"allowed values: int32, int64 (got {axis!r})")
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or a list of ints, got shape {list(arr.shape)}")
    return constant(arr.astype(np.int64 if arr.dtype == np.int64 else np.int32), name=name)


def _out_dims(dims, axes, keep_dims):
    """The dims left after reducing `axes` of `dims` (size 1 when `keep_dims`)."""
    if keep_dims:
        return tuple(1 if i in axes else d for i, d in enumerate(dims))
    return tuple(d for i, d in enumerate(dims) if i not in axes)


def _reduced_shape(in_shape, axes, keep_dims):
    return TensorShape(list(_out_dims(in_shape.as_list(), axes, keep_dims)))


def _reduce_static_shape(inputs, keep_dims, op_type):
    """The static output shape of a reduction op (input tensor, optional axes tensor)."""
    x = inputs[0]
    ndims = x.shape.ndims
    if len(inputs) == 1:  # all axes of a tensor of unknown rank
        return unknown_shape() if keep_dims else TensorShape([])
    axis_t = inputs[1]
    if axis_t.shape.ndims is not None and axis_t.shape.ndims > 1:
        raise ValueError(f"{op_type}: reduction_indices must be a scalar or vector, got shape "
                         f"{axis_t.shape}")
    value = constant_value(axis_t)
    if value is None:
        if ndims is None:
            return unknown_shape()
        if keep_dims:
            return unknown_shape(ndims)
        if axis_t.shape.ndims == 0:
            return unknown_shape(ndims - 1)
        return unknown_shape()
    axes = _host_ints(value)
    if ndims is None:
        return unknown_shape()
    return _reduced_shape(x.shape, _normalize_axes(axes, ndims, op_type), keep_dims)


def _kernel_axes(x, axis, op_type):
    return tuple(range(x.ndim)) if axis is None else _normalize_axes(_host_ints(axis), x.ndim, op_type)


# ---- reduction kernels (one body for whole arrays and, with the dask namespace, for chunks) ------

_MEAN_ACC = {"f": None, "c": None, "i": np.int64, "u": np.uint64}


_add_reduce = np.add.reduce  # ndarray.sum without its Python wrapper (numpy arrays' kernels)


def _sum_but_last(x, axes, keepdims):
    """The sum over every axis but the last of a C-contiguous float numpy array (a bias gradient,
    batch-norm moments), or None for any other case. numpy adds such rows one at a time, each only
    c floats wide (a CNN's bias gradient); viewed as rows of k*c floats each add is k times wider
    and the k partial sums add at the end (an order of magnitude faster, with a smaller rounding
    error: each partial sum adds k times fewer terms)."""
    nd = x.ndim
    if type(x) is not np.ndarray or nd < 2 or x.dtype.kind != "f" or not x.flags.c_contiguous:
        return None
    if len(axes) != nd - 1 or sorted(a % nd for a in axes) != list(range(nd - 1)):
        return None
    c = x.shape[-1]
    m = x.size // c if c else 0
    if m < 1024 or not 0 < c <= 512:
        return None
    k = 64
    while m % k:
        k //= 2
    if k < 4:
        return None
    s = _add_reduce(_add_reduce(x.reshape(m // k, k * c), axis=0).reshape(k, c), axis=0)
    return s.reshape((1,) * (nd - 1) + (c,)) if keepdims else s


def _sum(xp, x, axes, keepdims):
    fast = _sum_but_last(x, axes, keepdims)
    if fast is not None:
        return fast
    if type(x) is np.ndarray:
        return _add_reduce(x, axis=axes, dtype=x.dtype, keepdims=keepdims)
    return xp.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)


def _mean(xp, x, axes, keepdims):
    """Sum then divide; integers divide truncating toward zero, as TF1 (-3 // 2 is -1 there)."""
    dims = [x.shape[a] for a in axes]
    n = math.prod(dims) if all(type(d) is int for d in dims) else int(np.prod(dims, dtype=np.int64))
    dt = x.dtype
    if type(x) is np.ndarray and dt.kind == "f" and dt.itemsize >= 4 and n:
        s = _sum_but_last(x, axes, keepdims)
        s = _add_reduce(x, axis=axes, dtype=dt, keepdims=keepdims) if s is None else s
        return s / dt.type(n) if type(s) is np.ndarray else dt.type(s / dt.type(n))
    kind = np.dtype(dt).kind
    if kind in "iu":
        s = xp.sum(x, axis=axes, keepdims=keepdims, dtype=_MEAN_ACC[kind])
        n = max(n, 1)
        q = s // n if kind == "u" else xp.where(s < 0, -((-s) // n), s // n)
        return xp.astype(q, dt)
    acc = np.float32 if np.dtype(dt) == np.float16 else dt  # as numpy: float16 sums in float32
    s = xp.sum(x, axis=axes, keepdims=keepdims, dtype=acc)
    return xp.astype(s / n if n else s * np.nan, dt)


def _extreme(fn, fill):
    def kernel(xp, x, axes, keepdims):
        if any(x.shape[a] == 0 for a in axes):  # TF1: the dtype's lowest/highest, numpy raises
            return xp.full(_out_dims(x.shape, axes, keepdims), fill(np.dtype(x.dtype)), dtype=x.dtype)
        return getattr(xp, fn)(x, axis=axes, keepdims=keepdims)

    return kernel


def _lowest(dt):
    return -np.inf if dt.kind == "f" else np.iinfo(dt).min


def _highest(dt):
    return np.inf if dt.kind == "f" else np.iinfo(dt).max


def _lse_parts(xp, x, axes):
    """(max, sum(exp(x - shift))) with keepdims, where shift is the max or 0 where it is not finite."""
    m = xp.max(x, axis=axes, keepdims=True)
    shift = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    return m, xp.sum(xp.exp(x - shift), axis=axes, keepdims=True)


def _lse_finish(xp, m, s, axes, keepdims):
    """log(s) + shift; a +inf max gives +inf (inf - inf would be nan)."""
    shift = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = xp.where(m == np.inf, m, xp.log(s) + shift)
    if not keepdims:
        out = xp.squeeze(out, axis=axes) if axes else out
    return out


def _logsumexp(xp, x, axes, keepdims):
    if any(x.shape[a] == 0 for a in axes):  # log(0), as TF1
        return xp.full(_out_dims(x.shape, axes, keepdims), -np.inf, dtype=x.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        m, s = _lse_parts(xp, x, axes)
        return _lse_finish(xp, m, s, axes, keepdims)


_KERNELS = {
    "Sum": _sum,
    "Prod": lambda xp, x, axes, keepdims: xp.prod(x, axis=axes, keepdims=keepdims, dtype=x.dtype),
    "Mean": _mean,
    "Max": _extreme("max", _lowest),
    "Min": _extreme("min", _highest),
    "Any": lambda xp, x, axes, keepdims: xp.any(x, axis=axes, keepdims=keepdims),
    "All": lambda xp, x, axes, keepdims: xp.all(x, axis=axes, keepdims=keepdims),
    "ReduceLogSumExp": _logsumexp,
}


# ---- one-pass chunked logsumexp: each chunk gives (max, shifted sum), merged up a tree ------------


def _leaves(parts):
    if isinstance(parts, list):
        for p in parts:
            yield from _leaves(p)
    else:
        yield parts


def _lse_chunk(x, axis, keepdims):
    xp = namespace((x,))
    with np.errstate(over="ignore", invalid="ignore"):
        return _lse_parts(xp, x, axis)


def _lse_merge(parts):
    leaves = list(_leaves(parts))
    xp = namespace((leaves[0][0],))
    m = functools.reduce(xp.maximum, [p[0] for p in leaves])
    shift = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    with np.errstate(over="ignore", invalid="ignore"):
        # exp(m_i - shift) <= 1; a chunk of -inf has m_i = -inf and weight 0 (its sum is 0 too)
        s = functools.reduce(xp.add, [p[1] * xp.exp(p[0] - shift) for p in leaves])
    return xp, m, s


def _lse_combine(parts, axis, keepdims):
    _, m, s = _lse_merge(parts)
    return m, s


def _lse_aggregate(parts, axis, keepdims):
    xp, m, s = _lse_merge(parts)
    return _lse_finish(xp, m, s, axis, keepdims)


def _lse_lower(ctx, x, axes, keepdims):
    if not axes or any(x.shape[a] == 0 for a in axes):
        return _logsumexp(ctx.xp, x, axes, keepdims)
    meta = meta_from_array(x, ndim=x.ndim if keepdims else x.ndim - len(axes))
    return ctx.da.reduction(x, _lse_chunk, _lse_aggregate, combine=_lse_combine, axis=axes,
                            keepdims=keepdims, dtype=x.dtype, concatenate=False, meta=meta,
                            name=ctx.name("-logsumexp"))


# ---- registration --------------------------------------------------------------------------------


def _reduce_infer(op_type, kinds):
    def infer(inputs, attrs):
        x = inputs[0]
        check_dtype(x, kinds, op_type, "input")
        return _reduce_static_shape(inputs, attrs["keep_dims"], op_type), x.dtype

    return infer


def _reduce_eager(op_type):
    kernel = _KERNELS[op_type]

    def eager(xp, x, axis=None, *, keep_dims):
        axes = _kernel_axes(x, axis, op_type)
        if not axes:
            return x
        return kernel(xp, x, axes, keep_dims)

    return eager


# A reduction of a Fill larger than this machine's memory (TF1 fails allocating it: OOM) is
# computed from the fill value and the shape instead of from its chunks: summing 8 TB of zeros
# chunk by chunk took hours, streamed within any budget. Smaller fills are reduced as any array
# (the same float rounding as every other reduction).
FOLD_FILL_BYTES = 1 << 34  # without the machine's size


def _wrap_int(n, dtype):
    """Python int `n` wrapped into integer `dtype` (two's complement, as TF's kernels overflow)."""
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    return np.asarray((n - int(info.min)) % span + int(info.min)).astype(dtype)


def _folded_fill(op_type, value, count):
    """The reduction `op_type` of `count` (> 0) elements all equal to host scalar `value`, or None
    for one not folded (logsumexp)."""
    dtype = value.dtype
    if op_type in ("Max", "Min", "Mean"):
        return value
    if op_type in ("Any", "All"):
        return np.asarray(bool(value))
    if op_type == "Sum":
        if dtype.kind in "iu":
            return _wrap_int(int(value) * count, dtype)
        with np.errstate(all="ignore"):
            return np.asarray(value.astype(np.complex128 if dtype.kind == "c" else np.float64) * count).astype(dtype)
    if op_type == "Prod":
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return _wrap_int(pow(int(value), count, int(info.max) - int(info.min) + 1), dtype)
        if dtype.kind == "f":
            with np.errstate(all="ignore"):
                return np.asarray(np.power(np.float64(value), count)).astype(dtype)
    return None


def _fold_fill(ctx, op_type, x, axes, keep_dims):
    """A reduction of a Fill larger than the machine (`FOLD_FILL_BYTES`) from its value and shape,
    or None."""
    value = ctx.fill_of(x)
    limit = ctx.options.machine_memory or FOLD_FILL_BYTES
    if value is None or x.nbytes <= limit:
        return None
    count = math.prod(int(x.shape[a]) for a in axes)
    out = _folded_fill(op_type, value, count) if count else None
    if out is None:
        return None
    shape = _out_dims(x.shape, axes, keep_dims)
    if math.prod(shape) * out.dtype.itemsize <= (1 << 20):
        return np.full(shape, out, dtype=out.dtype)
    return ctx.da.full(shape, out[()], dtype=out.dtype, chunks=ctx.default_chunks(shape, out.dtype))


def _reduce_lower(op_type):
    kernel = _KERNELS[op_type]

    def lower(ctx, x, axis=None, *, keep_dims):
        x = ctx.as_dask(x)
        axes = tuple(range(x.ndim)) if axis is None else \
            _normalize_axes(_host_ints(ctx.host_value(axis, "reduction_indices")), x.ndim, op_type)
        if not axes:
            return x
        folded = _fold_fill(ctx, op_type, x, axes, keep_dims)
        if folded is not None:
            return folded
        if op_type == "ReduceLogSumExp":
            return _lse_lower(ctx, x, axes, keep_dims)
        return kernel(ctx.xp, x, axes, keep_dims)

    return lower


def _pick(new, old, new_name, old_name):
    if old is not None:
        if new is not None:
            raise ValueError(f"Cannot specify both '{old_name}' and '{new_name}'.")
        return old
    return new


def _reduction(op_type, input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    axis = _pick(axis, reduction_indices, "axis", "reduction_indices")
    keepdims = bool(_pick(keepdims, keep_dims, "keepdims", "keep_dims"))
    x = convert_to_tensor(input_tensor)
    if axis is None:
        if x.shape.ndims is None:
            with name_scope(name, op_type, [x]) as scope:
                return apply_op(op_type, [x], {"keep_dims": keepdims}, name=scope)
        axis_t = constant(np.arange(x.shape.ndims, dtype=np.int32), name="Const")
        with name_scope(name, op_type, [x]) as scope:
            return apply_op(op_type, [x, axis_t], {"keep_dims": keepdims}, name=scope)
    with name_scope(name, op_type, [x]) as scope:
        axis_t = _axis_tensor(axis, "reduction_indices")
        return apply_op(op_type, [x, axis_t], {"keep_dims": keepdims}, name=scope)


def _public_reduction(op_type, public, kinds, grad, what):
    """Registers reduction `op_type` (the input kinds it allows, its gradient rule) and returns its
    public function, named `public`, documented as the `what` of `input_tensor`."""
    register_op(op_type, _reduce_infer(op_type, kinds), eager=_reduce_eager(op_type),
                lower=_reduce_lower(op_type), grad=grad)

    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        return _reduction(op_type, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)

    fn.__name__ = public
    fn.__doc__ = (
        f"{what} of `input_tensor` over `axis` (op `{op_type}`).\n\n"
        "`axis`: None (all axes), an int, a list of ints (negative counts from the end) or an integer "
        "tensor whose value is known when the plan is built. The reduced axes are removed, or kept "
        "with size 1 when `keepdims`. The dtype is kept. `reduction_indices`/`keep_dims` are TF1's "
        "deprecated aliases. Raises ValueError for an axis out of range or repeated, TypeError for a "
        "dtype the op does not take or a non-integer axis.")
    return fn


# ---- gradient rules (TF1's math_grad; the axes input gets None), each passed in its op's row ---


def kept_shape(x, axes):
    """The shape of `x` with `axes` (an int Tensor) set to 1: a list of ints when static, else an
    int32 Tensor from `shape(x)` (axes unknown when building need only be known at run time)."""

    value = constant_value(axes)
    if x.shape.ndims is not None and value is not None:
        red = _normalize_axes(_host_ints(value), x.shape.ndims, "gradient")
        dims = [1 if i in red else d for i, d in enumerate(x.shape.as_list())]
        keep = np.array([i not in red for i in range(len(dims))], dtype=np.int32)
        return dims if None not in dims else shape(x) * keep + (1 - keep)
    ax = floormod(reshape(cast(axes, dtypes.int32), [-1]), rank(x))
    # ExpandDims and Range (manip_ops, creation_ops: above this module) made by their registered types
    r = rank(x)
    positions = apply_op("Range", [constant(np.int32(0)), r, constant(np.int32(1))])
    hit = equal(apply_op("ExpandDims", [positions, constant(np.int32(1))]),
                apply_op("ExpandDims", [ax, constant(np.int32(0))]))
    return where(reduce_any(hit, axis=1), 1, shape(x))


def _keep_dims(op, t):
    """`t` (shaped as `op`'s output) with the reduced axes kept as size 1, so it broadcasts against
    the input (the scalar of an all-axes reduction of unknown rank does already)."""
    if op.get_attr("keep_dims") or len(op.inputs) == 1:
        return t
    return reshape(t, kept_shape(op.inputs[0], op.inputs[1]))


def _axis(op):
    return op.inputs[1] if len(op.inputs) > 1 else None


def _axes_grad(op, grad_x):
    """[the input's gradient, given the input's static shape; None for the axes]."""
    grad_x.set_shape(op.inputs[0].shape)
    return [grad_x] + [None] * (len(op.inputs) - 1)


def _sum_grad(op, g):
    x, y = op.inputs[0], op.outputs[0]
    if op.type == "Mean" and x.shape.is_fully_defined() and y.shape.is_fully_defined():
        g = g / constant(max(x.shape.num_elements() // max(y.shape.num_elements(), 1), 1), dtype=g.dtype)
    elif op.type == "Mean":  # a count of 0 means an empty input: its gradient is empty whatever the divisor
        g = g / cast(maximum(size(x) // maximum(size(y), 1), 1), g.dtype)
    return _axes_grad(op, broadcast_like(_keep_dims(op, g), x))


def _extreme_grad(op, g):
    """Ties share the gradient equally (TF1): g * (x == y) / number of ties."""
    ties = cast(equal(op.inputs[0], _keep_dims(op, op.outputs[0])), g.dtype)
    return _axes_grad(op, ties / reduce_sum(ties, axis=_axis(op), keepdims=True) * _keep_dims(op, g))


def _prod_grad(op, g):
    """d/dx_i = product of the other elements: y / x_i without zeros; with one zero in a slice, the
    product of the rest at the zero and 0 elsewhere; 0 with several. Unlike TF1 (exclusive cumprods),
    y / x_i can lose precision when the product under- or overflows, and second derivatives are
    exact away from zeros only (the rule picks a branch by the count of zeros)."""
    is_zero = equal(op.inputs[0], 0)
    safe_x = where(is_zero, 1, op.inputs[0])
    others = reduce_prod(safe_x, axis=_axis(op), keepdims=True)  # the product of the non-zeros
    zeros = reduce_sum(cast(is_zero, dtypes.int32), axis=_axis(op), keepdims=True)
    d = where(is_zero, where(equal(zeros, 1), others, 0), where(equal(zeros, 0), others / safe_x, 0))
    if d.dtype.is_complex:  # TF1's convention for complex values: g * conj(dy/dx)
        d = apply_op("Conj", [d])
    return _axes_grad(op, d * _keep_dims(op, g))


def _logsumexp_grad(op, g):
    """g * exp(x - y): softmax weights, at most 1, so it cannot overflow."""
    return _axes_grad(op, _keep_dims(op, g) * exp(op.inputs[0] - _keep_dims(op, op.outputs[0])))


reduce_sum = _public_reduction("Sum", "reduce_sum", NUMERIC, _sum_grad,
                               "Sum (integers wrap around in their own dtype, as TF1)")
reduce_mean = _public_reduction("Mean", "reduce_mean", NUMERIC, _sum_grad, "Mean (integers: truncating "
                                "division, as TF1; float16 accumulates in float32)")
reduce_max = _public_reduction("Max", "reduce_max", REAL, _extreme_grad,
                               "Maximum (an empty axis gives the dtype's lowest value, as TF1)")
reduce_min = _public_reduction("Min", "reduce_min", REAL, _extreme_grad,
                               "Minimum (an empty axis gives the dtype's highest value, as TF1)")
reduce_prod = _public_reduction("Prod", "reduce_prod", NUMERIC, _prod_grad, "Product")
reduce_any = _public_reduction("Any", "reduce_any", BOOL, no_gradient, "Logical or (bool only)")
reduce_all = _public_reduction("All", "reduce_all", BOOL, no_gradient, "Logical and (bool only)")
reduce_logsumexp = _public_reduction(
    "ReduceLogSumExp", "reduce_logsumexp", FLOAT, _logsumexp_grad, "log(sum(exp(x))), computed stably "
    "(shifted by the max, one pass over the data; -inf rows give -inf, +inf gives +inf; floats only)")


@def_bind(*_KERNELS)
def _reduce_bind(op, known):
    """The axes parsed once, for an input of known rank."""
    ndim = op.inputs[0].shape.ndims
    if 1 not in known or ndim is None:
        return None
    axes, keep_dims, kernel = _normalize_axes(_host_ints(known[1]), ndim, op.type), op.get_attr("keep_dims"), \
        _KERNELS[op.type]
    if not axes:
        return lambda xp, x: x
    return lambda xp, x: kernel(xp, x, axes, keep_dims)


# ---- argmax / argmin ---------------------------------------------------------------------------


def _arg_infer(op_type):
    def infer(inputs, attrs):
        x, dim = inputs
        check_dtype(x, NUMERIC, op_type, "input")
        out_type = attrs["output_type"]
        value = constant_value(dim)
        if x.shape.ndims is None:
            return unknown_shape(), out_type
        if x.shape.ndims == 0:
            raise ValueError(f"{op_type}: the input must have rank at least 1, got a scalar")
        if value is None:
            return unknown_shape(x.shape.ndims - 1), out_type
        a = _arg_axis(value, x.shape.ndims, op_type)
        return TensorShape([d for i, d in enumerate(x.shape.as_list()) if i != a]), out_type

    return infer


def _arg_axis(value, ndims, op_type):
    (a,) = _host_ints(value)
    if not -ndims <= a < ndims:
        raise ValueError(f"{op_type}: Dimension ({a}) must be in the range [{-ndims}, {ndims}), where "
                         f"{ndims} is the number of dimensions in the input.")
    return a % ndims


def _check_nonempty(shape, a, op_type):
    if shape[a] == 0:
        raise ValueError(f"{op_type}: Reduction axis {a} is empty in shape {list(shape)}")


def _without_nan(xp, x, fn):
    """TF1's CPU kernels never pick a NaN (a comparison with NaN is false): NaN as -inf for argmax,
    +inf for argmin, so [1, nan, 3] gives 2 and 0, all NaN gives 0. Non-floats as they are."""
    if not np.issubdtype(np.dtype(x.dtype), np.floating):
        return x
    fill = -np.inf if fn == "argmax" else np.inf
    return xp.where(xp.isnan(x), xp.asarray(fill, dtype=x.dtype), x)


def _arg_eager(fn, op_type):
    def eager(xp, x, dim, *, output_type):
        a = _arg_axis(dim, x.ndim, op_type)
        _check_nonempty(x.shape, a, op_type)
        return xp.astype(getattr(xp, fn)(_without_nan(xp, x, fn), axis=a), output_type.np_dtype)

    return eager


def _arg_lower(fn, op_type):
    def lower(ctx, x, dim, *, output_type):
        x = ctx.as_dask(x)
        a = _arg_axis(ctx.host_value(dim, "dimension"), x.ndim, op_type)
        _check_nonempty(ctx.known_shape(x), a, op_type)
        if np.issubdtype(x.dtype, np.floating):
            x = ctx.da.where(ctx.da.isnan(x), -np.inf if fn == "argmax" else np.inf, x).astype(x.dtype)
        return getattr(ctx.da, fn)(x, axis=a).astype(output_type.np_dtype)

    return lower


for _type, _fn in [("ArgMax", "argmax"), ("ArgMin", "argmin")]:
    register_op(_type, _arg_infer(_type), eager=_arg_eager(_fn, _type), lower=_arg_lower(_fn, _type),
                grad=no_gradient)


def _arg(op_type, input, axis, name, dimension, output_type):  # noqa: A002 - TF1 signature
    axis = _pick(axis, dimension, "axis", "dimension")
    if axis is None:
        axis = 0  # TF1: argmax over the first axis by default
    output_type = as_dtype(output_type)
    if output_type not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"{op_type}: output_type must be int32 or int64, got {output_type.name}")
    x = convert_to_tensor(input)
    with name_scope(name, op_type, [x]) as scope:
        if not isinstance(axis, Tensor) and np.ndim(axis) == 1 and np.size(axis) == 1:
            axis = np.asarray(axis).reshape(())
        dim = _axis_tensor(axis, "dimension")
        if dim.shape.ndims not in (None, 0):
            raise ValueError(f"{op_type}: axis must be a scalar, got shape {dim.shape}")
        return apply_op(op_type, [x, dim], {"output_type": output_type}, name=scope)


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    """Index of the largest value along `axis` (default 0; op `ArgMax`), ties to the first.

    The axis is removed from the shape; dtype `output_type` (int64 or int32). NaN follows numpy
    (the first NaN wins). ValueError for an axis out of range, and at run time for an empty axis.
    """
    return _arg("ArgMax", input, axis, name, dimension, output_type)


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    """Index of the smallest value along `axis` (default 0; op `ArgMin`); as `argmax`."""
    return _arg("ArgMin", input, axis, name, dimension, output_type)


def arg_max(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002 - TF1 signature
    """TF1's `tf.arg_max` (the raw op's signature): `argmax(input, axis=dimension)`."""
    return _arg("ArgMax", input, dimension, name, None, output_type)


def arg_min(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002 - TF1 signature
    """TF1's `tf.arg_min` (the raw op's signature): `argmin(input, axis=dimension)`."""
    return _arg("ArgMin", input, dimension, name, None, output_type)


# ---- cumsum --------------------------------------------------------------------------------------


def _cumsum_infer(inputs, attrs):
    x, axis = inputs
    check_dtype(x, NUMERIC, "Cumsum")
    value = constant_value(axis)
    if x.shape.ndims == 0:
        raise ValueError("Cumsum: the input must have rank at least 1, got a scalar")
    if value is not None and x.shape.ndims is not None:
        _arg_axis(value, x.shape.ndims, "Cumsum")
    return x.shape, x.dtype


def _cumsum_eager(xp, x, axis, *, exclusive, reverse):
    a = _arg_axis(axis, x.ndim, "Cumsum")
    if reverse:
        x = xp.flip(x, axis=a)
    out = xp.cumulative_sum(x, axis=a, dtype=x.dtype, include_initial=exclusive)
    if exclusive:
        out = out[(slice(None),) * a + (slice(0, -1),)]
    return xp.flip(out, axis=a) if reverse else out


def _cumsum_lower(ctx, x, axis, *, exclusive, reverse):
    da = ctx.da
    x = ctx.as_dask(x)
    a = _arg_axis(ctx.host_value(axis, "axis"), x.ndim, "Cumsum")
    if reverse:
        x = da.flip(x, axis=a)
    out = da.cumsum(x, axis=a, dtype=x.dtype)
    if exclusive and x.shape[a]:
        # shift by one along the axis: an exact 0 first, no cancellation as in `cumsum - x`
        head = da.zeros_like(x[(slice(None),) * a + (slice(0, 1),)])
        out = da.concatenate([head, out[(slice(None),) * a + (slice(0, -1),)]], axis=a)
    return da.flip(out, axis=a) if reverse else out


def _cumsum_grad(op, g):
    rev = not op.get_attr("reverse")
    return _axes_grad(op, cumsum(g, op.inputs[1], exclusive=op.get_attr("exclusive"), reverse=rev))


register_op("Cumsum", _cumsum_infer, eager=_cumsum_eager, lower=_cumsum_lower, grad=_cumsum_grad)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative sum along `axis` (op `Cumsum`); same shape and dtype as `x`.

    `exclusive`: the i-th output sums the elements before i (starts at 0). `reverse`: sums from
    the end. ValueError for an axis out of range; TypeError for bool or a non-integer axis.
    """
    x = convert_to_tensor(x)
    with name_scope(name, "Cumsum", [x]) as scope:
        axis_t = _axis_tensor(axis, "axis")
        if axis_t.shape.ndims not in (None, 0):
            raise ValueError(f"Cumsum: axis must be a scalar, got shape {axis_t.shape}")
        return apply_op("Cumsum", [x, axis_t], {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                        name=scope)


# ---- count_nonzero (composite, as TF1) ------------------------------------------------------------


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None, input=None):  # noqa: A002 - TF1 signature
    """Number of non-zero (true) elements along `axis`, as `dtype` (default int64).

    Built as TF1 does: NotEqual(x, 0) -> Cast(int64) -> Sum. Axis rules as `reduce_sum`.
    """
    input_tensor = _pick(input_tensor, input, "input_tensor", "input")
    axis = _pick(axis, reduction_indices, "axis", "reduction_indices")
    keepdims = bool(_pick(keepdims, keep_dims, "keepdims", "keep_dims"))
    with name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor)
        zero = constant(np.zeros((), dtype=x.dtype.np_dtype), name="zeros")
        counts = reduce_sum(cast(not_equal(x, zero), dtypes.int64), axis=axis, keepdims=keepdims)
        return cast(counts, dtype)



# ---- composites (tf.math.reduce_variance, reduce_std, reduce_euclidean_norm) ---------------------


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Mean squared deviation from the mean over `axis` (TF1's tf.math.reduce_variance).

    Built as reduce_mean(square(x - reduce_mean(x, axis, keepdims=True))): on data larger than a
    stage the compiler computes it in the mean's own pass (dflow/schedule/moments.py)."""
    x = convert_to_tensor(input_tensor)
    with name_scope(name, "reduce_variance", [x]) as scope:
        mean = reduce_mean(x, axis, keepdims=True)
        return reduce_mean(square(subtract(x, mean)), axis, keepdims=keepdims, name=scope)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """Standard deviation over `axis`: sqrt(reduce_variance) (TF1's tf.math.reduce_std)."""
    with name_scope(name, "reduce_std", [input_tensor]) as scope:
        return sqrt(reduce_variance(input_tensor, axis, keepdims), name=scope)


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(x**2)) over `axis` (TF1's tf.math.reduce_euclidean_norm)."""
    x = convert_to_tensor(input_tensor)
    with name_scope(name, "reduce_euclidean_norm", [x]) as scope:
        return sqrt(reduce_sum(square(x), axis, keepdims=keepdims), name=scope)
