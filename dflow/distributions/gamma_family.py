"""The gamma family of `tf.distributions`: Gamma, Exponential, Beta, Dirichlet (TF 1.x's formulas;
samples from `random_gamma`, whose gradient with respect to the concentration makes them
reparameterized, as TF's)."""

from __future__ import annotations

import numpy as np

from ..graph.graph import name_scope
from ..graph.shape import TensorShape
from ..kernels.array_ops import identity, shape
from ..kernels.creation_ops import ones_like
from ..kernels.linalg_ops import matmul
from ..kernels.manip_ops import concat, expand_dims
from ..kernels.math_ops import cast, exp, greater, log, logical_and, rsqrt, square, xlogy
from ..kernels.math_ops import log1p as _log1p
from ..kernels.matrix_ops import matrix_set_diag
from ..kernels.random_gamma_poisson_ops import random_gamma
from ..kernels.random_ops import random_uniform
from ..kernels.reduction_ops import reduce_all, reduce_sum
from ..kernels.special_ops import betainc, digamma, igamma, lbeta, lgamma
from .distribution import (
    FULLY_REPARAMETERIZED,
    Distribution,
    RegisterKL,
    broadcast_batch_shape,
    float_params,
)

__all__ = ["Gamma", "Exponential", "Beta", "Dirichlet"]


def _seed2(seed):
    return None if seed is None else seed + 1


class Gamma(Distribution):
    """Gamma(concentration, rate): density x^(concentration-1) exp(-rate x), normalized."""

    def __init__(self, concentration, rate, validate_args=False, allow_nan_stats=True, name="Gamma"):
        parameters = dict(locals())
        with name_scope(name, values=[concentration, rate]) as scope:
            p = float_params("Gamma", concentration=concentration, rate=rate)
            self._concentration = identity(p["concentration"], name="concentration")
            self._rate = identity(p["rate"], name="rate")
        super().__init__(self._concentration.dtype.base_dtype, FULLY_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters, [self._concentration, self._rate], scope.rstrip("/"))

    concentration = property(lambda self: self._concentration)
    rate = property(lambda self: self._rate)

    def _batch_shape(self):
        return broadcast_batch_shape(self._concentration, self._rate)

    def _batch_shape_tensor(self):
        return shape(self._concentration + self._rate)

    def _sample_n(self, n, seed=None):
        return random_gamma([n], self._concentration, beta=self._rate, dtype=self._dtype, seed=seed)

    def _log_prob(self, x):
        unnormalized = xlogy(self._concentration - 1.0, x) - self._rate * x
        return unnormalized - (lgamma(self._concentration) - self._concentration * log(self._rate))

    def _prob(self, x):
        return exp(self._log_prob(x))

    def _cdf(self, x):
        return igamma(self._concentration + 0.0 * x, self._rate * x)

    def _entropy(self):
        c = self._concentration
        return c - log(self._rate) + lgamma(c) + (1.0 - c) * digamma(c)

    def _mean(self):
        return self._concentration / self._rate

    def _variance(self):
        return self._concentration / square(self._rate)

    def _stddev(self):
        return self._concentration ** 0.5 / self._rate

    def _mode(self):
        mode = (self._concentration - 1.0) / self._rate
        return self._nan_where_undefined(greater(self._concentration * ones_like(mode), 1.0), mode,
                                         "mode not defined when any concentration <= 1")


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(g0, g1, name=None):
    with name_scope(name, "kl_gamma_gamma", [g0.concentration, g0.rate, g1.concentration, g1.rate]):
        return ((g0.concentration - g1.concentration) * digamma(g0.concentration)
                + lgamma(g1.concentration) - lgamma(g0.concentration)
                + g1.concentration * log(g0.rate) - g1.concentration * log(g1.rate)
                + g0.concentration * (g1.rate / g0.rate - 1.0))


class Exponential(Gamma):
    """Exponential(rate): Gamma(1, rate); samples are -log(U) / rate."""

    def __init__(self, rate, validate_args=False, allow_nan_stats=True, name="Exponential"):
        parameters = dict(locals())
        with name_scope(name, values=[rate]) as scope:
            rate = identity(float_params("Exponential", rate=rate)["rate"], name="rate")
        super().__init__(ones_like(rate), rate, validate_args, allow_nan_stats, name=scope)
        self._parameters = {k: v for k, v in parameters.items() if k != "self"}

    def _sample_n(self, n, seed=None):
        tiny = np.finfo(self._dtype.np_dtype).tiny
        u = random_uniform(concat([[n], shape(self._rate)], 0), minval=tiny, maxval=1.0, dtype=self._dtype,
                           seed=seed)
        return -log(u) / self._rate

    def _log_survival_function(self, x):
        return -self._rate * x


class Beta(Distribution):
    """Beta(concentration1, concentration0): density x^(c1-1) (1-x)^(c0-1) on [0, 1], normalized."""

    def __init__(self, concentration1=None, concentration0=None, validate_args=False, allow_nan_stats=True,
                 name="Beta"):
        parameters = dict(locals())
        with name_scope(name, values=[concentration1, concentration0]) as scope:
            p = float_params("Beta", concentration1=concentration1, concentration0=concentration0)
            self._concentration1 = identity(p["concentration1"], name="concentration1")
            self._concentration0 = identity(p["concentration0"], name="concentration0")
            self._total_concentration = self._concentration1 + self._concentration0
        super().__init__(self._concentration1.dtype.base_dtype, FULLY_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters, [self._concentration1, self._concentration0],
                         scope.rstrip("/"))

    concentration1 = property(lambda self: self._concentration1)
    concentration0 = property(lambda self: self._concentration0)
    total_concentration = property(lambda self: self._total_concentration)

    def _batch_shape(self):
        return self._total_concentration.shape

    def _batch_shape_tensor(self):
        return shape(self._total_concentration)

    def _sample_n(self, n, seed=None):
        ones = ones_like(self._total_concentration)
        g1 = random_gamma([n], ones * self._concentration1, dtype=self._dtype, seed=seed)
        g0 = random_gamma([n], ones * self._concentration0, dtype=self._dtype, seed=_seed2(seed))
        return g1 / (g1 + g0)

    def _log_normalization(self):
        return lgamma(self._concentration1) + lgamma(self._concentration0) - lgamma(self._total_concentration)

    def _log_prob(self, x):
        unnormalized = xlogy(self._concentration1 - 1.0, x) + (self._concentration0 - 1.0) * _log1p(-x)
        return unnormalized - self._log_normalization()

    def _prob(self, x):
        return exp(self._log_prob(x))

    def _cdf(self, x):
        ones = ones_like(x) * ones_like(self._total_concentration)
        return betainc(self._concentration1 * ones, self._concentration0 * ones, x * ones)

    def _log_cdf(self, x):
        return log(self._cdf(x))

    def _entropy(self):
        return (self._log_normalization()
                - (self._concentration1 - 1.0) * digamma(self._concentration1)
                - (self._concentration0 - 1.0) * digamma(self._concentration0)
                + (self._total_concentration - 2.0) * digamma(self._total_concentration))

    def _mean(self):
        return self._concentration1 / self._total_concentration

    def _variance(self):
        mean = self._mean()
        return mean * (1.0 - mean) / (1.0 + self._total_concentration)

    def _mode(self):
        mode = (self._concentration1 - 1.0) / (self._total_concentration - 2.0)
        defined = logical_and(greater(self._concentration1 * ones_like(mode), 1.0),
                              greater(self._concentration0 * ones_like(mode), 1.0))
        return self._nan_where_undefined(defined, mode, "Mode undefined for concentration1 or concentration0 <= 1.")


@RegisterKL(Beta, Beta)
def _kl_beta_beta(d1, d2, name=None):
    with name_scope(name, "kl_beta_beta", [d1.concentration1, d1.concentration0, d2.concentration1,
                                           d2.concentration0]):
        return (d2._log_normalization() - d1._log_normalization()  # noqa: SLF001 - same family
                - digamma(d1.concentration1) * (d2.concentration1 - d1.concentration1)
                - digamma(d1.concentration0) * (d2.concentration0 - d1.concentration0)
                + digamma(d1.total_concentration) * (d2.total_concentration - d1.total_concentration))


class Dirichlet(Distribution):
    """Dirichlet(concentration): a distribution over the simplex of the last axis (event shape
    `[k]`); density prod x_i^(a_i - 1) / B(a)."""

    def __init__(self, concentration, validate_args=False, allow_nan_stats=True, name="Dirichlet"):
        parameters = dict(locals())
        with name_scope(name, values=[concentration]) as scope:
            self._concentration = identity(float_params("Dirichlet", concentration=concentration)["concentration"],
                                           name="concentration")
            if self._concentration.shape.ndims == 0:
                raise ValueError("Dirichlet: concentration must have rank at least 1 (the event axis), got a scalar")
            self._total_concentration = reduce_sum(self._concentration, -1)
        super().__init__(self._concentration.dtype.base_dtype, FULLY_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters, [self._concentration], scope.rstrip("/"))

    concentration = property(lambda self: self._concentration)
    total_concentration = property(lambda self: self._total_concentration)

    def _batch_shape(self):
        return self._concentration.shape[:-1]

    def _batch_shape_tensor(self):
        return shape(self._total_concentration)

    def _event_shape(self):
        return TensorShape(self._concentration.shape[-1:])

    def _event_shape_tensor(self):
        return shape(self._concentration)[-1:]

    def _k(self):
        return cast(self.event_shape_tensor()[0], self._dtype)

    def _sample_n(self, n, seed=None):
        g = random_gamma([n], self._concentration, dtype=self._dtype, seed=seed)
        return g / reduce_sum(g, -1, keepdims=True)

    def _log_prob(self, x):
        return reduce_sum(xlogy(self._concentration - 1.0, x), -1) - lbeta(self._concentration)

    def _prob(self, x):
        return exp(self._log_prob(x))

    def _entropy(self):
        return (lbeta(self._concentration)
                + (self._total_concentration - self._k()) * digamma(self._total_concentration)
                - reduce_sum((self._concentration - 1.0) * digamma(self._concentration), -1))

    def _mean(self):
        return self._concentration / expand_dims(self._total_concentration, -1)

    def _variance_scale(self):
        return rsqrt(1.0 + expand_dims(self._total_concentration, -1))

    def _variance(self):
        scale = self._variance_scale()
        x = scale * self._mean()
        return x * (scale - x)

    def _covariance(self):
        x = self._variance_scale() * self._mean()
        return matrix_set_diag(-matmul(expand_dims(x, -1), expand_dims(x, -2)), self._variance())

    def _mode(self):
        mode = (self._concentration - 1.0) / (expand_dims(self._total_concentration, -1) - self._k())
        defined = reduce_all(greater(self._concentration, 1.0), -1, keepdims=True) & greater(ones_like(mode), 0.0)
        return self._nan_where_undefined(defined, mode, "Mode undefined when any concentration <= 1")


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(d1, d2, name=None):
    with name_scope(name, "kl_dirichlet_dirichlet", [d1.concentration, d2.concentration]):
        digamma_diff = digamma(d1.concentration) - digamma(reduce_sum(d1.concentration, -1, keepdims=True))
        return (reduce_sum((d1.concentration - d2.concentration) * digamma_diff, -1)
                - lbeta(d1.concentration) + lbeta(d2.concentration))
