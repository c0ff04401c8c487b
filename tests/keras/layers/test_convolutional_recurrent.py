"""ConvLSTM2D against a numpy ConvLSTM (TF 1.15's gate order i, f, c, o and hard_sigmoid)."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from dflow.keras import layers as L

from ._ref import hard_sigmoid
from .conftest import roundtrip, run, weights


def _conv(x, w, stride=(1, 1), padding="valid"):
    """NHWC x [n, h, w, c] by w [kh, kw, c, f] (TF's SAME: pad_before = total // 2)."""
    kh, kw = w.shape[:2]
    if padding == "same":
        pads = []
        for n, k, s in zip(x.shape[1:3], (kh, kw), stride):
            out = -(-n // s)
            total = max((out - 1) * s + k - n, 0)
            pads.append((total // 2, total - total // 2))
        x = np.pad(x, [(0, 0), pads[0], pads[1], (0, 0)])
    oh = (x.shape[1] - kh) // stride[0] + 1
    ow = (x.shape[2] - kw) // stride[1] + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw]
            out[:, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def _convlstm(x, w, padding="valid", stride=(1, 1), lengths=None, go_backwards=False):
    kernel, rec, bias = (a.astype(np.float64) for a in w)
    f = rec.shape[2]
    h = c = None
    outs = []
    order = range(x.shape[1] - 1, -1, -1) if go_backwards else range(x.shape[1])
    for t in order:
        z = [_conv(x[:, t], kernel[..., g * f:(g + 1) * f], stride, padding) + bias[g * f:(g + 1) * f]
             for g in range(4)]
        if h is None:
            h = c = np.zeros_like(z[0])
            prev = h
        z = [zg + _conv(h, rec[..., g * f:(g + 1) * f], padding="same") for g, zg in enumerate(z)]
        c_new = hard_sigmoid(z[1]) * c + hard_sigmoid(z[0]) * np.tanh(z[2])
        h_new = hard_sigmoid(z[3]) * np.tanh(c_new)
        if lengths is not None:
            m = (t < np.asarray(lengths))[:, None, None, None]
            h_new, c_new = np.where(m, h_new, h), np.where(m, c_new, c)
            out = np.where(m, h_new, prev)
        else:
            out = h_new
        h, c, prev = h_new, c_new, out
        outs.append(out)
    return np.stack(outs, 1), h, c


def _x(rng, shape=(2, 3, 5, 4, 2)):
    return rng.uniform(-1, 1, shape).astype(np.float32)


@pytest.mark.parametrize("static_time", [True, False])
def test_convlstm2d_forward_names_and_states(rng, static_time):
    xv = _x(rng)
    x = tf.placeholder(tf.float32, [None, 3 if static_time else None, 5, 4, 2])
    layer = L.ConvLSTM2D(3, (2, 3), padding="same", return_sequences=True, return_state=True,
                         bias_initializer="random_uniform")
    out, h, c = layer(x)
    # TF 1.15 names the class conv_lst_m2d (its to_snake_case); kernel [kh, kw, in, 4f]
    assert [v.name for v in layer.weights] == ["conv_lst_m2d/kernel:0", "conv_lst_m2d/recurrent_kernel:0",
                                               "conv_lst_m2d/bias:0"]
    assert [v.shape.as_list() for v in layer.weights] == [[2, 3, 2, 12], [2, 3, 3, 12], [12]]
    assert out.shape.as_list() == [None, 3 if static_time else None, 5, 4, 3]
    (o, hv, cv), sess = run([out, h, c], {x: xv})
    ref, rh, rc = _convlstm(xv.astype(np.float64), weights(layer, sess), padding="same")
    np.testing.assert_allclose(o, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(hv, rh, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cv, rc, rtol=1e-5, atol=1e-5)


def test_convlstm2d_strides_mask_go_backwards_and_gradient(rng):
    xv = _x(rng, (2, 3, 5, 5, 1))
    x = tf.placeholder(tf.float32, xv.shape)
    mask = tf.placeholder(tf.bool, [2, 3])
    layer = L.ConvLSTM2D(2, 3, strides=2, go_backwards=True)
    y = layer(x, mask=mask)
    assert y.shape.as_list() == [2, 2, 2, 2]
    loss = tf.reduce_sum(y * y)
    grad = tf.gradients(loss, layer.weights[0])[0]
    mv = np.array([[1, 1, 1], [1, 1, 0]], bool)
    (out, g), sess = run([y, grad], {x: xv, mask: mv})
    w = weights(layer, sess)
    ref, _, _ = _convlstm(xv.astype(np.float64), w, stride=(2, 2), lengths=[3, 2], go_backwards=True)
    np.testing.assert_allclose(out, ref[:, -1], rtol=1e-5, atol=1e-5)
    eps, idx = 1e-6, (1, 2, 0, 5)
    wp = [a.astype(np.float64) for a in w]
    wm = [a.astype(np.float64) for a in w]
    wp[0][idx] += eps
    wm[0][idx] -= eps

    def f(ws):
        return (_convlstm(xv.astype(np.float64), ws, stride=(2, 2), lengths=[3, 2], go_backwards=True)[0][:, -1]
                ** 2).sum()
    np.testing.assert_allclose(g[idx], (f(wp) - f(wm)) / (2 * eps), rtol=1e-3, atol=1e-5)


def test_convlstm2d_channels_first_and_unit_forget_bias(rng):
    xv = _x(rng, (1, 2, 2, 4, 3))  # [batch, time, channels, rows, cols]
    x = tf.placeholder(tf.float32, xv.shape)
    layer = L.ConvLSTM2D(2, 2, data_format="channels_first", return_sequences=True)
    y = layer(x)
    assert y.shape.as_list() == [1, 2, 2, 3, 2]
    assert layer.compute_output_shape(xv.shape).as_list() == [1, 2, 2, 3, 2]
    (out,), sess = run([y], {x: xv})
    w = weights(layer, sess)
    np.testing.assert_array_equal(w[2], [0, 0, 1, 1, 0, 0, 0, 0])  # ones on the forget gate
    ref, _, _ = _convlstm(xv.transpose(0, 1, 3, 4, 2).astype(np.float64), w)
    np.testing.assert_allclose(out, ref.transpose(0, 1, 4, 2, 3), rtol=1e-5, atol=1e-5)


def test_convlstm2d_dropout_config_and_errors(rng):
    x = tf.placeholder(tf.float32, [2, 3, 4, 4, 1])
    layer = L.ConvLSTM2D(2, 3, dropout=0.5, recurrent_dropout=0.5)
    train, test = layer(x, training=True), layer(x, training=False)
    (a, b), sess = run([train, test], {x: _x(rng, (2, 3, 4, 4, 1))})
    assert a.shape == b.shape == (2, 2, 2, 2) and not np.allclose(a, b)
    config = layer.get_config()
    assert config["recurrent_activation"] == "hard_sigmoid" and config["unit_forget_bias"] is True
    assert config["dropout"] == 0.5 and config["return_sequences"] is False
    roundtrip(layer)
    with pytest.raises(ValueError, match="expected ndim=5"):
        L.ConvLSTM2D(2, 3)(tf.placeholder(tf.float32, [2, 3, 4, 4]))
    with pytest.raises(NotImplementedError, match="stateful"):
        L.ConvLSTM2D(2, 3, stateful=True)


def test_eager_convlstm2d(rng):
    xv = _x(rng, (1, 2, 3, 3, 1))
    with tfe.eager_mode():
        layer = L.ConvLSTM2D(1, 2, padding="same", bias_initializer="ones")
        out = layer(tf.constant(xv), training=False).numpy()
        w = [v.numpy() for v in layer.weights]
    np.testing.assert_allclose(out, _convlstm(xv.astype(np.float64), w, padding="same")[1], rtol=1e-5, atol=1e-5)
