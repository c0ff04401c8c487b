"""`cumprod` (TF1's Cumprod): the cumulative product along an axis, beside Cumsum (reduction_ops).

`exclusive` starts at 1 (the i-th output multiplies the elements before i), `reverse` multiplies
from the end. On Dask it is `da.cumprod` (one pass over the chunks of the axis). The gradient is
TF 1.15's math_grad rule: cumsum(cumprod(x) * g) in the other direction, divided by x (like TF1,
undefined where x holds a zero).
"""

from __future__ import annotations

from ..graph.graph import name_scope
from ..graph.registry import def_grad, register_op
from .common import NUMERIC, apply_op, check_dtype, convert_to_tensor
from .math_ops import multiply, realdiv
from .reduction_ops import _arg_axis, _axis_tensor, _cumsum_infer, cumsum

__all__ = ["cumprod"]


def _cumprod_infer(inputs, attrs):
    check_dtype(inputs[0], NUMERIC, "Cumprod")
    return _cumsum_infer(inputs, attrs)


def _shift_in_ones(xp, out, a):
    """`out` moved one step along axis `a`, a 1 entering first (an exclusive product)."""
    head = xp.ones_like(out[(slice(None),) * a + (slice(0, 1),)])
    return xp.concatenate([head, out[(slice(None),) * a + (slice(0, -1),)]], axis=a)


def _cumprod_eager(xp, x, axis, *, exclusive, reverse):
    a = _arg_axis(axis, x.ndim, "Cumprod")
    if reverse:
        x = xp.flip(x, axis=a)
    out = xp.cumulative_prod(x, axis=a, dtype=x.dtype)
    if exclusive and x.shape[a]:
        out = _shift_in_ones(xp, out, a)
    return xp.flip(out, axis=a) if reverse else out


def _cumprod_lower(ctx, x, axis, *, exclusive, reverse):
    da = ctx.da
    x = ctx.as_dask(x)
    a = _arg_axis(ctx.host_value(axis, "axis"), x.ndim, "Cumprod")
    if reverse:
        x = da.flip(x, axis=a)
    out = da.cumprod(x, axis=a, dtype=x.dtype)
    if exclusive and x.shape[a]:
        out = _shift_in_ones(da, out, a)
    return da.flip(out, axis=a) if reverse else out


register_op("Cumprod", _cumprod_infer, eager=_cumprod_eager, lower=_cumprod_lower)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative product along `axis` (op `Cumprod`); same shape and dtype as `x`.

    `exclusive`: the i-th output multiplies the elements before i (starts at 1). `reverse`:
    multiplies from the end. ValueError for an axis out of range; TypeError for bool.
    """
    x = convert_to_tensor(x, name="x")
    with name_scope(name, "Cumprod", [x]) as scope:
        axis_t = _axis_tensor(axis, "axis")
        if axis_t.shape.ndims not in (None, 0):
            raise ValueError(f"Cumprod: axis must be a scalar, got shape {axis_t.shape}")
        return apply_op("Cumprod", [x, axis_t], {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                        name=scope)


@def_grad("Cumprod")
def _cumprod_grad(op, g):
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = cumsum(multiply(prod, g), axis, exclusive=exclusive, reverse=not reverse)
    return [realdiv(out, x), None]
