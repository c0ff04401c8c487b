"""model_to_estimator: the Estimator starts from the Keras weights, trains, evaluates and predicts."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from dflow import keras


def _mse(y, p):
    return tf.reduce_mean(tf.square(y - p), axis=-1)


def test_model_to_estimator_predicts_the_keras_model_then_trains(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.rand(64, 4).astype(np.float32)
    y = x.sum(1, keepdims=True)
    inp = keras.Input(shape=(4,), name="x")
    out = keras.layers.Dense(1, name="y")(keras.layers.Dense(8, activation="relu")(inp))
    model = keras.Model(inp, out)
    model.compile(tf.train.GradientDescentOptimizer(0.05), _mse)
    expected = model.predict(x[:5])
    est = keras.estimator.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    predict_fn = tf.estimator.inputs.numpy_input_fn({"x": x[:5]}, shuffle=False)
    got = np.stack([p["y"] for p in est.predict(predict_fn)])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)  # warm-started from the Keras weights
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=16, num_epochs=10, shuffle=False))
    result = est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": x}, y, shuffle=False))
    assert result["global_step"] == 40
    assert result["loss"] < model.evaluate(x, y, verbose=0)  # training moved on from the Keras weights


def test_model_to_estimator_refuses_what_it_cannot_rebuild():
    class Sub(keras.Model):
        def call(self, inputs):
            return inputs
    with pytest.raises(ValueError, match="subclassed"):
        keras.estimator.model_to_estimator(keras_model=Sub())
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    with pytest.raises(ValueError, match="has not been compiled"):
        keras.estimator.model_to_estimator(keras_model=model)
    with pytest.raises(ValueError, match="Either `keras_model` or `keras_model_path`"):
        keras.estimator.model_to_estimator()
