"""Draws built on the uniform stream of random_ops: multinomial / categorical, random_shuffle,
random_crop.

Each is a composite of `random_uniform` (so TF1's seeds, a new draw per run, and identical values
on every scheduler come from random_ops' counter-based stream) and deterministic ops:
- multinomial: per row b and sample n, u[b, n] ~ U[0, 1) picks the first class whose cumulative
  unnormalized probability exceeds u * total (inverse-CDF sampling; classes of -inf logits are
  never drawn).
- random_shuffle: the rows of `value` gathered in the order that sorts one uniform per row.
- random_crop: an offset per dim drawn uniformly in [0, shape - size], then a slice.
The values are not TF's Philox draws, only their distributions.
"""

from __future__ import annotations

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import name_scope
from ..graph.ops import Tensor
from .array_ops import shape, stack
from .common import convert_to_tensor
from .gather_ops import gather, top_k
from .index_ops import slice as slice_
from .manip_ops import expand_dims
from .math_ops import cast, exp, floor, less_equal, minimum, multiply, subtract
from .random_ops import random_uniform
from .reduction_ops import cumsum, reduce_max, reduce_sum

__all__ = ["multinomial", "random_shuffle", "random_crop"]


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """[batch, num_samples] class indices drawn from the categorical distribution of each row of
    `logits` ([batch, num_classes], unnormalized log-probabilities). output_dtype int64
    (default) or int32. ValueError for logits not of rank 2; TypeError for non-float logits."""
    out_dtype = as_dtype(output_dtype or dtypes.int64)
    if out_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"multinomial: output_dtype must be int32 or int64, got {out_dtype.name}")
    with name_scope(name, "multinomial", [logits]):
        logits = convert_to_tensor(logits, name="logits")
        if not logits.dtype.is_floating:
            raise TypeError(f"multinomial: logits must be a float tensor, got {logits.dtype.name} ({logits.name!r})")
        if logits.shape.ndims not in (None, 2):
            raise ValueError(f"logits should be a matrix, got shape {logits.shape} ({logits.name!r})")
        wide = cast(logits, dtypes.float64)
        cdf = cumsum(exp(subtract(wide, reduce_max(wide, axis=1, keepdims=True))), axis=1)  # [B, C]
        n = num_samples if isinstance(num_samples, Tensor) else convert_to_tensor(int(num_samples), dtypes.int32)
        u = random_uniform(stack([shape(logits, out_type=dtypes.int32)[0], cast(n, dtypes.int32)]),
                           dtype=dtypes.float64, seed=seed)  # [B, N]
        target = multiply(u, cdf[:, -1:])
        below = less_equal(expand_dims(cdf, 1), expand_dims(target, 2))  # [B, N, C]: classes passed
        count = reduce_sum(cast(below, dtypes.int32), axis=2)
        last = subtract(shape(logits, out_type=dtypes.int32)[1], 1)
        return cast(minimum(count, last), out_dtype)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """TF's `tf.random.categorical`: `multinomial` with the dtype argument named `dtype`."""
    return multinomial(logits, num_samples, seed=seed, name=name or "categorical", output_dtype=dtype)


def random_shuffle(value, seed=None, name=None):
    """`value` with its first dimension shuffled (the same permutation for every slice)."""
    with name_scope(name, "random_shuffle", [value]):
        value = convert_to_tensor(value, name="value")
        if value.shape.ndims == 0:
            raise ValueError(f"random_shuffle: value must have rank >= 1, got a scalar ({value.name!r})")
        n = shape(value, out_type=dtypes.int32)[0]
        keys = random_uniform(stack([n]), dtype=dtypes.float64, seed=seed)
        return gather(value, top_k(keys, k=n, sorted=True).indices)


def random_crop(value, size, seed=None, name=None):
    """A random `size` slice of `value` (size[i] <= shape[i]; InvalidArgumentError at run time
    otherwise), its offset drawn uniformly per dim."""
    with name_scope(name, "random_crop", [value, size]):
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        limit = subtract(shape(value, out_type=dtypes.int32), size) + 1
        u = random_uniform(shape(size, out_type=dtypes.int32), dtype=dtypes.float64, seed=seed)
        offset = minimum(cast(floor(multiply(u, cast(limit, dtypes.float64))), dtypes.int32), limit - 1)
        return slice_(value, offset, size)
