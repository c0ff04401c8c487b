"""`tf.distributions.Distribution`, its reparameterization types and the KL registry (TF 1.x's
`distribution.py` and `kullback_leibler.py`).

A distribution is a batch of independent distributions over events: `batch_shape` (static, a
TensorShape) and `event_shape`, with `_tensor` versions. The public methods are TF1's: each calls
the subclass's `_method` inside a name scope and falls back as TF's does (`log_prob` from `_prob`,
`prob` from `_log_prob`, `cdf`/`log_cdf` likewise, `survival_function` as 1 - cdf,
`log_survival_function` as log1p(-cdf), `stddev` from `_variance`, `variance` from `_stddev`);
what a family lacks raises NotImplementedError naming the method and the class. Everything is
composed of existing ops, so graph mode, eager mode, Dask lowering and gradients come from them.
"""

from __future__ import annotations

import numpy as np

from ..graph import dtypes
from ..graph.graph import control_dependencies, name_scope
from ..graph.shape import TensorShape, broadcast_static_shape
from ..kernels.array_ops import identity, reshape, shape
from ..kernels.check_ops import Assert
from ..kernels.common import convert_to_tensor
from ..kernels.creation_ops import fill, ones
from ..kernels.manip_ops import concat
from ..kernels.math_ops import exp, is_nan, log, log1p, logical_not, sqrt, square, where_v2
from ..kernels.reduction_ops import reduce_all, reduce_any, reduce_prod

__all__ = ["ReparameterizationType", "FULLY_REPARAMETERIZED", "NOT_REPARAMETERIZED", "Distribution",
           "kl_divergence", "RegisterKL"]


class ReparameterizationType:
    """Whether samples are differentiable functions of the parameters (`FULLY_REPARAMETERIZED`)
    or not (`NOT_REPARAMETERIZED`)."""

    def __init__(self, rep_type):
        self._rep_type = rep_type

    def __repr__(self):
        return f"<Reparameterization Type: {self._rep_type}>"

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


def param(value, name, dtype_hint=dtypes.float32):
    """A parameter or value as a tensor: a tensor or numpy array keeps its dtype, a Python number
    or list takes `dtype_hint` (float32 by default, as TF's). A constant made here is named
    `<name>/input` (as TF's identity converts it), leaving `<name>` to the parameter's identity:
    `Normal/loc:0`, as TF names it."""
    if hasattr(value, "dtype"):
        return convert_to_tensor(value, name=f"{name}/input")
    return convert_to_tensor(value, dtype=dtype_hint, name=f"{name}/input")


def float_params(where, **values):
    """The parameters as tensors of one float dtype (the first given one's; Python values follow
    it): TypeError naming them when tensors disagree, as TF's assert_same_float_dtype."""
    typed = [dtypes.as_dtype(v.dtype).base_dtype for v in values.values() if hasattr(v, "dtype")]
    hint = dtypes.as_dtype(typed[0]) if typed else dtypes.float32
    out = {k: param(v, k, hint) for k, v in values.items()}
    kinds = {t.dtype.base_dtype for t in out.values()}
    if len(kinds) > 1 or not next(iter(kinds)).is_floating:
        raise TypeError(f"{where}: parameters must share one float dtype, got "
                        f"{', '.join(f'{k}: {t.dtype.name}' for k, t in out.items())}")
    return out


class Distribution:
    """The base of the families (see the module). Subclasses set their parameters, call
    `__init__` and define `_batch_shape`, `_batch_shape_tensor`, `_event_shape`,
    `_event_shape_tensor`, `_sample_n(n, seed)` and the `_method`s they have."""

    def __init__(self, dtype, reparameterization_type, validate_args, allow_nan_stats, parameters=None,
                 graph_parents=None, name=None):
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._validate_args, self._allow_nan_stats = validate_args, allow_nan_stats
        self._parameters = dict(parameters or {})
        self._parameters.pop("self", None)
        self._graph_parents = list(graph_parents or [])
        self._name = name or type(self).__name__

    # ---- properties -----------------------------------------------------------------------------
    dtype = property(lambda self: self._dtype)
    name = property(lambda self: self._name + "/")  # the name scope of its ops, as TF gives it
    reparameterization_type = property(lambda self: self._reparameterization_type)
    validate_args = property(lambda self: self._validate_args)
    allow_nan_stats = property(lambda self: self._allow_nan_stats)

    @property
    def parameters(self):
        """The constructor's arguments, as a dict."""
        return {k: v for k, v in self._parameters.items() if not k.startswith("__")}

    def copy(self, **override_parameters_kwargs):
        """The same distribution with some constructor arguments replaced."""
        return type(self)(**{**self.parameters, **override_parameters_kwargs})

    @property
    def batch_shape(self):
        return TensorShape(self._batch_shape())

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        with self._scope(name):
            if self.batch_shape.is_fully_defined():
                return convert_to_tensor(np.array(self.batch_shape.as_list(), np.int32), name="batch_shape")
            return self._batch_shape_tensor()

    @property
    def event_shape(self):
        return TensorShape(self._event_shape())

    def event_shape_tensor(self, name="event_shape_tensor"):
        with self._scope(name):
            if self.event_shape.is_fully_defined():
                return convert_to_tensor(np.array(self.event_shape.as_list(), np.int32), name="event_shape")
            return self._event_shape_tensor()

    def is_scalar_event(self, name="is_scalar_event"):
        with self._scope(name):
            return convert_to_tensor(self.event_shape.ndims == 0, name="is_scalar_event")

    def is_scalar_batch(self, name="is_scalar_batch"):
        with self._scope(name):
            return convert_to_tensor(self.batch_shape.ndims == 0, name="is_scalar_batch")

    def _event_shape(self):
        return TensorShape([])

    def _event_shape_tensor(self):
        return convert_to_tensor(np.zeros([0], np.int32))

    def _scope(self, name):
        return name_scope(f"{self._name}/{name}" if name else self._name)

    def _unimplemented(self, method):
        return NotImplementedError(f"{method} is not implemented: {type(self).__name__}")

    # ---- sampling -------------------------------------------------------------------------------
    def sample(self, sample_shape=(), seed=None, name="sample"):
        """Samples of shape `sample_shape + batch_shape + event_shape`."""
        with self._scope(name):
            if not hasattr(sample_shape, "dtype") or isinstance(sample_shape, (np.ndarray, np.generic)):
                sample_shape = np.asarray(sample_shape, np.int32).reshape([-1])
            if isinstance(sample_shape, np.ndarray):
                n = int(np.prod(sample_shape)) if sample_shape.size else 1
                samples = self._sample_n(n, seed)
                static = TensorShape(sample_shape.tolist()).concatenate(self.batch_shape).concatenate(self.event_shape)
                out = reshape(samples, concat([sample_shape, shape(samples)[1:]], 0))
                out.set_shape(static)
                return out
            sample_shape = convert_to_tensor(sample_shape, dtype=dtypes.int32, name="sample_shape")
            samples = self._sample_n(reduce_prod(sample_shape), seed)
            return reshape(samples, concat([reshape(sample_shape, [-1]), shape(samples)[1:]], 0))

    def _sample_n(self, n, seed=None):
        raise self._unimplemented("sample_n")

    # ---- densities and distribution functions ---------------------------------------------------
    def _value(self, value):
        return param(value, "value", self._dtype)

    def _either(self, name, value, first, second, link):
        with self._scope(name):
            value = self._value(value)
            try:
                return getattr(self, first)(value)
            except NotImplementedError:
                try:
                    return link(getattr(self, second)(value))
                except NotImplementedError:
                    raise self._unimplemented(name) from None

    def log_prob(self, value, name="log_prob"):
        return self._either(name, value, "_log_prob", "_prob", log)

    def prob(self, value, name="prob"):
        return self._either(name, value, "_prob", "_log_prob", exp)

    def log_cdf(self, value, name="log_cdf"):
        return self._either(name, value, "_log_cdf", "_cdf", log)

    def cdf(self, value, name="cdf"):
        return self._either(name, value, "_cdf", "_log_cdf", exp)

    def survival_function(self, value, name="survival_function"):
        with self._scope(name):
            try:
                return self._survival_function(self._value(value))
            except NotImplementedError:
                return 1.0 - self.cdf(value)

    def log_survival_function(self, value, name="log_survival_function"):
        with self._scope(name):
            try:
                return self._log_survival_function(self._value(value))
            except NotImplementedError:
                return log1p(-self.cdf(value))

    def quantile(self, value, name="quantile"):
        with self._scope(name):
            return self._quantile(self._value(value))

    def _log_prob(self, value):
        raise self._unimplemented("log_prob")

    def _prob(self, value):
        raise self._unimplemented("prob")

    def _log_cdf(self, value):
        raise self._unimplemented("log_cdf")

    def _cdf(self, value):
        raise self._unimplemented("cdf")

    def _survival_function(self, value):
        raise self._unimplemented("survival_function")

    def _log_survival_function(self, value):
        raise self._unimplemented("log_survival_function")

    def _quantile(self, value):
        raise self._unimplemented("quantile")

    # ---- statistics -----------------------------------------------------------------------------
    def _stat(self, name):
        with self._scope(name):
            return getattr(self, "_" + name)()

    def entropy(self, name="entropy"):
        return self._stat("entropy")

    def mean(self, name="mean"):
        return self._stat("mean")

    def mode(self, name="mode"):
        return self._stat("mode")

    def covariance(self, name="covariance"):
        return self._stat("covariance")

    def variance(self, name="variance"):
        with self._scope(name):
            try:
                return self._variance()
            except NotImplementedError:
                try:
                    return square(self._stddev())
                except NotImplementedError:
                    raise self._unimplemented("variance") from None

    def stddev(self, name="stddev"):
        with self._scope(name):
            try:
                return self._stddev()
            except NotImplementedError:
                try:
                    return sqrt(self._variance())
                except NotImplementedError:
                    raise self._unimplemented("stddev") from None

    def _entropy(self):
        raise self._unimplemented("entropy")

    def _mean(self):
        raise self._unimplemented("mean")

    def _mode(self):
        raise self._unimplemented("mode")

    def _covariance(self):
        raise self._unimplemented("covariance")

    def _variance(self):
        raise self._unimplemented("variance")

    def _stddev(self):
        raise self._unimplemented("stddev")

    def cross_entropy(self, other, name="cross_entropy"):
        """H[self, other] = H[self] + KL[self || other]."""
        with self._scope(name):
            return self.entropy() + kl_divergence(self, other)

    def kl_divergence(self, other, name="kl_divergence"):
        with self._scope(name):
            return kl_divergence(self, other)

    # ---- helpers for the families ---------------------------------------------------------------
    def _ones(self):
        """Ones of the batch shape (broadcasts a parameter to it)."""
        return ones(self.batch_shape_tensor(), dtype=self._dtype)

    def _nan_where_undefined(self, defined, value, message):
        """`value` where `defined`, NaN elsewhere (allow_nan_stats), else an assertion that fails
        with InvalidArgumentError(`message`) at run time where it is not defined."""
        if self._allow_nan_stats:
            nan = fill(shape(value), np.array(np.nan, self._dtype.np_dtype))
            return where_v2(defined, value, nan)
        with control_dependencies([Assert(reduce_all(defined), [message])]):
            return identity(value)

    def __repr__(self):
        return (f"<tf.distributions.{type(self).__name__} '{self.name}' batch_shape={self.batch_shape} "
                f"event_shape={self.event_shape} dtype={self._dtype.name}>")


def broadcast_batch_shape(*params):
    """The static batch shape of parameters broadcast together."""
    out = TensorShape([])
    for p in params:
        out = broadcast_static_shape(out, p.shape)
    return out


# ---- KL divergence -----------------------------------------------------------------------------
_DIVERGENCES = {}


def _registered_kl(type_a, type_b):
    """The KL function of the closest registered pair of base classes (TF's MRO walk)."""
    for a in type_a.__mro__:
        for b in type_b.__mro__:
            fn = _DIVERGENCES.get((a, b))
            if fn is not None:
                return fn
    return None


def kl_divergence(distribution_a, distribution_b, allow_nan_stats=True, name=None):
    """KL(distribution_a || distribution_b), batchwise, from the function RegisterKL registered for
    their classes (or base classes); NotImplementedError when there is none. With
    `allow_nan_stats=False` a NaN fails the run with InvalidArgumentError."""
    fn = _registered_kl(type(distribution_a), type(distribution_b))
    if fn is None:
        raise NotImplementedError(f"No KL(distribution_a || distribution_b) registered for distribution_a type "
                                  f"{type(distribution_a).__name__} and distribution_b type "
                                  f"{type(distribution_b).__name__}")
    with name_scope("KullbackLeibler"):
        kl = fn(distribution_a, distribution_b, name=name)
        if allow_nan_stats:
            return kl
        kl = identity(kl, name="kl")
        message = (f"KL calculation between {distribution_a.name} and {distribution_b.name} returned NaN values "
                   "(and was called with allow_nan_stats=False). Values:")
        with control_dependencies([Assert(logical_not(reduce_any(is_nan(kl))), [message, kl])]):
            return identity(kl, name="checked_kl")


class RegisterKL:
    """`@RegisterKL(ClassA, ClassB)` registers `kl_fn(a, b, name=None)` for that pair."""

    def __init__(self, dist_cls_a, dist_cls_b):
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn):
        if not callable(kl_fn):
            raise TypeError(f"kl_fn must be callable, received: {kl_fn}")
        if self._key in _DIVERGENCES:
            raise ValueError(f"KL({self._key[0].__name__} || {self._key[1].__name__}) has already been registered "
                             f"to: {_DIVERGENCES[self._key]}")
        _DIVERGENCES[self._key] = kl_fn
        return kl_fn

