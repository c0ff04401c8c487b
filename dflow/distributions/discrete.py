"""The discrete families of `tf.distributions`: Bernoulli, Categorical, Multinomial (TF 1.x's
formulas; given `logits` or `probs`, exactly one; not reparameterized)."""

from __future__ import annotations

import numpy as np

from ..framework import get_static_value
from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.shape import TensorShape
from ..kernels.array_ops import identity, reshape, shape
from ..kernels.creation_ops import ones, ones_like, zeros_like
from ..kernels.data_dependent_ops import sequence_mask
from ..kernels.gather_ops import one_hot
from ..kernels.linalg_ops import matmul
from ..kernels.manip_ops import concat, expand_dims, transpose
from ..kernels.math_ops import cast, greater, less, log, log1p, sigmoid, sqrt, where_v2
from ..kernels.matrix_ops import matrix_set_diag
from ..kernels.pad_ops import tile
from ..kernels.random_gamma_poisson_ops import random_gamma
from ..kernels.random_ops import random_uniform
from ..kernels.reduction_ops import argmax, reduce_sum
from ..kernels.reduction_ops import reduce_sum as _reduce_sum
from ..kernels.sampling_ops import multinomial
from ..kernels.special_ops import lbeta, lgamma
from ..nn.activations import log_softmax, softmax, softplus
from ..nn.classification import (
    sigmoid_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
)
from .distribution import NOT_REPARAMETERIZED, Distribution, RegisterKL, float_params, param

__all__ = ["Bernoulli", "Categorical", "Multinomial", "DirichletMultinomial"]


def _logits_and_probs(logits, probs, multidimensional, where):
    """(logits, probs) from exactly one of them (TF's get_logits_and_probs)."""
    if (logits is None) == (probs is None):
        raise ValueError("Must pass probs or logits, but not both.")
    if probs is None:
        logits = identity(param(logits, "logits"), name="logits")
        if not logits.dtype.is_floating:
            raise TypeError(f"{where}: logits must be a float tensor, got {logits.dtype.name}")
        return logits, (softmax(logits, name="probs") if multidimensional else sigmoid(logits, name="probs"))
    probs = identity(param(probs, "probs"), name="probs")
    if not probs.dtype.is_floating:
        raise TypeError(f"{where}: probs must be a float tensor, got {probs.dtype.name}")
    return (log(probs, name="logits") if multidimensional else
            identity(log(probs) - log1p(-probs), name="logits")), probs


class Bernoulli(Distribution):
    """Bernoulli(logits=None, probs=None, dtype=int32): 1 with probability `probs`."""

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False, allow_nan_stats=True,
                 name="Bernoulli"):
        parameters = dict(locals())
        with name_scope(name, values=[logits, probs]) as scope:
            self._logits, self._probs = _logits_and_probs(logits, probs, False, "Bernoulli")
        super().__init__(dtypes.as_dtype(dtype), NOT_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._logits, self._probs], scope.rstrip("/"))

    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _batch_shape(self):
        return self._logits.shape

    def _batch_shape_tensor(self):
        return shape(self._logits)

    def _sample_n(self, n, seed=None):
        u = random_uniform(concat([[n], self.batch_shape_tensor()], 0), dtype=self._probs.dtype, seed=seed)
        return cast(less(u, self._probs), self._dtype)

    def _log_prob(self, event):
        event = cast(event, self._logits.dtype)
        logits = self._logits
        if not (event.shape.is_fully_defined() and logits.shape.is_fully_defined()
                and event.shape == logits.shape):
            logits = ones_like(event) * logits
            event = ones_like(logits) * event
        return -sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self):
        return -self._logits * (sigmoid(self._logits) - 1.0) + softplus(-self._logits)

    def _mean(self):
        return identity(self._probs)

    def _variance(self):
        return self._probs * (1.0 - self._probs)

    def _mode(self):
        return cast(greater(self._probs, 0.5), self._dtype)


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a, b, name=None):
    with name_scope(name, "kl_bernoulli_bernoulli", [a.logits, b.logits]):
        delta0 = softplus(-b.logits) - softplus(-a.logits)
        delta1 = softplus(b.logits) - softplus(a.logits)
        return sigmoid(a.logits) * delta0 + sigmoid(-a.logits) * delta1


def _broadcast_event_and_params(event, params, dtype):
    """A Categorical's integer event and its [..., K] parameters broadcast against each other."""
    if not event.dtype.is_integer:
        event = cast(event, dtypes.int32)
    known = params.shape.ndims is not None and params.shape[:-1].is_fully_defined() and \
        event.shape.is_fully_defined()
    if not known or params.shape[:-1] != event.shape:
        params = params * ones_like(expand_dims(event, -1), dtype=params.dtype)
        event = event * ones(shape(params)[:-1], dtype=event.dtype)
        if params.shape.ndims is not None:
            event.set_shape(params.shape[:-1])
    return event, params


class Categorical(Distribution):
    """Categorical(logits=None, probs=None, dtype=int32): one of K classes (the last axis of
    `logits`/`probs`), a scalar event."""

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False, allow_nan_stats=True,
                 name="Categorical"):
        parameters = dict(locals())
        with name_scope(name, values=[logits, probs]) as scope:
            self._logits, self._probs = _logits_and_probs(logits, probs, True, "Categorical")
            if self._logits.shape.ndims == 0:
                raise ValueError("Categorical: logits/probs must have rank at least 1 (the classes), got a scalar")
            self._event_size = self._logits.shape[-1] if self._logits.shape.ndims is not None else None
        super().__init__(dtypes.as_dtype(dtype), NOT_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._logits, self._probs], scope.rstrip("/"))

    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    @property
    def event_size(self):
        """The number of classes, as a scalar tensor."""
        return shape(self._logits)[-1]

    def _batch_shape(self):
        return self._logits.shape[:-1]

    def _batch_shape_tensor(self):
        return shape(self._logits)[:-1]

    def _sample_n(self, n, seed=None):
        logits_2d = self._logits if self._logits.shape.ndims == 2 else reshape(self._logits, [-1, self.event_size])
        draws = multinomial(logits_2d, n, seed=seed, output_dtype=dtypes.int64 if self._dtype.size > 4
                            else dtypes.int32)
        draws = reshape(transpose(draws), concat([[n], self.batch_shape_tensor()], 0))
        return cast(draws, self._dtype)

    def _value(self, value):
        return param(value, "value", dtypes.int32)

    def _log_prob(self, k):
        k, logits = _broadcast_event_and_params(k, self._logits, self._dtype)
        return -sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _cdf(self, k):
        # TF's: the sum of the probabilities of the classes below k (its sequence_mask)
        k, probs = _broadcast_event_and_params(k, self._probs, self._dtype)
        flat_probs = reshape(probs, [-1, self.event_size])
        flat_k = reshape(k, [-1])
        summed = where_v2(sequence_mask(flat_k, self.event_size), flat_probs, zeros_like(flat_probs))
        return reshape(reduce_sum(summed, -1), shape(k))

    def _entropy(self):
        return -reduce_sum(log_softmax(self._logits) * self._probs, -1)

    def _mode(self):
        out = cast(argmax(self._logits, axis=-1), self._dtype)
        out.set_shape(self.batch_shape)
        return out


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a, b, name=None):
    with name_scope(name, "kl_categorical_categorical", [a.logits, b.logits]):
        return reduce_sum(softmax(a.logits) * (log_softmax(a.logits) - log_softmax(b.logits)), -1)


class _CountVectors(Distribution):
    """A distribution of count vectors: batch and event shapes are those of its mean `_mean_val`
    (the event the last axis)."""

    def _batch_shape(self):
        return self._mean_val.shape[:-1]

    def _batch_shape_tensor(self):
        return shape(self._mean_val)[:-1]

    def _event_shape(self):
        return TensorShape(self._mean_val.shape[-1:])

    def _event_shape_tensor(self):
        return shape(self._mean_val)[-1:]


class Multinomial(_CountVectors):
    """Multinomial(total_count, logits=None, probs=None): counts of `total_count` draws over K
    classes (event shape `[K]`)."""

    def __init__(self, total_count, logits=None, probs=None, validate_args=False, allow_nan_stats=True,
                 name="Multinomial"):
        parameters = dict(locals())
        with name_scope(name, values=[total_count, logits, probs]) as scope:
            self._logits, self._probs = _logits_and_probs(logits, probs, True, "Multinomial")
            self._total_count = identity(param(total_count, "total_count", self._logits.dtype), name="total_count")
            if self._total_count.dtype.base_dtype != self._logits.dtype.base_dtype:
                raise TypeError(f"Multinomial: total_count ({self._total_count.dtype.name}) and logits/probs "
                                f"({self._logits.dtype.name}) must share one dtype")
            self._mean_val = expand_dims(self._total_count, -1) * self._probs
        super().__init__(self._probs.dtype.base_dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, [self._total_count, self._logits, self._probs], scope.rstrip("/"))

    total_count = property(lambda self: self._total_count)
    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _sample_n(self, n, seed=None):
        logits = self._logits * ones_like(expand_dims(self._total_count, -1))
        return _count_draws(tile(reshape(logits, [-1, self._logits.shape[-1]]), [n, 1]), self._total_count,
                            logits, n, self._dtype, seed)

    def _log_prob(self, counts):
        return reduce_sum(counts * log_softmax(self._logits), -1) + _log_combinations(self._total_count, counts)

    def _mean(self):
        return identity(self._mean_val)

    def _variance(self):
        p = self._probs * ones_like(expand_dims(self._total_count, -1))
        return self._mean_val - self._mean_val * p

    def _covariance(self):
        p = self._probs * ones_like(expand_dims(self._total_count, -1))
        return matrix_set_diag(-matmul(expand_dims(self._mean_val, -1), expand_dims(p, -2)), self._variance())


def _count_draws(flat_logits, total_count, batch_logits, n, dtype, seed):
    """`n` samples of counts: for each row of `flat_logits` ([n * B, K]) as many categorical draws
    as its batch member's `total_count`, counted per class; shaped [n] + batch_logits' shape. The
    draws of the largest count are made for every row and those past the row's own count masked
    off, so the counts must be known when the graph is built."""
    counts = get_static_value(total_count)
    if counts is None:
        raise NotImplementedError("sample: dflow needs total_count known when the graph is built (a constant); "
                                  f"got {total_count.name}")
    most = int(np.max(counts)) if np.size(counts) else 0
    k = batch_logits.shape[-1]
    flat_counts = tile(reshape(cast(total_count * ones_like(batch_logits[..., 0]), dtypes.int32), [-1]), [n])
    draws = multinomial(flat_logits, most, seed=seed)  # [n * B, most]
    kept = cast(sequence_mask(flat_counts, most), dtype)
    counted = reduce_sum(one_hot(draws, k, dtype=dtype) * expand_dims(kept, -1), axis=-2)
    return reshape(counted, concat([[n], shape(batch_logits)], 0))


def _log_combinations(n, counts):
    """log(n! / prod(counts!)) over the last axis."""
    return lgamma(n + 1.0) - reduce_sum(lgamma(counts + 1.0), -1)


class DirichletMultinomial(_CountVectors):
    """DirichletMultinomial(total_count, concentration): counts of `total_count` draws with class
    probabilities drawn from Dirichlet(concentration) (event shape `[K]`)."""

    def __init__(self, total_count, concentration, validate_args=False, allow_nan_stats=True,
                 name="DirichletMultinomial"):
        parameters = dict(locals())
        with name_scope(name, values=[total_count, concentration]) as scope:
            p = float_params("DirichletMultinomial", concentration=concentration, total_count=total_count)
            self._total_count = identity(p["total_count"], name="total_count")
            self._concentration = identity(p["concentration"], name="concentration")
            self._total_concentration = _reduce_sum(self._concentration, -1)
            self._mean_val = expand_dims(self._total_count, -1) * self._concentration / \
                expand_dims(self._total_concentration, -1)
        super().__init__(self._concentration.dtype.base_dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, [self._total_count, self._concentration], scope.rstrip("/"))

    total_count = property(lambda self: self._total_count)
    concentration = property(lambda self: self._concentration)
    total_concentration = property(lambda self: self._total_concentration)

    def _sample_n(self, n, seed=None):
        concentration = self._concentration * ones_like(self._mean_val)
        k = self._concentration.shape[-1]
        logits = reshape(log(random_gamma([n], concentration, dtype=self._dtype, seed=seed)), [-1, k])
        return _count_draws(logits, self._total_count, concentration, n, self._dtype,
                            None if seed is None else seed + 1)

    def _log_prob(self, counts):
        return (lbeta(self._concentration + counts) - lbeta(self._concentration)
                + _log_combinations(self._total_count, counts))

    def _mean(self):
        return identity(self._mean_val)

    def _variance_scale(self):
        c0 = expand_dims(self._total_concentration, -1)
        return sqrt((1.0 + c0 / expand_dims(self._total_count, -1)) / (1.0 + c0))

    def _variance(self):
        scale = self._variance_scale()
        x = scale * self._mean_val
        return x * (expand_dims(self._total_count, -1) * scale - x)

    def _covariance(self):
        x = self._variance_scale() * self._mean_val
        return matrix_set_diag(-matmul(expand_dims(x, -1), expand_dims(x, -2)), self._variance())
