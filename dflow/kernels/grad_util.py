"""Helpers gradient rules share: undoing broadcasting, and `BroadcastGradientArgs`.

`unbroadcast(g, x)` sums the gradient `g` of a broadcast result back to the shape of the input
`x` (the one shared helper every elementwise rule uses, as autograd's `unbroadcast_f`). With
static shapes the axes are computed when the gradient is built; otherwise a
`BroadcastGradientArgs` op computes them from the run-time shapes (known on the host).
"""

from __future__ import annotations

import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.ops import constant_value
from ..graph.registry import register_op
from ..graph.shape import TensorShape
from .array_ops import reshape, shape
from .common import apply_op, constant


def broadcast_reduction_axes(shape_x, shape_y):
    """(axes to sum for x, axes to sum for y) to undo broadcasting shapes x and y together."""
    sx, sy = list(shape_x), list(shape_y)
    n = max(len(sx), len(sy))
    px, py = [1] * (n - len(sx)) + sx, [1] * (n - len(sy)) + sy
    rx = [i for i in range(n) if px[i] == 1 and py[i] != 1 or i < n - len(sx)]
    ry = [i for i in range(n) if py[i] == 1 and px[i] != 1 or i < n - len(sy)]
    return np.array(rx, dtype=np.int32), np.array(ry, dtype=np.int32)


def _bga_infer(inputs, attrs):
    return [(TensorShape([None]), dtypes.int32), (TensorShape([None]), dtypes.int32)]


def _bga_eager(xp, s0, s1):
    return broadcast_reduction_axes(np.asarray(s0).tolist(), np.asarray(s1).tolist())


def _bga_lower(ctx, s0, s1):
    return _bga_eager(None, ctx.host_value(s0, "shape"), ctx.host_value(s1, "shape"))


register_op("BroadcastGradientArgs", _bga_infer, eager=_bga_eager, lower=_bga_lower, num_outputs=2)


def _sum_to_infer(inputs, attrs):
    g, s = inputs
    value = constant_value(s)
    if value is not None:
        return TensorShape([int(d) for d in np.asarray(value).ravel()]), g.dtype
    n = s.shape.as_list()[0] if s.shape.ndims == 1 else None
    return (TensorShape([None] * n) if n is not None else TensorShape(None)), g.dtype


def _sum_to(xp, g, target):
    """`g` summed over the axes along which `target` (a shape) was broadcast, then given that shape."""
    target = [int(d) for d in np.asarray(target).ravel()]
    if list(g.shape) == target:
        return g
    rx, _ = broadcast_reduction_axes(target, list(g.shape))
    out = xp.sum(g, axis=tuple(int(a) for a in rx)) if len(rx) else g
    return xp.reshape(out, tuple(target))


def _sum_to_lower(ctx, g, target):
    target = ctx.host_value(target, "shape")
    g = ctx.as_dask(g)
    return _sum_to(ctx.xp, g, target)


register_op("SumToShape", _sum_to_infer, eager=_sum_to, lower=_sum_to_lower)


def _reduce_sum(x, axis):
    """Sum over the int `axis` list, made by its registered type (reduction_ops is above this module)."""
    with name_scope(None, "Sum", [x]) as scope:
        return apply_op("Sum", [x, constant(np.array(axis, dtype=np.int32), name="Const")], {"keep_dims": False},
                        name=scope)


def unbroadcast(grad, x):
    """`grad` (of a result broadcast from `x`) summed back to x's shape."""
    reduce_sum = _reduce_sum
    xs, gs = x.shape, grad.shape
    if xs.is_fully_defined() and gs.is_fully_defined():
        if xs.as_list() == gs.as_list():
            return grad
        rx, _ = broadcast_reduction_axes(xs.as_list(), gs.as_list())
        out = reduce_sum(grad, [int(a) for a in rx]) if len(rx) else grad
        return reshape(out, xs.as_list()) if out.shape.as_list() != xs.as_list() else out
    if xs.ndims is not None and gs.ndims is not None and xs.ndims == gs.ndims and all(
            a is not None and a == b for a, b in zip(xs.as_list(), gs.as_list())):
        return grad
    if xs.is_fully_defined() and gs.ndims is not None and gs.ndims >= xs.ndims:
        # x's shape alone fixes the axes: its leading dims and its size-1 dims (summing a dim
        # that turns out to be 1 in g too is harmless), so no run-time shape ops are needed
        dims, n = xs.as_list(), gs.ndims
        lead, gl = n - len(dims), gs.as_list()
        rx = [i for i in range(n) if i < lead or (dims[i - lead] == 1 and gl[i] != 1)]
        out = reduce_sum(grad, rx) if rx else grad
        return reshape(out, dims) if out.shape.as_list() != dims else out
    # shapes known only when the plan is built: one op sums to x's run-time shape (TF1 uses
    # Shape, Shape, BroadcastGradientArgs, Sum, Shape and Reshape for this)
    out = apply_op("SumToShape", [grad, shape(x)])
    out.set_shape(xs)  # what is static of x's shape stays known
    return out


def broadcast_like(t, x):
    """`t` broadcast to the shape of `x`, by an elementwise product with ones: it fuses with its
    neighbours and takes `x`'s chunks (Tile would cut one chunk per copy)."""
    if t.shape.is_fully_defined() and x.shape.is_fully_defined() and t.shape.as_list() == x.shape.as_list():
        return t
    with name_scope(None, "ones_like", [x]) as scope:
        ones = apply_op("OnesLike", [x], {"dtype": t.dtype}, name=scope)
    return t * ones


def _sum_to_grad(op, dy):
    return [broadcast_like(dy, op.inputs[0]), None]


from ..graph.registry import def_grad  # noqa: E402

def_grad("SumToShape")(_sum_to_grad)
