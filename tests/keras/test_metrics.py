"""tf.keras.metrics: functions against numpy, stateful metrics across batches and reset, AUC
against numpy's version of TF's thresholded sum, config and lookup, eager mode."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from dflow.keras import backend as K
from dflow.keras import metrics

rng = np.random.RandomState(1)
PROBS = rng.rand(6, 4).astype(np.float32)
LABELS = rng.randint(0, 4, 6)
ONE_HOT = np.eye(4, dtype=np.float32)[LABELS]


def _run(x):
    return K.get_session().run(x)


@pytest.fixture(autouse=True)
def _graph(request):
    if "eager" in request.node.name:
        yield
        return
    with tf.Graph().as_default():
        yield


def test_metric_functions_match_numpy():
    binary_true = (rng.rand(6, 4) > 0.5).astype(np.float32)
    got = _run([metrics.accuracy(LABELS, PROBS.argmax(-1)),
                metrics.binary_accuracy(binary_true, PROBS),
                metrics.binary_accuracy(binary_true, PROBS, threshold=0.8),
                metrics.categorical_accuracy(ONE_HOT, PROBS),
                metrics.sparse_categorical_accuracy(LABELS[:, None].astype(np.float32), PROBS),
                metrics.top_k_categorical_accuracy(ONE_HOT, PROBS, k=2),
                metrics.sparse_top_k_categorical_accuracy(LABELS, PROBS, k=2)])
    top2 = np.argsort(-PROBS, -1)[:, :2]
    want = [PROBS.argmax(-1) == LABELS, ((PROBS > 0.5) == binary_true).mean(-1), ((PROBS > 0.8) == binary_true).mean(-1),
            PROBS.argmax(-1) == LABELS, PROBS.argmax(-1) == LABELS, (top2 == LABELS[:, None]).any(-1),
            (top2 == LABELS[:, None]).any(-1)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w, np.float32), rtol=1e-6)
    assert metrics.get("mse") is metrics.mean_squared_error and metrics.get("acc") is metrics.accuracy


def test_mean_sum_across_batches_weights_and_reset():
    mean, total = metrics.Mean(), metrics.Sum()
    assert [v.name for v in mean.variables] == ["mean/total:0", "mean/count:0"]
    assert mean.trainable_weights == [] and len(mean.non_trainable_weights) == 2
    _run([mean.update_state([1.0, 2.0, 3.0]), total.update_state([1.0, 2.0])])
    _run([mean.update_state([10.0, 20.0], sample_weight=[1.0, 0.0]), total.update_state(5.0)])
    assert _run(mean.result()) == pytest.approx((1 + 2 + 3 + 10) / 4)
    assert _run(total.result()) == pytest.approx(8.0)
    mean.reset_states()
    assert _run(mean.result()) == 0.0 and K.get_value(mean.count) == 0.0
    assert _run(mean([4.0, 6.0])) == pytest.approx(5.0)


def test_wrappers_accumulate_over_batches():
    acc, mse, rmse = metrics.CategoricalAccuracy(), metrics.MeanSquaredError(), metrics.RootMeanSquaredError()
    for rows in (slice(0, 4), slice(4, 6)):
        _run([acc.update_state(ONE_HOT[rows], PROBS[rows]), mse.update_state(ONE_HOT[rows], PROBS[rows]),
              rmse.update_state(ONE_HOT[rows], PROBS[rows])])
    assert _run(acc.result()) == pytest.approx((PROBS.argmax(-1) == LABELS).mean())
    assert _run(mse.result()) == pytest.approx(((PROBS - ONE_HOT) ** 2).mean(), rel=1e-5)
    assert _run(rmse.result()) == pytest.approx(np.sqrt(((PROBS - ONE_HOT) ** 2).mean()), rel=1e-5)
    sparse = metrics.SparseCategoricalCrossentropy()
    _run(sparse.update_state(LABELS, PROBS))
    p = np.clip(PROBS, 1e-7, 1 - 1e-7)
    want = -np.log(np.exp(np.log(p)) / np.exp(np.log(p)).sum(-1, keepdims=True))[np.arange(6), LABELS]
    assert _run(sparse.result()) == pytest.approx(want.mean(), rel=1e-5)


def test_confusion_counts_precision_recall():
    y_true = np.array([1, 0, 1, 1, 0, 0, 1], np.float32)
    y_pred = np.array([0.9, 0.6, 0.4, 0.7, 0.2, 0.5, 0.5], np.float32)
    counts = [metrics.TruePositives(), metrics.FalsePositives(), metrics.TrueNegatives(), metrics.FalseNegatives()]
    prec, rec = metrics.Precision(), metrics.Recall(thresholds=[0.3, 0.8])
    _run([m.update_state(y_true, y_pred) for m in counts + [prec, rec]])
    assert [float(_run(m.result())) for m in counts] == [2.0, 1.0, 2.0, 2.0]  # > 0.5 is positive
    assert _run(prec.result()) == pytest.approx(2 / 3)
    np.testing.assert_allclose(_run(rec.result()), [1.0, 1 / 4])
    weighted = metrics.TruePositives()
    _run(weighted.update_state(y_true, y_pred, sample_weight=[2, 1, 1, 3, 1, 1, 1]))
    assert _run(weighted.result()) == 5.0
    top1 = metrics.Precision(top_k=1)
    _run(top1.update_state([[0, 1, 0], [1, 0, 0]], [[0.1, 0.5, 0.3], [0.2, 0.3, 0.1]]))
    assert _run(top1.result()) == pytest.approx(0.5)


def _numpy_auc(y_true, y_pred, n=200, curve="ROC"):
    thresholds = np.array([-1e-7] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + 1e-7])
    pos = y_pred[None, :] > thresholds[:, None]
    lab = y_true[None, :] > 0
    tp, fp = (pos & lab).sum(1), (pos & ~lab).sum(1)
    fn, tn = (~pos & lab).sum(1), (~pos & ~lab).sum(1)
    recall = tp / np.maximum(tp + fn, 1e-12)
    if curve == "ROC":
        x, y = fp / np.maximum(fp + tn, 1e-12), recall
        return np.sum((x[:-1] - x[1:]) * (y[:-1] + y[1:]) / 2)
    dtp, p = tp[:-1] - tp[1:], tp + fp
    dp = p[:-1] - p[1:]
    slope = np.where(dp > 0, dtp / np.where(dp > 0, dp, 1), 0)
    intercept = tp[1:] - slope * p[1:]
    ratio = np.where((p[:-1] > 0) & (p[1:] > 0), p[:-1] / np.where(p[1:] > 0, p[1:], 1), 1)
    inc = slope * (dtp + intercept * np.log(ratio))
    den = tp[1:] + fn[1:]
    return np.sum(np.where(den > 0, inc / np.where(den > 0, den, 1), 0))


@pytest.mark.parametrize("curve", ["ROC", "PR"])
def test_auc_matches_numpy_and_accumulates(curve):
    y_true = (rng.rand(40) > 0.4).astype(np.float32)
    y_pred = np.clip(y_true * 0.3 + rng.rand(40) * 0.7, 0, 1).astype(np.float32)
    auc = metrics.AUC(curve=curve)
    _run(auc.update_state(y_true[:25], y_pred[:25]))
    _run(auc.update_state(y_true[25:], y_pred[25:]))
    assert _run(auc.result()) == pytest.approx(_numpy_auc(y_true, y_pred, curve=curve), rel=1e-4)
    if curve == "ROC":  # with 200 thresholds close to the exact pairwise AUC
        exact = (y_pred[y_true == 1][:, None] > y_pred[y_true == 0][None, :]).mean()
        assert _run(auc.result()) == pytest.approx(exact, abs=0.02)
    auc.reset_states()
    assert _run(auc.result()) == 0.0


def test_mean_iou():
    iou = metrics.MeanIoU(num_classes=3)
    _run(iou.update_state([0, 1, 2, 2], [0, 1, 1, 2]))
    assert _run(iou.result()) == pytest.approx((1 + 0.5 + 0.5) / 3)


def test_config_round_trip_and_errors():
    acc = metrics.BinaryAccuracy(threshold=0.7, name="bacc")
    assert acc.get_config() == {"threshold": 0.7, "name": "bacc", "dtype": "float32"}
    again = metrics.deserialize(metrics.serialize(acc))
    assert isinstance(again, metrics.BinaryAccuracy) and again.get_config() == acc.get_config()
    assert metrics.AUC(num_thresholds=50, curve="pr").get_config()["curve"] == "PR"
    with pytest.raises(ValueError, match="Invalid AUC curve value"):
        metrics.AUC(curve="XY")
    with pytest.raises(ValueError, match="Threshold values must be in"):
        metrics.Precision(thresholds=[1.5])
    with pytest.raises(ValueError, match="Unknown metric function: nope"):
        metrics.get("nope")
    with pytest.raises(TypeError, match="unexpected keyword argument 'k'"):
        metrics.Accuracy(k=3)


def test_eager_update_result_reset():
    with tfe.eager_mode():
        acc = metrics.SparseCategoricalAccuracy()
        acc.update_state(LABELS[:3], PROBS[:3])
        value = acc(LABELS[3:], PROBS[3:]).numpy()
        assert value == pytest.approx((PROBS.argmax(-1) == LABELS).mean())
        acc.reset_states()
        assert acc.result().numpy() == 0.0
