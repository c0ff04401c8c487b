"""Keras's Embedding and Masking against numpy."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import backend as K
from dflow.keras import layers as L


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_embedding_lookup_mask_and_names():
    ids = tf.placeholder(tf.int32, [None, 4])
    layer = L.Embedding(10, 3, input_length=4, mask_zero=True)
    y = layer(ids)
    assert y.shape.as_list() == [None, 4, 3]
    assert [v.name for v in layer.weights] == ["embedding/embeddings:0"]
    ids_v = np.array([[1, 2, 0, 0], [9, 0, 3, 0]])
    with tf.Session() as sess, sess.as_default():
        sess.run(tf.global_variables_initializer())
        out, mask = sess.run([y, K.keras_mask(y)], {ids: ids_v})
        (table,) = layer.get_weights()
    np.testing.assert_array_equal(out, table[ids_v])
    np.testing.assert_array_equal(mask, ids_v != 0)
    assert np.abs(table).max() <= 0.05  # RandomUniform(-0.05, 0.05), Keras's 'uniform'


def test_embedding_gradient_and_float_ids():
    ids = tf.placeholder(tf.float32, [2])
    layer = L.Embedding(4, 2)
    y = layer(ids)
    (g,) = tf.gradients(tf.reduce_sum(y), layer.weights)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        grad = sess.run(tf.convert_to_tensor(g), {ids: [1.0, 1.0]})
    np.testing.assert_array_equal(grad, [[0, 0], [2, 2], [0, 0], [0, 0]])


def test_embedding_config_and_errors():
    layer = L.Embedding(10, 3, input_length=4)
    # the keys and values TF 1.15's tf.keras gives (tf_keras in v1 graph mode, printed)
    assert layer.get_config() == {
        "name": "embedding", "trainable": True, "batch_input_shape": (None, 4), "dtype": "float32",
        "input_dim": 10, "output_dim": 3,
        "embeddings_initializer": {"class_name": "RandomUniform",
                                   "config": {"minval": -0.05, "maxval": 0.05, "seed": None, "dtype": "float32"}},
        "embeddings_regularizer": None, "activity_regularizer": None, "embeddings_constraint": None,
        "mask_zero": False, "input_length": 4}
    assert L.Embedding.from_config(layer.get_config()).get_config() == layer.get_config()
    assert L.Embedding(5, 2).compute_mask(tf.constant([[1, 0]])) is None
    with pytest.raises(ValueError, match="input_length"):
        L.Embedding(10, 3, input_length=4).compute_output_shape((None, 5))
    with pytest.raises(ValueError, match="should be positive"):
        L.Embedding(0, 3)
    with pytest.raises(ValueError, match="expected integer ids"):
        L.Embedding(3, 2)(tf.constant(["a"]))


def test_masking():
    x = tf.placeholder(tf.float32, [2, 3, 2])
    layer = L.Masking(mask_value=-1.0)
    y = layer(x)
    xv = np.array([[[-1, -1], [1, -1], [-1, -1]], [[2, 1], [-1, -1], [-1, 3]]], np.float32)
    with tf.Session() as sess:
        out, mask = sess.run([y, K.keras_mask(y)], {x: xv})
    keep = (xv != -1).any(-1)
    np.testing.assert_array_equal(mask, keep)
    np.testing.assert_array_equal(out, xv * keep[..., None])
    assert L.Masking.from_config(layer.get_config()).mask_value == -1.0
