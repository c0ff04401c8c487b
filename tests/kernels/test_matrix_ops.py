"""tf.linalg's matrix ops against numpy on the local schedulers, their gradients against finite
differences, and their errors."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

RNG = np.random.default_rng(7)
A = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
SPD = A @ A.transpose(0, 2, 1) + np.eye(3)
B = RNG.standard_normal((2, 3, 2))


def _series_expm(m):
    out, term = np.eye(len(m)), np.eye(len(m))
    for k in range(1, 60):
        term = term @ m / k
        out = out + term
    return out


def test_forward_against_numpy_on_the_schedulers():
    a, s, b = tf.constant(A), tf.constant(SPD), tf.constant(B)
    q, r = tf.linalg.qr(a)
    sv, u, v = tf.svd(a)
    e, ev = tf.self_adjoint_eig(s)
    got = run_modes([tf.matrix_inverse(a), tf.matrix_determinant(a), tf.linalg.slogdet(a), tf.cholesky(s),
                     tf.matrix_solve(a, b), tf.matrix_solve(a, b, adjoint=True), tf.matrix_triangular_solve(a, b),
                     q, r, sv, u, v, e, ev, tf.linalg.expm(a * 0.3), tf.linalg.band_part(a, 1, 0), tf.linalg.trace(a),
                     tf.linalg.logdet(s), tf.linalg.lstsq(a, b), tf.linalg.cholesky_solve(tf.cholesky(s), b),
                     tf.matrix_diag(tf.constant(B[..., 0])), tf.matrix_diag_part(a), tf.linalg.eigvalsh(s),
                     tf.linalg.set_diag(a, tf.zeros([2, 3], tf.float64)), tf.linalg.adjoint(a)])
    (inv, det, (sign, logabs), chol, x, xa, xt, q, r, sv, u, v, e, ev, ex, band, tr, ld, ls, cs, dg, dp, ew, sd,
     adj) = got
    np.testing.assert_allclose(inv, np.linalg.inv(A), rtol=1e-10)
    np.testing.assert_allclose(det, np.linalg.det(A), rtol=1e-10)
    np.testing.assert_allclose(sign * np.exp(logabs), np.linalg.det(A), rtol=1e-10)
    np.testing.assert_allclose(chol, np.linalg.cholesky(SPD), rtol=1e-10)
    np.testing.assert_allclose(x, np.linalg.solve(A, B), rtol=1e-10)
    np.testing.assert_allclose(xa, np.linalg.solve(A.transpose(0, 2, 1), B), rtol=1e-10)
    np.testing.assert_allclose(xt, np.linalg.solve(np.tril(A), B), rtol=1e-10)
    np.testing.assert_allclose(q @ r, A, atol=1e-12)
    np.testing.assert_allclose(u @ (sv[..., None] * v.transpose(0, 2, 1)), A, atol=1e-12)
    np.testing.assert_allclose(ev @ (e[..., None] * ev.transpose(0, 2, 1)), SPD, atol=1e-10)
    np.testing.assert_allclose(ex, [_series_expm(m * 0.3) for m in A], rtol=1e-10)
    np.testing.assert_array_equal(band, np.where(np.tri(3, 3, 0) - np.tri(3, 3, -2), A, 0))
    np.testing.assert_allclose(tr, np.trace(A, axis1=1, axis2=2))
    np.testing.assert_allclose(ld, np.linalg.slogdet(SPD)[1], rtol=1e-10)
    np.testing.assert_allclose(ls, np.linalg.solve(A, B), rtol=1e-8)
    np.testing.assert_allclose(cs, np.linalg.solve(SPD, B), rtol=1e-10)
    np.testing.assert_array_equal(dg[1], np.diag(B[1, :, 0]))
    np.testing.assert_array_equal(dp, np.diagonal(A, axis1=1, axis2=2))
    np.testing.assert_allclose(ew, np.linalg.eigvalsh(SPD), rtol=1e-10)
    assert np.all(np.diagonal(sd, axis1=1, axis2=2) == 0)
    np.testing.assert_array_equal(adj, A.transpose(0, 2, 1))


@pytest.mark.parametrize("build", [
    lambda x: tf.matrix_inverse(x),
    lambda x: tf.matrix_inverse(x, adjoint=True),
    lambda x: tf.matrix_determinant(x),
    lambda x: tf.linalg.slogdet(x)[1],
    lambda x: tf.cholesky(tf.matmul(x, x, transpose_b=True)),
    lambda x: tf.matrix_solve(x, tf.constant(B)),
    lambda x: tf.matrix_triangular_solve(x, tf.constant(B), lower=False, adjoint=True),
    lambda x: tf.self_adjoint_eig(x + tf.linalg.adjoint(x))[0],
    lambda x: tf.reduce_sum(tf.abs(tf.self_adjoint_eig(x + tf.linalg.adjoint(x))[1][..., 0])),
    lambda x: tf.linalg.expm(0.3 * x),
    lambda x: tf.linalg.band_part(x, 0, 1) + tf.linalg.set_diag(x, tf.linalg.diag_part(x) * 2.0),
    lambda x: tf.linalg.logdet(tf.matmul(x, x, transpose_b=True)),
])
def test_gradients_against_finite_differences(build):
    x = tf.placeholder(tf.float64, [2, 3, 3])
    y = build(x)
    with tf.Session():
        err = tf.test.compute_gradient_error(x, [2, 3, 3], y, y.shape.as_list(), x_init_value=A, delta=1e-6)
    assert err < 1e-5


def test_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.matrix_inverse(tf.zeros([2, 3]))
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.cholesky(tf.zeros([3]))
    with pytest.raises(TypeError, match="int32"):
        tf.matrix_determinant(tf.zeros([2, 2], tf.int32))
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="MatrixInverse: Input is not invertible"):
            s.run(tf.matrix_inverse(tf.zeros([2, 2])))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cholesky decomposition was not successful"):
            s.run(tf.cholesky(-tf.eye(2)))


def test_namespace_names_are_the_top_level_functions():
    assert tf.linalg.inv is tf.matrix_inverse and tf.linalg.det is tf.matrix_determinant
    assert tf.linalg.matmul is tf.matmul and tf.linalg.eigh is tf.self_adjoint_eig
    np.testing.assert_array_equal(tf.Session().run(tf.eye(2, 3, batch_shape=[2])), np.broadcast_to(np.eye(2, 3), (2, 2, 3)))
