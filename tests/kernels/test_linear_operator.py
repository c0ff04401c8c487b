"""tf.linalg.LinearOperator* against the dense matrices they stand for (numpy)."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

_RNG = np.random.default_rng(0)
_M = _RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)
_D = _RNG.uniform(1, 2, size=(2, 3))
_X = _RNG.normal(size=(2, 3, 2))


def _operators():
    lo = tf.linalg
    full, diag = lo.LinearOperatorFullMatrix(_M), lo.LinearOperatorDiag(_D)
    tril = lo.LinearOperatorLowerTriangular(_M)
    return [(full, _M), (diag, np.einsum("bi,ij->bij", _D, np.eye(3))), (tril, np.tril(_M)),
            (lo.LinearOperatorIdentity(3, batch_shape=[2], dtype=tf.float64), np.stack([np.eye(3)] * 2)),
            (lo.LinearOperatorScaledIdentity(3, np.array([2.0, -0.5])), np.array([2.0, -0.5])[:, None, None] * np.eye(3)),
            (lo.LinearOperatorComposition([full, diag]), _M @ np.einsum("bi,ij->bij", _D, np.eye(3))),
            (full.adjoint(), np.swapaxes(_M, -1, -2)), (tril.inverse(), np.linalg.inv(np.tril(_M)))]


@pytest.mark.parametrize("k", range(8))
def test_operator_matches_its_dense_matrix(k):
    op, dense = _operators()[k]
    assert op.shape.as_list() == list(dense.shape)
    got = run_modes([op.to_dense(), op.matmul(_X), op.matmul(_X, adjoint=True), op.solve(_X),
                     op.solve(_X, adjoint=True), op.determinant(), op.log_abs_determinant(), op.diag_part(),
                     op.trace(), op.add_to_tensor(_M), op.matvec(_X[..., 0])])
    ah = np.swapaxes(dense, -1, -2)
    want = [dense, dense @ _X, ah @ _X, np.linalg.solve(dense, _X), np.linalg.solve(ah, _X), np.linalg.det(dense),
            np.linalg.slogdet(dense)[1], np.diagonal(dense, axis1=-2, axis2=-1), np.trace(dense, axis1=-2, axis2=-1),
            dense + _M, (dense @ _X)[..., 0]]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)


def test_zeros_and_refusals():
    z = tf.linalg.LinearOperatorZeros(3, batch_shape=[2], dtype=tf.float64)
    np.testing.assert_array_equal(run_modes(z.matmul(_X)), np.zeros_like(_X))
    with pytest.raises(NotImplementedError, match="singular"):
        z.solve(_X)
    with pytest.raises(ValueError, match="singular"):
        z.inverse()
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        tf.linalg.LinearOperatorFullMatrix([1.0, 2.0])
    with pytest.raises(TypeError, match="same dtype"):
        tf.linalg.LinearOperatorComposition([tf.linalg.LinearOperatorDiag(np.ones(3, np.float32)),
                                             tf.linalg.LinearOperatorDiag(np.ones(3))])
