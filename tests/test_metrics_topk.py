"""tf.metrics' top-k family (dflow/metrics_topk.py): TF1's figures and variable names on a fixed
batch, numpy references streamed over random batches (dense and sparse labels, class_id, weights)
on every local mode, and TF1's build-time errors."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import LOCAL_MODES, make_session

LABELS = np.array([[0, 2, -1], [1, 1, 3], [4, -1, -1], [3, 0, 2]], np.int64)
PREDS = np.array([[.1, .5, .2, .9, .0], [.3, .8, .1, .2, .6], [.9, .1, .2, .3, .4], [.2, .2, .7, .1, .0]],
                 np.float32)
PIDX = np.array([[3, 1], [1, 4], [0, 4], [2, 0]], np.int32)
W = np.array([1., 0.5, 2., 0.], np.float32)


def _sparse_labels():
    return tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [3, 0]], np.array([0, 2, 1, 4, 3, 2], np.int64),
                           [4, 3])


def _fixed_metrics():
    sl, pidx = _sparse_labels(), tf.constant(PIDX)
    return {
        "ap3": tf.metrics.average_precision_at_k(LABELS, PREDS, 3),
        "ap2w": tf.metrics.average_precision_at_k(LABELS, PREDS, 2, weights=W),
        "sap2": tf.metrics.sparse_average_precision_at_k(sl, PREDS, 2),
        "p2": tf.metrics.precision_at_k(LABELS, PREDS, 2),
        "p2c1": tf.metrics.precision_at_k(LABELS, PREDS, 2, class_id=1),
        "sp3w": tf.metrics.sparse_precision_at_k(sl, PREDS, 3, weights=W),
        "ptk": tf.metrics.precision_at_top_k(LABELS, pidx),
        "ptkc3": tf.metrics.precision_at_top_k(sl, pidx, class_id=3),
        "r2": tf.metrics.recall_at_k(LABELS, PREDS, 2),
        "r2c2w": tf.metrics.recall_at_k(sl, PREDS, 2, class_id=2, weights=W),
        "rtk": tf.metrics.recall_at_top_k(LABELS, pidx, k=2),
        "r1_1d": tf.metrics.recall_at_k(np.array([1, 0, 4, 2], np.int64), PREDS, 1),
        "p1c3": tf.metrics.precision_at_k(LABELS, PREDS, 1, class_id=3),
    }


# TensorFlow 2.21's tf.compat.v1.metrics on the batch above (one update; the value after it)
TF_FIGURES = {"ap3": 0.41666666666666663, "ap2w": 0.35714285714285715, "sap2": 0.5625, "p2": 0.5, "p2c1": 0.5,
              "sp3w": 0.5238095238095238, "ptk": 0.5, "ptkc3": 0.0, "r2": 0.4, "r2c2w": 0.0, "rtk": 0.4,
              "r1_1d": 0.25, "p1c3": 0.0}
# and the names TF1 gives the value, the update and the local variables
TF_NAMES = {
    "ap3": ("average_precision_at_3/mean:0", "average_precision_at_3:0"),
    "sap2": ("average_precision_at_2_1/mean:0", "average_precision_at_2_1:0"),
    "p2c1": ("precision_at_2_class1:0", "precision_at_2_class1/update:0"),
    "ptk": ("precision_at_k:0", "precision_at_k/update:0"),
    "rtk": ("recall_at_2_1:0", "recall_at_2_1/update:0"),
}
TF_VARIABLES = [
    "average_precision_at_3/max_1:0", "average_precision_at_3/total:0", "average_precision_at_2/max_1:0",
    "average_precision_at_2/total:0", "average_precision_at_2_1/max_1:0", "average_precision_at_2_1/total:0",
    "precision_at_2/true_positive_at_2:0", "precision_at_2/false_positive_at_2:0",
    "precision_at_2_class1/true_positive_at_2_class1:0", "precision_at_2_class1/false_positive_at_2_class1:0",
    "precision_at_3/true_positive_at_3:0", "precision_at_3/false_positive_at_3:0",
    "precision_at_k/true_positive_at_k:0", "precision_at_k/false_positive_at_k:0",
    "precision_at_k_class3/true_positive_at_k_class3:0", "precision_at_k_class3/false_positive_at_k_class3:0",
    "recall_at_2/true_positive_at_2:0", "recall_at_2/false_negative_at_2:0",
    "recall_at_2_class2/true_positive_at_2_class2:0", "recall_at_2_class2/false_negative_at_2_class2:0",
    "recall_at_2_1/true_positive_at_2:0", "recall_at_2_1/false_negative_at_2:0",
    "recall_at_1/true_positive_at_1:0", "recall_at_1/false_negative_at_1:0",
    "precision_at_1_class3/true_positive_at_1_class3:0", "precision_at_1_class3/false_positive_at_1_class3:0",
]


def test_tf_figures_names_and_variables():
    with tf.Graph().as_default():
        ms = _fixed_metrics()
        assert [v.name for v in tf.local_variables()] == TF_VARIABLES
        assert all(v.dtype.base_dtype == tf.float64 for v in tf.local_variables())
        assert not tf.global_variables() and not tf.trainable_variables()
        for key, (value, update) in TF_NAMES.items():
            assert (ms[key][0].name, ms[key][1].name) == (value, update)
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            before = s.run({k: v for k, (v, _) in ms.items()})
            assert before["ap3"] == 0.0 and np.isnan(before["p2"]) and np.isnan(before["r2"])  # 0/0 as TF1
            updated = s.run({k: u for k, (_, u) in ms.items()})
            after = s.run({k: v for k, (v, _) in ms.items()})
        for k, want in TF_FIGURES.items():
            assert updated[k] == pytest.approx(want, abs=1e-12), k
            assert after[k] == pytest.approx(want, abs=1e-12), k


# ---- numpy references ----------------------------------------------------------------------------


def _topk(preds, k):
    return np.argsort(-preds, axis=-1, kind="stable")[:, :k]


def _rows(labels, pidx, class_id):
    for lab, pred in zip(labels, pidx):
        ls, ps = set(int(x) for x in lab), set(int(x) for x in pred)
        if class_id is not None:
            ls, ps = ls & {class_id}, ps & {class_id}
        yield ls, ps


def np_ratio(what, labels, pidx, class_id=None, w=None):
    w = np.ones(len(labels)) if w is None else w
    tp = other = 0.0
    for wi, (ls, ps) in zip(w, _rows(labels, pidx, class_id)):
        tp += wi * len(ls & ps)
        other += wi * len((ps - ls) if what == "precision" else (ls - ps))
    return tp / (tp + other)


def np_average_precision(labels, pidx, w=None):
    w = np.ones(len(labels)) if w is None else w
    total = 0.0
    for wi, lab, pred in zip(w, labels, pidx):
        ls = set(int(x) for x in lab)
        hits, s = 0, 0.0
        for i, p in enumerate(pred):
            if int(p) in ls:
                hits += 1
                s += hits / (i + 1)
        total += wi * s / min(int(np.sum(lab >= 0)), len(pred))
    return total / np.sum(w)


@pytest.mark.parametrize("mode", LOCAL_MODES)
def test_streamed_against_numpy(mode):
    rng = np.random.RandomState(3)
    n, c, k = 30, 7, 3
    labels = rng.randint(0, c, (n, 4)).astype(np.int64)
    labels[rng.rand(n, 4) < 0.3] = -1
    labels[:, 0] = rng.randint(0, c, n)  # every row has a label: no nan average precision
    preds = rng.rand(n, c).astype(np.float32)
    w = rng.rand(n).astype(np.float32)
    batches = [(0, 11), (11, 12), (12, 30)]
    with tf.Graph().as_default():
        lab = tf.placeholder(tf.int64, [None, 4])
        pr = tf.placeholder(tf.float32, [None, c])
        wt = tf.placeholder(tf.float32, [None])
        pidx = tf.nn.top_k(pr, k).indices
        ms = {
            "p": tf.metrics.precision_at_k(lab, pr, k),
            "pw_c2": tf.metrics.precision_at_k(lab, pr, k, class_id=2, weights=wt),
            "r": tf.metrics.recall_at_k(lab, pr, k),
            "rw": tf.metrics.recall_at_top_k(lab, pidx, weights=wt),
            "r_c5": tf.metrics.recall_at_k(lab, pr, k, class_id=5),
            "ap": tf.metrics.average_precision_at_k(lab, pr, k),
            "apw": tf.metrics.average_precision_at_k(lab, pr, k, weights=wt),
        }
        with make_session(mode, chunks=2) as s:
            s.run(tf.local_variables_initializer())
            for a, b in batches:
                s.run([u for _, u in ms.values()], {lab: labels[a:b], pr: preds[a:b], wt: w[a:b]})
            got = s.run({key: v for key, (v, _) in ms.items()})
    top = _topk(preds, k)
    want = {
        "p": np_ratio("precision", labels, top), "pw_c2": np_ratio("precision", labels, top, 2, w),
        "r": np_ratio("recall", labels, top), "rw": np_ratio("recall", labels, top, w=w),
        "r_c5": np_ratio("recall", labels, top, 5),
        "ap": np_average_precision(labels, top), "apw": np_average_precision(labels, top, w),
    }
    for key in want:
        assert got[key] == pytest.approx(want[key], rel=1e-6), key


def test_collections_and_a_row_without_labels():
    with tf.Graph().as_default():
        v, u = tf.metrics.average_precision_at_k([[-1], [0]], [[.2, .8], [.9, .1]], 1,
                                                 metrics_collections=["m"], updates_collections=["u"])
        assert tf.get_collection("m") == [v] and tf.get_collection("u") == [u]
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            assert np.isnan(s.run(u))  # TF1: a row without labels divides 0 by 0


def test_build_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Invalid k=0"):
            tf.metrics.average_precision_at_k(LABELS, PREDS, 0)
        with pytest.raises(ValueError, match="weights can not be broadcast"):
            tf.metrics.precision_at_k(LABELS, PREDS, 2, weights=np.ones((4, 2), np.float32))
        with pytest.raises(ValueError, match="Unexpected labels shape"):
            tf.metrics.recall_at_k(np.zeros((4, 1, 1, 1), np.int64), PREDS, 2)
        with pytest.raises(TypeError, match="integer class ids"):
            tf.metrics.precision_at_k(LABELS.astype(np.float32), PREDS, 2)
        with pytest.raises(ValueError):
            tf.metrics.precision_at_k(LABELS, PREDS, 9)  # k > number of classes: top_k's error
