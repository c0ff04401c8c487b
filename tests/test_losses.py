"""dflow.losses and dflow.regularizers against numpy formulas and TF1's weighting/reduction rules."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from dflow import losses as L
from dflow import nn
from dflow import regularizers as R
from tests.conftest import rand, run_modes

R_ = L.Reduction
LAB = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
PRED = (LAB[::-1] * 0.7).astype(np.float32)


def np_log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def np_reduce(losses, weights, reduction):
    """TF1's compute_weighted_loss in numpy (float64)."""
    losses = np.asarray(losses, np.float64)
    w = np.broadcast_to(np.asarray(weights, np.float64), losses.shape)
    weighted = losses * w
    total = weighted.sum()
    den = {R_.SUM: 1.0, R_.MEAN: w.sum(), R_.SUM_OVER_BATCH_SIZE: losses.size,
           R_.SUM_BY_NONZERO_WEIGHTS: np.count_nonzero(w)}
    if reduction == R_.NONE:
        return weighted
    d = den[reduction]
    return 0.0 if d == 0 else total / d


# ---- weighting and reduction ----------------------------------------------------------------


@pytest.mark.parametrize("reduction", sorted(set(R_.all())))
@pytest.mark.parametrize("weights", [1.0, 2.5, 0.0, [[1.0, 0.0, 2.0]], [[0.5], [0.0]], [[1.0, 2.0, 0.0], [3.0, 0.0, 1.0]]])
def test_reductions_match_tf1(reduction, weights):
    loss = L.mean_squared_error(LAB, PRED, weights=weights, reduction=reduction)
    assert loss.dtype == tf.float32
    assert loss.shape.as_list() == ([2, 3] if reduction == R_.NONE else [])
    got = run_modes(loss)
    np.testing.assert_allclose(got, np_reduce((LAB - PRED) ** 2, weights, reduction), rtol=1e-6)


def test_reduction_values_verified_with_tf1():
    # the numbers TF 1.x (tf.compat.v1.losses) gives for these inputs
    w = [[1.0, 0.0, 2.0]]
    want = {R_.SUM: 47.43, R_.MEAN: 7.905, R_.SUM_OVER_BATCH_SIZE: 7.905, R_.SUM_BY_NONZERO_WEIGHTS: 11.8575}
    for r, v in want.items():
        np.testing.assert_allclose(run_modes(L.mean_squared_error(LAB, PRED, weights=w, reduction=r)), v, rtol=1e-6)
    np.testing.assert_allclose(run_modes(L.mean_squared_error(LAB, PRED)), 7.6649995, rtol=1e-6)
    assert run_modes(L.mean_squared_error(LAB, PRED, weights=tf.constant(0.0))) == 0.0


def test_dynamic_batch_dimension():
    p = tf.placeholder(tf.float32, [None, 3])
    w = [[1.0, 0.0, 2.0]]
    loss = L.mean_squared_error(LAB, p, weights=w)
    mean = L.mean_squared_error(LAB, p, weights=w, reduction=R_.MEAN)
    got = run_modes([loss, mean], {p: PRED})
    np.testing.assert_allclose(got[0], np_reduce((LAB - PRED) ** 2, w, R_.SUM_BY_NONZERO_WEIGHTS), rtol=1e-6)
    np.testing.assert_allclose(got[1], np_reduce((LAB - PRED) ** 2, w, R_.MEAN), rtol=1e-6)


def test_weight_and_argument_errors():
    with pytest.raises(ValueError, match="can not be broadcast"):
        L.mean_squared_error(LAB, PRED, weights=[1.0, 0.0])  # rank 1 weights on rank 2 losses (TF1)
    with pytest.raises(ValueError, match="Mismatch at dim 1"):
        L.mean_squared_error(LAB, PRED, weights=[[1.0, 0.0]])
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        L.mean_squared_error(LAB, PRED, reduction="foo")
    with pytest.raises(ValueError, match="labels"):
        L.mean_squared_error(None, PRED)
    with pytest.raises(ValueError, match="incompatible"):
        L.mean_squared_error(LAB, PRED[:, :2])
    with pytest.raises(ValueError, match="axis"):
        L.cosine_distance(LAB, PRED)


def test_collections_scopes_and_names():
    a = L.mean_squared_error(LAB, PRED)
    L.mean_squared_error(LAB, PRED, loss_collection=None)
    with tf.name_scope("tower"):
        b = L.absolute_difference(LAB, PRED)
    c = L.huber_loss(LAB, PRED, scope="myscope")
    L.add_loss(tf.constant(1.0))
    assert a.name == "mean_squared_error/value:0" and c.name == "myscope/value:0"
    assert b.name == "tower/absolute_difference/value:0"
    assert L.get_losses()[:3] == [a, b, c] and len(L.get_losses()) == 4
    assert L.get_losses("tower") == [b]
    assert L.mean_squared_error(LAB, PRED, reduction=R_.SUM).name.endswith("/Sum:0")
    total = L.get_total_loss()
    assert total.name == "total_loss:0"
    np.testing.assert_allclose(run_modes(total), sum(run_modes(L.get_losses())), rtol=1e-6)


def test_total_loss_errors_and_empty_regularization():
    with pytest.raises(ValueError):
        L.get_total_loss()
    zero = L.get_regularization_loss()
    assert zero.dtype == tf.float32 and run_modes(zero) == 0.0


# ---- the losses ---------------------------------------------------------------------------


def test_regression_losses_vs_numpy():
    lab, pred = LAB / 7, PRED / 7
    e = (PRED - LAB).astype(np.float64)
    d = 1.5
    huber = np.where(np.abs(e) <= d, 0.5 * e ** 2, d * (np.abs(e) - 0.5 * d))
    z, p = lab.astype(np.float64), pred.astype(np.float64)
    logl = -z * np.log(p + 1e-7) - (1 - z) * np.log(1 - p + 1e-7)
    zb = (LAB > 3).astype(np.float32)
    hinge = np.maximum(0, 1 - (2 * zb - 1) * PRED)
    unit_l, unit_p = LAB / np.linalg.norm(LAB, axis=1, keepdims=True), PRED / np.linalg.norm(PRED, axis=1, keepdims=True)
    got = run_modes([L.absolute_difference(LAB, PRED), L.huber_loss(LAB, PRED, delta=d), L.log_loss(lab, pred),
                     L.hinge_loss(zb, PRED), L.cosine_distance(unit_l, unit_p, axis=1),
                     L.mean_squared_error(LAB.astype(np.float64), PRED.astype(np.float64))])
    np.testing.assert_allclose(got[0], np.abs(e).mean(), rtol=1e-6)
    np.testing.assert_allclose(got[1], huber.mean(), rtol=1e-6)
    np.testing.assert_allclose(got[2], logl.mean(), rtol=1e-5)
    np.testing.assert_allclose(got[3], hinge.mean(), rtol=1e-6)
    np.testing.assert_allclose(got[4], (1 - (unit_l * unit_p).sum(1)).mean(), rtol=1e-5)
    assert got[5].dtype == np.float32  # TF1 casts regression inputs to float32


def test_softmax_cross_entropy_loss():
    logits = rand((4, 5), seed=1).astype(np.float64) * 3
    onehot = np.eye(5)[[0, 4, 2, 2]]
    w = np.array([1.0, 0.0, 2.0, 0.5])
    x = tf.placeholder(tf.float64, [4, 5])
    lab = tf.constant(onehot)
    plain = L.softmax_cross_entropy(lab, x)
    smooth = L.softmax_cross_entropy(onehot, x, weights=w, label_smoothing=0.1)
    assert plain.dtype == tf.float64 and plain.name == "softmax_cross_entropy_loss/value:0"
    assert tf.gradients(plain, lab) == [None]  # labels are stopped
    got = run_modes([plain, smooth, tf.gradients(plain, x)[0]], {x: logits})
    xent = -(onehot * np_log_softmax(logits)).sum(-1)
    np.testing.assert_allclose(got[0], xent.mean(), rtol=1e-12)
    sm_labels = onehot * 0.9 + 0.1 / 5
    np.testing.assert_allclose(got[1], np_reduce(-(sm_labels * np_log_softmax(logits)).sum(-1), w,
                                                 R_.SUM_BY_NONZERO_WEIGHTS), rtol=1e-12)
    np.testing.assert_allclose(got[2], (np.exp(np_log_softmax(logits)) - onehot) / 4, atol=1e-12)


def test_sparse_softmax_cross_entropy_loss_squeezes():
    logits = LAB.astype(np.float64)
    want = -np_log_softmax(logits)[[0, 1], [0, 2]]
    got = run_modes([L.sparse_softmax_cross_entropy([0, 2], logits),
                     L.sparse_softmax_cross_entropy([[0], [2]], logits),
                     L.sparse_softmax_cross_entropy([0, 2], logits, weights=[[1.0], [3.0]]),
                     L.sparse_softmax_cross_entropy([0, 2], logits, weights=[1.0, 3.0])])
    np.testing.assert_allclose(got[0], want.mean(), rtol=1e-12)
    np.testing.assert_allclose(got[1], want.mean(), rtol=1e-12)
    np.testing.assert_allclose(got[2], (want * [1, 3]).sum() / 2, rtol=1e-12)
    np.testing.assert_allclose(got[3], (want * [1, 3]).sum() / 2, rtol=1e-12)


def test_sigmoid_cross_entropy_loss():
    logits = rand((3, 4), seed=2).astype(np.float64) * 4
    z = (rand((3, 4), seed=3) > 0).astype(np.float64)
    got = run_modes([L.sigmoid_cross_entropy(z, logits), L.sigmoid_cross_entropy(z, logits, label_smoothing=0.2)])

    def ref(zz):
        return (np.maximum(logits, 0) - logits * zz + np.log1p(np.exp(-np.abs(logits)))).mean()

    np.testing.assert_allclose(got[0], ref(z), rtol=1e-12)
    np.testing.assert_allclose(got[1], ref(z * 0.8 + 0.1), rtol=1e-12)


def test_cross_entropy_losses_finite_at_extreme_logits():
    logits = np.array([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 999.0]])
    x = tf.placeholder(tf.float64, [2, 3])
    ls = [L.softmax_cross_entropy(np.eye(3)[[1, 0]], x), L.sparse_softmax_cross_entropy([1, 0], x),
          L.sigmoid_cross_entropy(np.eye(3)[[1, 0]], x)]
    vals = run_modes(ls + tf.gradients(ls, x), {x: logits})
    for v in vals:
        assert np.all(np.isfinite(v))
    np.testing.assert_allclose(vals[0], (2000.0 + 2000.0 + np.log1p(np.exp(-1.0))) / 2, rtol=1e-12)


def test_loss_gradient_checks():
    x0 = rand((2, 3), seed=4).astype(np.float64)
    w = np.array([[1.0, 0.0, 2.0]])
    # (build, delta, tolerance): regression losses run in float32 (TF1 casts their inputs)
    cases = [(lambda p: L.mean_squared_error(LAB, p, weights=w), 1e-2, 1e-3),
             (lambda p: L.huber_loss(LAB / 3, p, weights=w, reduction=R_.MEAN), 1e-2, 1e-3),
             (lambda p: L.softmax_cross_entropy(np.eye(3)[[0, 2]], p, label_smoothing=0.1), 1e-6, 1e-8),
             (lambda p: L.sparse_softmax_cross_entropy([1, 2], p, weights=[0.5, 2.0]), 1e-6, 1e-8),
             (lambda p: L.sigmoid_cross_entropy(np.eye(3)[[0, 2]], p), 1e-6, 1e-8)]
    for build, delta, tol in cases:
        tf.reset_default_graph()
        p = tf.placeholder(tf.float64, [2, 3])
        y = build(p)
        with tf.Session():
            err = tf.test.compute_gradient_error(p, [2, 3], y, [], x_init_value=x0, delta=delta)
        assert err < tol, err


# ---- regularizers ----------------------------------------------------------------------------


def test_regularizer_values_and_names():
    w0 = np.array([[1.0, -2.0], [3.0, -0.5]], np.float32)
    w = tf.constant(w0)
    l1, l2, both = R.l1_regularizer(0.1)(w), R.l2_regularizer(0.2)(w), R.l1_l2_regularizer(0.1, 0.2)(w)
    summed = R.sum_regularizer([R.l1_regularizer(0.1), None, R.l2_regularizer(0.0)])(w)
    assert l1.name == "l1_regularizer:0" and l2.name == "l2_regularizer:0" and both.name == "l1_l2_regularizer:0"
    got = run_modes([l1, l2, both, summed])
    np.testing.assert_allclose(got[0], 0.1 * np.abs(w0).sum(), rtol=1e-6)
    np.testing.assert_allclose(got[1], 0.2 * (w0 ** 2).sum() / 2, rtol=1e-6)
    np.testing.assert_allclose(got[2], got[0] + got[1], rtol=1e-6)
    np.testing.assert_allclose(got[3], got[0], rtol=1e-6)
    assert R.l2_regularizer(0.0)(w) is None and R.sum_regularizer([None]) is None
    with pytest.raises(ValueError, match="integer"):
        R.l2_regularizer(1)
    with pytest.raises(ValueError, match="less than 0"):
        R.l1_regularizer(-0.5)
    np.testing.assert_allclose(run_modes(R.l2_regularizer(tf.constant(0.5))(w)), 0.5 * (w0 ** 2).sum() / 2)


@pytest.mark.program
def test_get_variable_regularizer_feeds_regularization_loss():
    v = tf.get_variable("w", [3], initializer=tf.constant_initializer([1.0, -2.0, 3.0]),
                        regularizer=R.l2_regularizer(0.1))
    with tf.variable_scope("layer", regularizer=R.l1_regularizer(0.5)):
        u = tf.get_variable("u", [2], initializer=tf.constant_initializer([1.0, -1.0]))
    reg = L.get_regularization_losses()
    assert [t.name for t in reg] == ["w/Regularizer/l2_regularizer:0", "layer/u/Regularizer/l1_regularizer:0"]
    assert L.get_regularization_losses("layer") == reg[1:]
    total_reg = L.get_regularization_loss()
    data = L.mean_squared_error([0.0, 0.0, 0.0], v)
    total = L.get_total_loss()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got = s.run([total_reg, data, total])
        grads = s.run(tf.gradients(total, [v, u]))
    np.testing.assert_allclose(got[0], 0.1 * 14 / 2 + 0.5 * 2, rtol=1e-6)
    np.testing.assert_allclose(got[2], got[0] + got[1], rtol=1e-6)
    np.testing.assert_allclose(grads[0], 2 * np.array([1.0, -2.0, 3.0]) / 3 + 0.1 * np.array([1.0, -2.0, 3.0]),
                               rtol=1e-6)
    np.testing.assert_allclose(grads[1], [0.5, -0.5], rtol=1e-6)


def test_apply_regularization():
    a, b = tf.constant([1.0, -2.0]), tf.constant([[3.0]])
    pen = R.apply_regularization(R.l1_regularizer(0.5), [a, b])
    assert pen.name == "get_regularization_penalty:0"
    assert L.get_regularization_losses() == [pen]
    np.testing.assert_allclose(run_modes(pen), 0.5 * 6)
    tf.add_to_collection(tf.GraphKeys.WEIGHTS, a)
    np.testing.assert_allclose(run_modes(R.apply_regularization(R.l2_regularizer(1.0))), 2.5)
    np.testing.assert_allclose(run_modes(R.apply_regularization(R.l2_regularizer(0.0), [a])), 0.0)
    with pytest.raises(ValueError, match="scalar"):
        R.apply_regularization(lambda t: t, [a])
    tf.reset_default_graph()
    with pytest.raises(ValueError, match="No weights"):
        R.apply_regularization(R.l2_regularizer(1.0))


def test_nn_l2_loss_is_the_l2_regularizer_core():
    w = rand((3, 2), seed=5)
    np.testing.assert_allclose(run_modes(nn.l2_loss(w)), (w.astype(np.float64) ** 2).sum() / 2, rtol=1e-6)


def test_mean_pairwise_squared_error_matches_tf1():
    # inputs: numpy default_rng(0) standard normals; expected values printed by TF1 (tf.compat.v1 2.21)
    rng = np.random.default_rng(0)
    lab = rng.standard_normal((3, 4)).astype(np.float32)
    pred = rng.standard_normal((3, 4)).astype(np.float32)
    w = np.array([[1.0], [0.0], [2.0]], np.float32)
    with tf.Graph().as_default():
        plain = tf.losses.mean_pairwise_squared_error(lab, pred)
        weighted = tf.losses.mean_pairwise_squared_error(lab, pred, weights=w)
        single = tf.losses.mean_pairwise_squared_error(lab[:, :1], pred[:, :1])
        assert plain in tf.losses.get_losses()
        x = tf.placeholder(tf.float32, [3, 4])
        (g,) = tf.gradients(tf.losses.mean_pairwise_squared_error(lab, x), x)
        with tf.Session() as sess:
            got = sess.run([plain, weighted, single])
            gv = sess.run(g, {x: pred})
    np.testing.assert_allclose(got, [5.6029983, 8.017146, 0.0], rtol=1e-5)
    d = pred - lab  # d/dp of sum_rows 2 * sum(d^2)/(n-1) - 2 * sum(d)^2/(n(n-1)), n = 4
    np.testing.assert_allclose(gv, 4 * d / 3 - 4 * d.sum(1, keepdims=True) / 12, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError):
        tf.losses.mean_pairwise_squared_error(None, pred)
