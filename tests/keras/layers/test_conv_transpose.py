"""Conv2DTranspose's output_padding and dilation_rate, and Conv3DTranspose, against a numpy
scatter: each input position adds x·w at position i·stride + k·dilation of the full output,
then the output is cropped as TF's conv backprop pads (before = max(full - out, 0) // 2 for 'same')."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from dflow.keras import layers as L

from .conftest import roundtrip, run, weights


def _transpose_ref(x, w, strides, padding, out_sizes, dilation=None):
    """x [N, *spatial, C], w [*k, F, C] -> [N, *out_sizes, F]."""
    rank = len(strides)
    dilation = dilation or (1,) * rank
    spatial, ks = x.shape[1:-1], w.shape[:rank]
    eff = [(k - 1) * d + 1 for k, d in zip(ks, dilation)]
    full = [max((n - 1) * s + e, o) for n, s, e, o in zip(spatial, strides, eff, out_sizes)]
    before = [max((n - 1) * s + e - o, 0) // 2 if padding == "same" else 0
              for n, s, e, o in zip(spatial, strides, eff, out_sizes)]
    out = np.zeros([x.shape[0]] + [f + b for f, b in zip(full, before)] + [w.shape[rank]])
    for i in np.ndindex(*spatial):
        for k in np.ndindex(*ks):
            pos = tuple(a * s + b * d for a, b, s, d in zip(i, k, strides, dilation))
            out[(slice(None),) + pos] += x[(slice(None),) + i] @ w[k].T
    crop = tuple(slice(b, b + o) for b, o in zip(before, out_sizes))
    return out[(slice(None),) + crop]


@pytest.mark.parametrize("padding,strides,output_padding,dilation,expect", [
    ("same", (2, 2), (1, 1), (1, 1), (8, 10)),    # (n-1)·s + k - 2·(k//2) + op
    ("valid", (2, 3), (1, 2), (1, 1), (10, 17)),
    ("valid", (1, 1), None, (2, 2), (8, 9)),       # k_eff = 5
    ("same", (1, 1), None, (2, 1), (4, 5)),
])
def test_conv2d_transpose_output_padding_and_dilation(rng, padding, strides, output_padding, dilation, expect):
    xv = rng.randn(2, 4, 5, 2).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4, 5, 2])
    layer = L.Conv2DTranspose(3, 3, strides=strides, padding=padding, output_padding=output_padding,
                              dilation_rate=dilation, bias_initializer="random_uniform")
    y = layer(x)
    assert y.shape.as_list() == [None, *expect, 3]
    assert layer.compute_output_shape((None, 4, 5, 2)).as_list() == [None, *expect, 3]
    grads = tf.gradients(tf.reduce_sum(y * y), layer.weights)
    (out, gb), sess = run([y, grads[1]], {x: xv})
    kernel, bias = weights(layer, sess)
    ref = _transpose_ref(xv.astype(np.float64), kernel, strides, padding, expect, dilation) + bias
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gb, 2 * ref.sum((0, 1, 2)), rtol=1e-4, atol=1e-3)
    config = layer.get_config()
    assert config["dilation_rate"] == tuple(dilation) and config["output_padding"] == output_padding
    roundtrip(layer)


def test_conv2d_transpose_dynamic_spatial_with_output_padding(rng):
    xv = rng.randn(1, 3, 4, 2).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, None, None, 2])
    layer = L.Conv2DTranspose(2, 3, strides=2, padding="same", output_padding=1)
    y = layer(x)
    (out,), sess = run([y], {x: xv})
    kernel, bias = weights(layer, sess)
    np.testing.assert_allclose(out, _transpose_ref(xv, kernel, (2, 2), "same", (6, 8)) + bias, rtol=1e-4, atol=1e-4)


def test_transpose_argument_errors():
    with pytest.raises(ValueError, match="must be greater than output padding"):
        L.Conv2DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="not supported in conjunction with dilation_rate"):
        L.Conv2DTranspose(2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="must be greater than output padding"):
        L.Conv3DTranspose(2, 3, strides=1, output_padding=1)
    with pytest.raises(ValueError, match="expected ndim=5"):
        L.Conv3DTranspose(2, 3)(tf.placeholder(tf.float32, [1, 4, 4, 2]))
    with pytest.raises(ValueError, match="static depth"):
        L.Conv3DTranspose(2, 3)(tf.placeholder(tf.float32, [1, None, 4, 4, 2]))


@pytest.mark.parametrize("padding,strides,output_padding,expect", [
    ("valid", (2, 2, 2), None, (8, 10, 6)),    # (4, 5, 3) by k=2, s=2 -> n·s
    ("valid", (3, 1, 2), None, (12, 6, 6)),    # stride above the kernel: zeros at the end
    ("same", (2, 2, 2), (1, 1, 1), (7, 9, 5)),  # (n-1)·s + k - 2·(k//2) + op
    ("same", (1, 1, 1), None, (4, 5, 3)),
])
def test_conv3d_transpose_forward_and_gradient(rng, padding, strides, output_padding, expect):
    xv = rng.randn(2, 4, 5, 3, 2).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4, 5, 3, 2])
    layer = L.Conv3DTranspose(3, 2, strides=strides, padding=padding, output_padding=output_padding,
                              bias_initializer="random_uniform")
    y = layer(x)
    assert [v.name for v in layer.weights] == ["conv3d_transpose/kernel:0", "conv3d_transpose/bias:0"]
    assert layer.weights[0].shape.as_list() == [2, 2, 2, 3, 2]  # [kd, kh, kw, filters, in]
    assert y.shape.as_list() == [None, *expect, 3]
    assert layer.compute_output_shape((None, 4, 5, 3, 2)).as_list() == [None, *expect, 3]
    grads = tf.gradients(tf.reduce_sum(y * y), [x] + layer.weights)
    (out, gx, gk), sess = run([y, grads[0], grads[1]], {x: xv})
    kernel, bias = weights(layer, sess)
    ref = _transpose_ref(xv.astype(np.float64), kernel, strides, padding, expect) + bias
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    # d sum(y²)/dw[k] = sum over input positions of (2y at i·s + k - before) ⊗ x[i]
    assert gx.shape == xv.shape and gk.shape == kernel.shape
    eps = 1e-3  # a central difference: exact for this quadratic (a one-sided one is off by eps·sum(x²))
    k_up, k_down = kernel.astype(np.float64).copy(), kernel.astype(np.float64).copy()
    k_up[1, 0, 1, 2, 0] += eps
    k_down[1, 0, 1, 2, 0] -= eps
    num = (((_transpose_ref(xv.astype(np.float64), k_up, strides, padding, expect) + bias) ** 2).sum()
           - ((_transpose_ref(xv.astype(np.float64), k_down, strides, padding, expect) + bias) ** 2).sum()) / (2 * eps)
    np.testing.assert_allclose(gk[1, 0, 1, 2, 0], num, rtol=1e-3, atol=1e-3)


def test_conv3d_transpose_channels_first_config_and_alias(rng):
    xv = rng.randn(1, 2, 3, 3, 2).astype(np.float32)
    x = tf.placeholder(tf.float32, xv.shape)
    layer = L.Convolution3DTranspose(2, (2, 1, 2), strides=(1, 2, 1), data_format="channels_first")
    y = layer(x)
    (out,), sess = run([y], {x: xv})
    kernel, bias = weights(layer, sess)
    ref = _transpose_ref(xv.transpose(0, 2, 3, 4, 1), kernel, (1, 2, 1), "valid", (4, 6, 3)) + bias
    np.testing.assert_allclose(out, ref.transpose(0, 4, 1, 2, 3), rtol=1e-4, atol=1e-4)
    config = layer.get_config()
    assert "dilation_rate" not in config and config["output_padding"] is None
    roundtrip(layer)


def test_eager_conv3d_transpose(rng):
    xv = rng.randn(1, 2, 2, 2, 1).astype(np.float32)
    with tfe.eager_mode():
        layer = L.Conv3DTranspose(1, 2, strides=2, kernel_initializer="ones")
        out = layer(tf.constant(xv)).numpy()
    np.testing.assert_allclose(out, _transpose_ref(xv, np.ones((2, 2, 2, 1, 1)), (2, 2, 2), "valid", (4, 4, 4)),
                               rtol=1e-5)
