"""TF's modified Bessel functions (BesselI0, BesselI0e, BesselI1, BesselI1e), the inverses of the
normal CDF and of erf (Ndtri, Erfinv; erfcinv is TF's composite of ndtri), NextAfter, and the
no-nan composites TF1 places in tf.math (multiply_no_nan, reciprocal_no_nan, xlog1py).

All ops are elementwise (fused on chunks on Dask), float16/32/64, computed in float64 on the host:
- Bessel I0/I1: the power series (all terms positive, no cancellation) for |x| <= 50, Hankel's
  asymptotic series beyond, scaled by exp(-|x|) for the `e` variants; ~1e-15 relative;
- ndtri: Acklam's rational approximation refined by one Halley step on erfc (special_ops),
  ~1e-15 relative; erfinv: Giles' approximation refined by Newton steps on erf near 0 and on
  erfc near +-1 (so 1 - x stays exact), -inf/inf at -1/1 and nan outside as TF.
Gradients as TF's math_grad.py: I0' = I1, I0e' = I1e - sign(x) I0e, I1' = I0 - I1/x (1/2 at 0),
I1e' = I0e - I1e (sign(x) + 1/x) (1/2 at 0), ndtri' = sqrt(2 pi) exp(ndtri^2 / 2),
erfinv' = sqrt(pi)/2 exp(erfinv^2), nextafter's: g for x1, 0 for x2.
"""

from __future__ import annotations

import math

import numpy as np

from ..graph.graph import name_scope
from ..graph.registry import register_op
from .common import apply_op, broadcast_infer, convert_pair, convert_to_tensor
from .creation_ops import zeros_like
from .grad_util import unbroadcast
from .math_ops import equal, exp, log1p, multiply, reciprocal, sign, square, where
from .special_ops import _erf, _erfc, _unary

__all__ = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "ndtri", "erfinv", "erfcinv", "nextafter",
           "multiply_no_nan", "reciprocal_no_nan", "xlog1py"]


def _f64(x):
    return np.asarray(x, dtype=np.float64)


# ---- modified Bessel functions of the first kind ----------------------------------------------------

_SERIES_MAX = 50.0


def _bessel_e(x, order):
    """exp(-|x|) I_order(|x|) for order 0 or 1, float64."""
    a = np.abs(_f64(x))
    small = a <= _SERIES_MAX
    s = np.where(small, a, 1.0)
    q = s * s / 4.0
    term = np.ones_like(s) if order == 0 else s / 2.0
    total = term.copy()
    for k in range(1, 200):  # the terms peak near k = |x|/2 and are below 1e-17 of the sum by k = 160
        term = term * q / (k * (k + order))
        total = total + term
    series = total * np.exp(-s)
    b = np.where(small, 2 * _SERIES_MAX, a)
    term = np.ones_like(b)
    total = term.copy()
    nu4 = 4.0 * order * order
    for k in range(1, 40):  # Hankel: the ratio ((2k-1)^2 - 4 nu^2) / (8 k x) stays below 1/4 for x > 50
        term = term * ((2 * k - 1) ** 2 - nu4) / (8.0 * k * b)
        total = total + term
    asym = total / np.sqrt(2 * np.pi * b)
    return np.where(small, series, asym)


def _i0e(x):
    return _bessel_e(x, 0)


def _i1e(x):
    return np.sign(_f64(x)) * _bessel_e(x, 1)


def _i0(x):
    x = _f64(x)
    with np.errstate(over="ignore"):
        return _i0e(x) * np.exp(np.abs(x))


def _i1(x):
    x = _f64(x)
    with np.errstate(over="ignore"):
        return _i1e(x) * np.exp(np.abs(x))


# ---- ndtri and erfinv ------------------------------------------------------------------------------

_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
      -3.066479806614716e+01, 2.506628277459239e+00)
_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
      -1.328068155288572e+01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
      4.374664141464968e+00, 2.938163982698783e+00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)


def _horner(x, coef):
    out = np.full_like(x, coef[0])
    for c in coef[1:]:
        out = out * x + c
    return out


def _ndtri(p):
    p = _f64(p)
    with np.errstate(all="ignore"):
        inner = (p > 0.02425) & (p < 1 - 0.02425)
        q = p - 0.5
        r = q * q
        mid = q * _horner(r, _A) / (_horner(r, _B) * r + 1.0)
        tail_p = np.where(p < 0.5, p, 1.0 - p)
        t = np.sqrt(-2.0 * np.log(np.where(tail_p > 0, tail_p, 1e-300)))
        tail = _horner(t, _C) / (_horner(t, _D) * t + 1.0)
        tail = np.where(p < 0.5, tail, -tail)
        x = np.where(inner, mid, tail)
        # one Halley step on Phi(x) - p = erfc(-x/sqrt2)/2 - p (Acklam's refinement)
        e = 0.5 * _erfc(-x / math.sqrt(2.0)) - p
        u = e * math.sqrt(2 * math.pi) * np.exp(x * x / 2.0)
        x = x - u / (1.0 + x * u / 2.0)
        x = np.where(p == 0, -np.inf, np.where(p == 1, np.inf, x))
        return np.where((p < 0) | (p > 1) | np.isnan(p), np.nan, x)


def _erfinv(v):
    v = _f64(v)
    a = np.abs(v)
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - a) * (1.0 + a))
        # Giles (2010), single precision: the start of the Newton steps below
        wc = w - 2.5
        central = _horner(wc, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                               -0.00125372503, -0.00417768164, 0.246640727, 1.50140941))
        wt = np.sqrt(np.where(w >= 5.0, w, 5.0)) - 3.0
        tail = _horner(wt, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                            -0.0076224613, 0.00943887047, 1.00167406, 2.83297682))
        y = np.where(w < 5.0, central, tail) * a
        near_zero = a <= 0.5
        one_minus = 1.0 - a  # exact for a in [0.5, 1] (Sterbenz)
        for _ in range(3):
            slope = 2.0 / math.sqrt(math.pi) * np.exp(-y * y)
            resid = np.where(near_zero, _erf(y) - a, one_minus - _erfc(y))
            y = y - resid / slope
        y = np.where(a == 1.0, np.inf, y)
        return np.where((a > 1.0) | np.isnan(v), np.nan, np.copysign(y, v))


# gradients as TF's math_grad.py (see the module doc), each passed in its op's row below


def _i0_grad(op, g):
    return [g * bessel_i1(op.inputs[0])]


def _i0e_grad(op, g):
    x = op.inputs[0]
    return [g * (bessel_i1e(x) - sign(x) * op.outputs[0])]


def _i1_grad(op, g):
    x = op.inputs[0]
    zero = equal(x, 0)
    safe = where(zero, x * 0 + 1, x)
    return [g * where(zero, x * 0 + 0.5, bessel_i0(x) - op.outputs[0] / safe)]


def _i1e_grad(op, g):
    x = op.inputs[0]
    zero = equal(x, 0)
    safe = where(zero, x * 0 + 1, x)
    return [g * where(zero, x * 0 + 0.5, bessel_i0e(x) - op.outputs[0] * (sign(x) + reciprocal(safe)))]


def _ndtri_grad(op, g):
    return [g * math.sqrt(2 * math.pi) * exp(square(op.outputs[0]) / 2.0)]


def _erfinv_grad(op, g):
    return [g * (math.sqrt(math.pi) / 2.0) * exp(square(op.outputs[0]))]


bessel_i0 = _unary("BesselI0", "bessel_i0", _i0, _i0_grad)
bessel_i0e = _unary("BesselI0e", "bessel_i0e", _i0e, _i0e_grad)
bessel_i1 = _unary("BesselI1", "bessel_i1", _i1, _i1_grad)
bessel_i1e = _unary("BesselI1e", "bessel_i1e", _i1e, _i1e_grad)
ndtri = _unary("Ndtri", "ndtri", _ndtri, _ndtri_grad)
erfinv = _unary("Erfinv", "erfinv", _erfinv, _erfinv_grad)


def _nextafter_grad(op, g):
    x1, x2 = op.inputs
    return [unbroadcast(g, x1), unbroadcast(g * 0, x2)]


register_op("NextAfter", broadcast_infer("f", None, "NextAfter"), grad=_nextafter_grad, elementwise=True,
            eager=lambda xp, x1, x2: xp.asarray(np.nextafter(np.asarray(x1), np.asarray(x2))))


def erfcinv(x, name=None):
    """The inverse of erfc on [0, 2] (TF's composite -ndtri(x / 2) / sqrt(2)); inf at 0, -inf at 2,
    nan outside."""
    with name_scope(name, "erfcinv", [x]):
        x = convert_to_tensor(x, name="start")
        return multiply(ndtri(multiply(x, 0.5)), -math.sqrt(0.5))


def nextafter(x1, x2, name=None):
    """The next representable float32/float64 value after x1 towards x2 (op `NextAfter`), numpy
    broadcasting; operands of one dtype."""
    x1, x2 = convert_pair(x1, x2, "NextAfter")
    return apply_op("NextAfter", [x1, x2], name=name, default_name="NextAfter")


def multiply_no_nan(x, y, name=None):
    """x * y, and 0 where y is 0 even when x is inf or nan (TF's MulNoNan)."""
    with name_scope(name, "multiply_no_nan", [x, y]):
        x, y = convert_pair(x, y, "MulNoNan")
        prod = x * y
        return where(equal(y, 0), zeros_like(prod), prod)


def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 where x is 0."""
    with name_scope(name, "reciprocal_no_nan", [x]):
        x = convert_to_tensor(x, name="x")
        zero = equal(x, 0)
        safe = where(zero, x * 0 + 1, x)
        return where(zero, x * 0, reciprocal(safe))


def xlog1py(x, y, name=None):
    """x * log1p(y), and 0 where x is 0 (TF's Xlog1py)."""
    with name_scope(name, "xlog1py", [x, y]):
        x, y = convert_pair(x, y, "Xlog1py")
        zero = equal(x, 0)
        safe = where(zero, y * 0, y)
        return where(zero, x * 0, x * log1p(safe))
