"""`tf.keras.Model`: a Network with `compile`, `fit`, `evaluate`, `predict` and the batch methods.

Graph mode (TF1's default) builds, once per model: a target placeholder per output
(`dense_1_target`), a sample-weight placeholder (`dense_1_sample_weights`, ones by default), the
total loss (each output's loss weighted by `loss_weights`, plus `model.losses`) and the metric
tensors; the train step is the optimizer's updates plus the layers' updates (batch norm) under
`name_scope("training")`. Every step is one `Session.run` in Keras's session
(`backend.get_session()`), feeding the batch and the learning phase, so a Keras model trains on the
default session, on Dask schedulers (`K.set_session(tf.Session(scheduler=...))`) and inside a
user's own Session program alike. Eager mode runs each step under a GradientTape.

Inputs: see data_adapter.py: numpy, Zarr and dask arrays streamed block by block, Datasets,
generators and Sequences. The loss and each function metric of an epoch are averages of the batch
values weighted by batch size; stateful `Metric` objects accumulate over the epoch and are reset
at its start.
"""

from __future__ import annotations

import itertools

import numpy as np

from ...eager.context import executing_eagerly
from ...eager.tape import GradientTape
from ...graph.graph import name_scope
from ...kernels import math_ops, reduction_ops
from ...kernels.array_ops import placeholder, placeholder_with_default
from ...kernels.array_ops import shape as shape_op
from ...kernels.control_ops import group
from ...kernels.creation_ops import ones
from ...kernels.manip_ops import add_n
from ...state.variables import global_variables
from ...train.optimizer import Optimizer as TFOptimizerBase
from .. import backend as K
from .. import callbacks as callbacks_module
from .. import losses as losses_module
from .. import metrics as metrics_module
from .. import optimizers as optimizers_module
from . import data_adapter
from .base_layer import flatten
from .network import Network

__all__ = ["Model"]

_METRIC_ALIASES = {"mae": "mean_absolute_error", "mse": "mean_squared_error",
                   "mape": "mean_absolute_percentage_error", "msle": "mean_squared_logarithmic_error",
                   "cosine": "cosine_proximity"}


def _loss_fn(identifier):
    if callable(identifier):
        return identifier
    return losses_module.get(identifier)


def _fn_name(fn):
    return getattr(fn, "__name__", None) or getattr(fn, "name", None) or type(fn).__name__


class _Output:
    """One model output's training parts: its tensor, name, loss, target and weights."""

    def __init__(self, tensor, name, loss, loss_weight):
        self.tensor, self.name, self.loss, self.loss_weight = tensor, name, loss, loss_weight
        self.target = self.sample_weight = self.loss_value = None


class Model(Network):
    """Groups layers into an object with training and inference (functional or subclassed)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.optimizer = None
        self.stop_training = False
        self.history = None
        self._compiled = False
        self._graph_parts = None

    # ---- compile ------------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, sample_weight_mode=None,
                weighted_metrics=None, target_tensors=None, distribute=None, **kwargs):
        """Sets the optimizer (name, Keras optimizer or tf.train optimizer), the loss (name,
        function, Loss object; a list or dict per output) and the metrics."""
        if kwargs:
            raise TypeError(f"Invalid keyword argument(s) in `compile`: {sorted(kwargs)}")
        if isinstance(optimizer, TFOptimizerBase):
            self.optimizer = optimizer
        else:
            self.optimizer = optimizers_module.get(optimizer)
        self.loss = loss
        self.loss_weights = loss_weights
        self._compile_metrics = metrics or []
        self._compile_weighted_metrics = weighted_metrics or []
        self._target_tensors = target_tensors
        self._compiled = True
        self._graph_parts = None
        self._train_step = self._test_step = self._predict_step = None
        if self._is_graph_network and not executing_eagerly():
            self._build_graph_parts()

    def _output_names(self, count):
        if self._is_graph_network:
            return list(self.output_names)
        return ["output_1"] if count == 1 else [f"output_{i + 1}" for i in range(count)]

    def _per_output(self, value, names, what, default=None):
        if isinstance(value, dict):
            unknown = [k for k in value if k not in names]
            if unknown:
                raise ValueError(f"Unknown entries in {what} dictionary: {unknown}. Only expected following "
                                 f"keys: {names}")
            return [value.get(n, default) for n in names]
        if isinstance(value, (list, tuple)) and what != "metrics":
            if len(value) != len(names):
                raise ValueError(f"When passing a list as {what}, it should have one entry per model output. The "
                                 f"model has {len(names)} outputs, but you passed {what}={value}")
            return list(value)
        return [value] * len(names)

    def _make_outputs(self, tensors):
        names = self._output_names(len(tensors))
        if self.loss is None:
            raise ValueError("The model must be compiled with a loss before training or evaluating: "
                             "call model.compile(optimizer, loss)")
        losses = self._per_output(self.loss, names, "loss")
        weights = self._per_output(self.loss_weights if self.loss_weights is not None else 1.0, names,
                                   "loss_weights", 1.0)
        return [_Output(t, n, _loss_fn(lo), w) for t, n, lo, w in zip(tensors, names, losses, weights)]

    def _metric_fns(self, output, per_output_metrics):
        """[(display name, fn or Metric object)] for one output."""
        out = []
        for m in per_output_metrics:
            if m in ("accuracy", "acc"):
                loss_name = _fn_name(output.loss)
                shape = output.tensor.shape
                if "sparse_categorical" in loss_name:
                    fn = metrics_module.sparse_categorical_accuracy
                elif "binary_crossentropy" in loss_name or (shape.ndims and shape[-1].value == 1):
                    fn = metrics_module.binary_accuracy
                else:
                    fn = metrics_module.categorical_accuracy
                out.append(("acc", fn))  # TF 1.x reports 'accuracy' as 'acc' too
            elif isinstance(m, str):
                fn = metrics_module.get(m)
                out.append((_METRIC_ALIASES.get(m, _fn_name(fn)), fn))
            else:
                out.append((getattr(m, "name", None) or _fn_name(m), m))
        return out

    def _all_metric_fns(self, outputs):
        """[(output, display name, fn or Metric)]: `metrics`, then `weighted_metrics` (averaged with
        the sample weights, named `weighted_<name>`)."""
        result = []
        for metrics, weighted in ((self._compile_metrics, False), (self._compile_weighted_metrics, True)):
            names = [o.name for o in outputs]
            if isinstance(metrics, dict):
                per = [metrics.get(n, []) for n in names]
                per = [p if isinstance(p, (list, tuple)) else [p] for p in per]
            elif metrics and isinstance(metrics[0], (list, tuple)):
                per = list(metrics)
            else:
                per = [list(metrics)] * len(outputs)
            for output, ms in zip(outputs, per):
                for name, fn in self._metric_fns(output, ms):
                    name = f"weighted_{name}" if weighted else name
                    fn = _SampleWeighted(fn) if weighted and not hasattr(fn, "update_state") else fn
                    result.append((output, f"{output.name}_{name}" if len(outputs) > 1 else name, fn))
        return result

    @property
    def metrics_names(self):
        names = ["loss"]
        parts = self._graph_parts or getattr(self, "_eager_parts", None)
        if parts is None:
            return names
        if len(parts["outputs"]) > 1:
            names += [f"{o.name}_loss" for o in parts["outputs"]]
        return names + [name for _, name, _ in parts["metrics"]]

    # ---- graph mode: placeholders, loss, metrics, steps -----------------------------------------------
    def _symbolic_io(self, sample=None):
        """(inputs, outputs) tensors of the model, building a deferred model from a sample batch."""
        if self._is_graph_network:
            return self.inputs, self.outputs
        if getattr(self, "_deferred_io", None) is None:
            if sample is None:
                raise ValueError(f"Model {self.name} has not been built yet: call it on data (fit/predict) or "
                                 "call model.build(input_shape) first")
            xs = data_adapter.as_list(sample)
            inputs = [placeholder(_dtype_of(x), shape=(None,) + tuple(np.shape(x)[1:]),
                                  name=f"input_{i + 1}") for i, x in enumerate(xs)]
            outputs = self(inputs[0] if len(inputs) == 1 else inputs)
            self._deferred_io = (inputs, flatten(outputs))
        return self._deferred_io

    def _build_graph_parts(self, sample=None):
        if self._graph_parts is not None:
            return self._graph_parts
        inputs, output_tensors = self._symbolic_io(sample)
        outputs = self._make_outputs(output_tensors)
        targets = self._target_tensors
        targets = self._per_output(targets, [o.name for o in outputs], "target_tensors") if targets else None
        total = []
        with name_scope("loss"):
            for i, o in enumerate(outputs):
                rank = o.tensor.shape.ndims
                o.target = targets[i] if targets else placeholder(
                    o.tensor.dtype.base_dtype, shape=[None] * (rank or 1), name=f"{o.name}_target")
                o.sample_weight = placeholder_with_default(
                    ones([_batch_of(o.tensor)], dtype=o.tensor.dtype.base_dtype), shape=[None],
                    name=f"{o.name}_sample_weights")
                with name_scope(o.name + "_loss"):
                    o.loss_value = _weighted_loss(o.loss, o.target, o.tensor, o.sample_weight)
                total.append(o.loss_value * o.loss_weight if o.loss_weight != 1.0 else o.loss_value)
            extra = [math_ops.cast(x, total[0].dtype) for x in self.losses]
            total_loss = add_n(total + extra) if len(total) + len(extra) > 1 else total[0]
        metrics = self._all_metric_fns(outputs)
        metric_values, metric_updates = [], []
        with name_scope("metrics"):
            for output, _name, fn in metrics:
                if hasattr(fn, "update_state"):
                    metric_updates.append(fn.update_state(output.target, output.tensor))
                    metric_values.append(fn.result())
                elif isinstance(fn, _SampleWeighted):
                    metric_values.append(fn.value(output.target, output.tensor, output.sample_weight))
                else:
                    metric_values.append(reduction_ops.reduce_mean(
                        math_ops.cast(fn(output.target, output.tensor), total_loss.dtype)))
        self._graph_parts = {"inputs": inputs, "outputs": outputs, "total_loss": total_loss,
                             "metrics": metrics, "metric_values": metric_values, "metric_updates": metric_updates}
        return self._graph_parts

    def _train_op(self):
        parts = self._graph_parts
        if "train_op" not in parts:
            before = {id(v) for v in global_variables()}
            with name_scope("training"):
                params = self.trainable_weights
                if isinstance(self.optimizer, TFOptimizerBase):
                    updates = [self.optimizer.minimize(parts["total_loss"], var_list=params)]
                else:
                    with name_scope(type(self.optimizer).__name__):
                        updates = list(self.optimizer.get_updates(loss=parts["total_loss"], params=params))
                updates += [u for u in self.updates]
                parts["train_op"] = group(*updates, *parts["metric_updates"])
            for v in global_variables():
                if id(v) not in before:
                    K.track_variable(v)
        return parts["train_op"]

    def _feed(self, inputs, outputs, x, y, sample_weight, training):
        feed = {}
        xs = data_adapter.as_list(x, [K.keras_history(t)[0].name for t in inputs]
                                  if self._is_graph_network else None)
        if len(xs) != len(inputs):
            raise ValueError(f"Error when checking model input: the list of arrays passed to your model is not the "
                             f"size the model expected. Expected to see {len(inputs)} array(s), but instead "
                             f"got {len(xs)}")
        for tensor, value in zip(inputs, xs):
            feed[tensor] = _check_array(value, tensor, "input")
        if y is not None:
            ys = data_adapter.as_list(y, [o.name for o in outputs])
            if len(ys) != len(outputs):
                raise ValueError(f"Error when checking model target: expected {len(outputs)} arrays, got "
                                 f"{len(ys)}")
            for o, value in zip(outputs, ys):
                feed[o.target] = _check_array(value, o.target, "target", o.tensor)
            sws = data_adapter.as_list(sample_weight) if sample_weight is not None else [None] * len(ys)
            for o, value in zip(outputs, sws):
                if value is not None:
                    feed[o.sample_weight] = np.asarray(value, dtype=o.tensor.dtype.as_numpy_dtype).reshape(-1)
        phase = K._phase_placeholder()
        if phase is not None:
            feed[phase] = bool(training)
        return feed

    def _graph_batch(self, x, y, sample_weight, mode):
        if mode == "predict":  # no loss needed: an uncompiled model predicts
            inputs, outputs = self._symbolic_io(sample=x)
            feed = self._feed(inputs, None, x, None, None, training=False)
            return K.get_session().run(list(outputs), feed_dict=feed)
        parts = self._build_graph_parts(sample=x)
        fetches = [parts["total_loss"]]
        if len(parts["outputs"]) > 1:
            fetches += [o.loss_value for o in parts["outputs"]]
        fetches += parts["metric_values"]
        if mode == "train":
            train_op = self._train_op()
            session = K.get_session()
            values = session.run(fetches + [train_op],
                                 feed_dict=self._feed(parts["inputs"], parts["outputs"], x, y, sample_weight,
                                                     training=True))[:-1]
            return values
        session = K.get_session()
        feed = self._feed(parts["inputs"], parts["outputs"], x, y, sample_weight, training=False)
        if parts["metric_updates"]:
            session.run(group(*parts["metric_updates"]), feed_dict=feed)
        return session.run(fetches, feed_dict=feed)

    # ---- eager mode -------------------------------------------------------------------------------
    def _eager_batch(self, x, y, sample_weight, mode):
        xs = data_adapter.as_list(x)
        inputs = [np.asarray(v) for v in xs]
        if mode == "predict":
            out = self(inputs[0] if len(inputs) == 1 else inputs, training=False)
            return [o.numpy() for o in flatten(out)]
        parts = getattr(self, "_eager_parts", None)
        with GradientTape() as tape:
            out = flatten(self(inputs[0] if len(inputs) == 1 else inputs, training=mode == "train"))
            if parts is None:
                outputs = self._make_outputs(out)
                parts = self._eager_parts = {"outputs": outputs, "metrics": self._all_metric_fns(outputs)}
            ys = data_adapter.as_list(y)
            sws = data_adapter.as_list(sample_weight) if sample_weight is not None else [None] * len(ys)
            values = []
            for o, tensor, target, sw in zip(parts["outputs"], out, ys, sws):
                o.tensor = tensor
                target = np.asarray(target, dtype=tensor.dtype.as_numpy_dtype)
                sw = np.ones([len(target)], tensor.dtype.as_numpy_dtype) if sw is None else \
                    np.asarray(sw, tensor.dtype.as_numpy_dtype).reshape(-1)
                o.loss_value = _weighted_loss(o.loss, target, tensor, sw)
                o.target, o.sample_weight = target, sw
                values.append(o.loss_value * o.loss_weight if o.loss_weight != 1.0 else o.loss_value)
            total = add_n(values + [math_ops.cast(v, values[0].dtype) for v in self.losses]) \
                if len(values) + len(self.losses) > 1 else values[0]
        if mode == "train":
            params = self.trainable_weights
            grads = tape.gradient(total, params)
            self.optimizer.apply_gradients([(g, v) for g, v in zip(grads, params) if g is not None])
        result = [total.numpy()]
        if len(parts["outputs"]) > 1:
            result += [o.loss_value.numpy() for o in parts["outputs"]]
        for output, _, fn in parts["metrics"]:
            if hasattr(fn, "update_state"):
                fn.update_state(output.target, output.tensor)
                result.append(np.asarray(fn.result()))
            elif isinstance(fn, _SampleWeighted):
                result.append(np.asarray(fn.value(output.target, output.tensor, output.sample_weight)))
            else:
                result.append(np.mean(np.asarray(fn(output.target, output.tensor))))
        return result

    def _run_batch(self, x, y, sample_weight, mode):
        if executing_eagerly():
            return self._eager_batch(x, y, sample_weight, mode)
        return self._graph_batch(x, y, sample_weight, mode)

    def _stateful_metrics(self):
        parts = self._graph_parts or getattr(self, "_eager_parts", None) or {"metrics": []}
        return [fn for _, _, fn in parts["metrics"] if hasattr(fn, "reset_states")]

    def reset_metrics(self):
        for m in self._stateful_metrics():
            m.reset_states()

    # ---- batch methods -------------------------------------------------------------------------------
    def _require_compiled(self):
        if not self._compiled:
            raise RuntimeError("You must compile your model before training/testing. Use `model.compile(optimizer, "
                               "loss)`.")

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, reset_metrics=True):
        """One gradient step on one batch; the loss, or [loss, metrics...]."""
        self._require_compiled()
        sample_weight = _class_weights(y, sample_weight, class_weight)
        values = self._run_batch(x, y, sample_weight, "train")
        if reset_metrics:
            self.reset_metrics()
        return _unwrap(values)

    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True):
        self._require_compiled()
        values = self._run_batch(x, y, sample_weight, "test")
        if reset_metrics:
            self.reset_metrics()
        return _unwrap(values)

    def predict_on_batch(self, x):
        values = self._run_batch(x, None, None, "predict")
        return values[0] if len(values) == 1 else values

    # ---- loops -----------------------------------------------------------------------------------------
    def _batches(self, x, y, sample_weight, batch_size, shuffle, steps, start=0, stop=None):
        """(batch iterator, count mode, samples or None) for arrays or a stream."""
        if _is_stream(x):
            session_run = None if executing_eagerly() else (lambda t: K.get_session().run(t))
            stream = data_adapter.iterate_stream(x, session_run)
            batches = (data_adapter.split_batch(b, "fit") for b in stream)
            if steps is not None:
                batches = _take(batches, steps)
            return batches, "steps", None
        xs = data_adapter.as_list(x)
        ys = data_adapter.as_list(y)
        sws = data_adapter.as_list(sample_weight) if sample_weight is not None else []
        arrays = xs + ys + sws
        n = data_adapter.num_samples(arrays)
        stop = n if stop is None else stop
        nx, ny = len(xs), len(ys)

        def gen():
            for batch in data_adapter.array_batches(arrays, batch_size or 32, shuffle=shuffle, start=start,
                                                    stop=stop):
                bx, by, bs = batch[:nx], batch[nx:nx + ny], batch[nx + ny:]
                yield (bx if nx > 1 else bx[0]), (by if ny > 1 else (by[0] if by else None)), \
                    (bs if len(bs) > 1 else (bs[0] if bs else None))
        batches = gen()
        if steps is not None:
            batches = _take(batches, steps)
        return batches, "samples", stop - start

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_freq=1, max_queue_size=10, workers=1,
            use_multiprocessing=False, **kwargs):
        """Trains for `epochs` epochs; returns the History (`history.history["loss"]`, ...)."""
        self._require_compiled()
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
        batch_size = batch_size or (None if _is_stream(x) else 32)
        split_at = None
        if validation_split and validation_data is None:
            if _is_stream(x):
                raise ValueError("`validation_split` is only supported for Tensors or NumPy arrays, found: "
                                 f"{type(x).__name__}")
            n = data_adapter.num_samples(data_adapter.as_list(x))
            split_at = int(n * (1.0 - validation_split))
        if validation_data is not None and not _is_stream(validation_data):
            if len(validation_data) == 2:
                val_x, val_y, val_sw = validation_data[0], validation_data[1], None
            elif len(validation_data) == 3:
                val_x, val_y, val_sw = validation_data
            else:
                raise ValueError("When passing validation_data, it must contain 2 (x_val, y_val) or 3 (x_val, y_val, "
                                 f"val_sample_weights) items, however it contains {len(validation_data)} items")
        do_validation = validation_data is not None or split_at is not None
        samples = None if _is_stream(x) else (split_at if split_at is not None else
                                               data_adapter.num_samples(data_adapter.as_list(x)))
        if verbose and samples is not None:
            text = f"Train on {samples} samples"
            if split_at is not None:
                text += f", validate on {data_adapter.num_samples(data_adapter.as_list(x)) - split_at} samples"
            elif do_validation and not _is_stream(validation_data):
                text += f", validate on {data_adapter.num_samples(data_adapter.as_list(val_x))} samples"
            print(text)
        cbks = callbacks_module.configure_callbacks(
            callbacks, self, do_validation=do_validation, epochs=epochs, steps=steps_per_epoch, samples=samples,
            verbose=verbose, count_mode="steps" if samples is None else "samples")
        self.stop_training = False
        cbks.on_train_begin()
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            cbks.on_epoch_begin(epoch)
            batches, _, _ = self._batches(x, y, sample_weight, batch_size, shuffle, steps_per_epoch, 0, split_at)
            sums, seen = None, 0
            for step, (bx, by, bsw) in enumerate(batches):
                size = _batch_len(bx)
                cbks.on_train_batch_begin(step, {"batch": step, "size": size})
                bsw = _class_weights(by, bsw, class_weight)
                values = self._run_batch(bx, by, bsw, "train")
                sums, seen = _accumulate(sums, values, size, seen, self._stateful_indices())
                logs = dict(zip(self.metrics_names, [float(np.asarray(v)) for v in values]))
                logs.update(batch=step, size=size)
                cbks.on_train_batch_end(step, logs)
                if self.stop_training and getattr(self, "_stop_now", False):
                    break
            epoch_logs = dict(zip(self.metrics_names, _averages(sums, seen)))
            if do_validation and (epoch + 1) % validation_freq == 0 if isinstance(validation_freq, int) else \
                    do_validation and (epoch + 1) in validation_freq:
                if split_at is not None:
                    val = self._evaluate_loop(x, y, sample_weight, batch_size, None, split_at, None)
                elif _is_stream(validation_data):
                    val = self._evaluate_loop(validation_data, None, None, batch_size, validation_steps, 0, None)
                else:
                    val = self._evaluate_loop(val_x, val_y, val_sw, batch_size, validation_steps, 0, None)
                epoch_logs.update({"val_" + k: v for k, v in zip(self.metrics_names, val)})
            cbks.on_epoch_end(epoch, epoch_logs)
            if self.stop_training:
                break
        cbks.on_train_end()
        return self.history

    def _stateful_indices(self):
        parts = self._graph_parts or getattr(self, "_eager_parts", None)
        if parts is None:
            return set()
        offset = 1 + (len(parts["outputs"]) if len(parts["outputs"]) > 1 else 0)
        return {offset + i for i, (_, _, fn) in enumerate(parts["metrics"]) if hasattr(fn, "update_state")}

    def _evaluate_loop(self, x, y, sample_weight, batch_size, steps, start, stop, callbacks=None):
        self.reset_metrics()
        batches, _, _ = self._batches(x, y, sample_weight, batch_size or 32, False, steps, start, stop)
        sums, seen = None, 0
        for step, (bx, by, bsw) in enumerate(batches):
            if callbacks is not None:
                callbacks.on_test_batch_begin(step)
            values = self._run_batch(bx, by, bsw, "test")
            sums, seen = _accumulate(sums, values, _batch_len(bx), seen, self._stateful_indices())
            if callbacks is not None:
                callbacks.on_test_batch_end(step, dict(zip(self.metrics_names, values)))
        if seen == 0:
            raise ValueError("evaluate got no data: the input is empty (or `steps` is 0)")
        return _averages(sums, seen)

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, sample_weight=None, steps=None, callbacks=None,
                 max_queue_size=10, workers=1, use_multiprocessing=False):
        """The loss (and metrics) over the data: a scalar, or a list when there are metrics."""
        self._require_compiled()
        cbks = callbacks_module.CallbackList(callbacks, model=self)
        cbks.on_test_begin()
        values = self._evaluate_loop(x, y, sample_weight, batch_size, steps, 0, None, cbks)
        cbks.on_test_end()
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None, max_queue_size=10, workers=1,
                use_multiprocessing=False):
        """The outputs for `x`, concatenated over batches (a list of arrays for several outputs)."""
        cbks = callbacks_module.CallbackList(callbacks, model=self)
        cbks.on_predict_begin()
        pieces = None
        if _is_stream(x):
            session_run = None if executing_eagerly() else (lambda t: K.get_session().run(t))
            stream = (data_adapter.split_batch(b, "predict")[0] for b in data_adapter.iterate_stream(x, session_run))
            batches = _take(stream, steps) if steps is not None else stream
        else:
            batches = (b[0] for b in self._batches(x, None, None, batch_size or 32, False, steps)[0])
        for step, bx in enumerate(batches):
            cbks.on_predict_batch_begin(step)
            outs = self._run_batch(bx, None, None, "predict")
            pieces = [[o] for o in outs] if pieces is None else [p + [o] for p, o in zip(pieces, outs)]
            cbks.on_predict_batch_end(step, {"outputs": outs})
        cbks.on_predict_end()
        if pieces is None:
            raise ValueError("predict got no data: the input is empty")
        result = [np.concatenate(p, axis=0) for p in pieces]
        return result[0] if len(result) == 1 else result

    def fit_generator(self, generator, steps_per_epoch=None, epochs=1, verbose=1, callbacks=None,
                      validation_data=None, validation_steps=None, validation_freq=1, class_weight=None,
                      max_queue_size=10, workers=1, use_multiprocessing=False, shuffle=True, initial_epoch=0):
        if steps_per_epoch is None and not hasattr(generator, "__len__"):
            raise ValueError("`steps_per_epoch=None` is only valid for a generator based on the "
                             "`keras.utils.Sequence` class. Please specify `steps_per_epoch` or use the "
                             "`keras.utils.Sequence` class.")
        return self.fit(generator, steps_per_epoch=steps_per_epoch, epochs=epochs, verbose=verbose,
                        callbacks=callbacks, validation_data=validation_data, validation_steps=validation_steps,
                        validation_freq=validation_freq, class_weight=class_weight, initial_epoch=initial_epoch,
                        shuffle=shuffle)

    def evaluate_generator(self, generator, steps=None, callbacks=None, max_queue_size=10, workers=1,
                           use_multiprocessing=False, verbose=0):
        return self.evaluate(generator, steps=steps, callbacks=callbacks, verbose=verbose)

    def predict_generator(self, generator, steps=None, callbacks=None, max_queue_size=10, workers=1,
                          use_multiprocessing=False, verbose=0):
        return self.predict(generator, steps=steps, callbacks=callbacks, verbose=verbose)


class _SampleWeighted:
    """A `weighted_metrics` function: its per-sample values averaged with the sample weights."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = _fn_name(fn)

    def __call__(self, target, output):
        return self.fn(target, output)

    def value(self, target, output, sample_weight):
        values = math_ops.cast(self.fn(target, output), output.dtype.base_dtype)
        if values.shape.ndims and values.shape.ndims > 1:
            values = reduction_ops.reduce_mean(values, axis=list(range(1, values.shape.ndims)))
        weight = math_ops.cast(sample_weight, values.dtype)
        return reduction_ops.reduce_sum(values * weight) / reduction_ops.reduce_sum(weight)


# ---- helpers ---------------------------------------------------------------------------------------------
def _batch_of(tensor):
    return shape_op(tensor)[0]


def _weighted_loss(loss, target, output, sample_weight):
    """Keras's weighted objective: mean over the batch of per-sample losses times their weights."""
    if hasattr(loss, "reduction") and hasattr(loss, "call"):  # a Loss object reduces itself
        return loss(target, output, sample_weight=sample_weight)
    per_sample = loss(target, output)
    per_sample = math_ops.cast(per_sample, output.dtype.base_dtype)
    ndim = per_sample.shape.ndims
    if ndim and ndim > 1:
        per_sample = reduction_ops.reduce_mean(per_sample, axis=list(range(1, ndim)))
    if sample_weight is None:
        return reduction_ops.reduce_mean(per_sample)
    return reduction_ops.reduce_mean(per_sample * sample_weight)


def _dtype_of(x):
    dt = np.asarray(x[:1] if hasattr(x, "__getitem__") else x).dtype
    return K.floatx() if dt == np.float64 else dt


def _check_array(value, tensor, what, like=None):
    value = np.asarray(value)
    shape = (like if like is not None else tensor).shape
    if shape.ndims is not None:
        if value.ndim == 1 and shape.ndims == 2:  # Keras's rule: 1-D data is a column
            value = value.reshape(value.shape + (1,))
        if what == "target":  # sparse targets differ from the output in their last axis; the loss checks them
            return value.astype(tensor.dtype.as_numpy_dtype, copy=False)
        if value.ndim != shape.ndims:
            raise ValueError(f"Error when checking {what}: expected {tensor.op.name} to have {shape.ndims} "
                             f"dimensions, but got array with shape {value.shape}")
        for _i, (d, v) in enumerate(zip(shape.as_list()[1:], value.shape[1:])):
            if d is not None and d != v:
                raise ValueError(f"Error when checking {what}: expected {tensor.op.name} to have shape "
                                 f"{tuple(shape.as_list()[1:])} but got array with shape {value.shape[1:]}")
    return value.astype(tensor.dtype.as_numpy_dtype, copy=False) if value.dtype != object else value


def _is_stream(x):
    return x is not None and not data_adapter.is_array(x) and not isinstance(x, (list, tuple, dict)) and \
        (hasattr(x, "__iter__") or hasattr(x, "__next__"))


def _take(iterator, n):
    return itertools.islice(iterator, n)  # pulls no item beyond the n-th


def _batch_len(x):
    first = data_adapter.as_list(x)[0]
    return int(np.shape(first)[0])


def _accumulate(sums, values, size, seen, stateful):
    values = [float(np.asarray(v)) for v in values]
    if sums is None:
        sums = [0.0] * len(values)
    for i, v in enumerate(values):
        sums[i] = v * (seen + size) if i in stateful else sums[i] + v * size
    return sums, seen + size


def _averages(sums, seen):
    return [s / max(seen, 1) for s in (sums or [])]


def _unwrap(values):
    values = [float(np.asarray(v)) for v in values]
    return values[0] if len(values) == 1 else values


def _class_weights(y, sample_weight, class_weight):
    if not class_weight or y is None:
        return sample_weight
    y = np.asarray(y)
    classes = np.argmax(y, axis=-1) if y.ndim > 1 and y.shape[-1] > 1 else y.reshape(len(y), -1)[:, 0].astype(int)
    weights = np.asarray([class_weight.get(int(c), 1.0) for c in classes], dtype=np.float32)
    return weights if sample_weight is None else np.asarray(sample_weight).reshape(-1) * weights

