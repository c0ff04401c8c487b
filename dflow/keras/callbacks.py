"""`tf.keras.callbacks`: hooks the training loop calls at each stage (TF 1.15's names).

The loop calls `on_train_begin/end`, `on_epoch_begin/end(epoch, logs)`,
`on_(train|test|predict)_batch_begin/end(batch, logs)` (and the old `on_batch_begin/end`), and
`on_test_begin/end`/`on_predict_begin/end`; `model.stop_training = True` from a callback ends
`fit` after the epoch. `History` is always added (it is what `fit` returns); `ProgbarLogger`
prints the progress when `verbose` is on.
"""

from __future__ import annotations

import sys
import time

import numpy as np

__all__ = ["Callback", "CallbackList", "History", "BaseLogger", "ProgbarLogger", "configure_callbacks"]


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


def _format_value(value):
    return f" - {value:.4f}" if abs(value) >= 1e-3 or value == 0 else f" - {value:.4e}"


class ProgbarLogger(Callback):
    """Keras's progress output: per epoch `Epoch 3/10` and a bar (verbose=1) or one line (verbose=2).

    count_mode: 'samples' (arrays) or 'steps' (datasets, generators).
    """

    def __init__(self, count_mode="samples", stateful_metrics=None):
        super().__init__()
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
        self.seen = 0
        self.start = time.time()
        self._last_draw = 0.0

    def on_train_batch_end(self, batch, logs=None):
        if not self.verbose:
            return
        logs = logs or {}
        self.seen += logs.get("size", 1) if self.count_mode == "samples" else 1
        self._values = {k: v for k, v in logs.items() if k not in ("batch", "size")}
        if self.verbose == 1 and sys.stdout.isatty() and time.time() - self._last_draw > 0.05:
            self._last_draw = time.time()
            sys.stdout.write("\r" + self._bar(final=False))
            sys.stdout.flush()

    def _bar(self, final, logs=None):
        target = self.target
        width = 30
        elapsed = time.time() - self.start
        if target:
            digits = len(str(target))
            done = int(width * self.seen / target)
            bar = "=" * max(done - 1, 0) + (">" if self.seen < target else "=") * (1 if done > 0 else 0)
            text = f"{self.seen:{digits}d}/{target} [{bar}{'.' * (width - len(bar))}]"
        else:
            text = f"{self.seen:7d}/Unknown"
        if final:
            per = elapsed / max(self.seen, 1)
            unit = "sample" if self.count_mode == "samples" else "step"
            rate = f"{per * 1e6:.0f}us" if per < 1e-3 else (f"{per * 1e3:.0f}ms" if per < 1 else f"{per:.0f}s")
            text += f" - {elapsed:.0f}s {rate}/{unit}"
        else:
            remaining = elapsed / max(self.seen, 1) * ((target or self.seen) - self.seen)
            text += f" - ETA: {remaining:.0f}s"
        for key, value in (logs if logs is not None else getattr(self, "_values", {})).items():
            text += f" - {key}:" + _format_value(float(np.mean(value)))[2:]
        return text

    def on_epoch_end(self, epoch, logs=None):
        if not self.verbose:
            return
        if self.verbose == 2:
            elapsed = time.time() - self.start
            text = f" - {elapsed:.0f}s"
            for key, value in (logs or {}).items():
                text += f" - {key}:" + _format_value(float(value))[2:]
            print(text)
            return
        line = self._bar(final=True, logs=logs or {})
        if sys.stdout.isatty():
            line = "\r" + line
        print(line)


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
