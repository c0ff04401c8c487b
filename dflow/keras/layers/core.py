"""Keras's core layers: `Dense`, `Dropout`, `Flatten`, `Activation` (over dflow's tf.layers where
TF1 had the same layer), with Keras's argument names, string identifiers and `get_config`; and
`Reshape`, `Permute`, `RepeatVector`, `Lambda`, `ActivityRegularization`, `SpatialDropout1D/2D/3D`,
`GaussianNoise`, `GaussianDropout` (the noise layers act only while training).

A `Lambda`'s config names its function (`module` and name) when it is a module-level function;
dflow does not marshal bytecode, so `get_config` of a lambda or a nested function (what saving a
model asks for) is a ValueError saying so; building and calling such a layer works as usual."""

from __future__ import annotations

import importlib
import inspect

import numpy as np

from ...graph.shape import TensorShape
from ...kernels.array_ops import identity, reshape, shape, stack
from ...kernels.manip_ops import expand_dims, transpose
from ...kernels.math_ops import cast, greater_equal
from ...kernels.pad_ops import tile
from ...kernels.random_ops import random_normal, random_uniform
from ...layers import core as tf_core
from ...layers.base import input_shape_of
from ...layers.utils import smart_cond
from .. import activations, constraints, initializers, regularizers
from ..engine.base_layer import InputSpec, Layer, shape_list
from ..utils.generic_utils import _lookup

__all__ = ["Dense", "Dropout", "Flatten", "Activation", "Reshape", "Permute", "RepeatVector", "Lambda",
           "ActivityRegularization", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianNoise",
           "GaussianDropout", "AlphaDropout"]


def _ser(module, value):
    return module.serialize(value) if value is not None else None


_KINDS = {"initializer": initializers, "regularizer": regularizers, "constraint": constraints}


_RECURRENT_WEIGHTS = ("kernel", "recurrent", "bias")


def _set_weights_args(owner, **identifiers):
    """owner.<weight>_<kind> = that kind's module `get(identifier)`, for each `<weight>_<kind>=`
    argument (kind: initializer, regularizer, constraint)."""
    for key, identifier in identifiers.items():
        setattr(owner, key, _KINDS[key.rsplit("_", 1)[1]].get(identifier))


def _weights_config(owner, weights=("kernel", "bias"), kinds=tuple(_KINDS)):
    """{"<weight>_<kind>": the serialized `owner.<weight>_<kind>`} for each kind (initializer,
    regularizer, constraint) and weight: the config entries a layer with those weights stores."""
    return {f"{w}_{kind}": _ser(_KINDS[kind], getattr(owner, f"{w}_{kind}")) for kind in kinds for w in weights}


def _dense_config(layer):
    """The config entries Dense, the convolutions and the locally-connected layers share, in
    Keras's order: activation, use_bias, then their kernel's and bias's initializers,
    regularizers (with the activity regularizer) and constraints."""
    return {"activation": activations.serialize(layer.activation), "use_bias": layer.use_bias,
            **_weights_config(layer, kinds=["initializer", "regularizer"]),
            "activity_regularizer": _ser(regularizers, layer.activity_regularizer),
            **_weights_config(layer, kinds=["constraint"])}


class Dense(tf_core.Dense, Layer):
    """activation(inputs · kernel + bias); Keras's defaults: glorot_uniform kernel, zeros bias."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(int(units), activation=activations.get(activation), use_bias=use_bias,
                         kernel_initializer=initializers.get(kernel_initializer),
                         bias_initializer=initializers.get(bias_initializer),
                         kernel_regularizer=regularizers.get(kernel_regularizer),
                         bias_regularizer=regularizers.get(bias_regularizer),
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=constraints.get(kernel_constraint),
                         bias_constraint=constraints.get(bias_constraint), **kwargs)
        self.supports_masking = True

    def get_config(self):
        config = Layer.get_config(self)
        config.update({"units": self.units, **_dense_config(self)})
        return config


class Dropout(tf_core.Dropout, Layer):
    """Drops a fraction `rate` of the inputs while training (the learning phase by default)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(rate=rate, noise_shape=noise_shape, seed=seed, **kwargs)
        self.supports_masking = True

    def call(self, inputs, training=None):
        if training is None or self.rate == 0:
            return inputs
        return super().call(inputs, training=training)

    def get_config(self):
        config = Layer.get_config(self)
        config.update({"rate": self.rate, "noise_shape": self.noise_shape, "seed": self.seed})
        return config


class Flatten(tf_core.Flatten, Layer):
    """[batch, d1, d2, ...] -> [batch, d1·d2·...]."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)

    def get_config(self):
        config = Layer.get_config(self)
        config["data_format"] = self.data_format
        return config


class Activation(Layer):
    """Applies an activation (a name or a callable)."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config["activation"] = activations.serialize(self.activation)
        return config


class Reshape(Layer):
    """[batch, ...] -> [batch, *target_shape]; one entry of target_shape may be -1 (inferred)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def _fix_unknown_dimension(self, input_shape, output_shape):
        """output_shape with its -1 resolved from input_shape (Keras's checks and wording)."""
        output_shape = list(output_shape)
        msg = "total size of new array must be unchanged"
        known, unknown = 1, None
        for index, dim in enumerate(output_shape):
            if dim < 0:
                if unknown is not None:
                    raise ValueError("Can only specify one unknown dimension.")
                unknown = index
            else:
                known *= dim
        original = int(np.prod(input_shape, dtype=np.int64))
        if unknown is not None:
            if known == 0 or original % known != 0:
                raise ValueError(msg)
            output_shape[unknown] = original // known
        elif original != known:
            raise ValueError(msg)
        return output_shape

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        if None in dims[1:]:
            return TensorShape([dims[0]] + [d if d != -1 else None for d in self.target_shape])
        return TensorShape([dims[0]] + self._fix_unknown_dimension(dims[1:], self.target_shape))

    def call(self, inputs):
        static = self.compute_output_shape(inputs.shape)  # Keras's errors first
        out = reshape(inputs, stack([shape(inputs)[0]] + list(self.target_shape)))
        out.set_shape(static)
        return out

    def get_config(self):
        config = super().get_config()
        config["target_shape"] = self.target_shape
        return config


class Permute(Layer):
    """Permutes the non-batch axes: `dims` is a permutation of 1..rank-1."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation `dims` for Permute Layer: {dims}. The set of indices in `dims` "
                             f"must be consecutive and start from 1.")
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        return TensorShape([dims[0]] + [dims[d] for d in self.dims])

    def call(self, inputs):
        return transpose(inputs, perm=(0,) + self.dims)

    def get_config(self):
        config = super().get_config()
        config["dims"] = self.dims
        return config


class RepeatVector(Layer):
    """[batch, features] -> [batch, n, features]."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = n
        self.input_spec = InputSpec(ndim=2)

    def compute_output_shape(self, input_shape):
        dims = input_shape_of(input_shape).as_list()
        return TensorShape([dims[0], self.n, dims[1]])

    def call(self, inputs):
        return tile(expand_dims(inputs, 1), [1, self.n, 1])

    def get_config(self):
        config = super().get_config()
        config["n"] = self.n
        return config


def _is_module_function(fn):
    return inspect.isfunction(fn) and fn.__name__ != "<lambda>" and "<locals>" not in fn.__qualname__


def _function_config(fn, what, layer_name):
    if _is_module_function(fn):
        return fn.__name__, "function", fn.__module__
    raise ValueError(f"Lambda layer {layer_name!r}: its {what} {getattr(fn, '__qualname__', fn)!r} is not a "
                     f"module-level function, so it cannot be stored in a config (dflow does not marshal Python "
                     f"bytecode as Keras does). Use a named module-level function, or a Layer subclass, to save it.")


def _load_function(name, module, custom_objects=None):
    found = _lookup(name, {}, custom_objects)
    if found is not None:
        return found
    if module is not None:
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            pass
    raise ValueError(f"Lambda layer config: unknown function {name!r} (module {module!r}); register it with "
                     f"`custom_object_scope` or make it importable")


class Lambda(Layer):
    """Wraps a function of the inputs as a layer: `function(inputs, **arguments)`.

    output_shape: a shape (batch excluded) or a function of the input shape; without it the shape
    is found by calling the function. mask: a tensor, a function (inputs, mask) -> mask, or None.
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.arguments = arguments if arguments else {}
        if mask is not None:
            self.supports_masking = True
        self.mask = mask
        self._output_shape = output_shape
        self._call_takes_mask = "mask" in inspect.signature(function).parameters \
            if callable(function) else False
        self._call_takes_training = "training" in inspect.signature(function).parameters \
            if callable(function) else False

    def call(self, inputs, mask=None, training=None):
        arguments = dict(self.arguments)
        if self._call_takes_mask:
            arguments["mask"] = mask
        if self._call_takes_training:
            arguments["training"] = training
        return self.function(inputs, **arguments)

    def compute_mask(self, inputs, mask=None):
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def compute_output_shape(self, input_shape):
        if self._output_shape is None:
            return super().compute_output_shape(input_shape)
        if callable(self._output_shape):
            out = self._output_shape(shape_list(input_shape) if not isinstance(input_shape, (list, tuple)) or
                                     not input_shape or not isinstance(input_shape[0], (list, tuple, TensorShape))
                                     else [shape_list(TensorShape(s)) for s in input_shape])
            return TensorShape(out) if not (out and isinstance(out[0], (list, tuple))) else \
                [TensorShape(s) for s in out]
        first = input_shape[0] if isinstance(input_shape, list) and input_shape and \
            isinstance(input_shape[0], (list, tuple, TensorShape)) else input_shape
        batch = input_shape_of(first).as_list()[0] if input_shape_of(first).ndims else None
        return TensorShape([batch] + list(self._output_shape))

    def get_config(self):
        config = super().get_config()
        name, kind, module = _function_config(self.function, "function", self.name)
        config.update({"function": name, "function_type": kind, "module": module})
        if callable(self._output_shape):
            name, kind, module = _function_config(self._output_shape, "output_shape", self.name)
            config.update({"output_shape": name, "output_shape_type": kind, "output_shape_module": module})
        else:
            config.update({"output_shape": self._output_shape, "output_shape_type": "raw",
                           "output_shape_module": None})
        if self.mask is not None:
            if not callable(self.mask):
                raise ValueError(f"Lambda layer {self.name!r}: a tensor mask cannot be stored in a config")
            name, kind, module = _function_config(self.mask, "mask", self.name)
            config.update({"mask": name, "mask_type": kind, "mask_module": module})
        config["arguments"] = self.arguments
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        function = _load_function(config.pop("function"), config.pop("module", None), custom_objects)
        config.pop("function_type", None)
        output_shape_type = config.pop("output_shape_type", "raw")
        output_shape_module = config.pop("output_shape_module", None)
        if output_shape_type == "function":
            config["output_shape"] = _load_function(config["output_shape"], output_shape_module, custom_objects)
        elif config.get("output_shape") is not None:
            config["output_shape"] = tuple(config["output_shape"])
        mask_module = config.pop("mask_module", None)
        if config.pop("mask_type", None) == "function":
            config["mask"] = _load_function(config["mask"], mask_module, custom_objects)
        return cls(function, **config)


class ActivityRegularization(Layer):
    """The identity, adding l1·sum|x| + l2·sum(x²) (over the batch size) to the layer's losses."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.supports_masking = True
        self.l1, self.l2 = l1, l2

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({"l1": self.l1, "l2": self.l2})
        return config


class _SpatialDropout(Dropout):
    """Drops whole feature maps: one draw per (example, channel), shared along the spatial axes."""

    _rank = 1

    def __init__(self, rate, data_format=None, **kwargs):
        super().__init__(rate, **kwargs)
        self.data_format = data_format or "channels_last"
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def call(self, inputs, training=None):
        if training is None or self.rate == 0:
            return inputs
        ones = [1] * self._rank
        self.noise_shape = [None, None] + ones if self.data_format == "channels_first" else [None] + ones + [None]
        try:
            return super().call(inputs, training=training)
        finally:
            self.noise_shape = None

    def get_config(self):
        config = super().get_config()
        if self._rank > 1:
            config["data_format"] = self.data_format
        return config


class SpatialDropout1D(_SpatialDropout):
    """Dropout of whole channels of [batch, steps, channels]."""
    _rank = 1


class SpatialDropout2D(_SpatialDropout):
    """Dropout of whole feature maps of images."""
    _rank = 2


class SpatialDropout3D(_SpatialDropout):
    """Dropout of whole feature maps of volumes."""
    _rank = 3


class _TrainingNoise(Layer):
    """A layer that applies `_noised(inputs)` while training and is the identity otherwise (or when
    `_acts()` says its parameters make it a no-op); `_config_keys` name what `get_config` stores."""

    _config_keys = ("rate", "seed")

    def __init__(self, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.seed = seed

    def _acts(self):
        return 0.0 < self.rate < 1.0

    def call(self, inputs, training=None):
        if training is None or not self._acts():
            return inputs
        return smart_cond(training, lambda: self._noised(inputs), lambda: identity(inputs))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({key: getattr(self, key) for key in self._config_keys})
        return config


class GaussianNoise(_TrainingNoise):
    """Adds N(0, stddev²) noise while training; the identity otherwise."""

    _config_keys = ("stddev", "seed")

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.stddev = stddev

    def _acts(self):
        return True

    def _noised(self, inputs):
        return inputs + random_normal(shape(inputs), mean=0.0, stddev=self.stddev, dtype=inputs.dtype,
                                      seed=self.seed)


class GaussianDropout(_TrainingNoise):
    """Multiplies by N(1, rate/(1 - rate)) noise while training; the identity otherwise."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.rate = rate

    def _noised(self, inputs):
        stddev = float(np.sqrt(self.rate / (1.0 - self.rate)))
        return inputs * random_normal(shape(inputs), mean=1.0, stddev=stddev, dtype=inputs.dtype, seed=self.seed)


class AlphaDropout(_TrainingNoise):
    """Dropout that keeps a SELU network's mean and variance: while training a dropped input
    becomes -alpha·scale, then a·x + b restores the moments (TF 1.15's math); the identity
    otherwise."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape

    def _noised(self, inputs):
        rate = float(self.rate)
        noise_shape = self.noise_shape if self.noise_shape else shape(inputs)
        alpha = 1.6732632423543772848170429916717
        scale = 1.0507009873554804934193349852946
        alpha_p = -alpha * scale
        kept = cast(greater_equal(random_uniform(noise_shape, dtype=inputs.dtype, seed=self.seed), rate),
                    inputs.dtype)
        a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * rate
        return a * (inputs * kept + alpha_p * (1 - kept)) + b
