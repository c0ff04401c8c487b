"""Sampled losses (TF1's `nce_loss`, `sampled_softmax_loss`) and `compute_accidental_hits`.

Both losses score the true classes and `num_sampled` classes drawn by a candidate sampler
(kernels/candidate_sampling_ops.py; log-uniform by default, as TF1) with one embedding lookup of
`weights` and `biases` at all those ids, so their gradients with respect to the weights are
IndexedSlices of batch·num_true + num_sampled rows: an optimizer updates only those rows.
The logits subtract log(expected count) (`subtract_log_q`), as TF1's `_compute_sampled_logits`.
"""

from __future__ import annotations

import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from ..kernels.array_ops import reshape, shape, size, stop_gradient
from ..kernels.candidate_sampling_ops import log_uniform_candidate_sampler
from ..kernels.common import constant, convert_to_tensor
from ..kernels.creation_ops import ones_like, zeros_like
from ..kernels.creation_ops import range as tf_range
from ..kernels.data_dependent_ops import where_coordinates as coordinates
from ..kernels.linalg_ops import matmul
from ..kernels.manip_ops import concat, expand_dims, split
from ..kernels.math_ops import (
    cast,
    equal,
    greater,
    log,
    logical_and,
    logical_not,
    multiply,
    subtract,
    where,
)
from ..kernels.reduction_ops import reduce_any, reduce_sum
from .classification import sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2
from .core import embedding_lookup

__all__ = ["nce_loss", "sampled_softmax_loss", "compute_accidental_hits"]


def _hits(true_classes, sampled):
    """[batch, num_true, num_sampled] bool: sampled[j] == true_classes[i, k], counting only the last
    position of a class sampled twice (TF1's kernel maps each sampled class to one position)."""
    same = equal(expand_dims(sampled, 1), expand_dims(sampled, 0))  # [S, S]
    n = sampled.shape[0].value
    later = constant(np.triu(np.ones((n, n), bool), 1)) if n is not None else \
        greater(expand_dims(tf_range(size(sampled)), 0), expand_dims(tf_range(size(sampled)), 1))
    last = logical_not(reduce_any(logical_and(same, later), 1))
    return logical_and(equal(expand_dims(true_classes, 2), reshape(sampled, [1, 1, -1])), reshape(last, [1, 1, -1]))


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """(indices int32, ids int64, weights float32 = -FLT_MAX) of the sampled candidates that equal
    a true class: row i of the batch, position j of the sample (TF1's order: by row, then true
    class; a class sampled twice counts at its last position only, as TF1's kernel)."""
    del seed
    with name_scope(name, "ComputeAccidentalHits", [true_classes, sampled_candidates]):
        true_classes = cast(convert_to_tensor(true_classes), dtypes.int64)
        sampled = cast(convert_to_tensor(sampled_candidates), dtypes.int64)
        coords = coordinates(_hits(true_classes, sampled))  # [n, 3] (row, true class, position)
        indices = cast(coords[:, 0], dtypes.int32)
        ids = coords[:, 2]
        weights = subtract(zeros_like(cast(ids, dtypes.float32)), np.float32(np.finfo(np.float32).max))
        return indices, ids, weights


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                            sampled_values=None, subtract_log_q=True, remove_accidental_hits=False,
                            partition_strategy="mod", name=None, seed=None):
    if not isinstance(weights, (list, tuple)):
        weights = [weights]
    with name_scope(name, "compute_sampled_logits", list(weights) + [biases, inputs, labels]):
        labels = convert_to_tensor(labels)
        if labels.dtype != dtypes.int64:
            labels = cast(labels, dtypes.int64)
        labels_flat = reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True, num_classes,
                                                           seed=seed)
        sampled, true_expected, sampled_expected = (stop_gradient(s) for s in sampled_values)
        sampled = cast(sampled, dtypes.int64) if sampled.dtype != dtypes.int64 else sampled
        inputs = convert_to_tensor(inputs)
        all_ids = concat([labels_flat, sampled], 0)
        all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        n_true = labels_flat.shape[0].value
        n_true_t = n_true if n_true is not None else shape(labels_flat, out_type=dtypes.int32)[0]
        dim = all_w.shape[1].value
        # the true rows and the sampled ones as one split (TF1 takes two slices): the gradient
        # of all_w is then one concat, not two zero-padded copies summed
        sizes = concat([reshape(n_true_t, [1]), [-1]], 0) if n_true is None else [n_true, -1]
        true_w, sampled_w = split(all_w, sizes, 0)
        sampled_logits = matmul(inputs, sampled_w, transpose_b=True)  # [batch, num_sampled]
        all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        true_b, sampled_b = split(all_b, sizes, 0)
        rows = reshape(true_w, [-1, num_true, dim if dim is not None else -1])
        true_logits = reduce_sum(multiply(expand_dims(inputs, 1), rows), 2)  # [batch, num_true]
        true_logits = true_logits + reshape(true_b, [-1, num_true])
        sampled_logits = sampled_logits + sampled_b
        if remove_accidental_hits:  # a sampled class that is a true one gets -FLT_MAX added (TF1)
            hit = reduce_any(_hits(labels, sampled), 1)
            sampled_logits = sampled_logits + where(
                hit, ones_like(sampled_logits) * np.finfo(np.float32).min, zeros_like(sampled_logits))
        if subtract_log_q:
            true_logits = true_logits - log(cast(true_expected, true_logits.dtype))
            sampled_logits = sampled_logits - log(cast(sampled_expected, sampled_logits.dtype))
        out_logits = concat([true_logits, sampled_logits], 1)
        out_labels = concat([ones_like(true_logits) / num_true, zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
             remove_accidental_hits=False, partition_strategy="mod", name="nce_loss"):
    """Noise-contrastive estimation loss per example ([batch]): sigmoid cross-entropy of the true
    classes (label 1/num_true) and `num_sampled` sampled classes (label 0). weights
    [num_classes, dim] (or a list of shards), biases [num_classes], labels int [batch, num_true],
    inputs [batch, dim]."""
    logits, labels = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                             num_true=num_true, sampled_values=sampled_values, subtract_log_q=True,
                                             remove_accidental_hits=remove_accidental_hits,
                                             partition_strategy=partition_strategy, name=name)
    losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="sampled_losses")
    return reduce_sum(losses, 1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True, partition_strategy="mod",
                         name="sampled_softmax_loss", seed=None):
    """Sampled softmax loss per example ([batch]): softmax cross-entropy over the true classes and
    `num_sampled` sampled ones, accidental hits removed by default (TF1)."""
    logits, labels = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                             num_true=num_true, sampled_values=sampled_values, subtract_log_q=True,
                                             remove_accidental_hits=remove_accidental_hits,
                                             partition_strategy=partition_strategy, name=name, seed=seed)
    return softmax_cross_entropy_with_logits_v2(labels=stop_gradient(labels), logits=logits)
