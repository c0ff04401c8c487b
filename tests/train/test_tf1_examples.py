"""Classic TF1 training programs, run with `import dflow as tf`, against figures recorded from
tensorflow.compat.v1 running the same programs on the same data (TensorFlow is not a dependency).

- Fitting y = 5x² + 3 with a model w0·x² + w1·x + w2, loss l2_loss(ŷ − y) + 0.1·l2_loss(w), Adam(0.1)
  ("Effective TensorFlow"): after 1000 steps on fresh random batches w is near [5, 0, 3.5].
- Maximizing the entropy of softmax(logits) with Adam: the distribution becomes uniform.

The ExponentialMovingAverage and exponential_decay examples are in test_optimizers.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
import dflow.nn  # noqa: F401 - tf.nn

# TF1 (tensorflow 2.x compat.v1, graph mode) on the seeded program of `_fit_program`: step -> w after it
TF1_FIT = {
    0: [0.20000000298023224, -0.10000000149011612, 0.4000000059604645],
    1: [0.29966726899147034, -0.0032236501574516296, 0.49979710578918457],
    2: [0.39850929379463196, 0.09359481185674667, 0.5991725325584412],
    9: [1.064656376838684, 0.460928738117218, 1.2775956392288208],
    99: [5.005284309387207, -0.04926005378365517, 5.192015647888184],
    999: [4.992175579071045, 0.00026088691083714366, 3.4790122509002686],
}
TF1_FIT_LOSS = {0: 3.0166555e06, 9: 1.3863964e06, 99: 284.63538, 999: 7.4703736}

# TF1 on `_entropy_program`: step -> softmax(logits) after it, and the entropy fetched with the step
TF1_ENTROPY = {
    0: [0.6636270880699158, 0.04035518690943718, 0.18085941672325134, 0.10969679057598114, 0.005461473949253559],
    2: [0.5698977112770081, 0.051686257123947144, 0.23101909458637238, 0.14040079712867737, 0.00699612358585],
    9: [0.29230061173439026, 0.10108520835638046, 0.3342621624469757, 0.2585380971431732, 0.013813883066177368],
    99: [0.20031334459781647, 0.20033854246139526, 0.19968825578689575, 0.197511225938797, 0.2021486908197403],
}
TF1_ENTROPY_VALUE = {0: 0.9043115, 9: 1.3485985, 99: 1.609409, 299: 1.6094378}


def _fit_program():
    """The Effective-TensorFlow regression, with a fixed initial w (TF1's is glorot-random)."""
    x = tf.placeholder(tf.float32)
    y = tf.placeholder(tf.float32)
    w = tf.get_variable("w", shape=[3, 1], initializer=tf.constant_initializer([[0.1], [-0.2], [0.3]]))
    f = tf.stack([tf.square(x), x, tf.ones_like(x)], 1)
    yhat = tf.squeeze(tf.matmul(f, w), 1)
    loss = tf.nn.l2_loss(yhat - y) + 0.1 * tf.nn.l2_loss(w)
    train_op = tf.train.AdamOptimizer(0.1).minimize(loss)
    return x, y, w, loss, train_op


def _batches(steps):
    rng = np.random.default_rng(0)
    for _ in range(steps):
        xv = rng.uniform(-10.0, 10.0, size=100).astype(np.float32)
        yield xv, 5 * np.square(xv) + 3


def _train_fit(sess, steps):
    x, y, w, loss, train_op = _fit_program()
    sess.run(tf.global_variables_initializer())
    ws, losses = {}, {}
    for i, (xv, yv) in enumerate(_batches(steps)):
        _, losses[i] = sess.run([train_op, loss], {x: xv, y: yv})
        if i in TF1_FIT:
            ws[i] = sess.run(w).ravel()
    return ws, losses


# not on dask-processes: 1000 runs cost ~15 s there (each run ships its task graph to the pool);
# the 300 Adam steps of test_maximizing_entropy_with_adam_reaches_uniform_softmax cover that path.
# On threads only with -m slow (~15 s): the trajectory is sync's, and the ten steps of
# test_fit_quadratic_steps_agree_in_dask_modes check threads and processes against TF1's figures.
@pytest.mark.program(modes=["inprocess", "dask-sync", "dask-threads"], slow={"dask-threads": "1000 runs"})
def test_fit_quadratic_with_adam_and_l2_loss_matches_tf1():
    with tf.Session() as sess:
        ws, losses = _train_fit(sess, 1000)
    for step, want in TF1_FIT.items():
        # float32 sums in another order: the trajectories agree to float32 rounding, amplified by
        # 1000 steps of Adam on x⁴-sized gradients
        np.testing.assert_allclose(ws[step], want, rtol=1e-4, atol=2e-4 if step == 999 else 1e-5)
    for step, want in TF1_FIT_LOSS.items():
        assert losses[step] == pytest.approx(want, rel=1e-4)
    np.testing.assert_allclose(ws[999], [5.0, 0.0, 3.5], atol=0.03)


def test_fit_quadratic_steps_agree_in_dask_modes(mode, sess_factory):
    ws, losses = _train_fit(sess_factory(mode, chunks=32), 10)
    for step in (0, 1, 2, 9):
        np.testing.assert_allclose(ws[step], TF1_FIT[step], rtol=1e-5, atol=1e-6)
    assert losses[9] == pytest.approx(TF1_FIT_LOSS[9], rel=1e-5)


# not on dask-processes, and on threads only with -m slow: 1000 runs, as above
@pytest.mark.program(modes=["inprocess", "dask-sync", "dask-threads"], slow={"dask-threads": "1000 runs"})
def test_fit_quadratic_verbatim_program_converges():
    # The tutorial's code unchanged: random initial w, float64 batches fed to float32 placeholders.
    # The constant term converges slowest (its gradient is tiny next to the x² term's): the tutorial
    # prints [4.9924, 0.0004, 3.4504]; TF1 with seeds 0-5 ends at w0 in [4.980, 4.999], |w1| < 0.001,
    # w2 in [3.05, 4.18], loss < 29 (dflow: w2 in [3.24, 4.03]).
    np.random.seed(7)
    tf.set_random_seed(7)
    x = tf.placeholder(tf.float32)
    y = tf.placeholder(tf.float32)
    w = tf.get_variable("w", shape=[3, 1])
    f = tf.stack([tf.square(x), x, tf.ones_like(x)], 1)
    yhat = tf.squeeze(tf.matmul(f, w), 1)
    loss = tf.nn.l2_loss(yhat - y) + 0.1 * tf.nn.l2_loss(w)
    train_op = tf.train.AdamOptimizer(0.1).minimize(loss)

    def generate_data():
        x_val = np.random.uniform(-10.0, 10.0, size=100)
        y_val = 5 * np.square(x_val) + 3
        return x_val, y_val

    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    for _ in range(1000):
        x_val, y_val = generate_data()
        _, loss_val = sess.run([train_op, loss], {x: x_val, y: y_val})
    (w_val,) = sess.run([w])
    assert w_val.shape == (3, 1) and w_val.dtype == np.float32
    assert abs(w_val[0, 0] - 5) < 0.03 and abs(w_val[1, 0]) < 0.01 and abs(w_val[2, 0] - 3.5) < 0.75
    assert loss_val < 50


def _entropy_program():
    logits = tf.Variable(np.array([2.0, -1.0, 0.5, 0.0, -3.0], np.float32), name="logits")
    p = tf.nn.softmax(logits)
    entropy = -tf.reduce_sum(p * tf.log(p))
    train = tf.train.AdamOptimizer(0.1).minimize(-entropy)
    return logits, p, entropy, train


def _train_entropy(sess, steps):
    _, p, entropy, train = _entropy_program()
    sess.run(tf.global_variables_initializer())
    ps, es = {}, {}
    for i in range(steps):
        _, es[i] = sess.run([train, entropy])
        if i in TF1_ENTROPY or i == steps - 1:
            ps[i] = sess.run(p)
    return ps, es


@pytest.mark.program
def test_maximizing_entropy_with_adam_reaches_uniform_softmax():
    with tf.Session() as sess:
        ps, es = _train_entropy(sess, 300)
        logits = sess.run(tf.global_variables()[0])
    for step, want in TF1_ENTROPY.items():
        np.testing.assert_allclose(ps[step], want, rtol=1e-5, atol=1e-6)
    for step, want in TF1_ENTROPY_VALUE.items():
        assert es[step] == pytest.approx(want, rel=1e-5)
    np.testing.assert_allclose(ps[299], np.full(5, 0.2), atol=1e-6)
    assert es[299] == pytest.approx(np.log(5), rel=1e-6)
    assert np.ptp(logits) < 1e-5  # equal logits: the uniform distribution


def test_entropy_steps_agree_in_dask_modes(mode, sess_factory):
    ps, es = _train_entropy(sess_factory(mode), 10)
    for step in (0, 2, 9):
        np.testing.assert_allclose(ps[step], TF1_ENTROPY[step], rtol=1e-5, atol=1e-6)
    assert es[9] == pytest.approx(TF1_ENTROPY_VALUE[9], rel=1e-6)
