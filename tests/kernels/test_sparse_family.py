"""TF1's sparse family (kernels/sparse_index_ops.py, sparse_manip_ops.py, sparse_math_ops.py) on
the default Session and every local mode (run_modes), against TF 2.21's tf.compat.v1 figures
(hard-coded: obtained by running the same calls there), numpy, and central differences."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from dflow.errors import InvalidArgumentError
from tests.conftest import run_modes

IDX = [[2, 1], [0, 3], [0, 0], [1, 2]]
VALS = np.array([1.0, 2.0, 3.0, 4.0], np.float32)


def _sp():
    return tf.SparseTensor(IDX, VALS, [3, 4])


def _check(got, indices, values, shape):
    np.testing.assert_array_equal(got.indices, indices)
    np.testing.assert_allclose(got.values, values, rtol=1e-6)
    np.testing.assert_array_equal(got.dense_shape, shape)


def test_reorder_reshape_transpose_slice():
    sp = _sp()
    ordered = tf.sparse_reorder(sp)
    reo, resh, tr, sl = run_modes([ordered, tf.sparse_reshape(sp, [2, -1]), tf.sparse.transpose(ordered),
                                   tf.sparse.slice(ordered, [0, 1], [2, 3])])
    # TF: tf.sparse_reorder / sparse_reshape(sp, [2, -1]) / sparse_transpose / sparse_slice([0,1],[2,3])
    _check(reo, [[0, 0], [0, 3], [1, 2], [2, 1]], [3, 2, 4, 1], [3, 4])
    _check(resh, [[1, 3], [0, 3], [0, 0], [1, 0]], [1, 2, 3, 4], [2, 6])
    _check(tr, [[0, 0], [1, 2], [2, 1], [3, 0]], [3, 1, 4, 2], [4, 3])
    _check(sl, [[0, 2], [1, 1]], [2, 4], [2, 3])
    assert tf.sparse_reshape(sp, [2, -1]).shape.as_list() == [2, 6]
    with pytest.raises(ValueError, match="12 elements"):  # as TF's "Cannot reshape a tensor with 12 elements"
        tf.sparse_reshape(sp, [5, 2])
    bad = tf.placeholder(tf.int64, [2])
    with tf.Session() as s, pytest.raises(InvalidArgumentError, match="requires a multiple of 5"):
        s.run(tf.sparse_reshape(sp, bad), {bad: [5, -1]})


def test_concat_split_retain_reset_shape():
    a = tf.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 3])
    b = tf.SparseTensor([[0, 0], [2, 1]], [3.0, 4.0], [3, 2])
    c = tf.SparseTensor([[1, 1]], [5.0], [2, 2])
    cat, cat0, parts, kept, reset, bigger = run_modes([
        tf.sparse_concat(1, [a, b], expand_nonconcat_dim=True), tf.sparse.concat(axis=1, sp_inputs=[a, c]),
        tf.sparse_split(sp_input=tf.sparse_reorder(_sp()), num_split=3, axis=1),
        tf.sparse_retain(_sp(), [True, False, True, False]), tf.sparse_reset_shape(_sp()),
        tf.sparse.reset_shape(a, [4, 5])])
    _check(cat, [[0, 1], [0, 3], [1, 0], [2, 4]], [1, 3, 2, 4], [3, 5])  # TF figures
    _check(cat0, [[0, 1], [1, 0], [1, 4]], [1, 2, 5], [2, 5])
    _check(parts[0], [[0, 0], [2, 1]], [3, 1], [3, 2])  # TF: sizes 2, 1, 1
    _check(parts[1], [[1, 0]], [4], [3, 1])
    _check(parts[2], [[0, 0]], [2], [3, 1])
    _check(kept, [[2, 1], [0, 0]], [1, 3], [3, 4])
    _check(reset, IDX, VALS, [3, 4])
    _check(bigger, [[0, 1], [1, 0]], [1, 2], [4, 5])
    with pytest.raises(ValueError, match="dimension 0"):
        tf.sparse_concat(1, [a, b])
    with pytest.raises(ValueError, match="Keyword arguments"):
        tf.sparse_split(_sp(), 2, 1)
    with pytest.raises(ValueError, match="smaller"):
        tf.sparse_reset_shape(a, [1, 3])
    with pytest.raises(ValueError, match="3 entries"):
        tf.sparse_retain(_sp(), [True, False, True])


def test_fill_empty_rows_indicator_merge():
    sp = tf.SparseTensor([[0, 1], [0, 0], [3, 2]], [1.0, 2.0, 3.0], [5, 3])
    ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([3, 1, 0], tf.int64), [3, 2])
    w = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [0.5, 0.6, 0.7], [3, 2])
    (filled, empty), ind, merged = run_modes([tf.sparse_fill_empty_rows(sp, -1.0), tf.sparse_to_indicator(ids, 4),
                                              tf.sparse.merge(ids, w, 4)])
    _check(filled, [[0, 1], [0, 0], [1, 0], [2, 0], [3, 2], [4, 0]], [1, 2, -1, -1, 3, -1], [5, 3])  # TF
    np.testing.assert_array_equal(empty, [False, True, True, False, True])
    np.testing.assert_array_equal(ind, [[False, True, False, True], [False] * 4, [True, False, False, False]])
    _check(merged, [[0, 1], [0, 3], [2, 0]], [0.6, 0.5, 0.7], [3, 4])
    bad = tf.SparseTensor([[7, 0]], [1.0], [5, 3])
    with tf.Session() as s, pytest.raises(InvalidArgumentError, match="indices\\(0, 0\\) is invalid"):
        s.run(tf.sparse_fill_empty_rows(bad, 0.0))


def test_maximum_minimum():
    x = tf.SparseTensor([[0, 0], [1, 1]], [-1.0, 2.0], [2, 2])
    y = tf.SparseTensor([[0, 0], [0, 1]], [-3.0, -2.0], [2, 2])
    hi, lo = run_modes([tf.sparse_maximum(x, y), tf.sparse.minimum(x, y)])
    _check(hi, [[0, 0], [0, 1], [1, 1]], [-1, 0, 2], [2, 2])  # TF: a missing entry counts as 0
    _check(lo, [[0, 0], [0, 1], [1, 1]], [-3, -2, 0], [2, 2])
    z = tf.SparseTensor([[0, 0]], [1.0], [3, 2])
    with tf.Session() as s, pytest.raises(InvalidArgumentError, match="shapes do not match"):
        s.run(tf.sparse_maximum(x, z))


def test_softmax_and_reductions():
    n = tf.SparseTensor([[0, 0], [0, 2], [2, 1]], [-1.0, -3.0, 5.0], [3, 3])
    soft, total, rows, cols, rs, cs, all_, keep = run_modes([
        tf.sparse_softmax(tf.sparse_reorder(_sp())), tf.sparse_reduce_max(n), tf.sparse_reduce_max(n, 1),
        tf.sparse.reduce_max(n, 0, keepdims=True), tf.sparse_reduce_max_sparse(n, 1),
        tf.sparse_reduce_sum_sparse(n, 0), tf.sparse.reduce_sum_sparse(n),
        tf.sparse_reduce_sum_sparse(n, 1, keepdims=True)])
    _check(soft, [[0, 0], [0, 3], [1, 2], [2, 1]], [0.7310586, 0.26894143, 1.0, 1.0], [3, 4])  # TF figures
    assert total == 5.0
    np.testing.assert_array_equal(rows, [-1, 0, 5])  # TF: a row with no entry gives 0
    np.testing.assert_array_equal(cols, [[-1, 5, -3]])
    _check(rs, [[0], [2]], [-1, 5], [3])
    _check(cs, [[0], [1], [2]], [-1, 5, -3], [3])
    _check(all_, np.zeros((1, 0)), [1], [])
    _check(keep, [[0, 0], [2, 0]], [-4, 5], [3, 1])


def test_segment_ops_and_mask():
    d = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    s, m, q, q4 = run_modes([tf.sparse_segment_sum(d, [0, 2, 1], [0, 0, 2]),
                             tf.sparse_segment_mean(d, [0, 2, 1], [0, 0, 2]),
                             tf.sparse.segment_sqrt_n(d, [0, 2, 1], [0, 0, 2]),
                             tf.sparse_segment_sqrt_n(d, [0, 2, 1], [0, 0, 2], num_segments=4)])
    np.testing.assert_allclose(s, [[6, 8], [0, 0], [3, 4]])  # TF figures
    np.testing.assert_allclose(m, [[3, 4], [0, 0], [3, 4]])
    np.testing.assert_allclose(q4, [[4.2426405, 5.656854], [0, 0], [3, 4], [0, 0]], rtol=1e-6)
    np.testing.assert_allclose(q, q4[:3])
    sl = tf.IndexedSlices(tf.constant(d), tf.constant([12, 26, 37]), tf.constant([50, 2]))
    masked = tf.sparse_mask(sl, [12, 45])
    values, indices = run_modes([masked.values, masked.indices])
    np.testing.assert_array_equal(values, d[1:])
    np.testing.assert_array_equal(indices, [26, 37])


def test_gradients_match_differences():
    v0 = np.array([1.0, 2.0, 3.0, 4.0])
    v = tf.placeholder(tf.float64, [4])
    sp = tf.SparseTensor([[0, 0], [0, 3], [1, 2], [2, 1]], v, [3, 4])
    w = tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64)
    soft = tf.sparse_softmax(sp).values
    (g,) = tf.gradients(tf.reduce_sum(soft * w), [v])
    with tf.Session() as s:
        # TF: the gradient of sum(softmax(sp).values * [1, 2, 3, 4]) with respect to the values
        np.testing.assert_allclose(s.run(g, {v: v0}), [-0.19661193, 0.19661193, 0, 0], atol=1e-7)
        for out in (soft, tf.sparse_reorder(tf.SparseTensor([[2, 1], [0, 3], [0, 0], [1, 2]], v, [3, 4])).values,
                    tf.sparse_fill_empty_rows(tf.SparseTensor([[0, 0], [0, 3], [3, 2], [3, 1]], v, [5, 4]),
                                              np.float64(0.5))[0].values,
                    tf.sparse_slice(sp, [0, 1], [2, 3]).values):
            n = out.shape[0].value or len(s.run(out, {v: v0}))
            assert tf.test.compute_gradient_error(v, [4], out, [n], x_init_value=v0) < 1e-6
    data = tf.placeholder(tf.float64, [3, 2])
    d0 = np.arange(6.0).reshape(3, 2)
    with tf.Session():
        for fn in (tf.sparse_segment_sum, tf.sparse_segment_mean, tf.sparse_segment_sqrt_n):
            out = fn(data, [0, 2, 1, 2], [0, 0, 1, 1], num_segments=3)
            assert tf.test.compute_gradient_error(data, [3, 2], out, [3, 2], x_init_value=d0) < 1e-6
    table = tf.Variable(d0)
    (g,) = tf.gradients(tf.reduce_sum(tf.sparse_segment_sum(table, [0, 2], [0, 1])), [table])
    assert isinstance(g, tf.IndexedSlices)  # only the rows read
