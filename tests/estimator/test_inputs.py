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


def test_pandas_input_fn_gives_columns_by_name():
    import pandas as pd

    n = 7
    x = pd.DataFrame({"age": np.arange(n, dtype=np.float64) + 20, "n": np.arange(n, dtype=np.int64),
                      "city": [f"c{i % 3}" for i in range(n)]}, index=np.arange(n) + 100)
    y = pd.Series(np.arange(n, dtype=np.int64) % 2, index=x.index)
    batches = drain(tf.estimator.inputs.pandas_input_fn(x, y, batch_size=3, num_epochs=2, shuffle=False))
    expected = reference_batches(n, 3, 2)
    assert len(batches) == len(expected)
    for (features, labels), rows in zip(batches, expected):
        assert sorted(features) == ["age", "city", "n"]
        np.testing.assert_array_equal(features["age"], x["age"].to_numpy()[rows])
        assert [v.decode() for v in features["city"]] == [f"c{i % 3}" for i in rows]
        np.testing.assert_array_equal(labels, y.to_numpy()[rows])
    ys = pd.DataFrame({"p": y, "q": y * 2})
    (features, labels), = drain(tf.estimator.inputs.pandas_input_fn(x, ys, batch_size=10, shuffle=False))
    np.testing.assert_array_equal(labels["q"], ys["q"].to_numpy())
    only, = drain(tf.estimator.inputs.pandas_input_fn(x, batch_size=10, shuffle=False))
    np.testing.assert_array_equal(only["n"], np.arange(n))


def test_pandas_input_fn_refuses_as_tf1():
    import pandas as pd

    x = pd.DataFrame({"a": [1.0, 2.0], "target": [0, 1]})
    y = pd.Series([0, 1])
    with pytest.raises(ValueError, match="shuffle must be provided explicitly as a bool"):
        tf.estimator.inputs.pandas_input_fn(x, y)
    with pytest.raises(ValueError, match="Cannot use name target for target column"):
        tf.estimator.inputs.pandas_input_fn(x, y, shuffle=False)
    with pytest.raises(ValueError, match="Index for x and y are mismatched"):
        tf.estimator.inputs.pandas_input_fn(x[["a"]], pd.Series([0, 1], index=[5, 6]), shuffle=False)
    with pytest.raises(TypeError, match="target_column must be a string type"):
        tf.estimator.inputs.pandas_input_fn(x, y, shuffle=False, target_column=3)


def test_a_linear_regressor_trains_from_a_dataframe(tmp_path):
    import pandas as pd

    rng = np.random.default_rng(0)
    x = pd.DataFrame({"a": rng.standard_normal(200), "b": rng.standard_normal(200)})
    y = pd.Series(3.0 * x["a"] - 2.0 * x["b"] + 0.5)
    cols = [tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b")]
    est = tf.estimator.LinearRegressor(cols, model_dir=str(tmp_path), optimizer=tf.train.FtrlOptimizer(0.5))
    est.train(tf.estimator.inputs.pandas_input_fn(x, y, batch_size=50, num_epochs=None, shuffle=True), steps=300)
    loss = est.evaluate(tf.estimator.inputs.pandas_input_fn(x, y, batch_size=200, shuffle=False))["average_loss"]
    assert loss < 0.05, loss
