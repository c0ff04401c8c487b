"""Ops that move elements: `roll` (Roll), `diag`/`diag_part` (TF1's any-rank Diag and DiagPart) and
`meshgrid` (a composite of reshapes and a product with ones, as TF1).

Roll lowers to `da.roll` (shifts and axes read on the host); its gradient rolls back. Diag puts
the n elements of x on the diagonal of an [n, n] matrix shaped x.shape + x.shape, DiagPart takes
it back (each the other's gradient), in one whole-array task.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph.graph import name_scope
from ..graph.ops import Tensor
from ..graph.registry import def_grad, register_op
from ..graph.shape import TensorShape, unknown_shape
from .array_ops import reshape, size, stack
from .common import INT, apply_op, check_dtype, convert_to_tensor
from .creation_ops import ones
from .math_ops import multiply, negative
from .numpy_kernels import numpy_op

__all__ = ["roll", "meshgrid", "diag", "diag_part"]


# ---- roll ----------------------------------------------------------------------------------------


def _roll_infer(inputs, attrs):
    x, shift, axis = inputs
    check_dtype(shift, INT, "Roll", "shift")
    check_dtype(axis, INT, "Roll", "axis")
    if shift.shape.ndims not in (None, 0, 1) or axis.shape.ndims not in (None, 0, 1):
        raise ValueError(f"Roll: shift and axis must be scalars or 1-D, got shapes {shift.shape} and {axis.shape}")
    if shift.shape.is_fully_defined() and axis.shape.is_fully_defined() and \
            shift.shape.num_elements() != axis.shape.num_elements():
        raise ValueError(f"Roll: shift and axis must have the same size, got shapes {shift.shape} and {axis.shape}")
    if x.shape.ndims == 0:
        raise ValueError("Roll: the input must be at least 1-D, got a scalar")
    return TensorShape(x.shape), x.dtype


def _shifts(x_ndim, shift, axis):
    shift, axis = np.asarray(shift).reshape(-1), np.asarray(axis).reshape(-1)
    if shift.size != axis.size:
        raise InvalidArgumentError(None, None, f"Roll: shift and axis must have the same size, got {shift.size} "
                                   f"and {axis.size}")
    for a in axis:
        if not -x_ndim <= a < x_ndim:
            raise InvalidArgumentError(None, None, f"Roll: axis {int(a)} is out of range for a tensor of rank {x_ndim}")
    return tuple(int(s) for s in shift), tuple(int(a) % x_ndim for a in axis)


def _roll_eager(xp, x, shift, axis):
    shift, axis = _shifts(x.ndim, shift, axis)
    return xp.roll(x, shift, axis=axis) if shift else x


def _roll_lower(ctx, x, shift, axis):
    x = ctx.as_dask(x)
    shift, axis = _shifts(x.ndim, ctx.host_value(shift, "shift"), ctx.host_value(axis, "axis"))
    return ctx.da.roll(x, shift, axis=axis) if shift else x


register_op("Roll", _roll_infer, eager=_roll_eager, lower=_roll_lower)


def roll(input, shift, axis, name=None):  # noqa: A002 - TF1 signature
    """`input` with its elements shifted by `shift` places along `axis` (ints or 1-D, the same
    size; repeated axes add their shifts); elements leaving one end come back at the other."""
    x = convert_to_tensor(input, name="input")
    shift = convert_to_tensor(shift, name="shift")
    axis = convert_to_tensor(axis, name="axis")
    return apply_op("Roll", [x, shift, axis], name=name, default_name="Roll")


@def_grad("Roll")
def _roll_grad(op, g):
    return [roll(g, negative(op.inputs[1]), op.inputs[2]), None, None]


# ---- meshgrid ------------------------------------------------------------------------------------


def meshgrid(*args, **kwargs):
    """N-D coordinate grids from N 1-D tensors: the i-th output repeats args[i] along its own axis.
    indexing='xy' (default, Cartesian: the first two axes swapped) or 'ij' (matrix)."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"'{next(iter(kwargs))}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    with name_scope(name, "meshgrid", args):
        ndim = len(args)
        s0 = (1,) * ndim
        output = [reshape(_vector(x), s0[:i] + (-1,) + s0[i + 1:]) for i, x in enumerate(args)]
        shapes = [size(x) for x in args]
        out_dtype = convert_to_tensor(args[0]).dtype.base_dtype
        if indexing == "xy" and ndim > 1:
            output[0] = reshape(output[0], (1, -1) + (1,) * (ndim - 2))
            output[1] = reshape(output[1], (-1, 1) + (1,) * (ndim - 2))
            shapes[0], shapes[1] = shapes[1], shapes[0]
        mult_fact = ones(stack(shapes), out_dtype)
        return [multiply(x, mult_fact) for x in output]


def _vector(x):
    """x as one tensor: a list holding tensors is stacked, anything else converted whole."""
    if isinstance(x, (list, tuple)) and any(isinstance(v, Tensor) for v in x):
        return stack(x)
    return convert_to_tensor(x)


# ---- diag / diag_part ----------------------------------------------------------------------------


def _diag_infer(inputs, attrs):
    (x,) = inputs
    if x.shape.ndims == 0:
        raise ValueError(f"Diag: input must be at least rank 1, got a scalar ({x.name!r})")
    if x.shape.ndims is None:
        return unknown_shape(), x.dtype
    return x.shape.concatenate(x.shape), x.dtype


def _diag(np_, x):
    n = x.size
    out = np.zeros((n, n), x.dtype)
    out[np.arange(n), np.arange(n)] = x.reshape(-1)
    return out.reshape(x.shape + x.shape)


def _diag_part_infer(inputs, attrs):
    (x,) = inputs
    if x.shape.ndims is None:
        return unknown_shape(), x.dtype
    r = x.shape.ndims
    if r == 0 or r % 2:
        raise ValueError(f"DiagPart: input must have an even, non-zero rank, got shape {x.shape} ({x.name!r})")
    half = x.shape[:r // 2]
    if not half.is_compatible_with(x.shape[r // 2:]):
        raise ValueError(f"DiagPart: the input's first and second halves of dimensions must match, got {x.shape}")
    return half.merge_with(x.shape[r // 2:]), x.dtype


def _diag_part(np_, x):
    half = x.shape[:x.ndim // 2]
    if x.ndim == 0 or x.ndim % 2 or half != x.shape[x.ndim // 2:]:
        raise InvalidArgumentError(None, None, f"DiagPart: the input's first and second halves of dimensions must "
                                   f"match, got shape {list(x.shape)}")
    n = int(np.prod(half, dtype=np.int64))
    return np.ascontiguousarray(x.reshape(n, n).diagonal()).reshape(half)


numpy_op("Diag", _diag_infer, _diag, lambda s: [tuple(s) + tuple(s)])
numpy_op("DiagPart", _diag_part_infer, _diag_part, lambda s: [tuple(s[:len(s) // 2])])


def diag(diagonal, name=None):
    """A tensor of shape diagonal.shape + diagonal.shape, zero but for out[i..., i...] = diagonal[i...]."""
    return apply_op("Diag", [convert_to_tensor(diagonal, name="diagonal")], name=name, default_name="Diag")


def diag_part(input, name=None):  # noqa: A002 - TF1 signature
    """The diagonal of a tensor of shape s + s: out[i...] = input[i..., i...], shape s."""
    return apply_op("DiagPart", [convert_to_tensor(input, name="input")], name=name, default_name="DiagPart")


@def_grad("Diag")
def _diag_grad(op, g):
    return [diag_part(g)]


@def_grad("DiagPart")
def _diag_part_grad(op, g):
    return [diag(g)]
