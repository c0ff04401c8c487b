"""Array manipulation ops: transpose, expand_dims, squeeze, concat, unstack, split, reverse and add_n,
with their gradient rules. Filled arrays (zeros, ones, fill, range, linspace: `creation_ops`) live in
their own module and are re-exported here; tiling and padding are `pad_ops` (above this module:
their gradients use concat, split, transpose and reverse).

Shape-like arguments (axes, perms, split sizes) are int tensors known on the host when the plan is
compiled (see `creation_ops`). Gradient rules build public ops only, so gradients are differentiable
again; they give the input's static shape, and work from run-time shapes where it is not known.
"""

from __future__ import annotations

import functools

import numpy as np

from ..graph import dtypes
from ..graph.evaluate import FOLD_MAX_ELEMENTS
from ..graph.graph import name_scope
from ..graph.ops import constant_value
from ..graph.registry import def_bind, def_grad, not_differentiable, register_op
from ..graph.shape import TensorShape, unknown_shape
from .array_ops import identity, partial_shape_value, reshape, stack
from .array_ops import rank as rank_of
from .array_ops import shape as shape_of
from .common import apply_op, convert_to_tensor, graph_of, normalize_axis
from .creation_ops import (
    _check_rank,
    _dims,
    _int_input,
    _ints,
    _is_tensor,
    _pyrange,
    _static_scalar,
    _tensor,
    zeros_like,
)
from .gather_ops import gather
from .math_ops import cast

__all__ = ["broadcast_to", "transpose", "invert_permutation", "expand_dims", "squeeze", "concat", "unstack", "split",
           "reverse", "reverse_v2", "add_n"]


def _outputs(arrays):
    # A single-output op's kernel returns the bare array (the eager plan stores it as is).
    return arrays[0] if len(arrays) == 1 else tuple(arrays)


def _create_multi(op_type, inputs, attrs, name):
    """Creates a multi-output op; always returns the list of its outputs (even of one)."""
    return graph_of(inputs).create_op(op_type, inputs, attrs, name=name).outputs


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
    if not isinstance(x, ctx.da.Array) and np.size(x) <= FOLD_MAX_ELEMENTS:
        # A small host value (shape arithmetic, e.g. Tile's gradient) stays known on the host.
        return _transpose_eager(np, np.asarray(x), perm, conjugate)
    x = ctx.as_dask(x)
    y = x.transpose(_perm_of(x, None if perm is None else ctx.host_value(perm, "Transpose perm")))
    return y.conj() if conjugate else y


register_op("Transpose", _transpose_infer, eager=_transpose_eager, lower=_transpose_lower)


@def_bind("Transpose")
def _transpose_bind(op, known):
    ndim = op.inputs[0].shape.ndims
    if 1 not in known or ndim is None:
        return None
    perm = tuple(_norm_perm(_ints(known[1]), ndim, op.inputs[0].shape))
    return lambda xp, x: xp.permute_dims(x, perm)
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


def _invert_permutation_infer(inputs, attrs):
    (x,) = inputs
    _check_rank(x, 1, "InvertPermutation", "x")
    if x.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"InvertPermutation: x must be int32 or int64, got {x.dtype.name} ({x.name!r})")
    return x.shape, x.dtype


def _invert_permutation(x):
    # A permutation is shape arithmetic: computed on the host with numpy, as Shape's value is.
    p = _ints(x)
    if sorted(p) != list(_pyrange(len(p))):
        raise ValueError(f"InvertPermutation: {p} is not a permutation of 0..{len(p) - 1}")
    return np.argsort(np.asarray(p)).astype(np.asarray(x).dtype)


register_op("InvertPermutation", _invert_permutation_infer, eager=lambda xp, x: _invert_permutation(x),
            lower=lambda ctx, x: _invert_permutation(ctx.host_value(x, "InvertPermutation x")))


def invert_permutation(x, name=None):
    """y with y[x[i]] = i, for a 1-D int32/int64 permutation x of 0..n-1 (known on the host when
    the plan is compiled). ValueError (InvalidArgumentError at run time) if x is not a permutation."""
    with name_scope(name, "InvertPermutation", [x]) as scope:
        return apply_op("InvertPermutation", [_int_input(x, "x", "InvertPermutation")], name=scope)


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


@def_bind("ExpandDims")
def _expand_dims_bind(op, known):
    ndim = op.inputs[0].shape.ndims
    if 1 not in known or ndim is None:
        return None
    index = (slice(None),) * _expand_axis(_ints(known[1])[0], ndim, op.inputs[0].shape) + (None,)
    return lambda xp, x: x[index]


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


def _check_concat(shapes, a):
    """TF1's run-time ConcatOp checks, in its words (numpy's and dask's are worse: '%s')."""
    first = shapes[0]
    dims = lambda sh: ",".join(str(int(d)) if d == d else "?" for d in sh)  # noqa: E731
    for i, sh in enumerate(shapes[1:], 1):
        if len(sh) != len(first):
            raise ValueError(f"ConcatOp : Ranks of all input tensors should match: shape[0] = [{dims(first)}] vs. "
                             f"shape[{i}] = [{dims(sh)}]")
        if any(j != a and d == d and e == e and d != e for j, (d, e) in enumerate(zip(first, sh))):
            raise ValueError(f"ConcatOp : Dimensions of inputs should match: shape[0] = [{dims(first)}] vs. "
                             f"shape[{i}] = [{dims(sh)}]")


def _concat_eager(xp, *args):
    a = _concat_axis(args[-1], args[0].ndim)
    _check_concat([v.shape for v in args[:-1]], a)
    return xp.concat(args[:-1], axis=a)


def _concat_lower(ctx, *args):
    values = [ctx.as_dask(v) for v in args[:-1]]
    a = _concat_axis(ctx.host_value(args[-1], "ConcatV2 axis"), args[0].ndim)
    _check_concat([v.shape for v in values], a)
    return ctx.da.concatenate(values, axis=a)


register_op("ConcatV2", _concat_infer, eager=_concat_eager, lower=_concat_lower)


@def_bind("ConcatV2")
def _concat_bind(op, known):
    n = len(op.inputs) - 1
    ndim = op.inputs[0].shape.ndims
    if set(known) != {n} or ndim is None:
        return None
    a = _concat_axis(known[n], ndim)
    return lambda xp, *values: xp.concat(values, axis=a)


def concat(values, axis, name="concat"):
    """`values` (tensors of one rank and dtype) joined along `axis`; the other dims must match.

    TypeError for mixed dtypes; ValueError for mixed ranks, mismatched dims or scalars.
    """
    if not isinstance(values, (list, tuple)):
        values = [values]
    if not values:
        raise ValueError("List argument 'values' to 'ConcatV2' Op with length 0 shorter than minimum length 2.")
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


@def_bind("SplitV")
def _splitv_bind(op, known):
    x = op.inputs[0]
    if set(known) != {1, 2} or not x.shape.is_fully_defined():
        return None
    dims = x.shape.as_list()
    a = normalize_axis(_ints(known[2])[0], len(dims), "SplitV")
    bounds = np.cumsum([0] + _split_sizes(_ints(known[1]), dims[a], "SplitV")).tolist()
    index = [(slice(None),) * a + (slice(b, e),) for b, e in zip(bounds[:-1], bounds[1:])]
    return lambda xp, x: _outputs([x[i] for i in index])


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


# ---- reverse ------------------------------------------------------------------------------------------


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
    if not (dt.is_numeric or dt == dtypes.variant):  # variants: TensorArray gradients, summed index by index
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


# ---- gradient rules --------------------------------------------------------------------------------


def _reshape_like(g, x):
    """`g` reshaped to x's shape: static where known, else x's run-time shape."""
    return reshape(g, x.shape.as_list() if x.shape.is_fully_defined() else shape_of(x))


@def_grad("Transpose", "ConjugateTranspose")
def _transpose_grad(op, g):
    conj = op.type == "ConjugateTranspose"
    if len(op.inputs) == 1:  # no perm: the dims were reversed; reversing again undoes it
        return [transpose(g, conjugate=conj)]
    perm = constant_value(op.inputs[1])
    if perm is None:
        inverse = invert_permutation(op.inputs[1])
    else:
        perm = _ints(perm)
        inverse = np.argsort([p % len(perm) for p in perm]).tolist()
    return [transpose(g, inverse, conjugate=conj), None]


def_grad("ExpandDims")(lambda op, g: [_reshape_like(g, op.inputs[0]), None])
def_grad("Squeeze")(lambda op, g: [_reshape_like(g, op.inputs[0])])
def_grad("ReverseV2")(lambda op, g: [reverse(g, op.inputs[1]), None])
def_grad("AddN")(lambda op, g: [g] * len(op.inputs))
def_grad("Split")(lambda op, *gs: [None, concat(list(gs), op.inputs[0])])
def_grad("SplitV")(lambda op, *gs: [concat(list(gs), op.inputs[2]), None, None])
not_differentiable("InvertPermutation")


@def_grad("Unpack")
def _unpack_grad(op, *grads):
    grads = [zeros_like(t) if g is None else g for t, g in zip(op.outputs, grads)]
    return [stack(grads, axis=op.get_attr("axis"))]


@def_grad("ConcatV2")
def _concat_grad(op, g):
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    a, r = _static_scalar(axis_t), g.shape.ndims
    if a is not None and r is not None:  # each input's size along the axis: static, else run-time
        a = normalize_axis(a, r, "ConcatV2")
        sizes = [v.shape.as_list()[a] if v.shape.ndims is not None and v.shape.as_list()[a] is not None
                 else shape_of(v)[a] for v in values]
    else:
        a = axis_t % cast(rank_of(g), axis_t.dtype)
        sizes = [gather(shape_of(v, out_type=axis_t.dtype), a) for v in values]
    return split(g, sizes, axis=a) + [None]


# ---- BroadcastTo ------------------------------------------------------------------------------
def _broadcast_to_infer(inputs, attrs):
    x, shape = inputs
    if not shape.dtype.is_integer:
        raise TypeError(f"BroadcastTo: shape must be an integer tensor, got {shape.dtype.name}")
    target = partial_shape_value(shape)
    if target is None:
        n = shape.shape.num_elements() if shape.shape.ndims == 1 else None
        return (unknown_shape() if n is None else TensorShape([None] * n)), x.dtype
    out = TensorShape(target)
    if x.shape.ndims is not None:
        if x.shape.ndims > len(target):
            raise ValueError(f"BroadcastTo: cannot broadcast a tensor of shape {x.shape} to {out}")
        for d, t in zip(reversed(x.shape.as_list()), reversed(target)):
            if d is not None and t is not None and d not in (1, t):
                raise ValueError(f"BroadcastTo: cannot broadcast a tensor of shape {x.shape} to {out}")
    return out, x.dtype


def _broadcast_to_lower(ctx, x, shape):
    target = tuple(int(d) for d in ctx.host_value(shape, "BroadcastTo shape").reshape(-1))
    return ctx.da.broadcast_to(ctx.as_dask(x), target)


register_op("BroadcastTo", _broadcast_to_infer,
            eager=lambda xp, x, shape: xp.broadcast_to(x, tuple(int(d) for d in np.asarray(shape).reshape(-1))),
            lower=_broadcast_to_lower)
def_grad("BroadcastTo")(lambda op, g: [apply_op("SumToShape", [g, apply_op("Shape", [op.inputs[0]], {"out_type": dtypes.int32})]), None])


def broadcast_to(input, shape, name=None):  # noqa: A002 - TF1 signature
    """`input` broadcast to `shape` (numpy broadcasting rules)."""
    x = convert_to_tensor(input)
    shape = convert_to_tensor(shape, dtype=dtypes.int32) if not hasattr(shape, "op") else shape
    return apply_op("BroadcastTo", [x, shape], name=name, default_name="BroadcastTo")
