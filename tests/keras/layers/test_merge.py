"""Keras's merge layers and their functions against numpy."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import layers as L

from .conftest import roundtrip, run


def _inputs(rng, *shapes):
    values = [rng.randn(*s).astype(np.float32) for s in shapes]
    phs = [tf.placeholder(tf.float32, s) for s in shapes]
    return values, phs


def test_elementwise_merges(rng):
    (a, b, c), phs = _inputs(rng, (2, 3), (2, 3), (2, 3))
    outs = [L.add(phs), L.subtract(phs[:2]), L.multiply(phs), L.average(phs), L.maximum(phs), L.minimum(phs)]
    values, _ = run(outs, dict(zip(phs, (a, b, c))))
    expects = [a + b + c, a - b, a * b * c, (a + b + c) / 3, np.maximum(np.maximum(a, b), c),
               np.minimum(np.minimum(a, b), c)]
    for value, expect in zip(values, expects):
        np.testing.assert_allclose(value, expect, rtol=1e-5)


def test_broadcast_of_lower_rank_after_batch_axis(rng):
    (a, b), phs = _inputs(rng, (2, 3, 4), (2, 4))
    layer = L.Add()
    out = layer(phs)
    value, _ = run(out, dict(zip(phs, (a, b))))
    np.testing.assert_allclose(value, a + b[:, None, :], rtol=1e-6)
    assert layer.compute_output_shape([(2, 3, 4), (2, 1, 4)]).as_list() == [2, 3, 4]


def test_concatenate_and_dot(rng):
    (a, b), phs = _inputs(rng, (2, 3, 4), (2, 3, 4))
    outs = [L.concatenate(phs, axis=1), L.Concatenate()(phs), L.dot(phs, axes=2), L.Dot(axes=(1, 1))(phs),
            L.dot(phs, axes=-1, normalize=True)]
    values, _ = run(outs, dict(zip(phs, (a, b))))
    na, nb = a / np.linalg.norm(a, axis=-1, keepdims=True), b / np.linalg.norm(b, axis=-1, keepdims=True)
    expects = [np.concatenate([a, b], 1), np.concatenate([a, b], -1), np.einsum("bij,bkj->bik", a, b),
               np.einsum("bji,bjk->bik", a, b), np.einsum("bij,bkj->bik", na, nb)]
    for out, value, expect in zip(outs, values, expects):
        np.testing.assert_allclose(value, expect, rtol=1e-4, atol=1e-5)
        assert tuple(out.shape.as_list()) == expect.shape
    (x, y), phs = _inputs(rng, (2, 3), (2, 3))
    layer = L.Dot(axes=1)
    value, _ = run(layer(phs), dict(zip(phs, (x, y))))
    np.testing.assert_allclose(value, (x * y).sum(1, keepdims=True), rtol=1e-5)
    assert layer.compute_output_shape([(2, 3), (2, 3)]).as_list() == [2, 1]


def test_merge_gradient(rng):
    (a, b), phs = _inputs(rng, (2, 3), (2, 3))
    g = tf.gradients(tf.reduce_sum(L.multiply(phs)), phs)
    values, _ = run(g, dict(zip(phs, (a, b))))
    np.testing.assert_allclose(values[0], b)
    np.testing.assert_allclose(values[1], a)


def test_masks_are_combined(rng):
    (a, b), phs = _inputs(rng, (2, 3, 2), (2, 3, 2))
    ma, mb = tf.placeholder(tf.bool, [2, 3]), tf.placeholder(tf.bool, [2, 3])
    layer = L.Add()
    mask = layer.compute_mask(phs, [ma, mb])
    cmask = L.Concatenate(axis=-1).compute_mask(phs, [ma, None])  # Keras: all() over the last axis
    feed = {ma: [[1, 1, 0], [1, 0, 0]], mb: [[1, 0, 0], [1, 1, 1]], phs[0]: a, phs[1]: b}
    (m, cm), _ = run([mask, cmask], feed)
    np.testing.assert_array_equal(m, [[1, 0, 0], [1, 0, 0]])
    np.testing.assert_array_equal(cm, [[1, 1, 0], [1, 0, 0]])


def test_errors_with_keras_wording():
    a, b = tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [2, 4])
    with pytest.raises(ValueError, match="Operands could not be broadcast together with shapes"):
        L.Add()([a, b])
    with pytest.raises(ValueError, match="at least 2 inputs"):
        L.Add()([a])
    with pytest.raises(ValueError, match="should be called on a list of inputs"):
        L.Add()(a)
    with pytest.raises(ValueError, match="exactly 2 inputs"):
        L.Subtract()([a, a, a])
    with pytest.raises(ValueError, match="matching shapes except for the concat axis"):
        L.Concatenate(axis=0)([a, b])
    with pytest.raises(ValueError, match="Dimension incompatibility 3 != 4"):
        L.Dot(axes=1)([a, b])


def test_configs():
    assert L.Dot(axes=(1, 2), normalize=True).get_config()["axes"] == (1, 2)
    for layer in [L.Add(), L.Concatenate(axis=1), L.Dot(axes=1, normalize=True), L.Maximum()]:
        roundtrip(layer)
