"""Variable constraints (TF1's `constraint=` of Variable, get_variable, variable_scope and the layers'
`kernel_constraint`/`bias_constraint`): an optimizer projects a constrained variable right after
its update, in the same run, as TF1's optimizers do."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf


def _max_norm(limit):
    """A column max-norm projection, as users write it (a composite of registered ops)."""
    def project(w):
        norms = tf.sqrt(tf.reduce_sum(tf.square(w), axis=0, keepdims=True))
        return w * tf.minimum(1.0, limit / tf.maximum(norms, 1e-12))
    return project


@pytest.mark.program
def test_dense_kernel_constraint_projects_after_each_sgd_step():
    rng = np.random.RandomState(0)
    xv = rng.randn(16, 5).astype(np.float32)
    yv = rng.randn(16, 3).astype(np.float32)
    x = tf.placeholder("float", [None, 5])
    y = tf.placeholder("float", [None, 3])
    out = tf.layers.dense(x, 3, kernel_initializer=tf.constant_initializer(0.3),
                          kernel_constraint=_max_norm(0.5), bias_constraint=lambda b: tf.clip_by_value(b, -0.01, 0.01))
    loss = tf.reduce_mean(tf.square(out - y))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    kernel, bias = tf.trainable_variables()
    assert kernel.constraint is not None and bias.constraint is not None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w, b = np.full((5, 3), 0.3, np.float32), np.zeros(3, np.float32)
        for _ in range(3):
            sess.run(train, {x: xv, y: yv})
            # numpy: the SGD step, then the projection
            err = 2 * (xv @ w + b - yv) / yv.size
            w = w - 0.5 * (xv.T @ err)
            b = np.clip(b - 0.5 * err.sum(0), -0.01, 0.01)
            w = w * np.minimum(1.0, 0.5 / np.sqrt((w * w).sum(0, keepdims=True)))
            got_w, got_b = sess.run([kernel, bias])
            np.testing.assert_allclose(got_w, w, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(got_b, b, rtol=1e-5, atol=1e-7)
        assert np.sqrt((got_w ** 2).sum(0)).max() <= 0.5 + 1e-6


def test_constraint_through_variable_get_variable_and_scope():
    v = tf.Variable([3.0, -4.0], constraint=lambda t: tf.clip_by_value(t, -1.0, 1.0))
    with tf.variable_scope("s", constraint=lambda t: tf.abs(t)):
        u = tf.get_variable("u", initializer=tf.constant([-2.0, 2.0]))
        w = tf.get_variable("w", initializer=tf.constant([-2.0]), constraint=lambda t: t * 0.0)
    loss = tf.reduce_sum(v) + tf.reduce_sum(u) + tf.reduce_sum(w)
    step = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        np.testing.assert_allclose(sess.run(v), [1.0, -1.0])  # [2, -5] clipped
        np.testing.assert_allclose(sess.run(u), [3.0, 1.0])  # |[-3, 1]|
        np.testing.assert_allclose(sess.run(w), [0.0])


def test_a_constraint_must_be_callable():
    with pytest.raises(ValueError, match="constraint"):
        tf.Variable(1.0, constraint=0.5)
