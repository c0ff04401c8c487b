"""Keras's dense attention layers as TF 1.15 shipped them: `Attention` (Luong's dot-product
attention) and `AdditiveAttention` (Bahdanau's), called on `[query, value]` or
`[query, value, key]` ([batch, Tq, dim], [batch, Tv, dim], key defaulting to value).

scores [batch, Tq, Tv] (query·keyᵀ, times a learned scalar `scale` with `use_scale`; or
sum(scale·tanh(query + key)) for the additive form, `scale` a [dim] vector), softmax over Tv,
then the weighted sum of the values. A value mask (or `causal=True`, which hides the future
keys from each query position) puts -1e9 on the hidden scores; a query mask zeroes the
output rows and is the output's mask. TF 1.15's layers had no dropout or score outputs.
"""

from __future__ import annotations

from ...graph import dtypes
from ...graph.shape import TensorShape
from ...kernels.array_ops import shape as shape_op
from ...kernels.creation_ops import ones
from ...kernels.linalg_ops import matmul
from ...kernels.manip_ops import expand_dims
from ...kernels.math_ops import cast, logical_and, logical_not, multiply, subtract, tanh
from ...kernels.matrix_ops import matrix_band_part
from ...kernels.reduction_ops import reduce_sum
from ...nn.activations import softmax
from ..engine.base_layer import Layer

__all__ = ["Attention", "AdditiveAttention"]


def _lower_triangular_mask(tq, tv):
    """[1, Tq, Tv] bool: True where the key position is not after the query position."""
    return cast(matrix_band_part(ones([1, tq, tv], dtype=dtypes.int32), -1, 0), dtypes.bool)


class _BaseDenseAttention(Layer):
    """What both attention forms share: argument checks, masking, the softmax-weighted sum."""

    def __init__(self, causal=False, **kwargs):
        super().__init__(**kwargs)
        self.causal = bool(causal)
        self.supports_masking = True

    def _validate_call_args(self, inputs, mask):
        name = type(self).__name__
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"{name} layer must be called on a list of inputs, namely [query, value] or "
                             "[query, value, key].")
        if len(inputs) < 2 or len(inputs) > 3:
            raise ValueError(f"{name} layer accepts inputs list of length 2 or 3, namely [query, value] or "
                             f"[query, value, key]. Given length: {len(inputs)}")
        if mask is not None:
            if not isinstance(mask, (list, tuple)):
                raise ValueError(f"{name} layer mask must be a list, namely [query_mask, value_mask].")
            if len(mask) != 2 and len(mask) != len(inputs):
                raise ValueError(f"{name} layer mask must be a list of length 2, namely [query_mask, value_mask]. "
                                 f"Given length: {len(mask)}")

    def _calculate_scores(self, query, key):
        raise NotImplementedError

    def call(self, inputs, mask=None):
        self._validate_call_args(inputs, mask)
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        for t, what in ((q, "query"), (v, "value"), (k, "key")):
            if t.shape.ndims is not None and t.shape.ndims != 3:
                raise ValueError(f"Layer {self.name}: the {what} must have rank 3 ([batch, T, dim]); got shape "
                                 f"{t.shape.as_list()}")
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        scores = self._calculate_scores(q, k)
        scores_mask = expand_dims(cast(v_mask, dtypes.bool), -2) if v_mask is not None else None
        if self.causal:
            dims = shape_op(scores)
            causal_mask = _lower_triangular_mask(dims[1], dims[2])
            scores_mask = causal_mask if scores_mask is None else logical_and(scores_mask, causal_mask)
        if scores_mask is not None:
            scores = subtract(scores, multiply(1e9, cast(logical_not(scores_mask), scores.dtype)))
        result = matmul(softmax(scores), v)
        if q_mask is not None:
            result = multiply(result, expand_dims(cast(q_mask, result.dtype), -1))
        return result

    def compute_mask(self, inputs, mask=None):
        self._validate_call_args(inputs, mask)
        if mask:
            return mask[0]
        return None

    def compute_output_shape(self, input_shape):
        q, v = input_shape[0], input_shape[1]
        q = q.as_list() if hasattr(q, "as_list") else list(q)
        v = v.as_list() if hasattr(v, "as_list") else list(v)
        return TensorShape(q[:-1] + v[-1:])

    def get_config(self):
        config = super().get_config()
        config["causal"] = self.causal
        return config


class Attention(_BaseDenseAttention):
    """Dot-product attention: scores = query·keyᵀ (· the scalar `scale` with use_scale=True)."""

    def __init__(self, use_scale=False, **kwargs):
        super().__init__(**kwargs)
        self.use_scale = bool(use_scale)

    def build(self, input_shape):
        self.scale = self.add_weight(name="scale", shape=(), initializer="ones", dtype=self.dtype,
                                     trainable=True) if self.use_scale else None
        self.built = True

    def _calculate_scores(self, query, key):
        scores = matmul(query, key, transpose_b=True)
        if self.scale is not None:
            scores = multiply(scores, self.scale)
        return scores

    def get_config(self):
        config = super().get_config()
        config["use_scale"] = self.use_scale
        return config


class AdditiveAttention(_BaseDenseAttention):
    """Additive attention: scores = sum(scale · tanh(query + key)) over dim (`scale` a [dim]
    glorot_uniform vector with use_scale=True, the default)."""

    def __init__(self, use_scale=True, **kwargs):
        super().__init__(**kwargs)
        self.use_scale = bool(use_scale)

    def build(self, input_shape):
        dim = input_shape[1][-1] if isinstance(input_shape, list) else None
        dim = getattr(dim, "value", dim)
        if self.use_scale:
            if dim is None:
                raise ValueError(f"Layer {self.name}: the last dimension of the value must be defined; got "
                                 f"{input_shape}")
            self.scale = self.add_weight(name="scale", shape=[int(dim)], initializer="glorot_uniform",
                                         dtype=self.dtype, trainable=True)
        else:
            self.scale = None
        self.built = True

    def _calculate_scores(self, query, key):
        total = tanh(expand_dims(query, -2) + expand_dims(key, -3))
        if self.scale is not None:
            total = multiply(self.scale, total)
        return reduce_sum(total, axis=-1)

    def get_config(self):
        config = super().get_config()
        config["use_scale"] = self.use_scale
        return config
