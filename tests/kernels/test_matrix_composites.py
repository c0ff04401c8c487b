"""tf.linalg's pinv, matrix_rank, matvec, normalize, tensor_diag against numpy and TF 2.21."""

import numpy as np

import dflow as tf
from tests.conftest import run_modes


def test_against_numpy_and_tf():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 3))
    x = tf.placeholder(tf.float64, [2, 4, 3])
    v = tf.placeholder(tf.float64, [2, 3])
    vv = rng.standard_normal((2, 3))
    got = run_modes([tf.linalg.pinv(x), tf.linalg.matrix_rank(x), tf.linalg.matvec(x, v),
                     tf.linalg.normalize(v, axis=-1)], {x: a, v: vv})
    np.testing.assert_allclose(got[0], np.linalg.pinv(a), atol=1e-12)
    np.testing.assert_array_equal(got[1], [3, 3])
    assert got[1].dtype == np.int32
    np.testing.assert_allclose(got[2], np.einsum("bij,bj->bi", a, vv))
    np.testing.assert_allclose(got[3][0], vv / np.linalg.norm(vv, axis=-1, keepdims=True))
    # TF 2.21: rank 1; pinv of a rank-1 3x2 matrix
    rank, p = run_modes([tf.linalg.matrix_rank(np.array([[1.0, 2], [2, 4]])),
                         tf.linalg.pinv(np.array([[1.0, 2], [2, 4], [0, 1]]))])
    assert rank == 1
    np.testing.assert_allclose(p, [[0.2, 0.4, -2.0], [0.0, 0.0, 1.0]], atol=1e-12)
    np.testing.assert_array_equal(run_modes(tf.linalg.tensor_diag_part(np.arange(16.0).reshape(2, 2, 2, 2))),
                                  [[0.0, 5.0], [10.0, 15.0]])


def test_pinv_gradient():
    a = np.random.default_rng(1).standard_normal((4, 3))
    x = tf.placeholder(tf.float64, [4, 3])
    with tf.Session():
        assert tf.test.compute_gradient_error(x, [4, 3], tf.linalg.pinv(x), [3, 4], x_init_value=a,
                                              delta=1e-6) < 1e-5
