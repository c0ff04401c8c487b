"""kernels/common.py helpers against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from dflow.kernels.common import index_checks, ints_in_range


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32])
def test_ints_in_range_matches_numpy(dtype):
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype)
    for n in (1, 5, 100, int(info.max) // 2 + 1, int(info.max)):
        for _ in range(20):
            a = rng.integers(max(int(info.min), -3 * n), min(int(info.max), 3 * n) + 1, rng.integers(0, 6),
                             dtype=np.int64).astype(dtype)
            assert ints_in_range(a, n) == bool(((a >= 0) & (a < n)).all()), (a, n)
    a = np.array([[1, -1], [2, 3]], np.int64)
    assert not ints_in_range(a[:, 1], 10) and ints_in_range(a[1], 4)  # a strided view


def test_index_checks_remember_an_array_and_its_views_for_one_run():
    """Within index_checks an array found in range (and a view of it, same dtype) is not read again;
    anything else is: a smaller bound, another dtype's view, a view's base, an array outside."""
    a = np.array([3, 1, 2], np.int64)
    with index_checks():
        assert ints_in_range(a, 4)
        a[0] = -7  # (kernels never do this: it shows the memo is used)
        assert ints_in_range(a, 4) and ints_in_range(a, 10) and ints_in_range(a.reshape(3, 1)[1:], 4)
        assert not ints_in_range(a, 3)  # a smaller bound: read again
        assert not ints_in_range(a.view(np.uint64), 4)  # another dtype's view: read again
        v = np.array([0, 5, 1])[::2]
        assert ints_in_range(v, 4) and not ints_in_range(v.base, 4)  # a view's check says nothing of its base
    assert not ints_in_range(a, 4)  # outside the run: read again
    with index_checks():
        assert not ints_in_range(a, 4)  # a new run forgets the last


def test_an_index_feed_changed_between_runs_is_checked_again():
    """The run memo is per run: a fed index array the caller changes in place is checked anew."""
    params = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2))
    ids = tf.placeholder(tf.int32, [2])
    step = tf.scatter_sub(params, ids, tf.ones([2, 2]))
    feed = np.array([1, 2], np.int32)
    with tf.Session() as s:
        s.run(params.initializer)
        s.run([tf.gather(params, ids), step], {ids: feed})
        feed[1] = 4
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"4 is (not in|out of range) \[0, 4\)"):
            s.run([tf.gather(params, ids), step], {ids: feed})
        np.testing.assert_array_equal(s.run(params), [[0, 1], [1, 2], [3, 4], [6, 7]])  # the failed run committed nothing


def test_gather_and_scatter_name_a_negative_index():
    params = tf.Variable(np.zeros((4, 2), np.float32))
    ids = tf.placeholder(tf.int32, [2])
    with tf.Session() as s:
        s.run(params.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"-1 is not in \[0, 4\)"):
            s.run(tf.gather(params, ids), {ids: [1, -1]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="-3"):
            s.run(tf.scatter_sub(params, ids, tf.ones([2, 2])), {ids: [-3, 0]})
