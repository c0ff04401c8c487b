"""tf.layers convolutions and pools: names and shapes as TF1, values against numpy references
computed with each layer's own variables read back.

Expected names/shapes come from TensorFlow 2.21.0's tf.compat.v1.layers (TF_USE_LEGACY_KERAS=1).
"""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import LOCAL_MODES, make_session


def each_mode(fetches, feed_dict=None):
    """`fetches` after the variables' initializers, in each local mode (dask ones with chunks of 2
    along the batch): one result per mode (each mode draws its own initial values, so each is
    checked against numpy with the variables read back in that run)."""
    results = []
    for m in LOCAL_MODES:
        with make_session(m, chunks=2) as s:
            s.run(tf.global_variables_initializer())
            results.append(s.run(fetches, feed_dict))
    return results


def _pad_same(x, k, s):
    """TF's SAME padding of an [N, H, W, C] array for window k and stride s (per spatial axis)."""
    pads = [(0, 0)]
    for n, kk, ss in zip(x.shape[1:3], k, s):
        out = -(-n // ss)
        total = max((out - 1) * ss + kk - n, 0)
        pads.append((total // 2, total - total // 2))
    return np.pad(x, pads + [(0, 0)])


def conv2d_ref(x, w, strides=(1, 1), padding="valid", dilation=(1, 1)):
    kh, kw = [(k - 1) * d + 1 for k, d in zip(w.shape[:2], dilation)]
    if padding == "same":
        x = _pad_same(x, (kh, kw), strides)
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))  # N, H', W', C, kh, kw
    win = win[:, ::strides[0], ::strides[1], :, ::dilation[0], ::dilation[1]]
    return np.einsum("nhwcij,ijcf->nhwf", win, w)


def conv2d_transpose_ref(x, w, strides, padding, out_hw):
    """The adjoint of conv2d_ref: every input pixel spreads kernel · value into the output."""
    n, h, wd, _ = x.shape
    kh, kw, f, _ = w.shape
    sh, sw = strides
    full_h, full_w = (h - 1) * sh + kh, (wd - 1) * sw + kw
    out = np.zeros((n, max(full_h, out_hw[0] + kh), max(full_w, out_hw[1] + kw), f))
    for i in range(kh):
        for j in range(kw):
            out[:, i:i + (h - 1) * sh + 1:sh, j:j + (wd - 1) * sw + 1:sw, :] += np.einsum("nhwc,fc->nhwf", x, w[i, j])
    if padding == "same":
        total_h = max((h - 1) * sh + kh - out_hw[0], 0)
        total_w = max((wd - 1) * sw + kw - out_hw[1], 0)
        top, left = total_h // 2, total_w // 2
    else:
        top = left = 0
    return out[:, top:top + out_hw[0], left:left + out_hw[1], :]


def pool_ref(x, k, s, padding, op):
    if padding == "same":
        fill = -np.inf if op == "max" else np.nan
        xp = np.pad(x, [(0, 0)] + [(p // 2, p - p // 2) for p in
                                   (max((-(-n // ss) - 1) * ss + kk - n, 0) for n, kk, ss in zip(x.shape[1:3], k, s))]
                    + [(0, 0)], constant_values=fill)
    else:
        xp = x
    win = np.lib.stride_tricks.sliding_window_view(xp, k, axis=(1, 2))[:, ::s[0], ::s[1]]
    return win.max(axis=(-2, -1)) if op == "max" else np.nanmean(win, axis=(-2, -1))


def test_conv_and_pool_names_and_shapes_as_tf1():
    x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    c = tf.layers.conv2d(x, 4, 3)
    c2 = tf.layers.conv2d(c, 4, [3, 3], strides=2, padding="same")
    ct = tf.layers.conv2d_transpose(c, 2, 3, strides=2)
    x1 = tf.placeholder(tf.float32, [None, 10, 3])
    c1 = tf.layers.conv1d(x1, 2, 3)
    sc = tf.layers.separable_conv2d(x, 5, 3)
    p = tf.layers.max_pooling2d(c, 2, 2)
    a = tf.layers.average_pooling2d(c, 2, 2, padding="same")
    p1 = tf.layers.max_pooling1d(x1, 2, 2)
    a1 = tf.layers.average_pooling1d(x1, 2, 1)
    f = tf.layers.flatten(p)
    # TF 2.21.0 tf.compat.v1.layers
    shapes = [[None, 6, 6, 4], [None, 3, 3, 4], [None, 13, 13, 2], [None, 8, 2], [None, 6, 6, 5], [None, 3, 3, 4],
              [None, 3, 3, 4], [None, 5, 3], [None, 9, 3], [None, 36]]
    assert [t.shape.as_list() for t in (c, c2, ct, c1, sc, p, a, p1, a1, f)] == shapes
    assert [t.name for t in (c, ct, p, a, p1, f)] == [
        "conv2d/BiasAdd:0", "conv2d_transpose/BiasAdd:0", "max_pooling2d/MaxPool:0", "average_pooling2d/AvgPool:0",
        "max_pooling1d/Squeeze:0", "flatten/Reshape:0"]
    assert [v.name for v in tf.global_variables()] == [
        "conv2d/kernel:0", "conv2d/bias:0", "conv2d_1/kernel:0", "conv2d_1/bias:0", "conv2d_transpose/kernel:0",
        "conv2d_transpose/bias:0", "conv1d/kernel:0", "conv1d/bias:0", "separable_conv2d/depthwise_kernel:0",
        "separable_conv2d/pointwise_kernel:0", "separable_conv2d/bias:0"]
    assert [v.shape.as_list() for v in tf.global_variables()] == [
        [3, 3, 3, 4], [4], [3, 3, 4, 4], [4], [3, 3, 2, 4], [2], [3, 3, 2], [2], [3, 3, 3, 1], [1, 1, 3, 5], [5]]


@pytest.mark.parametrize("strides,padding,dilation", [((1, 1), "valid", (1, 1)), ((2, 1), "same", (1, 1)),
                                                      ((1, 1), "same", (2, 2))])
def test_conv2d_values_against_numpy(strides, padding, dilation):
    rng = np.random.RandomState(0)
    xv = rng.randn(3, 7, 6, 2).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 7, 6, 2])
    layer = tf.layers.Conv2D(3, (3, 2), strides=strides, padding=padding, dilation_rate=dilation,
                             activation=tf.nn.relu, bias_initializer=tf.random_normal_initializer(seed=4))
    y = layer(x)
    for out, k, b in each_mode([y, layer.kernel, layer.bias], {x: xv}):
        assert list(out.shape[1:]) == y.shape.as_list()[1:]
        np.testing.assert_allclose(out, np.maximum(conv2d_ref(xv, k, strides, padding, dilation) + b, 0),
                                   rtol=1e-4, atol=1e-5)


def test_conv1d_and_channels_first_against_numpy():
    rng = np.random.RandomState(1)
    xv = rng.randn(2, 9, 3).astype(np.float32)
    x = tf.constant(xv)
    layer = tf.layers.Conv1D(4, 3, strides=2, padding="same")
    y = layer(x)
    x4 = tf.constant(xv[:, None])  # [2, 1, 9, 3]
    first = tf.layers.Conv2D(2, (1, 3), data_format="channels_first", bias_initializer=tf.ones_initializer())
    y_first = first(tf.transpose(x4, [0, 3, 1, 2]))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        out, k, b, out_first, kf = s.run([y, layer.kernel, layer.bias, y_first, first.kernel])
    np.testing.assert_allclose(out, conv2d_ref(xv[:, None], k[None], (1, 2), "same")[:, 0] + b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out_first, (conv2d_ref(xv[:, None], kf) + 1).transpose(0, 3, 1, 2), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("strides,padding", [((2, 2), "valid"), ((2, 1), "same"), ((1, 1), "valid")])
def test_conv2d_transpose_against_numpy(strides, padding):
    rng = np.random.RandomState(2)
    xv = rng.randn(2, 4, 3, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4, 3, 3])
    layer = tf.layers.Conv2DTranspose(2, (3, 2), strides=strides, padding=padding,
                                      bias_initializer=tf.constant_initializer(0.25))
    y = layer(x)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        k, out = s.run([layer.kernel, y], {x: xv})
    assert k.shape == (3, 2, 2, 3) and list(out.shape[1:]) == y.shape.as_list()[1:]
    np.testing.assert_allclose(out, conv2d_transpose_ref(xv, k, strides, padding, out.shape[1:3]) + 0.25,
                               rtol=1e-4, atol=1e-5)


def test_separable_conv2d_against_numpy():
    rng = np.random.RandomState(3)
    xv = rng.randn(2, 5, 5, 2).astype(np.float32)
    layer = tf.layers.SeparableConv2D(3, 3, depth_multiplier=2, padding="same")
    y = layer(tf.constant(xv))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        out, dk, pk, b = s.run([y, layer.depthwise_kernel, layer.pointwise_kernel, layer.bias])
    depth = np.concatenate([conv2d_ref(xv[..., c:c + 1], dk[:, :, c:c + 1, :], padding="same") for c in range(2)],
                           axis=-1)
    np.testing.assert_allclose(out, depth @ pk[0, 0] + b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_pools_against_numpy(padding):
    rng = np.random.RandomState(4)
    xv = rng.randn(3, 7, 5, 2).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 7, 5, 2])
    outs, *others = each_mode([tf.layers.max_pooling2d(x, (3, 2), 2, padding=padding),
                      tf.layers.average_pooling2d(x, 2, (2, 1), padding=padding),
                      tf.layers.MaxPooling1D(2, 2, padding=padding)(x[:, 0]),
                      tf.layers.AveragePooling1D(3, 1, padding=padding)(x[:, 0])], {x: xv})
    for other in others:
        for a, b in zip(outs, other):
            np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(outs[0], pool_ref(xv, (3, 2), (2, 2), padding, "max"), rtol=1e-6)
    np.testing.assert_allclose(outs[1], pool_ref(xv, (2, 2), (2, 1), padding, "avg"), rtol=1e-5)
    np.testing.assert_allclose(outs[2], pool_ref(xv[:, :1], (1, 2), (1, 2), padding, "max")[:, 0], rtol=1e-6)
    np.testing.assert_allclose(outs[3], pool_ref(xv[:, :1], (1, 3), (1, 1), padding, "avg")[:, 0], rtol=1e-5)


def test_conv_layer_reuse_and_errors():
    x = tf.placeholder(tf.float32, [None, 6, 6, 3])
    with tf.variable_scope("net"):
        tf.layers.conv2d(x, 2, 3, name="c")
    with tf.variable_scope("net", reuse=True):
        tf.layers.conv2d(x, 2, 3, name="c")
    assert [v.name for v in tf.global_variables()] == ["net/c/kernel:0", "net/c/bias:0"]
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [None, 6, 3]), 2, 3)
    with pytest.raises(ValueError, match="channel dimension of the inputs should be defined"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [None, 6, 6, None]), 2, 3)
    with pytest.raises(ValueError, match="kernel_size"):
        tf.layers.Conv2D(2, (3, 3, 3))
    with pytest.raises(ValueError, match="padding"):
        tf.layers.Conv2D(2, 3, padding="full")


def test_conv_gradients_against_central_differences():
    rng = np.random.RandomState(5)
    x = tf.constant(rng.randn(2, 5, 5, 2))
    y = tf.layers.max_pooling2d(tf.layers.conv2d(x, 3, 3, padding="same", activation=tf.nn.tanh,
                                                 kernel_initializer=tf.random_normal_initializer(seed=2)), 2, 2)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        err = tf.test.compute_gradient_error(x, [2, 5, 5, 2], y, [2, 2, 2, 3])
    assert err < 1e-4


def test_channels_first_pools_match_channels_last():
    xv = np.random.RandomState(6).randn(2, 6, 5, 3).astype(np.float32)
    x = tf.constant(xv)
    xt = tf.transpose(x, [0, 3, 1, 2])
    pairs = [(tf.layers.max_pooling2d(x, 2, 2), tf.layers.max_pooling2d(xt, 2, 2, data_format="channels_first")),
             (tf.layers.average_pooling2d(x, 3, 1, padding="same"),
              tf.layers.average_pooling2d(xt, 3, 1, padding="same", data_format="channels_first"))]
    assert pairs[0][1].shape.as_list() == [2, 3, 3, 2]
    with tf.Session() as s:
        for last, first in s.run(pairs):
            np.testing.assert_allclose(first, last.transpose(0, 3, 1, 2), rtol=1e-6)
