"""`tf.keras.losses` as TensorFlow 1.15 shipped it.

Loss functions `fn(y_true, y_pred)` give the per-sample loss (the mean, or sum, over the last
axis); the `Loss` classes weight those by `sample_weight` and reduce them to a scalar
('sum_over_batch_size': sum / number of elements, the default; 'sum'; or 'none').
"""

from __future__ import annotations

from .. import nn
from ..graph.graph import name_scope
from ..kernels import array_ops, manip_ops, math_ops, reduction_ops
from ..kernels.common import convert_to_tensor
from . import backend as K
from .utils.generic_utils import deserialize_keras_object, get_identified, serialize_keras_object

__all__ = [
    "mean_squared_error", "mse", "MSE", "mean_absolute_error", "mae", "MAE", "mean_absolute_percentage_error",
    "mape", "MAPE", "mean_squared_logarithmic_error", "msle", "MSLE", "squared_hinge", "hinge", "categorical_hinge",
    "logcosh", "huber_loss", "categorical_crossentropy", "sparse_categorical_crossentropy", "binary_crossentropy",
    "kullback_leibler_divergence", "kld", "KLD", "poisson", "cosine_proximity", "cosine_similarity", "cosine",
    "Reduction", "Loss", "LossFunctionWrapper", "MeanSquaredError", "MeanAbsoluteError",
    "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "SquaredHinge", "Hinge", "CategoricalHinge",
    "LogCosh", "Huber", "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "BinaryCrossentropy",
    "KLDivergence", "Poisson", "CosineSimilarity", "get", "serialize", "deserialize",
]


def _pair(y_true, y_pred):
    y_pred = convert_to_tensor(y_pred)
    return math_ops.cast(y_true, y_pred.dtype), y_pred


# ---- per-sample loss functions ------------------------------------------------------------------
def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return K.mean(math_ops.squared_difference(y_pred, y_true), axis=-1)


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return K.mean(math_ops.abs(y_pred - y_true), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    diff = math_ops.abs((y_true - y_pred) / math_ops.maximum(math_ops.abs(y_true), K.epsilon()))
    return 100.0 * K.mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    first = math_ops.log(math_ops.maximum(y_pred, K.epsilon()) + 1.0)
    second = math_ops.log(math_ops.maximum(y_true, K.epsilon()) + 1.0)
    return K.mean(math_ops.squared_difference(first, second), axis=-1)


def _maybe_convert_labels(y_true):
    """Labels that are all 0 or 1 become -1 or 1 (what the hinge losses expect)."""
    is_binary = reduction_ops.reduce_all(math_ops.logical_or(math_ops.equal(y_true, 0.0),
                                                             math_ops.equal(y_true, 1.0)))
    flag = math_ops.cast(is_binary, y_true.dtype)
    return flag * (2.0 * y_true - 1.0) + (1.0 - flag) * y_true


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _maybe_convert_labels(y_true)
    return K.mean(math_ops.square(math_ops.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


def hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _maybe_convert_labels(y_true)
    return K.mean(math_ops.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    pos = reduction_ops.reduce_sum(y_true * y_pred, axis=-1)
    neg = reduction_ops.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return math_ops.maximum(0.0, neg - pos + 1.0)


def huber_loss(y_true, y_pred, delta=1.0):
    y_true, y_pred = _pair(y_true, y_pred)
    error = math_ops.abs(y_pred - y_true)
    quadratic = math_ops.minimum(error, delta)
    return K.mean(0.5 * math_ops.square(quadratic) + delta * (error - quadratic), axis=-1)


def logcosh(y_true, y_pred):
    """mean(log(cosh(y_pred - y_true))), computed as x + softplus(-2x) - log 2 (no overflow)."""
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return K.mean(x + nn.softplus(-2.0 * x) - math_ops.cast(0.6931471805599453, x.dtype), axis=-1)


def _num_classes(y_pred):
    n = y_pred.shape[-1] if y_pred.shape.ndims else None
    n = getattr(n, "value", n)
    return n if n is not None else math_ops.cast(array_ops.shape(y_pred)[-1], y_pred.dtype)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0):
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / _num_classes(y_pred)
    return K.categorical_crossentropy(y_true, y_pred, from_logits=from_logits)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    return K.sparse_categorical_crossentropy(y_true, y_pred, from_logits=from_logits, axis=axis)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0):
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return K.mean(K.binary_crossentropy(y_true, y_pred, from_logits=from_logits), axis=-1)


def kullback_leibler_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = math_ops.clip_by_value(y_true, K.epsilon(), 1.0)
    y_pred = math_ops.clip_by_value(y_pred, K.epsilon(), 1.0)
    return reduction_ops.reduce_sum(y_true * math_ops.log(y_true / y_pred), axis=-1)


def poisson(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return K.mean(y_pred - y_true * math_ops.log(y_pred + K.epsilon()), axis=-1)


def cosine_similarity(y_true, y_pred, axis=-1):
    """Minus the cosine of the angle between y_true and y_pred (TF 1.15: a loss to minimize)."""
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = nn.l2_normalize(y_true, axis=axis)
    y_pred = nn.l2_normalize(y_pred, axis=axis)
    return -reduction_ops.reduce_sum(y_true * y_pred, axis=axis)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence
cosine_proximity = cosine = cosine_similarity


# ---- Loss classes ---------------------------------------------------------------------------------
class Reduction:
    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}.")


def _weigh(losses, sample_weight):
    """losses * sample_weight, the weight's trailing 1 squeezed or its missing axes added."""
    if sample_weight is None:
        return losses
    weight = math_ops.cast(sample_weight, losses.dtype)
    l_rank, w_rank = losses.shape.ndims, weight.shape.ndims
    if l_rank is not None and w_rank is not None:
        if w_rank == l_rank + 1 and weight.shape.as_list()[-1] == 1:
            weight = manip_ops.squeeze(weight, [-1])
        elif w_rank == l_rank - 1 and losses.shape.as_list()[-1] == 1:
            losses = manip_ops.squeeze(losses, [-1])
        while weight.shape.ndims < losses.shape.ndims:
            weight = manip_ops.expand_dims(weight, -1)
    return losses * weight


def compute_weighted_loss(losses, sample_weight=None, reduction=Reduction.SUM_OVER_BATCH_SIZE):
    """The weighted per-sample losses reduced as `reduction` says."""
    Reduction.validate(reduction)
    losses = convert_to_tensor(losses)
    weighted = _weigh(losses, sample_weight)
    if reduction == Reduction.NONE:
        return weighted
    total = reduction_ops.reduce_sum(weighted)
    if reduction == Reduction.SUM:
        return total
    return total / math_ops.cast(array_ops.size(weighted), total.dtype)


class Loss:
    """Base class: subclasses define `call(y_true, y_pred)` giving per-sample losses."""

    def __init__(self, reduction=Reduction.AUTO, name=None):
        Reduction.validate(reduction)
        self.reduction = reduction
        self.name = name

    def __call__(self, y_true, y_pred, sample_weight=None):
        """The scalar loss (or per-sample losses for reduction 'none')."""
        with name_scope(self.name or type(self).__name__):
            losses = self.call(y_true, y_pred)
            reduction = Reduction.SUM_OVER_BATCH_SIZE if self.reduction == Reduction.AUTO else self.reduction
            return compute_weighted_loss(losses, sample_weight, reduction=reduction)

    def call(self, y_true, y_pred):
        raise NotImplementedError("Must be implemented in subclasses.")

    def get_config(self):
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A Loss over a loss function (with its keyword arguments, kept in the config)."""

    def __init__(self, fn, reduction=Reduction.AUTO, name=None, **kwargs):
        super().__init__(reduction=reduction, name=name)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        config = dict(self._fn_kwargs)
        config.update(super().get_config())
        return config


def _wrapper(class_name, fn, default_name, **defaults):
    """A LossFunctionWrapper subclass with `defaults` as its keyword arguments."""
    def __init__(self, reduction=Reduction.AUTO, name=default_name, **kwargs):
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{class_name}.__init__() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, **{**defaults, **kwargs})
    return type(class_name, (LossFunctionWrapper,), {"__init__": __init__, "__doc__": fn.__doc__,
                                                     "__module__": __name__})


MeanSquaredError = _wrapper("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _wrapper("MeanAbsolutePercentageError", mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _wrapper("MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error")
SquaredHinge = _wrapper("SquaredHinge", squared_hinge, "squared_hinge")
Hinge = _wrapper("Hinge", hinge, "hinge")
CategoricalHinge = _wrapper("CategoricalHinge", categorical_hinge, "categorical_hinge")
LogCosh = _wrapper("LogCosh", logcosh, "logcosh")
Huber = _wrapper("Huber", huber_loss, "huber_loss", delta=1.0)
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", categorical_crossentropy, "categorical_crossentropy",
                                   from_logits=False, label_smoothing=0)
SparseCategoricalCrossentropy = _wrapper("SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
                                         "sparse_categorical_crossentropy", from_logits=False)
BinaryCrossentropy = _wrapper("BinaryCrossentropy", binary_crossentropy, "binary_crossentropy",
                              from_logits=False, label_smoothing=0)
KLDivergence = _wrapper("KLDivergence", kullback_leibler_divergence, "kullback_leibler_divergence")
Poisson = _wrapper("Poisson", poisson, "poisson")
CosineSimilarity = _wrapper("CosineSimilarity", cosine_similarity, "cosine_similarity", axis=-1)

_TABLE = {name: obj for name, obj in globals().items()
          if not name.startswith("_") and (callable(obj)) and name in __all__ and name not in ("get", "serialize",
                                                                                                 "deserialize")}


def serialize(loss):
    return serialize_keras_object(loss)


def deserialize(name, custom_objects=None):
    return deserialize_keras_object(name, _TABLE, custom_objects, "loss function")


def get(identifier):
    """A loss for a name, a config dict, a callable or None; ValueError otherwise."""
    return get_identified(identifier, deserialize, "loss function")
