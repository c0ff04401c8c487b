"""tf.nn's conv3d / conv3d_transpose / conv1d_transpose (composites of the 2-D ops) and the moment
and loss pieces (sufficient_statistics, normalize_moments, weighted_moments, log_poisson_loss,
swish, relu_layer, compute_average_loss), against numpy."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

RNG = np.random.RandomState(0)


def _np_conv3d(x, w, strides, padding):
    """Direct numpy NDHWC cross-correlation (TF's SAME padding: the extra on the far side)."""
    k = w.shape[:3]
    if padding == "SAME":
        out = [-(-x.shape[i + 1] // strides[i]) for i in range(3)]
        pads = [max((out[i] - 1) * strides[i] + k[i] - x.shape[i + 1], 0) for i in range(3)]
        x = np.pad(x, [(0, 0)] + [(p // 2, p - p // 2) for p in pads] + [(0, 0)])
    out = [(x.shape[i + 1] - k[i]) // strides[i] + 1 for i in range(3)]
    y = np.zeros([x.shape[0]] + out + [w.shape[4]], np.float64)
    for d in range(out[0]):
        for h in range(out[1]):
            for c in range(out[2]):
                patch = x[:, d * strides[0]:d * strides[0] + k[0], h * strides[1]:h * strides[1] + k[1],
                          c * strides[2]:c * strides[2] + k[2]]
                y[:, d, h, c] = np.einsum("ndhwi,dhwio->no", patch, w)
    return y


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("strides", [(1, 1, 1), (2, 1, 2)])
def test_conv3d_matches_numpy(padding, strides):
    x = RNG.randn(2, 5, 4, 5, 3).astype(np.float32)
    w = RNG.randn(3, 2, 3, 3, 4).astype(np.float32)
    y = run_modes(tf.nn.conv3d(x, w, [1, *strides, 1], padding))
    np.testing.assert_allclose(y, _np_conv3d(x, w, strides, padding), rtol=1e-4, atol=1e-4)


def test_conv3d_channels_first_and_gradient():
    x = RNG.randn(1, 4, 3, 4, 2).astype(np.float32)
    w = RNG.randn(2, 2, 2, 2, 3).astype(np.float32)
    xt = tf.constant(x)
    y = tf.nn.conv3d(tf.transpose(xt, [0, 4, 1, 2, 3]), w, [1, 1, 1, 1, 1], "VALID", data_format="NCDHW")
    # d/dx sum(conv3d(x, w)) is conv3d_transpose of ones (the adjoint)
    (gx,) = tf.gradients(tf.reduce_sum(y), [xt])
    ones = tf.ones([1, 3, 2, 3, 3])
    adj = tf.nn.conv3d_transpose(ones, w, [1, 4, 3, 4, 2], [1, 1, 1, 1, 1], "VALID")
    with tf.Session() as s:
        got, g, a = s.run([y, gx, adj])
    np.testing.assert_allclose(got, _np_conv3d(x, w, (1, 1, 1), "VALID").transpose(0, 4, 1, 2, 3), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(g, a, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("padding,stride", [("SAME", 1), ("SAME", 2), ("VALID", 2)])
def test_conv3d_transpose_is_the_adjoint_of_conv3d(padding, stride):
    # <conv3d(u, w), v> == <u, conv3d_transpose(v, w)>
    w = RNG.randn(3, 2, 3, 2, 3).astype(np.float64)
    u_shape = [2, 6, 5, 6, 2]
    u = RNG.randn(*u_shape)
    fwd = tf.nn.conv3d(u, w, [1, stride, stride, stride, 1], padding)
    v = RNG.randn(*fwd.shape.as_list())
    back = tf.nn.conv3d_transpose(v, w, u_shape, [1, stride, stride, stride, 1], padding)
    f, b = run_modes([fwd, back])
    np.testing.assert_allclose(np.sum(f * v), np.sum(u * b), rtol=1e-10)


def test_conv1d_transpose_is_the_adjoint_of_conv1d():
    w = RNG.randn(3, 2, 4)
    u = RNG.randn(2, 8, 2)
    fwd = tf.nn.conv1d(u, w, 2, "SAME")
    v = RNG.randn(*fwd.shape.as_list())
    back = tf.nn.conv1d_transpose(v, w, [2, 8, 2], 2, "SAME")
    same = tf.nn.conv_transpose(v, w, [2, 8, 2], 2, "SAME")
    with tf.Session() as s:
        f, b, c = s.run([fwd, back, same])
    np.testing.assert_allclose(np.sum(f * v), np.sum(u * b), rtol=1e-10)
    np.testing.assert_allclose(b, c)


def test_conv3d_bad_input():
    with pytest.raises(ValueError, match="static depth"):
        tf.nn.conv3d(tf.placeholder(tf.float32, [1, None, 3, 3, 1]), tf.ones([1, 1, 1, 1, 1]), [1] * 5, "SAME")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.conv3d(tf.ones([1, 2, 3, 3, 1]), tf.ones([1, 1, 1, 1, 1]), [1] * 5, "FULL")
    with pytest.raises(ValueError, match="batch and depth"):
        tf.nn.conv3d(tf.ones([1, 2, 3, 3, 1]), tf.ones([1, 1, 1, 1, 1]), [2, 1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="exceeds"):
        tf.nn.conv3d(tf.ones([1, 2, 3, 3, 1]), tf.ones([3, 1, 1, 1, 1]), [1] * 5, "VALID")
    with pytest.raises(ValueError, match="output channels"):
        tf.nn.conv3d_transpose(tf.ones([1, 2, 3, 3, 1]), tf.ones([1, 1, 1, 2, 1]), [1, 2, 3, 3, 5], [1] * 5)


def test_sufficient_statistics_and_normalize_moments():
    x = RNG.randn(4, 3, 5)
    counts, m_ss, v_ss, shift = tf.nn.sufficient_statistics(x, [0, 2])
    assert shift is None
    mean, var = tf.nn.normalize_moments(counts, m_ss, v_ss, None)
    c2, m2, v2, s2 = tf.nn.sufficient_statistics(x, [0, 2], shift=0.5, keepdims=True)
    mean2, var2 = tf.nn.normalize_moments(c2, m2, v2, s2)
    got = run_modes([counts, m_ss, v_ss, mean, var, mean2, var2])
    assert got[0] == 20
    np.testing.assert_allclose(got[1], x.sum((0, 2)))
    np.testing.assert_allclose(got[2], (x * x).sum((0, 2)))
    np.testing.assert_allclose(got[3], x.mean((0, 2)))
    np.testing.assert_allclose(got[4], x.var((0, 2)), atol=1e-12)
    np.testing.assert_allclose(got[5], x.mean((0, 2), keepdims=True))
    np.testing.assert_allclose(got[6], x.var((0, 2), keepdims=True), atol=1e-12)
    dyn = tf.placeholder(tf.float64, [None, 3])
    with tf.Session() as s:
        assert s.run(tf.nn.sufficient_statistics(dyn, [0])[0], {dyn: np.ones((7, 3))}) == 7


def test_weighted_moments():
    x = RNG.randn(6, 4)
    f = RNG.randint(0, 4, (6, 1)).astype(np.float64) + 1
    mean, var = tf.nn.weighted_moments(x, [0], f)
    m, v = run_modes([mean, var])
    wm = (x * f).sum(0) / f.sum()
    np.testing.assert_allclose(m, wm)
    np.testing.assert_allclose(v, (f * (x - wm) ** 2).sum(0) / f.sum())
    km, _ = tf.nn.weighted_moments(x, [0], f, keepdims=True)
    assert km.shape.as_list() == [1, 4]


def test_log_poisson_loss():
    t = np.array([0.0, 0.5, 1.0, 2.0, 7.0])
    li = RNG.randn(5)
    base = np.exp(li) - li * t
    stirling = np.where(t > 1, t * np.log(np.where(t > 0, t, 1)) - t + 0.5 * np.log(2 * np.pi * np.where(t > 0, t, 1)), 0)
    a, b = run_modes([tf.nn.log_poisson_loss(t, li), tf.nn.log_poisson_loss(t, li, compute_full_loss=True)])
    np.testing.assert_allclose(a, base)
    np.testing.assert_allclose(b, base + stirling)
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.log_poisson_loss(np.ones(3), np.ones(4))


def test_swish_relu_layer_and_average_loss():
    x = RNG.randn(3, 4).astype(np.float32)
    w = RNG.randn(4, 2).astype(np.float32)
    b = RNG.randn(2).astype(np.float32)
    xt = tf.constant(x)
    sw = tf.nn.swish(xt)
    (g,) = tf.gradients(tf.reduce_sum(sw), [xt])
    loss = tf.constant([1.0, 2.0, 3.0, 4.0])
    got = run_modes([sw, tf.nn.silu(xt, beta=2.0), g, tf.nn.relu_layer(x, w, b),
                     tf.nn.compute_average_loss(loss), tf.nn.compute_average_loss(loss, sample_weight=0.5,
                                                                                  global_batch_size=8),
                     tf.nn.scale_regularization_loss([1.0, 2.0])])
    sig = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(got[0], x * sig, rtol=1e-5)
    np.testing.assert_allclose(got[1], x / (1 + np.exp(-2 * x)), rtol=1e-5)
    np.testing.assert_allclose(got[2], sig * (1 + x * (1 - sig)), rtol=1e-5)
    np.testing.assert_allclose(got[3], np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6)
    assert got[4] == 2.5 and got[5] == 0.625 and got[6] == 3.0
