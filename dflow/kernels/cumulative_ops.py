"""`cumprod` (TF1's Cumprod): the cumulative product along an axis, beside Cumsum (reduction_ops),
and `cumulative_logsumexp` (TF's CumulativeLogsumexp: numpy's logaddexp.accumulate, the axis
gathered into one chunk on Dask; its gradient is TF's, in log space).

`exclusive` starts at 1 (the i-th output multiplies the elements before i), `reverse` multiplies
from the end. On Dask it is `da.cumprod` (one pass over the chunks of the axis). The gradient is
TF 1.15's math_grad rule: cumsum(cumprod(x) * g) in the other direction, divided by x (like TF1,
undefined where x holds a zero).
"""

from __future__ import annotations

import numpy as np

from ..graph.graph import name_scope
from ..graph.registry import def_grad, register_op
from .common import NUMERIC, apply_op, check_dtype, convert_to_tensor
from .math_ops import exp, greater, less, log, multiply, realdiv, where
from .reduction_ops import _arg_axis, _axis_tensor, _cumsum_infer, cumsum

__all__ = ["cumprod"]  # cumulative_logsumexp is tf.math only (dflow/math.py)


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


# ---- cumulative_logsumexp (TF's CumulativeLogsumexp) -----------------------------------------------


def _logsumexp_infer(inputs, attrs):
    check_dtype(inputs[0], "f", "CumulativeLogsumexp")
    return _cumsum_infer(inputs, attrs)


def _logsumexp_along(x, a, exclusive, reverse):
    """log(cumsum(exp(x))) along axis `a` by logaddexp, so no term under- or overflows (numpy)."""
    x = np.asarray(x)
    if reverse:
        x = np.flip(x, axis=a)
    out = np.logaddexp.accumulate(x, axis=a) if x.shape[a] else x.copy()
    if exclusive and x.shape[a]:
        head = np.full_like(out[(slice(None),) * a + (slice(0, 1),)], -np.inf)
        out = np.concatenate([head, out[(slice(None),) * a + (slice(0, -1),)]], axis=a)
    return np.flip(out, axis=a) if reverse else out


def _logsumexp_eager(xp, x, axis, *, exclusive, reverse):
    a = _arg_axis(axis, x.ndim, "CumulativeLogsumexp")
    return xp.asarray(_logsumexp_along(x, a, exclusive, reverse))


def _logsumexp_lower(ctx, x, axis, *, exclusive, reverse):
    x = ctx.as_dask(x)
    a = _arg_axis(ctx.host_value(axis, "axis"), x.ndim, "CumulativeLogsumexp")
    # the axis whole in each block, the other axes keep their chunks
    return x.rechunk({a: -1}).map_blocks(_logsumexp_along, a, exclusive, reverse, dtype=x.dtype)


register_op("CumulativeLogsumexp", _logsumexp_infer, eager=_logsumexp_eager, lower=_logsumexp_lower)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along `axis`, computed without overflow (op `CumulativeLogsumexp`);
    float16/32/64, same shape and dtype as `x`. `exclusive` starts at -inf (log 0); `reverse`
    accumulates from the end. ValueError for an axis out of range; TypeError for other dtypes."""
    x = convert_to_tensor(x, name="x")
    with name_scope(name, "CumulativeLogsumexp", [x]) as scope:
        axis_t = _axis_tensor(axis, "axis")
        if axis_t.shape.ndims not in (None, 0):
            raise ValueError(f"CumulativeLogsumexp: axis must be a scalar, got shape {axis_t.shape}")
        return apply_op("CumulativeLogsumexp", [x, axis_t], {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                        name=scope)


@def_grad("CumulativeLogsumexp")
def _logsumexp_grad(op, g):
    """TF's rule: the incoming gradient split by sign so that its log exists, each part
    accumulated in log space in the other direction."""
    x, axis = op.inputs
    out = op.outputs[0]
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    lowest = float(np.finfo(g.dtype.np_dtype).min)
    pos = where(greater(g, 0), log(where(greater(g, 0), g, g * 0 + 1)), g * 0 + lowest)
    neg = where(less(g, 0), log(where(less(g, 0), -g, g * 0 + 1)), g * 0 + lowest)
    out_pos = exp(cumulative_logsumexp(pos - out, axis, exclusive=exclusive, reverse=not reverse) + x)
    out_neg = exp(cumulative_logsumexp(neg - out, axis, exclusive=exclusive, reverse=not reverse) + x)
    return [out_pos - out_neg, None]
