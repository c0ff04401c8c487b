"""Keras's convolution and shape layers against numpy."""

import itertools

import numpy as np
import pytest

import dflow as tf
from dflow.keras import layers as L

from .conftest import roundtrip, run, weights


def np_conv(x, k, strides, padding, dilation=None):
    """Channels-last N-D cross-correlation as TF: x [N, *S, C], k [*K, C, F]."""
    rank = x.ndim - 2
    dilation = dilation or (1,) * rank
    eff = [(k.shape[i] - 1) * dilation[i] + 1 for i in range(rank)]
    if padding == "same":
        outs = [-(-x.shape[1 + i] // strides[i]) for i in range(rank)]
        pads = [max((outs[i] - 1) * strides[i] + eff[i] - x.shape[1 + i], 0) for i in range(rank)]
        x = np.pad(x, [(0, 0)] + [(p // 2, p - p // 2) for p in pads] + [(0, 0)])
    outs = [(x.shape[1 + i] - eff[i]) // strides[i] + 1 for i in range(rank)]
    y = np.zeros([x.shape[0]] + outs + [k.shape[-1]])
    for pos in itertools.product(*[range(o) for o in outs]):
        idx = tuple(slice(p * s, p * s + e, d) for p, s, e, d in zip(pos, strides, eff, dilation))
        patch = x[(slice(None),) + idx]
        y[(slice(None),) + pos] = np.tensordot(patch, k, axes=(list(range(1, rank + 2)), list(range(rank + 1))))
    return y


def feed_run(layer, x, **call):
    ph = tf.placeholder(tf.float32, x.shape)
    out = layer(ph, **call)
    value, sess = run(out, {ph: x})
    return value, weights(layer, sess), out


@pytest.mark.parametrize("padding,strides", [("valid", 1), ("same", 2)])
def test_conv1d_2d_3d_match_numpy(rng, padding, strides):
    for rank, cls in ((1, L.Conv1D), (2, L.Conv2D), (3, L.Conv3D)):
        x = rng.randn(2, *([5] * rank), 3).astype(np.float32)
        layer = cls(4, 3, strides=strides, padding=padding, activation="relu")
        y, (k, b), out = feed_run(layer, x)
        expect = np.maximum(np_conv(x, k, (strides,) * rank, padding) + b, 0)
        np.testing.assert_allclose(y, expect, rtol=1e-4, atol=1e-5)
        assert tuple(out.shape.as_list()) == expect.shape
        assert tuple(layer.compute_output_shape(x.shape).as_list()) == expect.shape


def test_variable_names_count_from_zero():
    x = tf.placeholder(tf.float32, [1, 4, 4, 2])
    a, b = L.Conv2D(2, 2), L.Conv2D(2, 2)
    a(x), b(x)
    assert [v.name for v in a.weights + b.weights] == [
        "conv2d/kernel:0", "conv2d/bias:0", "conv2d_1/kernel:0", "conv2d_1/bias:0"]
    s = L.SeparableConv2D(2, 2)
    s(x)
    assert [v.name for v in s.weights] == ["separable_conv2d/depthwise_kernel:0",
                                           "separable_conv2d/pointwise_kernel:0", "separable_conv2d/bias:0"]


def test_conv1d_causal_and_dilation(rng):
    x = rng.randn(2, 7, 3).astype(np.float32)
    layer = L.Conv1D(2, 3, padding="causal", dilation_rate=2)
    y, (k, b), _ = feed_run(layer, x)
    padded = np.pad(x, [(0, 0), (4, 0), (0, 0)])
    np.testing.assert_allclose(y, np_conv(padded, k, (1,), "valid", (2,)) + b, rtol=1e-4, atol=1e-5)
    assert layer.get_config()["padding"] == "causal"


def test_conv2d_channels_first(rng):
    x = rng.randn(2, 3, 5, 5).astype(np.float32)
    y, (k, b), _ = feed_run(L.Conv2D(2, 3, data_format="channels_first"), x)
    expect = np_conv(x.transpose(0, 2, 3, 1), k, (1, 1), "valid") + b
    np.testing.assert_allclose(y, expect.transpose(0, 3, 1, 2), rtol=1e-4, atol=1e-5)


def test_conv2d_transpose_matches_scatter(rng):
    x = rng.randn(2, 3, 3, 2).astype(np.float32)
    y, (k, b), _ = feed_run(L.Conv2DTranspose(3, 2, strides=2), x)
    expect = np.zeros((2, 6, 6, 3))
    for i, j in itertools.product(range(3), range(3)):
        expect[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2] += np.einsum("nc,hwfc->nhwf", x[:, i, j], k)
    np.testing.assert_allclose(y, expect + b, rtol=1e-4, atol=1e-5)


def test_depthwise_and_separable(rng):
    x = rng.randn(2, 5, 5, 3).astype(np.float32)
    y, (dk, b), _ = feed_run(L.DepthwiseConv2D(3, depth_multiplier=2), x)
    per = np.stack([np_conv(x[..., c:c + 1], dk[:, :, c:c + 1, :], (1, 1), "valid") for c in range(3)], axis=3)
    depthwise = per.reshape(2, 3, 3, 6)
    np.testing.assert_allclose(y, depthwise + b, rtol=1e-4, atol=1e-5)
    y, (dk, pk, b), _ = feed_run(L.SeparableConv2D(4, 3, depth_multiplier=2), x)
    per = np.stack([np_conv(x[..., c:c + 1], dk[:, :, c:c + 1, :], (1, 1), "valid") for c in range(3)], axis=3)
    np.testing.assert_allclose(y, per.reshape(2, 3, 3, 6) @ pk[0, 0] + b, rtol=1e-4, atol=1e-5)
    x1 = rng.randn(2, 6, 3).astype(np.float32)
    y, (dk, pk, b), _ = feed_run(L.SeparableConv1D(2, 3), x1)
    per = np.concatenate([np_conv(x1[..., c:c + 1], dk[:, c:c + 1, :], (1,), "valid") for c in range(3)], axis=2)
    np.testing.assert_allclose(y, per @ pk[0] + b, rtol=1e-4, atol=1e-5)


def test_conv2d_kernel_gradient(rng):
    x = rng.randn(2, 4, 4, 2).astype(np.float32)
    ph = tf.placeholder(tf.float32, x.shape)
    layer = L.Conv2D(3, 2)
    g_k, g_b = tf.gradients(tf.reduce_sum(layer(ph)), [layer.kernel, layer.bias])
    (gk, gb), _ = run([g_k, g_b], {ph: x})
    expect = np.zeros((2, 2, 2, 3))
    for i, j in itertools.product(range(2), range(2)):
        expect[i, j] = x[:, i:i + 3, j:j + 3].sum(axis=(0, 1, 2))[:, None]
    np.testing.assert_allclose(gk, expect, rtol=1e-4)
    np.testing.assert_allclose(gb, np.full(3, 2 * 3 * 3), rtol=1e-5)


def test_padding_cropping_upsampling(rng):
    x = rng.randn(2, 3, 4, 2).astype(np.float32)
    cases = [
        (L.ZeroPadding2D(((1, 2), (0, 1))), np.pad(x, [(0, 0), (1, 2), (0, 1), (0, 0)])),
        (L.Cropping2D(((1, 0), (1, 2))), x[:, 1:, 1:2]),
        (L.UpSampling2D((2, 3)), x.repeat(2, axis=1).repeat(3, axis=2)),
    ]
    x1 = rng.randn(2, 5, 2).astype(np.float32)
    x3 = rng.randn(1, 2, 3, 2, 2).astype(np.float32)
    for layer, expect in cases:
        y, _, out = feed_run(layer, x)
        np.testing.assert_allclose(y, expect, rtol=1e-6)
        assert tuple(layer.compute_output_shape(x.shape).as_list()) == expect.shape == tuple(out.shape.as_list())
    for layer, expect in [(L.ZeroPadding1D(2), np.pad(x1, [(0, 0), (2, 2), (0, 0)])), (L.Cropping1D((1, 2)), x1[:, 1:3]),
                          (L.UpSampling1D(3), x1.repeat(3, axis=1))]:
        np.testing.assert_allclose(feed_run(layer, x1)[0], expect, rtol=1e-6)
    for layer, expect in [(L.ZeroPadding3D(1), np.pad(x3, [(0, 0)] + [(1, 1)] * 3 + [(0, 0)])),
                          (L.Cropping3D(((1, 0), (1, 1), (0, 0))), x3[:, 1:, 1:2]),
                          (L.UpSampling3D(2), x3.repeat(2, 1).repeat(2, 2).repeat(2, 3))]:
        np.testing.assert_allclose(feed_run(layer, x3)[0], expect, rtol=1e-6)


def test_upsampling2d_bilinear_as_tf1(rng):
    # TF1's resize_bilinear (align_corners=False, half_pixel_centers=False): source = out · in/out
    x = rng.randn(1, 3, 2, 1).astype(np.float32)
    y, _, _ = feed_run(L.UpSampling2D(2, interpolation="bilinear"), x)

    def interp(a, axis, n_out):
        n_in = a.shape[axis]
        src = np.arange(n_out) * n_in / n_out
        lo = np.floor(src).astype(int)
        hi = np.minimum(lo + 1, n_in - 1)
        frac = (src - lo).reshape([-1 if i == axis else 1 for i in range(a.ndim)])
        return np.take(a, lo, axis) * (1 - frac) + np.take(a, hi, axis) * frac

    np.testing.assert_allclose(y, interp(interp(x, 1, 6), 2, 4), rtol=1e-5, atol=1e-6)


def test_configs_round_trip_with_tf_keys():
    # keys as TF 1.15's tf.keras get_config (tf_keras in v1 mode; `groups` is newer than 1.15)
    conv = L.Conv2D(2, 3, activation="relu", kernel_regularizer="l2")
    assert list(conv.get_config())[3:] == [
        "filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "activation", "use_bias",
        "kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer", "activity_regularizer",
        "kernel_constraint", "bias_constraint"]
    for layer in [conv, L.Conv1D(2, 3, padding="causal"), L.Conv3D(2, 2), L.Conv2DTranspose(2, 3),
                  L.SeparableConv2D(2, 3), L.SeparableConv1D(2, 3), L.DepthwiseConv2D(3),
                  L.ZeroPadding2D(), L.ZeroPadding1D(), L.Cropping1D(), L.Cropping2D(), L.UpSampling1D(),
                  L.UpSampling2D(interpolation="bilinear")]:
        roundtrip(layer)
    dw = L.DepthwiseConv2D(3).get_config()
    assert "filters" not in dw and "kernel_initializer" not in dw and dw["depth_multiplier"] == 1
    assert L.Convolution2D is L.Conv2D and L.Deconvolution2D is L.Conv2DTranspose


def test_bad_input():
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        L.Conv2D(2, 3)(tf.placeholder(tf.float32, [1, 4, 4]))
    with pytest.raises(ValueError, match="channel dimension of the inputs should be defined"):
        L.Conv2D(2, 3)(tf.placeholder(tf.float32, [1, 4, 4, None]))
    with pytest.raises(ValueError, match="interpolation"):
        L.UpSampling2D(interpolation="cubic")
    with pytest.raises(ValueError, match="kernel_size"):
        L.Conv2D(2, (3, 3, 3))
