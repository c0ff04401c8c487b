"""dflow/sparse.py: sparse_tensor_dense_matmul (adjoints, gradients), sparse_reduce_sum, sparse_add,
sparse_placeholder feeds, against numpy and central differences, on every local scheduler."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

IDX = np.array([[0, 1], [2, 0], [2, 3], [0, 1]])
VALS = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
DENSE = np.zeros((3, 4), np.float32)
np.add.at(DENSE, tuple(IDX.T), VALS)  # repeated indices add up


@pytest.mark.parametrize("adjoint_a,adjoint_b", [(False, False), (True, False), (False, True), (True, True)])
def test_sparse_tensor_dense_matmul(adjoint_a, adjoint_b):
    rng = np.random.default_rng(0)
    a = DENSE.T if adjoint_a else DENSE
    b = rng.standard_normal((a.shape[1], 5)).astype(np.float32)
    sp = tf.SparseTensor(IDX, VALS, [3, 4])
    out = tf.sparse_tensor_dense_matmul(sp, b.T if adjoint_b else b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)
    assert out.shape.as_list() == [a.shape[0], 5]
    np.testing.assert_allclose(run_modes(out), a @ b, rtol=1e-5, atol=1e-6)


def test_sparse_matmul_gradients_match_differences():
    b0 = np.random.default_rng(1).standard_normal((4, 2))
    values = tf.placeholder(tf.float64, [4])
    b = tf.placeholder(tf.float64, [4, 2])
    out = tf.sparse.sparse_dense_matmul(tf.SparseTensor(IDX, values, [3, 4]), b)
    with tf.Session():
        assert tf.test.compute_gradient_error(b, [4, 2], out, [3, 2], x_init_value=b0,
                                              extra_feed_dict={values: VALS.astype(np.float64)}) < 1e-6
        assert tf.test.compute_gradient_error(values, [4], out, [3, 2], x_init_value=VALS.astype(np.float64),
                                              extra_feed_dict={b: b0}) < 1e-6
    v = tf.Variable(b0)
    (g,) = tf.gradients(tf.reduce_sum(tf.sparse_tensor_dense_matmul(tf.SparseTensor(IDX, VALS.astype(np.float64),
                                                                                     [3, 4]), v)), [v])
    assert isinstance(g, tf.IndexedSlices)  # only the rows the sparse columns name


def test_sparse_reduce_sum():
    sp = tf.SparseTensor(IDX, VALS, [3, 4])
    total, rows, cols = run_modes([tf.sparse_reduce_sum(sp), tf.sparse_reduce_sum(sp, 1),
                                   tf.sparse.reduce_sum(sp, 0, keepdims=True)])
    np.testing.assert_allclose(total, DENSE.sum())
    np.testing.assert_allclose(rows, DENSE.sum(1))
    np.testing.assert_allclose(cols, DENSE.sum(0, keepdims=True))


def test_sparse_add():
    a = tf.SparseTensor(IDX[:3], VALS[:3], [3, 4])
    b = tf.SparseTensor([[0, 1], [1, 1], [2, 3]], [10.0, 1.0, -3.0], [3, 4])
    both, dense, kept = run_modes([tf.sparse_add(a, b), tf.sparse_add(b, tf.ones([3, 4])),
                                   tf.sparse.add(a, b, thresh=0.5)])
    np.testing.assert_array_equal(both.indices, [[0, 1], [1, 1], [2, 0], [2, 3]])  # row-major order
    np.testing.assert_array_equal(both.values, [11.0, 1.0, 2.0, 0.0])
    np.testing.assert_array_equal(kept.indices, [[0, 1], [1, 1], [2, 0]])  # |0| < 0.5 dropped
    want = np.ones((3, 4), np.float32)
    want[0, 1], want[1, 1], want[2, 3] = 11, 2, -2
    np.testing.assert_array_equal(dense, want)
    with pytest.raises(TypeError):
        tf.sparse_add(tf.ones([2]), tf.ones([2]))


@pytest.mark.parametrize("feed", ["value", "tuple"])
def test_sparse_placeholder_feeds_an_embedding_lookup(feed):
    sp = tf.sparse_placeholder(tf.int64)
    params = np.arange(12, dtype=np.float32).reshape(6, 2)
    out = tf.nn.embedding_lookup_sparse(tf.constant(params), sp, None, combiner="sum")
    value = (np.array([[0, 0], [0, 1], [1, 0]]), np.array([1, 4, 5]), np.array([2, 2]))
    if feed == "value":
        value = tf.SparseTensorValue(*value)
    got = run_modes(out, {sp: value})
    np.testing.assert_array_equal(got, [params[1] + params[4], params[5]])


def test_from_dense_eye_expand_dims_match_tf1():
    # expected values printed by TF1 (tf.compat.v1 2.21) for the same calls
    def parts(sp):
        v = run_modes([sp.indices, sp.values, sp.dense_shape])
        return [np.asarray(x).tolist() for x in v]

    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 1], [2, 0]], [5.0, 6.0], [3, 2])
        assert parts(tf.sparse.expand_dims(sp)) == [[[0, 1, 0], [2, 0, 0]], [5.0, 6.0], [3, 2, 1]]
        assert parts(tf.sparse.expand_dims(sp, 0)) == [[[0, 0, 1], [0, 2, 0]], [5.0, 6.0], [1, 3, 2]]
        assert parts(tf.sparse.expand_dims(sp, -2)) == [[[0, 0, 1], [2, 0, 0]], [5.0, 6.0], [3, 1, 2]]
        assert parts(tf.sparse.eye(2, 3)) == [[[0, 0], [1, 1]], [1.0, 1.0], [2, 3]]
        assert parts(tf.sparse.from_dense([[0, 3], [4, 0]])) == [[[0, 1], [1, 0]], [3, 4], [2, 2]]
        assert parts(tf.sparse.from_dense([["", "a"]])) == [[[0, 1]], [b"a"], [1, 2]]
        with pytest.raises(ValueError, match="out of range"):
            tf.sparse.expand_dims(sp, 3)
        with pytest.raises(TypeError):
            tf.sparse.expand_dims(tf.constant([1]))
