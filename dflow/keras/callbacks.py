"""`tf.keras.callbacks`: hooks the training loop calls at each stage (TF 1.15's names).

The loop calls `on_train_begin/end`, `on_epoch_begin/end(epoch, logs)`,
`on_(train|test|predict)_batch_begin/end(batch, logs)` (and the old `on_batch_begin/end`), and
`on_test_begin/end`/`on_predict_begin/end`; `model.stop_training = True` from a callback ends
`fit` after the epoch. `History` is always added (it is what `fit` returns); `ProgbarLogger`
prints the progress when `verbose` is on.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import urllib.parse
import urllib.request

import numpy as np
from tensorboard.compat.proto import summary_pb2

from ..eager.context import executing_eagerly
from ..summary.histogram import histogram as histogram_summary
from ..summary.writer import FileWriter
from . import backend as K
from .utils.progbar import Progbar

__all__ = ["Callback", "CallbackList", "History", "BaseLogger", "ProgbarLogger", "configure_callbacks",
           "ModelCheckpoint", "EarlyStopping", "TensorBoard", "ReduceLROnPlateau", "LearningRateScheduler",
           "CSVLogger", "LambdaCallback", "TerminateOnNaN", "RemoteMonitor"]


class Callback:
    """Base class: every hook does nothing; `self.model` and `self.params` are set by the loop."""

    def __init__(self):
        self.validation_data = None
        self.model = None
        self.params = {}

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self.model = model

    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass

    def on_predict_batch_begin(self, batch, logs=None):
        pass

    def on_predict_batch_end(self, batch, logs=None):
        pass

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_test_begin(self, logs=None):
        pass

    def on_test_end(self, logs=None):
        pass

    def on_predict_begin(self, logs=None):
        pass

    def on_predict_end(self, logs=None):
        pass


class CallbackList:
    """Calls each hook on every callback in order."""

    def __init__(self, callbacks=None, model=None, params=None):
        self.callbacks = list(callbacks or [])
        if model is not None:
            self.set_model(model)
        if params is not None:
            self.set_params(params)

    def append(self, callback):
        self.callbacks.append(callback)

    def set_params(self, params):
        for c in self.callbacks:
            c.set_params(params)

    def set_model(self, model):
        for c in self.callbacks:
            c.set_model(model)

    def __iter__(self):
        return iter(self.callbacks)

    def __getattr__(self, hook):
        if not hook.startswith("on_"):
            raise AttributeError(hook)

        def call(*args, **kwargs):
            for c in self.callbacks:
                getattr(c, hook)(*args, **kwargs)
        return call


class BaseLogger(Callback):
    """Kept for TF1 programs that name it; the loop averages the metrics itself."""

    def __init__(self, stateful_metrics=None):
        super().__init__()
        self.stateful_metrics = set(stateful_metrics or [])


class History(Callback):
    """Records each epoch's logs: `history.history["loss"]` is a list, one value per epoch."""

    def on_train_begin(self, logs=None):
        self.epoch = []
        self.history = {}

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


class ProgbarLogger(Callback):
    """Keras's progress output: `Epoch 3/10` then a `utils.Progbar` over the epoch's samples
    (count_mode 'samples', arrays) or steps ('steps': datasets, generators); verbose=2 prints only
    each epoch's final line. The bar shows running averages; the final line the epoch's logs."""

    def __init__(self, count_mode="samples", stateful_metrics=None):
        super().__init__()
        if count_mode not in ("samples", "steps"):
            raise ValueError(f"Unknown `count_mode`: {count_mode}")
        self.count_mode = count_mode
        self.stateful_metrics = set(stateful_metrics or [])

    def on_train_begin(self, logs=None):
        self.verbose = self.params.get("verbose", 1)
        self.epochs = self.params.get("epochs", 1)

    def on_epoch_begin(self, epoch, logs=None):
        if not self.verbose:
            return
        print(f"Epoch {epoch + 1}/{self.epochs}")
        self.target = self.params.get("samples") if self.count_mode == "samples" else self.params.get("steps")
        self.progbar = Progbar(self.target, verbose=self.verbose, stateful_metrics=self.stateful_metrics,
                               unit_name="sample" if self.count_mode == "samples" else "step")
        self.seen = 0

    def on_train_batch_end(self, batch, logs=None):
        if not self.verbose:
            return
        logs = logs or {}
        self.seen += logs.get("size", 1) if self.count_mode == "samples" else 1
        if self.target is None or self.seen < self.target:
            self.progbar.update(self.seen, [(k, v) for k, v in logs.items() if k not in ("batch", "size")])

    def on_epoch_end(self, epoch, logs=None):
        if not self.verbose:
            return
        if self.target is None:  # a stream's length is known at its end
            self.progbar.target = self.seen
        self.progbar.update(self.seen, [(k, float(v)) for k, v in (logs or {}).items()])


def configure_callbacks(callbacks, model, do_validation=False, epochs=1, steps=None, samples=None, verbose=1,
                        count_mode="samples", metrics=()):
    """The CallbackList `fit` runs: History first, the user's, then the progress bar."""
    history = History()
    items = [history] + list(callbacks or [])
    if verbose:
        items.append(ProgbarLogger(count_mode))
    out = CallbackList(items)
    out.set_model(model)
    out.set_params({"epochs": epochs, "steps": steps, "samples": samples, "verbose": verbose,
                    "do_validation": do_validation, "metrics": list(metrics)})
    model.history = history
    return out


# ---- the callbacks users pass to `fit` (TF 1.15's arguments, defaults and messages) ---------------------
_log = logging.getLogger("tensorflow")  # TF1 Keras logs through tf.logging


def _monitor_op(mode, monitor, who):
    """np.less or np.greater for `mode` ('auto' picks greater for accuracies)."""
    if mode not in ("auto", "min", "max"):
        _log.warning(f"{who} mode {mode} is unknown, fallback to auto mode.")
        mode = "auto"
    if mode == "min":
        return np.less
    if mode == "max":
        return np.greater
    return np.greater if "acc" in monitor or monitor.startswith("fmeasure") else np.less


def _lr_variable(model, who):
    optimizer = getattr(model, "optimizer", None)
    if not hasattr(optimizer, "lr"):
        raise ValueError(f'Optimizer must have a "lr" attribute. ({who} reads and sets the learning rate through '
                         f"`model.optimizer.lr`; {type(optimizer).__name__} has none: compile with a Keras "
                         "optimizer such as tf.keras.optimizers.SGD instead of a tf.train optimizer)")
    return optimizer.lr


class ModelCheckpoint(Callback):
    """Saves the model (or its weights) after each epoch, or every `save_freq` samples.

    `filepath` may hold `{epoch:02d}` and any log (`{val_loss:.2f}`); `save_best_only` keeps only
    the best by `monitor` (mode auto/min/max); `.h5` paths save HDF5, others a TF checkpoint."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", load_weights_on_restart=False, **kwargs):
        super().__init__()
        self.monitor, self.verbose, self.filepath = monitor, verbose, os.fspath(filepath)
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        self.load_weights_on_restart = load_weights_on_restart
        self.period = kwargs.pop("period", 1)
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"Unrecognized save_freq: {save_freq}")
        self.save_freq = save_freq
        self.monitor_op = _monitor_op(mode, monitor, "ModelCheckpoint")
        self.best = np.inf if self.monitor_op is np.less else -np.inf
        self.epochs_since_last_save = 0
        self._samples_seen_since_last_saving = 0
        self._current_epoch = 0

    def on_train_begin(self, logs=None):
        if self.load_weights_on_restart:
            folder = os.path.dirname(self.filepath) or "."
            candidates = [os.path.join(folder, f) for f in os.listdir(folder)] if os.path.isdir(folder) else []
            candidates = [c for c in candidates if c.endswith((".h5", ".keras", ".hdf5"))]
            if candidates:
                self.model.load_weights(max(candidates, key=os.path.getmtime))

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_batch_end(self, batch, logs=None):
        if isinstance(self.save_freq, int):
            self._samples_seen_since_last_saving += (logs or {}).get("size", 1)
            if self._samples_seen_since_last_saving >= self.save_freq:
                self._save(self._current_epoch, logs or {})
                self._samples_seen_since_last_saving = 0

    def on_epoch_end(self, epoch, logs=None):
        self.epochs_since_last_save += 1
        if self.save_freq == "epoch" and self.epochs_since_last_save >= self.period:
            self.epochs_since_last_save = 0
            self._save(epoch, logs or {})

    def _save(self, epoch, logs):
        try:
            filepath = self.filepath.format(epoch=epoch + 1, **logs)
        except KeyError as e:
            raise KeyError(f"Failed to format this callback filepath: \"{self.filepath}\". Reason: {e}") from e
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                _log.warning(f"Can save best model only with {self.monitor} available, skipping.")
                return
            if not self.monitor_op(current, self.best):
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1:05d}: {self.monitor} did not improve from {self.best:0.5f}")
                return
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1:05d}: {self.monitor} improved from {self.best:0.5f} to {current:0.5f}, "
                      f"saving model to {filepath}")
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1:05d}: saving model to {filepath}")
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)


class EarlyStopping(Callback):
    """Stops training when `monitor` has stopped improving by `min_delta` for `patience` epochs."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False):
        super().__init__()
        self.monitor, self.patience, self.verbose, self.baseline = monitor, patience, verbose, baseline
        self.min_delta = abs(min_delta)
        self.restore_best_weights = restore_best_weights
        self.monitor_op = _monitor_op(mode, monitor, "EarlyStopping")
        self.min_delta *= 1 if self.monitor_op is np.greater else -1
        self.wait = self.stopped_epoch = 0
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait = self.stopped_epoch = 0
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None:
            _log.warning(f"Early stopping conditioned on metric `{self.monitor}` which is not available. Available "
                         f"metrics are: {','.join(logs or {})}")
            return
        if self.monitor_op(current - self.min_delta, self.best):
            self.best = current
            self.wait = 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose > 0:
                    print("Restoring model weights from the end of the best epoch.")
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1:05d}: early stopping")


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` when `monitor` has not improved for `patience` epochs."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0, **kwargs):
        super().__init__()
        if "epsilon" in kwargs:
            min_delta = kwargs.pop("epsilon")
            _log.warning("`epsilon` argument is deprecated and will be removed, use `min_delta` instead.")
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0.")
        self.monitor, self.factor, self.min_lr, self.min_delta = monitor, factor, min_lr, min_delta
        self.patience, self.verbose, self.cooldown, self.mode = patience, verbose, cooldown, mode
        self._reset()

    def _reset(self):
        op = _monitor_op(self.mode, self.monitor, "Learning Rate Plateau Reducing")
        if op is np.less:
            self.monitor_op = lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        lr = _lr_variable(self.model, "ReduceLROnPlateau")
        logs["lr"] = float(K.get_value(lr))
        current = logs.get(self.monitor)
        if current is None:
            _log.warning(f"Reduce LR on plateau conditioned on metric `{self.monitor}` which is not available. "
                         f"Available metrics are: {','.join(logs)}")
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = float(K.get_value(lr))
                if old_lr > self.min_lr:
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    K.set_value(lr, new_lr)
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1:05d}: ReduceLROnPlateau reducing learning rate to {new_lr}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class LearningRateScheduler(Callback):
    """Sets the learning rate at each epoch's start to `schedule(epoch)` or `schedule(epoch, lr)`."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        lr_var = _lr_variable(self.model, "LearningRateScheduler")
        try:
            lr = self.schedule(epoch, float(K.get_value(lr_var)))
        except TypeError:  # the old one-argument schedule
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, int, np.floating, np.integer)) or isinstance(lr, bool):
            raise ValueError('The output of the "schedule" function should be float.')
        K.set_value(lr_var, float(lr))
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1:05d}: LearningRateScheduler reducing learning rate to {lr}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["lr"] = float(K.get_value(_lr_variable(self.model, "LearningRateScheduler")))


class TensorBoard(Callback):
    """Writes event files TensorBoard reads: the epoch's logs as scalars (`loss`, `val_loss`, `acc`...
    at step = epoch), with update_freq 'batch' or N samples also `batch_loss`... at step = batches
    seen; weight histograms every `histogram_freq` epochs; the graph when `write_graph`."""

    def __init__(self, log_dir="./logs", histogram_freq=0, batch_size=32, write_graph=True, write_grads=False,
                 write_images=False, embeddings_freq=0, embeddings_layer_names=None, embeddings_metadata=None,
                 embeddings_data=None, update_freq="epoch", profile_batch=2):
        super().__init__()
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq, self.write_graph, self.batch_size = histogram_freq, write_graph, batch_size
        if update_freq not in ("epoch", "batch") and not isinstance(update_freq, int):
            raise ValueError(f"update_freq must be 'epoch', 'batch' or an integer, got {update_freq!r}")
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self.writer = None
        self._samples_seen = self._samples_seen_at_last_write = self._total_batches_seen = 0
        self._histograms = None

    def set_model(self, model):
        self.model = model
        if self.writer is None:
            graph = None if executing_eagerly() or not self.write_graph else K.get_session().graph
            self.writer = FileWriter(self.log_dir, graph=graph)

    def _write_scalars(self, step, logs):
        summary = summary_pb2.Summary()
        for name, value in logs.items():
            if name in ("batch", "size", "num_steps"):
                continue
            summary.value.add(tag=name, simple_value=float(np.asarray(value)))
        self.writer.add_summary(summary, step)
        self.writer.flush()

    def on_batch_end(self, batch, logs=None):
        logs = logs or {}
        if self.update_freq == "epoch":
            return
        self._samples_seen += logs.get("size", 1)
        if self._samples_seen - self._samples_seen_at_last_write >= self.update_freq:
            self._write_scalars(self._total_batches_seen, {"batch_" + k: v for k, v in logs.items()
                                                           if k not in ("batch", "size", "num_steps")})
            self._samples_seen_at_last_write = self._samples_seen
        self._total_batches_seen += 1

    def on_epoch_end(self, epoch, logs=None):
        step = epoch if self.update_freq == "epoch" else self._samples_seen
        self._write_scalars(step, logs or {})
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            for value in self._histogram_values():
                self.writer.add_summary(value, epoch)
            self.writer.flush()

    def _histogram_values(self):
        weights = [w for layer in self.model.layers for w in layer.weights]
        names = [w.name.replace(":", "_") for w in weights]
        if executing_eagerly():
            return [bytes(histogram_summary(n, w).numpy()) for n, w in zip(names, weights)]
        if self._histograms is None:
            with K.get_session().graph.as_default():
                self._histograms = [histogram_summary(n, w, collections=[]) for n, w in zip(names, weights)]
        return K.get_session().run(self._histograms)

    def on_train_end(self, logs=None):
        self.writer.flush()

    def __del__(self):
        writer = getattr(self, "writer", None)
        if writer is not None:
            writer.close()


class CSVLogger(Callback):
    """Streams each epoch's logs to a CSV file (`epoch` then the sorted log keys)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self.writer = self.keys = self.csv_file = None
        self.append_header = True

    def on_train_begin(self, logs=None):
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        else:
            mode = "w"
        self.csv_file = open(self.filename, mode, newline="")  # noqa: SIM115 - open for the whole training
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})

        def handle_value(k):
            is_zero_dim = isinstance(k, np.ndarray) and k.ndim == 0
            if isinstance(k, str):
                return k
            if hasattr(k, "__iter__") and not is_zero_dim:
                return f"\"[{', '.join(map(str, k))}]\""
            return k

        if self.keys is None:
            self.keys = sorted(logs.keys())
        if self.model.stop_training:
            logs = {k: logs.get(k, "NA") for k in self.keys}
        if self.writer is None:
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys, delimiter=self.sep,
                                         lineterminator="\n")
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((key, handle_value(logs[key])) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None:
            self.csv_file.close()
        self.writer = None


class LambdaCallback(Callback):
    """A callback of plain functions: on_epoch_begin/end(epoch, logs), on_batch_begin/end(batch,
    logs), on_train_begin/end(logs)."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None, on_batch_end=None,
                 on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        self.__dict__.update(kwargs)
        # Keras passes `logs` positionally (a dict, {} when empty): the user's functions take it
        for name, fn in (("on_epoch_begin", on_epoch_begin), ("on_epoch_end", on_epoch_end),
                         ("on_batch_begin", on_batch_begin), ("on_batch_end", on_batch_end)):
            setattr(self, name, _indexed_hook(fn))
        self.on_train_begin = _logs_hook(on_train_begin)
        self.on_train_end = _logs_hook(on_train_end)


def _indexed_hook(fn):
    return (lambda index, logs=None: None) if fn is None else \
        (lambda index, logs=None: fn(index, logs if logs is not None else {}))


def _logs_hook(fn):
    return (lambda logs=None: None) if fn is None else (lambda logs=None: fn(logs if logs is not None else {}))


class TerminateOnNaN(Callback):
    """Stops training at the first batch whose loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and (np.isnan(loss) or np.isinf(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True
            self.model._stop_now = True  # the loop ends the epoch here, not after it


class RemoteMonitor(Callback):
    """POSTs each epoch's logs to `root + path` (a warning when the server cannot be reached)."""

    def __init__(self, root="http://localhost:9000", path="/publish/epoch/end/", field="data", headers=None,
                 send_as_json=False):
        super().__init__()
        self.root, self.path, self.field = root, path, field
        self.headers, self.send_as_json = headers, send_as_json

    def on_epoch_end(self, epoch, logs=None):
        send = {"epoch": epoch}
        for k, v in (logs or {}).items():
            send[k] = float(np.asarray(v))
        if self.send_as_json:
            body = json.dumps(send).encode("utf8")
            headers = dict(self.headers or {}, **{"Content-Type": "application/json"})
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode("utf8")
            headers = dict(self.headers or {})
        request = urllib.request.Request(self.root + self.path, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10):
                pass
        except (OSError, ValueError):
            _log.warning(f"Warning: could not reach RemoteMonitor root server at {self.root}")
