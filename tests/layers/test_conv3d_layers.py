"""tf.layers' 3-D convolutions and pools: TF1's variable names, shapes, and values against tf.nn."""

import numpy as np

import dflow as tf

RNG = np.random.RandomState(1)


def test_conv3d_layer_names_shapes_and_values():
    x = RNG.randn(2, 4, 5, 6, 3).astype(np.float32)
    y = tf.layers.conv3d(x, 4, (2, 3, 3), strides=(1, 2, 2), padding="same", activation=tf.nn.relu)
    yt = tf.layers.conv3d_transpose(y, 3, 2, strides=2, padding="valid")
    assert y.shape.as_list() == [2, 4, 3, 3, 4]
    assert yt.shape.as_list() == [2, 8, 6, 6, 3]
    assert [v.name for v in tf.trainable_variables()] == [
        "conv3d/kernel:0", "conv3d/bias:0", "conv3d_transpose/kernel:0", "conv3d_transpose/bias:0"]
    k = tf.trainable_variables()[0]
    ref = tf.nn.relu(tf.nn.conv3d(x, k, [1, 1, 2, 2, 1], "SAME"))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got, want, back = s.run([y, ref, yt])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert back.shape == (2, 8, 6, 6, 3)


def test_pooling3d_layers():
    x = RNG.randn(1, 4, 4, 6, 2).astype(np.float32)
    mx = tf.layers.max_pooling3d(x, 2, 2)
    av = tf.layers.AveragePooling3D((2, 2, 3), (2, 2, 3), padding="same")(x)
    first = tf.layers.max_pooling3d(np.transpose(x, [0, 4, 1, 2, 3]), 2, 2, data_format="channels_first")
    with tf.Session() as s:
        m, a, f = s.run([mx, av, first])
    np.testing.assert_allclose(m, x.reshape(1, 2, 2, 2, 2, 3, 2, 2).max((2, 4, 6)))
    np.testing.assert_allclose(a, x.reshape(1, 2, 2, 2, 2, 2, 3, 2).mean((2, 4, 6)), rtol=1e-5)
    np.testing.assert_allclose(f, np.transpose(m, [0, 4, 1, 2, 3]))
