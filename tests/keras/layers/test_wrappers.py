"""TimeDistributed and Bidirectional against numpy references on the layers' weights."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import backend as K
from dflow.keras import layers as L

from ._ref import gru_step, lstm_step, run

RNG = np.random.RandomState(1)


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(outputs, feed, layers=()):
    with tf.Session() as sess, sess.as_default():
        sess.run(tf.global_variables_initializer())
        return sess.run(outputs, feed), [layer.get_weights() for layer in layers]


def test_time_distributed_dense():
    xv = RNG.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, None, 4])
    layer = L.TimeDistributed(L.Dense(2))
    y = layer(x)
    assert y.shape.as_list() == [None, None, 2]
    assert [v.name for v in layer.weights] == ["time_distributed/kernel:0", "time_distributed/bias:0"]
    out, [(kernel, bias)] = _run(y, {x: xv}, [layer])
    np.testing.assert_allclose(out, xv @ kernel + bias, rtol=1e-6, atol=1e-6)
    assert layer.compute_output_shape((5, 3, 4)).as_list() == [5, 3, 2]
    again = L.TimeDistributed.from_config(layer.get_config())
    assert again.get_config()["layer"]["config"]["units"] == 2
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        L.TimeDistributed(L.Dense(2))(tf.placeholder(tf.float32, [2, 3]))
    with pytest.raises(ValueError, match="with a `Layer` instance"):
        L.TimeDistributed(object())


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_merge_modes(merge_mode):
    xv = RNG.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    x = tf.placeholder(tf.float32, [2, 3, 4])
    layer = L.Bidirectional(L.GRU(3, return_sequences=True), merge_mode=merge_mode)
    y = layer(x)
    out, [w] = _run(y, {x: xv}, [layer])
    fw, _ = run(gru_step, xv.astype(np.float64), w[:3], [np.zeros((2, 3))])
    bw, _ = run(gru_step, xv.astype(np.float64), w[3:], [np.zeros((2, 3))], go_backwards=True)
    bw = bw[:, ::-1]
    want = {"concat": np.concatenate([fw, bw], -1), "sum": fw + bw, "mul": fw * bw, "ave": (fw + bw) / 2,
            None: [fw, bw]}[merge_mode]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_bidirectional_lstm_names_states_masks_and_gradients():
    xv = RNG.uniform(-1, 1, (2, 3, 2)).astype(np.float32)
    xv[1, 2:] = 0
    x = tf.placeholder(tf.float32, [2, 3, 2])
    layer = L.Bidirectional(L.LSTM(2, return_state=True))
    out, h_f, c_f, h_b, c_b = layer(L.Masking()(x))
    assert [v.name for v in layer.weights] == [
        "bidirectional/forward_lstm/kernel:0", "bidirectional/forward_lstm/recurrent_kernel:0",
        "bidirectional/forward_lstm/bias:0", "bidirectional/backward_lstm/kernel:0",
        "bidirectional/backward_lstm/recurrent_kernel:0", "bidirectional/backward_lstm/bias:0"]
    assert out.shape.as_list() == [2, 4]
    grads = tf.gradients(tf.reduce_sum(out), layer.trainable_weights)
    assert all(g is not None for g in grads)
    (o, hf, hb, *_), [w] = _run([out, h_f, h_b] + grads, {x: xv}, [layer])
    for i, n in enumerate([3, 2]):
        row = xv[i:i + 1, :n].astype(np.float64)
        fw, _ = run(lstm_step, row, w[:3], [np.zeros((1, 2))] * 2)
        bw, _ = run(lstm_step, row, w[3:], [np.zeros((1, 2))] * 2, go_backwards=True)
        np.testing.assert_allclose(o[i], np.concatenate([fw[0, -1], bw[0, -1]]), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(o[:, :2], hf)
    np.testing.assert_array_equal(o[:, 2:], hb)


def test_bidirectional_config_and_errors():
    layer = L.Bidirectional(L.LSTM(3), merge_mode="sum")
    config = layer.get_config()
    assert config["merge_mode"] == "sum" and config["layer"]["class_name"] == "LSTM"
    again = L.Bidirectional.from_config(config)
    assert again.merge_mode == "sum" and again.backward_layer.go_backwards
    with pytest.raises(ValueError, match="Invalid merge mode"):
        L.Bidirectional(L.LSTM(3), merge_mode="max")
    with pytest.raises(ValueError, match="different `go_backwards`"):
        L.Bidirectional(L.LSTM(3), backward_layer=L.LSTM(3))
    seq = L.Bidirectional(L.LSTM(2, return_sequences=True))
    x = tf.placeholder(tf.float32, [2, 3, 2])
    y = seq(L.Masking()(x))
    assert y.shape.as_list() == [2, 3, 4]
    assert K.keras_mask(y) is not None
