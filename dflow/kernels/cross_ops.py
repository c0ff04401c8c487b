"""`cross` (TF1's Cross): the cross product of pairs of 3-vectors along the last dimension.

Both inputs have the same shape [..., 3] (TF does not broadcast); on Dask the op is blockwise over
the leading dims with the last dim gathered into one chunk. Gradient as TF1's math_grad:
d/da = cross(b, g), d/db = cross(g, a).
"""

from __future__ import annotations

import numpy as np

from ..errors import FailedPreconditionError, InvalidArgumentError
from ..graph.evaluate import namespace
from ..graph.registry import def_grad, register_op
from ..graph.shape import TensorShape
from .common import apply_op, check_dtype, convert_to_tensor

__all__ = ["cross"]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_KINDS = "iuf"  # TF's Cross takes the real number types


def _where(a, b):
    return f"with input shapes: {_dims(a)}, {_dims(b)}"  # the graph adds " for node '<name>'."


def _dims(s):
    return "?" if s.ndims is None else "[" + ",".join("?" if d is None else str(d) for d in s.as_list()) + "]"


def _listed(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _infer(inputs, attrs):
    a, b = inputs
    check_dtype(a, _KINDS, "Cross", "a")
    if b.dtype != a.dtype:
        raise TypeError(f"Input 'b' of 'Cross' Op has type {b.dtype.name} that does not match type {a.dtype.name} "
                        f"of argument 'a'.")
    sa, sb = a.shape, b.shape
    for s in (sa, sb):
        if s.ndims == 0:
            raise ValueError(f"Shape must be at least rank 1 but is rank 0 {_where(sa, sb)}")
    if sa.ndims is None or sb.ndims is None:
        out = sa if sb.ndims is None else sb
    else:
        if sa.ndims != sb.ndims:
            raise ValueError(f"Shapes must be equal rank, but are {sa.ndims} and {sb.ndims} {_where(sa, sb)}")
        dims = []
        for i, (x, y) in enumerate(zip(sa.as_list(), sb.as_list())):
            if x is not None and y is not None and x != y:
                raise ValueError(f"Dimension {i} in both shapes must be equal, but are {x} and {y}. Shapes are "
                                 f"{_dims(sa)} and {_dims(sb)}. {_where(sa, sb)}")
            dims.append(x if x is not None else y)
        out = TensorShape(dims)
    if out.ndims is not None and out.as_list()[-1] not in (None, 3):
        raise ValueError(f"Dimension must be 3 but is {out.as_list()[-1]} {_where(sa, sb)}")
    return TensorShape(out), a.dtype


def _check(a_shape, b_shape):
    if tuple(a_shape) != tuple(b_shape):
        raise InvalidArgumentError(None, None, f"Both inputs must be of same shape: {_listed(a_shape)} vs. "
                                               f"{_listed(b_shape)}")
    if a_shape[-1] != 3:
        raise FailedPreconditionError(None, None, "Cross-products are only defined for 3-element vectors.")


def _cross(xp, a, b):
    _check(a.shape, b.shape)
    return _block(a, b)


def _block(a, b):
    xp = namespace((a, b))  # numpy, cupy or a device namespace alike
    a1, a2, a3 = a[..., 0], a[..., 1], a[..., 2]
    b1, b2, b3 = b[..., 0], b[..., 1], b[..., 2]
    return xp.stack([a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1], axis=-1)


def _lower(ctx, a, b):
    a, b = ctx.as_dask(a), ctx.as_dask(b)
    _check(a.shape, b.shape)
    a, b = a.rechunk({a.ndim - 1: -1}), b.rechunk({b.ndim - 1: -1})
    ind = _LETTERS[:a.ndim]
    return ctx.da.blockwise(_block, ind, a, ind, b, ind, dtype=a.dtype, meta=np.empty((0,) * a.ndim, dtype=a.dtype))


register_op("Cross", _infer, eager=_cross, lower=_lower)


@def_grad("Cross")
def _cross_grad(op, g):
    a, b = op.inputs
    return [cross(b, g), cross(g, a)]


def cross(a, b, name=None):
    """The cross product of a and b, both [..., 3] of one real dtype and the same shape (no
    broadcasting): ValueError when the static shapes disagree or the last dim is not 3; at run time
    InvalidArgumentError for different shapes, FailedPreconditionError when the last dim is not 3."""
    a = convert_to_tensor(a, name="a")
    b = convert_to_tensor(b, name="b")
    return apply_op("Cross", [a, b], name=name, default_name="Cross")
