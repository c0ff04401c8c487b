"""Executors: a session-owned LocalCluster (scheduler="distributed") gets its memory limits from the
session's budget and is closed with the session."""

import numpy as np

import dflow as tf


def test_owned_local_cluster_limits_workers_to_the_budget():
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.reduce_sum(x * 2.0, 0)
    s = tf.Session(scheduler="distributed", memory_budget="1GB", num_workers=2)
    try:
        ex = s._executor
        limits = [w["memory_limit"] for w in ex.client.scheduler_info()["workers"].values()]
        assert limits == [500_000_000, 500_000_000]
        value = np.arange(40, dtype=np.float32).reshape(10, 4)
        np.testing.assert_allclose(s.run(y, {x: value}), value.sum(0) * 2)
    finally:
        s.close()
    assert ex.cluster is None and ex.client.status == "closed"
