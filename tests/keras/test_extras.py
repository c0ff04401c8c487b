"""The smaller TF 1.15 tf.keras names: metrics (aliases, MeanRelativeError, MeanTensor,
Sensitivity/Specificity at a rate), RadialConstraint, model_from_yaml."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import backend as K
from dflow.keras import constraints, layers, losses, metrics, models


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def _run(x):
    return K.get_session().run(x)


def test_metric_aliases():
    assert metrics.MSE is losses.mean_squared_error and metrics.KLD is losses.kullback_leibler_divergence
    assert metrics.MAE is losses.mae and metrics.MAPE is losses.mape and metrics.MSLE is losses.msle
    assert metrics.get("MSE") is losses.mean_squared_error


def test_mean_relative_error():
    m = metrics.MeanRelativeError(normalizer=[1.0, 2.0, 4.0])
    _run(m.update_state([[1.0, 2.0, 4.0]], [[2.0, 4.0, 8.0]]))
    _run(m.update_state([[1.0, 2.0, 4.0]], [[1.0, 2.0, 4.0]], sample_weight=[3.0]))
    # (1/1 + 2/2 + 4/4) / 3 = 1 on weight 1, then 0 on weight 3
    assert _run(m.result()) == pytest.approx(0.25)
    assert m.get_config()["normalizer"] == [1.0, 2.0, 4.0]


def test_mean_tensor():
    m = metrics.MeanTensor()
    with pytest.raises(ValueError, match="does not have any result yet"):
        m.result()
    _run(m.update_state([1.0, 2.0]))
    _run(m.update_state([3.0, 6.0], sample_weight=[1.0, 3.0]))
    np.testing.assert_allclose(_run(m.result()), [2.0, 5.0])
    assert [v.name for v in m.variables] == ["mean_tensor/total:0", "mean_tensor/count:0"]
    with pytest.raises(ValueError, match="same shape"):
        m.update_state([1.0, 2.0, 3.0])
    m.reset_states()
    np.testing.assert_allclose(_run(m.result()), [0.0, 0.0])


def _rate_reference(y_true, y_pred, value, num_thresholds, sensitivity_at):
    """TF 1.15's definition in numpy: counts at the evenly spread thresholds, the rate closest to value."""
    eps = 1e-7
    th = np.array([-eps] + [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)] + [1 + eps])
    pos = y_pred[None, :] > th[:, None]
    lab = y_true[None, :].astype(bool)
    tp, fp = (pos & lab).sum(1), (pos & ~lab).sum(1)
    tn, fn = (~pos & ~lab).sum(1), (~pos & lab).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if sensitivity_at:
            rates = np.nan_to_num(tn / (tn + fp))
            i = np.argmin(np.abs(rates - value))
            return tp[i] / (tp[i] + fn[i])
        rates = np.nan_to_num(tp / (tp + fn))
        i = np.argmin(np.abs(rates - value))
        return tn[i] / (tn[i] + fp[i])


def test_sensitivity_specificity():
    rng = np.random.RandomState(3)
    y_true = rng.randint(0, 2, 50)
    y_pred = np.clip(y_true * 0.3 + rng.rand(50) * 0.7, 0, 1).astype(np.float32)
    for value in (0.5, 0.8):
        sens = metrics.SensitivityAtSpecificity(value, num_thresholds=20)
        spec = metrics.SpecificityAtSensitivity(value, num_thresholds=20)
        _run([sens.update_state(y_true, y_pred), spec.update_state(y_true, y_pred)])
        got = _run([sens.result(), spec.result()])
        assert got[0] == pytest.approx(_rate_reference(y_true, y_pred, value, 20, True), rel=1e-5)
        assert got[1] == pytest.approx(_rate_reference(y_true, y_pred, value, 20, False), rel=1e-5)
    assert sens.get_config()["specificity"] == 0.8 and spec.get_config()["num_thresholds"] == 20
    with pytest.raises(ValueError, match="range"):
        metrics.SensitivityAtSpecificity(1.5)
    with pytest.raises(ValueError, match="num_thresholds"):
        metrics.SpecificityAtSensitivity(0.5, num_thresholds=0)


# TF's outputs for kernels w[i, j, 0, 0] = 2 * (i * n + j), from tf_keras's RadialConstraint run
# eagerly under TF 2.21 (graph mode fails in TF's version: it makes a variable inside map_fn)
RADIAL_TF = {
    3: [[8, 8, 8], [8, 0, 8], [8, 8, 8]],
    4: [[30, 30, 30, 30], [30, 10, 10, 30], [30, 10, 10, 30], [30, 30, 30, 30]],
    5: [[36] * 5, [36, 24, 24, 24, 36], [36, 24, 12, 24, 36], [36, 24, 24, 24, 36], [36] * 5],
    6: [[70] * 6, [70, 56, 56, 56, 56, 70], [70, 56, 28, 28, 56, 70], [70, 56, 28, 28, 56, 70],
        [70, 56, 56, 56, 56, 70], [70] * 6],
}


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_radial_constraint(n):
    w = np.arange(n * n * 2, dtype=np.float32).reshape(n, n, 1, 2)
    out = _run(constraints.get("radial_constraint")(tf.constant(w)))
    np.testing.assert_array_equal(out[..., 0, 0], RADIAL_TF[n])
    np.testing.assert_array_equal(out[..., 0, 1], np.array(RADIAL_TF[n]) + 1)
    with pytest.raises(ValueError, match="rank 4"):
        constraints.RadialConstraint()(tf.zeros([3, 3]))
    assert isinstance(constraints.deserialize({"class_name": "RadialConstraint", "config": {}}),
                      constraints.RadialConstraint)


def test_model_yaml_round_trip():
    pytest.importorskip("yaml")
    inp = layers.Input((3,), name="x")
    model = models.Model(inp, layers.Dense(2, name="out")(layers.Dense(4, activation="relu")(inp)))
    text = models.model_to_yaml(model)
    assert "class_name: Model" in text and "keras_version" in text
    clone = models.model_from_yaml(text)
    assert [layer.name for layer in clone.layers] == [layer.name for layer in model.layers]
    assert clone.get_config() == model.get_config()
    seq = models.Sequential([layers.Dense(2, input_shape=(3,))])
    assert models.model_from_yaml(models.model_to_yaml(seq)).output_shape == (None, 2)


def test_yaml_missing(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_yaml(name, *args, **kwargs):
        if name == "yaml":
            raise ImportError("no yaml")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_yaml)
    with pytest.raises(ImportError, match="pip install pyyaml"):
        models.model_from_yaml("class_name: Model")
