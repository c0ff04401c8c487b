"""Writes TensorFlow-made graph fixtures for tests/io/test_tf_graph.py (and the control-flow tests).

Run with a Python that has TensorFlow (not part of `make test`):
    /tmp/tfenv/bin/python tools/make_tf_graph_fixtures.py [OUT_DIR]
Every model is built in TF1 graph mode; each gets `<name>.npz` holding its feeds (`in_<tensor>`),
the tensor names (`feeds`, `fetches`) and TensorFlow's outputs (`out_<i>`). Files stay small
(well under 2 MB together).
"""

import os
import shutil
import sys

import numpy as np

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.layers needs tf_keras under TF 2.16+
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures",
                                                          "tf_graphs")
RNG = np.random.RandomState(0)


def _save_npz(name, feeds, fetches, outs):
    d = {"feeds": np.array(list(feeds), dtype=object).astype(str), "fetches": np.array(fetches).astype(str)}
    for k, v in feeds.items():
        d["in_" + k.replace(":", "_").replace("/", "__")] = v
    for i, v in enumerate(outs):
        d[f"out_{i}"] = v
    np.savez(os.path.join(OUT, name + ".npz"), **d)


def _freeze(sess, graph, outputs, name, feeds, fetches):
    gd = tf.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), outputs)
    tf.train.write_graph(gd, OUT, name + ".pb", as_text=False)
    tf.train.write_graph(gd, OUT, name + ".pbtxt", as_text=True)
    outs = sess.run(fetches, {k: v for k, v in feeds.items()})
    _save_npz(name, feeds, fetches, outs)


def mlp_layers(x):
    h = tf.layers.dense(x, 16, activation=tf.nn.relu, name="dense1")
    h = tf.layers.dense(h, 8, activation=tf.nn.tanh, name="dense2")
    return tf.layers.dense(h, 3, name="logits")


def mlp():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        logits = mlp_layers(x)
        tf.nn.softmax(logits, name="probs")
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            _freeze(s, g, ["probs"], "mlp", {"x:0": RNG.randn(5, 4).astype(np.float32)}, ["probs:0"])


def cnn():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(2)
        x = tf.placeholder(tf.float32, [None, 8, 8, 3], name="x")
        w = tf.Variable(tf.random_normal([3, 3, 3, 4], stddev=0.3), name="conv/w")
        b = tf.Variable(tf.random_normal([4], stddev=0.1), name="conv/b")
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        dw = tf.Variable(tf.random_normal([3, 3, 4, 2], stddev=0.3), name="dw/w")
        h = tf.nn.depthwise_conv2d(h, dw, [1, 1, 1, 1], "SAME")
        h = tf.nn.avg_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        h = tf.reshape(h, [-1, 2 * 2 * 8])
        logits = tf.layers.dense(h, 5, name="fc")
        tf.nn.softmax(logits, name="probs")
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            _freeze(s, g, ["probs"], "cnn", {"x:0": RNG.randn(2, 8, 8, 3).astype(np.float32)}, ["probs:0"])


def batch_norm():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 4, 4, 3], name="x")
        h = tf.layers.batch_normalization(x, training=False, name="bn1",
                                          beta_initializer=tf.random_normal_initializer(),
                                          gamma_initializer=tf.random_normal_initializer(1.0, 0.2),
                                          moving_mean_initializer=tf.random_normal_initializer(),
                                          moving_variance_initializer=tf.random_uniform_initializer(0.5, 2.0))
        scale = tf.constant([1.0, 0.5, 2.0])
        offset = tf.constant([0.1, -0.2, 0.3])
        mean = tf.constant([0.2, 0.0, -0.1])
        var = tf.constant([1.5, 0.7, 1.1])
        y, _, _ = tf.nn.fused_batch_norm(h, scale, offset, mean, var, epsilon=1e-3, is_training=False)
        y = tf.nn.relu6(y)
        y = tf.nn.elu(y) + tf.nn.selu(y) + tf.nn.softplus(y) + tf.sigmoid(y)
        y = tf.nn.log_softmax(tf.reduce_mean(y, axis=[1, 2]))
        tf.identity(y, name="out")
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            _freeze(s, g, ["out"], "batch_norm", {"x:0": RNG.randn(2, 4, 4, 3).astype(np.float32)}, ["out:0"])


def resource_vars():
    """Not frozen: VarHandleOp/ReadVariableOp/AssignVariableOp and an init op, run through the graph."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.get_variable("w", initializer=np.arange(6, dtype=np.float32).reshape(3, 2) / 5.0,
                            use_resource=True)
        b = tf.get_variable("b", initializer=np.array([0.5, -0.5], np.float32), use_resource=True)
        y = tf.add(tf.matmul(x, w), b, name="y")
        tf.variables_initializer([w, b], name="init")
        with tf.Session() as s:
            s.run("init")
            feeds = {"x:0": RNG.randn(4, 3).astype(np.float32)}
            tf.train.write_graph(g.as_graph_def(), OUT, "resource_vars.pbtxt", as_text=True)
            _save_npz("resource_vars", feeds, ["y:0"], s.run(["y:0"], feeds))
        del y


def meta_checkpoint():
    d = os.path.join(OUT, "mlp_ckpt")
    shutil.rmtree(d, ignore_errors=True)
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(4)
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        logits = mlp_layers(x)
        probs = tf.nn.softmax(logits, name="probs")
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        tf.identity(loss, name="loss")
        gs = tf.train.get_or_create_global_step()
        train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=gs, name="train")
        tf.add_to_collection("train_op", train)
        saver = tf.train.Saver()
        feeds = {"x:0": RNG.randn(6, 4).astype(np.float32), "labels:0": RNG.randint(0, 3, 6).astype(np.int64)}
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(3):
                s.run(train, feeds)
            saver.save(s, os.path.join(d, "model.ckpt"), global_step=3)
            _save_npz("mlp_ckpt", feeds, ["probs:0", "loss:0"], s.run([probs, loss], feeds))


def saved_model():
    d = os.path.join(OUT, "mlp_saved_model")
    shutil.rmtree(d, ignore_errors=True)
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(5)
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        probs = tf.nn.softmax(mlp_layers(x), name="probs")
        feeds = {"x:0": RNG.randn(3, 4).astype(np.float32)}
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(s, d, inputs={"x": x}, outputs={"probs": probs})
            _save_npz("mlp_saved_model", feeds, ["probs:0"], s.run([probs], feeds))


def embedding():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(6)
        ids = tf.placeholder(tf.int32, [None, 3], name="ids")
        table = tf.get_variable("emb", [10, 4], initializer=tf.random_normal_initializer())
        e = tf.nn.embedding_lookup(table, ids)  # GatherV2 once frozen
        pooled = tf.reduce_sum(e, axis=1) / 3.0
        mx = tf.reduce_max(e, axis=1)
        idx = tf.argmax(pooled, axis=1, name="argmax")
        sl = tf.strided_slice(e, [0, 1, 0], [0, 3, 4], [1, 1, 2], begin_mask=1, end_mask=1)
        parts = tf.unstack(tf.transpose(sl, [1, 0, 2]))
        stacked = tf.stack(parts, axis=2)
        out = tf.concat([pooled, mx, tf.reshape(stacked, [-1, 4])], axis=1)
        out = tf.squeeze(tf.expand_dims(out, 1), [1])
        out = tf.pad(out, [[0, 0], [1, 1]]) * tf.cast(tf.shape(out)[0], tf.float32)
        tf.identity(out, name="out")
        tf.identity(tf.tile(tf.slice(out, [0, 0], [-1, 2]), [1, 2]) - tf.reduce_prod(mx, 1, keepdims=True),
                    name="out2")
        tf.identity(tf.fill([2], 3.0) + tf.cast(tf.range(0, 2), tf.float32), name="out3")
        del idx
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            _freeze(s, g, ["out", "out2", "out3", "argmax"],
                    "embedding", {"ids:0": RNG.randint(0, 10, (5, 3)).astype(np.int32)},
                    ["out:0", "out2:0", "out3:0", "argmax:0"])


def cond_model():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        flag = tf.placeholder(tf.bool, [], name="flag")
        y = tf.cond(flag, lambda: tf.nn.relu(x) * 2.0, lambda: tf.square(x) - 1.0)
        tf.identity(y, name="y")
        with tf.Session() as s:
            xv = RNG.randn(4, 3).astype(np.float32)
            for v in (True, False):
                gd = g.as_graph_def()
                tf.train.write_graph(gd, OUT, "cond.pb", as_text=False)
                _save_npz(f"cond_{str(v).lower()}", {"x:0": xv, "flag:0": np.array(v)}, ["y:0"],
                          s.run(["y:0"], {x: xv, flag: v}))


def while_rnn():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(7)
        xs = tf.placeholder(tf.float32, [5, None, 3], name="xs")  # [time, batch, feat]
        w = tf.constant(RNG.randn(3, 4).astype(np.float32) * 0.5)
        u = tf.constant(RNG.randn(4, 4).astype(np.float32) * 0.5)
        h0 = tf.zeros([tf.shape(xs)[1], 4])

        def body(t, h):
            return t + 1, tf.tanh(tf.matmul(xs[t], w) + tf.matmul(h, u))
        _, h = tf.while_loop(lambda t, h: t < tf.shape(xs)[0], body, [tf.constant(0), h0])
        tf.identity(h, name="h")
        with tf.Session() as s:
            tf.train.write_graph(g.as_graph_def(), OUT, "while_rnn.pb", as_text=False)
            feeds = {"xs:0": RNG.randn(5, 2, 3).astype(np.float32)}
            _save_npz("while_rnn", feeds, ["h:0"], s.run(["h:0"], feeds))


def dynamic_lstm():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(8)
        x = tf.placeholder(tf.float32, [None, 6, 3], name="x")
        cell = tf.nn.rnn_cell.LSTMCell(4)
        outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        tf.identity(outputs, name="outputs")
        tf.identity(state.h, name="h")
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            _freeze(s, g, ["outputs", "h"], "dynamic_lstm", {"x:0": RNG.randn(2, 6, 3).astype(np.float32)},
                    ["outputs:0", "h:0"])


def batch_norm_training():
    """FusedBatchNormV3 in its training form: y, the batch mean and the (Bessel-corrected) batch
    variance; again with exponential_avg_factor blending the running statistics (V3)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 3, 3, 2], name="x")
        scale, offset = tf.constant([1.5, 0.5]), tf.constant([0.1, -0.2])
        y, m, v = tf.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3, is_training=True)
        blended = tf.raw_ops.FusedBatchNormV3(x=x, scale=scale, offset=offset, mean=tf.constant([0.5, -0.5]),
                                              variance=tf.constant([2.0, 0.5]), epsilon=1e-3,
                                              exponential_avg_factor=0.3, is_training=True)
        tf.identity(y, name="y")
        tf.identity(m, name="mean")
        tf.identity(v, name="var")
        tf.identity(blended[0], name="y2")
        tf.identity(blended[1], name="mean2")
        tf.identity(blended[2], name="var2")
        with tf.Session() as s:
            _freeze(s, g, ["y", "mean", "var", "y2", "mean2", "var2"], "batch_norm_training",
                    {"x:0": RNG.randn(4, 3, 3, 2).astype(np.float32) * 2 + 1},
                    ["y:0", "mean:0", "var:0", "y2:0", "mean2:0", "var2:0"])


MAKERS = (mlp, cnn, batch_norm, batch_norm_training, resource_vars, meta_checkpoint, saved_model, embedding,
          cond_model, while_rnn, dynamic_lstm)

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    only = os.environ.get("ONLY", "").split(",") if os.environ.get("ONLY") else None  # e.g. ONLY=cnn,mlp
    for make in MAKERS:
        if only and make.__name__ not in only:
            continue
        make()
        print("wrote", make.__name__)
