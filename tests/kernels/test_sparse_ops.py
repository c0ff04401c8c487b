"""The minimal `tf.SparseTensor` (kernels/sparse_ops.py): fetched as a SparseTensorValue, densified by
`tf.sparse.to_dense` / `tf.sparse_to_dense` against numpy, its gradient against central
differences, and TF1's index errors (TF 2.21 compat.v1 messages)."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


def random_sparse(rng, shape, density=0.4):
    mask = rng.random(shape) < density
    indices = np.argwhere(mask).astype(np.int64)  # row-major order, as TF requires
    values = rng.standard_normal(len(indices)).astype(np.float32)
    dense = np.zeros(shape, np.float32)
    dense[mask] = values
    return indices, values, dense


@pytest.mark.parametrize("shape", [(5,), (4, 6), (2, 3, 4)])
def test_to_dense_matches_numpy_on_every_mode(shape):
    rng = np.random.default_rng(len(shape))
    indices, values, dense = random_sparse(rng, shape)
    i = tf.placeholder(tf.int64, [None, len(shape)])
    v = tf.placeholder(tf.float32, [None])
    sp = tf.SparseTensor(i, v, list(shape))
    assert sp.shape.as_list() == list(shape) and sp.dtype == tf.float32
    out = run_modes([tf.sparse.to_dense(sp), tf.sparse_tensor_to_dense(sp, default_value=2.5)], {i: indices, v: values})
    np.testing.assert_array_equal(out[0], dense)
    want = np.full(shape, 2.5, np.float32)
    want[tuple(indices.T)] = values
    np.testing.assert_array_equal(out[1], want)


def test_fetched_as_a_sparse_tensor_value():
    sp = tf.SparseTensor([[0, 1], [1, 2]], [3.0, 4.0], [2, 3])
    with tf.Session() as sess:
        got, (again,) = sess.run([sp, [sp]])
        assert sp.eval(session=sess).dense_shape.tolist() == [2, 3]
    assert isinstance(got, tf.SparseTensorValue) and isinstance(again, tf.SparseTensorValue)
    np.testing.assert_array_equal(got.indices, [[0, 1], [1, 2]])
    np.testing.assert_array_equal(got.values, np.float32([3, 4]))
    assert got.indices.dtype == np.int64 and got.dense_shape.dtype == np.int64
    back = tf.SparseTensor.from_value(got)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.sparse.to_dense(back)), [[0, 3, 0], [0, 0, 4]])


def test_sparse_to_dense_of_vectors_scalars_and_strings():
    with tf.Session() as sess:
        # TF 2.21: sparse_to_dense([1, 3], [5], 2.0) -> [0 2 0 2 0]; sparse_to_dense(1, [3], 7) -> [0 7 0]
        np.testing.assert_array_equal(sess.run(tf.sparse_to_dense([1, 3], [5], 2.0)), [0, 2, 0, 2, 0])
        np.testing.assert_array_equal(sess.run(tf.sparse_to_dense(1, [3], 7)), [0, 7, 0])
        strings = sess.run(tf.sparse.to_dense(tf.SparseTensor([[0]], [b"x"], [2])))
    assert list(strings) == [b"x", b""]


def test_gradient_of_values_and_default():
    x = tf.constant([1.0, 2.0], tf.float64)
    d = tf.constant(1.5, tf.float64)
    dense = tf.sparse_to_dense([[0, 1], [1, 2]], [2, 3], x, d)
    w = tf.constant(np.arange(6.0).reshape(2, 3))
    y = tf.reduce_sum(dense * w)
    with tf.Session() as sess:
        gx, gd = sess.run(tf.gradients(y, [x, d]))
        # TF 2.21: the gradient of sum(to_dense(sp, 1.5) * range(6)) w.r.t. the values is [1, 5]
        np.testing.assert_array_equal(gx, [1.0, 5.0])
        assert gd == 15.0 - 6.0
        assert tf.test.compute_gradient_error(x, [2], dense, [2, 3], x_init_value=np.array([1.0, 2.0])) < 1e-6


@pytest.mark.parametrize("indices,message", [
    ([[0, 1], [0, 1]], r"indices\[1\] = \[0,1\] is repeated"),
    ([[1, 0], [0, 1]], r"indices\[1\] = \[0,1\] is out of order. Many sparse ops require sorted indices."),
    ([[0, 1], [2, 0]], r"indices\[1\] = \[2,0\] is out of bounds: need 0 <= index < \[2,3\]"),
])
def test_index_errors_are_tf1s(mode, sess_factory, indices, message):
    i = tf.placeholder(tf.int64, [None, 2])
    d = tf.sparse.to_dense(tf.SparseTensor(i, tf.constant([1.0, 2.0]), [2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        sess_factory(mode).run(d, {i: indices})
    if "bounds" not in message:  # validate_indices=False accepts them (the last value wins a repeat)
        loose = tf.sparse.to_dense(tf.SparseTensor(i, tf.constant([1.0, 2.0]), [2, 3]), validate_indices=False)
        assert sess_factory(mode).run(loose, {i: indices}).sum() > 0


def test_build_time_errors():
    with pytest.raises(ValueError):
        tf.SparseTensor([0, 1], [1.0], [2])  # indices must be a matrix
    with pytest.raises(TypeError):
        tf.sparse.to_dense(tf.constant([1.0]))
    with pytest.raises(TypeError, match="indices must be int64"):
        tf.SparseTensor(tf.constant([[0.5]]), [1.0], [2])


def test_sparse_placeholder_fed_a_value_or_a_triple(mode, sess_factory):
    rng = np.random.default_rng(5)
    indices, values, dense = random_sparse(rng, (3, 4))
    sp = tf.sparse_placeholder(tf.float32, name="sp")
    assert sp.indices.name == "sp/indices:0" and sp.values.name == "sp/values:0" and sp.shape.ndims is None
    d = tf.sparse.to_dense(sp)
    sess = sess_factory(mode)
    np.testing.assert_array_equal(sess.run(d, {sp: tf.SparseTensorValue(indices, values, [3, 4])}), dense)
    back = sess.run(sp, {sp: (indices, values, np.array([3, 4]))})
    np.testing.assert_array_equal(back.values, values)
    known = tf.sparse.placeholder(tf.float32, [3, 4])  # a fully known shape is a constant
    assert known.shape.as_list() == [3, 4]
    np.testing.assert_array_equal(sess.run(tf.sparse.to_dense(known), {known: (indices, values, [3, 4])}), dense)
    with pytest.raises(tf.errors.InvalidArgumentError, match="SparseTensorValue or an"):
        sess.run(d, {sp: values})
