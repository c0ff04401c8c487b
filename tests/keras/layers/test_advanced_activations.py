"""Keras's activation layers against numpy."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import layers as L

from .conftest import roundtrip, run, weights


def test_activations_match_numpy(rng):
    x = rng.randn(3, 4).astype(np.float32) * 2
    ph = tf.placeholder(tf.float32, x.shape)
    layers = [L.LeakyReLU(), L.ELU(0.5), L.ThresholdedReLU(0.5), L.Softmax(axis=0), L.ReLU(),
              L.ReLU(max_value=1.0, negative_slope=0.1, threshold=0.5)]
    values, _ = run([layer(ph) for layer in layers], {ph: x})
    e = np.exp(x - x.max(0))
    expects = [np.where(x > 0, x, 0.3 * x), np.where(x > 0, x, 0.5 * (np.exp(x) - 1)), np.where(x > 0.5, x, 0),
               e / e.sum(0), np.maximum(x, 0), np.where(x > 0.5, np.minimum(x, 1.0), 0.1 * (x - 0.5))]
    for layer, value, expect in zip(layers, values, expects):
        np.testing.assert_allclose(value, expect, rtol=1e-5, atol=1e-6, err_msg=layer.name)


def test_prelu_weight_shared_axes_and_gradient(rng):
    x = rng.randn(2, 3, 4).astype(np.float32)
    ph = tf.placeholder(tf.float32, x.shape)
    layer = L.PReLU(alpha_initializer="random_uniform", shared_axes=[1])
    out = layer(ph)
    g = tf.gradients(tf.reduce_sum(out), layer.alpha)[0]
    (y, ga), sess = run([out, g], {ph: x})
    (alpha,) = weights(layer, sess)
    assert layer.weights[0].name == "p_re_lu/alpha:0" and alpha.shape == (1, 4)
    np.testing.assert_allclose(y, np.where(x > 0, x, alpha * x), rtol=1e-5)
    np.testing.assert_allclose(ga, np.minimum(x, 0).sum(axis=(0, 1))[None], rtol=1e-5)


def test_configs_and_errors():
    assert L.ReLU(6.0).get_config()["max_value"] == 6.0
    assert L.LeakyReLU().get_config()["alpha"] == pytest.approx(0.3)
    for layer in [L.LeakyReLU(0.1), L.PReLU(shared_axes=[1, 2]), L.ELU(), L.ThresholdedReLU(2.0), L.Softmax(1),
                  L.ReLU(1.0, 0.2, 0.1)]:
        roundtrip(layer)
    with pytest.raises(ValueError, match="max_value of Relu layer cannot be negative"):
        L.ReLU(max_value=-1)
    with pytest.raises(ValueError, match="negative_slope of Relu layer cannot be negative"):
        L.ReLU(negative_slope=-1)
