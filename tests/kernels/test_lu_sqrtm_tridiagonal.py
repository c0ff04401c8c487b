"""tf.linalg's lu family, sqrtm/logm and the tridiagonal names against numpy and TF 2.21's figures."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

# TF 2.21: tf.linalg.lu of these two matrices
_A = np.array([[[1.0, 2, 0], [3, 4, 1], [0, 5, 6]], [[2, 1, 1], [4, 3, 3], [8, 7, 9]]])
_TF_LU = [[[3.0, 4, 1], [0, 5, 6], [1 / 3, 2 / 15, -17 / 15]], [[8, 7, 9], [0.25, -0.75, -1.25], [0.5, 2 / 3, -2 / 3]]]
_TF_P = [[1, 2, 0], [2, 0, 1]]


def _dense(d):
    """The [..., M, M] matrix of compact diagonals [..., 3, M]."""
    m = d.shape[-1]
    a = np.zeros(d.shape[:-2] + (m, m), d.dtype)
    i = np.arange(m)
    a[..., i, i] = d[..., 1, :]
    a[..., i[:-1], i[1:]] = d[..., 0, :-1]
    a[..., i[1:], i[:-1]] = d[..., 2, 1:]
    return a


def test_lu_matches_tf_and_its_composites_invert_it():
    x = tf.placeholder(tf.float64, [2, 3, 3])
    lu, p = tf.linalg.lu(x)
    rhs = np.arange(6.0).reshape(3, 2)
    got = run_modes([lu, p, tf.linalg.lu_reconstruct(lu, p), tf.linalg.lu_matrix_inverse(lu, p),
                     tf.linalg.lu_solve(lu, p, np.stack([rhs, rhs]))], {x: _A})
    np.testing.assert_allclose(got[0], _TF_LU, atol=1e-12)
    np.testing.assert_array_equal(got[1], _TF_P)
    assert got[1].dtype == np.int32
    np.testing.assert_allclose(got[2], _A, atol=1e-12)
    np.testing.assert_allclose(got[3], np.linalg.inv(_A), atol=1e-12)
    np.testing.assert_allclose(got[4], np.linalg.solve(_A, np.stack([rhs, rhs])), atol=1e-12)
    # a random complex batch, int64 pivots
    rng = np.random.default_rng(0)
    c = (rng.standard_normal((4, 5, 5)) + 1j * rng.standard_normal((4, 5, 5))).astype(np.complex64)
    lu, p = tf.linalg.lu(c, output_idx_type=tf.int64)
    rec, p_v = run_modes([tf.linalg.lu_reconstruct(lu, p), p])
    assert p_v.dtype == np.int64
    np.testing.assert_allclose(rec, c, atol=1e-5)


def test_lu_refuses_singular_and_bad_input():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Lu: Input is not invertible"):
        tf.Session().run(tf.linalg.lu(np.array([[1.0, 2], [2, 4]])))
    with pytest.raises(ValueError, match="not square"):
        tf.linalg.lu(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="'input'"):
        tf.linalg.lu(np.eye(2, dtype=np.int32))
    with pytest.raises(ValueError, match="rank\\(perm\\) \\+ 1"):
        tf.linalg.lu_reconstruct(np.eye(2), [[0, 1]])
    x = tf.constant(_A)
    with pytest.raises(LookupError, match="op type: Lu"):  # TF has no gradient for Lu either
        tf.gradients(tf.linalg.lu(x).lu, x)


def test_lu_solve_differentiates_through_lower_upper_and_rhs():
    lu_v, p_v = tf.Session().run(tf.linalg.lu(_A))
    lu, rhs = tf.constant(lu_v), tf.constant(np.ones((2, 3, 1)))
    g = tf.gradients(tf.reduce_sum(tf.linalg.lu_solve(lu, p_v, rhs)), [lu, rhs])
    assert all(t is not None for t in g)


def test_sqrtm_matches_tf_figures():
    # TF 2.21 (Eigen's Schur method): a rotation, a Jordan block; NaN without a real root or at all
    got = run_modes([tf.linalg.sqrtm(np.array([[0.0, -1], [1, 0]])), tf.linalg.sqrtm(np.array([[1.0, 1], [0, 1]])),
                     tf.linalg.sqrtm(np.array([[-1.0, 0], [0, 4]])), tf.matrix_square_root(np.array([[0.0, 1], [0, 0]]))])
    np.testing.assert_allclose(got[0], [[0.5 ** 0.5, -(0.5 ** 0.5)], [0.5 ** 0.5, 0.5 ** 0.5]], atol=1e-12)
    np.testing.assert_allclose(got[1], [[1.0, 0.5], [0, 1]], atol=1e-12)
    assert np.isnan(got[2]).all() and np.isnan(got[3]).any()
    rng = np.random.default_rng(1)
    a = rng.normal(size=(2, 4, 4)) + 4 * np.eye(4)
    c = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    x = tf.placeholder(tf.float64, [2, 4, 4])
    r, rc = run_modes([tf.linalg.sqrtm(x), tf.linalg.sqrtm(c)], {x: a})
    np.testing.assert_allclose(r @ r, a, atol=1e-10)
    np.testing.assert_allclose(r[0, 0], [2.05898097, 0.19398689, 0.07843221, -0.32049775], atol=1e-7)  # TF 2.21
    np.testing.assert_allclose(rc[0], [0.42470202 - 0.38770064j, 0.93185076 + 0.31234525j,
                                       1.02001809 - 1.47871902j], atol=1e-7)  # TF 2.21
    # TF 2.21's gradient (the Sylvester equation) of sum(sqrtm(x) * w)
    w = np.arange(16.0).reshape(4, 4)
    g = tf.Session().run(tf.gradients(tf.reduce_sum(tf.linalg.sqrtm(x) * w), x)[0], {x: a})
    np.testing.assert_allclose(g[0, 0], [0.05218751, 0.23274717, 0.46252558, 0.72401704], atol=1e-7)
    np.testing.assert_allclose(g[1, 3], [3.56792366, 2.8352884, 4.82978242, 3.23112145], atol=1e-7)


def test_logm_matches_tf_and_inverts_expm():
    rng = np.random.default_rng(1)
    rng.normal(size=(2, 4, 4))
    c = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    got = run_modes([tf.linalg.logm(c), tf.linalg.logm(np.array([[-1.0, 0], [0, 4]], np.complex64)),
                     tf.linalg.logm(np.array([[1.0, 1], [0, 1]], np.complex128)),
                     tf.linalg.logm(np.zeros((2, 2), np.complex64))])
    np.testing.assert_allclose(got[0][0], [-0.42085568 - 0.849292912j, 0.37190538 + 1.38261j,
                                           2.91028791 - 3.05295651j], atol=1e-7)  # TF 2.21
    np.testing.assert_allclose(got[1], [[np.pi * 1j, 0], [0, np.log(4)]], atol=1e-6)
    np.testing.assert_allclose(got[2], [[0, 1], [0, 0]], atol=1e-12)
    assert np.isnan(got[3]).all()
    np.testing.assert_allclose(tf.Session().run(tf.linalg.expm(got[0])), c, atol=1e-10)
    with pytest.raises(TypeError, match="complex64, complex128"):
        tf.linalg.logm(np.eye(2))


def test_tridiagonal_solve_formats_and_pivoting():
    rng = np.random.default_rng(0)
    d = rng.normal(size=(4, 3, 6))
    b = rng.normal(size=(4, 6, 2))
    want = np.linalg.solve(_dense(d), b)
    dd, bb = tf.placeholder(tf.float64, [4, 3, 6]), tf.placeholder(tf.float64, [4, 6, 2])
    seq = [d[:, 0, :-1], d[:, 1], d[:, 2, 1:]]
    got = run_modes([tf.linalg.tridiagonal_solve(dd, bb), tf.linalg.tridiagonal_solve(dd, bb, partial_pivoting=False),
                     tf.linalg.tridiagonal_solve(seq, bb, diagonals_format="sequence"),
                     tf.linalg.tridiagonal_solve(_dense(d), bb, diagonals_format="matrix"),
                     tf.linalg.tridiagonal_solve(dd, np.swapaxes(b, -1, -2), transpose_rhs=True),
                     tf.linalg.tridiagonal_solve(dd, bb[..., 0])], {dd: d, bb: b})
    for g in got[:5]:
        np.testing.assert_allclose(g, want, atol=1e-10)
    np.testing.assert_allclose(got[5], want[..., 0], atol=1e-10)
    # TF 2.21's figures: a zero first pivot needs the row swap; without it NaN; a singular system gives NaN/inf
    pivot = np.array([[1.0, 1, 9], [0, 0, 0], [9, 1, 1]])
    r = run_modes([tf.linalg.tridiagonal_solve(np.array([[1.0, 1, 9], [1, 0, 1], [9, 1, 1]]), [1.0, 2, 3]),
                   tf.linalg.tridiagonal_solve(np.array([[1.0, 2, 0], [3, 4, 5], [0, 6, 7]]), [1.0, 2, 3]),
                   tf.linalg.tridiagonal_solve(pivot, [1.0, 2, 3], partial_pivoting=False)])
    np.testing.assert_allclose(r[0], [0, 1, 2], atol=1e-12)
    np.testing.assert_allclose(r[1], [-1 / 6, 1.5, -1.5], atol=1e-12)
    assert not np.isfinite(r[2]).any()


def test_tridiagonal_solve_gradient_and_bad_input():
    rng = np.random.default_rng(2)
    d, b = rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 5, 2))
    w = rng.normal(size=(2, 5, 2))
    dd, bb = tf.constant(d), tf.constant(b)
    gd, gb = tf.Session().run(tf.gradients(tf.reduce_sum(tf.linalg.tridiagonal_solve(dd, bb) * w), [dd, bb]))
    a = _dense(d)
    y = np.linalg.solve(np.swapaxes(a, -1, -2), w)  # d/db of sum(w * inv(A) b)
    np.testing.assert_allclose(gb, y, atol=1e-10)
    ga = -y @ np.swapaxes(np.linalg.solve(a, b), -1, -2)
    i = np.arange(5)
    np.testing.assert_allclose(gd[:, 1], ga[:, i, i], atol=1e-10)
    np.testing.assert_allclose(gd[:, 0, :-1], ga[:, i[:-1], i[1:]], atol=1e-10)
    np.testing.assert_allclose(gd[:, 2, 1:], ga[:, i[1:], i[:-1]], atol=1e-10)
    with pytest.raises(ValueError, match="Expected 3 diagonals"):
        tf.linalg.tridiagonal_solve(np.zeros((4, 5)), np.zeros((5, 1)))
    with pytest.raises(ValueError, match="Unrecognized diagonals_format"):
        tf.linalg.tridiagonal_solve(d, b, diagonals_format="banded")
    with pytest.raises(ValueError, match="partial_pivoting must be True"):
        tf.linalg.tridiagonal_solve(d, b, partial_pivoting=False, perturb_singular=True)
    with pytest.raises(ValueError, match="length 3"):
        tf.linalg.tridiagonal_solve([d[:, 0]], b, diagonals_format="sequence")


def test_tridiagonal_matmul_and_eigh_tridiagonal():
    rng = np.random.default_rng(3)
    d, b = rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 5, 3))
    x = tf.constant(d)
    got = run_modes([tf.linalg.tridiagonal_matmul(x, b), tf.linalg.tridiagonal_matmul(_dense(d), b, "matrix"),
                     tf.linalg.tridiagonal_matmul([d[:, 0], d[:, 1], d[:, 2]], b, "sequence")])
    for g in got:
        np.testing.assert_allclose(g, _dense(d) @ b, atol=1e-12)
    assert tf.gradients(tf.reduce_sum(tf.linalg.tridiagonal_matmul(x, b)), x)[0] is not None
    # TF 2.21's figures (eigenvectors up to sign)
    alpha, beta = np.array([1.0, 2, 3]), np.array([0.5, 0.7])
    e, v = tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)
    e, v, ei, ev = run_modes([e, v, tf.linalg.eigh_tridiagonal(alpha, beta, select="i", select_range=[1, 2]),
                              tf.linalg.eigh_tridiagonal(alpha, beta, select="v", select_range=[0.5, 2.5])])
    np.testing.assert_allclose(e, [0.75619807, 1.8605091, 3.38329283], atol=1e-7)
    np.testing.assert_allclose(np.abs(v[:, 0]), [0.89055372, 0.43423743, 0.13546927], atol=1e-7)
    np.testing.assert_allclose(ei, e[1:], atol=1e-12)
    np.testing.assert_allclose(ev, e[:2], atol=1e-12)
    # complex: the superdiagonal is beta, the subdiagonal conj(beta) (as TF)
    cb = np.array([0.5j, 0.7])
    e, v = tf.Session().run(tf.linalg.eigh_tridiagonal(alpha.astype(complex), cb, eigvals_only=False))
    t = np.diag(alpha).astype(complex) + np.diag(cb, 1) + np.diag(cb.conj(), -1)
    np.testing.assert_allclose(t @ v, v * e, atol=1e-12)
    with pytest.raises(ValueError, match="select_range"):
        tf.linalg.eigh_tridiagonal(alpha, beta, select="i")
