"""tf.bitwise against numpy and TF 2.21's figures (shift clamping), on the schedulers."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.uint16, np.int64])
def test_and_or_xor_invert_against_numpy(dt):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 100, (4, 6)).astype(dt)
    b = rng.integers(0, 100, (1, 6)).astype(dt)
    x, y = tf.placeholder(tf.as_dtype(dt), [4, 6]), tf.placeholder(tf.as_dtype(dt), [1, 6])
    got = run_modes([tf.bitwise.bitwise_and(x, y), tf.bitwise.bitwise_or(x, y), tf.bitwise.bitwise_xor(x, y),
                     tf.bitwise.invert(x)], {x: a, y: b})
    for g, want in zip(got, [a & b, a | b, a ^ b, ~a]):
        assert g.dtype == dt
        np.testing.assert_array_equal(g, want)


def test_shifts_clamp_as_tf():
    x = tf.constant(np.array([-8, -1, 5, 127], np.int8))
    y = tf.constant(np.array([1, 9, -1, 7], np.int8))
    left, right = run_modes([tf.bitwise.left_shift(x, y), tf.bitwise.right_shift(x, y)])
    np.testing.assert_array_equal(left, [-16, -128, 5, -128])  # TF 2.21 compat.v1
    np.testing.assert_array_equal(right, [-4, -1, 5, 0])
    inv = run_modes(tf.bitwise.invert(tf.constant(np.array([0, 5, 255], np.uint8))))
    np.testing.assert_array_equal(inv, [255, 250, 0])


def test_bad_dtypes():
    with pytest.raises(TypeError, match="BitwiseAnd"):
        tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([1.0]))
    with pytest.raises(TypeError, match="LeftShift"):
        tf.bitwise.left_shift(tf.constant([1], tf.int32), tf.constant([1], tf.int64))
    with pytest.raises(AttributeError, match="tf.bitwise.population_count"):
        tf.bitwise.population_count  # noqa: B018 - not a TF1 name either: the missing-name error
