"""tf.nn.dilation2d / erosion2d (kernels/morphology_ops.py) and the gradients of Dilation2D: a
loop-by-loop numpy reference on random inputs for every padding, stride and rate, TF1's figures on
a fixed input (with a tie), the Dask lowering, and build-time errors."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

CONFIGS = [("SAME", 1, 1), ("SAME", 2, 2), ("VALID", 1, 1), ("VALID", 2, 2)]  # padding, row stride, col rate


def np_dilation(x, f, strides, rates, padding):
    """(out, d out / d x summed against dy, d out / d f) by the definition, TF's kernel's loops."""
    n, h, w, c = x.shape
    kh, kw, _ = f.shape
    eh, ew = (kh - 1) * rates[1] + 1, (kw - 1) * rates[2] + 1
    if padding == "VALID":
        oh, ow, pt, pl = (h - eh) // strides[1] + 1, (w - ew) // strides[2] + 1, 0, 0
    else:
        oh, ow = -(-h // strides[1]), -(-w // strides[2])
        pt = max((oh - 1) * strides[1] + eh - h, 0) // 2
        pl = max((ow - 1) * strides[2] + ew - w, 0) // 2
    out = np.zeros((n, oh, ow, c), x.dtype)
    win = {}
    for b in range(n):
        for y in range(oh):
            for xo in range(ow):
                for d in range(c):
                    best, at = -np.inf, None
                    for i in range(kh):
                        for j in range(kw):
                            yi, xj = y * strides[1] + i * rates[1] - pt, xo * strides[2] + j * rates[2] - pl
                            if 0 <= yi < h and 0 <= xj < w and x[b, yi, xj, d] + f[i, j, d] > best:
                                best, at = x[b, yi, xj, d] + f[i, j, d], (yi, xj, i, j)
                    out[b, y, xo, d] = best
                    win[b, y, xo, d] = at
    return out, win


def np_grads(x, f, dy, win):
    gx, gf = np.zeros_like(x), np.zeros_like(f)
    for (b, y, xo, d), (yi, xj, i, j) in win.items():
        gx[b, yi, xj, d] += dy[b, y, xo, d]
        gf[i, j, d] += dy[b, y, xo, d]
    return gx, gf


def _args(pad, s, r):
    return [1, s, 1, 1], [1, 1, r, 1], pad


@pytest.mark.parametrize("pad,s,r", CONFIGS)
def test_dilation_and_gradients_against_numpy(pad, s, r):
    rng = np.random.RandomState(1)
    x = rng.randn(2, 6, 7, 3)
    f = rng.randn(2, 3, 3)
    dy_seed = rng.randn(2, 6, 7, 3)
    strides, rates, padding = _args(pad, s, r)
    with tf.Graph().as_default():
        xt, ft = tf.constant(x), tf.constant(f)
        out = tf.nn.dilation2d(xt, ft, strides, rates, padding)
        dy = tf.constant(dy_seed[:, :out.shape[1], :out.shape[2]])
        gx, gf = tf.gradients(out, [xt, ft], grad_ys=dy)
        got = run_modes([out, gx, gf])
    want, win = np_dilation(x, f, strides, rates, padding)
    np.testing.assert_allclose(got[0], want, rtol=1e-12)
    wgx, wgf = np_grads(x, f, dy_seed[:, :want.shape[1], :want.shape[2]], win)
    np.testing.assert_allclose(got[1], wgx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[2], wgf, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("pad,s,r", CONFIGS)
def test_erosion_is_dual_dilation(pad, s, r):
    rng = np.random.RandomState(2)
    x, f = rng.randn(1, 5, 6, 2).astype(np.float32), rng.randn(3, 2, 2).astype(np.float32)
    strides, rates, padding = _args(pad, s, r)
    with tf.Graph().as_default():
        xt, ft = tf.constant(x), tf.constant(f)
        e = tf.nn.erosion2d(xt, ft, strides, rates, padding)
        assert e.dtype == tf.float32
        got, gx, gf = run_modes([e, *tf.gradients(tf.reduce_sum(e * e), [xt, ft])])
    d, win = np_dilation(-x, f[::-1, ::-1], strides, rates, padding)
    np.testing.assert_allclose(got, -d, rtol=1e-6)
    wgx, wgf = np_grads(-x, f[::-1, ::-1], 2 * got, win)  # d sum(e^2) = 2e de, e = -dilation(-x, rev f)
    np.testing.assert_allclose(gx, wgx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gf, -wgf[::-1, ::-1], rtol=1e-5, atol=1e-6)  # de/dg = -dD/dg


# TensorFlow 2.21's tf.compat.v1.nn.dilation2d/erosion2d on this input (x[0, 1, 1, 0] ties x[0, 1, 2, 0]),
# SAME padding, strides 1, rates 1; the gradients of sum(d * cos(d)) and sum(e * sin(e))
TF_X = [1.76, 0.4, 0.98, 2.24, 1.87, -0.98, 0.95, -0.15, -0.1, 0.41, 0.14, 1.45, 0.44, 0.12, 0.44, 0.33, 1.49,
        -0.21, 0.31, -0.85, -2.55, 0.65, 0.86, -0.74, 2.27, -1.45, 0.05, -0.19, 1.53, 1.47, 0.15, 0.38, -0.89,
        -1.98, -0.35, 0.16, 1.23, 1.2, -0.39, -0.3]
TF_F = [-1.05, -1.42, -1.71, 1.95, -0.51, -0.44, -1.25, 0.78, -1.61, -0.21, -0.9, 0.39]
TF_D = [0.47, 2.35, 1.36, 4.19, 0.59, 0.97, 0.82, 1.8, 0.24, 2.36, -0.04, 3.4, 1.37, 2.07, 0.98, 2.28, 1.02, 1.86,
        0.44, 1.26, 0.35, 2.6, 1.76, 1.21, 0.56, 1.59, 1.22, 1.76, -0.02, 3.42, -1.4, 2.33, -0.86, -0.03, 0.72,
        2.11, -0.48, 3.15, 0.18, 1.65]
TF_GF = [0.9495824575424194, 0.0, 1.2151317596435547, -19.92104721069336, -2.728041172027588, 0.0,
         1.5679051876068115, 0.0, 0.0, -0.8938169479370117, 0.3572639226913452, -3.6768550872802734]
TF_EF = [-2.5071563720703125, 0.0, 1.305311918258667, -7.390644073486328, -4.484291076660156, 0.0,
         -0.6891970634460449, -0.7980890274047852, -2.2869715690612793, 1.9200124740600586, -2.7912869453430176,
         -0.5269307494163513]
TF_GX_NONZERO = [1, 2, 3, 4, 5, 7, 9, 11, 13, 15, 16, 21, 22, 23, 24, 27, 29, 31, 32, 33, 34, 35, 36, 37, 39]


def test_tf_figures():
    x = np.array(TF_X, np.float32).reshape(1, 4, 5, 2)
    f = np.array(TF_F, np.float32).reshape(2, 3, 2)
    with tf.Graph().as_default():
        xt, ft = tf.constant(x), tf.constant(f)
        d = tf.nn.dilation2d(xt, ft, [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
        e = tf.nn.erosion2d(xt, ft, [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
        gx, gf = tf.gradients(tf.reduce_sum(d * tf.cos(d)), [xt, ft])
        ef = tf.gradients(tf.reduce_sum(e * tf.sin(e)), ft)[0]
        with tf.Session() as s:
            d_, gx_, gf_, ef_ = s.run([d, gx, gf, ef])
    np.testing.assert_allclose(d_.ravel(), TF_D, atol=1e-6)
    np.testing.assert_allclose(gf_.ravel(), TF_GF, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ef_.ravel(), TF_EF, rtol=1e-5, atol=1e-5)
    assert np.flatnonzero(gx_.ravel()).tolist() == TF_GX_NONZERO  # the tie goes to the first tap, as TF's


def test_build_errors():
    with tf.Graph().as_default():
        x, f = tf.zeros([1, 4, 4, 2]), tf.zeros([2, 2, 2])
        with pytest.raises(ValueError, match="larger than the input"):
            tf.nn.dilation2d(x, tf.zeros([6, 1, 2]), [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
        with pytest.raises(ValueError, match="depth"):
            tf.nn.dilation2d(x, tf.zeros([2, 2, 3]), [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="strides"):
            tf.nn.dilation2d(x, f, [2, 1, 1, 1], [1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="padding"):
            tf.nn.erosion2d(x, f, [1, 1, 1, 1], [1, 1, 1, 1], "FULL")
        with pytest.raises(TypeError):
            tf.nn.dilation2d(x, tf.zeros([2, 2, 2], tf.float64), [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError):
            tf.nn.dilation2d(tf.zeros([4, 4, 2]), f, [1, 1, 1, 1], [1, 1, 1, 1], "SAME")


def test_run_time_errors_name_the_op():
    with tf.Graph().as_default():
        x, f = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
        d = tf.nn.dilation2d(x, f, [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Dilation2D.*larger than the input"):
                s.run(d, {x: np.zeros((1, 2, 2, 1)), f: np.zeros((4, 1, 1))})
            with pytest.raises(tf.errors.InvalidArgumentError, match="Dilation2D.*same depth"):
                s.run(d, {x: np.zeros((1, 2, 2, 1)), f: np.zeros((1, 1, 2))})
