"""`Decoder`, `BasicDecoder` and `dynamic_decode` (TF 1.15's contrib/seq2seq decoder.py and
basic_decoder.py).

dynamic_decode is TF1's: a `while_loop` over (time, output TensorArrays, state, inputs,
finished, sequence_lengths) that calls `decoder.step` until every row is finished or
`maximum_iterations` steps ran; the outputs are stacked after the loop (batch-major unless
`output_time_major`). A row's length is the step at which it finished, plus one. With
`impute_finished`, finished rows emit zeros and keep their state. The cell and the output layer
make their variables on the first step, in the scope `decoder` (`decoder/basic_lstm_cell/kernel`,
`decoder/dense/kernel`), and gradients flow through the loop as dynamic_rnn's do.
"""

from __future__ import annotations

import abc
import collections

from ... import math as tfm
from ...graph import dtypes
from ...graph.graph import name_scope
from ...graph.ops import Tensor, constant_value
from ...graph.shape import TensorShape
from ...kernels.array_ops import shape as shape_op
from ...kernels.common import convert_to_tensor
from ...kernels.control_flow_ops import while_loop
from ...kernels.creation_ops import fill, zeros_like
from ...kernels.math_ops import where
from ...kernels.tensor_array_ops import TensorArray
from ...layers.base import Layer
from ...rnn import nest
from ...rnn.cell import assert_like_rnncell, zero_state_tensors
from ...rnn.step import transpose_batch_time
from ...state.scope import variable_scope
from .helper import Helper, _rows

__all__ = ["Decoder", "BasicDecoder", "BasicDecoderOutput", "dynamic_decode"]


class Decoder(abc.ABC):
    """What dynamic_decode drives: `initialize()` -> (finished, inputs, state), `step(time,
    inputs, state)` -> (outputs, next_state, next_inputs, finished), optional `finalize`."""

    @property
    @abc.abstractmethod
    def batch_size(self):
        """The batch size (an int or a scalar int32 tensor)."""

    @property
    @abc.abstractmethod
    def output_size(self):
        """The structure of one row's output shapes."""

    @property
    @abc.abstractmethod
    def output_dtype(self):
        """The structure of the outputs' dtypes."""

    @property
    def tracks_own_finished(self):
        """True when step's `finished` already includes the rows finished before."""
        return False

    @abc.abstractmethod
    def initialize(self, name=None):
        """(finished, initial_inputs, initial_state)."""

    @abc.abstractmethod
    def step(self, time, inputs, state, name=None):
        """(outputs, next_state, next_inputs, finished)."""

    def finalize(self, outputs, final_state, sequence_lengths):
        raise NotImplementedError


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput", ("rnn_output", "sample_id"))):
    pass


class BasicDecoder(Decoder):
    """Each step: the cell on the helper's inputs, then `output_layer` (a Layer, e.g. Dense over
    the vocabulary), then the helper's sample ids and next inputs. TypeError for a non-cell, a
    helper not a Helper, an output_layer not a Layer."""

    def __init__(self, cell, helper, initial_state, output_layer=None):
        assert_like_rnncell("cell", cell)
        if not isinstance(helper, Helper):
            raise TypeError(f"helper must be a Helper, received: {type(helper)}")
        if output_layer is not None and not isinstance(output_layer, Layer):
            raise TypeError(f"output_layer must be a Layer, received: {type(output_layer)}")
        self._cell = cell
        self._helper = helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    @property
    def batch_size(self):
        return self._helper.batch_size

    def _rnn_output_size(self):
        size = self._cell.output_size
        if self._output_layer is None:
            return size
        with_batch = nest.map_structure(lambda s: TensorShape([None]).concatenate(_as_shape(s)), size)
        out = self._output_layer.compute_output_shape(with_batch)
        return nest.map_structure(lambda s: TensorShape(s)[1:], out)

    @property
    def output_size(self):
        return BasicDecoderOutput(rnn_output=self._rnn_output_size(), sample_id=self._helper.sample_ids_shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(nest.map_structure(lambda _: dtype, self._rnn_output_size()),
                                  self._helper.sample_ids_dtype)

    def initialize(self, name=None):
        return self._helper.initialize() + (self._initial_state,)

    def step(self, time, inputs, state, name=None):
        with name_scope(name, "BasicDecoderStep"):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time=time, outputs=cell_outputs, state=cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(time=time, outputs=cell_outputs,
                                                                         state=cell_state, sample_ids=sample_ids)
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished


def _as_shape(s):
    return TensorShape([s]) if isinstance(s, int) else TensorShape(s)


def _static(batch_size):
    if isinstance(batch_size, Tensor):
        value = constant_value(batch_size)
        return None if value is None else int(value)
    return batch_size


def dynamic_decode(decoder, output_time_major=False, impute_finished=False, maximum_iterations=None,
                   parallel_iterations=32, swap_memory=False, scope=None, **kwargs):
    """Runs `decoder` step by step in a while loop until every row is finished.

    Returns (final_outputs, final_state, final_sequence_lengths): the outputs stacked
    ([batch, time, ...], or time-major), the last state, int32 [batch] lengths.
    TypeError for a non-Decoder; ValueError for a maximum_iterations not a scalar.
    """
    if not isinstance(decoder, Decoder):
        raise TypeError(f"Expected decoder to be type Decoder, but saw: {type(decoder)}")
    with variable_scope(scope, "decoder"):
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, dtype=dtypes.int32,
                                                   name="maximum_iterations")
            if maximum_iterations.shape.ndims != 0:
                raise ValueError("maximum_iterations must be a scalar")
        initial_finished, initial_inputs, initial_state = decoder.initialize()
        zero_outputs = nest.map_structure(lambda s, d: zero_state_tensors(s, decoder.batch_size, d),
                                          decoder.output_size, decoder.output_dtype)
        if maximum_iterations is not None:
            initial_finished = tfm.logical_or(initial_finished, tfm.greater_equal(0, maximum_iterations))
        initial_sequence_lengths = zeros_like(initial_finished, dtype=dtypes.int32)
        initial_time = convert_to_tensor(0, dtype=dtypes.int32)
        static_batch = _static(decoder.batch_size)
        outputs_ta = nest.map_structure(
            lambda s, d: TensorArray(dtype=d, size=0, dynamic_size=True,
                                     element_shape=TensorShape([static_batch]).concatenate(_as_shape(s))),
            decoder.output_size, decoder.output_dtype)

        def condition(unused_time, unused_outputs_ta, unused_state, unused_inputs, finished, unused_lengths):
            return tfm.logical_not(tfm.reduce_all(finished))

        def body(time, outputs_ta, state, inputs, finished, sequence_lengths):
            next_outputs, decoder_state, next_inputs, decoder_finished = decoder.step(time, inputs, state)
            if decoder.tracks_own_finished:
                next_finished = decoder_finished
            else:
                next_finished = tfm.logical_or(decoder_finished, finished)
            next_sequence_lengths = where(tfm.logical_not(finished), fill(shape_op(sequence_lengths), time + 1),
                                          sequence_lengths)
            nest.assert_same_structure(state, decoder_state)
            nest.assert_same_structure(outputs_ta, next_outputs)
            nest.assert_same_structure(inputs, next_inputs)
            if impute_finished:
                emit = nest.map_structure(lambda out, zero: where(_rows(finished, out), zero, out), next_outputs,
                                          zero_outputs)

                def copy_state(new, cur):
                    if isinstance(cur, TensorArray):
                        return new
                    new.set_shape(cur.shape)
                    return new if new.shape.ndims == 0 else where(_rows(finished, new), cur, new)
                next_state = nest.map_structure(copy_state, decoder_state, state)
            else:
                emit = next_outputs
                next_state = decoder_state
            outputs_ta = nest.map_structure(lambda ta, out: ta.write(time, out), outputs_ta, emit)
            return time + 1, outputs_ta, next_state, next_inputs, next_finished, next_sequence_lengths

        res = while_loop(condition, body,
                         loop_vars=(initial_time, outputs_ta, initial_state, initial_inputs, initial_finished,
                                    initial_sequence_lengths),
                         parallel_iterations=parallel_iterations, maximum_iterations=maximum_iterations,
                         swap_memory=swap_memory)
        final_outputs_ta, final_state, final_sequence_lengths = res[1], res[2], res[5]
        final_outputs = nest.map_structure(lambda ta: ta.stack(), final_outputs_ta)
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state, final_sequence_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = nest.map_structure(transpose_batch_time, final_outputs)
    return final_outputs, final_state, final_sequence_lengths
