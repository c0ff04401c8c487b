"""AlphaDropout, AbstractRNNCell and tf.keras.layers.serialize/deserialize."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import layers as L

from .conftest import roundtrip, run


def test_alpha_dropout_training_and_inference(rng):
    xv = rng.randn(4000).astype(np.float32)
    x = tf.placeholder(tf.float32, [4000])
    layer = L.AlphaDropout(0.2, seed=1)
    train, test = layer(x, training=True), layer(x, training=False)
    (a, b), _ = run([train, test], {x: xv})
    np.testing.assert_array_equal(b, xv)
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    ka = ((1 - 0.2) * (1 + 0.2 * alpha_p ** 2)) ** -0.5
    kb = -ka * alpha_p * 0.2
    dropped = np.isclose(a, ka * alpha_p + kb, atol=1e-5)
    assert 0.15 < dropped.mean() < 0.25
    np.testing.assert_allclose(a[~dropped], ka * xv[~dropped] + kb, rtol=1e-5, atol=1e-5)
    assert L.AlphaDropout(0.2).compute_output_shape((None, 3)) == (None, 3)
    assert list(layer.get_config())[3:] == ["rate", "seed"]
    roundtrip(layer)


class MinimalCell(L.AbstractRNNCell):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones", name="kernel")
        self.built = True

    def call(self, inputs, states):
        out = tf.matmul(inputs, self.kernel) + states[0]
        return out, [out]


def test_abstract_rnn_cell_runs_in_rnn(rng):
    xv = rng.randn(2, 3, 4).astype(np.float32)
    x = tf.placeholder(tf.float32, [2, 3, 4])
    cell = MinimalCell(2)
    y = L.RNN(cell)(x)
    assert [z.shape.as_list() for z in cell.get_initial_state(x)] == [[2, 2]]
    (out,), _ = run([y], {x: xv})
    np.testing.assert_allclose(out, np.repeat(xv.sum(axis=(1, 2))[:, None], 2, 1), rtol=1e-5)
    with pytest.raises(NotImplementedError):
        _ = L.AbstractRNNCell().state_size


def test_serialize_deserialize():
    config = L.serialize(L.Dense(3, activation="relu", name="d"))
    assert config["class_name"] == "Dense" and config["config"]["units"] == 3
    layer = L.deserialize(config)
    assert isinstance(layer, L.Dense) and layer.get_config() == config["config"]
    assert isinstance(L.deserialize(L.serialize(L.CuDNNGRU(2))), L.CuDNNGRU)
    with pytest.raises(ValueError, match="Unknown layer"):
        L.deserialize({"class_name": "NoSuchLayer", "config": {}})
    assert L.deserialize({"class_name": "MinimalCell", "config": {"units": 2}},
                         custom_objects={"MinimalCell": MinimalCell}).units == 2
