"""Gradients of tf.qr and tf.svd (TF 2.x's linalg_grad.py rules) against finite differences on
random well-conditioned float64 matrices, batched, through losses that do not depend on the sign
of the factors' columns (as TF's own qr_op_test / svd_op_test do), on the schedulers; and TF's
NotImplementedError where TF has no rule."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

RNG = np.random.default_rng(28)


def _weights(shape):
    return tf.constant(RNG.uniform(0.5, 1.5, shape))


def _check(shape, loss_of, tol=1e-6):
    """compute_gradient_error of loss_of(x) at a random x of `shape` (entries kept away from ties)."""
    x0 = RNG.standard_normal(shape)
    x = tf.placeholder(tf.float64, shape)
    y = loss_of(x)
    with tf.Session():
        err = tf.test.compute_gradient_error(x, list(shape), y, y.shape.as_list(), x_init_value=x0, delta=1e-6)
    assert err < tol, err


def _qr_losses(shape, full):
    m, n = shape[-2:]
    k = m if full else min(m, n)
    wq, wr = _weights(shape[:-2] + (m, k)), _weights(shape[:-2] + (k, n))

    def q_loss(x):
        q, r = tf.linalg.qr(x, full_matrices=full)
        return tf.reduce_sum(q * q * wq) + tf.reduce_sum(tf.abs(r) * wr)  # |r| and q*q ignore column signs

    def qr_product(x):
        q, r = tf.qr(x, full_matrices=full)
        return tf.reduce_sum(tf.matmul(q * wq, r) ** 2)  # sign-invariant: q_j and r_j flip together

    return q_loss, qr_product


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 5, 3), (2, 3, 5), (3, 4)])
def test_qr_gradient_against_finite_differences(shape):
    for loss in _qr_losses(shape, full=False):
        _check(shape, loss)


def test_qr_gradient_with_full_matrices_when_square_or_wide():
    for shape in [(3, 3), (2, 3, 5)]:  # q is square either way, so full_matrices changes nothing
        for loss in _qr_losses(shape, full=True):
            _check(shape, loss)


def test_qr_gradient_not_implemented_where_tf_has_none():
    # TF 2.21's messages (linalg_grad._QrGrad, run with /tmp/tfenv's TF on a [4, 3] placeholder)
    d = tf.placeholder(tf.float64, [4, 3])
    with pytest.raises(NotImplementedError, match=r"QrGrad not implemented when nrows > ncols and full_matrices "
                                                  r"is true. Received r.shape=\(4, 3\) with nrows=4and ncols=3.$"):
        tf.gradients(tf.reduce_sum(tf.qr(d, full_matrices=True)[1]), [d])
    x = tf.placeholder(tf.float64, [None, None])
    with pytest.raises(NotImplementedError, match="QrGrad not implemented with dynamic shapes"):
        tf.gradients(tf.reduce_sum(tf.qr(x)[1]), [x])


def _svd_losses(shape, full):
    m, n = shape[-2:]
    p = min(m, n)
    mu, nv = (m, n) if full else (p, p)
    ws, wu, wv = _weights(shape[:-2] + (p,)), _weights(shape[:-2] + (m, mu)), _weights(shape[:-2] + (n, nv))

    def s_only(x):
        return tf.reduce_sum(tf.svd(x, compute_uv=False) ** 2 * ws)

    def s_of_uv(x):
        return tf.reduce_sum(tf.linalg.svd(x, full_matrices=full)[0] * ws)

    def u_and_v(x):  # sum(u*u*W) as TF's svd_op_test: invariant to each column's sign
        s, u, v = tf.svd(x, full_matrices=full)
        return tf.reduce_sum(u * u * wu) + tf.reduce_sum(v * v * wv) + tf.reduce_sum(s * ws)

    return s_only, s_of_uv, u_and_v


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4), (2, 5, 3), (2, 3, 5)])
def test_svd_gradient_against_finite_differences(shape):
    for loss in _svd_losses(shape, full=False):
        _check(shape, loss)


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (2, 3, 4)])
def test_svd_gradient_with_full_matrices_when_tf_has_it(shape):
    for loss in _svd_losses(shape, full=True):
        _check(shape, loss)


def test_svd_gradient_not_implemented_where_tf_has_none():
    x = tf.placeholder(tf.float64, [5, 3])
    with pytest.raises(NotImplementedError, match=r"svd gradient is not implemented for abs\(m - n\) > 1 when "
                                                  r"full_matrices is True. Received: m=3 and n=5"):
        tf.gradients(tf.reduce_sum(tf.svd(x, full_matrices=True)[1]), [x])
    y = tf.placeholder(tf.float64, [None, 3])
    with pytest.raises(NotImplementedError, match="SVD gradient has not been implemented for input with unknown "
                                                  "inner matrix shape."):
        tf.gradients(tf.reduce_sum(tf.svd(y)[1]), [y])
    (g,) = tf.gradients(tf.reduce_sum(tf.svd(y, compute_uv=False)), [y])  # singular values alone need no shapes
    a = RNG.standard_normal((4, 3))
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(tf.Session().run(g, {y: a}), u @ vh, rtol=1e-10)


def test_gradients_on_the_schedulers():
    a = RNG.standard_normal((2, 4, 3))
    x = tf.constant(a)
    q, r = tf.qr(x)
    s = tf.svd(x, compute_uv=False)
    gq, gs = tf.gradients(tf.reduce_sum(r * r), [x])[0], tf.gradients(tf.reduce_sum(s), [x])[0]
    got_q, got_s = run_modes([gq, gs])
    np.testing.assert_allclose(got_q, 2 * a, rtol=1e-10)  # sum(r*r) = |a|_F^2
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(got_s, u @ vh, rtol=1e-10)  # d(nuclear norm)/da
