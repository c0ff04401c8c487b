"""`tf.keras.initializers`: Keras's initializer classes (over dflow's TF1 initializers), their
aliases, `get`, `serialize` and `deserialize`. Keras's random defaults: stddev 0.05, [-0.05, 0.05]."""

from __future__ import annotations

from ..graph.dtypes import float32
from ..state import initializers as tf_init
from .utils.generic_utils import deserialize_keras_object, get_identified, serialize_keras_object

__all__ = ["Initializer", "Zeros", "Ones", "Constant", "RandomNormal", "RandomUniform", "TruncatedNormal",
           "VarianceScaling", "Orthogonal", "Identity", "GlorotUniform", "GlorotNormal", "get", "serialize",
           "deserialize", "zeros", "ones", "constant", "random_normal", "random_uniform", "truncated_normal",
           "variance_scaling", "orthogonal", "identity", "glorot_uniform", "glorot_normal", "he_normal",
           "he_uniform", "lecun_normal", "lecun_uniform", "normal", "uniform", "zero", "one"]

Initializer = tf_init.Initializer


def _config(self):
    out = {k: v for k, v in vars(self).items() if not k.startswith("_")}
    if "dtype" in out:
        out["dtype"] = out["dtype"].name
    return out


class Zeros(tf_init.zeros_initializer):
    get_config = _config


class Ones(tf_init.ones_initializer):
    get_config = _config


class Constant(tf_init.constant_initializer):
    def __init__(self, value=0, dtype=float32, verify_shape=False):
        super().__init__(value, dtype, verify_shape)

    def get_config(self):
        return {"value": self.value, "dtype": self.dtype.name}


class RandomNormal(tf_init.random_normal_initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=float32):
        super().__init__(mean, stddev, seed, dtype)

    get_config = _config


class RandomUniform(tf_init.random_uniform_initializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None, dtype=float32):
        super().__init__(minval, maxval, seed, dtype)

    get_config = _config


class TruncatedNormal(tf_init.truncated_normal_initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=float32):
        super().__init__(mean, stddev, seed, dtype)

    get_config = _config


class VarianceScaling(tf_init.variance_scaling_initializer):
    get_config = _config


class Orthogonal(tf_init.orthogonal_initializer):
    get_config = _config


class Identity(tf_init.identity_initializer):
    get_config = _config


class GlorotUniform(VarianceScaling):
    def __init__(self, seed=None, dtype=float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    def __init__(self, seed=None, dtype=float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


def he_normal(seed=None):
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


zeros = zero = Zeros
ones = one = Ones
constant = Constant
random_normal = normal = RandomNormal
random_uniform = uniform = RandomUniform
truncated_normal = TruncatedNormal
variance_scaling = VarianceScaling
orthogonal = Orthogonal
identity = Identity
glorot_uniform = GlorotUniform
glorot_normal = GlorotNormal

_TABLE = {name: obj for name, obj in globals().items() if name in __all__ and name not in (
    "get", "serialize", "deserialize", "Initializer")}
# the TF1 classes too, so a config written with their names loads
_TABLE.update({"HeNormal": he_normal, "HeUniform": he_uniform, "LecunNormal": lecun_normal,
               "LecunUniform": lecun_uniform})


def serialize(initializer):
    return serialize_keras_object(initializer)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, _TABLE, custom_objects, "initializer")


def get(identifier):
    """An initializer for a name ('glorot_uniform' makes a new one), a config dict, a callable or
    None; ValueError otherwise."""
    def from_name(made):
        return made() if isinstance(made, type) or made in (he_normal, he_uniform, lecun_normal,
                                                             lecun_uniform) else made

    return get_identified(identifier, deserialize, "initializer", from_name=from_name)
