"""TF1's `tf.estimator.Exporter`s, which `train_and_evaluate` calls after each evaluation:
`LatestExporter` (every time, keeping the newest `exports_to_keep`), `BestExporter` (when the
evaluation beats the best so far, by `compare_fn`, the best first read from the event files of
`model_dir/eval`), `FinalExporter` (the final evaluation only). Each writes SavedModels under
`model_dir/export/<name>/<timestamp>` through `Estimator.export_saved_model`."""

from __future__ import annotations

import glob
import inspect
import logging
import os
import shutil

from ..errors import DataLossError, NotFoundError
from ..saved_model.loader import maybe_saved_model_directory
from ..summary import summary_iterator

__all__ = ["Exporter", "LatestExporter", "BestExporter", "FinalExporter"]

_log = logging.getLogger("tensorflow")


class Exporter:
    """The interface: a `name` (the directory under model_dir/export) and `export(estimator,
    export_path, checkpoint_path, eval_result, is_the_final_export)` returning what it wrote."""

    @property
    def name(self):
        raise NotImplementedError

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        raise NotImplementedError


def _check_exports_to_keep(exports_to_keep):
    if exports_to_keep is not None and exports_to_keep <= 0:
        raise ValueError(f"`exports_to_keep`, if provided, must be a positive number. Got {exports_to_keep}")


def _garbage_collect_exports(export_dir_base, exports_to_keep):
    """Deletes all but the newest `exports_to_keep` timestamped exports under export_dir_base.
    What it deletes: directories named by a number (the export timestamps) that hold a SavedModel
    document, never a symbolic link; a user's numbered directory of other files is no export."""
    if exports_to_keep is None or not os.path.isdir(export_dir_base):
        return
    exports = []
    for n in os.listdir(export_dir_base):
        path = os.path.join(export_dir_base, n)
        if n.isdigit() and os.path.isdir(path) and not os.path.islink(path) and maybe_saved_model_directory(path):
            exports.append((int(n), path))
    for _, path in sorted(exports)[:-exports_to_keep]:
        shutil.rmtree(path, ignore_errors=True)


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        self._name, self._fn = name, serving_input_receiver_fn
        self._assets_extra, self._as_text = assets_extra, as_text

    @property
    def name(self):
        return self._name

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        return estimator.export_saved_model(export_path, self._fn, assets_extra=self._assets_extra,
                                            as_text=self._as_text, checkpoint_path=checkpoint_path)


class LatestExporter(_SavedModelExporter):
    """Exports at every evaluation; keeps the newest `exports_to_keep` (None: all)."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False, exports_to_keep=5):
        _check_exports_to_keep(exports_to_keep)
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        self._exports_to_keep = exports_to_keep

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        result = super().export(estimator, export_path, checkpoint_path, eval_result, is_the_final_export)
        _garbage_collect_exports(export_path, self._exports_to_keep)
        return result


class FinalExporter(_SavedModelExporter):
    """Exports once, at the final evaluation (global step >= TrainSpec.max_steps); None otherwise."""

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        if not is_the_final_export:
            return None
        _log.info("Performing the final export in the end of training.")
        return super().export(estimator, export_path, checkpoint_path, eval_result, is_the_final_export)


def _loss_smaller(best_eval_result, current_eval_result):
    """TF1's default compare_fn: the current evaluation's `loss` is smaller than the best's."""
    for result in (best_eval_result, current_eval_result):
        if not result or "loss" not in result:
            raise ValueError("best_eval_result cannot be empty or no loss is found in it.")
    return best_eval_result["loss"] > current_eval_result["loss"]


class BestExporter(_SavedModelExporter):
    """Exports when `compare_fn(best_eval_result, current_eval_result)` says the evaluation is better
    than the best so far (the best is first read from the summaries matching `event_file_pattern`
    under model_dir, as TF1 — which holds the evaluation just made, so an equal one does not
    export); keeps the newest `exports_to_keep`."""

    def __init__(self, name="best_exporter", serving_input_receiver_fn=None, event_file_pattern="eval/*.tfevents.*",
                 compare_fn=_loss_smaller, assets_extra=None, as_text=False, exports_to_keep=5):
        if not compare_fn:
            raise ValueError("`compare_fn` must not be None.")
        args = tuple(inspect.signature(compare_fn).parameters)
        for arg in ("best_eval_result", "current_eval_result"):
            if arg not in args:
                raise ValueError(f"compare_fn ({compare_fn}) must include {arg} argument.")
        _check_exports_to_keep(exports_to_keep)
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        self._compare_fn, self._event_file_pattern = compare_fn, event_file_pattern
        self._exports_to_keep = exports_to_keep
        self._model_dir, self._best_eval_result = None, None

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        result = None
        if self._model_dir != estimator.model_dir and self._event_file_pattern:
            _log.info("Loading best metric from event files.")
            self._model_dir = estimator.model_dir
            self._best_eval_result = self._best_from_events(os.path.join(self._model_dir, self._event_file_pattern))
        if self._best_eval_result is None or self._compare_fn(best_eval_result=self._best_eval_result,
                                                              current_eval_result=eval_result):
            _log.info("Exporting a better model (%s instead of %s)...", eval_result, self._best_eval_result)
            result = super().export(estimator, export_path, checkpoint_path, eval_result, is_the_final_export)
            self._best_eval_result = eval_result
            _garbage_collect_exports(export_path, self._exports_to_keep)
        else:
            _log.info("Keeping the current best model (%s instead of %s).", self._best_eval_result, eval_result)
        return result

    def _best_from_events(self, pattern):
        best = None
        for path in sorted(glob.glob(pattern)):
            try:
                events = list(summary_iterator(path))
            except (DataLossError, NotFoundError) as e:  # a file being written: TF1 reads what it can
                _log.warning("BestExporter: skipping event file %s: %s", path, e.message)
                continue
            for event in events:
                if not event.HasField("summary"):
                    continue
                result = {v.tag: v.simple_value for v in event.summary.value if v.HasField("simple_value")}
                if result and (best is None or self._compare_fn(best_eval_result=best, current_eval_result=result)):
                    best = result
        return best
