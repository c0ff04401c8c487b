"""Tiling and padding: tile, pad (CONSTANT, REFLECT, SYMMETRIC), with their gradient rules.

The gradients undo the op with splits, reversals and sums (no dedicated gradient ops), so they are
differentiable again: Tile's sums the copies (reshape to [m0, d0, m1, d1, ...], sum the m axes);
Pad's takes the interior; MirrorPad's adds each mirrored border back onto the cells it copied.
"""

from __future__ import annotations

import math

import array_api_compat
import numpy as np

from ..graph.graph import name_scope
from ..graph.ops import constant_value
from ..graph.registry import def_bind, def_grad, register_op
from ..graph.shape import TensorShape, unknown_shape
from .array_ops import reshape, shape, size, stack
from .common import apply_op, check_allocation
from .creation_ops import (
    _check_rank,
    _dims,
    _int_input,
    _ints,
    _is_tensor,
    _partial_shape,
    _pyrange,
    _tensor,
)
from .creation_ops import range as _range
from .manip_ops import concat, reverse, split, transpose
from .reduction_ops import reduce_sum

__all__ = ["tile", "pad"]

# ---- tile --------------------------------------------------------------------------------------------


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


def _tile_eager(xp, x, mult):
    reps = _tile_reps(x, mult)
    check_allocation([d * r for d, r in zip(x.shape, reps)], x.dtype, "Tile")
    return xp.tile(x, reps)


# at most this many copies are concatenated block by block; more, and the copies are a broadcast
_CONCAT_COPIES = 64


def _tile_lower(ctx, x, mult):
    """Copies of the input's chunks, concatenated (dask's tile), for a few copies; for many, the
    input (in one chunk) broadcast along a new axis before each of its own and reshaped, chunked
    like any value of the output's size: dask's tile builds one block per copy (2 M copies: a
    graph that took minutes to build)."""
    x = ctx.as_dask(x)
    reps = _tile_reps(x, ctx.host_value(mult, "Tile multiples"))
    copies = math.prod(reps)
    if copies <= _CONCAT_COPIES or not x.ndim or 0 in x.shape:
        return ctx.da.tile(x, reps)
    x = x.rechunk(-1)
    out_shape = tuple(int(d) * r for d, r in zip(x.shape, reps))
    row = ctx.default_chunks(out_shape, x.dtype)
    # the broadcast's axes (r0, d0, r1, d1, ...): each input axis whole, each copy axis chunked so a
    # block of the output is about the default chunk's size
    chunks = []
    for d, r, c in zip(x.shape, reps, row):
        per = max(1, max(c) // max(1, int(d)))
        chunks += [tuple(min(per, r - i) for i in range(0, r, per)) or (0,), (int(d),)]
    wide = x.reshape(tuple(v for d in x.shape for v in (1, int(d))))
    wide = ctx.da.broadcast_to(wide, tuple(v for d, r in zip(x.shape, reps) for v in (r, int(d))), chunks=tuple(chunks))
    return wide.reshape(out_shape)


register_op("Tile", _tile_infer, eager=_tile_eager, lower=_tile_lower)


def tile(input, multiples, name=None):  # noqa: A002 - TF1 signature
    """`input` repeated multiples[i] times along dim i; ValueError if len(multiples) != rank."""
    with name_scope(name, "Tile", [input]) as scope:
        input = _tensor(input, name="input")
        return apply_op("Tile", [input, _int_input(multiples, "multiples", "Tile")], name=scope)


# ---- pad ---------------------------------------------------------------------------------------------

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


def _pad_constant_eager(xp, x, paddings, value=None):
    """The constant pad as one filled array and one slice assignment (numpy's `pad` walks its
    arguments in Python, the larger part of a small gradient step's pads)."""
    return _padded(xp, x, _pads(x, paddings), value)


def _padded(xp, x, pads, value):
    shape = tuple(d + b + a for d, (b, a) in zip(x.shape, pads))
    if type(x) is np.ndarray and value is None:
        out = np.zeros(shape, x.dtype)
    else:
        out = xp.full(shape, 0 if value is None else value, dtype=x.dtype, device=array_api_compat.device(x))
    out[tuple(slice(b, -a if a else None) for b, a in pads)] = x
    return out


register_op("Pad", _pad_infer, eager=_pad_constant_eager, lower=_pad_constant_lower)
register_op("PadV2", _pad_infer, eager=_pad_constant_eager, lower=_pad_constant_lower)


@def_bind("Pad", "PadV2")
def _pad_bind(op, known):
    ndim = op.inputs[0].shape.ndims
    if set(known) != set(range(1, len(op.inputs))) or ndim is None:
        return None
    flat = _ints(known[1])
    pads = _check_pads([flat[i:i + 2] for i in _pyrange(0, len(flat), 2)], [None] * ndim, None, op.type)
    value = known.get(2)
    return lambda xp, x: _padded(xp, x, pads, value)
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


# ---- gradient rules ----------------------------------------------------------------------------------


@def_grad("Tile")
def _tile_grad(op, g):
    x, mult_t = op.inputs
    dims, mult = _dims(x.shape), _partial_shape(mult_t)
    if dims == []:
        return [g, None]
    if dims is not None and mult is not None and None not in dims + mult:
        split_shape = [v for m, d in zip(mult, dims) for v in (m, d)]
        return [reduce_sum(reshape(g, split_shape), axis=list(_pyrange(0, 2 * len(dims), 2))), None]
    # Run-time shapes: interleave multiples and dims, then sum every other axis.
    split_shape = reshape(transpose(stack([mult_t, shape(x, out_type=mult_t.dtype)])), [-1])
    axes = list(_pyrange(0, 2 * len(dims), 2)) if dims is not None else _range(0, size(split_shape), 2)
    dx = reduce_sum(reshape(g, split_shape), axis=axes)
    dx.set_shape(x.shape)
    return [dx, None]


def _pad_amounts(op):
    """Per dim (before, after): Python ints where known when building, else scalar int tensors."""
    x, pads_t = op.inputs[:2]
    p = constant_value(pads_t)
    if p is not None:
        return [(int(b), int(a)) for b, a in np.asarray(p).reshape(-1, 2).tolist()]
    rank = x.shape.ndims if x.shape.ndims is not None else pads_t.shape.dims and pads_t.shape.dims[0].value
    if rank is None:
        raise ValueError(f"{op.type} gradient needs the rank of the input or of the paddings ({op.name!r})")
    return [(pads_t[i, 0], pads_t[i, 1]) for i in _pyrange(rank)]


def _cut(t, axis, sizes):
    """`t` split along `axis` into `sizes` (one -1); a size that is a Python 0 gives None."""
    keep = [_is_tensor(s) or s != 0 for s in sizes]
    parts = iter(split(t, [s for s, k in zip(sizes, keep) if k], axis=axis) if sum(keep) > 1 else [t])
    return [next(parts) if k else None for k in keep]


def _interior(op, g):
    """The part of `g` (the gradient of a pad's output) over the unpadded input."""
    for i, (b, a) in enumerate(_pad_amounts(op)):
        g = _cut(g, i, [b, -1, a])[1]
    g.set_shape(op.inputs[0].shape)
    return g


@def_grad("Pad")
def _pad_grad(op, g):
    return [_interior(op, g), None]


@def_grad("PadV2")
def _pad_v2_grad(op, g):
    # TF1 gives constant_values no gradient; every padded cell holds it, so its gradient is their sum.
    dx = _interior(op, g)
    return [dx, None, reduce_sum(g) - reduce_sum(dx)]


@def_grad("MirrorPad")
def _mirror_pad_grad(op, g):
    edge = 1 if op.get_attr("mode") == "REFLECT" else 0  # REFLECT's mirror skips the edge cell
    for i, (b, a) in enumerate(_pad_amounts(op)):
        before, g, after = _cut(g, i, [b, -1, a])
        if before is not None:  # before[k] copied input cell edge + b - 1 - k
            head, mid, tail = _cut(g, i, [edge, b, -1])
            g = concat([p for p in (head, mid + reverse(before, [i]), tail) if p is not None], i)
        if after is not None:  # after[k] copied input cell n - 1 - edge - k
            head, mid, tail = _cut(g, i, [-1, a, edge])
            g = concat([p for p in (head, mid + reverse(after, [i]), tail) if p is not None], i)
    g.set_shape(op.inputs[0].shape)
    return [g, None]
