"""Keras's `Embedding` as TF 1.15 shipped it: integer ids -> rows of `embedding/embeddings:0`
(RandomUniform(-0.05, 0.05) by default); with `mask_zero`, id 0 is padding and masked."""

from __future__ import annotations

from ...graph import dtypes
from ...kernels.gather_ops import gather
from ...kernels.math_ops import cast, not_equal
from .. import backend as K
from .. import regularizers
from ..engine.base_layer import Layer
from .core import _ser, _set_weights_args, _weights_config

__all__ = ["Embedding"]


class Embedding(Layer):
    """Turns ids [batch, ...] into vectors [batch, ..., output_dim] (a `gather` of the table)."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 activity_regularizer=None, embeddings_constraint=None, mask_zero=False, input_length=None,
                 **kwargs):
        if "input_shape" not in kwargs and "batch_input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,) if input_length else (None,)
        dtype = kwargs.pop("dtype", None) or K.floatx()
        if int(input_dim) <= 0 or int(output_dim) <= 0:
            raise ValueError(f"Both `input_dim` and `output_dim` should be positive, found input_dim {input_dim} "
                             f"and output_dim {output_dim}")
        super().__init__(dtype=dtype, activity_regularizer=activity_regularizer, **kwargs)
        self.input_dim = int(input_dim)
        self.output_dim = int(output_dim)
        _set_weights_args(self, embeddings_initializer=embeddings_initializer,
                          embeddings_regularizer=embeddings_regularizer,
                          embeddings_constraint=embeddings_constraint)
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero
        self.input_length = input_length

    def build(self, input_shape):
        self.embeddings = self.add_weight(shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer, name="embeddings",
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)
        self.built = True

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        input_shape = list(input_shape.as_list() if hasattr(input_shape, "as_list") else input_shape)
        if self.input_length is None:
            return tuple(input_shape) + (self.output_dim,)
        in_lens = list(self.input_length) if isinstance(self.input_length, (list, tuple)) else [self.input_length]
        if len(in_lens) != len(input_shape) - 1:
            raise ValueError(f'"input_length" is {self.input_length}, but received input has shape '
                             f"{tuple(input_shape)}")
        for i, (s1, s2) in enumerate(zip(in_lens, input_shape[1:])):
            if s1 is not None and s2 is not None and s1 != s2:
                raise ValueError(f'"input_length" is {self.input_length}, but received input has shape '
                                 f"{tuple(input_shape)}")
            if s1 is None:
                in_lens[i] = s2
        return (input_shape[0],) + tuple(in_lens) + (self.output_dim,)

    def call(self, inputs):
        if inputs.dtype not in (dtypes.int32, dtypes.int64):
            if not (inputs.dtype.is_integer or inputs.dtype.is_floating):
                raise ValueError(f"Layer {self.name}: expected integer ids, got a tensor of dtype "
                                 f"{inputs.dtype.name}")
            inputs = cast(inputs, dtypes.int32)
        out = gather(self.embeddings, inputs)
        if self.input_length is not None and inputs.shape.ndims is not None:
            out.set_shape(self.compute_output_shape(inputs.shape))
        return out

    def get_config(self):
        config = super().get_config()
        config.update({
            "input_dim": self.input_dim, "output_dim": self.output_dim,
            **_weights_config(self, ["embeddings"], ["initializer", "regularizer"]),
            "activity_regularizer": _ser(regularizers, self.activity_regularizer),
            **_weights_config(self, ["embeddings"], ["constraint"]),
            "mask_zero": self.mask_zero, "input_length": self.input_length})
        return config
