"""tf.contrib.opt: AdamW / MomentumW (decoupled weight decay), LazyAdam, MovingAverageOptimizer,
against numpy written from TF 1.15's update rules."""

import numpy as np
import pytest

import dflow as tf

LR, B1, B2, EPS = 0.1, 0.9, 0.999, 1e-8


def _adam_ref(w, grads, wd=0.0, lr=LR):
    """numpy AdamW (wd = 0: Adam) over the gradient function `grads(w)`, 3 steps."""
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t in range(1, 4):
        g = grads(w)
        w = w - wd * w
        m, v = B1 * m + (1 - B1) * g, B2 * v + (1 - B2) * g * g
        w = w - lr * np.sqrt(1 - B2 ** t) / (1 - B1 ** t) * m / (np.sqrt(v) + EPS)
    return w


def test_adamw_decays_then_steps_as_tf_and_only_decay_var_list():
    w0 = np.array([1.0, -2.0, 3.0], np.float32)
    target = np.array([0.5, 0.5, 0.5], np.float32)
    with tf.Graph().as_default():
        w, u = tf.Variable(w0, name="w"), tf.Variable(w0, name="u")
        loss = tf.reduce_sum(tf.square(w - target)) + tf.reduce_sum(tf.square(u - target))
        opt = tf.contrib.opt.AdamWOptimizer(weight_decay=0.01, learning_rate=LR)
        step = opt.minimize(loss, decay_var_list=[w])
        assert sorted(opt.get_slot_names()) == ["m", "v"] and opt.get_name() == "AdamW"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(step)
            got_w, got_u = sess.run([w, u])
    grad = lambda x: 2 * (x - target)  # noqa: E731
    np.testing.assert_allclose(got_w, _adam_ref(w0.astype(np.float64), grad, wd=0.01), rtol=1e-5)
    np.testing.assert_allclose(got_u, _adam_ref(w0.astype(np.float64), grad), rtol=1e-5)  # not in the list


def test_momentumw_and_sparse_decay_touch_only_the_gradients_rows():
    table0 = np.arange(8, dtype=np.float32).reshape(4, 2)
    with tf.Graph().as_default():
        table = tf.Variable(table0)
        loss = tf.reduce_sum(tf.nn.embedding_lookup(table, [0, 2]))
        step = tf.contrib.opt.MomentumWOptimizer(weight_decay=0.1, learning_rate=0.5, momentum=0.9).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            got = sess.run(table)
    want = table0.copy()
    want[[0, 2]] = want[[0, 2]] * 0.9 - 0.5  # decayed by 0.1 * var, then lr * (momentum accum = grad = 1)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_lazy_adam_leaves_the_moments_of_untouched_rows():
    table0 = np.ones((4, 2), np.float32)
    with tf.Graph().as_default():
        table = tf.Variable(table0)
        ids = tf.placeholder(tf.int32, [None])
        loss = tf.reduce_sum(tf.nn.embedding_lookup(table, ids))
        lazy = tf.contrib.opt.LazyAdamOptimizer(LR)
        step = lazy.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step, {ids: [0, 1]})
            sess.run(step, {ids: [1, 2]})
            got, m = sess.run([table, lazy.get_slot(table, "m")])
    # row 0: one step at t=1; row 1: two steps (t=1, t=2); row 2: one step at t=2 with fresh moments;
    # row 3 never moves; the moments of rows not in a gradient do not decay
    def row(steps):
        w, mm, vv = 1.0, 0.0, 0.0
        for t in steps:
            mm, vv = B1 * mm + (1 - B1), B2 * vv + (1 - B2)
            w -= LR * np.sqrt(1 - B2 ** t) / (1 - B1 ** t) * mm / (np.sqrt(vv) + EPS)
        return w, mm
    for r, steps in enumerate(([1], [1, 2], [2], [])):
        w, mm = row(steps)
        np.testing.assert_allclose(got[r], [w, w], rtol=1e-5)
        np.testing.assert_allclose(m[r], [mm, mm], rtol=1e-5)


def test_moving_average_optimizer_and_its_swapping_saver(tmp_path):
    with tf.Graph().as_default():
        w = tf.Variable(np.array([4.0], np.float32), name="w")
        opt = tf.contrib.opt.MovingAverageOptimizer(tf.train.GradientDescentOptimizer(0.5), average_decay=0.5)
        step = opt.minimize(tf.reduce_sum(tf.square(w)))  # grad 2w: w halves... w -= 0.5 * 2w = 0
        saver = opt.swapping_saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)  # w: 4 -> 0; average: 0.5 * 4 + 0.5 * 0 = 2
            assert sess.run(w)[0] == 0.0
            path = saver.save(sess, str(tmp_path / "model.ckpt"))
    with tf.Graph().as_default():  # evaluation: a plain Saver restores the average into w
        w = tf.Variable(np.array([9.0], np.float32), name="w")
        with tf.Session() as sess:
            tf.train.Saver([w]).restore(sess, path)
            assert sess.run(w)[0] == 2.0
    with tf.Graph().as_default():
        opt = tf.contrib.opt.MovingAverageOptimizer(tf.train.GradientDescentOptimizer(0.5))
        with pytest.raises(RuntimeError, match="apply_gradients or minimize"):
            opt.swapping_saver()
