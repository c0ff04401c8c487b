"""DenseFeatures: feature columns as a Keras layer (numpy references, variable names, reuse)."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import layers as L

from .conftest import weights


def run(fetches, feed=None):
    sess = tf.Session()
    sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
    return sess.run(fetches, feed), sess


def _columns():
    price = tf.feature_column.numeric_column("price")
    size = tf.feature_column.numeric_column("size", shape=2)
    color = tf.feature_column.categorical_column_with_vocabulary_list("color", ["r", "g", "b"])
    return price, size, color


def test_dense_features_numeric_indicator_embedding():
    price, size, color = _columns()
    emb = tf.feature_column.embedding_column(color, 2)
    layer = L.DenseFeatures([size, price, tf.feature_column.indicator_column(color), emb])
    features = {"price": tf.constant([[1.0], [5.0]]), "size": tf.constant([[1.0, 2.0], [3.0, 4.0]]),
                "color": tf.constant([["g"], ["b"]])}
    out = layer(features)
    again = layer(features)  # the second call reuses the embedding
    # TF 1.15's DenseFeatures: dense_features/color_embedding/embedding_weights:0
    assert [v.name for v in layer.weights] == ["dense_features/color_embedding/embedding_weights:0"]
    assert out.shape.as_list()[1] == 8
    assert layer.compute_output_shape({"price": (None, 1)}).as_list() == [None, 8]
    (a, b), sess = run([out, again])
    (table,) = weights(layer, sess)
    # columns sorted by name: color_embedding, color_indicator, price, size
    ref = np.concatenate([table[[1, 2]], np.eye(3)[[1, 2]], [[1.0], [5.0]], [[1.0, 2.0], [3.0, 4.0]]], 1)
    np.testing.assert_allclose(a, ref, rtol=1e-6)
    np.testing.assert_allclose(b, ref, rtol=1e-6)
    grad = tf.gradients(tf.reduce_sum(out), layer.weights)[0]
    g = sess.run(tf.convert_to_tensor(grad))
    np.testing.assert_allclose(g, [[0, 0], [1, 1], [1, 1]])


def test_dense_features_sparse_input_and_errors():
    _, _, color = _columns()
    layer = L.DenseFeatures(tf.feature_column.indicator_column(color))
    sparse = tf.SparseTensor(indices=[[0, 0], [1, 0], [1, 1]], values=["r", "g", "b"], dense_shape=[2, 2])
    (out,), _ = run([layer({"color": sparse})])
    np.testing.assert_allclose(out, [[1, 0, 0], [0, 1, 1]])
    with pytest.raises(ValueError, match="We expected a dictionary here"):
        layer(tf.constant([1.0]))
    with pytest.raises(ValueError, match="Items of feature_columns must be"):
        L.DenseFeatures([color])
    config = L.DenseFeatures([tf.feature_column.numeric_column("a")], name="df").get_config()
    assert config["name"] == "df" and len(config["feature_columns"]) == 1
    assert isinstance(L.DenseFeatures.from_config(config), L.DenseFeatures)
