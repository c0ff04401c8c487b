"""What a model function returns (TF1's `tf.estimator.EstimatorSpec`) and the modes it runs in
(`tf.estimator.ModeKeys`)."""

from __future__ import annotations

import collections

from ..graph.ops import Operation, Tensor
from ..state.variables import Variable
from .export_output import check_export_outputs

__all__ = ["ModeKeys", "EstimatorSpec"]

LOSS_METRIC_KEY = "loss"
AVERAGE_LOSS_METRIC_KEY = "average_loss"


class ModeKeys:
    """The mode a model_fn builds its graph for."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


def _is_graph_element(x):
    return isinstance(x, (Tensor, Operation, Variable))


def _check_metric_ops(eval_metric_ops):
    out = {}
    for key, value in dict(eval_metric_ops or {}).items():
        if not isinstance(value, tuple) or len(value) != 2:
            raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) tuples, given: {value} "
                            f"for key: {key}")
        out[key] = value
    return out


class EstimatorSpec(collections.namedtuple("EstimatorSpec", [
        "mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs", "training_chief_hooks",
        "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks"])):
    """The ops and hooks a model_fn gives for one mode. TRAIN needs `loss` and `train_op`, EVAL
    `loss`, PREDICT `predictions` (a tensor or a dict of tensors); `loss` is a scalar; the values
    of `eval_metric_ops` are (value, update_op) pairs as `tf.metrics` makes them; `export_outputs`
    ({signature name: ExportOutput}, for PREDICT) name what export_saved_model serves. ValueError or
    TypeError otherwise, as TF1."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None, export_outputs=None,
                training_chief_hooks=None, training_hooks=None, scaffold=None, evaluation_hooks=None,
                prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(f"mode={mode!r} unrecognized.")
        if mode == ModeKeys.TRAIN and train_op is None:
            raise ValueError("Missing train_op.")
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL) and loss is None:
            raise ValueError("Missing loss.")
        if loss is not None:
            if isinstance(loss, Variable):
                loss = loss.value()
            if not isinstance(loss, Tensor):
                raise TypeError(f"loss must be Tensor, given: {loss}")
            if loss.shape.ndims not in (None, 0) and loss.shape.num_elements() != 1:
                raise ValueError(f"Loss must be scalar, given: {loss}")
        if train_op is not None and not _is_graph_element(train_op):
            raise TypeError(f"train_op must be Operation or Tensor, given: {train_op}")
        if predictions is None:
            if mode == ModeKeys.PREDICT:
                raise ValueError("Missing predictions.")
            predictions = {}
        elif isinstance(predictions, dict):
            for key, value in predictions.items():
                if not isinstance(value, (Tensor, Variable)):
                    raise TypeError(f"predictions[{key}] must be Tensor, given: {value}")
        elif not isinstance(predictions, (Tensor, Variable)):
            raise TypeError(f"predictions must be Tensor or dict of Tensor, given: {predictions}")
        eval_metric_ops = _check_metric_ops(eval_metric_ops)
        if export_outputs is not None:
            export_outputs = check_export_outputs(export_outputs)
        hooks = [tuple(h or ()) for h in (training_chief_hooks, training_hooks, evaluation_hooks, prediction_hooks)]
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metric_ops, export_outputs,
                               hooks[0], hooks[1], scaffold, hooks[2], hooks[3])
