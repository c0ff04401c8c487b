"""Run-time failures of the array ops (kernels/array_ops.py, manip_ops.py) in TF1's words."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf


@pytest.mark.parametrize("sched", [None, "sync", "threads"])
def test_run_time_reshape_and_concat_failures_use_tf1s_words(sched):
    """TF1's messages (not numpy's or dask's "Bad index 3.33" / "Shapes do not align: %s")."""
    x = tf.placeholder(tf.float32, [None])
    a, b = tf.placeholder(tf.float32, [None, None]), tf.placeholder(tf.float32, [None, None])
    with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Input to reshape is a tensor with 10 values, but "
                                                                 "the requested shape requires a multiple of 3"):
            s.run(tf.reshape(x, [3, -1]), {x: np.ones(10, np.float32)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="tensor with 10 values, but the requested shape "
                                                                 "has 12"):
            s.run(tf.reshape(x, [3, 4]), {x: np.ones(10, np.float32)})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"ConcatOp : Dimensions of inputs should match: "
                                                                 r"shape\[0\] = \[2,3\] vs. shape\[1\] = \[2,4\]"):
            s.run(tf.concat([a, b], 0), {a: np.ones((2, 3)), b: np.ones((2, 4))})
