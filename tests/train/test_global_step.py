"""The global step: created once, found again (`get_or_create_global_step` twice returns the same
variable, issue #13), counted by optimizers."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf


def test_get_or_create_global_step_twice_returns_the_same_variable():
    first = tf.train.get_or_create_global_step()
    second = tf.train.get_or_create_global_step()
    assert second is first
    assert tf.train.get_global_step() is first
    assert first.name == "global_step:0" and first.dtype == tf.int64
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [first]
    with pytest.raises(ValueError, match="already exists"):
        tf.train.create_global_step()


def test_get_or_create_global_step_per_graph():
    g = tf.Graph()
    a = tf.train.get_or_create_global_step()
    b = tf.train.get_or_create_global_step(g)
    assert a is not b and b.graph is g and tf.train.get_or_create_global_step(g) is b


@pytest.mark.program
def test_global_step_counts_training_steps():
    w = tf.Variable(1.0)
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(w * w, global_step=tf.train.get_or_create_global_step())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        assert tf.train.global_step(sess, step) == 3
        np.testing.assert_allclose(sess.run(w), 0.8 ** 3, rtol=1e-6)
