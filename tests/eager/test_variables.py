"""Eager variables, optimizers and checkpoints (the same Zarr checkpoints as graph mode)."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from dflow import errors


def test_variable_semantics(eager):
    v = tfe.Variable([1.0, 2.0], name="v")
    assert v.name == "v:0" and v.shape == (2,) and v.dtype == tf.float32
    assert repr(v) == "<tf.Variable 'v:0' shape=(2,) dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    r = v.read_value()
    v.assign([5.0, 6.0])
    np.testing.assert_array_equal(r.numpy(), [1, 2])  # a read is a value, not a view
    np.testing.assert_array_equal(v.value().numpy(), [5, 6])
    np.testing.assert_array_equal(v.assign_add([1.0, 1.0]).numpy(), [6, 7])
    np.testing.assert_array_equal(v.assign_sub([2.0, 2.0]).numpy(), [4, 5])
    np.testing.assert_array_equal((v + 1).numpy(), [5, 6])
    np.testing.assert_array_equal(np.asarray(v), [4, 5])
    np.testing.assert_array_equal(tf.scatter_update(v, [1], [9.0]).numpy(), [4, 9])
    assert tfe.Variable(1.0).name != tfe.Variable(1.0).name  # unnamed variables are told apart
    with pytest.raises(errors.InvalidArgumentError):
        v.assign([1.0, 2.0, 3.0])
    tf.assign(v, [0.0, 1.0])
    np.testing.assert_array_equal(v.numpy(), [0, 1])


def test_graph_variables_have_no_numpy():
    v = tf.Variable(1.0)
    with pytest.raises(NotImplementedError, match="eager"):
        v.numpy()


@pytest.mark.parametrize("make", [lambda: tf.train.GradientDescentOptimizer(0.1),
                                  lambda: tf.train.MomentumOptimizer(0.1, 0.9),
                                  lambda: tf.train.AdamOptimizer(0.1),
                                  lambda: tf.train.AdagradOptimizer(0.5),
                                  lambda: tf.train.RMSPropOptimizer(0.05)],
                         ids=["sgd", "momentum", "adam", "adagrad", "rmsprop"])
def test_optimizers_match_graph_mode(make):
    def loss_of(w):
        return tf.reduce_sum((w * tf.constant([2.0, -1.0]) - 1.0) ** 2)

    g = tf.Graph()
    with g.as_default():
        w = tf.Variable([0.5, 0.5])
        step = make().minimize(loss_of(w))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                sess.run(step)
            expected = sess.run(w)
    with tfe.eager_mode():
        w = tfe.Variable([0.5, 0.5])
        opt = make()
        for _ in range(5):
            opt.minimize(lambda: loss_of(w))
        np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6)
        with pytest.raises(RuntimeError, match="should be a function"):
            opt.compute_gradients(loss_of(w))


def test_linear_regression_converges(eager):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((200, 1)).astype(np.float32)
    ys = 3.0 * xs + 2.0 + 0.01 * rng.standard_normal((200, 1)).astype(np.float32)
    W = tfe.Variable(5.0, name="weight")
    b = tfe.Variable(10.0, name="bias")

    def prediction(x):
        return x * W + b

    def loss(x, y):
        return tf.reduce_mean(tf.square(prediction(x) - y))

    grad = tfe.implicit_gradients(loss)
    optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.1)
    first = loss(xs, ys).numpy()
    for _ in range(200):
        optimizer.apply_gradients(grad(xs, ys))
    assert loss(xs, ys).numpy() < 1e-3 < first
    assert abs(W.numpy() - 3.0) < 0.02 and abs(b.numpy() - 2.0) < 0.02


def test_the_seeds_saver(eager, tmp_path):
    x = tfe.Variable(10., name='x')
    y = tfe.Variable(5., name='y')
    saver = tfe.Saver([x, y])
    x.assign(2.)
    prefix = saver.save(str(tmp_path / "ckpt"))
    x.assign(11.)
    assert 16. == (x + y).numpy()
    saver.restore(str(tmp_path / "ckpt"))
    assert 7. == (x + y).numpy()
    # the same checkpoint as graph mode: a graph Saver restores it
    g = tf.Graph()
    with g.as_default():
        gx = tf.Variable(0.0, name="x")
        with tf.Session() as sess:
            tf.train.Saver([gx]).restore(sess, prefix)
            assert sess.run(gx) == 2.0
    assert tf.train.list_variables(prefix) == [("x", []), ("y", [])]


def test_checkpoint_saves_optimizer_slots(eager, tmp_path):
    w = tfe.Variable([1.0, 2.0], name="w")
    opt = tf.train.AdamOptimizer(0.1)
    opt.minimize(lambda: tf.reduce_sum(w * w))
    ckpt = tfe.Checkpoint(w=w, optimizer=opt)
    path = ckpt.save(str(tmp_path / "ck"))
    assert path.endswith("ck-1")
    saved = w.numpy().copy()
    opt.minimize(lambda: tf.reduce_sum(w * w))
    ckpt.restore(path).assert_consumed()
    np.testing.assert_array_equal(w.numpy(), saved)
    assert tf.train.latest_checkpoint(str(tmp_path)) == path


def test_metrics_mean(eager):
    my_mean = tfe.metrics.Mean(name="my_mean")
    my_mean(0.0)
    my_mean(10.0)
    assert 5.0 == my_mean.result().numpy()
    acc = tfe.metrics.Accuracy()
    acc([1, 2, 3], [1, 0, 3])
    assert abs(acc.result().numpy() - 2 / 3) < 1e-12
