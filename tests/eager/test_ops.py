"""Every op family gives the same values eagerly as in graph mode (one registry, two front doors)."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 6)).astype(np.float32)
Y = rng.standard_normal((4, 6)).astype(np.float32)
P = np.abs(X) + 0.5
M = rng.standard_normal((6, 3)).astype(np.float32)
IMG = rng.standard_normal((2, 8, 8, 3)).astype(np.float32)
K = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
I = np.array([[3, 1], [0, 2]], np.int32)
LABELS = np.array([1, 0, 5, 2], np.int64)

CASES = {
    # elementwise
    "exp": (lambda x: tf.exp(x), [X]),
    "log": (lambda x: tf.log(x), [P]),
    "sqrt_rsqrt": (lambda x: tf.sqrt(x) + tf.rsqrt(x), [P]),
    "tanh_sigmoid": (lambda x: tf.tanh(x) * tf.sigmoid(x), [X]),
    "relu_family": (lambda x: tf.nn.relu(x) + tf.nn.relu6(x) + tf.nn.elu(x) + tf.nn.softplus(x), [X]),
    "abs_neg_square_sign": (lambda x: tf.abs(x) - tf.square(x) + tf.sign(x) - x, [X]),
    "binary": (lambda x, y: x + y * 2 - x / (tf.abs(y) + 1) + tf.maximum(x, y) - tf.minimum(x, y), [X, Y]),
    "pow_sqdiff": (lambda p, y: tf.pow(p, y) + tf.squared_difference(p, y), [P, Y]),
    "compare_where": (lambda x, y: tf.where(x > y, x, y) + tf.cast(tf.equal(x, y), tf.float32), [X, Y]),
    "int_div_mod": (lambda i: tf.floordiv(i + 7, 2) + tf.floormod(i + 7, 3), [I]),
    "logical": (lambda x, y: tf.cast(tf.logical_and(x > 0, tf.logical_not(y > 0)), tf.int32), [X, Y]),
    "round_floor_ceil": (lambda x: tf.round(x * 3) + tf.floor(x) + tf.ceil(x), [X]),
    "cast": (lambda x: tf.cast(tf.cast(x * 10, tf.int32), tf.float64), [X]),
    # reductions
    "reduce_sum_mean": (lambda x: tf.reduce_sum(x, 0) + tf.reduce_mean(x, 0), [X]),
    "reduce_max_min_keep": (lambda x: tf.reduce_max(x, 1, keepdims=True) - tf.reduce_min(x, 1, keepdims=True), [X]),
    "reduce_prod_all": (lambda p: tf.reduce_prod(p), [P]),
    "argmax_argmin": (lambda x: tf.argmax(x, 1) + tf.argmin(x, 0)[:1], [X]),
    "logsumexp": (lambda x: tf.reduce_logsumexp(x, 1), [X]),
    "cumsum": (lambda x: tf.cumsum(x, axis=1), [X]),
    # linear algebra
    "matmul": (lambda x, m: tf.matmul(x, m), [X, M]),
    "matmul_transposed": (lambda x, y: tf.matmul(x, y, transpose_b=True), [X, Y]),
    "norm_einsum_tensordot": (lambda x, m: tf.norm(x, axis=1) + tf.einsum("ij,jk->ik", x, m)[:, 0]
                              + tf.tensordot(x, m, 1)[:, 1], [X, M]),
    # shapes and indexing
    "reshape_transpose": (lambda x: tf.transpose(tf.reshape(x, [3, 8])), [X]),
    "concat_stack": (lambda x, y: tf.concat([x, y], 1) + tf.reduce_sum(tf.stack([x, y]), 0)[:, :1], [X, Y]),
    "split_unstack": (lambda x: tf.split(x, 3, axis=1)[1] + tf.unstack(x, axis=1)[0][:, None], [X]),
    "slice_stride": (lambda x: x[1:3, ::2] * 2 + x[-1, 1:4], [X]),
    "gather_nd": (lambda x: tf.gather(x, [3, 0, 2]) + tf.gather_nd(x, [[0, 1], [2, 2], [3, 5]])[:, None], [X]),
    "tile_pad": (lambda x: tf.pad(tf.tile(x[:2, :2], [2, 3]), [[1, 0], [0, 2]]), [X]),
    "expand_squeeze": (lambda x: tf.squeeze(tf.expand_dims(x, 0), [0]) + tf.zeros_like(x), [X]),
    "one_hot": (lambda i: tf.one_hot(i, 4), [I]),
    "fill_range": (lambda: tf.fill([2, 3], 7.0) + tf.cast(tf.range(3), tf.float32), []),
    "top_k": (lambda x: tf.nn.top_k(x, 2).values, [X]),
    "boolean_mask": (lambda x: tf.boolean_mask(x, x > 0), [X]),
    "segment_sum": (lambda x: tf.unsorted_segment_sum(x, [0, 1, 0, 2], 3), [X]),
    "shape_size_rank": (lambda x: tf.shape(x) + tf.size(x) + tf.rank(x), [X]),
    # neural network ops
    "softmax": (lambda x: tf.nn.softmax(x) + tf.nn.log_softmax(x), [X]),
    "xent": (lambda x, y: tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.nn.softmax(y), logits=x), [X, Y]),
    "sparse_xent": (lambda x, lb: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=lb, logits=x), [X, LABELS]),
    "conv2d": (lambda im, k: tf.nn.conv2d(im, k, [1, 1, 1, 1], "SAME"), [IMG, K]),
    "pools": (lambda im: tf.nn.max_pool(im, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
              + tf.nn.avg_pool(im, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), [IMG]),
    "bias_add_l2": (lambda x: tf.nn.l2_normalize(tf.nn.bias_add(x, tf.ones([6])), 1), [X]),
    "moments": (lambda x: tf.add_n(list(tf.nn.moments(x, [0]))), [X]),
    "strings": (lambda: tf.string_join([tf.as_string(tf.constant([1, 2])), tf.constant(["a", "b"])], "-"), []),
}


def _graph_value(fn, inputs):
    g = tf.Graph()
    with g.as_default():
        out = fn(*[tf.constant(v) for v in inputs])
        with tf.Session() as sess:
            return sess.run(out)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_value_equals_graph_mode(name):
    fn, inputs = CASES[name]
    expected = _graph_value(fn, inputs)
    with tfe.eager_mode():
        got = fn(*[tf.constant(v) for v in inputs])
        got_np = got.numpy()
        assert got.dtype.np_dtype == np.asarray(expected).dtype or got.dtype.name == "string"
    if np.asarray(expected).dtype == object:
        assert np.asarray(got_np).tolist() == np.asarray(expected).tolist()
    else:
        np.testing.assert_allclose(got_np, expected, rtol=1e-5, atol=1e-6)
        assert np.shape(got_np) == np.shape(expected)
