"""kernels/common.py helpers against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from dflow.kernels.common import ints_in_range


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


def test_gather_and_scatter_name_a_negative_index():
    params = tf.Variable(np.zeros((4, 2), np.float32))
    ids = tf.placeholder(tf.int32, [2])
    with tf.Session() as s:
        s.run(params.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"-1 is not in \[0, 4\)"):
            s.run(tf.gather(params, ids), {ids: [1, -1]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="-3"):
            s.run(tf.scatter_sub(params, ids, tf.ones([2, 2])), {ids: [-3, 0]})
