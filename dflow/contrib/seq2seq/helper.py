"""Decoding helpers (TF 1.15's contrib/seq2seq helper.py): what a `BasicDecoder` feeds its cell
at each step and how it picks sample ids.

- `TrainingHelper`: teacher forcing; step t reads the ground-truth input t (a TensorArray over
  time), a row is finished once t + 1 >= its sequence length.
- `GreedyEmbeddingHelper`: argmax of the outputs, embedded as the next input; a row is finished
  when it emits `end_token`.
- `SampleEmbeddingHelper`: as greedy, with ids drawn from softmax(outputs / temperature).
- `ScheduledEmbeddingTrainingHelper`: teacher forcing, each row's input replaced with probability
  `sampling_probability` by the embedding of an id drawn from the outputs;
  `ScheduledOutputTrainingHelper` by the outputs themselves.
- `InferenceHelper`: ids from a `sample_fn`, fed back as they are (no embedding).

TF1 reads the next input under a `cond` that gives zeros once every row is finished; here the read
index is clamped to the last step and the value selected with `where`, which gives the same
values without a branch (the loop stops then anyway).
"""

from __future__ import annotations

import abc

from ... import math as tfm
from ...graph import dtypes
from ...graph.graph import name_scope
from ...graph.ops import Tensor
from ...graph.shape import TensorShape
from ...kernels.array_ops import shape as shape_op
from ...kernels.array_ops import size as size_op
from ...kernels.array_ops import stack
from ...kernels.common import convert_to_tensor
from ...kernels.control_flow_ops import cond
from ...kernels.creation_ops import fill, zeros, zeros_like
from ...kernels.manip_ops import concat, reshape
from ...kernels.math_ops import cast, where
from ...kernels.random_ops import random_uniform
from ...kernels.reduction_ops import argmax
from ...kernels.sampling_ops import multinomial
from ...kernels.tensor_array_ops import TensorArray
from ...nn.core import embedding_lookup
from ...rnn import nest
from ...rnn.step import transpose_batch_time

__all__ = ["Helper", "CustomHelper", "TrainingHelper", "GreedyEmbeddingHelper", "SampleEmbeddingHelper",
           "ScheduledEmbeddingTrainingHelper", "ScheduledOutputTrainingHelper", "InferenceHelper"]


def _rows(mask, like):
    """A [batch] bool mask shaped to select whole rows of `like` [batch, ...]."""
    rank = like.shape.ndims
    return mask if rank == 1 else reshape(mask, [-1] + [1] * (rank - 1))


def _unstack_ta(inp):
    return TensorArray(dtype=inp.dtype, size=shape_op(inp)[0], element_shape=inp.shape[1:]).unstack(inp)


def _step_zeros(inp):
    """Zeros shaped like one time step of `inp` (from its shape: there may be no steps)."""
    out = zeros(shape_op(inp)[1:], dtype=inp.dtype)
    out.set_shape(inp.shape[1:])
    return out


class Helper(abc.ABC):
    """The interface a `BasicDecoder` samples and reads its next inputs through."""

    @property
    @abc.abstractmethod
    def batch_size(self):
        """The batch size (an int or a scalar int32 tensor)."""

    @property
    @abc.abstractmethod
    def sample_ids_shape(self):
        """The TensorShape of one row's sample ids."""

    @property
    @abc.abstractmethod
    def sample_ids_dtype(self):
        """The dtype of the sample ids."""

    @abc.abstractmethod
    def initialize(self, name=None):
        """(initial_finished [batch] bool, initial_inputs)."""

    @abc.abstractmethod
    def sample(self, time, outputs, state, name=None):
        """The sample ids of step `time`'s outputs."""

    @abc.abstractmethod
    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        """(finished, next_inputs, next_state)."""


class CustomHelper(Helper):
    """A helper of three functions: initialize_fn() -> (finished, inputs), sample_fn(time, outputs,
    state) -> ids, next_inputs_fn(time, outputs, state, sample_ids) -> (finished, inputs, state)."""

    def __init__(self, initialize_fn, sample_fn, next_inputs_fn, sample_ids_shape=None, sample_ids_dtype=None):
        self._initialize_fn = initialize_fn
        self._sample_fn = sample_fn
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = None
        self._sample_ids_shape = TensorShape(sample_ids_shape or [])
        self._sample_ids_dtype = sample_ids_dtype or dtypes.int32

    @property
    def batch_size(self):
        if self._batch_size is None:
            raise ValueError("batch_size accessed before initialize was called")
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_ids_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_ids_dtype

    def initialize(self, name=None):
        with name_scope(name, "CustomHelperInitialize"):
            finished, next_inputs = self._initialize_fn()
            if self._batch_size is None:
                self._batch_size = size_op(finished)
        return finished, next_inputs

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "CustomHelperSample"):
            return self._sample_fn(time=time, outputs=outputs, state=state)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with name_scope(name, "CustomHelperNextInputs"):
            return self._next_inputs_fn(time=time, outputs=outputs, state=state, sample_ids=sample_ids)


class TrainingHelper(Helper):
    """Teacher forcing: the inputs are read from `inputs` ([batch, time, ...], or time-major),
    one step at a time; sample ids are the argmax of the outputs (int32)."""

    def __init__(self, inputs, sequence_length, time_major=False, name=None):
        with name_scope(name, "TrainingHelper", nest.flatten(inputs) + [sequence_length]):
            inputs = nest.map_structure(lambda x: convert_to_tensor(x, name="inputs"), inputs)
            self._inputs = inputs
            if not time_major:
                inputs = nest.map_structure(transpose_batch_time, inputs)
            self._time_major_inputs = inputs
            self._input_tas = nest.map_structure(_unstack_ta, inputs)
            self._sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if self._sequence_length.shape.ndims != 1:
                raise ValueError(f"Expected sequence_length to be a vector, but received shape: "
                                 f"{self._sequence_length.shape}")
            self._zero_inputs = nest.map_structure(_step_zeros, inputs)
            self._last = shape_op(nest.flatten(inputs)[0])[0] - 1
            self._batch_size = size_op(sequence_length)

    @property
    def inputs(self):
        return self._inputs

    @property
    def sequence_length(self):
        return self._sequence_length

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return TensorShape([])

    @property
    def sample_ids_dtype(self):
        return dtypes.int32

    def _read(self, t):
        """Step t's inputs; zeros once every row is finished (t clamped to the last step)."""
        all_finished = tfm.reduce_all(tfm.greater_equal(t, self._sequence_length))
        index = tfm.maximum(tfm.minimum(t, self._last), 0)

        def one(ta, zero):
            value = ta.read(index)
            value.set_shape(zero.shape)
            return where(all_finished, zero, value)
        return nest.map_structure(one, self._input_tas, self._zero_inputs)

    def initialize(self, name=None):
        with name_scope(name, "TrainingHelperInitialize"):
            finished = tfm.equal(0, self._sequence_length)
            # TF1's cond: with every length 0 (possibly no steps at all) nothing is read
            next_inputs = cond(tfm.reduce_all(finished), lambda: self._zero_inputs,
                               lambda: nest.map_structure(lambda ta: ta.read(0), self._input_tas))
            return finished, next_inputs

    def sample(self, time, outputs, name=None, **unused_kwargs):
        with name_scope(name, "TrainingHelperSample"):
            return cast(argmax(outputs, axis=-1), dtypes.int32)

    def next_inputs(self, time, outputs, state, name=None, **unused_kwargs):
        with name_scope(name, "TrainingHelperNextInputs"):
            next_time = time + 1
            finished = tfm.greater_equal(next_time, self._sequence_length)
            return finished, self._read(next_time), state


class ScheduledEmbeddingTrainingHelper(TrainingHelper):
    """Teacher forcing where each row's next input is, with `sampling_probability`, the embedding
    of an id sampled from the outputs instead. Sample ids are -1 where not sampled."""

    def __init__(self, inputs, sequence_length, embedding, sampling_probability, time_major=False, seed=None,
                 scheduling_seed=None, name=None):
        with name_scope(name, "ScheduledEmbeddingSamplingWrapper", [embedding, sampling_probability]):
            self._embedding_fn = embedding if callable(embedding) else (lambda ids: embedding_lookup(embedding,
                                                                                                     ids))
            self._sampling_probability = convert_to_tensor(sampling_probability, name="sampling_probability")
            if self._sampling_probability.shape.ndims not in (0, 1):
                raise ValueError(f"sampling_probability must be either a scalar or a vector. saw shape: "
                                 f"{self._sampling_probability.shape}")
            self._seed = seed
            self._scheduling_seed = scheduling_seed
            super().__init__(inputs=inputs, sequence_length=sequence_length, time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "ScheduledEmbeddingTrainingHelperSample"):
            select = tfm.less(random_uniform(shape_op(self._sequence_length), seed=self._scheduling_seed),
                              self._sampling_probability)
            drawn = cast(reshape(multinomial(outputs, 1, seed=self._seed), [-1]), dtypes.int32)
            return where(select, drawn, fill(shape_op(drawn), -1))

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with name_scope(name, "ScheduledEmbeddingTrainingHelperNextInputs"):
            finished, base_next_inputs, state = super().next_inputs(time, outputs, state)
            sampled = tfm.greater(sample_ids, -1)
            embedded = self._embedding_fn(tfm.maximum(sample_ids, 0))
            next_inputs = where(_rows(sampled, embedded), embedded, base_next_inputs)
            return finished, next_inputs, state


class GreedyEmbeddingHelper(Helper):
    """Inference: the argmax id of each step's outputs (int32), embedded, is the next input; rows
    that emitted `end_token` are finished. `embedding`: a [vocab, depth] tensor or a callable of
    ids. ValueError for start_tokens not a vector or end_token not a scalar."""

    def __init__(self, embedding, start_tokens, end_token):
        if callable(embedding):
            self._embedding_fn = embedding
        else:
            self._embedding_fn = lambda ids: embedding_lookup(embedding, ids)
        self._start_tokens = convert_to_tensor(start_tokens, dtype=dtypes.int32, name="start_tokens")
        self._end_token = convert_to_tensor(end_token, dtype=dtypes.int32, name="end_token")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        self._batch_size = size_op(self._start_tokens)
        self._start_inputs = self._embedding_fn(self._start_tokens)

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return TensorShape([])

    @property
    def sample_ids_dtype(self):
        return dtypes.int32

    def initialize(self, name=None):
        finished = tfm.equal(zeros_like(self._start_tokens), 1)
        return finished, self._start_inputs

    def sample(self, time, outputs, state, name=None):
        if not isinstance(outputs, Tensor):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        return argmax(outputs, axis=-1, output_type=dtypes.int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = tfm.equal(sample_ids, self._end_token)
        return finished, self._embedding_fn(sample_ids), state


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """As GreedyEmbeddingHelper, with ids drawn from softmax(outputs / softmax_temperature)."""

    def __init__(self, embedding, start_tokens, end_token, softmax_temperature=None, seed=None):
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def sample(self, time, outputs, state, name=None):
        if not isinstance(outputs, Tensor):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        logits = outputs if self._softmax_temperature is None else outputs / self._softmax_temperature
        return cast(reshape(multinomial(logits, 1, seed=self._seed), [-1]), dtypes.int32)


class ScheduledOutputTrainingHelper(TrainingHelper):
    """Teacher forcing where each row's next input is, with `sampling_probability`, the step's
    outputs (through `next_inputs_fn` if given; `auxiliary_inputs` [batch, time, ...] concatenated
    on the last axis) instead. Sample ids are bool: whether the row was sampled. `next_inputs_fn`
    must work row by row (TF1 applies it to the sampled rows only; here to all, then selects)."""

    def __init__(self, inputs, sequence_length, sampling_probability, time_major=False, seed=None,
                 next_inputs_fn=None, auxiliary_inputs=None, name=None):
        with name_scope(name, "ScheduledOutputTrainingHelper", [inputs, auxiliary_inputs, sampling_probability]):
            self._sampling_probability = convert_to_tensor(sampling_probability, name="sampling_probability")
            if self._sampling_probability.shape.ndims not in (0, 1):
                raise ValueError(f"sampling_probability must be either a scalar or a vector. saw shape: "
                                 f"{self._sampling_probability.shape}")
            if auxiliary_inputs is None:
                maybe_concatenated = inputs
                self._auxiliary_input_tas = None
            else:
                inputs = nest.map_structure(convert_to_tensor, inputs)
                auxiliary_inputs = nest.map_structure(convert_to_tensor, auxiliary_inputs)
                maybe_concatenated = nest.map_structure(lambda x, y: concat([x, y], -1), inputs, auxiliary_inputs)
                aux = auxiliary_inputs if time_major else nest.map_structure(transpose_batch_time, auxiliary_inputs)
                self._auxiliary_input_tas = nest.map_structure(_unstack_ta, aux)
                self._aux_last = shape_op(nest.flatten(aux)[0])[0] - 1
            self._seed = seed
            self._next_inputs_fn = next_inputs_fn
            super().__init__(inputs=maybe_concatenated, sequence_length=sequence_length, time_major=time_major,
                             name=name)

    @property
    def sample_ids_dtype(self):
        return dtypes.bool

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "ScheduledOutputTrainingHelperSample"):
            return tfm.less(random_uniform(shape_op(self._sequence_length), seed=self._seed),
                            self._sampling_probability)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with name_scope(name, "ScheduledOutputTrainingHelperNextInputs"):
            finished, base_next_inputs, state = super().next_inputs(time, outputs, state)
            sampled = outputs if self._next_inputs_fn is None else self._next_inputs_fn(outputs)
            if self._auxiliary_input_tas is not None:
                index = tfm.minimum(time + 1, self._aux_last)
                aux = nest.map_structure(lambda ta: ta.read(index), self._auxiliary_input_tas)
                sampled = nest.map_structure(lambda x, y: concat([x, y], -1), sampled, aux)
            sample_ids = cast(sample_ids, dtypes.bool)
            next_inputs = nest.map_structure(lambda s, b: where(_rows(sample_ids, b), s, b), sampled,
                                             base_next_inputs)
            return finished, next_inputs, state


class InferenceHelper(Helper):
    """Inference without embeddings: `sample_fn(outputs)` gives the sample ids (`sample_shape`,
    `sample_dtype`), the next inputs are the ids (or `next_inputs_fn(ids)`), a row is finished
    when `end_fn(ids)`."""

    def __init__(self, sample_fn, sample_shape, sample_dtype, start_inputs, end_fn, next_inputs_fn=None):
        self._sample_fn = sample_fn
        self._end_fn = end_fn
        self._sample_shape = TensorShape(sample_shape)
        self._sample_dtype = sample_dtype
        self._next_inputs_fn = next_inputs_fn
        self._start_inputs = convert_to_tensor(start_inputs, name="start_inputs")
        static = self._start_inputs.shape[0].value if self._start_inputs.shape.ndims else None
        self._batch_size = static if static is not None else shape_op(self._start_inputs)[0]

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_dtype

    def initialize(self, name=None):
        finished = fill(stack([convert_to_tensor(self._batch_size, dtype=dtypes.int32)]), False)
        return finished, self._start_inputs

    def sample(self, time, outputs, state, name=None):
        return self._sample_fn(outputs)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        next_inputs = sample_ids if self._next_inputs_fn is None else self._next_inputs_fn(sample_ids)
        return self._end_fn(sample_ids), next_inputs, state
