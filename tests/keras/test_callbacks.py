"""tf.keras callbacks through real `fit` runs on a tiny model (graph mode); messages as TF 1.15's."""

import csv
import logging
import os

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import dflow as tf
from dflow import keras
from dflow.keras import callbacks

K = keras.backend
RNG = np.random.RandomState(0)
X = RNG.randn(32, 4).astype(np.float32)
Y = (X @ RNG.randn(4, 2)).astype(np.float32)


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _mse(y, p):
    return tf.reduce_mean(tf.square(y - p), axis=-1)


class _LrSGD(tf.train.GradientDescentOptimizer):
    """A stand-in for Keras's SGD: a tf.train optimizer whose rate is the Keras variable `lr`."""

    def __init__(self, lr):
        self.lr = K.variable(lr, name="lr")
        super().__init__(self.lr)


def _model(optimizer=None):
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
    model.compile(optimizer=optimizer or tf.train.GradientDescentOptimizer(0.05), loss=_mse)
    return model


def _fit(model, cbs, epochs=5, **kwargs):
    return model.fit(X, Y, batch_size=8, epochs=epochs, verbose=0, callbacks=cbs, shuffle=False, **kwargs)


def test_model_checkpoint_formats_names(tmp_path, capsys):
    model = _model()
    path = str(tmp_path / "w.{epoch:02d}-{val_loss:.2f}.h5")
    _fit(model, [callbacks.ModelCheckpoint(path, verbose=1)], epochs=3, validation_data=(X, Y))
    names = sorted(os.listdir(tmp_path))
    assert [n[:5] for n in names] == ["w.01-", "w.02-", "w.03-"]
    assert "Epoch 00001: saving model to " in capsys.readouterr().out


def test_model_checkpoint_save_best_only_messages(tmp_path, capsys):
    model = _model(tf.train.GradientDescentOptimizer(5.0))  # diverges: only the first epoch is best
    path = str(tmp_path / "best.h5")
    _fit(model, [callbacks.ModelCheckpoint(path, monitor="loss", verbose=1, save_best_only=True,
                                           save_weights_only=True)], epochs=3)
    out = capsys.readouterr().out
    assert "Epoch 00001: loss improved from inf to " in out and f"saving model to {path}" in out
    assert "Epoch 00003: loss did not improve from " in out
    assert os.listdir(tmp_path) == ["best.h5"]


def test_early_stopping_stops_after_patience(capsys):
    model = _model(tf.train.GradientDescentOptimizer(5.0))  # the loss grows every epoch from the 2nd
    history = _fit(model, [callbacks.EarlyStopping(monitor="loss", patience=1, verbose=1)], epochs=10)
    losses = history.history["loss"]
    assert losses[1] > losses[0]
    assert len(losses) == 2  # epoch 1 best, epoch 2 worse: patience 1 is used up there
    assert "Epoch 00002: early stopping" in capsys.readouterr().out


def test_early_stopping_restores_best_weights_and_baseline():
    model = _model(tf.train.GradientDescentOptimizer(5.0))
    best = {}
    record = callbacks.LambdaCallback(on_epoch_end=lambda e, logs: best.setdefault(e, model.get_weights()))
    _fit(model, [record, callbacks.EarlyStopping(monitor="loss", patience=2, restore_best_weights=True)], epochs=10)
    for got, want in zip(model.get_weights(), best[0]):
        np.testing.assert_array_equal(got, want)
    history = _fit(_model(), [callbacks.EarlyStopping(monitor="loss", baseline=-1.0, patience=2)], epochs=10)
    assert len(history.history["loss"]) == 2  # never better than the baseline


def test_reduce_lr_on_plateau_changes_lr(capsys):
    model = _model(_LrSGD(5.0))
    cb = callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, verbose=1, min_lr=1.0)
    history = _fit(model, [cb], epochs=4)
    lr = float(K.get_value(model.optimizer.lr))
    assert lr < 5.0 and lr >= 1.0
    assert "ReduceLROnPlateau reducing learning rate to 2.5." in capsys.readouterr().out
    assert len(history.history["loss"]) == 4


def test_reduce_lr_needs_lr_attribute():
    with pytest.raises(ValueError, match='Optimizer must have a "lr" attribute'):
        _fit(_model(), [callbacks.ReduceLROnPlateau(monitor="loss")], epochs=1)
    with pytest.raises(ValueError, match="factor >= 1.0"):
        callbacks.ReduceLROnPlateau(factor=1.5)


def test_learning_rate_scheduler(capsys):
    model = _model(_LrSGD(0.1))
    seen = []
    cb = callbacks.LearningRateScheduler(lambda epoch, lr: seen.append(lr) or 0.1 / (epoch + 1), verbose=1)
    _fit(model, [cb], epochs=3)
    np.testing.assert_allclose(seen, [0.1, 0.1, 0.05], rtol=1e-6)
    np.testing.assert_allclose(K.get_value(model.optimizer.lr), 0.1 / 3, rtol=1e-6)
    assert "Epoch 00003: LearningRateScheduler reducing learning rate to 0.0333" in capsys.readouterr().out
    with pytest.raises(ValueError, match="should be float"):
        _fit(_model(_LrSGD(0.1)), [callbacks.LearningRateScheduler(lambda e: "x")], epochs=1)


def test_csv_logger(tmp_path):
    path = tmp_path / "log.csv"
    history = _fit(_model(), [callbacks.CSVLogger(str(path))], epochs=3, validation_data=(X, Y))
    rows = list(csv.DictReader(open(path)))
    assert list(rows[0]) == ["epoch", "loss", "val_loss"]
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2]
    np.testing.assert_allclose([float(r["loss"]) for r in rows], history.history["loss"], rtol=1e-6)
    _fit(_model(), [callbacks.CSVLogger(str(path), separator=";", append=True)], epochs=2, validation_data=(X, Y))
    lines = open(path).read().splitlines()
    assert len(lines) == 6 and lines[4].startswith("0;")  # appended, no second header


def test_tensorboard_scalars_histograms_and_graph(tmp_path):
    history = _fit(_model(), [callbacks.TensorBoard(str(tmp_path), histogram_freq=1)], epochs=3,
                   validation_data=(X, Y))
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    tags = acc.Tags()
    assert {"loss", "val_loss"} <= set(tags["scalars"])
    assert [e.step for e in acc.Scalars("loss")] == [0, 1, 2]
    np.testing.assert_allclose([e.value for e in acc.Scalars("loss")], history.history["loss"], rtol=1e-6)
    assert "dense/kernel_0" in tags["histograms"]
    assert tags["graph"]


def test_tensorboard_batch_updates(tmp_path):
    _fit(_model(), [callbacks.TensorBoard(str(tmp_path), update_freq="batch", write_graph=False)], epochs=2)
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert [e.step for e in acc.Scalars("batch_loss")] == list(range(8))
    assert "loss" in acc.Tags()["scalars"]


def test_terminate_on_nan(capsys):
    model = _model(tf.train.GradientDescentOptimizer(1e30))
    history = _fit(model, [callbacks.TerminateOnNaN()], epochs=5)
    assert "Invalid loss, terminating training" in capsys.readouterr().out
    assert len(history.history.get("loss", [])) <= 1


def test_lambda_callback_and_remote_monitor(caplog):
    caplog.set_level(logging.WARNING, logger="tensorflow")
    events = []
    cb = callbacks.LambdaCallback(on_train_begin=lambda logs: events.append("begin"),
                                  on_epoch_end=lambda epoch, logs: events.append(epoch),
                                  on_train_end=lambda logs: events.append("end"))
    _fit(_model(), [cb, callbacks.RemoteMonitor(root="http://127.0.0.1:9")], epochs=2)
    assert events == ["begin", 0, 1, "end"]
    assert "could not reach RemoteMonitor root server at http://127.0.0.1:9" in caplog.text
