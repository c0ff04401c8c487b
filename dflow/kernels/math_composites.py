"""tf.math names TF builds from other ops, built the same way here (their gradients come with the
ops): `polyval` (Horner's rule), `is_non_decreasing` / `is_strictly_increasing` (TF's check_ops
over the flattened tensor) and `approx_max_k` / `approx_min_k` (on CPU TF's ApproxTopK is exact,
so they are top_k along `reduction_dimension`).
"""

from __future__ import annotations

import collections

from ..graph.graph import name_scope
from .array_ops import reshape
from .common import NUMERIC, check_dtype, convert_to_tensor
from .creation_ops import zeros_like
from .gather_ops import top_k
from .manip_ops import transpose
from .math_ops import add, greater, greater_equal, multiply, negative
from .reduction_ops import reduce_all

__all__ = ["is_non_decreasing", "is_strictly_increasing"]  # the top-level ones; the rest are tf.math's

ApproxTopK = collections.namedtuple("ApproxTopK", ["values", "indices"])


def polyval(coeffs, x, name=None):
    """coeffs[0] x^(n-1) + ... + coeffs[n-1] (numpy.polyval), by Horner's rule with broadcasting.
    coeffs: a Python list of tensors or numbers (ValueError otherwise); an empty list gives
    zeros_like(x)."""
    if not isinstance(coeffs, list):
        raise ValueError(f"Argument coeffs must be list type. Received type {type(coeffs)}.")
    with name_scope(name, "polyval", list(coeffs) + [x]):
        x = convert_to_tensor(x, name="x")
        if not coeffs:
            return zeros_like(x)
        p = convert_to_tensor(coeffs[0], dtype=x.dtype, name="coeff")
        for c in coeffs[1:]:
            p = add(convert_to_tensor(c, dtype=x.dtype, name="coeff"), multiply(p, x))
        return p


def _pairwise(x, compare, default_name, name):
    with name_scope(name, default_name, [x]):
        x = convert_to_tensor(x, name="x")
        try:
            check_dtype(x, NUMERIC.replace("c", ""), default_name, "x")
        except TypeError:  # TF1's wording (check_ops)
            raise TypeError(f"Expected x to be numeric, got {x.dtype.name} ({x.name}) in {default_name}") from None
        flat = reshape(x, [-1])
        return reduce_all(compare(flat[1:], flat[:-1]))


def is_non_decreasing(x, name=None):
    """True when each element of flattened `x` is >= the one before (a bool scalar; True for fewer
    than two elements). TypeError for non-real dtypes."""
    return _pairwise(x, greater_equal, "is_non_decreasing", name)


def is_strictly_increasing(x, name=None):
    """True when each element of flattened `x` is > the one before (a bool scalar; True for fewer
    than two elements). TypeError for non-real dtypes."""
    return _pairwise(x, greater, "is_strictly_increasing", name)


def _top_k_along(operand, k, dim, name, default_name, smallest):
    with name_scope(name, default_name, [operand]):
        x = convert_to_tensor(operand, name="operand")
        rank = x.shape.ndims
        if rank is None:
            raise ValueError(f"{default_name}: the rank of {x.name!r} must be known")
        dim = dim % rank
        perm = [d for d in range(rank) if d != dim] + [dim]
        moved = transpose(x, perm) if dim != rank - 1 else x
        values, indices = top_k(negative(moved) if smallest else moved, k)
        if smallest:
            values = negative(values)
        if dim != rank - 1:
            back = sorted(range(rank), key=lambda i: perm[i])
            values, indices = transpose(values, back), transpose(indices, back)
        return ApproxTopK(values, indices)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True, name=None):
    """The k largest entries along `reduction_dimension` and their int32 positions (exact, as TF's
    CPU kernel; recall_target and the rest are accepted for TF's signature)."""
    return _top_k_along(operand, k, reduction_dimension, name, "approx_max_k", smallest=False)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True, name=None):
    """The k smallest entries along `reduction_dimension` (ascending) and their int32 positions."""
    return _top_k_along(operand, k, reduction_dimension, name, "approx_min_k", smallest=True)
