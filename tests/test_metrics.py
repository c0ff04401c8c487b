"""tf.metrics: every metric streamed over batches against numpy references written here, weights,
TF1's variable names and collections, resets, argument checks, a few figures from a TensorFlow
run, and one streamed evaluation over chunked Zarr batches on every scheduler."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
import zarr

import dflow as tf
from dflow.errors import InvalidArgumentError

N_CLASSES = 4
THRESHOLDS = [0.25, 0.5, 0.8]
BATCHES = [(0, 17), (17, 30), (30, 48)]


# ---- numpy references ----------------------------------------------------------------------------


def _w(w, n):
    return np.ones(n) if w is None else np.broadcast_to(np.asarray(w, np.float64), (n,))


def _div(a, b):
    return np.where(b > 0, a / np.where(b > 0, b, 1), 0.0)


def np_mean(values, w=None):
    w = _w(w, len(values))
    return _div(np.sum(w * values), np.sum(w))


def np_count(labels, preds, w, want_label, want_pred):
    hit = (labels.astype(bool) == want_label) & (preds.astype(bool) == want_pred)
    return np.sum(_w(w, len(labels)) * hit)


def np_counts_at(labels, preds, thresholds, w):
    """tp, fn, tn, fp at each threshold (predicted positive: prediction > threshold, in float32)."""
    w = _w(w, len(labels))
    pos = preds.astype(np.float32)[None, :] > np.asarray(thresholds, np.float32)[:, None]
    lab = labels.astype(bool)[None, :]
    return [np.sum(w * c, axis=1) for c in (lab & pos, lab & ~pos, ~lab & ~pos, ~lab & pos)]


def np_auc(labels, preds, w=None, num_thresholds=200, curve="ROC", summation_method="trapezoidal"):
    """TF1's discretized AUC: thresholds -1e-7, (i + 1) / (n - 1), 1 + 1e-7."""
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    tp, fn, tn, fp = np_counts_at(labels, preds, [-1e-7] + inner + [1 + 1e-7], w)
    eps = 1e-6
    if curve == "PR" and summation_method == "careful_interpolation":
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        slope = _div(dtp, np.maximum(p[:-1] - p[1:], 0))
        intercept = tp[1:] - slope * p[1:]
        ratio = np.where((p[:-1] > 0) & (p[1:] > 0), _div(p[:-1], p[1:]), 1.0)
        return np.sum(_div(slope * (dtp + intercept * np.log(ratio)), tp[1:] + fn[1:]))
    rec = (tp + eps) / (tp + fn + eps)
    x, y = (fp / (fp + tn + eps), rec) if curve == "ROC" else (rec, (tp + eps) / (tp + fp + eps))
    heights = {"minoring": np.minimum(y[:-1], y[1:]), "majoring": np.maximum(y[:-1], y[1:])}.get(
        summation_method, (y[:-1] + y[1:]) / 2)
    return np.sum((x[:-1] - x[1:]) * heights)


def np_confusion(labels, preds, n, w=None):
    cm = np.zeros((n, n))
    np.add.at(cm, (labels, preds), _w(w, len(labels)))
    return cm


def np_mean_iou(labels, preds, n, w=None):
    cm = np_confusion(labels, preds, n, w)
    den = cm.sum(0) + cm.sum(1) - np.diag(cm)
    valid = den > 0
    return np.sum(np.diag(cm)[valid] / den[valid]) / valid.sum() if valid.any() else 0.0


def np_per_class_accuracy(labels, preds, n, w=None):
    w = _w(w, len(labels))
    total = np.bincount(labels, w, minlength=n)
    right = np.bincount(labels, w * (labels == preds), minlength=n)
    return _div(right, total)


# ---- the metrics under test: (build(inputs, weights), reference(data, weights)) ------------------

# inputs: l/p (binary labels, [0, 1] scores), cl/cp (class ids), y/yhat (regression)
METRICS = {
    "accuracy": (lambda t, w: tf.metrics.accuracy(t["cl"], t["cp"], weights=w),
                 lambda d, w: np_mean(d["cl"] == d["cp"], w)),
    "mean": (lambda t, w: tf.metrics.mean(t["y"], weights=w), lambda d, w: np_mean(d["y"], w)),
    "precision": (lambda t, w: tf.metrics.precision(t["l"], t["p"] > 0.5, weights=w),
                  lambda d, w: _div(np_count(d["l"], d["p"] > 0.5, w, True, True),
                                    np.sum(_w(w, len(d["l"])) * (d["p"] > 0.5)))),
    "recall": (lambda t, w: tf.metrics.recall(t["l"], t["p"] > 0.5, weights=w),
               lambda d, w: _div(np_count(d["l"], d["p"] > 0.5, w, True, True),
                                 np.sum(_w(w, len(d["l"])) * d["l"]))),
    "auc": (lambda t, w: tf.metrics.auc(t["l"], t["p"], weights=w), lambda d, w: np_auc(d["l"], d["p"], w)),
    "auc_pr": (lambda t, w: tf.metrics.auc(t["l"], t["p"], weights=w, curve="PR"),
               lambda d, w: np_auc(d["l"], d["p"], w, curve="PR")),
    "auc_pr_careful": (lambda t, w: tf.metrics.auc(t["l"], t["p"], weights=w, curve="PR",
                                                   summation_method="careful_interpolation"),
                       lambda d, w: np_auc(d["l"], d["p"], w, curve="PR", summation_method="careful_interpolation")),
    "auc_minoring": (lambda t, w: tf.metrics.auc(t["l"], t["p"], weights=w, num_thresholds=20,
                                                 summation_method="minoring"),
                     lambda d, w: np_auc(d["l"], d["p"], w, 20, summation_method="minoring")),
    "auc_majoring": (lambda t, w: tf.metrics.auc(t["l"], t["p"], weights=w, num_thresholds=20,
                                                 summation_method="majoring"),
                     lambda d, w: np_auc(d["l"], d["p"], w, 20, summation_method="majoring")),
    "mean_squared_error": (lambda t, w: tf.metrics.mean_squared_error(t["y"], t["yhat"], weights=w),
                           lambda d, w: np_mean((d["y"] - d["yhat"]) ** 2, w)),
    "mean_absolute_error": (lambda t, w: tf.metrics.mean_absolute_error(t["y"], t["yhat"], weights=w),
                            lambda d, w: np_mean(np.abs(d["y"] - d["yhat"]), w)),
    "root_mean_squared_error": (lambda t, w: tf.metrics.root_mean_squared_error(t["y"], t["yhat"], weights=w),
                                lambda d, w: np.sqrt(np_mean((d["y"] - d["yhat"]) ** 2, w))),
    "true_positives": (lambda t, w: tf.metrics.true_positives(t["l"], t["p"] > 0.5, weights=w),
                       lambda d, w: np_count(d["l"], d["p"] > 0.5, w, True, True)),
    "false_positives": (lambda t, w: tf.metrics.false_positives(t["l"], t["p"] > 0.5, weights=w),
                        lambda d, w: np_count(d["l"], d["p"] > 0.5, w, False, True)),
    "true_negatives": (lambda t, w: tf.metrics.true_negatives(t["l"], t["p"] > 0.5, weights=w),
                       lambda d, w: np_count(d["l"], d["p"] > 0.5, w, False, False)),
    "false_negatives": (lambda t, w: tf.metrics.false_negatives(t["l"], t["p"] > 0.5, weights=w),
                        lambda d, w: np_count(d["l"], d["p"] > 0.5, w, True, False)),
    "mean_iou": (lambda t, w: tf.metrics.mean_iou(t["cl"], t["cp"], N_CLASSES, weights=w),
                 lambda d, w: np_mean_iou(d["cl"], d["cp"], N_CLASSES, w)),
    "mean_per_class_accuracy": (
        lambda t, w: tf.metrics.mean_per_class_accuracy(t["cl"], t["cp"], N_CLASSES, weights=w),
        lambda d, w: np.mean(np_per_class_accuracy(d["cl"], d["cp"], N_CLASSES, w))),
    "precision_at_thresholds": (
        lambda t, w: tf.metrics.precision_at_thresholds(t["l"], t["p"], THRESHOLDS, weights=w),
        lambda d, w: (lambda c: c[0] / (1e-7 + c[0] + c[3]))(np_counts_at(d["l"], d["p"], THRESHOLDS, w))),
    "recall_at_thresholds": (
        lambda t, w: tf.metrics.recall_at_thresholds(t["l"], t["p"], THRESHOLDS, weights=w),
        lambda d, w: (lambda c: c[0] / (1e-7 + c[0] + c[1]))(np_counts_at(d["l"], d["p"], THRESHOLDS, w))),
    "true_positives_at_thresholds": (
        lambda t, w: tf.metrics.true_positives_at_thresholds(t["l"], t["p"], THRESHOLDS, weights=w),
        lambda d, w: np_counts_at(d["l"], d["p"], THRESHOLDS, w)[0]),
    "false_negatives_at_thresholds": (
        lambda t, w: tf.metrics.false_negatives_at_thresholds(t["l"], t["p"], THRESHOLDS, weights=w),
        lambda d, w: np_counts_at(d["l"], d["p"], THRESHOLDS, w)[1]),
    "true_negatives_at_thresholds": (
        lambda t, w: tf.metrics.true_negatives_at_thresholds(t["l"], t["p"], THRESHOLDS, weights=w),
        lambda d, w: np_counts_at(d["l"], d["p"], THRESHOLDS, w)[2]),
    "false_positives_at_thresholds": (
        lambda t, w: tf.metrics.false_positives_at_thresholds(t["l"], t["p"], THRESHOLDS, weights=w),
        lambda d, w: np_counts_at(d["l"], d["p"], THRESHOLDS, w)[3]),
    "percentage_below": (lambda t, w: tf.metrics.percentage_below(t["y"], 0.3, weights=w),
                         lambda d, w: np_mean(d["y"] < 0.3, w)),
}


def make_data(seed, n=48):
    rng = np.random.default_rng(seed)
    l = (rng.random(n) < 0.4).astype(np.int64)
    p = np.clip(0.3 * l + 0.7 * rng.random(n), 0, 1).astype(np.float32)
    p[:2] = [0.0, 1.0]  # the end thresholds must catch exact 0 and 1
    cl = rng.integers(0, N_CLASSES, n)
    cp = np.where(rng.random(n) < 0.6, cl, rng.integers(0, N_CLASSES, n))
    y = rng.standard_normal(n).astype(np.float32)
    return {"l": l, "p": p, "cl": cl, "cp": cp, "y": y, "yhat": (y + 0.5 * rng.standard_normal(n)).astype(np.float32),
            "w": rng.random(n).astype(np.float32)}


def placeholders():
    return {"l": tf.placeholder(tf.int64, [None], "l"), "p": tf.placeholder(tf.float32, [None], "p"),
            "cl": tf.placeholder(tf.int64, [None], "cl"), "cp": tf.placeholder(tf.int64, [None], "cp"),
            "y": tf.placeholder(tf.float32, [None], "y"), "yhat": tf.placeholder(tf.float32, [None], "yhat"),
            "w": tf.placeholder(tf.float32, [None], "w")}


def _slice(d, a, b):
    return {k: v[a:b] for k, v in d.items()}


def _close(got, want, what):
    assert np.asarray(got).dtype == np.float32, what
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6, err_msg=what)


# ---- streamed over batches -------------------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("metric", sorted(METRICS))
def test_streamed_metric_equals_numpy_over_the_concatenation(metric, weighted):
    build, reference = METRICS[metric]
    data = make_data(sorted(METRICS).index(metric))
    t = placeholders()
    value, update = build(t, t["w"] if weighted else None)
    w = data["w"] if weighted else None
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        _close(sess.run(value), np.zeros_like(reference(data, w)), f"{metric} before any update")
        for a, b in BATCHES:
            got = sess.run(update, {t[k]: v[a:b] for k, v in data.items()})
            if metric not in ("mean_iou", "mean_per_class_accuracy"):  # their updates return more (below)
                seen = _slice(data, 0, b)
                _close(got, reference(seen, None if w is None else w[:b]), f"{metric} update after {b}")
        _close(sess.run(value), reference(data, w), f"{metric} value")
        _close(sess.run(value), reference(data, w), f"{metric} value read twice")  # reading changes nothing


def test_mean_iou_update_returns_the_confusion_matrix_and_per_class_update_the_accuracies():
    data = make_data(7)
    t = placeholders()
    _, cm_update = tf.metrics.mean_iou(t["cl"], t["cp"], N_CLASSES, weights=t["w"])
    _, acc_update = tf.metrics.mean_per_class_accuracy(t["cl"], t["cp"], N_CLASSES)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for a, b in BATCHES:
            cm, acc = sess.run([cm_update, acc_update], {t[k]: v[a:b] for k, v in data.items()})
        assert cm.dtype == np.float64 and cm.shape == (N_CLASSES, N_CLASSES)
        np.testing.assert_allclose(cm, np_confusion(data["cl"], data["cp"], N_CLASSES, data["w"]), rtol=1e-12)
        _close(acc, np_per_class_accuracy(data["cl"], data["cp"], N_CLASSES), "per-class update")


def test_mean_tensor_streams_elementwise_with_broadcast_weights():
    rng = np.random.default_rng(3)
    x = tf.placeholder(tf.float32, [4, 3])
    w = tf.placeholder(tf.float32, [4, 1])
    value, update = tf.metrics.mean_tensor(x, weights=w)
    xs = rng.standard_normal((3, 4, 3)).astype(np.float32)
    ws = rng.random((3, 4, 1)).astype(np.float32)
    ws[:, 0] = 0  # a row never weighted: 0, not nan
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for xb, wb in zip(xs, ws):
            sess.run(update, {x: xb, w: wb})
        want = _div((xs * ws).sum(0), np.broadcast_to(ws, xs.shape).sum(0))
        _close(sess.run(value), want, "mean_tensor")
        assert value.name == "mean/value:0"
    names = [v.name for v in tf.local_variables()]
    assert names == ["mean/total_tensor:0", "mean/count_tensor:0"]


# ---- weights, shapes and dtypes as TF1 ------------------------------------------------------------------


def test_weights_scalar_column_and_squeezed_shapes():
    rng = np.random.default_rng(4)
    vals = rng.standard_normal((6, 3)).astype(np.float32)
    col = rng.random((6, 1)).astype(np.float32)
    m_col, _ = tf.metrics.mean(vals, weights=col)
    m_scalar, _ = tf.metrics.mean(vals, weights=2.0)
    labels = np.array([[1], [0], [2], [2]])  # [4, 1] labels against [4] predictions: squeezed
    acc, acc_up = tf.metrics.accuracy(labels, np.array([1, 1, 2, 0]))
    tp, tp_up = tf.metrics.true_positives([True, True, False], [True, False, True], weights=[[0.5], [2.0], [1.0]])
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        m1, m2, a, t = sess.run([_update_of(m_col), _update_of(m_scalar), acc_up, tp_up])
    _close(m1, np.sum(vals * col) / np.sum(np.broadcast_to(col, vals.shape)), "column weights")
    _close(m2, vals.mean(), "scalar weight")
    _close(a, 0.5, "squeezed labels")
    _close(t, 0.5, "squeezed weights")


def _update_of(value):
    return value.graph.get_tensor_by_name(value.name.replace("value:0", "update_op:0"))


def test_bad_shapes_and_arguments_raise_when_the_graph_is_built():
    with pytest.raises(ValueError, match="weights can not be broadcast"):
        tf.metrics.mean(np.zeros((4, 3), np.float32), weights=np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match="weights can not be broadcast"):
        tf.metrics.accuracy(np.zeros((2, 3)), np.zeros((2, 3)), weights=np.ones((2, 3, 2, 2)))
    with pytest.raises(ValueError):
        tf.metrics.accuracy(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError):
        tf.metrics.mean_iou(np.zeros(3, np.int64), np.zeros(4, np.int64), 2)
    with pytest.raises(ValueError, match="Curve must be either ROC or PR"):
        tf.metrics.auc([1, 0], [0.5, 0.5], curve="XY")
    with pytest.raises(ValueError, match="summation_method"):
        tf.metrics.auc([1, 0], [0.5, 0.5], summation_method="simpson")
    with pytest.raises(ValueError, match="rank"):
        tf.metrics.true_positives([True, False], [True, True], weights=np.ones((2, 1, 1)))
    with pytest.raises(TypeError):
        tf.metrics.mean_squared_error(np.array([1, 2]), np.array([1.0, 2.0], np.float32))
    with pytest.raises(ValueError):  # mean_tensor keeps one total per element: a known shape
        tf.metrics.mean_tensor(tf.placeholder(tf.float32, [None, 2]))


def test_out_of_range_inputs_fail_when_the_update_runs():
    p = tf.placeholder(tf.float32, [None])
    _, auc_up = tf.metrics.auc([1, 0, 1], p)
    ids = tf.placeholder(tf.int64, [None])
    _, iou_up = tf.metrics.mean_iou(ids, [0, 1, 1], 2)
    _, acc_up = tf.metrics.mean_per_class_accuracy(ids, [0, 1, 1], 2)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        with pytest.raises(InvalidArgumentError, match=r"predictions must be in \[0, 1\]"):
            sess.run(auc_up, {p: [0.5, 1.5, 0.2]})
        with pytest.raises(InvalidArgumentError, match=r"predictions must be in \[0, 1\]"):
            sess.run(auc_up, {p: [0.5, -0.1, 0.2]})
        with pytest.raises(InvalidArgumentError, match="`labels` out of bound"):
            sess.run(iou_up, {ids: [0, 2, 1]})
        with pytest.raises(InvalidArgumentError, match="`labels` contains negative values"):
            sess.run(acc_up, {ids: [0, -1, 1]})
        # a failed update commits nothing
        assert sess.run(iou_up, {ids: [0, 1, 1]}).tolist() == [[1.0, 0.0], [0.0, 2.0]]


def test_bool_and_float_predictions_are_cast_as_tf1():
    # precision/recall/counts cast predictions and labels to bool: any non-zero is True
    prec, up = tf.metrics.precision(np.array([2, 0, 1, 0]), np.array([0.3, 0.7, 0.0, 0.0], np.float32))
    # accuracy casts predictions to the labels' dtype (0.9 -> 0 for int labels, truncation)
    acc, acc_up = tf.metrics.accuracy(np.array([0, 1, 1]), np.array([0.9, 1.2, 0.5], np.float32))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(up) == pytest.approx(0.5)
        assert sess.run(acc_up) == pytest.approx(2 / 3)


# ---- names, collections, initialization (TF 2.21.0, tf.compat.v1.metrics) -----------------------------


def test_variable_and_tensor_names_as_tf1():
    l, p = tf.placeholder(tf.float32, [None]), tf.placeholder(tf.float32, [None])
    li, pi = tf.placeholder(tf.int64, [None]), tf.placeholder(tf.int64, [None])
    pairs = [tf.metrics.accuracy(li, pi), tf.metrics.accuracy(li, pi), tf.metrics.mean(p),
             tf.metrics.precision(l, p), tf.metrics.recall(l, p), tf.metrics.auc(l, p),
             tf.metrics.mean_squared_error(l, p), tf.metrics.mean_absolute_error(l, p),
             tf.metrics.root_mean_squared_error(l, p), tf.metrics.true_positives(l, p),
             tf.metrics.false_positives(l, p), tf.metrics.true_negatives(l, p), tf.metrics.false_negatives(l, p),
             tf.metrics.mean_iou(li, pi, 3), tf.metrics.mean_per_class_accuracy(li, pi, 3),
             tf.metrics.precision_at_thresholds(l, p, [0.3, 0.5]), tf.metrics.recall_at_thresholds(l, p, [0.3, 0.5]),
             tf.metrics.percentage_below(p, 0.5), tf.metrics.accuracy(li, pi, name="my_acc")]
    # names printed by TensorFlow 2.21.0 (tf.compat.v1, graph mode) for the same calls; its update
    # ops of the counting metrics are resource-variable ops (AssignAddVariableOp), TF1's AssignAdd
    assert [v.name for v, _ in pairs] == [
        "accuracy/value:0", "accuracy_1/value:0", "mean/value:0", "precision/value:0", "recall/value:0",
        "auc/value:0", "mean_squared_error/value:0", "mean_absolute_error/value:0", "Sqrt:0",
        "true_positives/Identity:0", "false_positives/Identity:0", "true_negatives/Identity:0",
        "false_negatives/Identity:0", "mean_iou/Select_1:0", "mean_accuracy/mean_accuracy:0",
        "precision_at_thresholds/precision_value:0", "recall_at_thresholds/recall_value:0",
        "percentage_below_threshold/value:0", "my_acc/value:0"]
    assert [u.name for _, u in pairs][:9] == [
        "accuracy/update_op:0", "accuracy_1/update_op:0", "mean/update_op:0", "precision/update_op:0",
        "recall/update_op:0", "auc/update_op:0", "mean_squared_error/update_op:0",
        "mean_absolute_error/update_op:0", "Sqrt_1:0"]
    want = [
        ("accuracy/total:0", "float32", []), ("accuracy/count:0", "float32", []),
        ("accuracy_1/total:0", "float32", []), ("accuracy_1/count:0", "float32", []),
        ("mean/total:0", "float32", []), ("mean/count:0", "float32", []),
        ("precision/true_positives/count:0", "float32", []), ("precision/false_positives/count:0", "float32", []),
        ("recall/true_positives/count:0", "float32", []), ("recall/false_negatives/count:0", "float32", []),
        ("auc/true_positives:0", "float32", [200]), ("auc/false_negatives:0", "float32", [200]),
        ("auc/true_negatives:0", "float32", [200]), ("auc/false_positives:0", "float32", [200]),
        ("mean_squared_error/total:0", "float32", []), ("mean_squared_error/count:0", "float32", []),
        ("mean_absolute_error/total:0", "float32", []), ("mean_absolute_error/count:0", "float32", []),
        ("root_mean_squared_error/total:0", "float32", []), ("root_mean_squared_error/count:0", "float32", []),
        ("true_positives/count:0", "float32", []), ("false_positives/count:0", "float32", []),
        ("true_negatives/count:0", "float32", []), ("false_negatives/count:0", "float32", []),
        ("mean_iou/total_confusion_matrix:0", "float64", [3, 3]),
        ("mean_accuracy/total:0", "float32", [3]), ("mean_accuracy/count:0", "float32", [3]),
        ("precision_at_thresholds/true_positives:0", "float32", [2]),
        ("precision_at_thresholds/false_positives:0", "float32", [2]),
        ("recall_at_thresholds/true_positives:0", "float32", [2]),
        ("recall_at_thresholds/false_negatives:0", "float32", [2]),
        ("percentage_below_threshold/total:0", "float32", []), ("percentage_below_threshold/count:0", "float32", []),
        ("my_acc/total:0", "float32", []), ("my_acc/count:0", "float32", [])]
    local = tf.local_variables()
    assert [(v.name, v.dtype.name, v.shape.as_list()) for v in local] == want
    assert tf.get_collection(tf.GraphKeys.METRIC_VARIABLES) == local
    assert tf.global_variables() == [] and tf.trainable_variables() == []
    assert not any(v.trainable for v in local)


def test_collections_arguments_and_scopes():
    v, u = tf.metrics.mean([1.0, 2.0], metrics_collections=["my_metrics"], updates_collections=["my_updates"])
    p, pu = tf.metrics.precision([True], [True], metrics_collections="prec")  # a string names one collection
    assert tf.get_collection("my_metrics") == [v] and tf.get_collection("my_updates") == [u]
    assert tf.get_collection("prec") == [p] and tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    with tf.variable_scope("eval"):
        tf.metrics.recall([True], [False], name="r")
    assert [x.name for x in tf.local_variables("eval")] == ["eval/r/true_positives/count:0",
                                                            "eval/r/false_negatives/count:0"]


def test_local_variables_initializer_resets_the_totals():
    x = tf.placeholder(tf.float32, [None])
    value, update = tf.metrics.mean(x)
    init = tf.local_variables_initializer()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(value)  # uninitialized totals are refused, as TF1
        sess.run(init)
        sess.run(update, {x: [1.0, 2.0, 3.0]})
        assert sess.run(update, {x: [10.0]}) == pytest.approx(4.0)
        sess.run(init)
        assert sess.run(value) == 0.0
        assert sess.run(update, {x: [5.0, 7.0]}) == pytest.approx(6.0)
        assert sess.run(value) == pytest.approx(6.0)


def test_value_fetched_with_the_update_sees_the_totals_before_it():
    # TF1 leaves this order to a race; dflow's reads see the value at the start of the run
    x = tf.placeholder(tf.float32, [None])
    value, update = tf.metrics.mean(x)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run([value, update], {x: [2.0, 4.0]}) == [0.0, 3.0]
        assert sess.run([value, update], {x: [9.0]}) == [3.0, 5.0]


# ---- figures from TensorFlow ------------------------------------------------------------------------


def test_figures_from_a_tensorflow_run():
    """TensorFlow 2.21.0 (tf.compat.v1.metrics, graph mode) on this data, streamed in three batches,
    gave these values (printed as float32)."""
    rs = np.random.RandomState(1234)
    n = 60
    labels = (rs.rand(n) < 0.4).astype(np.int64)
    preds = np.clip(0.35 * labels + 0.65 * rs.rand(n), 0, 1).astype(np.float32)
    preds[:3] = [0.0, 1.0, 0.5]
    w = rs.rand(n).astype(np.float32)
    cl = rs.randint(0, 4, n).astype(np.int64)
    cp = np.where(rs.rand(n) < 0.6, cl, rs.randint(0, 4, n)).astype(np.int64)
    tf_figures = {
        "roc": 0.856249988079071, "roc_w": 0.8276301026344299, "pr": 0.718646228313446,
        "pr_careful": 0.7245765328407288, "roc_min": 0.8537499904632568, "roc_maj": 0.8587499856948853,
        "roc_10": 0.856874942779541, "roc_thr": 0.830625057220459, "miou": 0.5363636612892151,
        "miou_w": 0.49280619621276855, "mpca_w": 0.6671779751777649}
    L, P, W = tf.placeholder(tf.int64, [None]), tf.placeholder(tf.float32, [None]), tf.placeholder(tf.float32, [None])
    CL, CP = tf.placeholder(tf.int64, [None]), tf.placeholder(tf.int64, [None])
    m = {"roc": tf.metrics.auc(L, P), "roc_w": tf.metrics.auc(L, P, weights=W),
         "pr": tf.metrics.auc(L, P, curve="PR"),
         "pr_careful": tf.metrics.auc(L, P, curve="PR", summation_method="careful_interpolation"),
         "roc_min": tf.metrics.auc(L, P, summation_method="minoring"),
         "roc_maj": tf.metrics.auc(L, P, summation_method="majoring"),
         "roc_10": tf.metrics.auc(L, P, num_thresholds=10),
         "roc_thr": tf.metrics.auc(L, P, thresholds=[0.7, 0.2, 0.5]),
         "miou": tf.metrics.mean_iou(CL, CP, 4), "miou_w": tf.metrics.mean_iou(CL, CP, 4, weights=W),
         "mpca_w": tf.metrics.mean_per_class_accuracy(CL, CP, 4, weights=W)}
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for a, b in [(0, 25), (25, 40), (40, 60)]:
            sess.run([u for _, u in m.values()], {L: labels[a:b], P: preds[a:b], W: w[a:b], CL: cl[a:b], CP: cp[a:b]})
        got = sess.run({k: v for k, (v, _) in m.items()})
    for k, want in tf_figures.items():
        assert got[k] == pytest.approx(want, rel=2e-6, abs=1e-7), k


# ---- a streamed evaluation over chunked Zarr batches, on every scheduler -----------------------------


@pytest.mark.program
def test_streamed_evaluation_over_chunked_zarr_batches(tmp_path):
    data = make_data(11, n=240)
    root = zarr.open_group(str(tmp_path / "eval.zarr"), mode="w")
    for k, v in data.items():
        root.create_array(k, shape=v.shape, dtype=v.dtype, chunks=(20,))[...] = v
    t = placeholders()
    names = ["accuracy", "auc", "auc_pr_careful", "precision", "recall", "mean_squared_error",
             "root_mean_squared_error", "mean_iou", "mean_per_class_accuracy", "recall_at_thresholds"]
    pairs = {k: METRICS[k][0](t, t["w"]) for k in names}
    updates = tf.group(*[u for _, u in pairs.values()])
    values = {k: v for k, (v, _) in pairs.items()}
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for a in range(0, 240, 100):  # batches of 100, 100, 40 rows: several chunks each
            sess.run(updates, {t[k]: da.from_zarr(root[k])[a:a + 100] for k in data})
        got = sess.run(values)
    for k in names:
        _close(got[k], METRICS[k][1](data, data["w"]), k)


@pytest.mark.program
def test_one_update_over_a_read_zarr_source(tmp_path):
    data = make_data(12, n=300)
    root = zarr.open_group(str(tmp_path / "eval.zarr"), mode="w")
    for k in ("l", "p", "w"):
        root.create_array(k, shape=data[k].shape, dtype=data[k].dtype, chunks=(64,))[...] = data[k]
    src = {k: tf.io.read_zarr(str(tmp_path / "eval.zarr"), k) for k in ("l", "p", "w")}
    auc, auc_up = tf.metrics.auc(src["l"], src["p"], weights=src["w"])
    acc, acc_up = tf.metrics.accuracy(src["l"], tf.cast(src["p"] > 0.5, tf.int64))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run([auc_up, acc_up])
        got_auc, got_acc = sess.run([auc, acc])
    _close(got_auc, np_auc(data["l"], data["p"], data["w"]), "auc")
    _close(got_acc, np_mean(data["l"] == (data["p"] > 0.5)), "accuracy")


@pytest.mark.parametrize("mode", ["eager", "sync", "threads", "processes",
                                  pytest.param("distributed", marks=pytest.mark.slow)])
def test_streamed_metrics_on_every_scheduler(mode, sess_factory):
    data = make_data(13, n=90)
    t = placeholders()
    names = ["accuracy", "auc", "precision", "mean_absolute_error", "mean_iou", "mean_per_class_accuracy",
             "false_negatives", "precision_at_thresholds"]
    pairs = {k: METRICS[k][0](t, t["w"]) for k in names}
    updates = tf.group(*[u for _, u in pairs.values()])
    sess = sess_factory(mode, chunks=7)  # numpy feeds split into chunks of 7 rows on the dask paths
    sess.run(tf.local_variables_initializer())
    for a in range(0, 90, 30):
        sess.run(updates, {t[k]: v[a:a + 30] for k, v in data.items()})
    got = sess.run({k: v for k, (v, _) in pairs.items()})
    for k in names:
        _close(got[k], METRICS[k][1](data, data["w"]), f"{k} on {mode}")
    bad = {t[k]: v[:30] for k, v in data.items()}
    bad[t["cl"]] = np.full(30, N_CLASSES)
    # the check's Assert or, on Dask where nothing orders the two tasks, the segment sum's own check
    with pytest.raises(InvalidArgumentError, match=r"`labels` out of bound|segment_ids contains 4"):
        sess.run(updates, bad)
    assert sess.run(pairs["accuracy"][0]) == got["accuracy"]  # the failed update committed nothing
