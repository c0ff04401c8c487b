"""tf.contrib.layers: variable names as TF 1.15's contrib (tensorflow/contrib/layers/python/layers/
layers.py: scopes `fully_connected`, `Conv`, `BatchNorm`, `Dropout`; variables `weights`,
`biases`, `beta`, `gamma`, `moving_mean`, `moving_variance`, all in MODEL_VARIABLES), values
against numpy, batch_norm's updates, regularizers, initializers and optimize_loss."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import LOCAL_MODES, make_session

layers = tf.contrib.layers


def _names(key):
    return [v.name for v in tf.get_collection(key)]


def _each_mode(fetches, feed_dict=None, prepare=None):
    out = []
    for mode in LOCAL_MODES:
        with make_session(mode, chunks=2) as s:
            s.run(tf.global_variables_initializer())
            out.append(s.run(fetches, feed_dict))
    return out


def test_fully_connected_names_collections_and_values():
    rng = np.random.RandomState(0)
    xv = rng.randn(4, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3])
    y = layers.fully_connected(x, 5, biases_initializer=tf.constant_initializer(0.1))
    y2 = layers.fully_connected(y, 2, activation_fn=None, scope="logits")
    with tf.variable_scope("logits", reuse=True):
        w = tf.get_variable("weights")
    assert y.name == "fully_connected/Relu:0" and y2.name == "logits/BiasAdd:0"
    assert _names(tf.GraphKeys.GLOBAL_VARIABLES) == ["fully_connected/weights:0", "fully_connected/biases:0",
                                                     "logits/weights:0", "logits/biases:0"]
    assert _names(tf.GraphKeys.MODEL_VARIABLES) == _names(tf.GraphKeys.TRAINABLE_VARIABLES) == \
        _names(tf.GraphKeys.GLOBAL_VARIABLES)
    w1, b1 = tf.global_variables()[:2]
    for out, out2, k1, bias1, k2 in _each_mode([y, y2, w1, b1, w], {x: xv}):
        np.testing.assert_allclose(bias1, 0.1)
        h = np.maximum(xv @ k1 + bias1, 0)
        np.testing.assert_allclose(out, h, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out2, h @ k2, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="num_outputs"):
        layers.fully_connected(x, 2.0)
    with pytest.raises(ValueError, match="logits/weights already exists"):
        layers.fully_connected(x, 2, scope="logits")
    layers.fully_connected(y, 2, scope="logits", reuse=True)  # reuse= shares them
    assert len(tf.global_variables()) == 4


def test_fully_connected_with_normalizer_has_no_biases_and_regularizers_add_losses():
    x = tf.placeholder(tf.float32, [None, 3])
    layers.fully_connected(x, 4, normalizer_fn=layers.batch_norm, normalizer_params={"scale": True},
                           weights_regularizer=layers.l2_regularizer(0.1))
    # TF 1.15: no biases when a normalizer is given; batch_norm in the layer's scope (a rank-2 input
    # takes _fused_batch_norm, which makes beta before gamma)
    assert _names(tf.GraphKeys.GLOBAL_VARIABLES) == [
        "fully_connected/weights:0", "fully_connected/BatchNorm/beta:0", "fully_connected/BatchNorm/gamma:0",
        "fully_connected/BatchNorm/moving_mean:0", "fully_connected/BatchNorm/moving_variance:0"]
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 1


def test_conv2d_and_pools_against_numpy():
    rng = np.random.RandomState(1)
    xv = rng.randn(2, 6, 6, 2).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 6, 6, 2])
    c = layers.conv2d(x, 3, [3, 3])  # TF 1.15 defaults: stride 1, SAME, relu
    p = layers.max_pool2d(c, [2, 2])  # stride 2, VALID
    a = layers.avg_pool2d(c, 3, stride=3)
    f = layers.flatten(p)
    assert (c.shape.as_list(), p.shape.as_list(), a.shape.as_list(), f.shape.as_list()) == \
        ([None, 6, 6, 3], [None, 3, 3, 3], [None, 2, 2, 3], [None, 27])
    assert _names(tf.GraphKeys.MODEL_VARIABLES) == ["Conv/weights:0", "Conv/biases:0"]
    assert p.name.startswith("MaxPool2D/") and a.name.startswith("AvgPool2D/") and f.name.startswith("Flatten/")
    k_var, b_var = tf.global_variables()
    for cv, pv, av, fv, k, b in _each_mode([c, p, a, f, k_var, b_var], {x: xv}):
        padded = np.pad(xv, [(0, 0), (1, 1), (1, 1), (0, 0)])
        win = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
        ref = np.maximum(np.einsum("nhwcij,ijcf->nhwf", win, k) + b, 0)
        np.testing.assert_allclose(cv, ref, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(pv, cv.reshape(2, 3, 2, 3, 2, 3).max(axis=(2, 4)), rtol=1e-6)
        np.testing.assert_allclose(av, cv.reshape(2, 2, 3, 2, 3, 3).mean(axis=(2, 4)), rtol=1e-5)
        np.testing.assert_allclose(fv, pv.reshape(2, -1))


def test_conv2d_transpose_names():
    y = layers.conv2d_transpose(tf.placeholder(tf.float32, [None, 4, 4, 3]), 2, 3, stride=2)
    assert y.shape.as_list() == [None, 8, 8, 2]
    assert _names(tf.GraphKeys.MODEL_VARIABLES) == ["Conv2d_transpose/weights:0", "Conv2d_transpose/biases:0"]
    assert tf.global_variables()[0].shape.as_list() == [3, 3, 2, 3]


def test_dropout_keep_prob_and_fed_is_training():
    xv = np.ones((30, 40), np.float32)
    x = tf.placeholder(tf.float32, [None, 40])
    is_training = tf.placeholder(tf.bool, [])
    keep = tf.placeholder(tf.float32, [])
    y = layers.dropout(x, keep_prob=keep, is_training=is_training)
    assert y.name.startswith("Dropout/")
    for mode in LOCAL_MODES:
        with make_session(mode, chunks=10) as s:
            on = s.run(y, {x: xv, is_training: True, keep: 0.25})
            off = s.run(y, {x: xv, is_training: False, keep: 0.25})
        np.testing.assert_array_equal(off, xv)
        assert set(np.unique(on)) == {0.0, 4.0} and 0.15 < (on != 0).mean() < 0.35


@pytest.mark.parametrize("rank,updates_collections,bessel", [(4, tf.GraphKeys.UPDATE_OPS, True), (2, None, True),
                                                             (3, tf.GraphKeys.UPDATE_OPS, False)])
def test_batch_norm_variables_and_moving_averages(rank, updates_collections, bessel):
    shape = [4, 3, 2, 2][:rank - 1] + [2] if rank > 2 else [6, 2]
    rng = np.random.RandomState(2)
    batches = [(rng.randn(*shape) * 3 + 1).astype(np.float32) for _ in range(3)]
    x = tf.placeholder(tf.float32, shape)
    y = layers.batch_norm(x, decay=0.8, updates_collections=updates_collections, is_training=True)
    # TF 1.15 contrib defaults: center (beta), no scale (gamma), moving statistics, all model variables
    assert _names(tf.GraphKeys.MODEL_VARIABLES) == ["BatchNorm/beta:0", "BatchNorm/moving_mean:0",
                                                    "BatchNorm/moving_variance:0"]
    assert _names(tf.GraphKeys.TRAINABLE_VARIABLES) == ["BatchNorm/beta:0"]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == (0 if updates_collections is None else 2)
    with tf.control_dependencies(updates):
        step = tf.identity(y)
    mm_var, mv_var = tf.global_variables()[1:]
    reduce = tuple(range(rank - 1))
    n = np.prod(shape[:-1])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        mm, mv = np.zeros(2), np.ones(2)
        for xb in batches:
            out = s.run(step, {x: xb})
            m, v = xb.mean(reduce), xb.var(reduce)
            np.testing.assert_allclose(out, (xb - m) / np.sqrt(v + 1e-3), rtol=1e-4, atol=1e-4)
            mm = mm - 0.2 * (mm - m)
            mv = mv - 0.2 * (mv - v * (n / (n - 1) if bessel else 1))
        np.testing.assert_allclose(s.run(mm_var), mm, rtol=1e-5)
        np.testing.assert_allclose(s.run(mv_var), mv, rtol=1e-5)


def test_batch_norm_inference_uses_moving_statistics():
    xv = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = layers.batch_norm(tf.constant(xv), is_training=False, scale=True,
                          param_initializers={"moving_mean": tf.constant_initializer(2.0),
                                              "moving_variance": tf.constant_initializer(4.0),
                                              "gamma": tf.constant_initializer(3.0)})
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        np.testing.assert_allclose(s.run(y), (xv - 2) / np.sqrt(4 + 1e-3) * 3, rtol=1e-5)


def test_regularizers_and_initializers():
    w = tf.constant(np.array([[1.0, -2.0], [3.0, -4.0]], np.float32))
    l1, l2, l12 = layers.l1_regularizer(0.5)(w), layers.l2_regularizer(0.5)(w), layers.l1_l2_regularizer(0.5, 0.5)(w)
    big = tf.get_variable("big", [200, 300], initializer=layers.xavier_initializer(seed=1))
    he = tf.get_variable("he", [3, 3, 40, 200], initializer=layers.variance_scaling_initializer(seed=2))
    normal = tf.get_variable("xn", [300, 300], initializer=layers.xavier_initializer(uniform=False, seed=3))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        r1, r2, r12, bv, hv, nv = s.run([l1, l2, l12, big, he, normal])
    assert (r1, r2) == (5.0, 7.5) and r12 == 12.5
    limit = np.sqrt(6 / 500)
    assert np.abs(bv).max() <= limit and abs(bv.std() - limit / np.sqrt(3)) < 0.05 * limit
    fan_in = 3 * 3 * 40  # contrib: truncated normal with stddev sqrt(1.3 * 2 / fan_in)
    std = np.sqrt(1.3 * 2 / fan_in)
    assert np.abs(hv).max() <= 2 * std + 1e-6 and abs(hv.std() - std * 0.8796) < 0.03 * std
    assert abs(nv.std() - np.sqrt(1.3 / 300) * 0.8796) < 0.03 * np.sqrt(1.3 / 300)
    with pytest.raises(TypeError, match="Unknown mode"):
        layers.variance_scaling_initializer(mode="fan_in")


def test_optimize_loss_trains_with_a_learning_rate_variable_and_a_global_step():
    rng = np.random.RandomState(3)
    xv = rng.randn(32, 2).astype(np.float32)
    yv = xv @ np.array([[2.0], [-1.0]], np.float32)
    x, t = tf.constant(xv), tf.constant(yv)
    pred = layers.fully_connected(x, 1, activation_fn=None)
    loss = tf.losses.mean_squared_error(t, pred)
    step = tf.train.get_or_create_global_step()
    train = layers.optimize_loss(loss, step, learning_rate=0.1, optimizer="SGD", clip_gradients=5.0)
    assert "OptimizeLoss/learning_rate:0" in _names(tf.GraphKeys.GLOBAL_VARIABLES)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        first = s.run(loss)
        for _ in range(60):
            s.run(train)
        assert s.run(step) == 60 and s.run(loss) < 0.01 * first
    with pytest.raises(ValueError, match="Optimizer name should be one of"):
        layers.optimize_loss(loss, step, 0.1, "Nope")
    with pytest.raises(ValueError, match="Learning rate should be 0d Tensor or float"):
        layers.optimize_loss(loss, step, 1, "SGD")


@pytest.mark.parametrize("updates_collections", [None, tf.GraphKeys.UPDATE_OPS])
def test_batch_norm_with_a_fed_is_training(updates_collections):
    xv = (np.random.RandomState(4).randn(8, 2) * 2 + 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 2])
    is_training = tf.placeholder(tf.bool, [])
    y = layers.batch_norm(x, decay=0.5, is_training=is_training, updates_collections=updates_collections)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        y = tf.identity(y)
    mm, mv = tf.global_variables()[1:]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        np.testing.assert_allclose(s.run(y, {x: xv, is_training: False}), xv / np.sqrt(1 + 1e-3), rtol=1e-5)
        np.testing.assert_allclose(s.run([mm, mv]), [[0, 0], [1, 1]])  # inference leaves them
        train_out = s.run(y, {x: xv, is_training: True})
        np.testing.assert_allclose(train_out, (xv - xv.mean(0)) / np.sqrt(xv.var(0) + 1e-3), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(s.run(mm), 0.5 * xv.mean(0), rtol=1e-5)
        np.testing.assert_allclose(s.run(mv), 0.5 + 0.5 * xv.var(0, ddof=1), rtol=1e-5)  # rank 2: fused, unbiased


def test_optimize_loss_writes_tf1_summaries():
    """TF 1.15's default summaries (loss, global gradient norm; learning_rate only with a decay
    function), tagged under the OptimizeLoss scope, and the optional per-variable ones."""
    from dflow.summary import Summary

    with tf.Graph().as_default():
        x = tf.constant(np.ones((4, 3), np.float32))
        w = tf.get_variable("w", [3, 1], initializer=tf.ones_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
        step = tf.train.get_or_create_global_step()
        tf.contrib.layers.optimize_loss(loss, step, 0.1, "SGD", clip_gradients=1.0,
                                        summaries=["loss", "gradients", "gradient_norm", "global_gradient_norm"])
        merged = tf.summary.merge_all()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = {v.tag: v for v in Summary.FromString(sess.run(merged)).value}
    assert set(values) == {"OptimizeLoss/loss", "OptimizeLoss/global_norm/gradient_norm",
                           "OptimizeLoss/gradients/w_0", "OptimizeLoss/gradient_norm/w_0",
                           "OptimizeLoss/global_norm/clipped_gradient_norm"}
    grad = 2 * np.ones((4, 3)).T @ (np.ones((4, 3)) @ np.ones((3, 1))) / 4  # d mean((xw)^2) / dw
    assert values["OptimizeLoss/loss"].simple_value == pytest.approx(9.0)
    assert values["OptimizeLoss/global_norm/gradient_norm"].simple_value == pytest.approx(np.linalg.norm(grad))
    assert values["OptimizeLoss/global_norm/clipped_gradient_norm"].simple_value == pytest.approx(1.0, rel=1e-5)
    with tf.Graph().as_default():
        loss = tf.reduce_sum(tf.get_variable("v", [2]))
        tf.contrib.layers.optimize_loss(loss, tf.train.get_or_create_global_step(), 0.1, "SGD")
        tags = [t.op.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)]
    assert tags == ["OptimizeLoss/global_norm/gradient_norm", "OptimizeLoss/loss"]
