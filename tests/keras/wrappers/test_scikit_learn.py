"""KerasClassifier / KerasRegressor: the scikit-learn API over a small model (no sklearn needed)."""

import numpy as np
import pytest

import dflow as tf
from dflow.keras import layers, models
from dflow.keras.wrappers.scikit_learn import KerasClassifier, KerasRegressor

rng = np.random.RandomState(0)
X = rng.rand(40, 3).astype(np.float32)
Y_CLASS = np.where(X[:, 0] > 0.5, 7, 3)  # labels that are not 0..n-1
Y_REG = X @ np.array([1.0, -2.0, 0.5], np.float32)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def build_classifier(hidden=4):
    model = models.Sequential([layers.Dense(hidden, activation="relu", input_shape=(3,)),
                               layers.Dense(2, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def test_classifier():
    clf = KerasClassifier(build_classifier, hidden=5, epochs=2, batch_size=8, verbose=0)
    assert clf.get_params()["hidden"] == 5 and clf.get_params()["build_fn"] is build_classifier
    clf.set_params(epochs=1)
    history = clf.fit(X, Y_CLASS)
    assert len(history.history["loss"]) == 1
    assert set(clf.predict(X)) <= {3, 7} and clf.n_classes_ == 2
    proba = clf.predict_proba(X)
    assert proba.shape == (40, 2)
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[proba.argmax(1)])
    assert 0.0 <= clf.score(X, Y_CLASS) <= 1.0
    with pytest.raises(ValueError, match="not a legal parameter"):
        KerasClassifier(build_classifier, bogus=1)


def test_regressor_with_subclass_call():
    class Reg(KerasRegressor):
        def __call__(self, units=1):
            model = models.Sequential([layers.Dense(units, input_shape=(3,))])
            model.compile("sgd", "mse")
            return model

    reg = Reg(epochs=1, batch_size=10, verbose=0)
    reg.fit(X, Y_REG)
    pred = reg.predict(X)
    assert pred.shape == (40,)
    want = -np.mean((pred - Y_REG) ** 2)
    assert reg.score(X, Y_REG) == pytest.approx(want, rel=1e-4)
