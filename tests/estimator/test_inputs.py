"""tf.estimator.inputs.numpy_input_fn: batches, epochs and shuffling against a Python reference."""

import numpy as np
import pytest

import dflow as tf


def drain(input_fn):
    """Every (features, labels) batch the input function gives, until it ends."""
    out = []
    with tf.Graph().as_default():
        nxt = input_fn()
        with tf.Session() as sess:
            while True:
                try:
                    out.append(sess.run(nxt))
                except tf.errors.OutOfRangeError:
                    return out


def reference_batches(n, batch_size, num_epochs):
    """TF1's order without shuffling: the rows epoch after epoch, cut into batches across epochs."""
    rows = list(range(n)) * num_epochs
    return [rows[i:i + batch_size] for i in range(0, len(rows), batch_size)]


@pytest.mark.parametrize("n,batch_size,num_epochs", [(7, 3, 1), (5, 2, 2), (4, 4, 3), (3, 128, 1)])
def test_order_and_batches(n, batch_size, num_epochs):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    y = np.arange(n, dtype=np.int64) * 10
    batches = drain(tf.estimator.inputs.numpy_input_fn({"a": x, "b": y + 1}, y, batch_size=batch_size,
                                                       num_epochs=num_epochs, shuffle=False))
    expected = reference_batches(n, batch_size, num_epochs)
    assert len(batches) == len(expected)
    for (features, labels), rows in zip(batches, expected):
        assert sorted(features) == ["a", "b"]
        np.testing.assert_array_equal(features["a"], x[rows])
        np.testing.assert_array_equal(features["b"], y[rows] + 1)
        np.testing.assert_array_equal(labels, y[rows])


def test_shuffle_permutes_each_epoch():
    n = 10
    y = np.arange(n, dtype=np.int64)
    batches = drain(tf.estimator.inputs.numpy_input_fn({"x": y.astype(np.float32)}, y, batch_size=5, num_epochs=3,
                                                       shuffle=True))
    rows = np.concatenate([labels for _, labels in batches])
    assert len(rows) == 3 * n and [len(b[1]) for b in batches] == [5] * 6
    for epoch in rows.reshape(3, n):
        assert sorted(epoch) == list(range(n))
    assert not (rows.reshape(3, n) == np.arange(n)).all()
    for features, labels in batches:
        np.testing.assert_array_equal(features["x"], labels.astype(np.float32))  # rows stay paired


def test_array_x_and_no_y_and_dict_y():
    x = np.arange(6, dtype=np.float64).reshape(3, 2)
    (only,) = drain(tf.estimator.inputs.numpy_input_fn(x, batch_size=3, shuffle=False))
    np.testing.assert_array_equal(only, x)  # an array x is one feature tensor; no y: no labels
    ((features, labels),) = drain(tf.estimator.inputs.numpy_input_fn({"x": x}, {"p": x[:, 0], "q": x[:, 1]},
                                                                      batch_size=3, shuffle=False))
    assert sorted(labels) == ["p", "q"]
    np.testing.assert_array_equal(labels["q"], x[:, 1])


def test_unbounded_epochs_keep_going():
    with tf.Graph().as_default():
        nxt = tf.estimator.inputs.numpy_input_fn({"x": np.arange(3.0)}, batch_size=2, num_epochs=None,
                                                 shuffle=False)()
        with tf.Session() as sess:
            got = [sess.run(nxt)["x"].tolist() for _ in range(4)]
    assert got == [[0, 1], [2, 0], [1, 2], [0, 1]]


def test_errors():
    x = {"x": np.zeros(3)}
    with pytest.raises(ValueError, match="shuffle must be provided explicitly as a bool"):
        tf.estimator.inputs.numpy_input_fn(x)
    with pytest.raises(ValueError, match="Length of tensors in x and y is mismatched"):
        tf.estimator.inputs.numpy_input_fn(x, np.zeros(4), shuffle=False)
    with pytest.raises(ValueError, match="duplicate keys"):
        tf.estimator.inputs.numpy_input_fn(x, {"x": np.zeros(3)}, shuffle=False)
    with pytest.raises(TypeError, match="x must be"):
        tf.estimator.inputs.numpy_input_fn(None, shuffle=False)
