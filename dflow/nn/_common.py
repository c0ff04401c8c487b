"""Helpers shared by the `dflow.nn` modules: argument checks, dtype-matched constants, the
max-shift of softmax and the stable softplus terms."""

from __future__ import annotations

from ..errors import InvalidArgumentError
from ..graph.ops import Tensor, constant_value
from ..kernels.array_ops import stop_gradient
from ..kernels.common import convert_to_tensor
from ..kernels.math_ops import (
    add,
    exp,
    greater_equal,
    log1p,
    squared_difference,
    subtract,
    where,
)
from ..kernels.reduction_ops import reduce_max

# ---- helpers -----------------------------------------------------------------------------------


def _float_tensor(x, fn, arg="features"):
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise TypeError(f"Value passed to parameter {arg!r} of {fn} has DataType {x.dtype.name} not in "
                        "the allowed types float16, float32, float64")
    return x


def _like(x, value):
    """A constant of x's dtype."""
    return convert_to_tensor(value, dtype=x.dtype)


def _axis(axis, x, fn):
    """`axis` (int, default -1) as an int in [0, rank); InvalidArgumentError out of range (TF1)."""
    axis = -1 if axis is None else axis
    if isinstance(axis, Tensor):
        v = constant_value(axis)
        if v is None:
            raise ValueError(f"{fn}: axis {axis.name!r} must be known when the graph is built")
        axis = v
    axis = int(axis)
    n = x.shape.ndims
    if n is None:
        if axis < 0 and axis != -1:
            raise ValueError(f"{fn}: a negative axis other than -1 needs a tensor of known rank")
        return axis
    if not -n <= axis < n:
        raise InvalidArgumentError(None, None, f"`dim` must be in the range [{-n}, {n}) where {n} is the "
                                   f"number of dimensions in the input. Received: dim={axis}")
    return axis % n


def _shift(x, axis):
    """x minus its max along `axis`, with the max cut out of the gradient: every value <= 0, so
    exp() cannot overflow, and the max's own (non-smooth) gradient is never needed."""
    return subtract(x, stop_gradient(reduce_max(x, axis, keepdims=True)))


def _softplus_parts(x):
    """(max(x, 0), -|x|), both through `where` on `x >= 0`, so that at x == 0 the gradient of
    max(x,0) + log1p(exp(-|x|)) is exactly 1/2 (max/abs rules would give 1 and 0)."""
    zeros = _like(x, 0)  # a scalar, broadcast by the ops: no op on the gradient path depends on x
    cond = greater_equal(x, zeros)
    return where(cond, x, zeros), where(cond, -x, x)


def _stable_softplus(x, name=None):
    relu_x, neg_abs = _softplus_parts(x)
    return add(relu_x, log1p(exp(neg_abs)), name=name)


def _check_xent_args(fn, sentinel, labels, logits):
    if sentinel is not None:
        raise ValueError(f"Only call `{fn}` with named arguments (labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError(f"Both `labels` and `logits` must be provided for {fn}. Received: "
                         f"labels={labels!r} and logits={logits!r}")


def _pick(axis, dim):
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    return dim if axis is None else axis



def _squared_difference(a, b):
    return squared_difference(a, b)
