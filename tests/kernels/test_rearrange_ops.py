"""roll, meshgrid, diag and diag_part against TF 1.x figures (obtained by running the same calls with
TensorFlow 2.21's tensorflow.compat.v1 in graph mode) and numpy."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


def test_roll_against_tf_and_numpy():
    r = tf.roll(tf.reshape(tf.range(12), [3, 4]), shift=[1, -1], axis=[0, 1])
    assert r.op.type == "Roll"
    x = np.arange(24.).reshape(2, 3, 4)
    got = run_modes([r, tf.roll(x, 5, 2), tf.roll(x, [1, 1], [1, 1])])
    np.testing.assert_array_equal(got[0], [[9, 10, 11, 8], [1, 2, 3, 0], [5, 6, 7, 4]])
    np.testing.assert_array_equal(got[1], np.roll(x, 5, 2))
    np.testing.assert_array_equal(got[2], np.roll(x, 2, 1))


def test_roll_gradient_and_bad_input():
    x = tf.placeholder(tf.float64, [3, 4])
    y = tf.roll(x, [2, -1], [0, 1]) * np.arange(12.).reshape(3, 4)
    with tf.Session():
        assert tf.test.compute_gradient_error(x, [3, 4], y, [3, 4], x_init_value=np.ones((3, 4))) < 1e-8
    with pytest.raises(ValueError, match="same size"):
        tf.roll([1, 2], [1, 2], [0])


def test_meshgrid_against_tf():
    X, Y = tf.meshgrid([1, 2, 3], [4, 5])
    Xi, Yi = tf.meshgrid([1, 2, 3], [4, 5], indexing="ij")
    got = run_modes([X, Y, Xi, Yi])
    np.testing.assert_array_equal(got[0], [[1, 2, 3], [1, 2, 3]])
    np.testing.assert_array_equal(got[1], [[4, 4, 4], [5, 5, 5]])
    np.testing.assert_array_equal(got[2], [[1, 1], [2, 2], [3, 3]])
    for g, w in zip(run_modes(tf.meshgrid([1., 2], [3., 4, 5], [6., 7])),
                    np.meshgrid([1., 2], [3., 4, 5], [6., 7])):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError, match="indexing"):
        tf.meshgrid([1], [2], indexing="yx")
    with pytest.raises(TypeError, match="invalid keyword"):
        tf.meshgrid([1], sparse=True)


def test_diag_and_diag_part():
    d = tf.diag([[1, 2], [3, 4]])
    assert d.op.type == "Diag" and d.shape.as_list() == [2, 2, 2, 2]
    got = run_modes([d, tf.diag_part(d), tf.diag([1., 2, 3])])
    want = np.zeros((4, 4), np.int32)
    want[np.arange(4), np.arange(4)] = [1, 2, 3, 4]
    np.testing.assert_array_equal(got[0], want.reshape(2, 2, 2, 2))
    np.testing.assert_array_equal(got[1], [[1, 2], [3, 4]])  # TF figures
    np.testing.assert_array_equal(got[2], np.diag([1., 2, 3]))
    x = tf.placeholder(tf.float64, [3])
    with tf.Session():
        y = tf.diag_part(tf.diag(x) * 2.0 + tf.ones([3, 3], tf.float64))
        assert tf.test.compute_gradient_error(x, [3], y, [3], x_init_value=np.array([1., 2, 3])) < 1e-8
    with pytest.raises(ValueError, match="DiagPart"):
        tf.diag_part(tf.zeros([2, 3]))


def test_zero_fraction_against_tf():
    z = tf.nn.zero_fraction([[0., 1], [0, 0]])
    assert z.op.name == "zero_fraction/fraction" and z.dtype == tf.float32
    assert run_modes(z) == pytest.approx(0.75)
    assert tf.math.zero_fraction is tf.nn.zero_fraction
