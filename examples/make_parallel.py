"""Data parallelism, TF1 style: towers per device with shared variables, then per cluster worker.

1. TF1's `make_parallel` pattern, written as TF1 programs write it (towers on "/gpu:i"). Without
   GPUs, `tf.ConfigProto(allow_soft_placement=True)` runs the towers on the CPU, as in TF1.
2. `dflow.parallel.make_parallel`: the same, placing towers on GPUs only where there are GPUs.
3. `dflow.parallel.data_parallel` on a distributed cluster: one tower per worker, the batch fed
   in one chunk per tower so that the workers compute the towers side by side.

    python examples/make_parallel.py
"""

from __future__ import annotations

import numpy as np

import dflow as tf
from dflow import parallel


def make_parallel(fn, num_gpus, **kwargs):
    """TF1's recipe, unchanged but for the import."""
    in_splits = {}
    for k, v in kwargs.items():
        in_splits[k] = tf.split(v, num_gpus)

    out_split = []
    for i in range(num_gpus):
        with tf.device(tf.DeviceSpec(device_type="GPU", device_index=i)):
            with tf.variable_scope(tf.get_variable_scope(), reuse=i > 0):
                out_split.append(fn(**{k: v[i] for k, v in in_splits.items()}))

    return tf.concat(out_split, axis=0)


def model(x):
    """A two-layer network; its variables are created by the first tower and reused by the others."""
    w1 = tf.get_variable("w1", [8, 16], initializer=tf.glorot_uniform_initializer(seed=1))
    w2 = tf.get_variable("w2", [16, 3], initializer=tf.glorot_uniform_initializer(seed=2))
    return tf.matmul(tf.tanh(tf.matmul(x, w1)), w2)


def reference(sess, x_v):
    w1, w2 = sess.run(["w1:0", "w2:0"])
    return np.tanh(x_v @ w1) @ w2


def main():
    x_v = np.random.default_rng(0).standard_normal((12, 8)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 8], name="x")

    # 1. the TF1 recipe: soft placement moves the GPU towers to the CPU when there is no GPU
    logits = make_parallel(model, 2, x=x)
    print("tower devices:", sorted({op.device for op in tf.get_default_graph().get_operations() if op.device}))
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(logits, {x: x_v})
        np.testing.assert_allclose(got, reference(sess, x_v), rtol=1e-5, atol=1e-5)
    assert len(tf.global_variables()) == 2  # one set of variables for both towers
    print("TF1 make_parallel: 2 towers agree with one model")

    # 2. dflow.parallel.make_parallel: the towers' devices follow the hardware
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        logits4 = parallel.make_parallel(model, 4, x=x)
    print("dflow.parallel towers on:", parallel.tower_devices(4))
    with tf.Session(scheduler="threads", config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(logits4, {x: x_v}), reference(sess, x_v), rtol=1e-5, atol=1e-5)
    print("dflow.parallel.make_parallel: 4 towers agree")

    # 3. one tower per worker of a distributed cluster
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        with tf.Session(scheduler=client) as sess:
            n = parallel.num_workers(sess)
            x_big = tf.placeholder(tf.float32, [None, 8], name="x_big", chunks=(parallel.shard_sizes(11, n), 8))
            with tf.variable_scope(tf.get_variable_scope(), reuse=True):
                spread = parallel.data_parallel(model, {"x": x_big}, session=sess)
            sess.run(tf.global_variables_initializer())
            got = sess.run(spread, {x_big: x_v[:11]})
            np.testing.assert_allclose(got, reference(sess, x_v[:11]), rtol=1e-5, atol=1e-5)
    print(f"data_parallel: {n} towers on {n} workers, 11 rows in shards of {parallel.shard_sizes(11, n)}")


if __name__ == "__main__":
    main()
