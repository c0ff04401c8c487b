"""A tutorial-style TF1 program: a small CNN written with tf.layers (conv2d, batch_normalization
with the UPDATE_OPS idiom, max_pooling2d, dropout with a fed `training` flag, dense) learns to tell
images whose left half is bright from images whose right half is bright, on every program mode
(in process and forced through Dask on sync, threads and processes)."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf


def _images(n, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 2, n)
    x = rng.rand(n, 8, 8, 1).astype(np.float32) * 0.8
    x[labels == 0, :, :4] += 0.5
    x[labels == 1, :, 4:] += 0.5
    return x, labels.astype(np.int64)


@pytest.mark.program
def test_small_cnn_learns_a_separable_image_set():
    tf.set_random_seed(7)
    train_x, train_y = _images(128, 0)
    test_x, test_y = _images(64, 1)
    images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    training = tf.placeholder_with_default(False, [], name="training")

    net = tf.layers.conv2d(images, 4, 3, padding="same", activation=tf.nn.relu)
    # momentum 0.8: after 16 steps the moving statistics (used at test time) have caught up
    net = tf.layers.batch_normalization(net, momentum=0.8, training=training)
    net = tf.layers.max_pooling2d(net, 2, 2)
    net = tf.layers.flatten(net)
    net = tf.layers.dropout(net, rate=0.25, training=training)
    logits = tf.layers.dense(net, 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.AdamOptimizer(0.05).minimize(loss)

    assert [v.name for v in tf.trainable_variables()] == [
        "conv2d/kernel:0", "conv2d/bias:0", "batch_normalization/gamma:0", "batch_normalization/beta:0",
        "dense/kernel:0", "dense/bias:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(accuracy, {images: test_x, labels: test_y})
        for step in range(16):
            batch = slice((step % 4) * 32, (step % 4 + 1) * 32)
            sess.run(train_op, {images: train_x[batch], labels: train_y[batch], training: True})
        acc, moving_mean = sess.run([accuracy, tf.global_variables()[4]], {images: test_x, labels: test_y})
    assert acc > 0.95, (before, acc)
    assert np.all(moving_mean != 0)  # the UPDATE_OPS ran with the training steps


@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_cnn_on_a_chunked_dask_batch_gives_the_in_memory_loss(mode, sess_factory):
    import dask.array as da

    rng = np.random.RandomState(3)
    x0, y0 = _images(48, 2)
    images = tf.placeholder(tf.float32, [None, 8, 8, 1])
    labels = tf.placeholder(tf.int64, [None])
    init = {"kernel_initializer": tf.constant_initializer(rng.randn(3, 3, 1, 4).astype(np.float32) * 0.3)}
    net = tf.layers.conv2d(images, 4, 3, padding="same", activation=tf.nn.relu, **init)
    net = tf.layers.batch_normalization(net, training=True)
    net = tf.layers.flatten(tf.layers.max_pooling2d(net, 2, 2))
    logits = tf.layers.dense(net, 2, kernel_initializer=tf.constant_initializer(rng.randn(64, 2) * 0.1))
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    grads = tf.gradients(loss, tf.trainable_variables())
    fetches = [loss] + grads + tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with sess_factory("eager") as s:
        s.run(tf.global_variables_initializer())
        want = s.run(fetches, {images: x0, labels: y0})
    with sess_factory(mode) as s:
        s.run(tf.global_variables_initializer())
        got = s.run(fetches, {images: da.from_array(x0, chunks=(16, 8, 8, 1)), labels: y0})
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5)  # float32 sums in another order
