"""Segment reductions against numpy loops, TF1's values for empty segments, gradients."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

DATA = np.array([[1., 2], [3, -4], [5, 6], [0, 8], [2, 2]])
IDS = np.array([0, 0, 2, 2, 3])


def _loop(data, ids, num, fn, empty):
    out = np.full((num,) + data.shape[1:], empty, dtype=data.dtype)
    for k in range(num):
        rows = data[ids == k]
        if len(rows):
            out[k] = fn(rows, axis=0)
    return out


def test_sorted_and_unsorted_against_numpy_on_the_schedulers():
    d = tf.constant(DATA)
    got = run_modes([tf.segment_sum(d, IDS), tf.segment_mean(d, IDS), tf.segment_max(d, IDS),
                     tf.segment_min(d, IDS), tf.segment_prod(d, IDS), tf.unsorted_segment_max(d, IDS, 5),
                     tf.unsorted_segment_min(d, IDS, 5), tf.unsorted_segment_prod(d, IDS, 5),
                     tf.unsorted_segment_mean(d, IDS, 5), tf.unsorted_segment_sqrt_n(d, IDS, 5),
                     tf.math.unsorted_segment_max(d, [0, -1, 1, 1, 0], 2)])
    lowest, highest = np.finfo(np.float64).min, np.finfo(np.float64).max
    # TF 1.x: sorted segment_max/min give 0 for an empty segment, segment_prod 1; unsorted max
    # gives the lowest value, min the highest, prod 1, mean and sqrt_n 0 (tensorflow/core/kernels/segment_reduction_ops)
    want = [_loop(DATA, IDS, 4, np.sum, 0), _loop(DATA, IDS, 4, np.mean, 0), _loop(DATA, IDS, 4, np.max, 0),
            _loop(DATA, IDS, 4, np.min, 0), _loop(DATA, IDS, 4, np.prod, 1), _loop(DATA, IDS, 5, np.max, lowest),
            _loop(DATA, IDS, 5, np.min, highest), _loop(DATA, IDS, 5, np.prod, 1), _loop(DATA, IDS, 5, np.mean, 0),
            _loop(DATA, IDS, 5, lambda r, axis: r.sum(axis) / np.sqrt(len(r)), 0),
            np.array([[2., 2], [5, 8]])]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


@pytest.mark.parametrize("build", [
    lambda x: tf.unsorted_segment_max(x, IDS, 4),
    lambda x: tf.unsorted_segment_min(x, IDS, 4),
    lambda x: tf.unsorted_segment_prod(x, IDS, 4),
    lambda x: tf.unsorted_segment_mean(x * x, IDS, 4),
    lambda x: tf.unsorted_segment_sqrt_n(x, IDS, 4),
    lambda x: tf.segment_max(x, IDS) + tf.segment_mean(x, IDS) + tf.segment_sum(x, IDS),
])
def test_gradients_against_finite_differences(build):
    x = tf.placeholder(tf.float64, DATA.shape)
    y = build(x)
    init = DATA + np.linspace(0, 0.3, DATA.size).reshape(DATA.shape)  # no ties
    with tf.Session():
        assert tf.test.compute_gradient_error(x, list(DATA.shape), y, [4, 2], x_init_value=init) < 1e-8


def test_max_gradient_is_shared_among_ties_and_prod_handles_zeros():
    x = tf.constant([[1.0], [1.0], [0.0], [0.0], [3.0], [0.0]])
    ids = [0, 0, 1, 1, 2, 2]
    gm, = tf.gradients(tf.unsorted_segment_max(x, ids, 3), x)
    gp, = tf.gradients(tf.unsorted_segment_prod(x, ids, 3), x)
    m, p = run_modes([gm, gp])
    np.testing.assert_allclose(m[:, 0], [0.5, 0.5, 0.5, 0.5, 1, 0])  # TF 1.15 math_grad: ties share
    np.testing.assert_allclose(p[:, 0], [1, 1, 0, 0, 0, 3])  # two zeros: 0; one zero: the product of the others


def test_bad_ids():
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids contains 4, not in \[0, 3\)"):
            s.run(tf.unsorted_segment_max(tf.constant(DATA), [0, 1, 2, 4, 0], 3))
