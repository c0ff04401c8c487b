"""tf.keras.losses against numpy on random inputs (Keras's clipping and per-sample means)."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import losses

EPS = 1e-7
rng = np.random.RandomState(0)
Y_TRUE = rng.rand(5, 4).astype(np.float32)
Y_PRED = rng.rand(5, 4).astype(np.float32) + 0.05
ONE_HOT = np.eye(4, dtype=np.float32)[rng.randint(0, 4, 5)]
BINARY = (rng.rand(5, 4) > 0.5).astype(np.float32)


def _softplus(x):
    return np.log1p(np.exp(x))


def _cce(t, p):
    p = np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS)
    return -(t * np.log(p)).sum(-1)


def _bce(t, p):
    p = np.clip(p, EPS, 1 - EPS)
    return -(t * np.log(p + EPS) + (1 - t) * np.log(1 - p + EPS)).mean(-1)


def _unit(x):
    return x / np.sqrt(np.maximum((x * x).sum(-1, keepdims=True), 1e-12))


CASES = [
    ("mse", Y_TRUE, lambda t, p: ((p - t) ** 2).mean(-1)),
    ("mae", Y_TRUE, lambda t, p: np.abs(p - t).mean(-1)),
    ("mape", Y_TRUE, lambda t, p: 100 * (np.abs(t - p) / np.maximum(np.abs(t), EPS)).mean(-1)),
    ("msle", Y_TRUE, lambda t, p: ((np.log(np.maximum(p, EPS) + 1) - np.log(np.maximum(t, EPS) + 1)) ** 2).mean(-1)),
    ("hinge", BINARY, lambda t, p: np.maximum(1 - (2 * t - 1) * p, 0).mean(-1)),
    ("squared_hinge", BINARY, lambda t, p: (np.maximum(1 - (2 * t - 1) * p, 0) ** 2).mean(-1)),
    ("categorical_hinge", ONE_HOT,
     lambda t, p: np.maximum(0, ((1 - t) * p).max(-1) - (t * p).sum(-1) + 1)),
    ("logcosh", Y_TRUE, lambda t, p: np.log(np.cosh(p - t)).mean(-1)),
    ("huber_loss", Y_TRUE * 3, lambda t, p: np.where(np.abs(p - t) <= 1, 0.5 * (p - t) ** 2,
                                                     np.abs(p - t) - 0.5).mean(-1)),
    ("categorical_crossentropy", ONE_HOT, _cce),
    ("binary_crossentropy", BINARY, _bce),
    ("kld", _unit(Y_TRUE) ** 2, lambda t, p: (np.clip(t, EPS, 1) * np.log(np.clip(t, EPS, 1) / np.clip(p, EPS, 1)))
     .sum(-1)),
    ("poisson", Y_TRUE, lambda t, p: (p - t * np.log(p + EPS)).mean(-1)),
    ("cosine_proximity", Y_TRUE, lambda t, p: -(_unit(t) * _unit(p)).sum(-1)),
]


@pytest.mark.parametrize("name,y_true,reference", CASES, ids=[c[0] for c in CASES])
def test_loss_functions_match_numpy(name, y_true, reference):
    with tf.Session() as sess:
        got = sess.run(losses.get(name)(y_true, Y_PRED))
    np.testing.assert_allclose(got, reference(y_true, Y_PRED), rtol=2e-5, atol=1e-6)


def test_sparse_categorical_crossentropy_and_logits():
    labels = rng.randint(0, 4, 5)
    logits = rng.randn(5, 4).astype(np.float32)
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    want = -np.log(probs[np.arange(5), labels])
    with tf.Session() as sess:
        got_p, got_l, got_cl, got_bl = sess.run([
            losses.sparse_categorical_crossentropy(labels[:, None], probs),
            losses.sparse_categorical_crossentropy(labels, logits, from_logits=True),
            losses.categorical_crossentropy(np.eye(4)[labels], logits, from_logits=True),
            losses.binary_crossentropy(BINARY, logits[:, :4], from_logits=True)])
    np.testing.assert_allclose(got_p, want, rtol=1e-5)
    np.testing.assert_allclose(got_l, want, rtol=1e-5)
    np.testing.assert_allclose(got_cl, want, rtol=1e-5)
    bce = (np.maximum(logits, 0) - logits * BINARY + np.log1p(np.exp(-np.abs(logits)))).mean(-1)
    np.testing.assert_allclose(got_bl, bce, rtol=1e-5)


def test_label_smoothing():
    with tf.Session() as sess:
        cce, bce = sess.run([losses.categorical_crossentropy(ONE_HOT, Y_PRED, label_smoothing=0.2),
                             losses.binary_crossentropy(BINARY, np.clip(Y_PRED, 0, 1), label_smoothing=0.2)])
    np.testing.assert_allclose(cce, _cce(ONE_HOT * 0.8 + 0.05, Y_PRED), rtol=1e-5)
    np.testing.assert_allclose(bce, _bce(BINARY * 0.8 + 0.1, np.clip(Y_PRED, 0, 1)), rtol=1e-5)


def test_loss_classes_reduce_with_sample_weight():
    weights = np.array([1.0, 0.0, 2.0, 0.5, 1.0], np.float32)
    per_sample = ((Y_PRED - Y_TRUE) ** 2).mean(-1)
    with tf.Session() as sess:
        auto, total, none, column = sess.run([
            losses.MeanSquaredError()(Y_TRUE, Y_PRED, sample_weight=weights),
            losses.MeanSquaredError(reduction="sum")(Y_TRUE, Y_PRED, sample_weight=weights),
            losses.MeanSquaredError(reduction=losses.Reduction.NONE)(Y_TRUE, Y_PRED),
            losses.MeanSquaredError()(Y_TRUE, Y_PRED, sample_weight=weights[:, None])])
    np.testing.assert_allclose(auto, (per_sample * weights).sum() / 5, rtol=1e-5)
    np.testing.assert_allclose(column, (per_sample * weights).sum() / 5, rtol=1e-5)
    np.testing.assert_allclose(total, (per_sample * weights).sum(), rtol=1e-5)
    np.testing.assert_allclose(none, per_sample, rtol=1e-5)


def test_config_round_trip_and_lookup():
    loss = losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1, name="cce")
    config = loss.get_config()
    assert config == {"from_logits": True, "label_smoothing": 0.1, "reduction": "auto", "name": "cce"}
    again = losses.deserialize(losses.serialize(loss))
    assert isinstance(again, losses.CategoricalCrossentropy) and again.get_config() == config
    assert losses.get("mse") is losses.mean_squared_error is losses.MSE
    assert losses.get("cosine_similarity") is losses.cosine_proximity
    assert losses.get(losses.hinge) is losses.hinge
    assert losses.MeanAbsoluteError().name == "mean_absolute_error"


def test_bad_identifiers_and_reductions():
    with pytest.raises(ValueError, match="Unknown loss function: nope"):
        losses.get("nope")
    with pytest.raises(ValueError, match="Could not interpret loss function identifier"):
        losses.get(3)
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        losses.MeanSquaredError(reduction="mean")
    with pytest.raises(TypeError, match="unexpected keyword argument 'from_logits'"):
        losses.MeanSquaredError(from_logits=True)
