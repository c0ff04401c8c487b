"""The TF op table (dflow/io/tf_graph_ops.py) both ways, op family by op family: a dflow graph
written as TensorFlow's GraphDef and read back gives the same answers; the slow test has
TensorFlow 2.21 run the same files and compares with dflow's answers."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tensorboard.compat.proto import graph_pb2

import dflow as tf
from tests.conftest import run_tf

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 6)).astype(np.float32)
IMG = RNG.standard_normal((2, 8, 8, 3)).astype(np.float32)
IDS = np.array([[0, 2], [3, 1]], np.int32)


def _cases():
    """{name: f(x, img, ids) -> output tensor}: each family of the table, as TF1 code builds it."""
    k = tf.constant(RNG.standard_normal((6, 5)).astype(np.float32))
    w = tf.constant(RNG.standard_normal((3, 3, 3, 4)).astype(np.float32))
    dw = tf.constant(RNG.standard_normal((3, 3, 3, 2)).astype(np.float32))
    return {
        "unary": lambda x, i, d: tf.abs(x) + tf.exp(-tf.square(x)) + tf.tanh(x) + tf.sigmoid(x) + tf.sin(x)
        + tf.cos(x) + tf.floor(x) + tf.ceil(x) + tf.sign(x) + tf.sqrt(tf.abs(x)) + tf.rsqrt(tf.abs(x) + 1)
        + tf.log1p(tf.abs(x)) + tf.expm1(x) + tf.round(x) + tf.reciprocal(x + 10) + tf.negative(x),
        "binary": lambda x, i, d: tf.maximum(x, 0.1) - tf.minimum(x, -0.1) + tf.pow(tf.abs(x), 1.5)
        + tf.squared_difference(x, 0.5) + tf.floordiv(x, 0.7) + tf.floormod(x, 0.7) + tf.atan2(x, 1.0 + x * x)
        + x / 3.0 - x * 2.0,
        "compare": lambda x, i, d: tf.cast(tf.logical_and(tf.greater(x, 0.0), tf.less_equal(x, 1.0)), tf.float32)
        + tf.cast(tf.logical_or(tf.equal(x, 0.0), tf.not_equal(x, 1.0)), tf.float32)
        + tf.where(tf.greater_equal(x, 0.0), x, -x),
        "activations": lambda x, i, d: tf.nn.relu(x) + tf.nn.relu6(x * 4) + tf.nn.elu(x) + tf.nn.selu(x)
        + tf.nn.softplus(x) + tf.nn.softsign(x) + tf.nn.leaky_relu(x, 0.3) + tf.nn.softmax(x)
        + tf.nn.log_softmax(x),
        "reductions": lambda x, i, d: tf.concat([tf.reduce_sum(x, 1, keepdims=True), tf.reduce_mean(x, 1, keepdims=True),
                                                 tf.reduce_max(x, 1, keepdims=True), tf.reduce_min(x, 1, keepdims=True),
                                                 tf.reduce_prod(x, 1, keepdims=True),
                                                 tf.cast(tf.argmax(x, 1)[:, None], tf.float32),
                                                 tf.cast(tf.argmin(x, 1)[:, None], tf.float32),
                                                 tf.reduce_logsumexp(x, 1, keepdims=True)], 1),
        "shapes": lambda x, i, d: tf.reshape(tf.transpose(tf.expand_dims(x, 0), [0, 2, 1]), [2, -1])
        + tf.cast(tf.reduce_sum(tf.shape(x)) + tf.size(x) + tf.rank(x), tf.float32),
        "slices": lambda x, i, d: tf.concat([x[1:3, ::2], tf.slice(x, [0, 1], [2, 3]), x[:2, -3:]], 0),
        "pack_split": lambda x, i, d: tf.stack(tf.unstack(x, axis=0)[::-1], axis=1)
        + tf.transpose(tf.concat(tf.split(x, 2, axis=1)[::-1], 1))
        + tf.transpose(tf.concat(tf.split(x, [1, 3, 2], axis=1), 1)),
        "gather": lambda x, i, d: tf.gather(x, d) + tf.reduce_sum(tf.gather_nd(x, [[0, 1], [2, 3]]))
        + tf.nn.embedding_lookup(x, d),
        "pad_tile": lambda x, i, d: tf.tile(tf.pad(x, [[1, 0], [0, 2]]), [2, 1])
        + tf.pad(x, [[1, 0], [0, 2]], mode="REFLECT")[0:1],
        "creation": lambda x, i, d: x + tf.fill([4, 6], 2.0) + tf.zeros_like(x) + tf.ones_like(x)
        + tf.cast(tf.range(6), tf.float32) + tf.linspace(0.0, 1.0, 6),
        "one_hot_cumsum_topk": lambda x, i, d: tf.concat([tf.one_hot(tf.constant([0, 5, 2, 1]), 6), tf.cumsum(x, 1),
                                                         tf.nn.top_k(x, 3)[0], tf.cast(tf.nn.top_k(x, 3)[1], tf.float32),
                                                         tf.reverse(x, [1]), tf.clip_by_value(x, -0.5, 0.5)], 1),
        "matmul": lambda x, i, d: tf.matmul(x, k) + tf.matmul(tf.transpose(x), x, transpose_a=False)[:4, :5]
        + tf.matmul(tf.stack([x, x]), tf.stack([k, k]))[1],
        "conv_pool": lambda x, i, d: tf.concat([
            tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(i, w, [1, 1, 1, 1], "SAME")), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
            tf.nn.avg_pool(tf.nn.depthwise_conv2d(i, dw, [1, 1, 1, 1], "SAME"), [1, 2, 2, 1], [1, 2, 2, 1], "SAME"),
        ], 3),
        "bias_resize": lambda x, i, d: tf.image.resize_bilinear(tf.nn.bias_add(i, [0.1, 0.2, 0.3]), [5, 5])
        + tf.image.resize_nearest_neighbor(i, [5, 5]),
        "batch_norm": lambda x, i, d: tf.nn.batch_normalization(x, tf.reduce_mean(x, 0), tf.ones([6]), 0.1, 2.0, 1e-3)
        + tf.nn.moments(x, [0])[1],
        "losses": lambda x, i, d: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 5, 2, 1]),
                                                                                 logits=x)
        + tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.nn.sigmoid(x), logits=x)[:, 0]
        + tf.nn.l2_loss(x) + tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.nn.softmax(x), logits=x),
        "logical_masks": lambda x, i, d: tf.cast(tf.logical_xor(x > 0, x < 0.5), tf.float32)
        + tf.cast(tf.sequence_mask([1, 3, 6, 0], 6), tf.float32) + tf.sequence_mask([2, 2, 2, 2], 6, tf.float32),
        "partition_stitch": lambda x, i, d: tf.dynamic_stitch([tf.constant([0, 2]), tf.constant([1, 3])],
                                                              tf.dynamic_partition(x, [0, 1, 0, 1], 2))
        + tf.reverse_sequence(x, [1, 2, 6, 4], seq_axis=1, batch_axis=0)
        + tf.sparse_to_dense([[0, 1], [3, 5]], [4, 6], [1.5, -2.0])
        + tf.cast(tf.reduce_sum(tf.unique(tf.constant([3, 1, 3, 2]))[1]), tf.float32),
        "deconv_grads": lambda x, i, d: tf.reduce_sum(tf.nn.conv2d_transpose(
            i, tf.constant(RNG.standard_normal((3, 3, 2, 3)).astype(np.float32)), [2, 16, 16, 2], [1, 2, 2, 1],
            "SAME"), [1, 2]) + tf.reduce_sum(tf.gradients(tf.reduce_sum(tf.nn.max_pool(tf.nn.conv2d(
                i, w, [1, 1, 1, 1], "SAME"), [1, 2, 2, 1], [1, 2, 2, 1], "SAME") ** 2), i)[0], [1, 2])[:, :2],
        "strings": lambda x, i, d: tf.string_to_number(tf.strings.join([tf.as_string(tf.cast(tf.round(x * 10), tf.int32)), "5"],
                                                                       separator=".")) + tf.cast(
            tf.strings.length(tf.as_string(x[0, 0], precision=3)), tf.float32) + tf.check_numerics(x, "x"),
    }


CASES = sorted(_cases())


def _build(name):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 6], name="x")
        img = tf.placeholder(tf.float32, [2, 8, 8, 3], name="img")
        ids = tf.placeholder(tf.int32, [2, 2], name="ids")
        tf.identity(_cases()[name](x, img, ids), name="out")
    return g


FEEDS = {"x:0": X, "img:0": IMG, "ids:0": IDS}


def _run(g):
    with g.as_default(), tf.Session() as s:
        out = g.get_tensor_by_name("out:0")
        feeds = {k: v for k, v in FEEDS.items() if k.split(":")[0] in {o.name for o in g.get_operations()}}
        return s.run(out, feeds)


@pytest.mark.parametrize("name", CASES)
def test_each_op_family_round_trips_through_tensorflow_graph_def(name, tmp_path):
    g = _build(name)
    want = _run(g)
    path = tf.train.write_graph(g, str(tmp_path), f"{name}.pb", as_text=False, format="tensorflow")
    proto = graph_pb2.GraphDef()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    assert proto.node, "an empty GraphDef"
    g2 = tf.Graph()
    with g2.as_default():
        gd = tf.GraphDef()
        with open(path, "rb") as f:
            gd.ParseFromString(f.read())
        tf.import_graph_def(gd, name="")
    np.testing.assert_allclose(_run(g2), want, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_tensorflow_runs_every_op_family_as_dflow_does(tmp_path, tf_python):
    want = {}
    for name in CASES:
        g = _build(name)
        want[name] = _run(g)
        tf.train.write_graph(g, str(tmp_path), f"{name}.pb", as_text=False, format="tensorflow")
    np.savez(tmp_path / "feeds.npz", **{k.split(":")[0]: v for k, v in FEEDS.items()})
    code = f"""
import json, numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
feeds = dict(np.load({str(tmp_path / 'feeds.npz')!r}))
out = {{}}
for name in {CASES!r}:
    gd = tf.GraphDef()
    gd.ParseFromString(open({str(tmp_path)!r} + '/' + name + '.pb', 'rb').read())
    with tf.Graph().as_default() as g:
        tf.import_graph_def(gd, name='')
        names = {{o.name for o in g.get_operations()}}
        with tf.Session() as s:
            out[name] = s.run('out:0', {{k + ':0': v for k, v in feeds.items() if k in names}}).tolist()
print(json.dumps(out))
"""
    got = json.loads(run_tf(tf_python, code).strip().splitlines()[-1])
    for name in CASES:
        np.testing.assert_allclose(np.asarray(got[name], np.float32), want[name], rtol=1e-4, atol=1e-4,
                                   err_msg=name)
