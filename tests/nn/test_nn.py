"""dflow.nn against numpy (float64 references), in every local mode, with gradient checks and
extreme logits (+-1000: finite values and finite gradients)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dflow as tf
from dflow import nn
from tests.conftest import rand, run_modes

HYP = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SELU_SCALE, SELU_ALPHA = 1.0507009873554805, 1.6732632423543772
EXTREME = np.array([[1000.0, -1000.0, 0.0, 3.0], [-1000.0, -999.0, 1000.0, 999.0]])


def np_softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def np_log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def np_softmax(x, axis=-1):
    return np.exp(np_log_softmax(x, axis))


def np_sigmoid(x):
    return np.exp(-np_softplus(-x))


# public name: (dflow function, numpy reference)
ACTIVATIONS = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (nn.relu6, lambda x: np.minimum(np.maximum(x, 0), 6)),
    "elu": (nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    "selu": (nn.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0)))),
    "leaky_relu": (nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x)),
    "softplus": (nn.softplus, np_softplus),
    "softsign": (nn.softsign, lambda x: x / (1 + np.abs(x))),
    "sigmoid": (nn.sigmoid, np_sigmoid),
    "tanh": (nn.tanh, np.tanh),
    "softmax": (nn.softmax, np_softmax),
    "log_softmax": (nn.log_softmax, np_log_softmax),
}


def _feed(x):
    p = tf.placeholder(tf.as_dtype(x.dtype), x.shape)
    return p, {p: x}


# ---- forward values --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_values(name):
    fn, ref = ACTIVATIONS[name]
    x = np.concatenate([rand((3, 4), np.float64, scale=3.0), EXTREME, [[0.0, 6.0, -6.0, 1e-3]]])
    p, feed = _feed(x)
    got = run_modes(fn(p), feed)
    assert got.dtype == np.float64 and got.shape == x.shape
    np.testing.assert_allclose(got, ref(x), rtol=1e-12, atol=1e-300)
    assert np.all(np.isfinite(got))


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_float32_dtype_and_names(name):
    fn, ref = ACTIVATIONS[name]
    x = rand((2, 3), scale=3.0)
    y = fn(tf.constant(x))
    assert y.dtype == tf.float32 and y.shape.as_list() == [2, 3]
    np.testing.assert_allclose(run_modes(y), ref(x.astype(np.float64)), rtol=2e-6, atol=1e-6)


def test_op_names_follow_tf1():
    x = tf.placeholder(tf.float32, [2, 3])
    names = {"Softmax": nn.softmax, "LogSoftmax": nn.log_softmax, "Relu6": nn.relu6, "Elu": nn.elu,
             "Selu": nn.selu, "Softplus": nn.softplus, "Softsign": nn.softsign, "LeakyRelu": nn.leaky_relu,
             "L2Loss": nn.l2_loss, "l2_normalize": nn.l2_normalize}
    for want, fn in names.items():
        assert fn(x).name == f"{want}:0"
    assert nn.bias_add(x, [1.0, 2.0, 3.0]).name == "BiasAdd:0"
    assert nn.sigmoid_cross_entropy_with_logits(labels=x, logits=x).name == "logistic_loss:0"
    m, v = nn.moments(x, [0], keep_dims=True)
    assert (m.name, v.name) == ("moments/mean:0", "moments/variance:0")


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
@HYP
def test_softmax_any_axis(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = rand(shape, np.float64, len(shape), scale=3.0) * 100
    p, feed = _feed(x)
    sm, lsm = run_modes([nn.softmax(p, axis=axis), nn.log_softmax(p, dim=axis)], feed)
    np.testing.assert_allclose(sm, np_softmax(x, axis), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(lsm, np_log_softmax(x, axis), rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf - inf in the +inf row
def test_softmax_errors_and_special_values():
    with pytest.raises(tf.errors.InvalidArgumentError, match="dim"):
        nn.softmax(tf.zeros([2, 3]), axis=2)
    with pytest.raises(TypeError):
        nn.softmax(tf.constant([1, 2]))
    inf = np.inf
    x = np.array([[-inf, 0.0], [-inf, -inf], [inf, 0.0]])
    sm, lsm = run_modes([nn.softmax(tf.constant(x)), nn.log_softmax(tf.constant(x))])
    np.testing.assert_array_equal(sm[0], [0.0, 1.0])
    assert np.isnan(sm[1]).all() and np.isnan(sm[2]).all()  # as TF1
    np.testing.assert_array_equal(lsm[0], [-inf, 0.0])


# ---- gradients: finite at +-1000 and correct -------------------------------------------------


def _grads_finite(y, p, feed, xs=None):
    gs = tf.gradients(y, xs or [p])
    assert all(g is not None for g in gs)
    vals = run_modes([y] + gs, feed)
    for v in vals:
        assert np.all(np.isfinite(v)), vals
    return vals


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradients_finite_at_extremes(name):
    p, feed = _feed(EXTREME)
    _grads_finite(ACTIVATIONS[name][0](p), p, feed)


def test_gradients_at_kinks_follow_tf1():
    z = np.array([0.0, 6.0])
    p, feed = _feed(z)
    grads = {fn: run_modes(tf.gradients(getattr(nn, fn)(p), p)[0], feed)
             for fn in ["relu6", "elu", "selu", "softplus", "leaky_relu"]}
    np.testing.assert_allclose(grads["relu6"], [0.0, 0.0])
    np.testing.assert_allclose(grads["elu"], [1.0, 1.0])
    np.testing.assert_allclose(grads["selu"], [SELU_SCALE, SELU_SCALE])
    np.testing.assert_allclose(grads["softplus"], np_sigmoid(z))
    np.testing.assert_allclose(grads["leaky_relu"], [0.2, 1.0])


def _grad_error(build, x0, delta=1e-6):
    p = tf.placeholder(tf.float64, x0.shape)
    y = build(p)
    with tf.Session():
        return tf.test.compute_gradient_error(p, x0.shape, y, y.shape.as_list(), x_init_value=x0, delta=delta)


GRAD_CASES = {
    "relu6": lambda p: nn.relu6(p * 3.0),
    "elu": nn.elu,
    "selu": nn.selu,
    "leaky_relu": nn.leaky_relu,
    "softplus": nn.softplus,
    "softsign": nn.softsign,
    "softmax": nn.softmax,
    "softmax_axis0": lambda p: nn.softmax(p, axis=0),
    "log_softmax": nn.log_softmax,
    "l2_loss": nn.l2_loss,
    "l2_normalize": lambda p: nn.l2_normalize(p, axis=1),
    "bias_add_bias": lambda p: nn.bias_add(tf.constant(rand((2, 3), np.float64, 7, scale=3.0)), p[0]),
    "moments_mean_var": lambda p: tf.stack(nn.moments(p, [0])),
    "batch_normalization": lambda p: nn.batch_normalization(p, 0.5, 2.0, 0.1, 3.0, 1e-3),
    "softmax_xent_v2": lambda p: nn.softmax_cross_entropy_with_logits_v2(
        labels=tf.constant(np_softmax(rand((2, 3), np.float64, 3, scale=3.0))), logits=p),
    "softmax_xent_labels": lambda p: nn.softmax_cross_entropy_with_logits_v2(
        labels=nn.softmax(p), logits=tf.constant(rand((2, 3), np.float64, 4, scale=3.0))),
    "sparse_softmax_xent": lambda p: nn.sparse_softmax_cross_entropy_with_logits(labels=[2, 0], logits=p),
    "sigmoid_xent": lambda p: nn.sigmoid_cross_entropy_with_logits(labels=tf.constant(np.full((2, 3), 0.3)),
                                                                   logits=p),
    "weighted_xent": lambda p: nn.weighted_cross_entropy_with_logits(
        labels=tf.constant(np.full((2, 3), 0.3)), logits=p, pos_weight=2.5),
    "xw_plus_b": lambda p: nn.xw_plus_b(p, tf.constant(rand((3, 2), np.float64, 5, scale=3.0)), [1.0, -1.0]),
    "embedding_lookup": lambda p: nn.embedding_lookup(p, [[1, 0], [1, 1]]),
    "embedding_lookup_mod_shards": lambda p: nn.embedding_lookup([p, tf.constant(rand((1, 3), np.float64, 6, scale=3.0))], [0, 1, 2, 2]),
    "embedding_lookup_max_norm": lambda p: nn.embedding_lookup(p, [1, 0], max_norm=1.0),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradient_check(name):
    x0 = rand((2, 3), np.float64, 11, scale=1.5) + 0.05  # away from the kinks at 0
    assert _grad_error(GRAD_CASES[name], x0) < 1e-6


@pytest.mark.parametrize("xent", ["v1", "v2", "sparse", "sigmoid", "weighted"])
def test_cross_entropy_finite_at_extremes(xent):
    p, feed = _feed(EXTREME)
    labels = np_softmax(rand(EXTREME.shape, np.float64, 5, scale=3.0))
    y = {
        "v1": lambda: nn.softmax_cross_entropy_with_logits(labels=labels, logits=p),
        "v2": lambda: nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=p),
        "sparse": lambda: nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 0], logits=p),
        "sigmoid": lambda: nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=p),
        "weighted": lambda: nn.weighted_cross_entropy_with_logits(labels=labels, logits=p, pos_weight=3.0),
    }[xent]()
    _grads_finite(y, p, feed)


# ---- cross-entropies --------------------------------------------------------------------------


def test_softmax_cross_entropy_values_and_gradients():
    logits = np.concatenate([rand((3, 5), np.float64, 1, scale=3.0), EXTREME[:, :4].repeat(2, axis=1)[:, :5]])
    labels = np_softmax(rand(logits.shape, np.float64, 2, scale=3.0))
    p, feed = _feed(logits)
    lab = tf.constant(labels)
    v2 = nn.softmax_cross_entropy_with_logits_v2(labels=lab, logits=p)
    v1 = nn.softmax_cross_entropy_with_logits(labels=lab, logits=p)
    assert v2.shape.as_list() == [5] and v1.name.startswith("softmax_cross_entropy_with_logits_sg")
    g_logits, g_labels = tf.gradients(v2, [p, lab])
    assert tf.gradients(v1, lab) == [None]  # v1 treats labels as constants
    got = run_modes([v2, v1, g_logits, g_labels], feed)
    want = -(labels * np_log_softmax(logits)).sum(-1)
    np.testing.assert_allclose(got[0], want, rtol=1e-12)
    np.testing.assert_allclose(got[1], want, rtol=1e-12)
    np.testing.assert_allclose(got[2], np_softmax(logits) - labels, atol=1e-12)
    np.testing.assert_allclose(got[3], -np_log_softmax(logits), rtol=1e-12)


def test_softmax_cross_entropy_unnormalized_labels_gradient_is_tf1s():
    logits, labels = np.array([[1.0, 2.0, 3.0]]), np.array([[1.0, 1.0, 0.0]])
    p, feed = _feed(logits)
    y = nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=p)
    val, g = run_modes([y, tf.gradients(y, p)[0]], feed)
    np.testing.assert_allclose(val, -(labels * np_log_softmax(logits)).sum(-1))
    np.testing.assert_allclose(g, np_softmax(logits) - labels)  # TF1's kernel: softmax - labels


def test_softmax_cross_entropy_axis_broadcast_and_float16():
    logits = rand((3, 2), np.float64, 3, scale=3.0)
    labels = np.eye(3, 2)
    got = run_modes(nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=0))
    np.testing.assert_allclose(got, -(labels * np_log_softmax(logits, 0)).sum(0))
    got = run_modes(nn.softmax_cross_entropy_with_logits_v2(labels=[[0.0, 1.0]], logits=logits))
    np.testing.assert_allclose(got, -np_log_softmax(logits)[:, 1])
    h = nn.softmax_cross_entropy_with_logits_v2(labels=np.ones(2, np.float16) / 2, logits=np.ones(2, np.float16))
    assert h.dtype == tf.float16 and h.shape.as_list() == []
    np.testing.assert_allclose(run_modes(h), np.log(2), rtol=1e-3)
    with pytest.raises(ValueError, match="named arguments"):
        nn.softmax_cross_entropy_with_logits(1.0, labels=logits, logits=logits)
    with pytest.raises(ValueError, match="Both"):
        nn.softmax_cross_entropy_with_logits(labels=logits)


def test_sparse_softmax_cross_entropy():
    logits = np.concatenate([rand((4, 5), np.float64, 4, scale=3.0), np.pad(EXTREME, ((0, 0), (0, 1)))])
    labels = np.array([0, 4, 2, 1, 3, 0])
    p, feed = _feed(logits)
    y = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=p)
    assert y.shape.as_list() == [6] and y.dtype == tf.float64
    got, g = run_modes([y, tf.gradients(y, p)[0]], feed)
    np.testing.assert_allclose(got, -np_log_softmax(logits)[np.arange(6), labels], rtol=1e-12)
    np.testing.assert_allclose(g, np_softmax(logits) - np.eye(5)[labels], atol=1e-12)
    # rank 3 logits, int64 labels
    logits3 = rand((2, 3, 4), np.float64, 5, scale=3.0)
    labels3 = np.array([[0, 1, 3], [2, 2, 0]], np.int64)
    got = run_modes(nn.sparse_softmax_cross_entropy_with_logits(labels=labels3, logits=logits3))
    want = -np.take_along_axis(np_log_softmax(logits3), labels3[..., None], -1)[..., 0]
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("mode", ["eager", "sync", "threads"])
def test_sparse_label_out_of_range_is_invalid_argument(mode):
    from tests.conftest import make_session

    lab = tf.placeholder(tf.int32, [4])
    y = nn.sparse_softmax_cross_entropy_with_logits(labels=lab, logits=tf.constant(rand((4, 3), np.float64, scale=3.0)))
    with make_session(mode, chunks=2) as s:
        np.testing.assert_allclose(s.run(y, {lab: [0, 1, 2, 0]}).shape, [4])
        for bad in ([0, 3, 1, 1], [0, 1, -1, 2]):
            with pytest.raises(tf.errors.InvalidArgumentError, match="outside the valid range of \\[0, 3\\)"):
                s.run(y, {lab: bad})


def test_sparse_softmax_cross_entropy_static_errors():
    logits = tf.zeros([2, 3])
    with pytest.raises(ValueError, match="except for the last"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1, 2], logits=logits)
    with pytest.raises(ValueError, match="rank"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[[0, 1]], logits=logits)
    with pytest.raises(TypeError):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[0.0, 1.0], logits=logits)


def test_sigmoid_and_weighted_cross_entropy():
    x = np.concatenate([rand((3, 4), np.float64, 6, scale=3.0), EXTREME, [[0.0, 0.0, 1.0, -1.0]]])
    z = np.random.default_rng(7).random(x.shape)
    p, feed = _feed(x)
    sig = nn.sigmoid_cross_entropy_with_logits(labels=z, logits=p)
    wce = nn.weighted_cross_entropy_with_logits(labels=z, logits=p, pos_weight=2.5)
    wce_t = nn.weighted_cross_entropy_with_logits(targets=z, logits=p, pos_weight=2.5)
    got = run_modes([sig, wce, wce_t] + tf.gradients(sig, p) + tf.gradients(wce, p), feed)
    np.testing.assert_allclose(got[0], np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x))), rtol=1e-12)
    lw = 1 + 1.5 * z
    np.testing.assert_allclose(got[1], (1 - z) * x + lw * np_softplus(-x), rtol=1e-12)
    np.testing.assert_array_equal(got[1], got[2])
    np.testing.assert_allclose(got[3], np_sigmoid(x) - z, atol=1e-12)
    np.testing.assert_allclose(got[4], (1 - z) - lw * np_sigmoid(-x), atol=1e-12)
    with pytest.raises(ValueError, match="same shape"):
        nn.sigmoid_cross_entropy_with_logits(labels=tf.zeros([2, 2]), logits=tf.zeros([2, 3]))


def test_float32_logistic_loss_of_a_whole_batch_matches_float64():
    """A [128, 65] float32 batch (nce_loss's shape) takes the in-place numpy path; where
    max(x, 0) and x z cancel (x large, z 1) the loss is log1p(exp(-x)), not 0."""
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((128, 65)) * 8).astype(np.float32)
    z = (rng.random((128, 65)) < 0.3).astype(np.float32)
    x[0, :6], z[0, :6] = [15.68, 40.0, -40.0, 0.0, 1e-30, -90.0], [1, 1, 0, 1, 0, 0]
    xs, zs = tf.placeholder(tf.float32, x.shape), tf.placeholder(tf.float32, z.shape)
    loss = nn.sigmoid_cross_entropy_with_logits(labels=zs, logits=xs)
    got, grad = run_modes([loss, tf.gradients(tf.reduce_sum(loss), xs)[0]], {xs: x, zs: z}, chunks=64)
    x64 = x.astype(np.float64)
    ref = np.maximum(x64, 0) - x64 * z + np.log1p(np.exp(-np.abs(x64)))
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=0)
    assert got[0, 0] > 0 and got[0, 1] > 0  # ~1.5e-7 and ~4e-18: kept, not cancelled to 0
    np.testing.assert_allclose(grad, np_sigmoid(x64) - z, rtol=1e-5, atol=1e-7)


# ---- losses and normalization ----------------------------------------------------------------


def test_l2_loss_l2_normalize_batch_normalization():
    x = rand((3, 4), np.float64, 8, scale=3.0)
    p, feed = _feed(x)
    got = run_modes([nn.l2_loss(p), nn.l2_normalize(p, axis=1), nn.l2_normalize(p), nn.l2_normalize(p * 0.0, 0),
                     nn.batch_normalization(p, 0.5, 2.0, 0.1, 3.0, 1e-3),
                     nn.batch_normalization(p, 0.5, 2.0, None, None, 1e-3)], feed)
    np.testing.assert_allclose(got[0], (x ** 2).sum() / 2, rtol=1e-12)
    np.testing.assert_allclose(got[1], x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(got[2], x / np.linalg.norm(x), rtol=1e-12)
    np.testing.assert_array_equal(got[3], np.zeros_like(x))
    np.testing.assert_allclose(got[4], (x - 0.5) * 3.0 / np.sqrt(2.001) + 0.1, rtol=1e-12)
    np.testing.assert_allclose(got[5], (x - 0.5) / np.sqrt(2.001), rtol=1e-12)
    with pytest.raises(TypeError):
        nn.l2_loss(tf.constant([1, 2]))


@pytest.mark.parametrize("axes,keep", [([0], False), ([1, 2], True), ([0, 1, 2], False), ([-1], None)])
def test_moments(axes, keep):
    x = rand((4, 3, 5), np.float64, 9, scale=3.0) + 2.0
    p, feed = _feed(x)
    m, v = nn.moments(p, axes, keep_dims=keep)
    got_m, got_v = run_modes([m, v], feed)
    ax = tuple(axes)
    np.testing.assert_allclose(got_m, x.mean(axis=ax, keepdims=bool(keep)), rtol=1e-12)
    np.testing.assert_allclose(got_v, x.var(axis=ax, keepdims=bool(keep)), rtol=1e-12)


def test_moments_float16_and_keepdims_alias():
    x = rand((6, 2), np.float64, 10, scale=3.0).astype(np.float16)
    m, v = nn.moments(tf.constant(x), [0], keepdims=True)
    assert m.dtype == tf.float16 and m.shape.as_list() == [1, 2]
    got_m, got_v = run_modes([m, v])
    np.testing.assert_allclose(got_m, x.astype(np.float32).mean(0, keepdims=True), rtol=2e-3)
    np.testing.assert_allclose(got_v, x.astype(np.float32).var(0, keepdims=True), rtol=2e-3)


# ---- bias_add, xw_plus_b, embedding_lookup, top_k ---------------------------------------------


def test_bias_add_formats_and_errors():
    x = rand((2, 3, 4), np.float64, 11, scale=3.0)
    got = run_modes([nn.bias_add(x, np.arange(4.0)), nn.bias_add(x, np.arange(3.0), data_format="NCHW"),
                     nn.xw_plus_b(x[0], np.ones((4, 2)), [1.0, 2.0])])
    np.testing.assert_allclose(got[0], x + np.arange(4.0))
    np.testing.assert_allclose(got[1], x + np.arange(3.0)[:, None])
    np.testing.assert_allclose(got[2], x[0] @ np.ones((4, 2)) + [1.0, 2.0])
    with pytest.raises(ValueError, match="rank 2"):
        nn.bias_add(tf.constant([1.0, 2.0]), [1.0, 2.0])
    with pytest.raises(ValueError, match="equal"):
        nn.bias_add(tf.zeros([2, 3]), [1.0, 2.0])
    with pytest.raises(ValueError, match="rank 1"):
        nn.bias_add(tf.zeros([2, 3]), [[1.0, 2.0, 3.0]])


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup(strategy):
    table = rand((7, 3), np.float64, 12, scale=3.0)
    ids = np.array([[0, 6], [3, 4], [5, 5]])
    if strategy == "mod":
        shards = [table[i::3] for i in range(3)]
    else:
        shards = [table[0:3], table[3:5], table[5:7]]
    got = run_modes([nn.embedding_lookup(table, ids), nn.embedding_lookup(shards, ids, partition_strategy=strategy),
                     nn.embedding_lookup(table, ids, max_norm=1.0)])
    np.testing.assert_allclose(got[0], table[ids])
    np.testing.assert_allclose(got[1], table[ids])
    norms = np.linalg.norm(table[ids], axis=-1, keepdims=True)
    np.testing.assert_allclose(got[2], table[ids] * np.minimum(1.0, 1.0 / norms), rtol=1e-12)


def test_reexports():
    from dflow.kernels import math_ops

    assert nn.top_k is tf.top_k and nn.relu is math_ops.relu and nn.sigmoid is tf.sigmoid and nn.tanh is tf.tanh
    for name in nn.__all__:  # functions and classes, and the rnn_cell namespace (a module, as TF1's)
        obj = getattr(nn, name)
        assert callable(obj) or inspect.ismodule(obj), name


# ---- dropout ---------------------------------------------------------------------------------


def test_dropout_statistics_and_scaling():
    x = np.full((200, 100), 2.0, np.float32)
    p, feed = _feed(x)
    y = nn.dropout(p, keep_prob=0.7, seed=3)
    assert y.shape.as_list() == [200, 100] and y.dtype == tf.float32
    with tf.Session() as s:
        a, b = s.run(y, feed), s.run(y, feed)
    for out in (a, b):
        kept = out != 0
        np.testing.assert_allclose(out[kept], 2.0 / 0.7, rtol=1e-6)  # survivors scaled by 1/keep_prob
        assert abs(kept.mean() - 0.7) < 0.015  # 20000 draws: 0.015 is ~4.6 sigma
        assert abs(out.mean() - 2.0) < 0.05
    assert (a != b).any()  # a new mask on every run
    r = nn.dropout(p, rate=0.25, seed=4)
    out = tf.Session().run(r, feed)
    assert abs((out != 0).mean() - 0.75) < 0.015
    np.testing.assert_allclose(out[out != 0], 2.0 / 0.75, rtol=1e-6)


def test_dropout_modes_agree_with_seed():
    tf.set_random_seed(5)
    x = rand((6, 8), np.float64, 13, scale=3.0)
    y = nn.dropout(tf.constant(x), rate=0.5, seed=1)
    out = run_modes(y)  # eager and chunked dask modes draw the same mask for a seeded op
    kept = out != 0
    np.testing.assert_allclose(out[kept], x[kept] * 2.0)


def test_dropout_noise_shape_tensor_rate_and_identity():
    x = np.ones((50, 4))
    p, feed = _feed(x)
    y = nn.dropout(p, rate=0.5, noise_shape=[None, 1], seed=2)
    rate = tf.placeholder(tf.float64, [])
    z = nn.dropout(p, rate=rate, seed=6)
    with tf.Session() as s:
        out = s.run(y, feed)
        outz = s.run(z, {**feed, rate: 0.2})
    assert np.all(out == out[:, :1])  # one draw per row, shared across the broadcast axis
    assert set(np.unique(out)) <= {0.0, 2.0}
    assert set(np.unique(outz)) <= {0.0, 1.25}
    assert nn.dropout(p, rate=0.0) is p and nn.dropout(p, keep_prob=1.0) is p
    g = tf.gradients(nn.dropout(p, rate=0.5, seed=8), p)[0]
    assert set(np.unique(tf.Session().run(g, feed))) <= {0.0, 2.0}


def test_dropout_errors():
    x = tf.zeros([2, 2])
    with pytest.raises(ValueError, match="range"):
        nn.dropout(x, rate=1.0)
    with pytest.raises(ValueError, match="must be provided"):
        nn.dropout(x)
    with pytest.raises(ValueError, match="floating"):
        nn.dropout(tf.constant([1, 2]), rate=0.5)
