"""multinomial / categorical, random_shuffle, random_crop; tf.random and tf.initializers."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


def test_multinomial_frequencies_seeds_and_schedulers():
    tf.reset_default_graph()
    tf.set_random_seed(5)
    with np.errstate(divide="ignore"):
        logits = tf.constant(np.log([[0.1, 0.6, 0.3], [0.5, 0.0, 0.5]]), tf.float32)
    s = tf.multinomial(logits, 4000)
    c = tf.random.categorical(logits, 3, dtype=tf.int32)
    got, cat = run_modes([s, c])  # identical draws on every scheduler (random_ops' counter-based stream)
    assert got.shape == (2, 4000) and got.dtype == np.int64 and cat.dtype == np.int32 and cat.shape == (2, 3)
    np.testing.assert_allclose(np.bincount(got[0], minlength=3) / 4000, [0.1, 0.6, 0.3], atol=0.03)
    assert not np.any(got[1] == 1)  # a -inf logit is never drawn
    with tf.Session() as sess:
        first, second = sess.run(s), sess.run(s)
    assert not np.array_equal(first, second)  # a new draw per run, as TF1


def test_shuffle_and_crop():
    tf.reset_default_graph()
    x = tf.reshape(tf.range(20), [4, 5])
    sh = tf.random.shuffle(x, seed=1)
    cr = tf.random_crop(x, [2, 3], seed=2)
    a, b = run_modes([sh, cr])
    assert sorted(a[:, 0].tolist()) == [0, 5, 10, 15] and np.all(np.diff(a, axis=1) == 1)
    r, c = divmod(int(b[0, 0]), 5)
    np.testing.assert_array_equal(b, np.arange(20).reshape(4, 5)[r:r + 2, c:c + 3])


def test_namespaces():
    assert tf.random.normal is tf.random_normal and tf.random.uniform is tf.random_uniform
    assert tf.random.set_random_seed is tf.set_random_seed and tf.random.multinomial is tf.multinomial
    assert tf.initializers.zeros is tf.zeros_initializer and tf.initializers.orthogonal is tf.orthogonal_initializer
    assert tf.initializers.global_variables is tf.global_variables_initializer
    with pytest.raises(AttributeError, match="tf1_coverage"):
        tf.random.stateless_parameterized_truncated_normal  # noqa: B018


def test_initializers():
    tf.reset_default_graph()
    w = tf.get_variable("w", [6, 4], initializer=tf.orthogonal_initializer(seed=1))
    v = tf.get_variable("v", [2, 2, 6], initializer=tf.initializers.orthogonal(gain=2.0, seed=1))
    i = tf.get_variable("i", [3, 3], initializer=tf.initializers.identity(gain=0.5))
    u = tf.get_variable("u", [50, 40], initializer=tf.uniform_unit_scaling_initializer(factor=2.0, seed=3))
    with tf.Session() as s:
        s.run(tf.initializers.global_variables())
        W, V, I, U = s.run([w, v, i, u])
    np.testing.assert_allclose(W.T @ W, np.eye(4), atol=1e-5)
    flat = V.reshape(4, 6)
    np.testing.assert_allclose(flat @ flat.T, 4 * np.eye(4), atol=1e-4)
    np.testing.assert_array_equal(I, 0.5 * np.eye(3))
    assert np.abs(U).max() <= 2.0 * np.sqrt(3.0 / 50) and np.abs(U).max() > 0.9 * 2.0 * np.sqrt(3.0 / 50)
    with pytest.raises(ValueError, match="at least two-dimensional"):
        tf.orthogonal_initializer()([3])
    with pytest.raises(ValueError, match="2D"):
        tf.initializers.identity()([3, 3, 3])


@pytest.mark.program
def test_char_rnn_style_sampling_loop():
    """Sampling text one step at a time, each step's multinomial draw fed back as the next input."""
    vocab = 5
    tf.reset_default_graph()
    tf.set_random_seed(11)
    prev = tf.placeholder(tf.int32, [1], name="prev")
    state_in = tf.placeholder(tf.float32, [1, 8], name="state")
    emb = tf.get_variable("emb", [vocab, 8], initializer=tf.random_normal_initializer(seed=1))
    w = tf.get_variable("w", [8, vocab], initializer=tf.orthogonal_initializer(seed=2))
    state = tf.tanh(tf.nn.embedding_lookup(emb, prev) + 0.5 * state_in)
    logits = tf.matmul(state, w) / 0.5
    sample = tf.squeeze(tf.multinomial(logits, 1), axis=[1])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        s, out = np.zeros((1, 8), np.float32), [0]
        for _ in range(30):
            nxt, s = sess.run([sample, state], {prev: [out[-1]], state_in: s})
            out.append(int(nxt[0]))
    assert len(out) == 31 and all(0 <= c < vocab for c in out) and len(set(out)) > 1
