"""Weight regularizers (TF1's `tf.contrib.layers` regularizers).

A regularizer is a callable `weights -> scalar loss tensor or None`; pass one to
`get_variable(regularizer=...)` (the variable store adds its result to REGULARIZATION_LOSSES) or
to `apply_regularization`. `dflow.losses.get_regularization_loss()` sums that collection.
"""

from __future__ import annotations

import numbers

from .graph.graph import add_to_collection, get_collection, name_scope
from .graph.keys import GraphKeys
from .kernels.common import constant, convert_to_tensor
from .kernels.manip_ops import add_n
from .kernels.math_ops import abs, multiply  # noqa: A004 - the op, not the builtin
from .kernels.reduction_ops import reduce_sum
from .nn import l2_loss

__all__ = ["l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "sum_regularizer", "apply_regularization"]


def _check_scale(scale):
    """ValueError for an integer or negative Python scale; True when the scale disables it."""
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"scale cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale:g}.")
        return scale == 0.0
    return False


def l1_regularizer(scale, scope=None):
    """A regularizer giving scale * sum(|w|) (named `l1_regularizer`); scale 0.0 gives None.

    scale: a non-negative float or a scalar tensor (ValueError for ints and negatives).
    """
    if _check_scale(scale):
        return lambda _: None

    def l1(weights):
        with name_scope(scope, "l1_regularizer", [weights]) as name:
            weights = convert_to_tensor(weights)
            my_scale = convert_to_tensor(scale, dtype=weights.dtype, name="scale")
            return multiply(my_scale, reduce_sum(abs(weights)), name=name)

    return l1


def l2_regularizer(scale, scope=None):
    """A regularizer giving scale * sum(w ** 2) / 2 (named `l2_regularizer`); scale 0.0 gives None.

    scale: a non-negative float or a scalar tensor (ValueError for ints and negatives).
    """
    if _check_scale(scale):
        return lambda _: None

    def l2(weights):
        with name_scope(scope, "l2_regularizer", [weights]) as name:
            weights = convert_to_tensor(weights)
            my_scale = convert_to_tensor(scale, dtype=weights.dtype, name="scale")
            return multiply(my_scale, l2_loss(weights), name=name)

    return l2


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    """The sum of an L1 and an L2 regularizer."""
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)],
                           scope=scope or "l1_l2_regularizer")


def sum_regularizer(regularizer_list, scope=None):
    """A regularizer giving the sum of the given ones' losses (None if the list has none).

    Regularizers that return None (scale 0.0) are left out of the sum; if all do, the sum is None.
    """
    regularizer_list = [r for r in regularizer_list if r is not None]
    if not regularizer_list:
        return None

    def sum_reg(weights):
        with name_scope(scope, "sum_regularizer", [weights]) as name:
            # TF1 would pass None to add_n here; skipping it keeps l1_l2_regularizer(0.0, x) usable.
            tensors = [t for t in (r(weights) for r in regularizer_list) if t is not None]
            return add_n(tensors, name=name) if tensors else None

    return sum_reg


def apply_regularization(regularizer, weights_list=None):
    """The summed penalty of `regularizer` over `weights_list` (default: the WEIGHTS collection),
    also added to REGULARIZATION_LOSSES.

    ValueError when there are no weights or a penalty is not a scalar.
    """
    if not weights_list:
        weights_list = get_collection(GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [p if p is not None else constant(0.0) for p in penalties]
        for p in penalties:
            if p.shape.ndims != 0:
                raise ValueError(f"regularizer must return a scalar Tensor instead of a Tensor with rank "
                                 f"{p.shape.ndims}.")
        summed = add_n(penalties, name=scope)
        add_to_collection(GraphKeys.REGULARIZATION_LOSSES, summed)
        return summed
