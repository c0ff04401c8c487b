"""tf.math's composites and CumulativeLogsumexp against numpy and TF 2.21's figures."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


def test_polyval_and_monotonicity():
    got = run_modes([tf.math.polyval([1.0, 2.0, 3.0], tf.constant([0.0, 2.0])),
                     tf.math.polyval([], tf.constant([0.0, 2.0])),
                     tf.math.is_non_decreasing([1, 1, 2]), tf.is_strictly_increasing([1, 1, 2]),
                     tf.math.is_strictly_increasing(tf.constant([], tf.float32)),
                     tf.is_non_decreasing(tf.constant([[1.0, 2.0], [0.5, 3.0]]))])
    np.testing.assert_array_equal(got[0], [3.0, 11.0])  # TF 2.21
    np.testing.assert_array_equal(got[1], [0.0, 0.0])
    assert list(map(bool, got[2:])) == [True, False, True, False]
    with pytest.raises(ValueError, match="coeffs must be list"):
        tf.math.polyval((1.0, 2.0), 1.0)
    with pytest.raises(TypeError):
        tf.math.is_non_decreasing(tf.constant([True, False]))


def test_approx_top_k_is_exact_top_k():
    x = tf.constant([[1.0, 5.0, 3.0, 2.0]])
    big, small, col = run_modes([tf.math.approx_max_k(x, 2), tf.math.approx_min_k(x, 2),
                                 tf.math.approx_max_k(tf.transpose(x), 1, reduction_dimension=0)])
    np.testing.assert_array_equal(big[0], [[5.0, 3.0]])  # TF 2.21 (CPU)
    np.testing.assert_array_equal(big[1], [[1, 2]])
    np.testing.assert_array_equal(small[0], [[1.0, 2.0]])
    np.testing.assert_array_equal(small[1], [[0, 3]])
    np.testing.assert_array_equal(col[0], [[5.0]])


def _numpy_cls(x, axis, exclusive, reverse):
    x = np.flip(x, axis) if reverse else x
    out = np.logaddexp.accumulate(x, axis=axis)
    if exclusive:
        out = np.concatenate([np.full_like(np.take(out, [0], axis), -np.inf), np.delete(out, -1, axis)], axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("axis,exclusive,reverse", [(0, False, False), (1, True, False), (1, False, True),
                                                    (-1, True, True)])
def test_cumulative_logsumexp(axis, exclusive, reverse):
    v = np.random.default_rng(0).standard_normal((4, 6)) * 300  # far beyond exp's range
    x = tf.placeholder(tf.float64, [4, 6])
    y = tf.math.cumulative_logsumexp(x, axis=axis, exclusive=exclusive, reverse=reverse)
    np.testing.assert_allclose(run_modes(y, {x: v}), _numpy_cls(v, axis, exclusive, reverse))
    w = np.random.default_rng(1).standard_normal((4, 6))
    with tf.Session():
        assert tf.test.compute_gradient_error(x, [4, 6], tf.exp(y) * tf.constant(w), [4, 6], x_init_value=v / 300,
                                              delta=1e-6) < 1e-6


def test_cumulative_logsumexp_tf_figures_and_errors():
    got = run_modes(tf.math.cumulative_logsumexp(tf.constant([[1.0, 2.0, 3.0], [0, -1, 4]]), axis=1,
                                                 exclusive=True, reverse=True))
    np.testing.assert_allclose(got, [[3.3132617, 3.0, -np.inf], [4.0067153, 4.0, -np.inf]], rtol=1e-6)  # TF 2.21
    with pytest.raises(TypeError, match="CumulativeLogsumexp"):
        tf.math.cumulative_logsumexp(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="Dimension"):
        tf.math.cumulative_logsumexp(tf.constant([1.0, 2.0]), axis=3)
