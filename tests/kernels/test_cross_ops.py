"""tf.cross / tf.linalg.cross against numpy on the schedulers (chunks split the last dim, which the
lowering gathers), its gradient against finite differences and TF1's rule, and TF's errors (the
messages checked with TF 2.21's tf.compat.v1)."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

RNG = np.random.default_rng(3)


def test_against_numpy_on_the_schedulers():
    a, b = RNG.standard_normal((4, 5, 3)), RNG.standard_normal((4, 5, 3))
    ia, ib = RNG.integers(-9, 9, (5, 3)).astype(np.int32), RNG.integers(-9, 9, (5, 3)).astype(np.int32)
    pa = tf.placeholder(tf.float64, [None, None, 3])
    got, got_int = run_modes([tf.cross(pa, tf.constant(b)), tf.linalg.cross(ia, ib)], {pa: a})
    np.testing.assert_allclose(got, np.cross(a, b), rtol=1e-12)
    np.testing.assert_array_equal(got_int, np.cross(ia, ib))
    assert got_int.dtype == np.int32
    assert tf.cross is tf.linalg.cross


def test_op_and_static_shape():
    c = tf.cross(tf.zeros([2, 3]), tf.zeros([2, 3]))
    assert (c.op.type, c.op.name, c.shape.as_list()) == ("Cross", "Cross", [2, 3])
    assert tf.cross(tf.placeholder(tf.float32, [None, 3]), tf.zeros([4, 3])).shape.as_list() == [4, 3]
    assert tf.cross(tf.placeholder(tf.float32), tf.placeholder(tf.float32)).shape.ndims is None


def test_gradient():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    x, y = tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [2, 3])
    c = tf.cross(x, y)
    with tf.Session():
        err_a = tf.test.compute_gradient_error(x, [2, 3], c, [2, 3], x_init_value=a, delta=1e-6, extra_feed_dict={y: b})
        err_b = tf.test.compute_gradient_error(y, [2, 3], c, [2, 3], x_init_value=b, delta=1e-6, extra_feed_dict={x: a})
    assert max(err_a, err_b) < 1e-8
    w = RNG.standard_normal((2, 3))
    ga, gb = tf.gradients(tf.reduce_sum(c * w), [x, y])
    got_a, got_b = run_modes([ga, gb], {x: a, y: b})
    np.testing.assert_allclose(got_a, np.cross(b, w), rtol=1e-12)  # TF1: grad_a = cross(b, g)
    np.testing.assert_allclose(got_b, np.cross(w, a), rtol=1e-12)  # grad_b = cross(g, a)


def test_static_errors_as_tf():
    with pytest.raises(ValueError, match=r"Dimension 0 in both shapes must be equal, but are 2 and 1. Shapes are "
                                         r"\[2,3\] and \[1,3\]"):
        tf.cross(tf.zeros([2, 3]), tf.zeros([1, 3]))  # TF does not broadcast
    with pytest.raises(ValueError, match="Shapes must be equal rank, but are 2 and 1"):
        tf.cross(tf.zeros([2, 3]), tf.zeros([3]))
    with pytest.raises(ValueError, match="Dimension must be 3 but is 4"):
        tf.cross(tf.zeros([2, 4]), tf.zeros([2, 4]))
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.cross(tf.zeros([]), tf.zeros([3]))
    with pytest.raises(TypeError, match="Value passed to parameter 'a' has DataType bool not in list"):
        tf.cross(tf.zeros([3], tf.bool), tf.zeros([3], tf.bool))
    with pytest.raises(TypeError, match="Input 'b' of 'Cross' Op has type float64 that does not match type float32"):
        tf.cross(tf.zeros([3]), tf.zeros([3], tf.float64))


@pytest.mark.parametrize("mode", ["eager", "sync"])
def test_run_time_errors_as_tf(mode):
    from tests.conftest import make_session

    p, q = tf.placeholder(tf.float32, [None, None]), tf.placeholder(tf.float32, [None, None])
    c = tf.cross(p, q)
    with make_session(mode, chunks=2) as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="Cross-products are only defined for 3-element "
                                                                   "vectors"):
            s.run(c, {p: np.ones((2, 4)), q: np.ones((2, 4))})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Both inputs must be of same shape: \[2,3\] vs. "
                                                                 r"\[1,3\]"):
            s.run(c, {p: np.ones((2, 3)), q: np.ones((1, 3))})
