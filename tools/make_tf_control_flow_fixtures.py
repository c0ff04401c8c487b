"""Writes the TF1 control-flow fixtures of tests/io/test_tf_control_flow.py (needs TensorFlow).

    /tmp/tfenv/bin/python tools/make_tf_control_flow_fixtures.py [OUT_DIR]

Each case is a binary GraphDef `NAME.pb` written by TensorFlow with v1 control flow (Switch, Merge,
Enter, Exit, NextIteration, LoopCond: what TF1 wrote) and `NAME.npz` beside it: for run k, the fed
values under "in{k}|TENSOR" and TensorFlow's results under "out{k}|TENSOR"; gradients TensorFlow
computed (graph saved before they were built) under "grad{k}|Y|X". Models with variables are
frozen (variables become constants), as a frozen `.pb` is shipped.
"""

from __future__ import annotations

import os
import sys

import numpy as np

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.layers and rnn_cell live in tf_keras
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
tf.disable_control_flow_v2()

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures",
                                                          "tf_control_flow")
rng = np.random.default_rng(27)


def save(name, graph_def, runs, fetches, sess, grads=None):
    """Writes NAME.pb and NAME.npz: `runs` is a list of feed dicts {tensor name: value}."""
    os.makedirs(OUT, exist_ok=True)
    arrays = {}
    for k, feed in enumerate(runs):
        for t, v in feed.items():
            arrays[f"in{k}|{t}"] = np.asarray(v)
        outs = sess.run(fetches, feed)
        for t, v in zip(fetches, outs):
            arrays[f"out{k}|{t}"] = np.asarray(v)
        for (y, x), g in (grads or {}).items():
            arrays[f"grad{k}|{y}|{x}"] = np.asarray(sess.run(g, feed))
    with open(os.path.join(OUT, name + ".pb"), "wb") as f:
        f.write(graph_def.SerializeToString())
    np.savez(os.path.join(OUT, name + ".npz"), **arrays)
    print(name, len(graph_def.node), "nodes,", len(runs), "runs")


def case_cond():
    with tf.Graph().as_default() as g, tf.Session() as sess:
        x = tf.placeholder(tf.float32, [3], name="x")
        p = tf.placeholder(tf.bool, [], name="p")
        a, b = tf.cond(p, lambda: (x * 2.0 + 1.0, tf.reduce_sum(x)), lambda: (tf.square(x) - 1.0, tf.constant(7.0)))
        out = tf.identity(a, name="out")
        tf.identity(b, name="total")
        gd = g.as_graph_def()
        grads = {("out:0", "x:0"): tf.gradients(out, x)[0]}
        xv = rng.standard_normal(3).astype(np.float32)
        save("cond", gd, [{"x:0": xv, "p:0": True}, {"x:0": xv, "p:0": False}],
             ["out:0", "total:0"], sess, grads)


def case_nested_cond():
    with tf.Graph().as_default() as g, tf.Session() as sess:
        x = tf.placeholder(tf.float32, [2, 2], name="x")
        p = tf.placeholder(tf.bool, [], name="p")
        q = tf.placeholder(tf.bool, [], name="q")
        y = tf.cond(p, lambda: tf.cond(q, lambda: x * 2.0, lambda: tf.matmul(x, x)) + 1.0, lambda: x - 1.0)
        out = tf.identity(y, name="out")
        gd = g.as_graph_def()
        xv = rng.standard_normal((2, 2)).astype(np.float32)
        runs = [{"x:0": xv, "p:0": pv, "q:0": qv} for pv in (True, False) for qv in (True, False)]
        save("nested_cond", gd, runs, ["out:0"], sess, {("out:0", "x:0"): tf.gradients(out, x)[0]})


def case_cond_in_while():
    with tf.Graph().as_default() as g, tf.Session() as sess:
        x = tf.placeholder(tf.float32, [3], name="x")
        n = tf.placeholder(tf.int32, [], name="n")

        def body(i, acc):
            acc = tf.cond(tf.equal(i % 2, 0), lambda: acc + x, lambda: acc * 2.0)
            return [i + 1, acc]

        _, acc = tf.while_loop(lambda i, acc: i < n, body, [tf.constant(0), tf.zeros([3])])
        tf.identity(acc, name="out")
        xv = rng.standard_normal(3).astype(np.float32)
        save("cond_in_while", g.as_graph_def(), [{"x:0": xv, "n:0": 5}, {"x:0": xv, "n:0": 0}], ["out:0"], sess)


def case_while_max_iterations():
    with tf.Graph().as_default() as g, tf.Session() as sess:
        x = tf.placeholder(tf.float32, [2], name="x")
        n = tf.placeholder(tf.int32, [], name="n")
        i, a, b = tf.while_loop(lambda i, a, b: i < n, lambda i, a, b: [i + 1, a + b, b * 0.5],
                                [tf.constant(0), tf.zeros([2]), x], maximum_iterations=5)
        tf.identity(i, name="i_out")
        tf.identity(a, name="a_out")
        tf.identity(b, name="b_out")
        xv = rng.standard_normal(2).astype(np.float32)
        save("while_max_iterations", g.as_graph_def(), [{"x:0": xv, "n:0": 3}, {"x:0": xv, "n:0": 9}],
             ["i_out:0", "a_out:0", "b_out:0"], sess)


def case_while_cumprod():
    with tf.Graph().as_default() as g, tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None], name="x")
        size = tf.size(x)
        ta = tf.TensorArray(tf.float32, size=size, element_shape=[])

        def body(i, acc, ta):
            acc = acc * x[i]
            return [i + 1, acc, ta.write(i, acc)]

        _, prod, ta = tf.while_loop(lambda i, acc, ta: i < size, body, [tf.constant(0), tf.constant(1.0), ta])
        tf.identity(prod, name="prod")
        tf.identity(ta.stack(), name="cumprod")
        save("while_cumprod", g.as_graph_def(), [{"x:0": rng.uniform(0.5, 1.5, 6).astype(np.float32)},
                                                 {"x:0": np.array([2.0], np.float32)}], ["prod:0", "cumprod:0"],
             sess)


def case_nested_while():
    with tf.Graph().as_default() as g, tf.Session() as sess:
        x = tf.placeholder(tf.float32, [2], name="x")
        n = tf.placeholder(tf.int32, [], name="n")

        def outer(i, acc):
            _, inner = tf.while_loop(lambda j, a: j < i, lambda j, a: [j + 1, a + x * tf.cast(j, tf.float32)],
                                     [tf.constant(0), acc])
            return [i + 1, inner * 0.5]

        _, acc = tf.while_loop(lambda i, acc: i < n, outer, [tf.constant(0), tf.ones([2])])
        tf.identity(acc, name="out")
        # and a loop inside a cond branch
        p = tf.placeholder(tf.bool, [], name="p")
        y = tf.cond(p, lambda: tf.while_loop(lambda k, v: k < 3, lambda k, v: [k + 1, v * x], [0, x])[1],
                    lambda: x - 1.0)
        tf.identity(y, name="out2")
        xv = rng.standard_normal(2).astype(np.float32)
        save("nested_while", g.as_graph_def(), [{"x:0": xv, "n:0": 4, "p:0": True}, {"x:0": xv, "n:0": 1, "p:0": False}],
             ["out:0", "out2:0"], sess)


def case_batch_norm():
    with tf.Graph().as_default() as g, tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        training = tf.placeholder(tf.bool, [], name="is_training")
        h = tf.layers.dense(x, 6, name="dense1")
        h = tf.layers.batch_normalization(h, training=training, name="bn")
        out = tf.layers.dense(tf.nn.relu(h), 2, name="dense2")
        tf.identity(out, name="out")
        sess.run(tf.global_variables_initializer())
        for v in tf.global_variables():  # moving statistics away from 0 and 1, so both branches differ
            if "moving" in v.name or "gamma" in v.name or "beta" in v.name:
                sess.run(v.assign(rng.uniform(0.5, 1.5, v.shape.as_list()).astype(np.float32)))
        frozen = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["out"])
        xv = rng.standard_normal((5, 4)).astype(np.float32)
        save("batch_norm", frozen, [{"x:0": xv, "is_training:0": True}, {"x:0": xv, "is_training:0": False}],
             ["out:0"], sess)


def case_fused_batch_norm():
    """A 4-d batch norm: FusedBatchNormV3 in both branches, its mean and variance merged too."""
    with tf.Graph().as_default() as g, tf.Session() as sess:
        x = tf.placeholder(tf.float32, [2, 3, 3, 2], name="x")
        training = tf.placeholder(tf.bool, [], name="is_training")
        h = tf.layers.batch_normalization(x, training=training, name="bn", fused=True)
        tf.identity(tf.reduce_sum(h * h, [1, 2]), name="out")
        scale, offset = tf.constant([1.5, 0.5]), tf.constant([0.1, -0.2])
        mean = tf.cond(training, lambda: tf.nn.fused_batch_norm(x, scale, offset, is_training=True)[1],
                       lambda: tf.constant([0.0, 1.0]))  # a branch output that is a fused batch norm's mean
        tf.identity(mean, name="batch_mean")
        sess.run(tf.global_variables_initializer())
        for v in tf.global_variables():
            sess.run(v.assign(rng.uniform(0.5, 1.5, v.shape.as_list()).astype(np.float32)))
        frozen = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["out", "batch_mean"])
        xv = rng.standard_normal((2, 3, 3, 2)).astype(np.float32)
        save("fused_batch_norm", frozen, [{"x:0": xv, "is_training:0": True}, {"x:0": xv, "is_training:0": False}],
             ["out:0", "batch_mean:0"], sess)


def case_dynamic_rnn():
    with tf.Graph().as_default() as g, tf.Session() as sess:
        x = tf.placeholder(tf.float32, [2, 5, 3], name="x")
        cell = tf.nn.rnn_cell.LSTMCell(4, name="lstm")
        outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        tf.identity(outputs, name="outputs")
        tf.identity(state.c, name="state_c")
        tf.identity(state.h, name="state_h")
        sess.run(tf.global_variables_initializer())
        frozen = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(),
                                                              ["outputs", "state_c", "state_h"])
        save("dynamic_rnn", frozen, [{"x:0": rng.standard_normal((2, 5, 3)).astype(np.float32)}],
             ["outputs:0", "state_c:0", "state_h:0"], sess)


if __name__ == "__main__":
    for case in (case_cond, case_nested_cond, case_cond_in_while, case_while_max_iterations, case_while_cumprod,
                 case_nested_while, case_batch_norm, case_fused_batch_norm, case_dynamic_rnn):
        case()
