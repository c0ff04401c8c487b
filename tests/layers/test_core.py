"""tf.layers core: Dense, Dropout, Flatten; variable names, collections, reuse, regularizers.

Expected names come from TensorFlow 2.21.0's tf.compat.v1.layers (TF_USE_LEGACY_KERAS=1,
tf-keras 2.21.0), graph mode, running the same construction sequence.
"""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


def _names(key):
    return [v.name for v in tf.get_collection(key)]


def test_dense_names_collections_and_reuse_as_tf1():
    x = tf.placeholder(tf.float32, [None, 4])
    layer = tf.layers.Dense(3)
    y, y2 = layer(x), layer(x)
    y3 = tf.layers.dense(x, 5)
    y4 = tf.layers.dense(x, 5, name="fc", kernel_regularizer=lambda w: 0.1 * tf.nn.l2_loss(w),
                         activity_regularizer=lambda a: tf.reduce_sum(a), bias_regularizer=lambda b: tf.reduce_sum(b))
    with tf.variable_scope("outer"):
        y5 = tf.layers.dense(x, 2)
    with tf.variable_scope("outer", reuse=True):
        y6 = tf.layers.dense(x, 2, name="dense")
    with tf.variable_scope("outer", reuse=tf.AUTO_REUSE):
        y7 = tf.layers.dense(x, 2, name="dense")
    y8 = tf.layers.dense(x, 5, name="fc", reuse=True)
    d = tf.layers.dense(x, 2, trainable=False, use_bias=False, activation=tf.nn.relu)
    # TF 2.21.0 tf.compat.v1.layers
    assert layer.name == "dense_1" and layer.scope_name == "dense"
    assert layer.kernel.name == "dense/kernel:0" and layer.bias.name == "dense/bias:0"
    assert [v.name for v in layer.variables] == ["dense/kernel:0", "dense/bias:0"]
    assert [v.name for v in layer.trainable_variables] == ["dense/kernel:0", "dense/bias:0"]
    assert [v.name for v in layer.weights] == ["dense/kernel:0", "dense/bias:0"]
    assert [t.name for t in (y, y2, y3, y4)] == ["dense/BiasAdd:0", "dense/BiasAdd_1:0", "dense_1/BiasAdd:0",
                                                 "fc/BiasAdd:0"]
    assert [t.name for t in (y5, y6, y7, y8, d)] == ["outer/dense/BiasAdd:0", "outer_1/dense/BiasAdd:0",
                                                    "outer_2/dense/BiasAdd:0", "fc_1/BiasAdd:0", "dense_2/Relu:0"]
    assert _names(tf.GraphKeys.GLOBAL_VARIABLES) == [
        "dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0", "fc/kernel:0", "fc/bias:0",
        "outer/dense/kernel:0", "outer/dense/bias:0", "dense_2/kernel:0"]
    assert _names(tf.GraphKeys.TRAINABLE_VARIABLES) == _names(tf.GraphKeys.GLOBAL_VARIABLES)[:-1]
    assert _names(tf.GraphKeys.MODEL_VARIABLES) == [] and _names(tf.GraphKeys.UPDATE_OPS) == []
    assert _names(tf.GraphKeys.REGULARIZATION_LOSSES) == [
        "fc/kernel/Regularizer/mul:0", "fc/bias/Regularizer/Sum:0", "fc/ActivityRegularizer/truediv:0"]
    with pytest.raises(ValueError, match="fc/kernel already exists"):
        tf.layers.dense(x, 5, name="fc")
    tf.layers.dense(x, 5, name="fc", reuse=tf.AUTO_REUSE)
    tf.layers.dense(x, 4, name="new", reuse=tf.AUTO_REUSE)
    assert _names(tf.GraphKeys.GLOBAL_VARIABLES)[9:] == ["new/kernel:0", "new/bias:0"]
    with pytest.raises(ValueError, match="absent/kernel does not exist"):
        tf.layers.dense(x, 4, name="absent", reuse=True)


def test_layer_objects_named_alike_get_unique_scopes():
    x = tf.placeholder(tf.float32, [None, 4])
    a, b = tf.layers.Dense(3, name="named"), tf.layers.Dense(3, name="named")
    a(x), b(x)
    # TF 2.21.0: a named layer object gets `named`, the next one `named_1`
    assert (a.name, a.kernel.name, b.name, b.kernel.name) == ("named", "named/kernel:0", "named", "named_1/kernel:0")


def test_dense_values_against_numpy_with_its_own_variables(mode):
    rng = np.random.RandomState(0)
    xv = rng.randn(5, 4).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4])
    layer = tf.layers.Dense(3, activation=tf.nn.relu, bias_initializer=tf.constant_initializer(0.5))
    y = layer(x)
    x3 = tf.placeholder(tf.float32, [None, 2, 4])
    y3 = layer(x3)  # a second call shares the variables; rank 3 contracts the last axis
    assert y3.shape.as_list() == [None, 2, 3]
    assert len(tf.global_variables()) == 2
    with tf.Session(**({} if mode == "eager" else {"scheduler": mode, "small_plan_bytes": 0})) as s:
        s.run(tf.global_variables_initializer())
        k, b, out, out3 = s.run([layer.kernel, layer.bias, y, y3], {x: xv, x3: xv[:4].reshape(2, 2, 4)})
    np.testing.assert_allclose(b, 0.5)
    limit = np.sqrt(6 / (4 + 3))  # glorot_uniform, TF1's default for get_variable
    assert np.all(np.abs(k) <= limit) and k.std() > 0
    np.testing.assert_allclose(out, np.maximum(xv @ k + b, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out3, np.maximum(xv[:4].reshape(2, 2, 4) @ k + b, 0), rtol=1e-5, atol=1e-6)


def test_dense_kernel_initializer_scope_initializer_and_regularization_value():
    x = tf.constant(np.ones((2, 3), np.float32))
    with tf.variable_scope("s", initializer=tf.constant_initializer(2.0)):
        y = tf.layers.dense(x, 2, kernel_regularizer=tf.contrib.layers.l2_regularizer(0.5))
    loss = tf.losses.get_regularization_loss()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        out, reg = s.run([y, loss])
    np.testing.assert_allclose(out, np.full((2, 2), 6.0))
    np.testing.assert_allclose(reg, 0.5 * (6 * 4.0) / 2)


def test_dense_errors():
    with pytest.raises(ValueError, match="last dimension of the inputs to `Dense` should be defined"):
        tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 3)
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
        tf.layers.dense(tf.placeholder(tf.float32, [4]), 3)
    layer = tf.layers.Dense(3)
    layer(tf.placeholder(tf.float32, [None, 4]))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 4"):
        layer(tf.placeholder(tf.float32, [None, 5]))
    with pytest.raises(TypeError, match="Keyword argument not understood"):
        tf.layers.Dense(3, nonsense=1)


def test_untrainable_layer_and_trainable_flag():
    x = tf.placeholder(tf.float32, [None, 4])
    layer = tf.layers.Dense(2, trainable=False)
    layer(x)
    assert layer.trainable_variables == [] and len(layer.non_trainable_variables) == 2
    assert tf.trainable_variables() == [] and len(tf.global_variables()) == 2


def test_dropout_with_a_fed_training_placeholder():
    xv = np.ones((40, 50), np.float32)
    x = tf.placeholder(tf.float32, [None, 50])
    training = tf.placeholder(tf.bool, [])
    y = tf.layers.dropout(x, rate=0.4, training=training, seed=3)
    assert y.shape.as_list() == [None, 50]
    on = run_modes(y, {x: xv, training: True})
    off = run_modes(y, {x: xv, training: False})
    np.testing.assert_array_equal(off, xv)
    kept = on != 0
    np.testing.assert_allclose(on[kept], 1 / 0.6, rtol=1e-6)
    assert 0.5 < kept.mean() < 0.7


def test_dropout_python_bool_and_layer_object():
    x = tf.constant(np.ones((4, 4), np.float32))
    assert tf.layers.dropout(x).name == "dropout/Identity:0"  # TF 2.21.0: training=False is an identity
    layer = tf.layers.Dropout(0.5, noise_shape=[4, 1], seed=1)
    y = layer(x, training=True)
    with tf.Session() as s:
        out = s.run(y)
    assert set(np.unique(out)) <= {0.0, 2.0}
    assert all(len(set(row)) == 1 for row in out)  # one draw per row


def test_flatten_shapes_as_tf1():
    assert tf.layers.flatten(tf.placeholder(tf.float32, [None, 3, 3, 4])).shape.as_list() == [None, 36]
    unknown = tf.layers.flatten(tf.placeholder(tf.float32, [None, None, 3]))
    assert unknown.shape.as_list() == [None, None]
    one = tf.layers.flatten(tf.placeholder(tf.float32, [None]))
    assert one.shape.as_list() == [None, 1]
    xv = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = tf.placeholder(tf.float32, [None, None, 4])
    first = tf.layers.Flatten(data_format="channels_first")(x)
    out = run_modes([tf.layers.flatten(x), first], {x: xv})
    np.testing.assert_array_equal(out[0], xv.reshape(2, -1))
    np.testing.assert_array_equal(out[1], xv.transpose(0, 2, 1).reshape(2, -1))


def test_a_dense_network_trains_with_its_gradients():
    rng = np.random.RandomState(1)
    xv = rng.randn(64, 3).astype(np.float32)
    yv = (xv @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    x, t = tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.float32, [None, 1])
    pred = tf.layers.dense(tf.layers.dense(x, 8, activation=tf.nn.tanh), 1)
    loss = tf.losses.mean_squared_error(t, pred)
    step = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        first = s.run(loss, {x: xv, t: yv})
        for _ in range(150):
            s.run(step, {x: xv, t: yv})
        last = s.run(loss, {x: xv, t: yv})
    assert last < 0.05 * first


def test_gradient_of_dense_against_central_differences():
    x = tf.constant(np.random.RandomState(2).randn(3, 4))
    y = tf.layers.dense(x, 2, activation=tf.nn.tanh, kernel_initializer=tf.random_normal_initializer(seed=1))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        err = tf.test.compute_gradient_error(x, [3, 4], y, [3, 2])
    assert err < 1e-4


def test_missing_layer_names_say_so():
    with pytest.raises(AttributeError, match="dflow does not provide tf.layers.separable_conv1d"):
        tf.layers.separable_conv1d  # noqa: B018


def test_a_user_layer_subclass_and_get_set_weights():
    class Scale(tf.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_variable("w", [int(input_shape[-1])], initializer=tf.ones_initializer())
            super().build(input_shape)

        def call(self, inputs):
            return inputs * self.w

    x = tf.constant(np.ones((2, 3), np.float32))
    layer = Scale()
    y = layer(x)
    assert layer.w.name == "scale/w:0" and layer.trainable_variables == [layer.w]
    with tf.Session() as s, s.as_default():
        s.run(tf.global_variables_initializer())
        layer.set_weights([np.array([1.0, 2.0, 3.0])])
        np.testing.assert_array_equal(layer.get_weights()[0], [1, 2, 3])
        np.testing.assert_array_equal(s.run(y), [[1, 2, 3], [1, 2, 3]])
        with pytest.raises(ValueError, match="expecting 1 weights"):
            layer.set_weights([])


def test_dropout_rate_from_a_fed_keep_prob():
    x = tf.placeholder(tf.float32, [None, 100])
    keep_prob = tf.placeholder(tf.float32, [])
    y = tf.layers.dropout(x, rate=1 - keep_prob, training=True)
    with tf.Session() as s:
        out = s.run(y, {x: np.ones((20, 100), np.float32), keep_prob: 0.8})
        full = s.run(y, {x: np.ones((20, 100), np.float32), keep_prob: 1.0})
    assert set(np.unique(out)) == {0.0, 1.25} and 0.7 < (out != 0).mean() < 0.9
    np.testing.assert_array_equal(full, 1.0)


def test_layers_in_templates_and_auto_reuse_functions_share_variables():
    x = tf.placeholder(tf.float32, [None, 4])
    net = tf.make_template("net", lambda x: tf.layers.dense(tf.layers.dense(x, 3), 2))
    net(x), net(x)

    def encoder(x):
        with tf.variable_scope("enc", reuse=tf.AUTO_REUSE):
            return tf.layers.dense(x, 3)

    encoder(x), encoder(x)
    with tf.variable_scope("a"):
        with tf.variable_scope(None, default_name="b"):
            pass
    with tf.variable_scope("a"):
        with tf.variable_scope(None, default_name="b") as first, tf.variable_scope(None, default_name="c"):
            pass
        with tf.variable_scope(None, default_name="b") as second:
            pass
    # TF 2.21.0 compat.v1: leaving a named scope resets its sub-scopes' default-name counters
    assert [v.name for v in tf.global_variables()] == [
        "net/dense/kernel:0", "net/dense/bias:0", "net/dense_1/kernel:0", "net/dense_1/bias:0", "enc/dense/kernel:0",
        "enc/dense/bias:0"]
    assert (first.name, second.name) == ("a/b", "a/b_1")


def test_gan_style_discriminator_called_twice_with_reuse():
    def discriminator(x, reuse=False):
        with tf.variable_scope("discriminator", reuse=reuse):
            h = tf.layers.dense(x, 8, activation=tf.nn.leaky_relu)
            return tf.layers.dense(h, 1)

    real = tf.placeholder(tf.float32, [None, 2])
    with tf.variable_scope("generator"):
        fake = tf.layers.dense(tf.random_normal([4, 3]), 2)
    discriminator(real), discriminator(fake, reuse=True)
    assert [v.name for v in tf.trainable_variables("discriminator")] == [
        "discriminator/dense/kernel:0", "discriminator/dense/bias:0", "discriminator/dense_1/kernel:0",
        "discriminator/dense_1/bias:0"]
    assert len(tf.trainable_variables()) == 6
