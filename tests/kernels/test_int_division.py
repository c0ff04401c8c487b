"""Integer division and modulo by zero raise InvalidArgumentError as TF1 ("Integer division by
zero", TF 1.15's FloorDiv/FloorMod/TruncateDiv/TruncateMod kernels) on every path; float
division stays IEEE (inf, nan), as TF1."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from dflow.errors import InvalidArgumentError
from tests.conftest import make_session

MODES = ["eager", "sync", "threads", "processes"]

INT_OPS = {
    "floordiv": tf.floordiv,
    "truncatediv": tf.truncatediv,
    "div": tf.div,
    "mod": tf.mod,
    "floormod": tf.floormod,
    "truncatemod": tf.truncatemod,
    "//": lambda x, y: x // y,
    "%": lambda x, y: x % y,
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode, dtype, ops", [
    *[(m, d, list(INT_OPS)) for m in ("eager", "sync", "threads") for d in (np.int32, np.int64, np.uint8)],
    pytest.param("processes", np.int64, ["floordiv", "truncatemod"],  # a failed run restarts the pool
                 marks=pytest.mark.slow),
])
def test_integer_division_by_zero_raises_naming_the_op(mode, dtype, ops):
    x = tf.placeholder(tf.as_dtype(dtype), [None], name="x")
    y = tf.placeholder(tf.as_dtype(dtype), [None], name="y")
    xv = np.arange(1, 7, dtype=dtype)
    ok, zero = np.array([1, 2, 3, 1, 2, 3], dtype), np.array([1, 2, 3, 0, 2, 3], dtype)
    with make_session(mode, chunks=2) as s:
        for label in ops:
            fn = INT_OPS[label]
            z = fn(x, y) + tf.constant(1, tf.as_dtype(dtype))  # fused into a chain on Dask
            assert s.run(z, {x: xv, y: ok}).shape == (6,)
            with pytest.raises(InvalidArgumentError, match="Integer division by zero") as info:
                s.run(z, {x: xv, y: zero})
            assert z.op.inputs[0].op.name in str(info.value), label  # the op is named


@pytest.mark.parametrize("mode", ["eager", "sync"])
def test_constant_divisors_are_checked_when_folded(mode):
    z = tf.floordiv(tf.constant([3, 4]), tf.constant([0, 1]), name="folded")
    with make_session(mode) as s, pytest.raises(InvalidArgumentError, match=r"'folded'.*Integer division by zero"):
        s.run(z)


@pytest.mark.parametrize("mode", MODES)
def test_float_division_by_zero_stays_ieee(mode):
    a = tf.constant([7.0, -7.0, 3.0, 0.0])
    b = tf.constant([2.0, 2.0, 0.0, 0.0])
    with make_session(mode, chunks=2) as s:
        fd, fm, tm, rd = s.run([tf.floordiv(a, b), tf.floormod(a, b), tf.truncatemod(a, b), a / b])
    np.testing.assert_array_equal(fd[:3], [3.0, -4.0, np.inf])  # TF 2.21: [3, -4, inf]
    assert np.isnan(fm[2]) and np.isnan(tm[2])  # TF 2.21: nan
    np.testing.assert_array_equal(rd[:3], [3.5, -3.5, np.inf])


def test_truncating_division_rounds_toward_zero():
    a = tf.constant([7, -7, 7, -7])
    b = tf.constant([2, 2, -2, -2])
    with tf.Session() as s:
        q, r, fq = s.run([tf.truncatediv(a, b), tf.truncatemod(a, b), tf.floordiv(a, b)])
    assert q.tolist() == [3, -3, -3, 3] and r.tolist() == [1, -1, 1, -1] and fq.tolist() == [3, -4, -4, 3]
    with pytest.raises(TypeError):
        tf.truncatediv(tf.constant([1.0]), tf.constant([2.0]))  # integers only, as TF1
