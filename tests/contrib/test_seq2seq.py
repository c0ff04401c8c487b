"""tf.contrib.seq2seq (dflow/contrib/seq2seq/): each piece against a numpy loop written from TF
1.15's contrib/seq2seq sources (TF 2.x no longer ships them), and a whole TF1-style NMT toy
program (encoder, attention decoder, sequence_loss, Adam, greedy inference)."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from dflow.contrib.seq2seq.beam_search_decoder import gather_tree_from_array
from tests.conftest import run_modes

s2s = tf.contrib.seq2seq


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _xent(logits, targets):
    """Sparse softmax cross-entropy, numpy: [B, T]."""
    logp = np.log(_softmax(logits))
    return -np.take_along_axis(logp, targets[..., None], -1)[..., 0]


# ---------------------------------------------------------------- sequence_loss, tile_batch

@pytest.fixture
def loss_inputs():
    rng = np.random.RandomState(0)
    logits = rng.randn(3, 4, 5)
    targets = rng.randint(0, 5, (3, 4)).astype(np.int32)
    weights = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [0.5, 2, 0, 0]], np.float64)
    return logits, targets, weights


@pytest.mark.parametrize("flags", [
    dict(),  # average over both
    dict(average_across_timesteps=False),
    dict(average_across_batch=False),
    dict(average_across_timesteps=False, average_across_batch=False),
    dict(average_across_timesteps=False, average_across_batch=False, sum_over_timesteps=True, sum_over_batch=True),
    dict(average_across_timesteps=False, average_across_batch=False, sum_over_timesteps=True),
    dict(average_across_timesteps=False, average_across_batch=False, sum_over_batch=True),
])
def test_sequence_loss_reductions_match_tf115(loss_inputs, flags):
    logits, targets, weights = loss_inputs
    ce = _xent(logits, targets) * weights
    at, ab = flags.get("average_across_timesteps", True), flags.get("average_across_batch", True)
    st, sb = flags.get("sum_over_timesteps", False), flags.get("sum_over_batch", False)
    # TF 1.15: average_* divides by the weights' sum; sum_over_* by the count of non-zero weights
    if at and ab:
        want = ce.sum() / weights.sum()
    elif st and sb:
        want = ce.sum() / np.count_nonzero(weights)
    elif at or ab:
        axis = 0 if ab else 1
        want = ce.sum(axis) / weights.sum(axis)
    elif st or sb:
        axis = 0 if sb else 1
        want = ce.sum(axis) / np.count_nonzero(weights, axis=axis)
    else:
        want = ce
    got = tf.Session().run(s2s.sequence_loss(tf.constant(logits), tf.constant(targets), tf.constant(weights),
                                             **flags))
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_sequence_loss_custom_loss_function_and_errors(loss_inputs):
    logits, targets, weights = loss_inputs
    seen = {}

    def loss_fn(labels, logits):
        seen["shapes"] = (labels.shape.as_list(), logits.shape.as_list())
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits) * 2.0

    got = tf.Session().run(s2s.sequence_loss(tf.constant(logits), tf.constant(targets), tf.constant(weights),
                                             softmax_loss_function=loss_fn))
    np.testing.assert_allclose(got, 2 * (_xent(logits, targets) * weights).sum() / weights.sum(), rtol=1e-10)
    assert seen["shapes"][0] == [12]
    with pytest.raises(ValueError, match="Logits must be a"):
        s2s.sequence_loss(tf.constant(logits[0]), targets, weights)
    with pytest.raises(ValueError, match="Targets must be a"):
        s2s.sequence_loss(logits, targets[0], weights)
    with pytest.raises(ValueError, match="Weights must be a"):
        s2s.sequence_loss(logits, targets, weights[0])
    with pytest.raises(ValueError, match="average_across_timesteps and sum_over_timesteps"):
        s2s.sequence_loss(logits, targets, weights, sum_over_timesteps=True)
    with pytest.raises(ValueError, match="average_across_batch and sum_over_batch"):
        s2s.sequence_loss(logits, targets, weights, sum_over_batch=True)


def test_tile_batch_repeats_each_entry_in_place():
    x = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    lens = np.array([2, 1, 2], np.int32)
    tiled = s2s.tile_batch((tf.constant(x), tf.constant(lens)), 3)
    assert tiled[0].shape.as_list() == [9, 2, 2] and tiled[1].shape.as_list() == [9]
    tx, tl = tf.Session().run(tiled)
    np.testing.assert_array_equal(tx, np.repeat(x, 3, axis=0))
    np.testing.assert_array_equal(tl, np.repeat(lens, 3))
    p = tf.placeholder(tf.float32, [None, 2])
    t = s2s.tile_batch(p, 2)
    assert t.shape.as_list() == [None, 2]
    np.testing.assert_array_equal(tf.Session().run(t, {p: x[0]}), np.repeat(x[0], 2, axis=0))
    with pytest.raises(ValueError, match="statically known rank"):
        s2s.tile_batch(tf.constant(1.0), 2)


# ---------------------------------------------------------------- helpers and BasicDecoder

B, T, V, D, H = 3, 5, 7, 4, 6


def _rnn_cell_np(kernel, bias, x, h):
    return np.tanh(np.concatenate([x, h], 1) @ kernel + bias)


def _run_with_vars(fetches, feed=None):
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    out = sess.run(fetches, feed)
    values = {v.name: sess.run(v) for v in tf.global_variables()}
    return out, values


@pytest.mark.parametrize("time_major", [False, True])
def test_training_helper_basic_decoder_matches_numpy(time_major):
    rng = np.random.RandomState(1)
    x = rng.randn(B, T, D).astype(np.float32)
    lens = np.array([5, 3, 2], np.int32)
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    inputs = tf.constant(x.transpose(1, 0, 2) if time_major else x)
    helper = s2s.TrainingHelper(inputs, lens, time_major=time_major)
    decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(B, tf.float32), output_layer=tf.layers.Dense(V))
    assert decoder.output_size.rnn_output.as_list() == [V] and decoder.output_size.sample_id.as_list() == []
    out, state, out_lens = s2s.dynamic_decode(decoder, output_time_major=time_major)
    assert isinstance(out, s2s.BasicDecoderOutput)
    assert sorted(v.name for v in tf.trainable_variables()) == [
        "decoder/basic_rnn_cell/bias:0", "decoder/basic_rnn_cell/kernel:0", "decoder/dense/bias:0",
        "decoder/dense/kernel:0"]
    (o, s, ln), w = _run_with_vars([out, state, out_lens])
    k, b = w["decoder/basic_rnn_cell/kernel:0"], w["decoder/basic_rnn_cell/bias:0"]
    dk, db = w["decoder/dense/kernel:0"], w["decoder/dense/bias:0"]
    h = np.zeros((B, H), np.float32)
    logits = []
    for t in range(lens.max()):  # the loop stops when every row is finished; no imputing
        h = _rnn_cell_np(k, b, x[:, t], h)
        logits.append(h @ dk + db)
    logits = np.stack(logits, 1)
    if time_major:
        o = type(o)(o.rnn_output.transpose(1, 0, 2), o.sample_id.T)
    np.testing.assert_allclose(o.rnn_output, logits, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(o.sample_id, logits.argmax(-1))
    np.testing.assert_array_equal(ln, lens)
    np.testing.assert_allclose(s, h, rtol=1e-4, atol=1e-5)


def test_training_helper_with_no_steps():
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    x = tf.placeholder(tf.float32, [B, None, D])
    decoder = s2s.BasicDecoder(cell, s2s.TrainingHelper(x, tf.zeros([B], tf.int32)), cell.zero_state(B, tf.float32))
    out, state, lengths = s2s.dynamic_decode(decoder)
    (o, ln), _ = _run_with_vars([out.rnn_output, lengths], {x: np.zeros((B, 0, D), np.float32)})
    assert o.shape == (B, 0, H)
    np.testing.assert_array_equal(ln, 0)


def test_impute_finished_zeros_outputs_and_freezes_state():
    rng = np.random.RandomState(2)
    x = rng.randn(B, T, D).astype(np.float32)
    lens = np.array([4, 1, 2], np.int32)
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    decoder = s2s.BasicDecoder(cell, s2s.TrainingHelper(x, lens), cell.zero_state(B, tf.float32))
    out, state, out_lens = s2s.dynamic_decode(decoder, impute_finished=True)
    (o, s, ln), w = _run_with_vars([out, state, out_lens])
    k, b = w["decoder/basic_rnn_cell/kernel:0"], w["decoder/basic_rnn_cell/bias:0"]
    h = np.zeros((B, H), np.float32)
    outs = []
    for t in range(4):
        new = _rnn_cell_np(k, b, x[:, t], h)
        done = (t >= lens)[:, None]
        outs.append(np.where(done, 0, new))
        h = np.where(done, h, new)
    np.testing.assert_allclose(o.rnn_output, np.stack(outs, 1), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(s, h, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(ln, lens)


def _greedy_np(emb, k, b, dk, db, start, end, max_iter):
    h = np.zeros((len(start), k.shape[1]), np.float32)
    inp = emb[start]
    finished = np.zeros(len(start), bool)
    lengths = np.zeros(len(start), np.int32)
    ids = []
    for t in range(max_iter):
        h = _rnn_cell_np(k, b, inp, h)
        step = (h @ dk + db).argmax(-1)
        ids.append(step)
        lengths = np.where(finished, lengths, t + 1)
        finished |= step == end
        inp = emb[step]
        if finished.all():
            break
    return np.stack(ids, 1), lengths


def test_greedy_embedding_helper_decodes_as_numpy():
    start, end = np.array([1, 1, 1, 1], np.int32), 2
    # the bias pushes towards id 2 so some rows stop early, others run to maximum_iterations
    emb = tf.get_variable("emb", [V, D], initializer=tf.random_normal_initializer(seed=3))
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    helper = s2s.GreedyEmbeddingHelper(emb, tf.constant(start), end)
    dense = tf.layers.Dense(V, bias_initializer=tf.constant_initializer([0, 0, 0.4, 0, 0, 0, 0]),
                            kernel_initializer=tf.random_normal_initializer(seed=4))
    decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(4, tf.float32), output_layer=dense)
    out, _, lengths = s2s.dynamic_decode(decoder, maximum_iterations=6)
    (o, ln), w = _run_with_vars([out, lengths])
    ids, want_len = _greedy_np(w["emb:0"], w["decoder/basic_rnn_cell/kernel:0"], w["decoder/basic_rnn_cell/bias:0"],
                               w["decoder/dense/kernel:0"], w["decoder/dense/bias:0"], start, end, 6)
    np.testing.assert_array_equal(o.sample_id, ids)
    np.testing.assert_array_equal(ln, want_len)
    assert o.sample_id.dtype == np.int32
    with pytest.raises(ValueError, match="start_tokens must be a vector"):
        s2s.GreedyEmbeddingHelper(emb, 1, end)
    with pytest.raises(ValueError, match="end_token must be a scalar"):
        s2s.GreedyEmbeddingHelper(emb, start, [2])


def test_maximum_iterations_zero_and_callable_embedding():
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    emb = tf.constant(np.eye(V, D, dtype=np.float32))
    helper = s2s.GreedyEmbeddingHelper(lambda ids: tf.nn.embedding_lookup(emb, ids), tf.fill([2], 0), 1)
    decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32), output_layer=tf.layers.Dense(V))
    out, _, lengths = s2s.dynamic_decode(decoder, maximum_iterations=3)
    (o, ln), _ = _run_with_vars([out, lengths])
    assert o.rnn_output.shape[1] <= 3 and (ln <= 3).all()
    with pytest.raises(ValueError, match="maximum_iterations must be a scalar"):
        s2s.dynamic_decode(decoder, maximum_iterations=[3])


def test_sample_and_scheduled_helpers():
    rng = np.random.RandomState(5)
    emb = tf.constant(rng.randn(V, D).astype(np.float32))
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    helper = s2s.SampleEmbeddingHelper(emb, tf.fill([B], 0), 1, softmax_temperature=0.5, seed=7)
    dense = tf.layers.Dense(V)
    out, _, lengths = s2s.dynamic_decode(s2s.BasicDecoder(cell, helper, cell.zero_state(B, tf.float32), dense),
                                         maximum_iterations=5)
    x = rng.randn(B, T, D).astype(np.float32)
    lens = np.array([5, 4, 3], np.int32)
    teacher = s2s.BasicDecoder(cell, s2s.TrainingHelper(x, lens), cell.zero_state(B, tf.float32), dense)
    never = s2s.BasicDecoder(cell, s2s.ScheduledEmbeddingTrainingHelper(x, lens, emb, 0.0, seed=1),
                             cell.zero_state(B, tf.float32), dense)
    always = s2s.BasicDecoder(cell, s2s.ScheduledEmbeddingTrainingHelper(x, lens, emb, 1.0, seed=1),
                              cell.zero_state(B, tf.float32), dense)
    fetch = [out, lengths] + [s2s.dynamic_decode(d)[0] for d in (teacher, never, always)]
    (o, ln, o_t, o_n, o_a), _ = _run_with_vars(fetch)
    assert o.sample_id.dtype == np.int32 and ((o.sample_id >= 0) & (o.sample_id < V)).all()
    assert (ln >= 1).all() and (ln <= 5).all()
    np.testing.assert_allclose(o_n.rnn_output, o_t.rnn_output, rtol=1e-6)  # probability 0: teacher forcing
    assert (o_n.sample_id == -1).all() and (o_a.sample_id >= 0).all()
    with pytest.raises(ValueError, match="sampling_probability must be either a scalar or a vector"):
        s2s.ScheduledEmbeddingTrainingHelper(x, lens, emb, [[0.5]])


def test_inference_helper_feeds_back_its_samples():
    rng = np.random.RandomState(13)
    start = rng.randn(B, D).astype(np.float32)
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    helper = s2s.InferenceHelper(sample_fn=lambda o: o, sample_shape=[D], sample_dtype=tf.float32,
                                 start_inputs=start, end_fn=lambda s: s[:, 0] > 0.3)
    decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(B, tf.float32), output_layer=tf.layers.Dense(D))
    out, _, lengths = s2s.dynamic_decode(decoder, maximum_iterations=6)
    (o, ln), w = _run_with_vars([out, lengths])
    k, b = w["decoder/basic_rnn_cell/kernel:0"], w["decoder/basic_rnn_cell/bias:0"]
    dk, db = w["decoder/dense/kernel:0"], w["decoder/dense/bias:0"]
    h, inp = np.zeros((B, H), np.float32), start
    finished, want_len, outs = np.zeros(B, bool), np.zeros(B, int), []
    for t in range(6):
        h = _rnn_cell_np(k, b, inp, h)
        inp = h @ dk + db
        outs.append(inp)
        want_len = np.where(finished, want_len, t + 1)
        finished |= inp[:, 0] > 0.3
        if finished.all():
            break
    np.testing.assert_allclose(o.sample_id, np.stack(outs, 1), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(ln, want_len)


def test_scheduled_output_training_helper():
    rng = np.random.RandomState(14)
    x = rng.randn(B, T, 2).astype(np.float32)
    aux = rng.randn(B, T, 2).astype(np.float32)
    lens = np.array([5, 5, 5], np.int32)
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    dense = tf.layers.Dense(2)
    never = s2s.ScheduledOutputTrainingHelper(x, lens, 0.0, auxiliary_inputs=aux)
    always = s2s.ScheduledOutputTrainingHelper(x, lens, 1.0, auxiliary_inputs=aux)
    outs = [s2s.dynamic_decode(s2s.BasicDecoder(cell, hp, cell.zero_state(B, tf.float32), dense))[0]
            for hp in (never, always)]
    (o_never, o_always), w = _run_with_vars(outs)
    k, b = w["decoder/basic_rnn_cell/kernel:0"], w["decoder/basic_rnn_cell/bias:0"]
    dk, db = w["decoder/dense/kernel:0"], w["decoder/dense/bias:0"]
    for sampled, o in ((False, o_never), (True, o_always)):
        h, inp, want = np.zeros((B, H), np.float32), np.concatenate([x[:, 0], aux[:, 0]], 1), []
        for t in range(T):
            h = _rnn_cell_np(k, b, inp, h)
            y = h @ dk + db
            want.append(y)
            if t + 1 < T:
                inp = np.concatenate([y if sampled else x[:, t + 1], aux[:, t + 1]], 1)
        np.testing.assert_allclose(o.rnn_output, np.stack(want, 1), rtol=1e-4, atol=1e-5)
        assert o.sample_id.dtype == bool and (o.sample_id == sampled).all()


def test_decoder_type_errors():
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    helper = s2s.TrainingHelper(np.zeros((B, T, D), np.float32), [1, 2, 3])
    with pytest.raises(TypeError, match="helper must be a Helper"):
        s2s.BasicDecoder(cell, object(), cell.zero_state(B, tf.float32))
    with pytest.raises(TypeError, match="output_layer must be a Layer"):
        s2s.BasicDecoder(cell, helper, cell.zero_state(B, tf.float32), output_layer=lambda x: x)
    with pytest.raises(TypeError, match="is not an RNNCell"):
        s2s.BasicDecoder(object(), helper, None)
    with pytest.raises(TypeError, match="Expected decoder to be type Decoder"):
        s2s.dynamic_decode(cell)
    with pytest.raises(ValueError, match="Expected sequence_length to be a vector"):
        s2s.TrainingHelper(np.zeros((B, T, D), np.float32), 3)


# ---------------------------------------------------------------- attention

S, A = 6, 5


def _attention_np(kind, w, x, mem, mem_len, attention_layer, output_attention=True, normalize=False, scale=False,
                  prefix="decoder/attention_wrapper/"):
    """TF 1.15's AttentionWrapper over a BasicRNNCell with one mechanism, step by step."""
    k, b = w[prefix + "basic_rnn_cell/kernel:0"], w[prefix + "basic_rnn_cell/bias:0"]
    mask = np.arange(mem.shape[1])[None] < mem_len[:, None]
    values = mem * mask[..., None]
    keys = values @ w["memory_layer/kernel:0"]
    h = np.zeros((mem.shape[0], k.shape[1]), np.float32)
    depth = attention_layer or mem.shape[2]
    attention = np.zeros((mem.shape[0], depth), np.float32)
    outs, aligns = [], []
    prev_align = np.eye(mem.shape[1])[np.zeros(mem.shape[0], int)]  # monotonic: a dirac on step 0
    for t in range(x.shape[1]):
        h = _rnn_cell_np(k, b, np.concatenate([x[:, t], attention], 1), h)
        if kind == "bahdanau_monotonic":
            scope = prefix + "bahdanau_monotonic_attention/"
            pq = h @ w[scope + "query_layer/kernel:0"]
            score = (w[scope + "attention_v:0"] * np.tanh(keys + pq[:, None])).sum(-1) + w[scope +
                                                                                          "attention_score_bias:0"]
        elif kind == "luong_monotonic":
            score = np.einsum("bd,bsd->bs", h, keys) + w[prefix + "luong_monotonic_attention/attention_score_bias:0"]
        elif kind == "bahdanau":
            scope = prefix + "bahdanau_attention/"
            pq = h @ w[scope + "query_layer/kernel:0"]
            v = w[scope + "attention_v:0"]
            if normalize:
                v = w[scope + "attention_g:0"] * v / np.sqrt((v ** 2).sum())
                score = (v * np.tanh(keys + pq[:, None] + w[scope + "attention_b:0"])).sum(-1)
            else:
                score = (v * np.tanh(keys + pq[:, None])).sum(-1)
        else:
            score = np.einsum("bd,bsd->bs", h, keys)
            if scale:
                score = score * w[prefix + "luong_attention/attention_g:0"]
        if kind.endswith("monotonic"):  # sigmoid choosing probabilities, the exact recurrence
            p = 1 / (1 + np.exp(-np.where(mask, score, -np.inf)))
            q = np.zeros_like(p)
            for i in range(p.shape[1]):
                q[:, i] = (q[:, i - 1] * (1 - p[:, i - 1]) if i else 0) + prev_align[:, i]
            align = p * q
        else:
            align = _softmax(np.where(mask, score, -np.inf))
        prev_align = align
        context = np.einsum("bs,bsd->bd", align, values)
        attention = (np.concatenate([h, context], 1) @ w[prefix + "attention_layer/kernel:0"] if attention_layer
                     else context)
        outs.append(attention if output_attention else h)
        aligns.append(align)
    return np.stack(outs, 1), np.stack(aligns, 0), h


@pytest.mark.parametrize("kind,options,layer,output_attention", [
    ("bahdanau", {}, A, True),
    ("bahdanau", {"normalize": True}, None, False),
    ("luong", {}, A, True),
    ("luong", {"scale": True}, None, True),
    ("bahdanau_monotonic", {"score_bias_init": 0.5}, A, True),
    ("luong_monotonic", {"score_bias_init": -0.5}, None, True),
])
def test_attention_wrapper_matches_numpy(kind, options, layer, output_attention):
    rng = np.random.RandomState(6)
    mem = rng.randn(B, S, 4).astype(np.float32)
    mem_len = np.array([6, 3, 1], np.int32)
    x = rng.randn(B, T, D).astype(np.float32)
    units = H if kind.startswith("luong") else 3  # Luong's keys must have the query's depth
    cls = {"bahdanau": s2s.BahdanauAttention, "luong": s2s.LuongAttention,
           "bahdanau_monotonic": s2s.BahdanauMonotonicAttention, "luong_monotonic": s2s.LuongMonotonicAttention}[kind]
    mech = cls(units, tf.constant(mem), memory_sequence_length=tf.constant(mem_len), **options)
    cell = s2s.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(H), mech, attention_layer_size=layer,
                                alignment_history=True, output_attention=output_attention)
    assert cell.output_size == (layer or 4 if output_attention else H)
    state0 = cell.zero_state(B, tf.float32)
    assert isinstance(state0, s2s.AttentionWrapperState)
    helper = s2s.TrainingHelper(x, np.full(B, T, np.int32))
    out, state, _ = s2s.dynamic_decode(s2s.BasicDecoder(cell, helper, state0))
    (o, hist, st), w = _run_with_vars([out.rnn_output, state.alignment_history.stack(),
                                       state._replace(alignment_history=())])  # a TensorArray is no fetch
    options.pop("score_bias_init", None)
    want_out, want_align, want_h = _attention_np(kind, w, x, mem, mem_len, layer, output_attention, **options)
    np.testing.assert_allclose(o, want_out, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hist, want_align, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(st.alignments, want_align[-1], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(st.cell_state, want_h, rtol=1e-4, atol=1e-5)
    assert st.time == T
    assert (hist[:, 2, 1:] == 0).all()  # past memory_sequence_length: no weight


def test_attention_variable_names_and_clone():
    mem = tf.constant(np.zeros((2, 3, 4), np.float32))
    mech = s2s.BahdanauAttention(5, mem)
    cell = s2s.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(4), mech, attention_layer_size=3)
    enc = tf.nn.rnn_cell.LSTMStateTuple(tf.ones([2, 4]), tf.ones([2, 4]))
    state = cell.zero_state(2, tf.float32).clone(cell_state=enc)
    assert state.attention.shape.as_list() == [2, 3] and state.alignments.shape.as_list() == [2, 3]
    assert state.alignment_history == ()
    helper = s2s.TrainingHelper(tf.zeros([2, 2, 1]), [2, 2])
    s2s.dynamic_decode(s2s.BasicDecoder(cell, helper, state))
    assert [v.name for v in tf.trainable_variables()] == [
        "memory_layer/kernel:0", "decoder/attention_wrapper/basic_lstm_cell/kernel:0",
        "decoder/attention_wrapper/basic_lstm_cell/bias:0",
        "decoder/attention_wrapper/bahdanau_attention/query_layer/kernel:0",
        "decoder/attention_wrapper/bahdanau_attention/attention_v:0",
        "decoder/attention_wrapper/attention_layer/kernel:0"]
    with pytest.raises(ValueError, match="clone"):
        cell.zero_state(2, tf.float32).clone(attention=tf.zeros([2, 7]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Non-matching batch sizes between the memory"):
        cell.zero_state(6, tf.float32)  # a beam search's batch without tile_batch
    n = tf.placeholder(tf.int32, [])
    state = cell.zero_state(n, tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="tile_batch"):
        tf.Session().run(state.cell_state, {n: 3})
    with pytest.raises(TypeError, match="must be an AttentionMechanism"):
        s2s.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(4), object())
    with pytest.raises(ValueError, match="Only one of attention_layer_size and attention_layer"):
        s2s.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(4), mech, attention_layer_size=3,
                             attention_layer=tf.layers.Dense(3))
    with pytest.raises(ValueError, match="Incompatible or unknown inner dimensions"):
        bad = s2s.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(4), s2s.LuongAttention(5, mem))
        bad(tf.zeros([2, 1]), bad.zero_state(2, tf.float32))


def test_hardmax_safe_cumprod_monotonic_attention():
    rng = np.random.RandomState(8)
    logits = rng.randn(3, 5)
    p = rng.rand(3, 5)
    prev = _softmax(rng.randn(3, 5))
    hard_p = (rng.rand(3, 5) > 0.5).astype(np.float64)
    hard_prev = np.eye(5)[[0, 2, 1]]
    sess = tf.Session()
    got = sess.run([s2s.hardmax(logits), s2s.safe_cumprod(p, axis=1, exclusive=True),
                    s2s.monotonic_attention(p, prev, "recursive"), s2s.monotonic_attention(p, prev, "parallel"),
                    s2s.monotonic_attention(hard_p, hard_prev, "hard")])
    np.testing.assert_array_equal(got[0], np.eye(5)[logits.argmax(-1)])
    excl = np.concatenate([np.ones((3, 1)), np.cumprod(p, 1)[:, :-1]], 1)
    np.testing.assert_allclose(got[1], excl, rtol=1e-10)
    # the recurrence: q[i] = (1 - p[i-1]) q[i-1] + prev[i]; attention[i] = p[i] q[i]
    q = np.zeros((3, 5))
    for i in range(5):
        q[:, i] = (q[:, i - 1] * (1 - p[:, i - 1]) if i else 0) + prev[:, i]
    np.testing.assert_allclose(got[2], p * q, rtol=1e-10)
    np.testing.assert_allclose(got[3], p * q, rtol=1e-6)
    # hard: the first chosen index at or after the previous one
    want = np.zeros((3, 5))
    for r in range(3):
        start = hard_prev[r].argmax()
        chosen = [i for i in range(start, 5) if hard_p[r, i] == 1]
        if chosen:
            want[r, chosen[0]] = 1
    np.testing.assert_array_equal(got[4], want)
    with pytest.raises(ValueError, match="mode must be"):
        s2s.monotonic_attention(p, prev, "soft")


# ---------------------------------------------------------------- a TF1 NMT toy program

def test_nmt_toy_program_trains_and_decodes():
    """The shape of the TF1 NMT tutorial: embeddings, a dynamic_rnn encoder, a Luong-attention
    decoder with TrainingHelper, sequence_loss, Adam; then greedy inference sharing the weights."""
    rng = np.random.RandomState(0)
    vocab, emb_dim, units, batch, src_t, tgt_t = 10, 8, 16, 4, 5, 6
    sos, eos = 1, 2
    src = rng.randint(3, vocab, (batch, src_t)).astype(np.int32)
    src_len = np.array([5, 4, 3, 5], np.int32)
    tgt_out = np.concatenate([src[:, ::-1], np.full((batch, 1), eos)], 1).astype(np.int32)  # reverse, then </s>
    tgt_in = np.concatenate([np.full((batch, 1), sos), tgt_out[:, :-1]], 1).astype(np.int32)
    tgt_len = np.full(batch, tgt_t, np.int32)

    source = tf.placeholder(tf.int32, [None, None], name="source")
    source_len = tf.placeholder(tf.int32, [None], name="source_len")
    target_in = tf.placeholder(tf.int32, [None, None])
    target_out = tf.placeholder(tf.int32, [None, None])
    target_len = tf.placeholder(tf.int32, [None])
    batch_size = tf.size(source_len)
    embedding = tf.get_variable("embedding", [vocab, emb_dim])
    with tf.variable_scope("encoder"):
        enc_out, enc_state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(units),
                                               tf.nn.embedding_lookup(embedding, source),
                                               sequence_length=source_len, dtype=tf.float32)
    mechanism = s2s.LuongAttention(units, enc_out, memory_sequence_length=source_len)
    cell = s2s.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(units), mechanism, attention_layer_size=units)
    projection = tf.layers.Dense(vocab, use_bias=False, name="output_projection")
    init = cell.zero_state(batch_size, tf.float32).clone(cell_state=enc_state)
    helper = s2s.TrainingHelper(tf.nn.embedding_lookup(embedding, target_in), target_len)
    outputs, _, _ = s2s.dynamic_decode(s2s.BasicDecoder(cell, helper, init, output_layer=projection))
    logits = outputs.rnn_output
    weights = tf.sequence_mask(target_len, tf.shape(logits)[1], dtype=tf.float32)
    loss = s2s.sequence_loss(logits, target_out, weights)
    train = tf.train.AdamOptimizer(0.02).minimize(loss)
    variables = tf.trainable_variables()
    grads = tf.gradients(loss, variables)
    assert all(g is not None for g in grads), [v.name for v, g in zip(variables, grads) if g is None]
    assert [v.name for v in variables] == [
        "embedding:0", "encoder/rnn/basic_lstm_cell/kernel:0", "encoder/rnn/basic_lstm_cell/bias:0",
        "memory_layer/kernel:0", "decoder/attention_wrapper/basic_lstm_cell/kernel:0",
        "decoder/attention_wrapper/basic_lstm_cell/bias:0", "decoder/attention_wrapper/attention_layer/kernel:0",
        "decoder/output_projection/kernel:0"]

    greedy = s2s.GreedyEmbeddingHelper(embedding, tf.fill([batch_size], sos), eos)
    infer_init = cell.zero_state(batch_size, tf.float32).clone(cell_state=enc_state)
    infer_out, _, infer_len = s2s.dynamic_decode(s2s.BasicDecoder(cell, greedy, infer_init, output_layer=projection),
                                                 maximum_iterations=2 * src_t)
    assert len(tf.trainable_variables()) == len(variables)  # inference shares every weight

    feed = {source: src, source_len: src_len, target_in: tgt_in, target_out: tgt_out, target_len: tgt_len}
    sess = tf.get_default_session() or tf.Session()
    with sess.as_default():
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([loss, train], feed)[0] for _ in range(40)]
        ids, lengths = sess.run([infer_out.sample_id, infer_len], {source: src, source_len: src_len})
    assert losses[-1] < 0.5 * losses[0], losses
    assert ids.dtype == np.int32 and ids.shape[0] == batch and ids.shape[1] <= 2 * src_t
    assert ((lengths >= 1) & (lengths <= 2 * src_t)).all()
    # the trained model copies most of the reversed training sequences
    hits = sum((ids[r, :tgt_t] == tgt_out[r, :ids.shape[1]][:tgt_t]).mean() for r in range(batch)
               if ids.shape[1] >= tgt_t) / batch
    assert hits > 0.3, (ids, tgt_out)


def test_namespace():
    assert tf.contrib.seq2seq is s2s
    import dflow.contrib.seq2seq as mod
    assert mod is s2s
    with pytest.raises(AttributeError, match="NoSuchThing is not a TF1 name"):
        s2s.NoSuchThing  # noqa: B018


# ---------------------------------------------------------------- beam search

def _gather_tree_np(step_ids, parent_ids, max_lengths, end_token):
    """TF 1.15's GatherTree kernel: backtrack each beam from its batch's last step, end_token past
    it and after the first end_token."""
    t_max, batch, width = step_ids.shape
    out = np.full_like(step_ids, end_token)
    for b in range(batch):
        length = min(t_max, max_lengths[b])
        for w in range(width):
            if length <= 0:
                continue
            out[length - 1, b, w] = step_ids[length - 1, b, w]
            parent = parent_ids[length - 1, b, w]
            for level in range(length - 2, -1, -1):
                out[level, b, w] = step_ids[level, b, parent]
                parent = parent_ids[level, b, parent]
            finished = False
            for t in range(length):
                if finished:
                    out[t, b, w] = end_token
                elif out[t, b, w] == end_token:
                    finished = True
    return out


def test_gather_tree_matches_the_kernel():
    rng = np.random.RandomState(9)
    step_ids = rng.randint(0, 6, (5, 3, 4)).astype(np.int32)
    parents = rng.randint(0, 4, (5, 3, 4)).astype(np.int32)
    lengths = np.array([5, 3, 0], np.int32)
    got = tf.Session().run(s2s.gather_tree(step_ids, parents, lengths, 5))
    np.testing.assert_array_equal(got, _gather_tree_np(step_ids, parents, lengths, 5))
    bad = parents.copy()
    bad[4, 0, 1] = 7  # read first: the last step of a batch entry of length 5
    with pytest.raises(tf.errors.InvalidArgumentError, match="GatherTree"):
        tf.Session().run(s2s.gather_tree(step_ids, bad, lengths, 5))
    # hand-worked: beam 0 ends at step 2 on 7 from parent 2, whose step 1 id is 6 from parent 1 (id 2)
    step_ids = np.array([[[2, 2, 3]], [[4, 5, 6]], [[7, 8, 9]]], np.int32)
    parents = np.array([[[0, 0, 0]], [[0, 1, 1]], [[2, 1, 2]]], np.int32)
    np.testing.assert_array_equal(tf.Session().run(s2s.gather_tree(step_ids, parents, [3], 10))[:, 0],
                                  [[2, 2, 2], [6, 5, 6], [7, 8, 9]])


def _lstm_np(k, b, x, c, h):
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ k + b, 4, axis=1)
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    c = c * sig(f + 1.0) + sig(i) * np.tanh(j)
    return c, np.tanh(c) * sig(o)


def _beam_search_np(w, start, end, width, max_iter, penalty):
    """TF 1.15's BeamSearchDecoder.step and _beam_search_step over a BasicLSTMCell, in numpy."""
    emb, k, b = w["emb:0"], w["decoder/basic_lstm_cell/kernel:0"], w["decoder/basic_lstm_cell/bias:0"]
    dk, db = w["decoder/dense/kernel:0"], w["decoder/dense/bias:0"]
    batch, vocab, units = len(start), emb.shape[0], k.shape[1] // 4
    log_probs = np.full((batch, width), -np.inf, np.float32)
    log_probs[:, 0] = 0
    finished = np.ones((batch, width), bool)
    finished[:, 0] = False
    lengths = np.zeros((batch, width), np.int64)
    c = np.zeros((batch * width, units), np.float32)
    h = c.copy()
    inp = emb[np.repeat(start, width)]
    scores_all, ids_all, parents_all = [], [], []
    rows = np.arange(batch)[:, None]
    for _ in range(max_iter):
        c, h = _lstm_np(k, b, inp, c, h)
        logits = (h @ dk + db).reshape(batch, width, vocab)
        lp = logits - logits.max(-1, keepdims=True)
        lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
        eos_row = np.full(vocab, np.finfo(np.float32).min, np.float32)
        eos_row[end] = 0
        lp = np.where(finished[..., None], eos_row, lp)
        total = log_probs[..., None] + lp
        new_len = lengths[..., None] + ((np.arange(vocab) != end)[None, None] & ~finished[..., None])
        scores = total if penalty == 0 else total / (((5.0 + new_len) / 6.0) ** penalty)
        flat = scores.reshape(batch, -1)
        idx = np.argsort(-flat, axis=1, kind="stable")[:, :width]  # top_k: ties to the lower index
        word, beam = idx % vocab, idx // vocab
        scores_all.append(np.take_along_axis(flat, idx, 1))
        ids_all.append(word)
        parents_all.append(beam)
        log_probs = np.take_along_axis(total.reshape(batch, -1), idx, 1)
        prev_finished = finished[rows, beam]
        finished = prev_finished | (word == end)
        lengths = lengths[rows, beam] + ~prev_finished
        c = c.reshape(batch, width, units)[rows, beam].reshape(batch * width, units)
        h = h.reshape(batch, width, units)[rows, beam].reshape(batch * width, units)
        inp = emb[word.reshape(-1)]
        if finished.all():
            break
    step_ids = np.stack(ids_all)
    predicted = _gather_tree_np(step_ids, np.stack(parents_all), lengths.max(1), end)
    return predicted.transpose(1, 0, 2), np.stack(scores_all).transpose(1, 0, 2), lengths


@pytest.mark.parametrize("penalty", [0.0, 0.7])
def test_beam_search_decoder_matches_numpy(penalty):
    batch, width, vocab = 2, 3, 6
    emb = tf.get_variable("emb", [vocab, D], initializer=tf.random_normal_initializer(seed=10))
    cell = tf.nn.rnn_cell.BasicLSTMCell(H)
    init = s2s.tile_batch(cell.zero_state(batch, tf.float32), width)
    dense = tf.layers.Dense(vocab, kernel_initializer=tf.random_normal_initializer(stddev=2.0, seed=11),
                            bias_initializer=tf.constant_initializer([0, 0, 1.0, 0, 0, 0]))
    decoder = s2s.BeamSearchDecoder(cell, emb, tf.fill([batch], 1), 2, init, width, output_layer=dense,
                                    length_penalty_weight=penalty)
    out, state, _ = s2s.dynamic_decode(decoder, maximum_iterations=7)
    assert isinstance(out, s2s.FinalBeamSearchDecoderOutput)
    assert isinstance(state, s2s.BeamSearchDecoderState)
    (o, lengths), w = _run_with_vars([out, state.lengths])
    want_ids, want_scores, want_lengths = _beam_search_np(w, np.array([1, 1]), 2, width, 7, penalty)
    np.testing.assert_array_equal(o.predicted_ids, want_ids)
    np.testing.assert_allclose(o.beam_search_decoder_output.scores, want_scores, rtol=1e-4)
    np.testing.assert_array_equal(lengths, want_lengths)
    assert o.predicted_ids.dtype == np.int32 and o.predicted_ids.shape[2] == width


def test_beam_search_with_attention_and_errors():
    batch, width = 2, 3
    mem = tf.constant(np.random.RandomState(12).randn(batch, 4, 5).astype(np.float32))
    tiled = s2s.tile_batch(mem, width)
    mech = s2s.LuongAttention(H, tiled, memory_sequence_length=s2s.tile_batch(tf.constant([4, 2]), width))
    cell = s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(H), mech, attention_layer_size=H)
    emb = tf.get_variable("emb", [V, D])
    init = cell.zero_state(batch * width, tf.float32)
    decoder = s2s.BeamSearchDecoder(cell, emb, tf.fill([batch], 0), 1, init, width, output_layer=tf.layers.Dense(V))
    out, _, _ = s2s.dynamic_decode(decoder, maximum_iterations=4)
    (o,), _ = _run_with_vars([out.predicted_ids])
    assert o.shape[0] == batch and o.shape[2] == width and o.shape[1] <= 4
    assert ((o >= 0) & (o < V)).all()
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch_size \\* beam_width"):
        cell.zero_state(batch, tf.float32)
    gru = tf.nn.rnn_cell.GRUCell(H)
    with pytest.raises(ValueError, match="batch_size=encoder_batch_size \\* beam_width"):
        s2s.BeamSearchDecoder(gru, emb, tf.fill([batch], 0), 1, gru.zero_state(batch, tf.float32), width)
    with pytest.raises(ValueError, match="start_tokens must be a vector"):
        s2s.BeamSearchDecoder(cell, emb, 0, 1, init, width)
    with pytest.raises(TypeError, match="output_layer must be a Layer"):
        s2s.BeamSearchDecoder(cell, emb, tf.fill([batch], 0), 1, init, width, output_layer=len)


def test_attention_decoder_runs_alike_on_every_local_scheduler():
    """The decoder's loop, attention and beam search give the same values in the eager path and
    through Dask with small chunks."""
    rng = np.random.RandomState(15)
    mem = tf.constant(rng.randn(4, 6, 3).astype(np.float32))
    mech = s2s.BahdanauAttention(5, mem, memory_sequence_length=[6, 2, 4, 5])
    cell = s2s.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(H), mech, attention_layer_size=A)
    x = tf.constant(rng.randn(4, T, D).astype(np.float32))
    helper = s2s.TrainingHelper(x, [5, 2, 3, 4])
    out, _, _ = s2s.dynamic_decode(s2s.BasicDecoder(cell, helper, cell.zero_state(4, tf.float32),
                                                    tf.layers.Dense(V)), impute_finished=True)
    loss = s2s.sequence_loss(out.rnn_output, tf.zeros([4, T], tf.int32), tf.sequence_mask([5, 2, 3, 4], T,
                                                                                         dtype=tf.float32))
    grads = tf.gradients(loss, tf.trainable_variables())
    init = tf.global_variables_initializer()
    graph = tf.get_default_graph()

    def run_all():
        with tf.Session() as sess:
            sess.run(init)
            values = {v.name: v for v in tf.global_variables()}
            return sess.run(values)
    # the same variable values in each mode: feed them
    values = run_all()
    feed = {graph.get_tensor_by_name(name): value for name, value in values.items()}
    got = run_modes([out.rnn_output, loss] + grads, feed_dict=feed)
    assert np.isfinite(got[1]) and all(np.isfinite(np.asarray(g)).all() for g in got[2:])


def _gather_tree_from_array_np(t, parent_ids, lengths):
    """TF 1.15's gather_tree_from_array: each beam's path of beam indices (gather_tree over the
    beam ids), its own index past its length, then t[time, batch, that beam]."""
    t_max, batch, width = parent_ids.shape
    beam_ids = np.broadcast_to(np.arange(width), (t_max, batch, width)).astype(np.int32)
    sorted_ids = _gather_tree_np(beam_ids, parent_ids, lengths.max(1), width + 1)
    in_bound = (np.arange(t_max)[:, None, None] < lengths[None]).astype(bool)
    sorted_ids = np.where(in_bound, sorted_ids, beam_ids)
    grid = t.reshape(t_max, batch, width, -1)
    out = grid[np.arange(t_max)[:, None, None], np.arange(batch)[None, :, None], sorted_ids]
    return out.reshape(t.shape)


def test_beam_search_reorders_the_alignment_history():
    batch, width = 2, 3
    rng = np.random.RandomState(16)
    mem = s2s.tile_batch(tf.constant(rng.randn(batch, 4, 5).astype(np.float32)), width)
    mech = s2s.BahdanauAttention(4, mem)
    cell = s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(H), mech, alignment_history=True)
    emb = tf.get_variable("emb", [V, D], initializer=tf.random_normal_initializer(seed=17))
    dense = tf.layers.Dense(V, kernel_initializer=tf.random_normal_initializer(stddev=3.0, seed=18))
    fetch = []
    for reorder in (False, True):
        decoder = s2s.BeamSearchDecoder(cell, emb, tf.fill([batch], 0), 1, cell.zero_state(batch * width, tf.float32),
                                        width, output_layer=dense, reorder_tensor_arrays=reorder)
        out, state, _ = s2s.dynamic_decode(decoder, maximum_iterations=5)
        history = state.cell_state.alignment_history
        fetch.append((history.stack() if not reorder else history, out.beam_search_decoder_output.parent_ids,
                      state.lengths))
    assert len({v.name for v in tf.trainable_variables()}) == len(tf.trainable_variables())
    ((raw, parents, lengths), (ordered, parents2, _)), _ = _run_with_vars(fetch)
    np.testing.assert_array_equal(parents, parents2)  # the same weights, the same search
    want = _gather_tree_from_array_np(raw, parents.transpose(1, 0, 2), lengths)
    np.testing.assert_allclose(ordered, want, rtol=1e-6)
    assert raw.shape == ordered.shape and raw.shape[1] == batch * width

    # the reordering itself, on parents that do swap
    rng = np.random.RandomState(19)
    t = rng.randn(4, batch * width, 3).astype(np.float32)
    parents = rng.randint(0, width, (4, batch, width)).astype(np.int32)
    lengths = np.array([[4, 2, 3], [1, 4, 4]], np.int64)
    got = tf.Session().run(gather_tree_from_array(tf.constant(t), tf.constant(parents), tf.constant(lengths)))
    np.testing.assert_allclose(got, _gather_tree_from_array_np(t, parents, lengths))
    assert not np.allclose(got, t)


def test_decoding_runs_eagerly():
    """Under eager execution (tf.contrib.eager), dynamic_decode is a Python loop over values, as
    TF 1.15's; the numbers match graph mode."""
    rng = np.random.RandomState(20)
    x = rng.randn(2, 3, 2).astype(np.float32)
    kernel = rng.randn(6, 4).astype(np.float32)
    with tf.contrib.eager.eager_mode():
        cell = tf.nn.rnn_cell.BasicRNNCell(4)
        helper = s2s.TrainingHelper(tf.constant(x), tf.constant([3, 2]))
        with tf.variable_scope("eager", initializer=tf.constant_initializer(kernel)):
            out, _, lengths = s2s.dynamic_decode(s2s.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32)))
        got, got_len = out.rnn_output.numpy(), lengths.numpy()
    h, want = np.zeros((2, 4), np.float32), []
    for t in range(3):
        h = np.tanh(np.concatenate([x[:, t], h], 1) @ kernel)
        want.append(h)
    np.testing.assert_allclose(got, np.stack(want, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got_len, [3, 2])


def test_nmt_tutorial_scopes_time_major_and_impute_finished():
    """The TF1 NMT tutorial's spelling: a named decoder scope passed to dynamic_decode (and reused
    for inference), time-major outputs, impute_finished with an alignment history, swap_memory;
    and an AttentionWrapper driven by dynamic_rnn."""
    rng = np.random.RandomState(21)
    mem = tf.constant(rng.randn(B, S, 4).astype(np.float32))
    x = tf.constant(rng.randn(T, B, D).astype(np.float32))  # time-major
    with tf.variable_scope("dynamic_seq2seq"):
        mech = s2s.LuongAttention(H, mem, memory_sequence_length=[6, 3, 1], scale=True)
        cell = s2s.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(H), mech, attention_layer_size=A,
                                    alignment_history=True)
        projection = tf.layers.Dense(V, use_bias=False, name="output_projection")
        with tf.variable_scope("decoder") as decoder_scope:
            helper = s2s.TrainingHelper(x, [5, 4, 2], time_major=True)
            out, state, lengths = s2s.dynamic_decode(
                s2s.BasicDecoder(cell, helper, cell.zero_state(B, tf.float32), projection), output_time_major=True,
                impute_finished=True, swap_memory=True, scope=decoder_scope)
        names = {v.name for v in tf.trainable_variables()}
        greedy = s2s.GreedyEmbeddingHelper(tf.ones([V, D]) * 0.1, tf.fill([B], 0), 1)
        infer, _, _ = s2s.dynamic_decode(s2s.BasicDecoder(cell, greedy, cell.zero_state(B, tf.float32), projection),
                                         maximum_iterations=3, scope=decoder_scope)
    assert {v.name for v in tf.trainable_variables()} == names
    assert "dynamic_seq2seq/decoder/attention_wrapper/luong_attention/attention_g:0" in names
    assert "dynamic_seq2seq/decoder/output_projection/kernel:0" in names
    assert out.rnn_output.shape.as_list() == [None, B, V]
    rnn_out, rnn_state = tf.nn.dynamic_rnn(cell, x, time_major=True, dtype=tf.float32,  # TF1 needs it too
                                           initial_state=cell.zero_state(B, tf.float32))
    (o, hist, ln, ids, r), _ = _run_with_vars([out.rnn_output, state.alignment_history.stack(), lengths,
                                               infer.sample_id, rnn_out])
    np.testing.assert_array_equal(ln, [5, 4, 2])
    assert (o[2:, 2] == 0).all() and (o[4:, 1] == 0).all() and not (o[:2, 2] == 0).all()  # imputed zeros
    assert hist.shape == (5, B, S)
    np.testing.assert_allclose(hist.sum(-1)[:2], 1, rtol=1e-5)
    assert ids.shape[0] == B and r.shape == (T, B, A)


def test_attention_layer_and_several_mechanisms():
    rng = np.random.RandomState(22)
    mem = tf.constant(rng.randn(B, S, 4).astype(np.float32))
    luong, bahdanau = s2s.LuongAttention(H, mem), s2s.BahdanauAttention(3, mem, memory_sequence_length=[6, 2, 3])
    cell = s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(H), [luong, bahdanau], attention_layer_size=[2, 3],
                                alignment_history=True)
    assert cell.output_size == 5
    state = cell.zero_state(B, tf.float32)
    assert isinstance(state.alignments, tuple) and len(state.alignment_history) == 2
    out, final, _ = s2s.dynamic_decode(s2s.BasicDecoder(cell, s2s.TrainingHelper(tf.zeros([B, T, 1]), [5, 5, 5]),
                                                        state))
    own = s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(H), luong, attention_layer=tf.layers.Dense(7, name="mine"))
    assert own.output_size == 7
    o2, _ = tf.nn.dynamic_rnn(own, tf.zeros([B, T, 1]), dtype=tf.float32)
    (o, a1, a2, h2, o2v), _ = _run_with_vars([out.rnn_output, final.alignments[0], final.alignments[1],
                                              final.alignment_history[1].stack(), o2])
    assert o.shape == (B, T, 5) and o2v.shape == (B, T, 7)
    np.testing.assert_allclose(a1.sum(-1), 1, rtol=1e-5)
    assert (a2[1, 2:] == 0).all() and h2.shape == (T, B, S)
    with pytest.raises(ValueError, match="exactly one integer per attention_mechanism"):
        s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(H), [luong, bahdanau], attention_layer_size=4)
    with pytest.raises(TypeError, match="must contain only instances of AttentionMechanism"):
        s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(H), [luong, "x"])
