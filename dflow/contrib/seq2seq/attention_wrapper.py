"""Attention (TF 1.15's contrib/seq2seq attention_wrapper.py): `BahdanauAttention`,
`LuongAttention`, `AttentionWrapper` and its state, and the `hardmax`, `safe_cumprod`,
`monotonic_attention` helpers.

A mechanism holds the memory ([batch, max_time, depth], zeroed past `memory_sequence_length`)
and its keys (the memory through a bias-free Dense `memory_layer`, made where the mechanism is
built: `memory_layer/kernel`). Called with a query and its previous alignments it scores every
memory step (Luong: query . key, times `attention_g` with `scale`; Bahdanau: v . tanh(key +
W query), weight-normalized with `normalize`), masks the steps past each row's length with
`score_mask_value` (-inf) and returns probability_fn(score) (softmax by default) as both the
alignments and the next attention state.

AttentionWrapper is the cell: it feeds concat([inputs, previous attention]) to the wrapped cell,
attends with the cell's output, and returns the attention (context, or the bias-free Dense
`attention_layer` of concat([cell_output, context]) with `attention_layer_size`). Its variables
live under the wrapper's scope: `decoder/attention_wrapper/basic_lstm_cell/kernel`,
`.../bahdanau_attention/query_layer/kernel`, `.../bahdanau_attention/attention_v`,
`.../attention_layer/kernel`, as in TF1 checkpoints. A memory whose batch differs from the
state's or the query's gives TF1's InvalidArgumentError (at build time when both are static),
which says to tile_batch the memory for a beam search.
"""

from __future__ import annotations

import collections
import functools
import math

import numpy as np

from ... import math as tfm
from ...errors import InvalidArgumentError
from ...graph import dtypes
from ...graph.graph import control_dependencies, name_scope
from ...graph.ops import Tensor, constant_value
from ...graph.shape import TensorShape
from ...kernels.array_ops import identity, stack
from ...kernels.array_ops import shape as shape_op
from ...kernels.check_ops import Assert
from ...kernels.common import convert_to_tensor
from ...kernels.creation_ops import ones, ones_like, zeros
from ...kernels.cumulative_ops import cumprod
from ...kernels.data_dependent_ops import sequence_mask
from ...kernels.functional_ops import scan
from ...kernels.gather_ops import one_hot
from ...kernels.linalg_ops import matmul
from ...kernels.manip_ops import concat, expand_dims, reshape, squeeze, transpose
from ...kernels.math_ops import cast, clip_by_value, where
from ...kernels.random_ops import random_normal
from ...kernels.reduction_ops import argmax, cumsum
from ...kernels.tensor_array_ops import TensorArray
from ...layers.core import Dense
from ...nn.activations import softmax
from ...rnn import nest
from ...rnn.cell import RNNCell, assert_like_rnncell, zero_state_tensors
from ...state.initializers import constant_initializer, ones_initializer, zeros_initializer
from ...state.scope import get_variable, variable_scope

__all__ = ["AttentionMechanism", "BahdanauAttention", "LuongAttention", "BahdanauMonotonicAttention",
           "LuongMonotonicAttention", "AttentionWrapper", "AttentionWrapperState",
           "hardmax", "safe_cumprod", "monotonic_attention"]


class AttentionMechanism:
    """The base of attention mechanisms (what AttentionWrapper accepts)."""

    @property
    def alignments_size(self):
        raise NotImplementedError

    @property
    def state_size(self):
        raise NotImplementedError


def _prepare_memory(memory, memory_sequence_length, check_inner_dims_defined):
    """The memory converted, its inner dims checked, zeroed past each row's length."""
    memory = nest.map_structure(lambda m: convert_to_tensor(m, name="memory"), memory)
    if memory_sequence_length is not None:
        memory_sequence_length = convert_to_tensor(memory_sequence_length, name="memory_sequence_length")
    if check_inner_dims_defined:
        for m in nest.flatten(memory):
            if not m.shape[2:].is_fully_defined():
                raise ValueError(f"Expected memory {m.name} to have fully defined inner dims, but saw shape: "
                                 f"{m.shape}")
    if memory_sequence_length is None:
        return memory
    first = nest.flatten(memory)[0]
    mask = sequence_mask(memory_sequence_length, maxlen=shape_op(first)[1], dtype=first.dtype)

    def masked(m):
        extra = m.shape.ndims - 2
        return m * (reshape(mask, concat([shape_op(mask), ones([extra], dtype=dtypes.int32)], 0)) if extra
                    else mask)
    return nest.map_structure(masked, memory)


def _maybe_mask_score(score, memory_sequence_length, score_mask_value):
    if memory_sequence_length is None:
        return score
    if score_mask_value is None:
        score_mask_value = -np.inf
    score_mask = sequence_mask(memory_sequence_length, maxlen=shape_op(score)[1])
    return where(score_mask, score, score_mask_value * ones_like(score))


class _BaseAttentionMechanism(AttentionMechanism):
    """Memory, keys and the masked probability function shared by the mechanisms."""

    def __init__(self, query_layer, memory, probability_fn, memory_sequence_length=None, memory_layer=None,
                 check_inner_dims_defined=True, score_mask_value=None, custom_key_value_fn=None, name=None):
        if not callable(probability_fn):
            raise TypeError(f"probability_fn must be callable, saw type: {type(probability_fn).__name__}")
        self._query_layer = query_layer
        self._memory_layer = memory_layer
        self.dtype = memory_layer.dtype if memory_layer is not None else None
        self._probability_fn = lambda score, prev: probability_fn(
            _maybe_mask_score(score, memory_sequence_length, score_mask_value), prev)
        with name_scope(name, "BaseAttentionMechanismInit", nest.flatten(memory)):
            self._values = _prepare_memory(memory, memory_sequence_length, check_inner_dims_defined)
            self._keys = self._memory_layer(self._values) if self._memory_layer else self._values
            if custom_key_value_fn is not None:
                self._keys, self._values = custom_key_value_fn(self._keys, self._values)
            self._batch_size = self._keys.shape[0].value or shape_op(self._keys)[0]
            self._alignments_size = self._keys.shape[1].value or shape_op(self._keys)[1]

    @property
    def memory_layer(self):
        return self._memory_layer

    @property
    def query_layer(self):
        return self._query_layer

    @property
    def values(self):
        return self._values

    @property
    def keys(self):
        return self._keys

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def alignments_size(self):
        return self._alignments_size

    @property
    def state_size(self):
        return self._alignments_size

    def initial_alignments(self, batch_size, dtype):
        """Zeros [batch_size, max_time] (max_time a tensor when the memory's is unknown)."""
        if isinstance(self._alignments_size, Tensor):
            out = zeros(stack([convert_to_tensor(batch_size, dtype=dtypes.int32), self._alignments_size]), dtype=dtype)
            out.set_shape([batch_size if isinstance(batch_size, int) else None, None])
            return out
        return zero_state_tensors(self._alignments_size, batch_size, dtype)

    def initial_state(self, batch_size, dtype):
        return self.initial_alignments(batch_size, dtype)


def _luong_score(query, keys, scale):
    depth, key_units = query.shape[-1].value, keys.shape[-1].value
    if depth is None or depth != key_units:
        raise ValueError(f"Incompatible or unknown inner dimensions between query and keys.  Query ({query.name}) "
                         f"has units: {depth}.  Keys ({keys.name}) have units: {key_units}.  Perhaps you need to "
                         f"set num_units to the keys' dimension ({key_units})?")
    score = squeeze(matmul(expand_dims(query, 1), keys, transpose_b=True), [1])
    return score if scale is None else scale * score


class LuongAttention(_BaseAttentionMechanism):
    """Multiplicative attention: score = query . keys (times a learned scalar `attention_g` with
    `scale`); keys = memory W (`memory_layer`, num_units). The query's depth must be num_units."""

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False, probability_fn=None,
                 score_mask_value=None, dtype=None, custom_key_value_fn=None, name="LuongAttention"):
        probability_fn = probability_fn or softmax
        dtype = dtype or dtypes.float32
        super().__init__(query_layer=None,
                         memory_layer=Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
                         memory=memory, probability_fn=lambda score, _: probability_fn(score),
                         memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
                         custom_key_value_fn=custom_key_value_fn, name=name)
        self._num_units = num_units
        self._scale = scale
        self._name = name

    def __call__(self, query, state):
        """(alignments [batch, max_time], next_state = alignments)."""
        with variable_scope("luong_attention"):
            g = None
            if self._scale:
                g = get_variable("attention_g", dtype=query.dtype, initializer=ones_initializer(), shape=())
            score = _luong_score(query, self._keys, g)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


def _bahdanau_score(processed_query, keys, normalize):
    dtype = processed_query.dtype
    num_units = keys.shape[2].value
    processed_query = expand_dims(processed_query, 1)
    v = get_variable("attention_v", [num_units], dtype=dtype)
    if normalize:
        g = get_variable("attention_g", dtype=dtype, initializer=constant_initializer(math.sqrt(1.0 / num_units)),
                         shape=())
        b = get_variable("attention_b", [num_units], dtype=dtype, initializer=zeros_initializer())
        normed_v = g * v * tfm.rsqrt(tfm.reduce_sum(tfm.square(v)))
        return tfm.reduce_sum(normed_v * tfm.tanh(keys + processed_query + b), [2])
    return tfm.reduce_sum(v * tfm.tanh(keys + processed_query), [2])


class BahdanauAttention(_BaseAttentionMechanism):
    """Additive attention: score = v . tanh(keys + W_q query) (`query_layer`, `memory_layer`,
    `attention_v`; with `normalize`, v weight-normalized by `attention_g` and a bias `attention_b`)."""

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False, probability_fn=None,
                 score_mask_value=None, dtype=None, custom_key_value_fn=None, name="BahdanauAttention"):
        probability_fn = probability_fn or softmax
        dtype = dtype or dtypes.float32
        super().__init__(query_layer=Dense(num_units, name="query_layer", use_bias=False, dtype=dtype),
                         memory_layer=Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
                         memory=memory, probability_fn=lambda score, _: probability_fn(score),
                         memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
                         custom_key_value_fn=custom_key_value_fn, name=name)
        self._num_units = num_units
        self._normalize = normalize
        self._name = name

    def __call__(self, query, state):
        """(alignments [batch, max_time], next_state = alignments)."""
        with variable_scope("bahdanau_attention"):
            processed_query = self.query_layer(query) if self.query_layer else query
            score = _bahdanau_score(processed_query, self._keys, self._normalize)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


def _monotonic_probability_fn(score, previous_alignments, sigmoid_noise, mode, seed=None):
    """sigmoid(score + noise) (a hard 0/1 step in mode 'hard') as choosing probabilities, then
    monotonic_attention."""
    if sigmoid_noise > 0:
        score = score + sigmoid_noise * random_normal(shape_op(score), dtype=score.dtype, seed=seed)
    if mode == "hard":
        p_choose_i = cast(tfm.greater(score, 0), score.dtype)
    else:
        p_choose_i = tfm.sigmoid(score)
    return monotonic_attention(p_choose_i, previous_alignments, mode)


class _BaseMonotonicAttentionMechanism(_BaseAttentionMechanism):
    """Monotonic mechanisms start from a dirac on memory step 0."""

    def initial_alignments(self, batch_size, dtype):
        """one_hot(0) over max_time for each row."""
        rows = zeros(stack([convert_to_tensor(batch_size, dtype=dtypes.int32)]), dtype=dtypes.int32)
        return one_hot(rows, self._alignments_size, dtype=dtype)


class BahdanauMonotonicAttention(_BaseMonotonicAttentionMechanism):
    """Bahdanau's score plus a learned scalar `attention_score_bias`, through
    `_monotonic_probability_fn` (Raffel et al. 2017) instead of softmax."""

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False, score_mask_value=None,
                 sigmoid_noise=0., sigmoid_noise_seed=None, score_bias_init=0., mode="parallel", dtype=None,
                 name="BahdanauMonotonicAttention"):
        dtype = dtype or dtypes.float32
        fn = functools.partial(_monotonic_probability_fn, sigmoid_noise=sigmoid_noise, mode=mode,
                               seed=sigmoid_noise_seed)
        super().__init__(query_layer=Dense(num_units, name="query_layer", use_bias=False, dtype=dtype),
                         memory_layer=Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
                         memory=memory, probability_fn=fn, memory_sequence_length=memory_sequence_length,
                         score_mask_value=score_mask_value, name=name)
        self._num_units = num_units
        self._normalize = normalize
        self._name = name
        self._score_bias_init = score_bias_init

    def __call__(self, query, state):
        with variable_scope("bahdanau_monotonic_attention"):
            processed_query = self.query_layer(query) if self.query_layer else query
            score = _bahdanau_score(processed_query, self._keys, self._normalize)
            score = score + get_variable("attention_score_bias", shape=(), dtype=processed_query.dtype,
                                         initializer=constant_initializer(self._score_bias_init))
        alignments = self._probability_fn(score, state)
        return alignments, alignments


class LuongMonotonicAttention(_BaseMonotonicAttentionMechanism):
    """Luong's score plus a learned scalar `attention_score_bias`, through
    `_monotonic_probability_fn` instead of softmax."""

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False, score_mask_value=None,
                 sigmoid_noise=0., sigmoid_noise_seed=None, score_bias_init=0., mode="parallel", dtype=None,
                 name="LuongMonotonicAttention"):
        dtype = dtype or dtypes.float32
        fn = functools.partial(_monotonic_probability_fn, sigmoid_noise=sigmoid_noise, mode=mode,
                               seed=sigmoid_noise_seed)
        super().__init__(query_layer=None,
                         memory_layer=Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
                         memory=memory, probability_fn=fn, memory_sequence_length=memory_sequence_length,
                         score_mask_value=score_mask_value, name=name)
        self._num_units = num_units
        self._scale = scale
        self._score_bias_init = score_bias_init
        self._name = name

    def __call__(self, query, state):
        with variable_scope("luong_monotonic_attention"):
            g = None
            if self._scale:
                g = get_variable("attention_g", dtype=query.dtype, initializer=ones_initializer(), shape=())
            score = _luong_score(query, self._keys, g)
            score = score + get_variable("attention_score_bias", shape=(), dtype=query.dtype,
                                         initializer=constant_initializer(self._score_bias_init))
        alignments = self._probability_fn(score, state)
        return alignments, alignments


class AttentionWrapperState(collections.namedtuple("AttentionWrapperState", (
        "cell_state", "attention", "time", "alignments", "alignment_history", "attention_state"))):
    """The AttentionWrapper's state; `clone(**kwargs)` replaces fields (keeping the old static
    shapes), e.g. `zero_state(batch, dtype).clone(cell_state=encoder_state)`."""

    def clone(self, **kwargs):
        def same_shape(old, new):
            if isinstance(old, Tensor) and isinstance(new, Tensor):
                if not old.shape.is_compatible_with(new.shape):
                    raise ValueError(f"AttentionWrapperState.clone: {new.name!r} has shape {new.shape}, the field "
                                     f"it replaces {old.shape}")
                new = identity(new)
                new.set_shape(old.shape)
            return new
        return nest.map_structure(same_shape, self, self._replace(**kwargs))


def _compute_attention(attention_mechanism, cell_output, attention_state, attention_layer):
    alignments, next_attention_state = attention_mechanism(cell_output, state=attention_state)
    context = squeeze(matmul(expand_dims(alignments, 1), attention_mechanism.values), [1])
    attention = attention_layer(concat([cell_output, context], 1)) if attention_layer is not None else context
    return attention, alignments, next_attention_state


def _batch_size_checks(mechanisms, batch_size, message):
    """TF1's assertions that each mechanism's memory has `batch_size` rows: InvalidArgumentError
    at build time when both are static, else Assert ops to depend on."""
    static = batch_size if isinstance(batch_size, int) else None
    if isinstance(batch_size, Tensor):
        value = constant_value(batch_size)
        static = None if value is None else int(value)
    checks = []
    for m in mechanisms:
        rows = m.batch_size if isinstance(m.batch_size, int) else None
        if static is not None and rows is not None:
            if static != rows:
                raise InvalidArgumentError(None, None, f"{message} (memory batch size {rows}, got {static})")
            continue
        got, want = convert_to_tensor(batch_size, dtype=dtypes.int32), convert_to_tensor(m.batch_size,
                                                                                        dtype=dtypes.int32)
        checks.append(Assert(tfm.equal(got, want), [message, " memory batch size: ", want, ", got: ", got]))
    return checks


class AttentionWrapper(RNNCell):
    """A cell that attends over a memory after each step of the wrapped cell (TF1's contract:
    output the attention with `output_attention`, else the cell's output; state an
    AttentionWrapperState; `alignment_history` keeps every step's alignments in a TensorArray).
    TypeError for a non-cell or non-mechanism; ValueError for attention_layer_size and
    attention_layer both given or a size per mechanism that does not match."""

    def __init__(self, cell, attention_mechanism, attention_layer_size=None, alignment_history=False,
                 cell_input_fn=None, output_attention=True, initial_cell_state=None, name=None,
                 attention_layer=None, attention_fn=None):
        super().__init__(name=name)
        assert_like_rnncell("cell", cell)
        if isinstance(attention_mechanism, (list, tuple)):
            self._is_multi = True
            mechanisms = tuple(attention_mechanism)
            for m in mechanisms:
                if not isinstance(m, AttentionMechanism):
                    raise TypeError(f"attention_mechanism must contain only instances of AttentionMechanism, saw "
                                    f"type: {type(m).__name__}")
        else:
            self._is_multi = False
            if not isinstance(attention_mechanism, AttentionMechanism):
                raise TypeError(f"attention_mechanism must be an AttentionMechanism or list of multiple "
                                f"AttentionMechanism instances, saw type: {type(attention_mechanism).__name__}")
            mechanisms = (attention_mechanism,)
        if cell_input_fn is None:
            cell_input_fn = lambda inputs, attention: concat([inputs, attention], -1)  # noqa: E731
        elif not callable(cell_input_fn):
            raise TypeError(f"cell_input_fn must be callable, saw type: {type(cell_input_fn).__name__}")
        if attention_layer_size is not None and attention_layer is not None:
            raise ValueError("Only one of attention_layer_size and attention_layer should be set")
        if attention_layer_size is not None:
            sizes = tuple(attention_layer_size if isinstance(attention_layer_size, (list, tuple))
                          else (attention_layer_size,))
            if len(sizes) != len(mechanisms):
                raise ValueError(f"If provided, attention_layer_size must contain exactly one integer per "
                                 f"attention_mechanism, saw: {len(sizes)} vs {len(mechanisms)}")
            self._attention_layers = tuple(Dense(size, name="attention_layer", use_bias=False, dtype=m.dtype)
                                           for size, m in zip(sizes, mechanisms))
            self._attention_layer_size = sum(sizes)
        elif attention_layer is not None:
            layers = tuple(attention_layer if isinstance(attention_layer, (list, tuple)) else (attention_layer,))
            if len(layers) != len(mechanisms):
                raise ValueError(f"If provided, attention_layer must contain exactly one layer per "
                                 f"attention_mechanism, saw: {len(layers)} vs {len(mechanisms)}")
            self._attention_layers = layers
            self._attention_layer_size = sum(
                layer.compute_output_shape([None, cell.output_size + m.values.shape[-1].value])[-1].value
                for layer, m in zip(layers, mechanisms))
        else:
            self._attention_layers = None
            self._attention_layer_size = sum(m.values.shape[-1].value for m in mechanisms)
        self._attention_fn = attention_fn or _compute_attention
        self._cell = cell
        self._attention_mechanisms = mechanisms
        self._cell_input_fn = cell_input_fn
        self._output_attention = output_attention
        self._alignment_history = alignment_history
        if initial_cell_state is None:
            self._initial_cell_state = None
        else:
            with name_scope(name, "AttentionWrapperInit"):
                self._initial_cell_state = nest.map_structure(
                    lambda s: identity(s, name="check_initial_cell_state"), initial_cell_state)

    def _sub_cells(self):
        layers = [self._cell] + list(self._attention_layers or [])
        for m in self._attention_mechanisms:
            layers += [la for la in (m.query_layer, m.memory_layer) if la is not None]
        return layers

    def _item_or_tuple(self, seq):
        t = tuple(seq)
        return t if self._is_multi else t[0]

    @property
    def output_size(self):
        return self._attention_layer_size if self._output_attention else self._cell.output_size

    @property
    def state_size(self):
        return AttentionWrapperState(
            cell_state=self._cell.state_size, time=TensorShape([]), attention=self._attention_layer_size,
            alignments=self._item_or_tuple(a.alignments_size for a in self._attention_mechanisms),
            attention_state=self._item_or_tuple(a.state_size for a in self._attention_mechanisms),
            alignment_history=self._item_or_tuple(a.alignments_size if self._alignment_history else ()
                                                  for a in self._attention_mechanisms))

    def zero_state(self, batch_size, dtype):
        """The initial AttentionWrapperState: the wrapped cell's zero state (or
        `initial_cell_state`), zero attention and alignments, time 0, empty histories."""
        with name_scope(type(self).__name__ + "ZeroState"):
            if self._initial_cell_state is not None:
                cell_state = self._initial_cell_state
            else:
                cell_state = self._cell.get_initial_state(batch_size=batch_size, dtype=dtype)
            message = (f"When calling zero_state of AttentionWrapper {self.name}: Non-matching batch sizes "
                       f"between the memory (encoder output) and the requested batch size. Are you using the "
                       f"BeamSearchDecoder? If so, make sure your encoder output has been tiled to beam_width "
                       f"via tf.contrib.seq2seq.tile_batch, and the batch_size= argument passed to zero_state is "
                       f"batch_size * beam_width.")
            with control_dependencies(_batch_size_checks(self._attention_mechanisms, batch_size, message)):
                cell_state = nest.map_structure(lambda s: identity(s, name="checked_cell_state"), cell_state)
            initial_alignments = [m.initial_alignments(batch_size, dtype) for m in self._attention_mechanisms]
            return AttentionWrapperState(
                cell_state=cell_state, time=zeros([], dtype=dtypes.int32),
                attention=zero_state_tensors(self._attention_layer_size, batch_size, dtype),
                alignments=self._item_or_tuple(initial_alignments),
                attention_state=self._item_or_tuple(m.initial_state(batch_size, dtype)
                                                    for m in self._attention_mechanisms),
                alignment_history=self._item_or_tuple(
                    TensorArray(dtype, size=0, dynamic_size=True, element_shape=a.shape)
                    if self._alignment_history else () for a in initial_alignments))

    def call(self, inputs, state):
        if not isinstance(state, AttentionWrapperState):
            raise TypeError(f"Expected state to be instance of AttentionWrapperState. Received type {type(state)} "
                            f"instead.")
        cell_inputs = self._cell_input_fn(inputs, state.attention)
        cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
        cell_batch = cell_output.shape[0].value
        message = (f"When applying AttentionWrapper {self.name}: Non-matching batch sizes between the memory "
                   f"(encoder output) and the query (decoder output).  Are you using the BeamSearchDecoder?  You "
                   f"may need to tile your memory input via the tf.contrib.seq2seq.tile_batch function with "
                   f"argument multiple=beam_width.")
        with control_dependencies(_batch_size_checks(self._attention_mechanisms, cell_batch if cell_batch is not None
                                                     else shape_op(cell_output)[0], message)):
            cell_output = identity(cell_output, name="checked_cell_output")
        if self._is_multi:
            prev_states, prev_histories = state.attention_state, state.alignment_history
        else:
            prev_states, prev_histories = [state.attention_state], [state.alignment_history]
        alignments_all, attentions, states, histories = [], [], [], []
        for i, mechanism in enumerate(self._attention_mechanisms):
            attention, alignments, next_attention_state = self._attention_fn(
                mechanism, cell_output, prev_states[i], self._attention_layers[i] if self._attention_layers else None)
            history = prev_histories[i].write(state.time, alignments) if self._alignment_history else ()
            states.append(next_attention_state)
            alignments_all.append(alignments)
            attentions.append(attention)
            histories.append(history)
        attention = concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            attention_state=self._item_or_tuple(states), alignments=self._item_or_tuple(alignments_all),
            alignment_history=self._item_or_tuple(histories))
        return (attention if self._output_attention else cell_output), next_state


def hardmax(logits, name=None):
    """one_hot(argmax(logits, -1)) in logits' dtype."""
    with name_scope(name, "Hardmax", [logits]):
        logits = convert_to_tensor(logits, name="logits")
        depth = logits.shape[-1].value if logits.shape.ndims else None
        if depth is None:
            depth = shape_op(logits)[-1]
        return one_hot(argmax(logits, -1), depth, dtype=logits.dtype)


def safe_cumprod(x, *args, **kwargs):
    """cumprod computed as exp(cumsum(log(clip(x, tiny, 1)))): no underflow to 0 (TF1's helper;
    `args`/`kwargs` go to cumsum: axis, exclusive, reverse)."""
    with name_scope(None, "SafeCumprod", [x]):
        x = convert_to_tensor(x, name="x")
        tiny = np.finfo(x.dtype.as_numpy_dtype).tiny
        return tfm.exp(cumsum(tfm.log(clip_by_value(x, tiny, 1)), *args, **kwargs))


def monotonic_attention(p_choose_i, previous_attention, mode):
    """The expected monotonic alignments given per-step choose probabilities `p_choose_i` and the
    previous step's attention, both [batch, max_time]; mode 'recursive' (a scan), 'parallel'
    (cumprods, safe_cumprod) or 'hard' (p_choose_i all 0 or 1). ValueError otherwise."""
    p_choose_i = convert_to_tensor(p_choose_i, name="p_choose_i")
    previous_attention = convert_to_tensor(previous_attention, name="previous_attention")
    if mode == "recursive":
        batch_size = shape_op(p_choose_i)[0]
        shifted = concat([ones(stack([batch_size, 1]), dtype=p_choose_i.dtype), 1 - p_choose_i[:, :-1]], 1)
        acc = scan(lambda x, yz: reshape(yz[0] * x + yz[1], stack([batch_size])),
                   [transpose(shifted), transpose(previous_attention)], zeros(stack([batch_size]),
                                                                                dtype=p_choose_i.dtype))
        return p_choose_i * transpose(acc)
    if mode == "parallel":
        cumprod_1mp = safe_cumprod(1 - p_choose_i, axis=1, exclusive=True)
        return p_choose_i * cumprod_1mp * cumsum(previous_attention / clip_by_value(cumprod_1mp, 1e-10, 1.), axis=1)
    if mode == "hard":  # p_choose_i all 0 or 1: the first chosen index at or after the previous one
        p_choose_i = p_choose_i * cumsum(previous_attention, axis=1)
        return p_choose_i * cumprod(1 - p_choose_i, axis=1, exclusive=True)
    raise ValueError("mode must be 'recursive', 'parallel', or 'hard'.")

