"""Embeddings, candidate samplers and sampled losses (dflow/nn/core.py, nn/sampled.py,
kernels/candidate_sampling_ops.py) against numpy, across schedulers; word2vec learns neighbours."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

RNG = np.random.default_rng(0)
FULL = RNG.standard_normal((10, 3)).astype(np.float32)
IDS = np.array([[0, 9], [4, 5], [7, 7]])


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_partitioned_lookup_and_its_sparse_gradients(strategy):
    shards = [FULL[i::3] for i in range(3)] if strategy == "mod" else np.array_split(FULL, 3)
    vs = [tf.Variable(s) for s in shards]
    out = tf.nn.embedding_lookup(vs, IDS, partition_strategy=strategy)
    grads = tf.gradients(tf.reduce_sum(out * out), vs)
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got, dense = s.run([out, [tf.convert_to_tensor(g) for g in grads]])
    np.testing.assert_array_equal(got, FULL[IDS])
    ref = np.zeros_like(FULL)
    np.add.at(ref, IDS.ravel(), 2 * FULL[IDS.ravel()])
    refs = [ref[i::3] for i in range(3)] if strategy == "mod" else np.array_split(ref, 3)
    for a, b in zip(dense, refs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_max_norm_and_l2_normalize_over_axes():
    out = tf.nn.embedding_lookup(tf.constant(FULL), [1, 2], max_norm=1.0)
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    normed = tf.nn.l2_normalize(tf.constant(x), axis=[1, 2], epsilon=1e-12)
    got, n = run_modes([out, normed])
    norms = np.linalg.norm(FULL[[1, 2]], axis=1, keepdims=True)
    np.testing.assert_allclose(got, FULL[[1, 2]] / np.maximum(norms, 1.0), rtol=1e-5)
    np.testing.assert_allclose(n, x / np.sqrt((x ** 2).sum(axis=(1, 2), keepdims=True)), rtol=1e-5)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_embedding_lookup_sparse(combiner):
    sp = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 3, 1], tf.int64), [4, 2])
    w = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [2.0, 1.0, 0.5], [4, 2])
    p = tf.constant(FULL)
    plain, weighted = run_modes([tf.nn.embedding_lookup_sparse(p, sp, None, combiner=combiner),
                                 tf.nn.embedding_lookup_sparse(p, sp, w, combiner=combiner)])
    ws = np.array([2.0, 1.0])
    div = {"sum": (1, 1), "mean": (2, 3), "sqrtn": (np.sqrt(2), np.sqrt(5))}[combiner]
    np.testing.assert_allclose(plain[0], (FULL[1] + FULL[3]) / div[0], rtol=1e-5)
    np.testing.assert_allclose(weighted[0], (ws[0] * FULL[1] + ws[1] * FULL[3]) / div[1], rtol=1e-5)
    np.testing.assert_array_equal(plain[1], 0)  # a row without ids: zeros, weighted or not (TF1)
    np.testing.assert_array_equal(weighted[1], 0)
    assert plain.shape == (3, 3)  # TF1: rows up to the last one with ids


@pytest.mark.parametrize("sampler", ["log_uniform", "uniform", "unigram"])
def test_samplers_distribution_and_expected_counts(sampler):
    r, n = 12, 6
    counts = np.arange(1, r + 1, dtype=np.float64)
    labels = tf.constant([[0], [5]], tf.int64)
    if sampler == "log_uniform":
        p = (np.log(np.arange(r) + 2.0) - np.log(np.arange(r) + 1.0)) / np.log(r + 1.0)
        draw = lambda u: tf.nn.log_uniform_candidate_sampler(labels, 1, n, u, r, seed=7)  # noqa: E731
    elif sampler == "uniform":
        p = np.full(r, 1.0 / r)
        draw = lambda u: tf.nn.uniform_candidate_sampler(labels, 1, n, u, r, seed=7)  # noqa: E731
    else:
        p = counts ** 0.75 / (counts ** 0.75).sum()
        draw = lambda u: tf.nn.fixed_unigram_candidate_sampler(labels, 1, n, u, r, distortion=0.75,  # noqa: E731
                                                               unigrams=counts.tolist(), seed=7)
    plain, uniq = draw(False), draw(True)
    seen = np.zeros(r)
    with tf.Session() as s:
        for _ in range(200):
            (c, te, se), (cu, teu, seu) = s.run([plain, uniq])
            np.add.at(seen, c, 1)
            np.testing.assert_allclose(te[:, 0], n * p[[0, 5]], rtol=1e-5)
            np.testing.assert_allclose(se, n * p[c], rtol=1e-5)
            assert len(set(cu.tolist())) == n  # unique draws
            # -expm1(num_tries * log1p(-p)), num_tries >= num_sampled the same for every class
            tries = np.log1p(-seu.astype(np.float64)) / np.log1p(-p[cu])
            assert tries.min() >= n - 1e-3 and np.allclose(tries, np.round(tries[0]), rtol=1e-3)
            np.testing.assert_allclose(teu[:, 0], -np.expm1(np.round(tries[0]) * np.log1p(-p[[0, 5]])), rtol=1e-4)
    np.testing.assert_allclose(seen / seen.sum(), p, atol=0.035)  # 1200 draws


def test_samplers_draw_the_same_on_every_scheduler():
    labels = tf.constant([[1], [2]], tf.int64)
    sampled = tf.nn.log_uniform_candidate_sampler(labels, 1, 5, True, 50, seed=3)
    unseeded = tf.nn.uniform_candidate_sampler(labels, 1, 5, False, 50)
    run_modes([sampled, tf.reduce_sum(tf.cast(unseeded[0], tf.float32)) * 0.0])  # the modes agree


@pytest.mark.parametrize("kind, unique, range_max, num_sampled", [
    ("log_uniform", True, 1_000_000, 64), ("log_uniform", True, 40, 30), ("uniform", True, 12, 12),
    ("uniform", False, 50, 7), ("unigram", True, 6, 4), ("unigram", False, 6, 5)])
def test_samplers_drawn_ahead_equal_runs_drawn_alone(kind, unique, range_max, num_sampled):
    """A training loop's runs are drawn ahead in batches; each run's draw (classes, tries, expected
    counts) equals the run drawn alone, as a Dask task draws it, including runs whose first draws
    held too few distinct classes (range_max 40, 30 unique: longer prefixes of the stream)."""
    from dflow.kernels import candidate_sampling_ops as cs

    extra = {"unigrams": tuple(float(u) for u in range(1, range_max + 1)), "distortion": 0.75} \
        if kind == "unigram" else {}
    attrs = dict(kind=kind, num_true=1, num_sampled=num_sampled, unique=unique, range_max=range_max, seed=5,
                 seed2=9, op_name=f"ahead_{kind}_{unique}_{range_max}", **extra)
    true = np.array([[1], [range_max - 1], [0]], np.int64)
    alone = [cs._sample(true, c, None, **attrs) for c in range(70)]
    ahead = [cs._sample(true, c, None, ahead=True, **attrs) for c in range(70)]
    for c, (a, b) in enumerate(zip(alone, ahead)):
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), (c, x, y)
        if unique:
            assert len(set(a[0].tolist())) == num_sampled
    entry = next(e for k, e in cs._ahead.items() if k[0] == attrs["op_name"])
    assert len(entry.tries) > 1  # (the runs were drawn ahead)
    got = cs._sample(true, 68, None, ahead=True, **attrs)  # (a cache hit)
    for x in got:
        x[...] = -1  # a returned draw is the caller's: the cache keeps its own
    for x, y in zip(cs._sample(true, 68, None, ahead=True, **attrs), alone[68]):
        assert np.array_equal(x, y)


def test_compute_accidental_hits():
    idx, ids, w = run_modes(tf.nn.compute_accidental_hits(tf.constant([[1, 5], [2, 2]], tf.int64),
                                                          tf.constant([5, 2, 1, 5], tf.int64), 2))
    # TF 2.21's tf.compat.v1 gives these: class 5, sampled twice, is a hit at its last position only
    np.testing.assert_array_equal(idx, [0, 0, 1, 1])
    np.testing.assert_array_equal(ids, [2, 3, 1, 1])
    assert (w == -np.finfo(np.float32).max).all()


def _numpy_sampled_logits(W, b, labels, x, sampled, te, se, remove_hits):
    true_logits = (x * W[labels[:, 0]]).sum(1, keepdims=True) + b[labels[:, 0]][:, None] - np.log(te)
    s_logits = x @ W[sampled].T + b[sampled] - np.log(se)
    if remove_hits:
        s_logits = s_logits + np.where(labels == sampled[None, :], np.finfo(np.float32).min, 0)
    return np.concatenate([true_logits, s_logits], 1)


def test_nce_and_sampled_softmax_losses_match_numpy_and_differences():
    rng = np.random.default_rng(0)
    rng.standard_normal((10, 3))  # (FULL: the TF1 run drew the same numbers in this order)
    W0 = rng.standard_normal((20, 4)).astype(np.float32)
    b0 = rng.standard_normal(20).astype(np.float32)
    x0 = rng.standard_normal((3, 4)).astype(np.float32)
    labels = np.array([[1], [5], [9]])
    sampled_np = np.array([0, 2, 5, 13], np.int64)
    te_np = np.full((3, 1), 0.3, np.float32)
    se_np = np.full(4, 0.2, np.float32)
    sv = (tf.constant(sampled_np), tf.constant(te_np), tf.constant(se_np))
    W, b, x = tf.constant(W0), tf.constant(b0), tf.constant(x0)
    nce = tf.nn.nce_loss(W, b, labels, x, 4, 20, sampled_values=sv)
    ssm = tf.nn.sampled_softmax_loss(W, b, labels, x, 4, 20, sampled_values=sv)
    got_nce, got_ssm = run_modes([nce, ssm])
    # TF 2.21's tf.compat.v1 on these inputs
    np.testing.assert_allclose(got_nce, [8.265518, 6.3100877, 6.9812517], rtol=1e-5)
    np.testing.assert_allclose(got_ssm, [2.8023376, 3.3148491, 4.0354977], rtol=1e-5)
    logits = _numpy_sampled_logits(W0, b0, labels, x0, sampled_np, te_np, se_np, False)
    y = np.concatenate([np.ones((3, 1)), np.zeros((3, 4))], 1)
    sig = np.maximum(logits, 0) - logits * y + np.log1p(np.exp(-np.abs(logits)))
    np.testing.assert_allclose(got_nce, sig.sum(1), rtol=1e-5)
    logits = _numpy_sampled_logits(W0, b0, labels, x0, sampled_np, te_np, se_np, True).astype(np.float64)
    lse = np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1)
    np.testing.assert_allclose(got_ssm, lse - logits[:, 0], rtol=1e-5)
    Wp, xp = tf.placeholder(tf.float32, [20, 4]), tf.placeholder(tf.float32, [3, 4])
    nce_p = tf.nn.nce_loss(Wp, b, labels, xp, 4, 20, sampled_values=sv)
    ssm_p = tf.nn.sampled_softmax_loss(Wp, b, labels, xp, 4, 20, sampled_values=sv)
    with tf.Session():
        for loss in (nce_p, ssm_p):
            for wrt, value, other in ((xp, x0, {Wp: W0}), (Wp, W0, {xp: x0})):
                err = tf.test.compute_gradient_error(wrt, value.shape, loss, [3], x_init_value=value, delta=1e-2, extra_feed_dict=other)
                assert err < 2e-2


def test_sampled_losses_of_an_unknown_batch_match_a_known_one():
    """The true and sampled rows are split by a size computed in the run when the batch is unknown;
    losses and the weights' (sparse) gradients agree with the static-batch graph in every mode."""
    rng = np.random.default_rng(3)
    W0 = rng.standard_normal((20, 4)).astype(np.float32)
    b0 = rng.standard_normal(20).astype(np.float32)
    x0 = rng.standard_normal((3, 4)).astype(np.float32)
    labels0 = np.array([[1], [5], [9]])
    sv = (tf.constant(np.array([0, 2, 5, 13], np.int64)), tf.constant(np.full((3, 1), 0.3, np.float32)),
          tf.constant(np.full(4, 0.2, np.float32)))
    W, b = tf.constant(W0), tf.constant(b0)
    lab = tf.placeholder(tf.int64, [None, 1])
    x = tf.placeholder(tf.float32, [None, 4])
    fetches = []
    for labels, inputs in ((labels0, x0), (lab, x)):
        for fn in (tf.nn.nce_loss, tf.nn.sampled_softmax_loss):
            loss = fn(W, b, labels, inputs, 4, 20, sampled_values=sv)
            gw, gb = tf.gradients(tf.reduce_sum(loss), [W, b])
            fetches.append([loss, tf.convert_to_tensor(gw), tf.convert_to_tensor(gb)])
    got = run_modes(fetches, {lab: labels0, x: x0})
    for static, dynamic in zip(got[:2], got[2:]):
        for a, c in zip(static, dynamic):
            np.testing.assert_allclose(c, a, rtol=1e-6)
    assert np.abs(got[0][1]).sum() > 0 and np.abs(got[1][2]).sum() > 0


def _skipgram_pairs(rng, n):
    """Words 0-4 and 5-9 form two topics: a centre word's context is a word of its own topic."""
    centre = rng.integers(0, 10, n)
    context = (centre // 5) * 5 + rng.integers(0, 5, n)
    return centre.astype(np.int32), context.reshape(-1, 1).astype(np.int64)


def test_word2vec_skipgram_makes_topic_words_neighbours():
    vocab, dim = 10, 8
    emb = tf.Variable(tf.random_uniform([vocab, dim], -1.0, 1.0, seed=1))
    nce_w = tf.Variable(tf.truncated_normal([vocab, dim], stddev=1.0 / np.sqrt(dim), seed=2))
    nce_b = tf.Variable(tf.zeros([vocab]))
    centre = tf.placeholder(tf.int32, [32])
    context = tf.placeholder(tf.int64, [32, 1])
    loss = tf.reduce_mean(tf.nn.nce_loss(nce_w, nce_b, context, tf.nn.embedding_lookup(emb, centre), 4, vocab))
    train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    normed = tf.nn.l2_normalize(emb, 1)
    similarity = tf.matmul(normed, normed, transpose_b=True)
    rng = np.random.default_rng(3)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(300):
            c, ctx = _skipgram_pairs(rng, 32)
            s.run(train, {centre: c, context: ctx})
        sim = s.run(similarity)
    topic = np.arange(vocab) // 5
    for w in range(vocab):
        order = [v for v in np.argsort(-sim[w]) if v != w]
        assert topic[order[0]] == topic[w], (w, order, sim[w])


@pytest.mark.program
def test_word2vec_steps_are_deterministic_sparse_and_in_place_on_every_path():
    """A seeded program draws the same classes in process and on every Dask scheduler, and its
    updates write only the looked-up rows of the committed arrays, in place."""
    from dflow.storage import patch

    vocab, dim = 5000, 8
    labels = tf.constant([[1], [2]], tf.int64)
    sampled = tf.nn.log_uniform_candidate_sampler(labels, 1, 5, True, 1000, seed=3)[0]
    unigram = tf.nn.fixed_unigram_candidate_sampler(labels, 1, 4, False, 6, unigrams=[1, 2, 3, 4, 5, 6], seed=4)[0]
    emb = tf.Variable(tf.random_uniform([vocab, dim], -1.0, 1.0, seed=1))
    nce_w = tf.Variable(tf.zeros([vocab, dim]))
    nce_b = tf.Variable(tf.zeros([vocab]))
    centre = tf.placeholder(tf.int32, [4])
    context = tf.placeholder(tf.int64, [4, 1])
    loss = tf.reduce_sum(tf.nn.nce_loss(nce_w, nce_b, context, tf.nn.embedding_lookup(emb, centre), 6, vocab))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as s:
        # the draws of a graph's first two runs (the in-process path's, from the samplers' stream:
        # the random ops' counter-based bits keyed by the run; the second run is drawn ahead with
        # the next ones; every mode must agree)
        assert [x.tolist() for x in s.run([sampled, unigram])] == [[1, 182, 9, 0, 415], [5, 4, 5, 0]]
        assert [x.tolist() for x in s.run([sampled, unigram])] == [[0, 30, 24, 310, 770], [2, 5, 1, 4]]
        s.run(tf.global_variables_initializer())
        before = s.run(emb)
        held = s.variables.values[emb.op.name]
        patch.reset_counters()
        for _ in range(3):
            s.run(train, {centre: [10, 20, 20, 30], context: [[1], [2], [3], [4]]})
        assert s.variables.values[emb.op.name] is held
        assert patch.TOUCHED["bytes_copied"] == 0
        after = s.run(emb)
    changed = np.nonzero((after != before).any(axis=1))[0].tolist()
    assert set(changed) <= {10, 20, 30} and changed


@pytest.mark.parametrize("what", ["max_norm", "sparse_mean", "sparse_sqrtn_weighted", "partitioned_div"])
def test_embedding_gradients_match_differences(what):
    params0 = np.random.default_rng(4).standard_normal((6, 3))
    params = tf.placeholder(tf.float64, [6, 3])
    sp = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1]], tf.constant([1, 4, 4, 5], tf.int64), [2, 2])
    w = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1]], tf.constant([2.0, 0.5, 1.0, 3.0], tf.float64), [2, 2])
    if what == "max_norm":
        out = tf.nn.embedding_lookup(params, [[0, 2], [2, 5]], max_norm=1.5)
    elif what == "sparse_mean":
        out = tf.nn.embedding_lookup_sparse(params, sp, None, combiner="mean")
    elif what == "sparse_sqrtn_weighted":
        out = tf.nn.embedding_lookup_sparse(params, sp, w, combiner="sqrtn")
    else:
        out = tf.nn.embedding_lookup([params[:2], params[2:4], params[4:]], [5, 0, 3, 3], partition_strategy="div")
    with tf.Session():
        err = tf.test.compute_gradient_error(params, [6, 3], out, out.shape.as_list(), x_init_value=params0)
    assert err < 1e-6


def test_all_candidate_sampler_matches_tf1():
    # TF1 (tf.compat.v1 2.21): sampled [0 1 2 3 4], expected counts all 1.0, shapes (5,), (3, 2), (5,)
    with tf.Graph().as_default():
        tc = tf.constant([[1, 2], [3, 4], [0, 0]], tf.int64)
        s, t, e = tf.random.all_candidate_sampler(tc, 2, 5, True)
        assert s.dtype == tf.int64 and t.shape.as_list() == [3, 2] and e.shape.as_list() == [5]
        sv, tv, ev = run_modes([s, t, e])
    assert sv.tolist() == [0, 1, 2, 3, 4] and tv.tolist() == [[1.0, 1.0]] * 3 and ev.tolist() == [1.0] * 5
    with pytest.raises(TypeError):
        tf.random.all_candidate_sampler(tf.constant([[1]], tf.int32), 1, 2, True)
