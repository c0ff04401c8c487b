"""CuDNNLSTM / CuDNNGRU: cuDNN's math and TF's weight layout (two biases), run on dflow's loop."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import layers as L

from .conftest import roundtrip, run, weights


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _lstm(x, w):
    kernel, rec, bias = (a.astype(np.float64) for a in w)
    u = rec.shape[0]
    h = c = np.zeros((x.shape[0], u))
    outs = []
    for t in range(x.shape[1]):
        z = x[:, t] @ kernel + bias[:4 * u] + h @ rec + bias[4 * u:]
        i, f, g, o = (z[:, k * u:(k + 1) * u] for k in range(4))
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs, 1), h, c


def _gru(x, w):
    kernel, rec, bias = (a.astype(np.float64) for a in w)
    u = rec.shape[0]
    h = np.zeros((x.shape[0], u))
    outs = []
    for t in range(x.shape[1]):
        xw = x[:, t] @ kernel + bias[:3 * u]
        hu = h @ rec + bias[3 * u:]
        z = _sig(xw[:, :u] + hu[:, :u])
        r = _sig(xw[:, u:2 * u] + hu[:, u:2 * u])
        hh = np.tanh(xw[:, 2 * u:] + r * hu[:, 2 * u:])
        h = z * h + (1 - z) * hh
        outs.append(h)
    return np.stack(outs, 1), h


def test_cudnn_lstm_layout_names_and_forward(rng):
    xv = rng.uniform(-1, 1, (2, 4, 5)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4, 5])
    layer = L.CuDNNLSTM(3, return_sequences=True, return_state=True, bias_initializer="random_uniform")
    out, h, c = layer(x)
    # TF 1.15's CuDNNLSTM: kernel (in, 4u), recurrent_kernel (u, 4u), bias (8u,), named cu_dnnlstm/...
    assert [v.name for v in layer.weights] == ["cu_dnnlstm/kernel:0", "cu_dnnlstm/recurrent_kernel:0",
                                               "cu_dnnlstm/bias:0"]
    assert [v.shape.as_list() for v in layer.weights] == [[5, 12], [3, 12], [24]]
    (o, hv, cv), sess = run([out, h, c], {x: xv})
    ref, rh, rc = _lstm(xv.astype(np.float64), weights(layer, sess))
    np.testing.assert_allclose(o, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hv, rh, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cv, rc, rtol=1e-5, atol=1e-6)


def test_cudnn_lstm_unit_forget_bias_and_loaded_weights(rng):
    x = tf.placeholder(tf.float32, [2, 3, 2])
    layer = L.CuDNNLSTM(2)
    y = layer(x)
    _, sess = run(y, {x: np.zeros((2, 3, 2))})
    with sess.as_default():
        bias = layer.get_weights()[2]
        # TF's init: zeros for 5u, ones for u (the recurrent forget bias), zeros for 2u
        np.testing.assert_array_equal(bias, [0] * 10 + [1] * 2 + [0] * 4)
        w = [rng.randn(2, 8).astype(np.float32), rng.randn(2, 8).astype(np.float32),
             rng.randn(16).astype(np.float32)]
        layer.set_weights(w)  # what a TF-trained CuDNNLSTM's weights load as
        xv = rng.randn(2, 3, 2).astype(np.float32)
        got = sess.run(y, {x: xv})
    np.testing.assert_allclose(got, _lstm(xv.astype(np.float64), w)[1], rtol=1e-5, atol=1e-6)


def test_cudnn_gru_forward_and_gradient(rng):
    xv = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    x = tf.placeholder(tf.float32, [2, 3, 4])
    layer = L.CuDNNGRU(3, go_backwards=False, bias_initializer="random_uniform")
    y = layer(x)
    assert [v.name for v in layer.weights] == ["cu_dnngru/kernel:0", "cu_dnngru/recurrent_kernel:0",
                                               "cu_dnngru/bias:0"]
    assert [v.shape.as_list() for v in layer.weights] == [[4, 9], [3, 9], [18]]
    loss = tf.reduce_sum(y * tf.constant([[1.0, -2.0, 0.5]]))
    grads = tf.gradients(loss, layer.weights)
    (out, g_bias), sess = run([y, grads[2]], {x: xv})
    w = weights(layer, sess)
    np.testing.assert_allclose(out, _gru(xv.astype(np.float64), w)[1], rtol=1e-5, atol=1e-6)
    eps, num = 1e-6, np.zeros(18)
    for i in range(18):
        wp = [a.astype(np.float64) for a in w]
        wm = [a.astype(np.float64) for a in w]
        wp[2][i] += eps
        wm[2][i] -= eps
        num[i] = ((_gru(xv, wp)[1] - _gru(xv, wm)[1]) * [1.0, -2.0, 0.5]).sum() / (2 * eps)
    np.testing.assert_allclose(g_bias, num, rtol=1e-3, atol=1e-4)


def test_cudnn_config_and_errors():
    layer = L.CuDNNLSTM(4, return_sequences=True, go_backwards=True)
    config = layer.get_config()
    assert config["units"] == 4 and config["unit_forget_bias"] is True and "unroll" not in config
    assert "activation" not in config and "dropout" not in config
    roundtrip(layer)
    roundtrip(L.CuDNNGRU(2, stateful=True))
    with pytest.raises(ValueError, match="expected ndim=3"):
        L.CuDNNGRU(2)(tf.placeholder(tf.float32, [2, 3]))
    x = tf.placeholder(tf.float32, [2, 3, 2])
    with pytest.raises(ValueError, match="Masking is not supported for CuDNN RNNs"):
        L.CuDNNLSTM(2)(L.Masking()(x))
    with pytest.raises(ValueError, match="units"):
        L.CuDNNLSTM(0)
