"""Keras's Reshape, Permute, RepeatVector, Lambda, ActivityRegularization and the noise layers;
a few eager checks of the other modules' layers."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from dflow.keras import backend as K
from dflow.keras import layers as L

from .conftest import roundtrip, run


def double(x, factor=2.0):
    return x * factor


def shape_of_double(input_shape):
    return input_shape


def test_reshape_permute_repeat(rng):
    x = rng.randn(2, 3, 4).astype(np.float32)
    ph = tf.placeholder(tf.float32, [None, 3, 4])
    layers = [L.Reshape((6, -1)), L.Reshape((12,)), L.Permute((2, 1))]
    outs = [layer(ph) for layer in layers] + [L.RepeatVector(3)(ph[:, 0])]
    values, _ = run(outs, {ph: x})
    expects = [x.reshape(2, 6, 2), x.reshape(2, 12), x.transpose(0, 2, 1), np.repeat(x[:, None, 0], 3, axis=1)]
    for out, value, expect in zip(outs, values, expects):
        np.testing.assert_allclose(value, expect)
        assert out.shape.as_list()[1:] == list(expect.shape[1:])
    assert layers[0].compute_output_shape((5, 3, 4)).as_list() == [5, 6, 2]


def test_reshape_and_permute_errors():
    with pytest.raises(ValueError, match="total size of new array must be unchanged"):
        L.Reshape((5,))(tf.placeholder(tf.float32, [None, 3, 4]))
    with pytest.raises(ValueError, match="Can only specify one unknown dimension"):
        L.Reshape((-1, -1))(tf.placeholder(tf.float32, [None, 3, 4]))
    with pytest.raises(ValueError, match="Invalid permutation `dims`"):
        L.Permute((0, 1))
    with pytest.raises(ValueError, match="expected ndim=2"):
        L.RepeatVector(2)(tf.placeholder(tf.float32, [1, 2, 3]))


def test_lambda_arguments_output_shape_mask_and_config(rng):
    x = rng.randn(2, 3).astype(np.float32)
    ph = tf.placeholder(tf.float32, x.shape)
    layer = L.Lambda(double, output_shape=shape_of_double, arguments={"factor": 3.0},
                     mask=lambda inputs, mask: None)
    anon = L.Lambda(lambda t: t[:, :2], output_shape=(2,))
    values, _ = run([layer(ph), anon(ph)], {ph: x})
    np.testing.assert_allclose(values[0], 3 * x)
    np.testing.assert_allclose(values[1], x[:, :2])
    assert anon.compute_output_shape((5, 3)).as_list() == [5, 2]
    assert layer.compute_output_shape((5, 3)).as_list() == [5, 3]
    plain = L.Lambda(double, output_shape=shape_of_double, arguments={"factor": 3.0})
    config = plain.get_config()
    assert (config["function"], config["function_type"], config["module"]) == ("double", "function", __name__)
    assert config["output_shape_type"] == "function" and config["arguments"] == {"factor": 3.0}
    clone = L.Lambda.from_config(config)
    assert clone.function is double and clone._output_shape is shape_of_double
    with pytest.raises(ValueError, match="not a module-level function.*does not marshal"):
        anon.get_config()
    with pytest.raises(ValueError, match="unknown function 'nope'"):
        L.Lambda.from_config(dict(config, function="nope", module=None))


def test_activity_regularization_loss(rng):
    x = rng.randn(4, 3).astype(np.float32)
    ph = tf.placeholder(tf.float32, x.shape)
    layer = L.ActivityRegularization(l1=0.1, l2=0.01)
    out = layer(ph)
    (y, loss), _ = run([out, layer.losses[0]], {ph: x})
    np.testing.assert_allclose(y, x)
    np.testing.assert_allclose(loss, (0.1 * np.abs(x).sum() + 0.01 * (x ** 2).sum()) / 4, rtol=1e-5)
    assert layer.get_config()["l1"] == 0.1


def test_noise_layers_act_only_while_training(rng):
    x = np.ones((64, 4, 8), np.float32)
    ph = tf.placeholder(tf.float32, x.shape)
    layers = [L.SpatialDropout1D(0.5, seed=1), L.GaussianNoise(0.5, seed=1), L.GaussianDropout(0.5, seed=1)]
    outs = [layer(ph) for layer in layers]
    values, sess = run(outs, {ph: x})
    for value in values:
        np.testing.assert_allclose(value, x)  # the learning phase defaults to False
    drop, noise, gdrop = sess.run(outs, {ph: x, K.learning_phase(): True})
    # whole channels dropped: each (example, channel) is all 0 or all 2 along the steps
    assert set(np.unique(drop)) <= {0.0, 2.0} and (drop.std(axis=1) == 0).all()
    assert 0.3 < (drop == 0).mean() < 0.7
    assert abs(noise.std() - 0.5) < 0.05 and abs(gdrop.mean() - 1) < 0.05 and abs(gdrop.std() - 1) < 0.05


def test_configs():
    for layer in [L.Reshape((2, 3)), L.Permute((2, 1)), L.RepeatVector(3), L.ActivityRegularization(0.1),
                  L.SpatialDropout2D(0.2, data_format="channels_first"), L.SpatialDropout1D(0.3),
                  L.GaussianNoise(0.1), L.GaussianDropout(0.2)]:
        roundtrip(layer)
    assert list(L.GaussianNoise(0.1).get_config())[3:] == ["stddev", "seed"]


def test_eager_layers(rng):
    x = rng.randn(2, 4, 4, 3).astype(np.float32)
    with tfe.eager_mode():
        conv = L.Conv2D(2, 3, padding="same")
        bn = L.BatchNormalization()
        y = bn(conv(tf.constant(x)), training=True).numpy()
        np.testing.assert_allclose(y.mean(axis=(0, 1, 2)), 0, atol=1e-5)
        moving_mean = bn.moving_mean.numpy()  # eager updates ran at once
        assert np.abs(moving_mean).max() > 0
        pooled = L.GlobalAveragePooling2D()(tf.constant(x)).numpy()
        np.testing.assert_allclose(pooled, x.mean(axis=(1, 2)), rtol=1e-5)
        merged = L.concatenate([tf.constant(x), tf.constant(x)]).numpy()
        assert merged.shape == (2, 4, 4, 6)
        np.testing.assert_allclose(L.Reshape((-1,))(tf.constant(x)).numpy(), x.reshape(2, -1))
        np.testing.assert_allclose(L.LeakyReLU(0.1)(tf.constant(x)).numpy(), np.where(x > 0, x, 0.1 * x), rtol=1e-6)
    assert not tf.executing_eagerly()
