"""TF1's CTC functions: ctc_loss (v1 and v2), the greedy and beam-search decoders (ops of
`kernels/ctc_ops.py`), collapse_repeated and ctc_unique_labels (composites, as TF1's)."""

from __future__ import annotations

from ..graph import dtypes
from ..graph.graph import name_scope
from ..kernels import ctc_ops  # noqa: F401 - registers the CTC ops
from ..kernels.array_ops import reshape, shape
from ..kernels.common import apply_op, convert_to_tensor
from ..kernels.creation_ops import ones_like, zeros_like
from ..kernels.data_dependent_ops import gather_nd, sequence_mask
from ..kernels.functional_ops import map_fn
from ..kernels.manip_ops import concat, stack, transpose
from ..kernels.math_ops import add, cast, less, logical_and, not_equal, subtract, where
from ..kernels.pad_ops import pad
from ..kernels.reduction_ops import reduce_max, reduce_sum
from ..kernels.scatter_nd_ops import scatter_nd
from ..kernels.sort_ops import unique_with_counts
from ..kernels.sparse_ops import SparseTensor, SparseTensorValue

__all__ = ["ctc_loss", "ctc_loss_v2", "ctc_greedy_decoder", "ctc_beam_search_decoder", "ctc_beam_search_decoder_v2",
           "collapse_repeated", "ctc_unique_labels"]


def _sparse(labels, what):
    if isinstance(labels, SparseTensorValue):
        labels = SparseTensor.from_value(labels)
    if not isinstance(labels, SparseTensor):
        raise TypeError(f"Expected {what} (first argument) to be a SparseTensor, got {type(labels).__name__}")
    return labels


def _move_blank(logits, blank_index):
    """Logits with class `blank_index` moved last (TF's rotation for a blank that is not last)."""
    num_classes = logits.shape[2].value
    if blank_index < 0:
        if num_classes is None:
            raise ValueError("a negative blank_index needs logits with a static number of classes")
        blank_index += num_classes
    if num_classes is not None and blank_index == num_classes - 1:
        return logits, blank_index, False
    return concat([logits[:, :, :blank_index], logits[:, :, blank_index + 1:], logits[:, :, blank_index:blank_index + 1]],
                  axis=2), blank_index, True


def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False, ctc_merge_repeated=True,
             ignore_longer_outputs_than_inputs=False, time_major=True, logits=None):
    """The CTC loss (negative log probability of each label sequence), float [batch].

    labels: an int32 SparseTensor [batch, max_label_len] of classes in [0, num_classes - 1);
    inputs: logits [max_time, batch, num_classes] (batch major when not `time_major`), the last
    class the blank; sequence_length: int32 [batch]. InvalidArgumentError (when it runs) for a label
    out of range or a sequence too short for its labels (loss 0 and no gradient instead with
    `ignore_longer_outputs_than_inputs`). The gradient is TF1's, with respect to the logits.
    """
    inputs = logits if inputs is None else inputs
    labels = _sparse(labels, "labels")
    if sequence_length is None:
        raise ValueError("ctc_loss needs sequence_length")
    with name_scope(None, "CTCLoss", [inputs, sequence_length]):
        x = convert_to_tensor(inputs, name="inputs")
        if not time_major:
            x = transpose(x, [1, 0, 2])
        seq = cast(convert_to_tensor(sequence_length, name="sequence_length"), dtypes.int32)
        loss, _ = apply_op("CTCLoss", [x, cast(labels.indices, dtypes.int64), cast(labels.values, dtypes.int32), seq],
                           {"preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
                            "ctc_merge_repeated": bool(ctc_merge_repeated),
                            "ignore_longer_outputs_than_inputs": bool(ignore_longer_outputs_than_inputs)})
        return loss


def _dense_to_sparse(labels, label_length):
    labels = convert_to_tensor(labels, name="labels")
    mask = sequence_mask(label_length, maxlen=shape(labels)[1])
    idx = where(mask)
    return SparseTensor(idx, gather_nd(labels, idx), cast(shape(labels), dtypes.int64))


def ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major=True, unique=None, blank_index=None,
                name=None):
    """TF's v2 CTC loss: `labels` dense int [batch, max_label_len] with `label_length`, or a
    SparseTensor (then `blank_index` is required); the blank is `blank_index` (default 0 for dense
    labels), negative counting from the end. `unique` is accepted and not needed."""
    del unique
    with name_scope(name, "ctc_loss_dense", [logits, labels, label_length, logit_length]):
        logits = convert_to_tensor(logits, name="logits")
        if not logits_time_major:
            logits = transpose(logits, [1, 0, 2])
        if isinstance(labels, (SparseTensor, SparseTensorValue)):
            if blank_index is None:
                raise ValueError("blank_index must be given when using SparseTensor labels.")
            sp = _sparse(labels, "labels")
        else:
            blank_index = 0 if blank_index is None else blank_index
            sp = _dense_to_sparse(labels, label_length)
        logits, blank_index, moved = _move_blank(logits, blank_index)
        if moved:
            vals = cast(sp.values, dtypes.int32)
            sp = SparseTensor(sp.indices, where(less(vals, blank_index), vals, subtract(vals, 1)), sp.dense_shape)
        return ctc_loss(sp, logits, logit_length, time_major=True, ignore_longer_outputs_than_inputs=False)


def _decoded(outs, top_paths):
    return [SparseTensor(outs[i], outs[top_paths + i], outs[2 * top_paths + i]) for i in range(top_paths)], \
        outs[3 * top_paths]


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """The best path of each sequence: ([SparseTensor [batch, max_decoded_len] int64],
    neg_sum_logits [batch, 1]); the best class of each step, repeats merged (when asked) and
    blanks dropped. The blank is the last class unless `blank_index` says otherwise."""
    with name_scope(None, "CTCGreedyDecoder", [inputs, sequence_length]):
        x = convert_to_tensor(inputs, name="inputs")
        moved = False
        if blank_index is not None:
            x, blank_index, moved = _move_blank(x, blank_index)
        seq = cast(convert_to_tensor(sequence_length, name="sequence_length"), dtypes.int32)
        decoded, log_prob = _decoded(apply_op("CTCGreedyDecoder", [x, seq], {"merge_repeated": bool(merge_repeated),
                                                                              "blank_index": -1}), 1)
        if moved:
            d = decoded[0]
            vals = where(less(d.values, blank_index), d.values, add(d.values, 1))
            decoded = [SparseTensor(d.indices, vals, d.dense_shape)]
        return decoded, log_prob


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1, merge_repeated=True):
    """The `top_paths` best label sequences of a prefix beam search of width `beam_width` (TF's,
    blank the last class): ([top_paths SparseTensors [batch, max_len] int64], log_probability
    [batch, top_paths]). InvalidArgumentError when top_paths > beam_width."""
    with name_scope(None, "CTCBeamSearchDecoder", [inputs, sequence_length]):
        x = convert_to_tensor(inputs, name="inputs")
        seq = cast(convert_to_tensor(sequence_length, name="sequence_length"), dtypes.int32)
        outs = apply_op("CTCBeamSearchDecoder", [x, seq], {"beam_width": int(beam_width), "top_paths": int(top_paths),
                                                           "merge_repeated": bool(merge_repeated)})
        return _decoded(outs, int(top_paths))


def ctc_beam_search_decoder_v2(inputs, sequence_length, beam_width=100, top_paths=1):
    """ctc_beam_search_decoder without merging repeated labels (TF's v2)."""
    return ctc_beam_search_decoder(inputs, sequence_length, beam_width, top_paths, merge_repeated=False)


def collapse_repeated(labels, seq_length, name=None):
    """Merges runs of a repeated label in each row: (collapsed labels [batch, max_len] zero padded,
    new lengths [batch]), as TF1's."""
    with name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        labels = convert_to_tensor(labels, name="labels")
        seq_length = convert_to_tensor(seq_length, name="seq_length")
        # a position is kept when it differs from the one before it (the first always)
        label_mask = concat([ones_like(labels[:, :1], dtype=dtypes.bool), not_equal(labels[:, 1:], labels[:, :-1])], axis=1)
        maxlen = shape(labels)[1]
        seq_mask = sequence_mask(seq_length, maxlen=maxlen)
        label_mask = logical_and(label_mask, seq_mask)
        new_len = reduce_sum(cast(label_mask, dtypes.int32), axis=1)
        new_maxlen = reduce_max(new_len)
        idx_mask = sequence_mask(new_len, maxlen=new_maxlen)
        flat = gather_nd(labels, where(label_mask))
        # scatter the kept labels row by row into a [batch, new_maxlen] block of zeros
        out = scatter_nd(where(idx_mask), flat, cast(stack([shape(labels)[0], new_maxlen]), dtypes.int64))
        return out, new_len


def ctc_unique_labels(labels, name=None):
    """Per row of `labels` [batch, max_len]: (unique labels in first-seen order, zero padded to
    max_len; for each position, the index of its label among them), as TF1's (for ctc_loss_v2)."""
    with name_scope(name, "ctc_unique_labels", [labels]):
        labels = convert_to_tensor(labels, name="labels")

        def _unique(x):
            u = unique_with_counts(x)
            extra = subtract(shape(u.idx)[0], shape(u.y)[0])
            y = pad(u.y, reshape(stack([zeros_like(extra), extra]), [1, 2]))
            return cast(y, dtypes.int64), cast(u.idx, dtypes.int32)

        return map_fn(_unique, labels, dtype=(dtypes.int64, dtypes.int32))

