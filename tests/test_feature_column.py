"""tf.feature_column: numeric_column, input_layer and linear_model against numpy, with TF1's names."""

import numpy as np
import pytest

import dflow as tf


def test_input_layer_sorted_normalized_and_flattened():
    rng = np.random.RandomState(0)
    b, a = rng.randn(4, 2, 3).astype(np.float32), rng.randint(0, 9, size=4).astype(np.int64)
    with tf.Graph().as_default():
        cols = [tf.feature_column.numeric_column("b", shape=(2, 3), normalizer_fn=lambda t: t * 2.0),
                tf.feature_column.numeric_column("a", dtype=tf.int64)]
        out = tf.feature_column.input_layer({"b": tf.constant(b), "a": tf.constant(a)}, cols)
        assert out.dtype == tf.float32 and out.shape.as_list() == [4, 7]
        with tf.Session() as sess:
            got = sess.run(out)
    # columns in name order (TF1): a, then b flattened per example
    np.testing.assert_allclose(got, np.concatenate([a[:, None].astype(np.float32), 2 * b.reshape(4, 6)], 1))


def test_linear_model_names_and_values():
    rng = np.random.RandomState(1)
    a, b = rng.randn(5).astype(np.float32), rng.randn(5, 2).astype(np.float32)
    with tf.Graph().as_default():
        cols = [tf.feature_column.numeric_column("b", shape=2), tf.feature_column.numeric_column("a")]
        out = tf.feature_column.linear_model({"a": a, "b": b}, cols, units=3)
        names = [v.op.name for v in tf.global_variables()]
        assert names == ["linear_model/a/weights", "linear_model/b/weights", "linear_model/bias_weights"]
        assert [v.op.name for v in tf.model_variables()] == names
        wa, wb, bias = tf.global_variables()
        assert wa.shape.as_list() == [1, 3] and wb.shape.as_list() == [2, 3] and bias.shape.as_list() == [3]
        values = [rng.randn(1, 3), rng.randn(2, 3), rng.randn(3)]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(out), np.zeros((5, 3)))  # zero-initialized, as TF1
            for v, x in zip((wa, wb, bias), values):
                v.load(x.astype(np.float32), sess)
            got = sess.run(out)
    np.testing.assert_allclose(got, a[:, None] @ values[0] + b @ values[1] + values[2], rtol=1e-5, atol=1e-6)


def test_numeric_column_checks():
    c = tf.feature_column.numeric_column("x", default_value=3.0)
    assert (c.key, c.shape, c.default_value, c.dtype) == ("x", (1,), (3.0,), tf.float32)
    with pytest.raises(ValueError, match="key must be a string"):
        tf.feature_column.numeric_column(1)
    with pytest.raises(ValueError, match="shape dimensions must be greater than 0"):
        tf.feature_column.numeric_column("x", shape=(0,))
    with pytest.raises(ValueError, match="dtype must be convertible to float"):
        tf.feature_column.numeric_column("x", dtype=tf.string)
    with pytest.raises(TypeError, match="normalizer_fn must be a callable"):
        tf.feature_column.numeric_column("x", normalizer_fn=3)
    with pytest.raises(ValueError, match="shape of default_value must be equal"):
        tf.feature_column.numeric_column("x", shape=(2,), default_value=[1.0, 2.0, 3.0])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="'x' of numeric_column is not in features"):
            tf.feature_column.input_layer({"y": tf.constant([1.0])}, [c])
        with pytest.raises(ValueError, match="Duplicate feature column"):
            tf.feature_column.input_layer({"x": tf.constant([1.0])}, [c, c])
