"""tf.keras models: building (functional, Sequential, subclassed), training steps against numpy,
the data inputs fit takes, schedulers, and the errors a user meets."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from dflow import keras
from dflow.keras import backend as K


@pytest.fixture(autouse=True)
def _keras_session():
    yield
    K.set_session(None)


def _mse(y, p):
    return tf.reduce_mean(tf.square(y - p), axis=-1)


def _data(n=24, d=4, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, d).astype(np.float32)
    y = (x @ rng.randn(d, 1) + 0.5).astype(np.float32)
    return x, y


def _np_step(w1, b1, w2, b2, x, y, lr):
    """One SGD step of mean((relu(x w1 + b1) w2 + b2 - y)^2) (Keras's mse, batch mean)."""
    h_pre = x @ w1 + b1
    h = np.maximum(h_pre, 0)
    p = h @ w2 + b2
    n = len(x)
    g_p = 2 * (p - y) / n
    g_w2, g_b2 = h.T @ g_p, g_p.sum(0)
    g_h = g_p @ w2.T * (h_pre > 0)
    g_w1, g_b1 = x.T @ g_h, g_h.sum(0)
    loss = np.mean((p - y) ** 2)
    return [w1 - lr * g_w1, b1 - lr * g_b1, w2 - lr * g_w2, b2 - lr * g_b2], loss


def _mlp():
    return keras.Sequential([keras.layers.Dense(5, activation="relu", input_shape=(4,)), keras.layers.Dense(1)])


def test_sequential_names_shapes_and_summary(capsys):
    model = _mlp()
    assert model.name == "sequential"
    assert [v.name for v in model.weights] == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    assert model.input.name == "dense_input:0" and model.output.name == "dense_1/BiasAdd:0"
    assert model.input_shape == (None, 4) and model.output_shape == (None, 1)
    assert [layer.name for layer in model.layers] == ["dense", "dense_1"]
    model.summary()
    # TF 1.15's layout (tf.keras print_summary, 65 columns for a sequential stack)
    assert capsys.readouterr().out.splitlines() == [
        'Model: "sequential"',
        "_" * 65,
        "Layer (type)                 Output Shape              Param #   ",
        "=" * 65,
        "dense (Dense)                (None, 5)                 25        ",
        "_" * 65,
        "dense_1 (Dense)              (None, 1)                 6         ",
        "=" * 65,
        "Total params: 31",
        "Trainable params: 31",
        "Non-trainable params: 0",
        "_" * 65]


def test_functional_model_reapplies_to_new_inputs():
    inp = keras.Input(shape=(4,), name="features")
    hidden = keras.layers.Dense(3, activation="relu")(inp)
    out = keras.layers.Dense(2)(hidden)
    model = keras.Model(inp, out)
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Dense", "Dense"]
    assert model.get_layer("features") is model.layers[0] and model.get_layer(index=2) is model.layers[2]
    other = tf.placeholder(tf.float32, [None, 4])
    again = model(other)
    assert again.name.startswith("model/")
    assert len(tf.trainable_variables()) == 4  # reused, not made again
    x = np.random.RandomState(1).randn(5, 4).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w1, b1, w2, b2 = sess.run(model.weights)
        a, b = sess.run([out, again], {inp: x, other: x})
    np.testing.assert_allclose(a, np.maximum(x @ w1 + b1, 0) @ w2 + b2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a, b)


def test_functional_errors():
    inp = keras.Input(shape=(4,))
    with pytest.raises(ValueError, match="must be the output of a Keras `Layer`"):
        keras.Model(inp, tf.add(inp, 1.0))
    other = keras.Input(shape=(4,))
    out = keras.layers.Dense(1)(other)
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(inp, out)


def test_fit_one_batch_is_one_sgd_step_as_numpy():
    x, y = _data()
    model = _mlp()
    model.compile(tf.train.GradientDescentOptimizer(0.1), _mse)
    start = K.batch_get_value(model.weights)
    history = model.fit(x, y, batch_size=len(x), epochs=1, shuffle=False, verbose=0)
    expected, loss = _np_step(*start, x, y, 0.1)
    for got, want in zip(K.batch_get_value(model.weights), expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(history.history["loss"], [loss], rtol=1e-5)


def test_epoch_loss_is_batch_size_weighted_and_evaluate_predict_match_numpy():
    x, y = _data(n=10)
    model = _mlp()
    model.compile(tf.train.GradientDescentOptimizer(0.0), _mse)  # lr 0: the weights stay put
    w = K.batch_get_value(model.weights)
    pred = np.maximum(x @ w[0] + w[1], 0) @ w[2] + w[3]
    history = model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)  # batches of 4, 4, 2
    np.testing.assert_allclose(history.history["loss"][0], np.mean((pred - y) ** 2), rtol=1e-5)
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=3, verbose=0), np.mean((pred - y) ** 2), rtol=1e-5)
    np.testing.assert_allclose(model.predict(x, batch_size=3), pred, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict_on_batch(x), pred, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.test_on_batch(x, y), np.mean((pred - y) ** 2), rtol=1e-5)


def test_sample_and_class_weights_scale_the_loss():
    x, y = _data(n=6)
    model = _mlp()
    model.compile(tf.train.GradientDescentOptimizer(0.0), _mse)
    w = K.batch_get_value(model.weights)
    per_sample = np.mean((np.maximum(x @ w[0] + w[1], 0) @ w[2] + w[3] - y) ** 2, axis=-1)
    sw = np.arange(1, 7, dtype=np.float32)
    np.testing.assert_allclose(model.test_on_batch(x, y, sample_weight=sw), np.mean(per_sample * sw), rtol=1e-5)
    labels = (y[:, 0] > np.median(y)).astype(np.float32)[:, None]
    got = model.train_on_batch(x, labels, class_weight={0: 1.0, 1: 3.0})
    per_sample = np.mean((np.maximum(x @ w[0] + w[1], 0) @ w[2] + w[3] - labels) ** 2, axis=-1)
    np.testing.assert_allclose(got, np.mean(per_sample * np.where(labels[:, 0] > 0, 3.0, 1.0)), rtol=1e-5)


def test_validation_split_uses_the_last_samples_and_reports_val_loss(capsys):
    x, y = _data(n=20)
    model = _mlp()
    model.compile(tf.train.GradientDescentOptimizer(0.0), _mse)
    history = model.fit(x, y, validation_split=0.25, epochs=2, batch_size=5, verbose=2)
    out = capsys.readouterr().out
    assert "Train on 15 samples, validate on 5 samples" in out and "Epoch 2/2" in out
    np.testing.assert_allclose(history.history["val_loss"][0], model.evaluate(x[15:], y[15:], verbose=0),
                               rtol=1e-5)
    np.testing.assert_allclose(history.history["loss"][0], model.evaluate(x[:15], y[:15], verbose=0), rtol=1e-5)


def test_fit_on_zarr_streams_blocks_and_matches_numpy(tmp_path):
    zarr = pytest.importorskip("zarr")
    x, y = _data(n=40)
    zx = zarr.open(str(tmp_path / "x.zarr"), mode="w", shape=x.shape, chunks=(8, 4), dtype="f4")
    zy = zarr.open(str(tmp_path / "y.zarr"), mode="w", shape=y.shape, chunks=(8, 1), dtype="f4")
    zx[:], zy[:] = x, y
    reads = []

    class Counted:
        """A Zarr array that records each read's rows (what fit holds at once)."""

        def __init__(self, a):
            self.a, self.shape, self.chunks, self.dtype = a, a.shape, a.chunks, a.dtype

        def __getitem__(self, key):
            reads.append(key.stop - key.start)
            return self.a[key]

    results = []
    for xs, ys in ((x, y), (Counted(zx), Counted(zy))):
        tf.reset_default_graph()
        model = _mlp()
        model.set_weights([np.full(w.shape, 0.1, np.float32) for w in model.get_weights()])
        model.compile(tf.train.GradientDescentOptimizer(0.05), _mse)
        model.fit(xs, ys, batch_size=4, epochs=2, shuffle=False, verbose=0)
        results.append(model.get_weights())
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    assert reads and max(reads) == 8  # one chunk of rows at a time, never the whole array


def test_fit_on_a_dataset_and_a_generator():
    x, y = _data(n=16)
    model = _mlp()
    model.compile(tf.train.GradientDescentOptimizer(0.01), _mse)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
    history = model.fit(ds, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2

    def gen():
        while True:
            for i in range(0, 16, 4):
                yield x[i:i + 4], y[i:i + 4]
    history = model.fit_generator(gen(), steps_per_epoch=4, epochs=2, verbose=0)
    assert history.history["loss"][1] < history.history["loss"][0]
    assert model.evaluate_generator(gen(), steps=4) == pytest.approx(model.evaluate(x, y, verbose=0), rel=1e-5)


def test_keras_model_inside_a_user_session_program():
    x, y = _data()
    inp = tf.placeholder(tf.float32, [None, 4])
    target = tf.placeholder(tf.float32, [None, 1])
    pred = keras.layers.Dense(1)(keras.layers.Dense(5, activation="relu")(inp))
    loss = tf.reduce_mean(tf.square(pred - target))
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {inp: x, target: y})
        for _ in range(20):
            sess.run(step, {inp: x, target: y})
        assert sess.run(loss, {inp: x, target: y}) < first


@pytest.mark.parametrize("scheduler", ["sync", "threads", "processes", "distributed"])
def test_same_weights_on_every_scheduler(scheduler, request):
    x, y = _data()

    def train(session):
        tf.reset_default_graph()
        if session is not None:
            K.set_session(session(tf.get_default_graph()))
        model = _mlp()
        model.set_weights([np.linspace(-0.5, 0.5, w.size, dtype=np.float32).reshape(w.shape)
                           for w in model.get_weights()])
        model.compile(tf.train.AdamOptimizer(0.01), _mse)
        model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
        out = model.get_weights()
        K.set_session(None)
        return out

    default = train(None)
    target = request.getfixturevalue("dask_client") if scheduler == "distributed" else scheduler
    forced = train(lambda graph: tf.Session(graph=graph, scheduler=target, small_plan_bytes=0))
    for a, b in zip(default, forced):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_subclassed_model_eager_step_matches_numpy():
    x, y = _data()

    class MLP(keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = keras.layers.Dense(5, activation="relu")
            self.out = keras.layers.Dense(1)

        def call(self, inputs, training=None):
            return self.out(self.hidden(inputs))

    with tfe.eager_mode():
        model = MLP()
        model(x[:1])
        assert [v.name for v in model.weights] == ["mlp/dense/kernel:0", "mlp/dense/bias:0",
                                                   "mlp/dense_1/kernel:0", "mlp/dense_1/bias:0"]
        start = [v.numpy() for v in model.weights]
        model.compile(tf.train.GradientDescentOptimizer(0.1), _mse)
        model.fit(x, y, batch_size=len(x), epochs=1, shuffle=False, verbose=0)
        expected, _ = _np_step(*start, x, y, 0.1)
        for v, want in zip(model.weights, expected):
            np.testing.assert_allclose(v.numpy(), want, rtol=1e-4, atol=1e-6)


def test_eager_functional_and_sequential_models():
    x, y = _data()
    with tfe.eager_mode():
        inp = keras.Input(shape=(4,))
        out = keras.layers.Dense(1)(keras.layers.Dense(5, activation="relu")(inp))
        model = keras.Model(inp, out)
        w = [v.numpy() for v in model.weights]
        np.testing.assert_allclose(model(x).numpy(), np.maximum(x @ w[0] + w[1], 0) @ w[2] + w[3], rtol=1e-5,
                                   atol=1e-6)
        seq = _mlp()
        assert seq.output_shape == (None, 1)
        seq.compile(tf.train.AdamOptimizer(0.05), _mse)
        history = seq.fit(x, y, epochs=5, batch_size=8, verbose=0)
        assert history.history["loss"][-1] < history.history["loss"][0]


def test_to_json_round_trip_rebuilds_the_architecture():
    model = _mlp()
    again = keras.models.model_from_json(model.to_json())
    assert [type(layer).__name__ for layer in again.layers] == ["Dense", "Dense"]
    assert [v.shape.as_list() for v in again.weights] == [v.shape.as_list() for v in model.weights]
    inp = keras.Input(shape=(3,))
    a = keras.layers.Dense(2)(inp)
    b = keras.layers.Dense(2)(inp)
    merged = keras.Model(inp, [a, b])
    rebuilt = keras.models.model_from_json(merged.to_json())
    assert len(rebuilt.outputs) == 2 and len(rebuilt.weights) == 4


def test_user_errors():
    model = _mlp()
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(np.zeros((2, 4)), np.zeros((2, 1)), verbose=0)
    model.compile(tf.train.GradientDescentOptimizer(0.1), _mse)
    with pytest.raises(ValueError, match=r"expected dense_input to have shape \(4,\)"):
        model.fit(np.zeros((2, 3)), np.zeros((2, 1)), verbose=0)
    with pytest.raises(ValueError, match="same number of samples"):
        model.fit(np.zeros((3, 4)), np.zeros((2, 1)), verbose=0)
    with pytest.raises(TypeError, match="must be an instance of class Layer"):
        keras.Sequential([object()])


def test_weighted_metrics_average_with_the_sample_weights():
    x, y = _data(n=8)
    model = _mlp()
    model.compile(tf.train.GradientDescentOptimizer(0.0), _mse, metrics=["mae"], weighted_metrics=["mae"])
    w = K.batch_get_value(model.weights)
    err = np.abs(np.maximum(x @ w[0] + w[1], 0) @ w[2] + w[3] - y)[:, 0]
    sw = np.arange(1, 9, dtype=np.float32)
    loss, mae, weighted = model.test_on_batch(x, y, sample_weight=sw)
    assert model.metrics_names == ["loss", "mean_absolute_error", "weighted_mean_absolute_error"]
    np.testing.assert_allclose([mae, weighted], [err.mean(), (err * sw).sum() / sw.sum()], rtol=1e-5)
