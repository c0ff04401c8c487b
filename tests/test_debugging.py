"""The checks dflow/debugging.py adds to kernels/check_ops.py's. Messages marked "TF1" are
tensorflow.compat.v1 2.21's for the same calls."""

import numpy as np
import pytest

import dflow as tf
from dflow import errors
from tests.conftest import run_modes


@pytest.fixture(autouse=True)
def _fresh_graph():
    tf.reset_default_graph()
    yield


def test_assert_near():
    x = tf.constant([1.0, 2.0, 3.0])
    ok = tf.debugging.assert_near(x, x + 1e-7)
    bad = tf.assert_near(x, tf.constant([1.0, 2.0, 3.1]))
    loose = tf.assert_near(x, tf.constant([1.0, 2.0, 3.1]), atol=0.2)
    with tf.control_dependencies([ok, loose]):
        out = tf.identity(x)
    run_modes(out)
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="x and y not equal to tolerance"):  # TF1's words
            sess.run(bad)
    with pytest.raises(TypeError):
        tf.assert_near(tf.constant([1]), tf.constant([1]))


def test_assert_rank_in():
    p = tf.placeholder(tf.float32, [None, 3])
    # TF1: "Tensor Placeholder:0 must have rank in (1, 3).  Received rank 2, shape (?, 3)"
    with pytest.raises(ValueError, match=r"must have rank in \(1, 3\)"):
        tf.assert_rank_in(p, [1, 3])
    assert tf.assert_rank_in(p, [2, 3]).type == "NoOp"
    q = tf.placeholder(tf.float32)
    check = tf.debugging.assert_rank_in(q, [1, 3])
    with tf.Session() as sess:
        sess.run(check, {q: [1.0]})
        with pytest.raises(errors.InvalidArgumentError, match="must have rank in"):
            sess.run(check, {q: [[1.0]]})


def test_assert_same_float_dtype_and_proper_iterable():
    assert tf.assert_same_float_dtype([tf.constant(1.0)]) == tf.float32
    assert tf.assert_same_float_dtype(None, tf.float64) == tf.float64
    assert tf.assert_same_float_dtype() == tf.float32
    with pytest.raises(ValueError, match="Expected floating point type"):  # TF1's words
        tf.assert_same_float_dtype([tf.constant(1)])
    with pytest.raises(ValueError):
        tf.assert_same_float_dtype([tf.constant(1.0), tf.constant(1.0, tf.float64)])
    tf.assert_proper_iterable([1, 2])
    tf.assert_proper_iterable((tf.constant(1),))
    for bad in (tf.constant(1), "ab", b"ab", np.ones(2), 3):
        with pytest.raises(TypeError, match='"proper" iterable'):
            tf.assert_proper_iterable(bad)


def test_monotone_predicates():
    vals = run_modes([tf.is_non_decreasing([1, 1, 2]), tf.is_strictly_increasing([1, 1, 2]),
                      tf.is_strictly_increasing(tf.zeros([0])), tf.is_non_decreasing([[1, 2], [2, 3]]),
                      tf.debugging.is_strictly_increasing([[1, 2], [2, 3]]), tf.is_non_decreasing([5])])
    assert [bool(v) for v in vals] == [True, False, True, True, False, True]  # TF1: True False True ...
    with pytest.raises(TypeError, match="numeric"):
        tf.is_non_decreasing(tf.constant([True]))
    assert tf.debugging.is_numeric_tensor is tf.is_numeric_tensor
