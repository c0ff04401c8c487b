"""A tf.layers CNN fed one batch three ways: a numpy array in memory, a dask array chunked along
the batch axis, and a Zarr array on disk chunked along the batch axis; on the default session and on
explicit sync, threads and processes schedulers. The loss, the gradients and the weights after a
training step must agree: convolutions and pools are blockwise over N, and the filter gradient sums
the chunks' partial gradients."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
import zarr

import dflow as tf

N, H, W, C, K = 24, 10, 10, 2, 3


def _data():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((N, H, W, C)).astype(np.float32)
    y = rng.integers(0, K, N).astype(np.int64)
    return x, y


def _model():
    """The graph and what each run fetches; initializers seeded so that every graph is the same."""
    tf.set_random_seed(3)
    images = tf.placeholder(tf.float32, [None, H, W, C], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    net = tf.layers.conv2d(images, 4, 3, padding="same", activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, 2, 2)
    net = tf.layers.conv2d(net, 6, 3, strides=2, padding="valid", activation=tf.nn.relu)
    net = tf.layers.flatten(net)
    logits = tf.layers.dense(net, K)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    grads = tf.gradients(loss, tf.trainable_variables())
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return images, labels, loss, grads, train


def _step(session_kwargs, feed_x, y):
    """(loss, gradients, weights after one step) of the model fed `feed_x`."""
    with tf.Graph().as_default():
        images, labels, loss, grads, train = _model()
        with tf.Session(**session_kwargs) as sess:
            sess.run(tf.global_variables_initializer())
            lv, gv = sess.run([loss, grads], {images: feed_x, labels: y})
            sess.run(train, {images: feed_x, labels: y})
            wv = sess.run(tf.trainable_variables())
    return lv, gv, wv


@pytest.fixture(scope="module")
def reference():
    x, y = _data()
    return _step({}, x, y)


def _assert_close(got, want):
    lv, gv, wv = got
    np.testing.assert_allclose(lv, want[0], rtol=1e-5)
    for g, r in zip(gv, want[1]):
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-6)
    for w, r in zip(wv, want[2]):
        np.testing.assert_allclose(w, r, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("scheduler", ["sync", "threads", "processes"])
@pytest.mark.parametrize("feed", ["numpy", "dask", "zarr"])
def test_cnn_step_same_on_chunked_feeds(reference, scheduler, feed, tmp_path):
    x, y = _data()
    if feed == "dask":
        feed_x = da.from_array(x, chunks=(5, H, W, C))  # ragged last chunk on purpose
    elif feed == "zarr":
        feed_x = zarr.open_array(str(tmp_path / "x.zarr"), mode="w", shape=x.shape, chunks=(8, H, W, C),
                                 dtype="float32")
        feed_x[...] = x
    else:
        feed_x = x
    _assert_close(_step({"scheduler": scheduler, "chunks": (8, H, W, C)}, feed_x, y), reference)


def test_cnn_matches_numpy_forward(reference):
    """The in-memory reference itself against a numpy forward pass of the same weights."""
    x, y = _data()
    with tf.Graph().as_default():
        images, labels, loss, _, _ = _model()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            k1, b1, k2, b2, kd, bd = sess.run(tf.trainable_variables())
            got = sess.run(loss, {images: x, labels: y})

    def conv(a, k, stride, pad):
        kh, kw = k.shape[:2]
        if pad:
            a = np.pad(a, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
        oh, ow = (a.shape[1] - kh) // stride + 1, (a.shape[2] - kw) // stride + 1
        out = np.zeros((a.shape[0], oh, ow, k.shape[3]), np.float64)
        for i in range(oh):
            for j in range(ow):
                patch = a[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
                out[:, i, j, :] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
        return out

    h = np.maximum(conv(x, k1, 1, True) + b1, 0)
    h = h.reshape(N, H // 2, 2, W // 2, 2, -1).max(axis=(2, 4))
    h = np.maximum(conv(h, k2, 2, False) + b2, 0)
    logits = h.reshape(N, -1) @ kd + bd
    logits -= logits.max(1, keepdims=True)
    want = np.mean(np.log(np.exp(logits).sum(1)) - logits[np.arange(N), y])
    np.testing.assert_allclose(got, want, rtol=1e-5)
