"""`BeamSearchDecoder` and `gather_tree` (TF 1.15's contrib/seq2seq beam_search_decoder.py and
beam_search_ops).

The decoder keeps [batch, beam_width] hypotheses. Each step runs the cell on the beams merged into
the batch ([batch * beam_width, ...]), takes log_softmax of the output layer's logits (finished
beams may only extend with `end_token`, at no cost), adds the beams' log-probs, scores them
(divided by ((5 + length) / 6) ** length_penalty_weight, GNMT's length penalty, when the weight is
non-zero) and keeps the top beam_width of beam_width * vocab continuations per batch entry; the
cell states follow their parent beams. At the start only beam 0 is live (the others are finished
with log-prob -inf), so the first step's beams are distinct. `finalize` follows the parent ids back
from each beam's end (`gather_tree`), giving predicted_ids [batch, time, beam_width], best first.

The cell's initial state must be tiled to batch * beam_width (`tile_batch`); an AttentionWrapper's
memory too. TensorArrays in the cell state (an AttentionWrapper's alignment_history) are carried
through the loop and, with `reorder_tensor_arrays`, stacked and reordered along the final beams in
`finalize` (as TF 1.15). coverage_penalty_weight is not provided (NotImplementedError).
"""

from __future__ import annotations

import collections

import numpy as np

from ... import math as tfm
from ...graph import dtypes
from ...graph.graph import control_dependencies, name_scope
from ...graph.ops import Tensor, constant_value
from ...graph.shape import TensorShape
from ...kernels.array_composites import batch_gather
from ...kernels.array_ops import identity, reshape, stack
from ...kernels.array_ops import shape as shape_op
from ...kernels.array_ops import size as size_op
from ...kernels.check_ops import Assert
from ...kernels.common import convert_to_tensor
from ...kernels.creation_ops import fill, zeros
from ...kernels.creation_ops import range as range_op
from ...kernels.data_dependent_ops import gather_nd, sequence_mask
from ...kernels.functional_ops import scan
from ...kernels.gather_ops import gather, one_hot, top_k
from ...kernels.manip_ops import concat, expand_dims, transpose
from ...kernels.math_ops import cast, where
from ...kernels.pad_ops import tile
from ...kernels.tensor_array_ops import TensorArray
from ...layers.base import Layer
from ...nn.activations import log_softmax
from ...nn.core import embedding_lookup
from ...platform import tf_logging
from ...rnn import nest
from ...rnn.cell import assert_like_rnncell
from .decoder import Decoder

__all__ = ["BeamSearchDecoder", "BeamSearchDecoderOutput", "BeamSearchDecoderState", "FinalBeamSearchDecoderOutput",
           "gather_tree"]


class BeamSearchDecoderState(collections.namedtuple("BeamSearchDecoderState", (
        "cell_state", "log_probs", "finished", "lengths", "accumulated_attention_probs"))):
    pass


class BeamSearchDecoderOutput(collections.namedtuple("BeamSearchDecoderOutput",
                                                     ("scores", "predicted_ids", "parent_ids"))):
    pass


class FinalBeamSearchDecoderOutput(collections.namedtuple("FinalBeamDecoderOutput",
                                                          ["predicted_ids", "beam_search_decoder_output"])):
    """predicted_ids [batch, time, beam_width] (time-major with output_time_major), and the raw
    per-step BeamSearchDecoderOutput."""


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """The full beams from per-step ids and parent beam ids, both [max_time, batch, beam_width]:
    out[t, b, w] follows w's parents back from step min(max_time, max_sequence_lengths[b]) - 1;
    steps past that length, and any after the first `end_token`, are `end_token`."""
    with name_scope(name, "GatherTree", [step_ids, parent_ids, max_sequence_lengths, end_token]):
        step_ids = convert_to_tensor(step_ids, name="step_ids")
        parent_ids = convert_to_tensor(parent_ids, name="parent_ids", dtype=step_ids.dtype)
        end_token = convert_to_tensor(end_token, dtype=step_ids.dtype, name="end_token")
        if step_ids.shape.ndims not in (None, 3):
            raise ValueError(f"step_ids must be a [max_time, batch_size, beam_width] tensor, got shape "
                             f"{step_ids.shape}")
        max_time = shape_op(step_ids)[0]
        lengths = tfm.minimum(cast(max_sequence_lengths, dtypes.int32), max_time)
        last = expand_dims(lengths - 1, 1)  # [batch, 1]
        beams = shape_op(step_ids)[1:]
        identity_parents = cast(tile(expand_dims(range_op(beams[1]), 0), stack([beams[0], 1])), step_ids.dtype)
        times = range_op(max_time)

        def back(acc, elems):
            _, parent = acc
            ids, parents, t = elems
            index = where(tfm.greater_equal(t, last), identity_parents, parent)
            out = where(tfm.greater(t, last), fill(shape_op(ids), end_token), batch_gather(ids, index))
            return out, batch_gather(parents, index)

        # TF's kernel refuses a parent id out of [0, beam_width) on a beam's path; here any within
        # a batch entry's length is refused (batch_gather would read another entry's beams)
        in_bound = tfm.less(reshape(times, [-1, 1, 1]), reshape(lengths, [1, -1, 1]))
        valid = tfm.logical_and(tfm.greater_equal(parent_ids, 0), tfm.less(parent_ids, beams[1]))
        check = Assert(tfm.reduce_all(tfm.logical_or(tfm.logical_not(in_bound), valid)),
                       ["GatherTree: saw an invalid parent id; parent_ids must be in [0, beam_width = ", beams[1],
                        ")"])
        with control_dependencies([check]):
            parent_ids = identity(parent_ids)
        out, _ = scan(back, (step_ids, parent_ids, times),
                      initializer=(zeros(beams, dtype=step_ids.dtype), identity_parents), reverse=True)
        # an end_token ends the beam: what follows it is end_token too
        ended = tfm.greater(tfm.cumsum(cast(tfm.equal(out, end_token), dtypes.int32), axis=0, exclusive=True), 0)
        out = where(ended, fill(shape_op(out), end_token), out)
        out.set_shape(step_ids.shape)
        return out


def gather_tree_from_array(t, parent_ids, sequence_length):
    """`t` [max_time, batch * beam_width, ...] reordered so each beam holds its own path's values
    (TF 1.15's helper for TensorArrays in a beam search's state); steps past a beam's length keep
    their own beam."""
    max_time = parent_ids.shape[0].value or shape_op(parent_ids)[0]
    batch_size = parent_ids.shape[1].value or shape_op(parent_ids)[1]
    beam_width = parent_ids.shape[2].value or shape_op(parent_ids)[2]
    beam_ids = tile(expand_dims(expand_dims(range_op(beam_width), 0), 0), stack([max_time, batch_size, 1]))
    max_lengths = cast(tfm.reduce_max(sequence_length, axis=1), dtypes.int32)
    sorted_beam_ids = gather_tree(beam_ids, parent_ids, max_lengths, beam_width + 1)
    in_bound = transpose(sequence_mask(sequence_length, maxlen=max_time), [2, 0, 1])
    sorted_beam_ids = where(in_bound, sorted_beam_ids, beam_ids)
    time_ind = tile(reshape(range_op(max_time), [-1, 1, 1]), stack([1, batch_size, beam_width]))
    batch_ind = transpose(tile(reshape(range_op(batch_size), [-1, 1, 1]), stack([1, max_time, beam_width])),
                          [1, 0, 2])
    indices = stack([time_ind, batch_ind, sorted_beam_ids], -1)
    final_shape = shape_op(t)
    ordered = gather_nd(reshape(t, stack([max_time, batch_size, beam_width, -1])), indices)
    out = reshape(ordered, final_shape)
    out.set_shape(t.shape)
    return out


def _static(x):
    if isinstance(x, Tensor):
        value = constant_value(x)
        return None if value is None else int(value)
    return x


def _tensor_gather_helper(gather_indices, gather_from, batch_size, range_size, gather_shape):
    """gather_from[b, gather_indices[b, i], ...] (TF1's helper: flatten, offset, gather, reshape)."""
    range_ = expand_dims(range_op(batch_size) * range_size, 1)
    indices = reshape(gather_indices + range_, [-1])
    flat_shape = stack(gather_shape) if any(isinstance(d, Tensor) for d in gather_shape) else gather_shape
    output = gather(reshape(gather_from, flat_shape), indices)
    final_shape = shape_op(gather_from)[:1 + len(gather_shape)]
    output = reshape(output, final_shape)
    output.set_shape(TensorShape([_static(batch_size)]).concatenate(gather_from.shape[1:1 + len(gather_shape)]))
    return output


class BeamSearchDecoder(Decoder):
    """Beam search over `cell` (its state tiled to batch * beam_width), feeding back the embedded
    ids. TypeError for a non-cell or an output_layer not a Layer; ValueError for start_tokens not
    a vector, end_token not a scalar, a state not of batch * beam_width rows."""

    def __init__(self, cell, embedding, start_tokens, end_token, initial_state, beam_width, output_layer=None,
                 length_penalty_weight=0.0, coverage_penalty_weight=0.0, reorder_tensor_arrays=True):
        assert_like_rnncell("cell", cell)
        if output_layer is not None and not isinstance(output_layer, Layer):
            raise TypeError(f"output_layer must be a Layer, received: {type(output_layer)}")
        if coverage_penalty_weight:
            raise NotImplementedError("BeamSearchDecoder: dflow does not provide coverage_penalty_weight")
        self._cell = cell
        self._output_layer = output_layer
        self._embedding_fn = embedding if callable(embedding) else (lambda ids: embedding_lookup(embedding, ids))
        self._start_tokens = convert_to_tensor(start_tokens, dtype=dtypes.int32, name="start_tokens")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        self._end_token = convert_to_tensor(end_token, dtype=dtypes.int32, name="end_token")
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        static = self._start_tokens.shape[0].value
        self._batch_size = static if static is not None else size_op(self._start_tokens)
        self._beam_width = beam_width
        self._length_penalty_weight = length_penalty_weight
        self._reorder_tensor_arrays = reorder_tensor_arrays
        self._initial_cell_state = nest.map_structure(self._maybe_split_batch_beams, initial_state,
                                                      self._cell.state_size)
        self._start_tokens = tile(expand_dims(self._start_tokens, 1), [1, beam_width])
        self._start_inputs = self._embedding_fn(self._start_tokens)
        # only beam 0 is live at the start: the first step's beam_width best are distinct
        self._finished = one_hot(zeros(stack([self._batch_size]), dtype=dtypes.int32), depth=beam_width,
                                 on_value=False, off_value=True, dtype=dtypes.bool)

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def tracks_own_finished(self):
        return True

    def _rnn_output_size(self):
        size = self._cell.output_size
        if self._output_layer is None:
            return size
        with_batch = nest.map_structure(
            lambda s: TensorShape([None]).concatenate(TensorShape([s]) if isinstance(s, int) else s), size)
        out = self._output_layer.compute_output_shape(with_batch)
        return nest.map_structure(lambda s: TensorShape(s)[1:], out)

    @property
    def output_size(self):
        w = TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=w, predicted_ids=w, parent_ids=w)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        return BeamSearchDecoderOutput(scores=dtype, predicted_ids=dtypes.int32, parent_ids=dtypes.int32)

    def initialize(self, name=None):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        log_probs = one_hot(zeros(stack([self._batch_size]), dtype=dtypes.int32), depth=self._beam_width,
                            on_value=convert_to_tensor(0.0, dtype=dtype),
                            off_value=convert_to_tensor(-np.inf, dtype=dtype), dtype=dtype)
        state = BeamSearchDecoderState(
            cell_state=self._initial_cell_state, log_probs=log_probs, finished=self._finished,
            lengths=zeros(stack([self._batch_size, self._beam_width]), dtype=dtypes.int64),
            accumulated_attention_probs=())
        return self._finished, self._start_inputs, state

    def finalize(self, outputs, final_state, sequence_lengths):
        max_lengths = cast(tfm.reduce_max(final_state.lengths, axis=1), dtypes.int32)
        predicted_ids = gather_tree(outputs.predicted_ids, outputs.parent_ids, max_lengths, self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=nest.map_structure(
                lambda t: self._maybe_sort_array_beams(t, outputs.parent_ids, final_state.lengths),
                final_state.cell_state))
        return FinalBeamSearchDecoderOutput(beam_search_decoder_output=outputs, predicted_ids=predicted_ids), \
            final_state

    def _maybe_sort_array_beams(self, t, parent_ids, sequence_length):
        """A TensorArray of per-step [batch * beam_width, ...] values (an alignment history),
        stacked and reordered along each final beam's path; other state passes through."""
        if not isinstance(t, TensorArray):
            return t
        shape = t.element_shape
        static = _static(self._batch_size)
        if shape.ndims is None or shape.ndims < 1 or (
                shape[0].value is not None and static is not None and shape[0].value != static * self._beam_width):
            tf_logging.warning(f"The TensorArray {t.flow.name} in the cell state is not amenable to sorting "
                               f"based on the beam search result. It is left as is.")
            return t
        return gather_tree_from_array(t.stack(), parent_ids, sequence_length)

    def _merge_batch_beams(self, t, s):
        s = TensorShape([s]) if isinstance(s, int) else TensorShape(s)
        static = _static(self._batch_size)
        out = reshape(t, concat([expand_dims(convert_to_tensor(self._batch_size, dtype=dtypes.int32)
                                             * self._beam_width, 0), shape_op(t)[2:]], 0))
        out.set_shape(TensorShape([None if static is None else static * self._beam_width]).concatenate(s))
        return out

    def _split_batch_beams(self, t, s):
        s = TensorShape([s]) if isinstance(s, int) else TensorShape(s)
        expected = TensorShape([_static(self._batch_size), self._beam_width]).concatenate(s)
        static = _static(self._batch_size)
        rows = t.shape[0].value
        if (rows is not None and static is not None and rows != static * self._beam_width) or \
                not t.shape[1:].is_compatible_with(s):
            raise ValueError(f"Unexpected behavior when reshaping between beam width and batch size.  The tensor to "
                             f"reshape has shape: {t.shape}.  We expected it to have shape (batch_size, beam_width, "
                             f"depth) == {expected}.  Perhaps you forgot to create a zero_state with "
                             f"batch_size=encoder_batch_size * beam_width?")
        out = reshape(t, concat([stack([convert_to_tensor(self._batch_size, dtype=dtypes.int32), self._beam_width]),
                                 shape_op(t)[1:]], 0))
        out.set_shape(expected)
        return out

    def _maybe_split_batch_beams(self, t, s):
        if isinstance(t, TensorArray):
            return t
        if t.shape.ndims is None:
            raise ValueError(f"Expected tensor ({t}) to have known rank, but ndims == None.")
        return self._split_batch_beams(t, s) if t.shape.ndims >= 1 else t

    def _maybe_merge_batch_beams(self, t, s):
        if isinstance(t, TensorArray):
            return t
        if t.shape.ndims is None:
            raise ValueError(f"Expected tensor ({t}) to have known rank, but ndims == None.")
        return self._merge_batch_beams(t, s) if t.shape.ndims >= 2 else t

    def step(self, time, inputs, state, name=None):
        with name_scope(name, "BeamSearchDecoderStep"):
            inputs = nest.map_structure(lambda inp: self._merge_batch_beams(inp, inp.shape[2:]), inputs)
            cell_state = nest.map_structure(self._maybe_merge_batch_beams, state.cell_state, self._cell.state_size)
            cell_outputs, next_cell_state = self._cell(inputs, cell_state)
            cell_outputs = nest.map_structure(lambda out: self._split_batch_beams(out, out.shape[1:]), cell_outputs)
            next_cell_state = nest.map_structure(self._maybe_split_batch_beams, next_cell_state,
                                                 self._cell.state_size)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            output, next_state = self._beam_search_step(cell_outputs, next_cell_state, state)
            finished = next_state.finished
            next_inputs = self._embedding_fn(output.predicted_ids)
        return output, next_state, next_inputs, finished

    def _beam_search_step(self, logits, next_cell_state, beam_state):
        batch_size, beam_width, end_token = self._batch_size, self._beam_width, self._end_token
        previously_finished = beam_state.finished
        vocab_size = logits.shape[-1].value or shape_op(logits)[-1]
        step_log_probs = _mask_probs(log_softmax(logits), end_token, previously_finished)
        total_probs = expand_dims(beam_state.log_probs, 2) + step_log_probs
        # lengths: +1 for every continuation of a live beam but its end_token
        lengths_to_add = one_hot(fill(stack([batch_size, beam_width]), end_token), depth=vocab_size,
                                 on_value=np.int64(0), off_value=np.int64(1), dtype=dtypes.int64)
        lengths_to_add = lengths_to_add * expand_dims(cast(tfm.logical_not(previously_finished), dtypes.int64), 2)
        new_lengths = lengths_to_add + expand_dims(beam_state.lengths, 2)
        scores = total_probs / _length_penalty(new_lengths, self._length_penalty_weight, total_probs.dtype)
        scores_flat = reshape(scores, stack([convert_to_tensor(batch_size, dtype=dtypes.int32), -1]))
        next_beam_scores, word_indices = top_k(scores_flat, k=beam_width)
        next_beam_scores.set_shape([_static(batch_size), beam_width])
        word_indices.set_shape([_static(batch_size), beam_width])
        next_beam_probs = _tensor_gather_helper(word_indices, total_probs, batch_size, beam_width * vocab_size, [-1])
        next_word_ids = cast(tfm.floormod(word_indices, vocab_size), dtypes.int32)
        next_beam_ids = cast(tfm.floordiv(word_indices, vocab_size), dtypes.int32)
        previously_finished = _tensor_gather_helper(next_beam_ids, previously_finished, batch_size, beam_width, [-1])
        next_finished = tfm.logical_or(previously_finished, tfm.equal(next_word_ids, end_token))
        next_lengths = _tensor_gather_helper(next_beam_ids, beam_state.lengths, batch_size, beam_width, [-1]) + \
            cast(tfm.logical_not(previously_finished), dtypes.int64)
        rows = batch_size * beam_width if isinstance(batch_size, int) else \
            convert_to_tensor(batch_size, dtype=dtypes.int32) * beam_width

        def follow(t):  # each cell state tensor [batch, beam, ...] follows its parent beam
            if isinstance(t, TensorArray) or t.shape.ndims < 2:
                return t
            return _tensor_gather_helper(next_beam_ids, t, batch_size, beam_width, [rows, -1])
        next_cell_state = nest.map_structure(follow, next_cell_state)
        next_state = BeamSearchDecoderState(cell_state=next_cell_state, log_probs=next_beam_probs,
                                            lengths=next_lengths, finished=next_finished,
                                            accumulated_attention_probs=())
        return BeamSearchDecoderOutput(next_beam_scores, next_word_ids, next_beam_ids), next_state


def _length_penalty(lengths, weight, dtype):
    """((5 + length) / 6) ** weight (Wu et al. 2016); 1 for a weight of 0."""
    if not isinstance(weight, Tensor) and weight == 0:
        return convert_to_tensor(1.0, dtype=dtype)
    weight = convert_to_tensor(weight, dtype=dtypes.float32)
    penalty = tfm.pow(5.0 + cast(lengths, dtypes.float32), weight) / tfm.pow(6.0, weight)
    return cast(penalty, dtype)


def _mask_probs(probs, eos_token, finished):
    """Finished beams' rows: 0 at end_token, the dtype's lowest value elsewhere."""
    vocab_size = shape_op(probs)[2]
    finished_row = one_hot(eos_token, vocab_size, dtype=probs.dtype, on_value=convert_to_tensor(0., dtype=probs.dtype),
                           off_value=convert_to_tensor(probs.dtype.min, dtype=probs.dtype))
    finished_probs = tile(reshape(finished_row, [1, 1, -1]), concat([shape_op(finished)[0:2], [1]], 0))
    finished_mask = tile(expand_dims(finished, 2), stack([1, 1, vocab_size]))
    return where(finished_mask, finished_probs, probs)
