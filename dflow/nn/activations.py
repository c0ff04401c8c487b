"""Activations and softmax (TF1's `tf.nn.relu6` ... `crelu`, `softmax`, `log_softmax`).

Composites of public ops written so that values AND automatic gradients stay finite for large
inputs (e.g. +-1000): softmax and log-softmax shift by a max that is cut out of the gradient,
softplus-like terms use `max(x, 0) + log1p(exp(-|x|))`, and branches that could overflow (`expm1`
in elu/selu) are fed clipped inputs, because `where` sends a zero gradient into the unused branch
and 0 * inf = nan."""

from __future__ import annotations

from ..graph import dtypes
from ..graph.graph import name_scope
from ..kernels.common import convert_to_tensor
from ..kernels.manip_ops import concat
from ..kernels.math_ops import (
    abs,  # noqa: A004 - the op, not the builtin
    add,
    cast,
    exp,
    expm1,
    greater,
    greater_equal,
    log,
    minimum,
    multiply,
    realdiv,
    relu,
    subtract,
    where,
)
from ..kernels.reduction_ops import reduce_sum
from ._common import (
    _axis,
    _float_tensor,
    _like,
    _pick,
    _shift,
    _stable_softplus,
)

_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717

# ---- activations -------------------------------------------------------------------------------


def relu6(features, name=None):
    """min(max(x, 0), 6) elementwise; gradient 0 at 0 and at 6 (TF1's Relu6Grad); float or int."""
    with name_scope(name, "Relu6", [features]) as scope:
        r = relu(convert_to_tensor(features))
        six = _like(r, 6)
        return where(greater_equal(r, six), six, r, name=scope)


def elu(features, name=None):
    """x if x > 0 else exp(x) - 1, elementwise (float); finite gradients for any finite x."""
    with name_scope(name, "Elu", [features]) as scope:
        x = _float_tensor(features, "Elu")
        zeros = _like(x, 0)
        return where(greater(x, zeros), x, expm1(minimum(x, zeros)), name=scope)


def selu(features, name=None):
    """scale * (x if x >= 0 else alpha * (exp(x) - 1)) with the SELU constants (float)."""
    with name_scope(name, "Selu", [features]) as scope:
        x = _float_tensor(features, "Selu")
        zeros = _like(x, 0)
        neg = multiply(_like(x, _SELU_SCALE * _SELU_ALPHA), expm1(minimum(x, zeros)))
        return where(greater_equal(x, zeros), multiply(_like(x, _SELU_SCALE), x), neg, name=scope)


def leaky_relu(features, alpha=0.2, name=None):
    """x if x > 0 else alpha * x, elementwise (float); gradient alpha at 0 (TF1)."""
    with name_scope(name, "LeakyRelu", [features, alpha]) as scope:
        x = convert_to_tensor(features, name="features")
        x = cast(x, dtypes.float32) if x.dtype.is_integer else _float_tensor(x, "LeakyRelu")  # TF1 casts ints
        return where(greater(x, _like(x, 0)), x, multiply(_like(x, alpha), x), name=scope)


def softplus(features, name=None):
    """log(1 + exp(x)) elementwise, as max(x, 0) + log1p(exp(-|x|)) (no overflow; float)."""
    with name_scope(name, "Softplus", [features]) as scope:
        return _stable_softplus(_float_tensor(features, "Softplus"), name=scope)


def softsign(features, name=None):
    """x / (1 + |x|) elementwise (float)."""
    with name_scope(name, "Softsign", [features]) as scope:
        x = _float_tensor(features, "Softsign")
        return realdiv(x, add(_like(x, 1), abs(x)), name=scope)


# ---- softmax -----------------------------------------------------------------------------------


def softmax(logits, axis=None, name=None, dim=None):
    """exp(x) / sum(exp(x)) along `axis` (default -1), computed shifted by the max.

    Same shape and dtype as `logits` (float; TypeError otherwise). InvalidArgumentError for an
    axis outside [-rank, rank) (TF1). Rows of all -inf or with +inf give nan, as TF1.
    """
    axis = _pick(axis, dim)
    with name_scope(name, "Softmax", [logits]) as scope:
        x = _float_tensor(logits, "Softmax", "logits")
        a = _axis(axis, x, "softmax")
        e = exp(_shift(x, a))
        return realdiv(e, reduce_sum(e, a, keepdims=True), name=scope)


def log_softmax(logits, axis=None, name=None, dim=None):
    """x - log(sum(exp(x))) along `axis` (default -1), computed shifted by the max.

    Same shape and dtype as `logits` (float; TypeError otherwise); InvalidArgumentError for an
    axis out of range. -inf entries stay -inf.
    """
    axis = _pick(axis, dim)
    with name_scope(name, "LogSoftmax", [logits]) as scope:
        x = _float_tensor(logits, "LogSoftmax", "logits")
        a = _axis(axis, x, "log_softmax")
        shifted = _shift(x, a)
        return subtract(shifted, log(reduce_sum(exp(shifted), a, keepdims=True)), name=scope)



def crelu(features, name=None, axis=-1):
    """concat([relu(x), relu(-x)], axis): twice the size along `axis` (TF1's CReLU)."""
    with name_scope(name, "CRelu", [features]) as scope:
        x = convert_to_tensor(features, name="features")
        return relu(concat([x, -x], axis), name=scope)
