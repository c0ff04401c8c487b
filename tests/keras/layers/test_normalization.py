"""Keras's BatchNormalization (moving statistics, learning phase, updates) and LayerNormalization."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import backend as K
from dflow.keras import layers as L

from .conftest import roundtrip, run, weights


def test_batch_norm_variables_and_defaults():
    bn = L.BatchNormalization()
    bn(tf.placeholder(tf.float32, [None, 3]))
    assert [v.name for v in bn.weights] == ["batch_normalization/gamma:0", "batch_normalization/beta:0",
                                            "batch_normalization/moving_mean:0",
                                            "batch_normalization/moving_variance:0"]
    assert [v.name for v in bn.trainable_weights] == ["batch_normalization/gamma:0", "batch_normalization/beta:0"]
    assert (bn.momentum, bn.epsilon) == (0.99, 1e-3)
    assert not tf.get_collection(tf.GraphKeys.UPDATE_OPS)  # Keras keeps them on the layer
    assert len(bn.updates) == 2


def test_batch_norm_training_step_updates_moving_statistics(rng):
    x = rng.randn(8, 3).astype(np.float32) * 2 + 1
    ph = tf.placeholder(tf.float32, [None, 3])
    bn = L.BatchNormalization(momentum=0.9)
    out = bn(ph)  # training: the learning phase placeholder
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    inference = sess.run(out, {ph: x})
    np.testing.assert_allclose(inference, x / np.sqrt(1 + 1e-3), rtol=1e-5)  # moving stats 0, 1
    train, _ = sess.run([out, bn.updates], {ph: x, K.learning_phase(): True})
    mean, var = x.mean(0), x.var(0)
    np.testing.assert_allclose(train, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    _, _, moving_mean, moving_var = weights(bn, sess)
    np.testing.assert_allclose(moving_mean, 0.1 * mean, rtol=1e-5)
    np.testing.assert_allclose(moving_var, 0.9 + 0.1 * var, rtol=1e-5)
    sess.run(bn.updates, {ph: x})  # the phase is False: no update
    np.testing.assert_allclose(weights(bn, sess)[2], 0.1 * mean, rtol=1e-5)


def test_batch_norm_fused_4d_bessel_and_gradients(rng):
    x = rng.randn(2, 3, 3, 2).astype(np.float32)
    ph = tf.placeholder(tf.float32, x.shape)
    bn = L.BatchNormalization(axis=-1, momentum=0.0)
    out = bn(ph, training=True)
    grads = tf.gradients(tf.reduce_sum(out * out), [bn.gamma, bn.beta])
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    y, g, _ = sess.run([out, grads, bn.updates], {ph: x})
    mean, var = x.mean((0, 1, 2)), x.var((0, 1, 2))
    normed = (x - mean) / np.sqrt(var + 1e-3)
    np.testing.assert_allclose(y, normed, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g[0], (2 * normed * normed).sum((0, 1, 2)), rtol=1e-4)
    np.testing.assert_allclose(g[1], (2 * normed).sum((0, 1, 2)), atol=1e-4)
    np.testing.assert_allclose(weights(bn, sess)[3], var * 18 / 17, rtol=1e-5)  # TF1's fused kernel: n/(n-1)


def test_batch_norm_fixed_learning_phase():
    K.set_learning_phase(1)
    ph = tf.placeholder(tf.float32, [None, 2])
    out = L.BatchNormalization()(ph)
    value, _ = run(out, {ph: np.array([[1.0, 2.0], [3.0, 6.0]], np.float32)})
    np.testing.assert_allclose(value, [[-1, -1], [1, 1]], atol=1e-3)


def test_layer_normalization(rng):
    x = rng.randn(2, 3, 4).astype(np.float32)
    ph = tf.placeholder(tf.float32, x.shape)
    ln = L.LayerNormalization(gamma_initializer="random_normal", beta_initializer="random_normal")
    ln2 = L.LayerNormalization(axis=[1, 2])
    out = ln(ph)
    g = tf.gradients(tf.reduce_sum(out), [ln.beta])[0]
    (y, y2, gb), sess = run([out, ln2(ph), g], {ph: x})
    gamma, beta = weights(ln, sess)
    assert [v.name for v in ln.weights] == ["layer_normalization/gamma:0", "layer_normalization/beta:0"]
    normed = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(y, normed * gamma + beta, rtol=1e-4, atol=1e-5)
    m, v = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    np.testing.assert_allclose(y2, (x - m) / np.sqrt(v + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gb, np.full(4, 6.0), rtol=1e-5)


def test_configs_and_errors():
    config = L.BatchNormalization().get_config()
    assert list(config)[3:] == ["axis", "momentum", "epsilon", "center", "scale", "beta_initializer",
                                "gamma_initializer", "moving_mean_initializer", "moving_variance_initializer",
                                "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"]
    assert config["moving_variance_initializer"] == {"class_name": "Ones", "config": {"dtype": "float32"}}
    roundtrip(L.BatchNormalization(axis=1, momentum=0.9))
    roundtrip(L.LayerNormalization(axis=[1, 2], epsilon=1e-5))
    with pytest.raises(ValueError, match="undefined `axis` dimension"):
        L.BatchNormalization()(tf.placeholder(tf.float32, [None, None]))
    with pytest.raises(ValueError, match="axis"):
        L.LayerNormalization(axis="last")
