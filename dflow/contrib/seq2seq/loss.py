"""`sequence_loss` and `tile_batch` (TF 1.15's contrib/seq2seq loss.py and beam_search_decoder.py).

sequence_loss is the weighted cross-entropy of [batch, time, classes] logits: averaged over the
weights' sum (`average_across_*`), or summed and divided by the count of non-zero weights
(`sum_over_*`, TF 1.15's definition), over both axes, one, or none.
"""

from __future__ import annotations

from ... import math as tfm
from ...graph.graph import name_scope
from ...graph.shape import TensorShape
from ...kernels.array_ops import reshape, stack
from ...kernels.array_ops import shape as shape_op
from ...kernels.common import convert_to_tensor
from ...kernels.manip_ops import concat, expand_dims
from ...kernels.math_ops import cast
from ...kernels.pad_ops import tile
from ...nn.classification import sparse_softmax_cross_entropy_with_logits
from ...rnn import nest

__all__ = ["sequence_loss", "tile_batch"]


def sequence_loss(logits, targets, weights, average_across_timesteps=True, average_across_batch=True,
                  sum_over_timesteps=False, sum_over_batch=False, softmax_loss_function=None, name=None):
    """Weighted cross-entropy of `logits` [batch, time, classes] against int `targets` [batch, time].

    Returns a scalar when both axes are reduced, [time] or [batch] with one, else [batch, time].
    `softmax_loss_function(labels=, logits=)` replaces the sparse softmax cross-entropy.
    ValueError (TF1's words) for wrong ranks or both average_ and sum_ on one axis.
    """
    logits, targets, weights = (convert_to_tensor(x) for x in (logits, targets, weights))
    if logits.shape.ndims != 3:
        raise ValueError("Logits must be a [batch_size x sequence_length x logits] tensor")
    if targets.shape.ndims != 2:
        raise ValueError("Targets must be a [batch_size x sequence_length] tensor")
    if weights.shape.ndims != 2:
        raise ValueError("Weights must be a [batch_size x sequence_length] tensor")
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set to True at same time.")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot be set to True at same time.")
    with name_scope(name, "sequence_loss", [logits, targets, weights]):
        num_classes = shape_op(logits)[2]
        logits_flat = reshape(logits, stack([-1, num_classes]))
        targets_flat = reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = sparse_softmax_cross_entropy_with_logits(labels=targets_flat, logits=logits_flat)
        else:
            crossent = softmax_loss_function(labels=targets_flat, logits=logits_flat)
        crossent = crossent * reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return tfm.divide_no_nan(tfm.reduce_sum(crossent), tfm.reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            count = cast(tfm.count_nonzero(weights), crossent.dtype)
            return tfm.divide_no_nan(tfm.reduce_sum(crossent), count)
        crossent = reshape(crossent, shape_op(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return tfm.divide_no_nan(tfm.reduce_sum(crossent, axis=axis), tfm.reduce_sum(weights, axis=axis))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            count = cast(tfm.count_nonzero(weights, axis=axis), crossent.dtype)
            return tfm.divide_no_nan(tfm.reduce_sum(crossent, axis=axis), count)
        return crossent


def _tile_one(t, multiplier):
    t = convert_to_tensor(t, name="t")
    ndims = t.shape.ndims
    if ndims is None or ndims < 1:
        raise ValueError(f"tile_batch: t must have statically known rank, got {t.name!r} of shape {t.shape}")
    shape_t = shape_op(t)
    tiling = [1] * (ndims + 1)
    tiling[1] = multiplier
    static_batch = t.shape[0].value * multiplier if t.shape[0].value is not None else None
    tiled = tile(expand_dims(t, 1), tiling)
    tiled = reshape(tiled, concat([expand_dims(shape_t[0] * multiplier, 0), shape_t[1:]], 0))
    tiled.set_shape(TensorShape([static_batch]).concatenate(t.shape[1:]))
    return tiled


def tile_batch(t, multiplier, name=None):
    """Each batch entry of `t` (a nested structure of tensors [batch, ...]) repeated `multiplier`
    times in place: [batch * multiplier, ...], rows b*m .. b*m+m-1 copies of row b (TF1's
    tile_batch, for a beam search's memory). ValueError for a tensor of unknown rank."""
    with name_scope(name, "tile_batch", nest.flatten(t)):
        return nest.map_structure(lambda x: _tile_one(x, multiplier), t)

