"""tf.sets and tf.edit_distance (kernels/set_ops.py). Expected values are TF1's (tensorflow.compat.v1
2.21) for the same inputs."""

import numpy as np
import pytest

import dflow as tf
from dflow import errors
from tests.conftest import run_modes

A = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.int64)
B = np.array([[[1, 3], [3, 9]], [[5, 5], [7, 8]]], np.int64)


@pytest.fixture(autouse=True)
def _fresh_graph():
    tf.reset_default_graph()
    yield


def _check(sp, indices, values, shape):
    got = run_modes([sp.indices, sp.values, sp.dense_shape])
    np.testing.assert_array_equal(got[0].reshape(-1, len(shape)), np.reshape(indices, (-1, len(shape))))
    np.testing.assert_array_equal(got[1], values)
    np.testing.assert_array_equal(got[2], shape)


def test_dense_set_operations():
    a, b = tf.constant(A), tf.constant(B)
    _check(tf.sets.intersection(a, b), [[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]], [1, 3, 5, 7, 8],
           [2, 2, 2])
    _check(tf.sets.difference(a, b), [[0, 0, 0], [0, 1, 0], [1, 0, 0]], [2, 4, 6], [2, 2, 1])
    _check(tf.sets.set_difference(a, b, aminusb=False), [[0, 0, 0], [0, 1, 0]], [3, 9], [2, 2, 1])
    u = tf.sets.union(a, b)
    vals = run_modes(u.values)
    np.testing.assert_array_equal(vals, [1, 2, 3, 3, 4, 9, 5, 6, 7, 8])  # TF1's values
    assert run_modes(u.dense_shape).tolist() == [2, 2, 3]


def test_sparse_and_size():
    sa = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 2]], tf.constant([3, 1, 4, 4], tf.int32), [3, 4])
    np.testing.assert_array_equal(run_modes(tf.sets.size(sa)), [2, 1, 0])  # TF1: [2 1 0]
    _check(tf.sets.union(sa, tf.constant([[2], [4], [9]], tf.int32)), [[0, 0], [0, 1], [0, 2], [1, 0], [2, 0]],
           [1, 2, 3, 4, 9], [3, 3])
    s = tf.sets.intersection(tf.constant([[b"a", b"b"]]), tf.constant([[b"b", b"c"]]))
    assert run_modes(s.values).tolist() == [b"b"]


def test_bad_input():
    unordered = tf.SparseTensor([[0, 1], [0, 0]], [1, 2], [1, 2])
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="out of order"):  # TF1's words
            sess.run(tf.sets.size(unordered))
        with pytest.raises(errors.InvalidArgumentError, match="mismatched group dimensions"):
            sess.run(tf.sets.union(tf.constant(A), tf.constant(B[:1])).values)
    with pytest.raises(TypeError):
        tf.sets.union(tf.constant([[1.0]]), tf.constant([[1.0]]))
    with pytest.raises(ValueError, match="rank >= 2"):
        tf.sets.union(tf.constant([1]), tf.constant([1]))
    with pytest.raises(TypeError):
        tf.sets.size(tf.constant([[1]]))


def test_edit_distance():
    h = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], ["a", "b", "c"], [2, 2])
    t = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["a", "c", "d"], [2, 2])
    np.testing.assert_allclose(run_modes(tf.edit_distance(h, t)), [1.0, 0.5])  # TF1: [1.  0.5]
    h3 = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [1, 0, 0]], [1, 2, 3], [2, 1, 2])
    t3 = tf.SparseTensor([[0, 0, 0], [1, 0, 0], [1, 0, 1]], [1, 3, 4], [2, 1, 3])
    np.testing.assert_allclose(run_modes(tf.edit_distance(h3, t3, normalize=False)), [[1.0], [1.0]])
    empty = tf.SparseTensor(np.zeros((0, 2), np.int64), tf.constant([], tf.int32), [1, 1])
    one = tf.SparseTensor([[0, 0]], [1], [1, 1])
    assert run_modes(tf.edit_distance(empty, one)).tolist() == [1.0]  # TF1: [1.]
    assert run_modes(tf.edit_distance(one, empty)).tolist() == [np.inf]  # TF1: [inf]
    with pytest.raises(TypeError):
        tf.edit_distance(tf.constant([[1]]), one)
    with pytest.raises(TypeError):
        tf.edit_distance(one, tf.SparseTensor([[0, 0]], [1.0], [1, 1]))
