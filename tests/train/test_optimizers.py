"""Optimizers, schedules, moving averages and clipping against TF1's figures (recorded from
tensorflow.compat.v1 runs of the same programs) and numpy."""

import numpy as np
import pytest

import dflow as tf

# 3 steps of each optimizer on loss = sum(w * w * c), w0 = [1, -2, 3], c = [0.5, 1, 2] (TF1 values)
TF1_THREE_STEPS = {
    "gd": ([0.729, -1.024, 0.648], lambda: tf.train.GradientDescentOptimizer(0.1)),
    "momentum": ([0.486, -0.124, -1.62], lambda: tf.train.MomentumOptimizer(0.1, 0.9)),
    "nesterov": ([0.32732099, 0.21670395, -1.2998879],
                 lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True)),
    "adam": ([0.70158738, -1.70062447, 2.70038271], lambda: tf.train.AdamOptimizer(0.1)),
    "adagrad": ([0.78751278, -1.77629662, 2.77441263], lambda: tf.train.AdagradOptimizer(0.1)),
    "rmsprop": ([0.72604597, -1.40537179, 2.30585599], lambda: tf.train.RMSPropOptimizer(0.1)),
    "rmsprop_centered": ([0.60506308, -1.07846081, 1.89155722],
                         lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True)),
}


@pytest.mark.parametrize("name", sorted(TF1_THREE_STEPS))
def test_three_steps_match_tf1(name, mode, sess_factory):
    expected, make = TF1_THREE_STEPS[name]
    w = tf.Variable([1.0, -2.0, 3.0])
    c = tf.constant([0.5, 1.0, 2.0])
    op = make().minimize(tf.reduce_sum(w * w * c))
    s = sess_factory(mode)
    s.run(tf.global_variables_initializer())
    for _ in range(3):
        assert s.run(op) is None
    np.testing.assert_allclose(s.run(w), expected, rtol=2e-5, atol=2e-6)


def test_slot_names_as_tf1():
    w = tf.Variable([1.0, 2.0], name="w")
    b = tf.Variable(0.5, name="b")
    gs = tf.train.get_or_create_global_step()
    opt = tf.train.AdamOptimizer(0.1)
    op = opt.minimize(tf.reduce_sum(w * w) + b, global_step=gs)
    assert op.name == "Adam" and op.type == "AssignAdd"
    assert [v.name for v in tf.global_variables()] == [
        "w:0", "b:0", "global_step:0", "beta1_power:0", "beta2_power:0", "w/Adam:0", "w/Adam_1:0", "b/Adam:0",
        "b/Adam_1:0"]
    assert opt.get_slot_names() == ["m", "v"]
    assert opt.get_slot(w, "m").name == "w/Adam:0"
    assert tf.train.MomentumOptimizer(0.1, 0.9).minimize(tf.reduce_sum(w)).name == "Momentum"


def test_global_step_increments_after_updates(mode, sess_factory):
    w = tf.Variable(2.0)
    gs = tf.train.get_or_create_global_step()
    assert gs.name == "global_step:0" and gs.dtype == tf.int64
    train = tf.train.GradientDescentOptimizer(0.5).minimize(w * w, global_step=gs)
    s = sess_factory(mode)
    s.run(tf.global_variables_initializer())
    for _ in range(3):
        s.run(train)
    assert s.run(gs) == 3
    assert s.run(w) == pytest.approx(0.0)  # w -= 0.5 * 2w


def test_fetching_loss_with_train_op_sees_start_of_step(mode, sess_factory):
    w = tf.Variable(3.0)
    loss = w * w
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    s = sess_factory(mode)
    s.run(w.initializer)
    losses = [s.run([train, loss])[1] for _ in range(3)]
    np.testing.assert_allclose(losses, [9.0, 5.76, 3.6864], rtol=1e-6)


@pytest.mark.program
def test_learning_rate_may_be_a_tensor():
    lr = tf.placeholder(tf.float32, [])
    w = tf.Variable(1.0)
    train = tf.train.GradientDescentOptimizer(lr).minimize(w * w)
    with tf.Session() as s:
        s.run(w.initializer)
        s.run(train, {lr: 0.25})
        assert s.run(w) == pytest.approx(0.5)


def test_no_gradients_is_a_value_error():
    w = tf.Variable(1.0)
    v = tf.Variable(2.0)
    with pytest.raises(ValueError, match="No gradients provided"):
        tf.train.GradientDescentOptimizer(0.1).minimize(v * 2.0, var_list=[w])


@pytest.mark.program
def test_schedules_match_tf1():
    gs = tf.Variable(0, trainable=False, dtype=tf.int64)
    lrs = [tf.train.exponential_decay(0.1, gs, 1, 0.96, staircase=True),
           tf.train.piecewise_constant(gs, [3, 7], [1.0, 0.5, 0.1]),
           tf.train.polynomial_decay(0.1, gs, 20, 0.01, power=2.0),
           tf.train.inverse_time_decay(0.1, gs, 5, 0.5)]
    with tf.Session() as s:
        s.run(gs.initializer)
        s.run(tf.assign(gs, 10))
        np.testing.assert_allclose(s.run(lrs), [0.06648325, 0.1, 0.0325, 0.05], rtol=1e-6)
        assert s.run(lrs[0]) == pytest.approx(0.1 * 0.96 ** 10, rel=1e-6)


def test_exponential_moving_average_tf1_example(mode, sess_factory):
    v1 = tf.Variable(0, dtype=tf.float32)
    step = tf.Variable(0, trainable=False)
    ema = tf.train.ExponentialMovingAverage(0.99, step)
    maintain = ema.apply([v1])
    assert ema.average(v1).name == "Variable/ExponentialMovingAverage:0"
    assert ema.average_name(v1) == "Variable/ExponentialMovingAverage"
    s = sess_factory(mode)
    s.run(tf.global_variables_initializer())
    out = [s.run([v1, ema.average(v1)])]
    s.run(tf.assign(v1, 5))
    s.run(maintain)
    out.append(s.run([v1, ema.average(v1)]))
    s.run(tf.assign(step, 10000))
    s.run(tf.assign(v1, 10))
    s.run(maintain)
    out.append(s.run([v1, ema.average(v1)]))
    s.run(maintain)
    out.append(s.run([v1, ema.average(v1)]))
    np.testing.assert_allclose(out, [[0, 0], [5, 4.5], [10, 4.555], [10, 4.60945]], rtol=1e-5)
    restore = ema.variables_to_restore()
    assert restore["Variable/ExponentialMovingAverage"] is v1


@pytest.mark.program
def test_clipping_matches_tf1():
    x = tf.Variable([3.0, 4.0])
    n = tf.clip_by_norm(x, 2.0)
    (a, b), gn = tf.clip_by_global_norm([x, x * 2], 5.0)
    with tf.Session() as s:
        s.run(x.initializer)
        got = s.run([n, a, b, gn])
    np.testing.assert_allclose(got[0], [1.2, 1.6], rtol=1e-6)
    np.testing.assert_allclose(got[1], [1.3416408, 1.7888545], rtol=1e-6)
    np.testing.assert_allclose(got[2], [2.6832817, 3.577709], rtol=1e-6)
    assert got[3] == pytest.approx(11.18034, rel=1e-6)
    assert tf.global_norm([x, None]) is not None
