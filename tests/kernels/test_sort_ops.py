"""sort, argsort, searchsorted, setdiff1d and unique_with_counts against TF 1.x figures (obtained by
running the same calls with TensorFlow 2.21's tensorflow.compat.v1 in graph mode) and numpy."""

import numpy as np
import pytest

import dflow as tf
from dflow.errors import InvalidArgumentError
from tests.conftest import run_modes

A = [3., 1, 2, 1, 5]


def test_sort_and_argsort_against_tf():
    a = tf.constant(A)
    got = run_modes([tf.sort(a, direction="DESCENDING"), tf.sort(a), tf.argsort(a),
                     tf.argsort(a, direction="DESCENDING", stable=True), tf.sort(tf.constant([3, -1, 2, -7])),
                     tf.sort(tf.constant(np.array([3, 0, 255, 7], np.uint8))),
                     tf.sort(tf.constant(np.array([3, np.iinfo(np.int32).min, 5], np.int32)))], chunks=2)
    np.testing.assert_array_equal(got[0], [5, 3, 2, 1, 1])
    np.testing.assert_array_equal(got[1], [1, 1, 2, 3, 5])
    np.testing.assert_array_equal(got[2], [1, 3, 2, 0, 4])
    np.testing.assert_array_equal(got[3], [4, 0, 2, 1, 3])
    np.testing.assert_array_equal(got[4], [-7, -1, 2, 3])
    np.testing.assert_array_equal(got[5], [0, 3, 7, 255])
    np.testing.assert_array_equal(got[6], [np.iinfo(np.int32).min, 3, 5])


def test_sort_along_an_inner_axis_matches_numpy():
    x = np.random.RandomState(0).randn(3, 5, 4)
    got = run_modes([tf.sort(x, axis=1), tf.argsort(x, axis=0, direction="DESCENDING"), tf.sort(x, axis=-1)])
    np.testing.assert_array_equal(got[0], np.sort(x, axis=1))
    np.testing.assert_array_equal(got[1], np.argsort(-x, axis=0, kind="stable"))
    np.testing.assert_array_equal(got[2], np.sort(x, axis=-1))


def test_sort_gradient_goes_through_top_k():
    x = tf.placeholder(tf.float64, [2, 4])
    y = tf.sort(x, axis=0) * np.arange(8.).reshape(2, 4)
    with tf.Session():
        init = np.random.RandomState(1).randn(2, 4)
        assert tf.test.compute_gradient_error(x, [2, 4], y, [2, 4], x_init_value=init) < 1e-8


def test_sort_bad_arguments():
    with pytest.raises(ValueError, match="Unknown direction"):
        tf.sort([1., 2], direction="UP")
    with pytest.raises(ValueError, match="constant"):
        tf.sort([1., 2], axis=tf.placeholder(tf.int32, []))


def test_searchsorted_against_tf():
    seq, vals = [[1, 3, 5, 7], [2, 4, 6, 8]], [[3, 6], [1, 9]]
    right = tf.searchsorted(seq, vals, side="right")
    left = tf.searchsorted(tf.constant(seq, tf.float32), tf.constant(vals, tf.float32), out_type=tf.int64)
    got = run_modes([right, left, tf.searchsorted([1, 2, 3], [[2, 3], [0, 4]][0])])
    np.testing.assert_array_equal(got[0], [[2, 3], [0, 4]])
    np.testing.assert_array_equal(got[1], [[1, 3], [0, 4]])
    assert got[1].dtype == np.int64 and got[0].dtype == np.int32
    np.testing.assert_array_equal(got[2], [1, 2])
    with pytest.raises(ValueError, match="side must be"):
        tf.searchsorted(seq, vals, side="middle")
    with tf.Session() as s, pytest.raises(InvalidArgumentError, match="leading dimensions"):
        s.run(tf.searchsorted(seq, [[1]]))


def test_setdiff1d_and_unique_with_counts_against_tf():
    d = tf.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5])
    u = tf.unique_with_counts([1, 1, 2, 4, 4, 4, 7, 8, 8])
    assert type(d).__name__ == "ListDiff" and d._fields == ("out", "idx") and d.out.op.type == "ListDiff"
    assert u._fields == ("y", "idx", "count") and u.y.op.type == "UniqueWithCounts"
    got = run_modes([d, u])
    np.testing.assert_array_equal(got[0].out, [2, 4, 6])
    np.testing.assert_array_equal(got[0].idx, [1, 3, 5])
    np.testing.assert_array_equal(got[1].y, [1, 2, 4, 7, 8])
    np.testing.assert_array_equal(got[1].idx, [0, 0, 1, 2, 2, 2, 3, 4, 4])
    np.testing.assert_array_equal(got[1].count, [2, 1, 3, 1, 2])
    first_seen = tf.unique_with_counts(tf.constant([5., 1, 5, 3]), out_idx=tf.int64)
    got = run_modes(first_seen)
    np.testing.assert_array_equal(got.y, [5, 1, 3])
    np.testing.assert_array_equal(got.idx, [0, 1, 0, 2])
    assert got.count.dtype == np.int64
    with pytest.raises(ValueError, match="1-D"):
        tf.unique_with_counts([[1, 2]])
