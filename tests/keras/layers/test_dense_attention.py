"""Attention and AdditiveAttention (TF 1.15's dense attention) against numpy."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from dflow.keras import layers as L

from .conftest import roundtrip, run, weights


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _ref(scores, v, v_mask=None, q_mask=None, causal=False):
    if v_mask is not None:
        scores = scores - 1e9 * (1 - v_mask[:, None, :])
    if causal:
        tq, tv = scores.shape[1:]
        scores = scores - 1e9 * (1 - np.tril(np.ones((tq, tv))))[None]
    out = _softmax(scores) @ v
    if q_mask is not None:
        out = out * q_mask[:, :, None]
    return out


def _qkv(rng):
    return (rng.randn(2, 3, 4).astype(np.float32), rng.randn(2, 5, 4).astype(np.float32),
            rng.randn(2, 5, 4).astype(np.float32))


def test_attention_dot_product_with_key_and_masks(rng):
    qv, vv, kv = _qkv(rng)
    q, v, k = (tf.placeholder(tf.float32, a.shape) for a in (qv, vv, kv))
    q_mask = tf.placeholder(tf.bool, [2, 3])
    v_mask = tf.placeholder(tf.bool, [2, 5])
    layer = L.Attention(use_scale=True)
    plain = layer([q, v, k])
    masked = layer([q, v, k], mask=[q_mask, v_mask])
    assert plain.shape.as_list() == [2, 3, 4]
    assert [w.name for w in layer.weights] == ["attention/scale:0"]  # TF: shape (), ones
    qm = np.array([[1, 1, 0], [1, 0, 1]], bool)
    vm = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1]], bool)
    (a, b), sess = run([plain, masked], {q: qv, v: vv, k: kv, q_mask: qm, v_mask: vm})
    (scale,) = weights(layer, sess)
    assert scale == 1.0
    scores = qv.astype(np.float64) @ kv.transpose(0, 2, 1) * scale
    np.testing.assert_allclose(a, _ref(scores, vv), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b, _ref(scores, vv, vm, qm), rtol=1e-5, atol=1e-6)


def test_additive_attention_causal_and_gradient(rng):
    qv, vv, _ = _qkv(rng)
    vv = vv[:, :3]
    q, v = tf.placeholder(tf.float32, qv.shape), tf.placeholder(tf.float32, vv.shape)
    layer = L.AdditiveAttention(causal=True)
    out = layer([q, v])
    assert [w.name for w in layer.weights] == ["additive_attention/scale:0"]
    assert layer.weights[0].shape.as_list() == [4]
    grad = tf.gradients(tf.reduce_sum(out * out), layer.weights)[0]
    (got, g), sess = run([out, grad], {q: qv, v: vv})
    (scale,) = weights(layer, sess)

    def f(s):
        scores = (s * np.tanh(qv[:, :, None, :].astype(np.float64) + vv[:, None, :, :])).sum(-1)
        return _ref(scores, vv, causal=True)

    np.testing.assert_allclose(got, f(scale), rtol=1e-5, atol=1e-6)
    eps, num = 1e-6, np.zeros(4)
    for i in range(4):
        d = np.zeros(4)
        d[i] = eps
        num[i] = ((f(scale + d) ** 2).sum() - (f(scale - d) ** 2).sum()) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-3, atol=1e-4)


def test_keras_masks_flow_and_output_mask(rng):
    qv, vv, _ = _qkv(rng)
    q = tf.placeholder(tf.float32, qv.shape)
    v = tf.placeholder(tf.float32, vv.shape)
    mq = L.Masking(0.0)(q)
    out = L.Attention()([mq, v])
    assert tf.keras.backend.keras_mask(out) is not None
    qv[0, 1] = 0.0
    (got,), _ = run([out], {q: qv, v: vv})
    np.testing.assert_allclose(got[0, 1], 0.0)
    ref = _ref(qv.astype(np.float64) @ vv.transpose(0, 2, 1), vv, q_mask=(qv != 0).any(-1).astype(float))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_config_shape_and_errors():
    layer = L.Attention(use_scale=True, causal=True)
    assert layer.get_config()["use_scale"] is True and layer.get_config()["causal"] is True
    roundtrip(layer)
    roundtrip(L.AdditiveAttention(use_scale=False))
    assert L.AdditiveAttention().compute_output_shape([(None, 3, 4), (None, 5, 6)]).as_list() == [None, 3, 6]
    q = tf.placeholder(tf.float32, [2, 3, 4])
    with pytest.raises(ValueError, match="must be called on a list of inputs"):
        L.Attention()(q)
    with pytest.raises(ValueError, match="accepts inputs list of length 2 or 3"):
        L.Attention()([q])
    with pytest.raises(ValueError, match="mask must be a list"):
        L.Attention()([q, q], mask=tf.placeholder(tf.bool, [2, 3]))


def test_eager_attention(rng):
    qv, vv, _ = _qkv(rng)
    with tfe.eager_mode():
        out = L.Attention()([tf.constant(qv), tf.constant(vv)]).numpy()
    np.testing.assert_allclose(out, _ref(qv.astype(np.float64) @ vv.transpose(0, 2, 1), vv), rtol=1e-5, atol=1e-6)
