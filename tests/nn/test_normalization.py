"""tf.nn's normalization and classification helpers of issue 13: local_response_normalization,
fused_batch_norm, in_top_k, crelu (and leaky_relu's integer input), against numpy references,
TF's figures and central differences, on chunked batches on every mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf
from tests.conftest import ALL_MODES

SETTINGS = settings(max_examples=20, deadline=None)
XB = np.random.RandomState(0).randn(2, 3, 4, 5).astype(np.float32)  # the input of the TF figures below


def run(fetches, feed=None):
    with tf.Session() as s:
        return s.run(fetches, feed)


def grad_error(build, x0, delta=1e-6):
    p = tf.placeholder(tf.float64, x0.shape)
    y = build(p)
    with tf.Session():
        return tf.test.compute_gradient_error(p, x0.shape, y, y.shape.as_list(), x_init_value=x0, delta=delta)


# ---- local response normalization ----------------------------------------------------------------


def ref_lrn(x, r, bias, alpha, beta):
    out = np.empty_like(x)
    depth = x.shape[-1]
    for d in range(depth):
        sqr_sum = (x[..., max(d - r, 0):d + r + 1] ** 2).sum(-1)
        out[..., d] = x[..., d] / (bias + alpha * sqr_sum) ** beta
    return out


@SETTINGS
@given(c=st.integers(1, 7), r=st.integers(0, 4), bias=st.floats(0.5, 2), alpha=st.floats(0.01, 1),
       beta=st.floats(0.25, 1), seed=st.integers(0, 1000))
def test_lrn_matches_reference(c, r, bias, alpha, beta, seed):
    x = np.random.default_rng(seed).standard_normal((2, 2, 3, c))
    y = tf.nn.local_response_normalization(x, depth_radius=r, bias=bias, alpha=alpha, beta=beta)
    assert y.shape.as_list() == [2, 2, 3, c]
    np.testing.assert_allclose(run(y), ref_lrn(x, r, bias, alpha, beta), rtol=1e-10)


def test_lrn_tf_figure_gradient_and_unknown_depth():
    # TensorFlow 2.21.0: tf.nn.lrn(XB, depth_radius=2, bias=1.0, alpha=0.5, beta=0.75)[0, 0, 0]
    y = tf.nn.lrn(XB, depth_radius=2, bias=1.0, alpha=0.5, beta=0.75)
    np.testing.assert_allclose(run(y)[0, 0, 0], [0.75235248, 0.10954542, 0.21881698, 0.59852302, 0.50402325],
                               rtol=1e-5)
    x0 = np.random.default_rng(1).standard_normal((1, 2, 2, 6))
    assert grad_error(lambda p: tf.nn.lrn(p, 2, 1.0, 0.3, 0.75), x0) < 1e-7
    p = tf.placeholder(tf.float32, [None, 3, 4, None])
    np.testing.assert_allclose(run(tf.nn.lrn(p, 1), {p: XB}), ref_lrn(XB, 1, 1, 1, 0.5), rtol=1e-5)
    with pytest.raises(ValueError, match="4-dimensional"):
        tf.nn.lrn(np.zeros((2, 3), np.float32))


# ---- fused batch norm ------------------------------------------------------------------------------


def test_fused_batch_norm_training_tf_figures():
    # TensorFlow 2.21.0: batch_var of fused_batch_norm(XB, ones, zeros) is the unbiased variance
    y, m, v = tf.nn.fused_batch_norm(XB, np.ones(5, np.float32), np.zeros(5, np.float32))
    ry, rm, rv = run([y, m, v])
    np.testing.assert_allclose(rv, [1.46322656, 0.91878968, 0.75633186, 1.68984091, 0.76635516], rtol=1e-5)
    np.testing.assert_allclose(rv, XB.var((0, 1, 2), ddof=1), rtol=1e-5)
    np.testing.assert_allclose(rm, XB.mean((0, 1, 2)), rtol=1e-5, atol=1e-6)
    # y is normalized with the biased variance
    np.testing.assert_allclose(ry, (XB - XB.mean((0, 1, 2))) / np.sqrt(XB.var((0, 1, 2)) + 1e-3), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_fused_batch_norm_training_and_inference(fmt):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4, 2, 5)) * 2 + 1
    axes, bshape = ((0, 1, 2), (1, 1, 1, -1)) if fmt == "NHWC" else ((0, 2, 3), (1, -1, 1, 1))
    c = x.shape[3] if fmt == "NHWC" else x.shape[1]
    scale, offset = rng.standard_normal(c), rng.standard_normal(c)
    y, m, v = tf.nn.fused_batch_norm(x, scale, offset, epsilon=1e-8, data_format=fmt)  # eps raised to 1.001e-5
    mean, var = rng.standard_normal(c), rng.random(c) + 0.5
    yi, mi, vi = tf.nn.fused_batch_norm(x, scale, offset, mean=mean, variance=var, data_format=fmt, is_training=False)
    ry, rm, rv, ryi, rmi, rvi = run([y, m, v, yi, mi, vi])
    n = x.size / c
    want = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1.001e-5)
    np.testing.assert_allclose(ry, want * scale.reshape(bshape) + offset.reshape(bshape), rtol=1e-9)
    np.testing.assert_allclose(rv, x.var(axes) * n / (n - 1), rtol=1e-12)
    np.testing.assert_allclose(rm, x.mean(axes), rtol=1e-12)
    want_i = (x - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + 1e-3) * scale.reshape(bshape)
    np.testing.assert_allclose(ryi, want_i + offset.reshape(bshape), rtol=1e-9)
    np.testing.assert_array_equal(rmi, mean)
    np.testing.assert_array_equal(rvi, var)


def test_fused_batch_norm_gradients():
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((2, 2, 3, 2))
    sc, of = np.array([1.5, -0.7]), np.array([0.2, 0.3])
    for training in (True, False):
        kw = {} if training else dict(mean=np.array([0.1, -0.2]), variance=np.array([1.2, 0.8]), is_training=False)
        assert grad_error(lambda p, kw=kw: tf.nn.fused_batch_norm(p, sc, of, **kw)[0], x0) < 1e-6
        assert grad_error(lambda p, kw=kw: tf.nn.fused_batch_norm(x0, p, of, **kw)[0], sc) < 1e-6
        assert grad_error(lambda p, kw=kw: tf.nn.fused_batch_norm(x0, sc, p, **kw)[0], of) < 1e-6
    # the statistics outputs carry no gradient (TF1's FusedBatchNormGrad ignores theirs)
    x = tf.constant(x0)
    _, m, v = tf.nn.fused_batch_norm(x, sc, of)
    assert tf.gradients(m + v, x) == [None]


def test_fused_batch_norm_float16_unknown_batch_and_errors():
    p = tf.placeholder(tf.float16, [None, 2, 2, 3])
    y, m, v = tf.nn.fused_batch_norm(p, np.ones(3, np.float32), np.zeros(3, np.float32))
    assert y.dtype == tf.float16 and y.shape.as_list() == [None, 2, 2, 3] and m.dtype == tf.float32
    x16 = np.random.default_rng(4).standard_normal((4, 2, 2, 3)).astype(np.float16)
    ry, rv = run([y, v], {p: x16})
    x32 = x16.astype(np.float32)
    np.testing.assert_allclose(ry, (x32 - x32.mean((0, 1, 2))) / np.sqrt(x32.var((0, 1, 2)) + 1e-3), atol=5e-3)
    np.testing.assert_allclose(rv, x32.var((0, 1, 2), ddof=1), rtol=1e-5)
    with pytest.raises(ValueError, match="must be None if is_training"):
        tf.nn.fused_batch_norm(x16, np.ones(3), np.zeros(3), mean=np.zeros(3))
    with pytest.raises(ValueError, match="needs 'mean' and 'variance'"):
        tf.nn.fused_batch_norm(x16, np.ones(3), np.zeros(3), is_training=False)
    with pytest.raises(ValueError, match="4-dimensional"):
        tf.nn.fused_batch_norm(np.zeros((2, 3), np.float32), np.ones(3), np.zeros(3))
    with pytest.raises(TypeError):
        tf.nn.fused_batch_norm(np.zeros((1, 1, 1, 3), np.int32), np.ones(3), np.zeros(3))


# ---- in_top_k, crelu, leaky_relu -------------------------------------------------------------------


def ref_in_top_k(pred, targets, k):
    out = []
    for row, t in zip(pred, targets):
        ok = 0 <= t < len(row) and np.all(np.isfinite(row))
        out.append(bool(ok and (row > row[t]).sum() < k))
    return np.array(out)


def test_in_top_k_tf_figures():
    # TensorFlow 2.21.0: ties with the k-th largest count as in; a row with nan/inf, or a target out
    # of range, gives False
    pred = np.array([[0.1, 0.3, 0.3, 0.2], [0.1, np.nan, 0.5, 0.2], [1, 2, 3, 4], [1, np.inf, 2, 3]], np.float32)
    got = run([tf.nn.in_top_k(pred, [1, 2, 3, 3], 1), tf.nn.in_top_k(pred, [1, 2, 3, 3], 2),
               tf.nn.in_top_k(pred, [2, 0, 0, 0], 1), tf.nn.in_top_k(pred, [5, 0, 0, 0], 2)])
    assert [g.tolist() for g in got] == [[True, False, True, False], [True, False, True, False],
                                         [True, False, False, False], [False, False, False, False]]


@SETTINGS
@given(b=st.integers(1, 5), c=st.integers(1, 6), k=st.integers(0, 7), seed=st.integers(0, 1000))
def test_in_top_k_matches_reference(b, c, k, seed):
    rng = np.random.default_rng(seed)
    pred = rng.integers(0, 3, (b, c)).astype(np.float32)  # many ties
    targets = rng.integers(0, c, b).astype(np.int64)
    p = tf.placeholder(tf.float32, [None, None])
    t = tf.placeholder(tf.int64, [None])
    y = tf.nn.in_top_k(p, t, tf.constant(k))
    assert y.dtype == tf.bool
    np.testing.assert_array_equal(run(y, {p: pred, t: targets}), ref_in_top_k(pred, targets, k))


def test_crelu_and_leaky_relu():
    x = np.array([[1.0, -2.0, 0.0]], np.float32)
    c0 = tf.nn.crelu(x)
    c1 = tf.nn.crelu(x, axis=0)
    assert c0.shape.as_list() == [1, 6] and c1.shape.as_list() == [2, 3]
    r0, r1 = run([c0, c1])
    np.testing.assert_array_equal(r0, [[1, 0, 0, 0, 2, 0]])  # TF 2.21.0 gives [[1, 0, 0, 2]] for [[1, -2]]
    np.testing.assert_array_equal(r1, [[1, 0, 0], [0, 2, 0]])
    assert grad_error(tf.nn.crelu, np.array([[0.5, -1.5, 2.0]])) < 1e-8
    li = tf.nn.leaky_relu(tf.constant([1, -2]))
    assert li.dtype == tf.float32  # TF1 casts integer features to float32
    np.testing.assert_allclose(run(li), [1.0, -0.4], rtol=1e-6)


# ---- chunked along N, on every mode ----------------------------------------------------------------


@pytest.mark.parametrize("mode", ALL_MODES)
def test_chunked_batch_on_every_mode(mode, sess_factory):
    x0 = np.random.default_rng(6).standard_normal((6, 3, 4, 5)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3, 4, 5])
    scale = tf.constant(np.linspace(0.5, 1.5, 5).astype(np.float32))
    y, m, v = tf.nn.fused_batch_norm(x, scale, tf.zeros([5]))
    z = tf.nn.lrn(y, 2, 1.0, 0.1, 0.75)
    (g,) = tf.gradients(tf.reduce_sum(z * x), x)
    hits = tf.nn.in_top_k(tf.reshape(z, [6, -1]), tf.zeros([6], tf.int32), 5)
    with sess_factory("eager") as s:
        want = s.run([z, m, v, g, hits], {x: x0})
    with sess_factory(mode, chunks=(2, 3, 2, 5)) as s:
        got = s.run([z, m, v, g, hits], {x: x0})
    for w, r in zip(want, got):
        np.testing.assert_allclose(r, w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(want[2], x0.var((0, 1, 2), ddof=1), rtol=1e-4)


# ---- a whole TF1-style program: pooled features, batch norm, in_top_k accuracy ---------------------


@pytest.mark.program
def test_pooled_classifier_program_trains():
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, 64)
    images = rng.standard_normal((64, 8, 8, 1)).astype(np.float32) * 0.5
    images[labels == 1, :4, :4, :] += 1.5  # class 1: a bright top-left quadrant
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    y = tf.placeholder(tf.int32, [None])
    h = tf.nn.max_pool(tf.image.per_image_standardization(x), [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.nn.avg_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")  # [None, 2, 2, 1]
    h, _, _ = tf.nn.fused_batch_norm(h, tf.ones([1]), tf.zeros([1]))
    w = tf.Variable(tf.zeros([4, 2]))
    logits = tf.matmul(tf.reshape(tf.nn.lrn(h, 0), [-1, 4]), w)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    acc = tf.reduce_mean(tf.cast(tf.nn.in_top_k(logits, y, 1), tf.float32))
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: images, y: labels})
        for _ in range(20):
            sess.run(step, {x: images, y: labels})
        last, accuracy = sess.run([loss, acc], {x: images, y: labels})
    assert last < first and accuracy > 0.9


def test_pool_aliases_and_global_normalization():
    x = np.random.default_rng(11).standard_normal((2, 6, 6, 3))
    want = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    got = [tf.nn.max_pool2d(x, 2, 2, "SAME"), tf.nn.max_pool_v2(x, 2, 2, "SAME"),
           tf.nn.avg_pool_v2(x[:, 0], [3], [2], "VALID"), tf.nn.avg_pool2d(x, 3, 1, "SAME")]
    m, v, beta, gamma = (np.random.default_rng(12).random(3) + 0.5 for _ in range(4))
    bn = [tf.nn.batch_norm_with_global_normalization(x, m, v, beta, gamma, 1e-3, flag) for flag in (True, False)]
    r = run([want] + got + bn)
    np.testing.assert_array_equal(r[1], r[0])
    np.testing.assert_array_equal(r[2], r[0])
    np.testing.assert_allclose(r[3], run(tf.nn.avg_pool1d(x[:, 0], 3, 2, "VALID")))
    np.testing.assert_allclose(r[4], run(tf.nn.avg_pool(x, 3, 1, "SAME")))
    np.testing.assert_allclose(r[5], (x - m) / np.sqrt(v + 1e-3) * gamma + beta, rtol=1e-6)
    np.testing.assert_allclose(r[6], (x - m) / np.sqrt(v + 1e-3) + beta, rtol=1e-6)
