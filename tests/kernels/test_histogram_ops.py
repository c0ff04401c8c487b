"""bincount, histogram_fixed_width(_bins) and confusion_matrix against TF 1.x figures (obtained by
running the same calls with TensorFlow 2.21's tensorflow.compat.v1 in graph mode)."""

import numpy as np
import pytest

import dflow as tf
from dflow.errors import InvalidArgumentError
from tests.conftest import run_modes

V = [-1.0, 0.0, 1.5, 2.0, 5.0, 15]


def test_bincount_against_tf():
    got = run_modes([tf.bincount([1, 1, 3, 7], minlength=10), tf.bincount([1, 1, 3], weights=[0.5, 1., 2.]),
                     tf.math.bincount([1, 1, 3, 7], maxlength=4), tf.bincount(tf.zeros([0], tf.int32)),
                     tf.bincount([[0, 2], [2, 2]], dtype=tf.float32)])
    np.testing.assert_array_equal(got[0], [0, 2, 0, 1, 0, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(got[1], [0, 1.5, 0, 2])
    np.testing.assert_array_equal(got[2], [0, 2, 0, 1])
    assert got[0].dtype == np.int32 and got[1].dtype == np.float32 and got[3].shape == (0,)
    np.testing.assert_array_equal(got[4], [1., 0, 3])
    with tf.Session() as s, pytest.raises(InvalidArgumentError, match="non-negative"):
        s.run(tf.bincount([1, -2]))


def test_histogram_fixed_width_against_tf():
    h = tf.histogram_fixed_width(V, [0.0, 5.0], nbins=5)
    assert h.op.type == "HistogramFixedWidth" and h.dtype == tf.int32 and h.shape.as_list() == [5]
    got = run_modes([h, tf.histogram_fixed_width_bins(V, [0.0, 5.0], nbins=5),
                     tf.histogram_fixed_width(tf.constant(V, tf.float64), [0.0, 5.0], nbins=2, dtype=tf.int64)])
    np.testing.assert_array_equal(got[0], [2, 1, 1, 0, 2])
    np.testing.assert_array_equal(got[1], [0, 0, 1, 2, 4, 4])
    np.testing.assert_array_equal(got[2], [4, 2])
    with tf.Session() as s:
        with pytest.raises(InvalidArgumentError, match="nbins should be a positive number"):
            s.run(tf.histogram_fixed_width(V, [0.0, 5.0], nbins=tf.constant(0)))
        with pytest.raises(InvalidArgumentError, match="value_range"):
            s.run(tf.histogram_fixed_width(V, [5.0, 0.0], nbins=3))


def test_confusion_matrix_against_tf():
    cm = tf.confusion_matrix([1, 2, 4], [2, 2, 4])
    assert cm.dtype == tf.int32 and cm.op.type == "ScatterNd" and cm.name == "confusion_matrix/ScatterNd:0"
    cmw = tf.math.confusion_matrix([0, 1, 1], [1, 1, 0], num_classes=3, weights=[1., 2, 3], dtype=tf.float32)
    got = run_modes([cm, cmw])
    np.testing.assert_array_equal(got[0], [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0],
                                           [0, 0, 0, 0, 1]])
    np.testing.assert_array_equal(got[1], [[0, 1, 0], [3, 2, 0], [0, 0, 0]])
    with tf.Session() as s:
        with pytest.raises(InvalidArgumentError, match="out of bound"):
            s.run(tf.confusion_matrix([0, 3], [0, 1], num_classes=3))
        with pytest.raises(InvalidArgumentError, match="negative"):
            s.run(tf.confusion_matrix(tf.constant([0, -1]), tf.constant([0, 1])))
