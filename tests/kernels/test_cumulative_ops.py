"""cumprod against TF 1.x figures (obtained by running tf.compat.v1.cumprod in TensorFlow 2.21)."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

X = np.array([[1., 2, 3], [4, 5, 6]], np.float32)


@pytest.mark.parametrize("exclusive,reverse,want", [
    (False, False, [[1, 2, 6], [4, 20, 120]]),
    (False, True, [[6, 6, 3], [120, 30, 6]]),
    (True, False, [[1, 1, 2], [1, 4, 20]]),
    (True, True, [[6, 3, 1], [30, 6, 1]]),
])
def test_cumprod_against_tf(exclusive, reverse, want):
    y = tf.cumprod(tf.constant(X), axis=1, exclusive=exclusive, reverse=reverse)
    assert y.op.type == "Cumprod" and tf.math.cumprod is tf.cumprod
    np.testing.assert_array_equal(run_modes(y, chunks=1), want)


def test_cumprod_gradient_against_tf_and_finite_differences():
    xg = tf.constant([[1.5, -2., 3.], [0.5, 4, -1]])
    y = tf.reduce_sum(tf.cumprod(xg, axis=1, exclusive=True, reverse=True) * [[1., 2, 3], [4, 5, 6]])
    g, = tf.gradients(y, xg)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(g), [[0, 3, 0], [0, -4, 21]])  # TF figures
    x = tf.placeholder(tf.float64, [2, 3])
    with tf.Session():
        for ex in (False, True):
            for rv in (False, True):
                out = tf.cumprod(x, axis=0, exclusive=ex, reverse=rv)
                assert tf.test.compute_gradient_error(x, [2, 3], out, [2, 3], x_init_value=X.astype(np.float64)) < 1e-7


def test_cumprod_bad_axis():
    with pytest.raises(ValueError, match="Dimension"):
        tf.cumprod(tf.constant(X), axis=2)
    with pytest.raises(TypeError):
        tf.cumprod(tf.constant([True]))
