"""Keras's pooling layers against numpy."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import layers as L

from .conftest import roundtrip, run


def np_pool(x, size, fn):
    """Valid, non-overlapping pooling (stride = size) over the spatial axes of channels-last x."""
    rank = x.ndim - 2
    shape = [x.shape[0]]
    for i in range(rank):
        n = x.shape[1 + i] // size
        shape += [n, size]
    trimmed = x[(slice(None),) + tuple(slice(0, (x.shape[1 + i] // size) * size) for i in range(rank))]
    r = trimmed.reshape(shape + [x.shape[-1]])
    return fn(r, axis=tuple(2 + 2 * i for i in range(rank)))


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_pooling_matches_numpy(rng, rank):
    x = rng.randn(2, *([4] * rank), 3).astype(np.float32)
    ph = tf.placeholder(tf.float32, x.shape)
    names = {1: "1D", 2: "2D", 3: "3D"}[rank]
    layers = [getattr(L, "MaxPooling" + names)(), getattr(L, "AveragePooling" + names)(),
              getattr(L, "GlobalMaxPooling" + names)(), getattr(L, "GlobalAveragePooling" + names)()]
    outs = [layer(ph) for layer in layers]
    values, _ = run(outs, {ph: x})
    axes = tuple(range(1, rank + 1))
    expects = [np_pool(x, 2, np.max), np_pool(x, 2, np.mean), x.max(axis=axes), x.mean(axis=axes)]
    for layer, value, expect in zip(layers, values, expects):
        np.testing.assert_allclose(value, expect, rtol=1e-5, atol=1e-6)
        assert tuple(layer.compute_output_shape(x.shape).as_list()) == expect.shape


def test_same_padding_strides_and_channels_first(rng):
    x = rng.randn(1, 3, 5, 2).astype(np.float32)
    ph = tf.placeholder(tf.float32, x.shape)
    same = L.MaxPooling2D(3, strides=1, padding="same")
    first = L.GlobalAveragePooling2D(data_format="channels_first")
    (a, b), _ = run([same(ph), first(ph)], {ph: x})
    padded = np.pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)], constant_values=-np.inf)
    expect = np.stack([np.stack([padded[:, i:i + 3, j:j + 3].max(axis=(1, 2)) for j in range(5)], 1)
                       for i in range(3)], 1)
    np.testing.assert_allclose(a, expect, rtol=1e-6)
    np.testing.assert_allclose(b, x.mean(axis=(2, 3)), rtol=1e-5)


def test_global_average_1d_honours_mask(rng):
    x = rng.randn(2, 4, 3).astype(np.float32)
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], bool)
    ph, mph = tf.placeholder(tf.float32, x.shape), tf.placeholder(tf.bool, mask.shape)
    value, _ = run(L.GlobalAveragePooling1D()(ph, mask=mph), {ph: x, mph: mask})
    np.testing.assert_allclose(value, np.stack([x[0, :2].mean(0), x[1].mean(0)]), rtol=1e-5)


def test_config_aliases_and_errors():
    config = L.MaxPooling2D().get_config()
    assert [k for k in config if k not in ("name", "trainable", "dtype")] == [
        "pool_size", "padding", "strides", "data_format"]
    assert config["strides"] == (2, 2)  # strides=None is pool_size
    assert L.GlobalAveragePooling2D().get_config()["data_format"] == "channels_last"
    for layer in [L.MaxPooling1D(3), L.AveragePooling2D(), L.MaxPooling3D(), L.GlobalMaxPooling3D()]:
        roundtrip(layer)
    assert L.MaxPool2D is L.MaxPooling2D and L.GlobalAvgPool2D is L.GlobalAveragePooling2D
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        L.MaxPooling2D()(tf.placeholder(tf.float32, [1, 4, 4]))
    with pytest.raises(ValueError, match="padding"):
        L.MaxPooling2D(padding="full")
