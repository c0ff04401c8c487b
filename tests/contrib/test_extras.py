"""contrib.layers.layer_norm / one_hot_encoding / softmax and contrib.metrics against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf

layers, metrics = tf.contrib.layers, tf.contrib.metrics


def test_layer_norm_against_numpy():
    xv = np.random.RandomState(0).randn(3, 4, 5).astype(np.float32) * 3 + 1
    y = layers.layer_norm(tf.constant(xv))
    y_last = layers.layer_norm(tf.constant(xv), begin_norm_axis=-1, center=False)
    # TF 1.15 contrib: variable scope LayerNorm, beta/gamma over the last axis, model variables
    assert [v.name for v in tf.model_variables()] == ["LayerNorm/beta:0", "LayerNorm/gamma:0",
                                                      "LayerNorm_1/gamma:0"]
    assert tf.global_variables()[0].shape.as_list() == [5]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        out, out_last = s.run([y, y_last])
    m, v = xv.mean((1, 2), keepdims=True), xv.var((1, 2), keepdims=True)
    np.testing.assert_allclose(out, (xv - m) / np.sqrt(v + 1e-12), rtol=1e-4, atol=1e-5)
    m, v = xv.mean(-1, keepdims=True), xv.var(-1, keepdims=True)
    np.testing.assert_allclose(out_last, (xv - m) / np.sqrt(v + 1e-12), rtol=1e-4, atol=1e-5)


def test_one_hot_encoding_and_softmax():
    o = layers.one_hot_encoding(tf.constant([0, 2, 1]), 3, on_value=2.0)
    logits = np.random.RandomState(1).randn(2, 3, 4).astype(np.float32)
    sm = layers.softmax(tf.constant(logits))
    with tf.Session() as s:
        ov, smv = s.run([o, sm])
    np.testing.assert_array_equal(ov, 2 * np.eye(3)[[0, 2, 1]])
    e = np.exp(logits - logits.max(-1, keepdims=True))
    np.testing.assert_allclose(smv, e / e.sum(-1, keepdims=True), rtol=1e-5)


def test_contrib_metrics_take_predictions_first():
    preds = tf.placeholder(tf.int64, [None])
    labels = tf.placeholder(tf.int64, [None])
    acc, acc_update = metrics.streaming_accuracy(preds, labels)
    mean, mean_update = metrics.streaming_mean(tf.cast(preds, tf.float32))
    values, updates = metrics.aggregate_metric_map({"acc": (acc, acc_update), "mean": (mean, mean_update)})
    once = metrics.accuracy(preds, labels, weights=tf.constant([1.0, 0.0, 1.0]))
    batches = [([1, 0, 2], [1, 1, 2]), ([0, 0, 1], [0, 1, 1])]
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        for p, t in batches:
            s.run(list(updates.values()), {preds: p, labels: t})
        got = s.run(values)
        one = s.run(once, {preds: [1, 0, 2], labels: [1, 1, 0]})
    np.testing.assert_allclose(got["acc"], 4 / 6)
    np.testing.assert_allclose(got["mean"], 4 / 6)
    np.testing.assert_allclose(one, 0.5)
    with pytest.raises(ValueError, match="Labels should have bool, integer, or string dtype"):
        metrics.accuracy(tf.constant([1.0]), tf.constant([1.0]))
    with pytest.raises(ValueError, match="at least one"):
        metrics.aggregate_metrics()


def test_separable_conv2d_names_and_values():
    xv = np.random.RandomState(2).randn(2, 5, 5, 3).astype(np.float32)
    x = tf.constant(xv)
    y = layers.separable_conv2d(x, 4, 3, depth_multiplier=2, activation_fn=None)
    dw_only = tf.contrib.slim.separable_conv2d(x, None, [3, 3], depth_multiplier=1, stride=2, activation_fn=None)
    # TF 1.15 contrib: scope SeparableConv2d, depthwise_weights / pointwise_weights / biases
    assert [v.name for v in tf.model_variables()] == [
        "SeparableConv2d/depthwise_weights:0", "SeparableConv2d/pointwise_weights:0", "SeparableConv2d/biases:0",
        "SeparableConv2d_1/depthwise_weights:0", "SeparableConv2d_1/biases:0"]
    assert y.shape.as_list() == [2, 5, 5, 4] and dw_only.shape.as_list() == [2, 3, 3, 3]
    dk, pk, b, dk1 = tf.model_variables()[:3] + tf.model_variables()[3:4]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        out, out1, dkv, pkv, dk1v = s.run([y, dw_only, dk, pk, dk1])
    padded = np.pad(xv, [(0, 0), (1, 1), (1, 1), (0, 0)])
    win = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))  # n h w c i j
    depth = np.einsum("nhwcij,ijcm->nhwcm", win, dkv).reshape(2, 5, 5, 6)
    np.testing.assert_allclose(out, depth @ pkv[0, 0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out1, np.einsum("nhwcij,ijcm->nhwcm", win[:, ::2, ::2], dk1v)[..., 0],
                               rtol=1e-4, atol=1e-5)
