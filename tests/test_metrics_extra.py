"""tf.metrics' distance and operating-point metrics against TF1's figures (TF 2.21 compat.v1, the
inputs below) and numpy, with TF1's variable names."""

import numpy as np
import pytest

import dflow as tf

LABELS = np.array([0, 1, 1, 0, 1, 0, 1, 1], np.float32)
PREDS = np.array([.1, .8, .4, .3, .9, .6, .7, .2], np.float32)


def _run(pairs, feeds=None):
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        updates = s.run([p[1] for p in pairs], feeds)
        values = s.run([p[0] for p in pairs])
    return updates, values


def test_figures_and_variable_names_match_tf1():
    pairs = [tf.metrics.sensitivity_at_specificity(LABELS, PREDS, 0.7, num_thresholds=5),
             tf.metrics.specificity_at_sensitivity(LABELS, PREDS, 0.6, num_thresholds=5),
             tf.metrics.mean_cosine_distance(tf.constant([[1., 0], [0.6, 0.8]]), tf.constant([[0., 1], [0.6, 0.8]]),
                                             dim=1),
             tf.metrics.mean_relative_error(tf.constant([1., 2, 4]), tf.constant([1.5, 2, 3]),
                                            normalizer=tf.constant([1., 2, 4]))]
    updates, values = _run(pairs)
    np.testing.assert_allclose(updates, [0.6, 0.6666667, 0.5, 0.25], rtol=1e-6)  # TF1
    np.testing.assert_allclose(values, updates, rtol=1e-6)
    assert [v.name for v in tf.local_variables()] == [  # TF1's names, in TF1's order
        "sensitivity_at_specificity/true_positives:0", "sensitivity_at_specificity/false_negatives:0",
        "sensitivity_at_specificity/true_negatives:0", "sensitivity_at_specificity/false_positives:0",
        "specificity_at_sensitivity/true_positives:0", "specificity_at_sensitivity/false_negatives:0",
        "specificity_at_sensitivity/true_negatives:0", "specificity_at_sensitivity/false_positives:0",
        "mean_cosine_distance/total:0", "mean_cosine_distance/count:0",
        "mean_relative_error/total:0", "mean_relative_error/count:0"]


def test_streaming_over_batches_equals_numpy():
    rng = np.random.RandomState(3)
    lab = tf.placeholder(tf.float32, [None])
    pred = tf.placeholder(tf.float32, [None])
    norm = tf.placeholder(tf.float32, [None])
    rel, rel_up = tf.metrics.mean_relative_error(lab, pred, norm)
    sens, sens_up = tf.metrics.sensitivity_at_specificity(tf.cast(lab > 0.5, tf.bool), pred, 0.5, num_thresholds=50)
    batches = [(rng.rand(7).astype(np.float32), rng.rand(7).astype(np.float32),
                np.array([0, 1, 2, 0.5, 1, 0, 3], np.float32)) for _ in range(3)]
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        for lv, pv, nv in batches:
            s.run([rel_up, sens_up], {lab: lv, pred: pv, norm: nv})
        got_rel, got_sens = s.run([rel, sens])
    lv, pv, nv = (np.concatenate(x) for x in zip(*batches))
    want = np.where(nv == 0, 0, np.abs(lv - pv) / np.where(nv == 0, 1, nv)).mean()
    np.testing.assert_allclose(got_rel, want, rtol=1e-5)
    th = np.array([-1e-7] + [(i + 1) / 49 for i in range(48)] + [1 + 1e-7], np.float32)
    pos, predpos = lv > 0.5, pv[None, :] > th[:, None]
    tp, fn = (pos & predpos).sum(1), (pos & ~predpos).sum(1)
    tn, fp = (~pos & ~predpos).sum(1), (~pos & predpos).sum(1)
    i = np.argmin(np.abs(tn / (tn + fp + 1e-7) - 0.5))
    np.testing.assert_allclose(got_sens, tp[i] / (tp[i] + fn[i] + 1e-7), rtol=1e-5)


def test_bad_arguments():
    with pytest.raises(ValueError, match="specificity"):
        tf.metrics.sensitivity_at_specificity(LABELS, PREDS, 1.5)
    with pytest.raises(ValueError, match="sensitivity"):
        tf.metrics.specificity_at_sensitivity(LABELS, PREDS, -0.1)
    with pytest.raises(ValueError):
        tf.metrics.mean_relative_error(tf.constant([1., 2]), tf.constant([1., 2]), tf.constant([1., 2, 3]))
