"""The location-scale families of `tf.distributions`: Normal, Laplace, StudentT, Uniform (TF 1.x's
formulas, composed of existing ops; samples reparameterized, so gradients flow to the parameters)."""

from __future__ import annotations

import math

import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from ..kernels.array_ops import identity, shape
from ..kernels.bessel_ndtri_ops import ndtri
from ..kernels.creation_ops import ones, ones_like, zeros_like
from ..kernels.manip_ops import concat
from ..kernels.math_ops import abs as _abs
from ..kernels.math_ops import (
    exp,
    greater,
    is_nan,
    less,
    log,
    log1p,
    logical_or,
    maximum,
    minimum,
    rsqrt,
    sign,
    square,
    where_v2,
)
from ..kernels.random_gamma_poisson_ops import random_gamma
from ..kernels.random_ops import random_normal, random_uniform
from ..kernels.special_ops import betainc, digamma, erfc, lgamma
from .distribution import (
    FULLY_REPARAMETERIZED,
    Distribution,
    RegisterKL,
    broadcast_batch_shape,
    float_params,
)

__all__ = ["Normal", "Laplace", "StudentT", "Uniform"]

_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)


def _ndtr(z):
    """The standard normal CDF."""
    return 0.5 * erfc(-z * (1.0 / math.sqrt(2.0)))


def _log_ndtr(z):
    """log of the standard normal CDF, accurate in both tails (TF's special_math.log_ndtr: -ndtr(-z)
    above `upper`, log(ndtr(z)) between, the asymptotic series of order 3 below `lower`)."""
    upper, lower = (8.0, -20.0) if z.dtype.base_dtype == dtypes.float64 else (5.0, -10.0)
    z_hi = maximum(z, upper)
    z_mid = minimum(maximum(z, lower), upper)
    z_lo = minimum(z, lower)
    hi = -_ndtr(-z_hi)
    mid = log(_ndtr(z_mid))
    z2 = square(z_lo)
    series = 1.0 - 1.0 / z2 + 3.0 / square(z2) - 15.0 / (z2 * square(z2))
    lo = -0.5 * z2 - log(-z_lo) - _HALF_LOG_TWO_PI + log(series)
    return where_v2(greater(z, upper), hi, where_v2(greater(z, lower), mid, lo))


class _LocScale(Distribution):
    """A location-scale family's parameters `loc` and `scale` (broadcast together: the batch shape)."""

    def __init__(self, loc, scale, validate_args, allow_nan_stats, name, parameters):
        parameters.pop("self", None)
        parameters.pop("__class__", None)
        kind = type(self).__name__
        with name_scope(name, values=[loc, scale]) as scope:
            p = float_params(kind, loc=loc, scale=scale)
            self._loc, self._scale = identity(p["loc"], name="loc"), identity(p["scale"], name="scale")
        super().__init__(self._loc.dtype.base_dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, [self._loc, self._scale], scope.rstrip("/"))

    loc = property(lambda self: self._loc)
    scale = property(lambda self: self._scale)

    def _batch_shape(self):
        return broadcast_batch_shape(self._loc, self._scale)

    def _batch_shape_tensor(self):
        return shape(self._loc + self._scale)


class Normal(_LocScale):
    """Normal(loc, scale): the Gaussian with mean `loc` and standard deviation `scale`."""

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Normal"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name, dict(locals()))

    def _sample_n(self, n, seed=None):
        eps = random_normal(concat([[n], self.batch_shape_tensor()], 0), dtype=self._dtype, seed=seed)
        return eps * self._scale + self._loc

    def _z(self, x):
        return (x - self._loc) / self._scale

    def _log_prob(self, x):
        return -0.5 * square(self._z(x)) - (_HALF_LOG_TWO_PI + log(self._scale))

    def _prob(self, x):
        return exp(self._log_prob(x))

    def _cdf(self, x):
        return _ndtr(self._z(x))

    def _log_cdf(self, x):
        return _log_ndtr(self._z(x))

    def _survival_function(self, x):
        return _ndtr(-self._z(x))

    def _log_survival_function(self, x):
        return _log_ndtr(-self._z(x))

    def _quantile(self, p):
        return self._loc + self._scale * ndtri(p)

    def _entropy(self):
        return (0.5 + _HALF_LOG_TWO_PI) + log(self._scale) + zeros_like(self._loc)

    def _mean(self):
        return self._loc * ones_like(self._scale)

    def _stddev(self):
        return self._scale * ones_like(self._loc)

    _mode = _mean


@RegisterKL(Normal, Normal)
def _kl_normal_normal(a, b, name=None):
    with name_scope(name, "kl_normal_normal", [a.loc, b.loc, a.scale, b.scale]):
        ratio = square(a.scale) / square(b.scale)
        return square(a.loc - b.loc) / (2.0 * square(b.scale)) + 0.5 * (ratio - 1.0 - log(ratio))


class Laplace(_LocScale):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale)."""

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Laplace"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name, dict(locals()))

    def _sample_n(self, n, seed=None):
        low = np.nextafter(self._dtype.np_dtype.type(-1.0), self._dtype.np_dtype.type(0.0))
        u = random_uniform(concat([[n], self.batch_shape_tensor()], 0), minval=low, maxval=1.0,
                           dtype=self._dtype, seed=seed)
        return self._loc - self._scale * sign(u) * log1p(-_abs(u))

    def _z(self, x):
        return (x - self._loc) / self._scale

    def _log_prob(self, x):
        return -_abs(self._z(x)) - (math.log(2.0) + log(self._scale))

    def _prob(self, x):
        return exp(self._log_prob(x))

    def _cdf(self, x):
        z = self._z(x)
        return 0.5 + 0.5 * sign(z) * (1.0 - exp(-_abs(z)))

    def _log_cdf(self, x):
        return _log_cdf_laplace(self._z(x))

    def _log_survival_function(self, x):
        return _log_cdf_laplace(-self._z(x))

    def _entropy(self):
        return math.log(2.0) + 1.0 + log(self._scale + zeros_like(self._loc))

    def _mean(self):
        return self._loc + zeros_like(self._scale)

    def _stddev(self):
        return math.sqrt(2.0) * self._scale * ones_like(self._loc)

    _mode = _mean


def _log_cdf_laplace(z):
    """log of the standard Laplace CDF (TF's special_math.log_cdf_laplace)."""
    return where_v2(less(z, 0.0), -math.log(2.0) + minimum(z, 0.0), log1p(-0.5 * exp(-_abs(z))))


class StudentT(Distribution):
    """StudentT(df, loc, scale): Student's t with `df` degrees of freedom, shifted and scaled."""

    def __init__(self, df, loc, scale, validate_args=False, allow_nan_stats=True, name="StudentT"):
        parameters = dict(locals())
        with name_scope(name, values=[df, loc, scale]) as scope:
            p = float_params("StudentT", df=df, loc=loc, scale=scale)
            self._df = identity(p["df"], name="df")
            self._loc, self._scale = identity(p["loc"], name="loc"), identity(p["scale"], name="scale")
        super().__init__(self._df.dtype.base_dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, [self._df, self._loc, self._scale], scope.rstrip("/"))

    df = property(lambda self: self._df)
    loc = property(lambda self: self._loc)
    scale = property(lambda self: self._scale)

    def _batch_shape(self):
        return broadcast_batch_shape(self._df, self._loc, self._scale)

    def _batch_shape_tensor(self):
        return shape(self._df + self._loc + self._scale)

    def _sample_n(self, n, seed=None):
        normal = random_normal(concat([[n], self.batch_shape_tensor()], 0), dtype=self._dtype, seed=seed)
        df = self._df * self._ones()
        gamma = random_gamma([n], 0.5 * df, beta=0.5, dtype=self._dtype, seed=None if seed is None else seed + 1)
        return normal * rsqrt(gamma / df) * self._scale + self._loc

    def _log_prob(self, x):
        y = (x - self._loc) / self._scale
        unnormalized = -0.5 * (self._df + 1.0) * log1p(square(y) / self._df)
        normalization = (log(_abs(self._scale)) + 0.5 * log(self._df) + 0.5 * math.log(math.pi)
                         + lgamma(0.5 * self._df) - lgamma(0.5 * (self._df + 1.0)))
        return unnormalized - normalization

    def _prob(self, x):
        return exp(self._log_prob(x))

    def _cdf(self, x):
        y = (x - self._loc) / _abs(self._scale)
        x_t = self._df / (square(y) + self._df)
        neg_cdf = 0.5 * betainc(0.5 * self._df * ones_like(x_t), 0.5 * ones_like(x_t), x_t)  # Betainc: equal ranks
        return where_v2(less(y, 0.0), neg_cdf, 1.0 - neg_cdf)

    def _entropy(self):
        df = self._df * self._ones()
        lbeta_half = lgamma(0.5 * df) + lgamma(0.5 + zeros_like(df)) - lgamma(0.5 * df + 0.5)
        return (log(_abs(self._scale)) + 0.5 * log(df) + lbeta_half
                + 0.5 * (df + 1.0) * (digamma(0.5 * (df + 1.0)) - digamma(0.5 * df)))

    def _mean(self):
        mean = self._loc * self._ones()
        return self._nan_where_undefined(greater(self._df * self._ones(), 1.0), mean,
                                         "mean not defined for components of df <= 1")

    def _variance(self):
        df = self._df * self._ones()
        denom = where_v2(greater(df, 2.0), df - 2.0, ones_like(df))
        var = square(self._scale) * df / denom
        defined = where_v2(greater(df, 2.0), var, np.array(np.inf, self._dtype.np_dtype) * ones_like(df))
        return self._nan_where_undefined(greater(df, 1.0), defined,
                                         "variance not defined for components of df <= 1")

    def _mode(self):
        return self._loc * self._ones()


class Uniform(Distribution):
    """Uniform(low=0, high=1): constant density on [low, high)."""

    def __init__(self, low=0.0, high=1.0, validate_args=False, allow_nan_stats=True, name="Uniform"):
        parameters = dict(locals())
        with name_scope(name, values=[low, high]) as scope:
            p = float_params("Uniform", low=low, high=high)
            self._low, self._high = identity(p["low"], name="low"), identity(p["high"], name="high")
        super().__init__(self._low.dtype.base_dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, [self._low, self._high], scope.rstrip("/"))

    low = property(lambda self: self._low)
    high = property(lambda self: self._high)

    def range(self, name="range"):
        """high - low."""
        with name_scope(f"{self._name}/{name}"):
            return self._high - self._low

    def _batch_shape(self):
        return broadcast_batch_shape(self._low, self._high)

    def _batch_shape_tensor(self):
        return shape(self._low + self._high)

    def _sample_n(self, n, seed=None):
        u = random_uniform(concat([[n], self.batch_shape_tensor()], 0), dtype=self._dtype, seed=seed)
        return self._low + self.range() * u

    def _prob(self, x):
        bx = x * ones(self.batch_shape_tensor(), dtype=x.dtype)
        inside = where_v2(logical_or(less(bx, self._low), bx >= self._high), zeros_like(bx),
                          ones_like(bx) / self.range())
        return where_v2(is_nan(bx), bx, inside)

    def _cdf(self, x):
        bx = x * ones(self.batch_shape_tensor(), dtype=x.dtype)
        below = where_v2(less(bx, self._low), zeros_like(bx), (bx - self._low) / self.range())
        return where_v2(bx >= self._high, ones_like(bx), below)

    def _entropy(self):
        return log(self.range())

    def _mean(self):
        return (self._low + self._high) / 2.0

    def _variance(self):
        return square(self.range()) / 12.0

    def _stddev(self):
        return self.range() / math.sqrt(12.0)

