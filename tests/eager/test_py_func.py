"""tfe.py_func / tf.py_function in graph mode: the function runs eagerly (EagerTensor arguments,
tf.* ops at once), results converted to Tout by TF1's rules, gradients through a tape.

Figures from TF 2.21 compat.v1 graph mode with `tf.py_function` (TF1.15's eager_py_func, the
successor of tf.contrib.eager.py_func): values [[12.]] and 12.0, gradients [[6., 8.]] and
[[2.], [4.]]; a Python float, numpy float64 array or int for a float32 output is converted; an
EagerTensor of float64 for float32 is refused ("Tensor conversion requested dtype float32 for
Tensor with dtype float64")."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from tests.conftest import run_modes


def _f(x, y):
    assert isinstance(x, tfe.EagerTensor) and tf.executing_eagerly()
    z = tf.matmul(x, y) + 1.0
    assert isinstance(z, tfe.EagerTensor)
    return z, tf.reduce_sum(z)


def test_function_runs_eagerly_with_tf1_values_and_gradients():
    x = tf.constant([[1.0, 2.0]])
    y = tf.constant([[3.0], [4.0]])
    a, b = tfe.py_func(_f, [x, y], [tf.float32, tf.float32])
    assert a.op.type == "EagerPyFunc" and a.name == "EagerPyFunc:0" and a.shape.ndims is None
    one = tf.py_function(lambda v: v * 2, [x], tf.float32)
    assert isinstance(one, tf.Tensor)
    lst = tfe.py_func(lambda v: [v * 2], [x], [tf.float32])
    assert isinstance(lst, list) and len(lst) == 1
    assert tfe.py_func(lambda v: None, [x], []).type == "EagerPyFunc"
    ga = tf.gradients(tf.reduce_sum(a) + b, [x, y])
    got = run_modes([a, b, one, lst[0]] + ga)
    np.testing.assert_array_equal(got[0], [[12.0]])
    assert got[1] == 12.0
    np.testing.assert_array_equal(got[2], [[2.0, 4.0]])
    np.testing.assert_array_equal(got[4], [[6.0, 8.0]])
    np.testing.assert_array_equal(got[5], [[2.0], [4.0]])


@pytest.mark.parametrize("fn, want", [(lambda v: 1.5, np.float32(1.5)), (lambda v: np.array([1.5]), [1.5]),
                                      (lambda v: 3, np.float32(3.0)), (lambda v: np.float32(2), np.float32(2.0))])
def test_results_converted_to_tout_as_tf1(fn, want):
    out = tfe.py_func(fn, [tf.constant(0.0)], tf.float32)
    with tf.Session() as sess:
        got = sess.run(out)
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_string_output_and_no_eager_state_leaks():
    out = tfe.py_func(lambda v: tf.strings.join([tf.as_string(v), "x"]), [tf.constant(1)], tf.string)
    with tf.Session() as sess:
        assert sess.run(out) == b"1x"
    assert not tf.executing_eagerly()


def test_errors_name_the_op():
    x = tf.constant(1.0)
    bad_dtype = tfe.py_func(lambda v: tf.constant(1.0, tf.float64), [x], tf.float32, name="wrong_dtype")
    raising = tfe.py_func(lambda v: 1 / 0, [x], tf.float32, name="raises")
    too_many = tfe.py_func(lambda v: (v, v), [x], [tf.float32], name="too_many")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Tensor conversion requested dtype float32 for Tensor with dtype float64") as e:
            sess.run(bad_dtype)
        assert "wrong_dtype" in str(e.value)
        with pytest.raises(tf.errors.InvalidArgumentError, match="ZeroDivisionError") as e:
            sess.run(raising)
        assert "raises" in str(e.value) and isinstance(e.value.__cause__, ZeroDivisionError)
        with pytest.raises(tf.errors.InvalidArgumentError, match="returned 2 values"):
            sess.run(too_many)


def test_in_eager_mode_too():
    with tfe.eager_mode():
        out = tfe.py_func(lambda v: v * 3.0, [tf.constant([1.0, 2.0])], tf.float32)
        np.testing.assert_array_equal(out.numpy(), [3.0, 6.0])
