"""tf.bitcast against numpy's views on the schedulers (chunks split the dim that is consumed or
kept), TF's shape rule and its errors (messages checked with TF 2.21's tf.compat.v1), and the
missing gradient."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import make_session, run_modes

RNG = np.random.default_rng(5)


def test_against_numpy_views_on_the_schedulers():
    f = RNG.standard_normal((5, 2)).astype(np.float32)
    u = RNG.integers(0, 256, (3, 6, 4)).astype(np.uint8)
    c = (RNG.standard_normal(3) + 1j * RNG.standard_normal(3)).astype(np.complex64)
    pf = tf.placeholder(tf.float32, [None, 2])
    got = run_modes([tf.bitcast(pf, tf.int32), tf.bitcast(pf, tf.uint8), tf.bitcast(pf, tf.float64),
                     tf.bitcast(tf.constant(u), tf.int32), tf.bitcast(tf.constant(c), tf.float32),
                     tf.bitcast(tf.constant(np.float32(1.0)), tf.int8)], {pf: f})
    same, narrow, wide, u32, cf, scalar = got
    np.testing.assert_array_equal(same, f.view(np.int32))
    np.testing.assert_array_equal(narrow, f.reshape(5, 2, 1).view(np.uint8))
    np.testing.assert_array_equal(wide, f.view(np.float64)[:, 0])
    np.testing.assert_array_equal(u32, u.view(np.int32)[..., 0])
    np.testing.assert_array_equal(cf, c.reshape(3, 1).view(np.float32))
    np.testing.assert_array_equal(scalar, [0, 0, -128, 63])  # TF: bitcast(1.0, int8)
    assert [t.dtype for t in got] == [np.int32, np.uint8, np.float64, np.int32, np.float32, np.int8]


def test_shape_rule_and_op():
    x = tf.placeholder(tf.float32, [None, 2])
    assert tf.bitcast(x, tf.int32).shape.as_list() == [None, 2]
    assert tf.bitcast(x, tf.int16).shape.as_list() == [None, 2, 2]
    assert tf.bitcast(x, tf.complex64).shape.as_list() == [None]
    assert tf.bitcast(tf.placeholder(tf.float32, [None, None]), tf.float64).shape.as_list() == [None]
    assert tf.bitcast(tf.placeholder(tf.float32), tf.float64).shape.ndims is None
    y = tf.bitcast(tf.zeros([2]), tf.int32, name="bits")
    assert (y.op.type, y.op.name, y.dtype) == ("Bitcast", "bits", tf.int32)


def test_static_errors_as_tf():
    # TF names the types by their DataType numbers: uint8 = 4, int32 = 3, int16 = 5
    with pytest.raises(ValueError, match="Cannot bitcast from 4 to 3 due to shape. 3 does not match 4"):
        tf.bitcast(tf.zeros([2, 3], tf.uint8), tf.int32)
    with pytest.raises(ValueError, match="Cannot bitcast from 5 to 3 due to shape. 4 does not match 2"):
        tf.bitcast(tf.zeros([4], tf.int16), tf.int32)
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.bitcast(tf.zeros([], tf.uint8), tf.int32)
    with pytest.raises(TypeError, match="parameter 'type' has DataType bool not in list of allowed values"):
        tf.bitcast(tf.zeros([1]), tf.bool)
    with pytest.raises(TypeError, match="parameter 'type' has DataType string not in list"):
        tf.bitcast(tf.zeros([1]), tf.string)
    with pytest.raises(TypeError, match="parameter 'input' has DataType bool not in list"):
        tf.bitcast(tf.zeros([1], tf.bool), tf.int8)


@pytest.mark.parametrize("mode", ["eager", "sync"])
def test_run_time_errors_as_tf(mode):
    p = tf.placeholder(tf.uint8, [None, None])
    q = tf.placeholder(tf.uint8)
    with make_session(mode, chunks=2) as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot bitcast from 4 to 3"):
            s.run(tf.bitcast(p, tf.int32), {p: np.ones((2, 3), np.uint8)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot bitcast from 4 to 3"):
            s.run(tf.bitcast(q, tf.int32), {q: np.uint8(3)})


def test_no_gradient_as_tf():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(LookupError, match=r"No gradient defined for operation 'Bitcast' \(op type: Bitcast\)"):
        tf.gradients(tf.bitcast(x, tf.float64), [x])
