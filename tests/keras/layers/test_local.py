"""LocallyConnected1D/2D (implementation=1) against a numpy loop over output positions."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import layers as L

from .conftest import roundtrip, run, weights


def _ref(x, kernel, bias, ksize, strides, first=False):
    """Keras's local_conv: at each output position (row-major) the patch, flattened in the
    input's axis order, times that position's matrix."""
    rank = len(ksize)
    spatial = x.shape[2:] if first else x.shape[1:-1]
    out_sizes = [(n - k) // s + 1 for n, k, s in zip(spatial, ksize, strides)]
    outs = []
    for p, index in enumerate(np.ndindex(*out_sizes)):
        sl = [slice(None)] * (rank + 2)
        for d, (i, k, s) in enumerate(zip(index, ksize, strides)):
            sl[d + (2 if first else 1)] = slice(i * s, i * s + k)
        outs.append(x[tuple(sl)].reshape(x.shape[0], -1) @ kernel[p])
    out = np.stack(outs, 1).reshape([x.shape[0]] + out_sizes + [kernel.shape[-1]])
    if first:
        out = np.moveaxis(out, -1, 1)
        return out + bias.reshape((1, bias.shape[-1]) + bias.shape[:-1])
    return out + bias


def test_locally_connected1d_forward_names_and_gradient(rng):
    xv = rng.randn(2, 7, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 7, 3])
    layer = L.LocallyConnected1D(4, 3, strides=2, bias_initializer="random_uniform")
    y = layer(x)
    # TF 1.15: kernel (output_length, kernel_size*input_dim, filters), bias (output_length, filters)
    assert [v.name for v in layer.weights] == ["locally_connected1d/kernel:0", "locally_connected1d/bias:0"]
    assert [v.shape.as_list() for v in layer.weights] == [[3, 9, 4], [3, 4]]
    assert y.shape.as_list() == [None, 3, 4]
    grads = tf.gradients(tf.reduce_sum(y * y), layer.weights)
    (out, gk, gb), sess = run([y] + grads, {x: xv})
    kernel, bias = weights(layer, sess)
    ref = _ref(xv.astype(np.float64), kernel, bias, (3,), (2,))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gb, 2 * ref.sum(0), rtol=1e-4, atol=1e-5)
    # d/dK[p] of sum(y²) = patchᵀ · 2y at position p
    patch0 = xv[:, 0:3].reshape(2, -1)
    np.testing.assert_allclose(gk[0], patch0.T @ (2 * ref[:, 0]), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_locally_connected2d_forward(rng, data_format):
    first = data_format == "channels_first"
    xv = rng.randn(2, 2, 5, 4).astype(np.float32) if first else rng.randn(2, 5, 4, 2).astype(np.float32)
    x = tf.placeholder(tf.float32, xv.shape)
    layer = L.LocallyConnected2D(3, (2, 3), strides=(1, 1), data_format=data_format, activation="relu",
                                 bias_initializer="random_uniform")
    y = layer(x)
    assert [v.shape.as_list() for v in layer.weights] == [[8, 12, 3], [4, 2, 3]]
    assert y.shape.as_list() == ([2, 3, 4, 2] if first else [2, 4, 2, 3])
    assert layer.compute_output_shape(xv.shape).as_list() == y.shape.as_list()
    (out,), sess = run([y], {x: xv})
    kernel, bias = weights(layer, sess)
    ref = np.maximum(_ref(xv.astype(np.float64), kernel, bias, (2, 3), (1, 1), first), 0)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_locally_connected_config_and_errors():
    layer = L.LocallyConnected2D(2, 3, use_bias=False)
    config = layer.get_config()
    assert config["implementation"] == 1 and config["kernel_size"] == (3, 3) and config["padding"] == "valid"
    roundtrip(layer)
    roundtrip(L.LocallyConnected1D(2, 2, activation="tanh"))
    with pytest.raises(ValueError, match="only \"valid\" is supported"):
        L.LocallyConnected1D(2, 3, padding="same")
    with pytest.raises(ValueError, match="expected ndim=3"):
        L.LocallyConnected1D(2, 3)(tf.placeholder(tf.float32, [2, 5]))
    with pytest.raises(ValueError, match="fully-defined"):
        L.LocallyConnected2D(2, 3)(tf.placeholder(tf.float32, [2, None, 5, 1]))
