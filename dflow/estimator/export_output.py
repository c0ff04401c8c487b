"""TF1's `tf.estimator.export.ExportOutput`s: what a served model returns, one per signature
(`ClassificationOutput`, `RegressionOutput`, `PredictOutput`), each turned into a SignatureDef
over the serving input receiver's tensors by `as_signature_def`."""

from __future__ import annotations

from ..graph import dtypes
from ..graph.ops import Tensor
from ..kernels.sparse_ops import SparseTensor
from ..saved_model import signature_constants as sc
from ..saved_model import signature_def_utils
from ..state.variables import Variable

__all__ = ["ExportOutput", "ClassificationOutput", "RegressionOutput", "PredictOutput"]


class ExportOutput:
    """The base of the outputs a model serves under one signature."""

    def as_signature_def(self, receiver_tensors):
        raise NotImplementedError


def _single_string_input(receiver_tensors, what):
    if not isinstance(receiver_tensors, dict):
        receiver_tensors = {"input": receiver_tensors}
    if len(receiver_tensors) != 1:
        raise ValueError(f"{what} input must be a single string Tensor; got {receiver_tensors}")
    (_, examples), = receiver_tensors.items()
    if not isinstance(examples, Tensor) or examples.dtype != dtypes.string:
        raise ValueError(f"{what} input must be a single string Tensor; got {receiver_tensors}")
    return examples


class ClassificationOutput(ExportOutput):
    """Float32 `scores` [batch, n_classes] and/or string `classes` [batch, n_classes] for the
    classify API (signature inputs: one string tensor of serialized tf.Examples)."""

    def __init__(self, scores=None, classes=None):
        if scores is not None and not (isinstance(scores, Tensor) and scores.dtype == dtypes.float32):
            raise ValueError(f"Classification scores must be a float32 Tensor; got {scores}")
        if classes is not None and not (isinstance(classes, Tensor) and classes.dtype == dtypes.string):
            raise ValueError(f"Classification classes must be a string Tensor; got {classes}")
        if scores is None and classes is None:
            raise ValueError("At least one of scores and classes must be set.")
        self._scores, self._classes = scores, classes

    scores = property(lambda self: self._scores)
    classes = property(lambda self: self._classes)

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input(receiver_tensors, "Classification")
        return signature_def_utils.classification_signature_def(examples, self._classes, self._scores)


class RegressionOutput(ExportOutput):
    """A float32 `value` for the regress API (input: one string tensor of serialized tf.Examples)."""

    def __init__(self, value):
        if not (isinstance(value, Tensor) and value.dtype == dtypes.float32):
            raise ValueError(f"Regression output value must be a float32 Tensor; got {value}")
        self._value = value

    value = property(lambda self: self._value)

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input(receiver_tensors, "Regression")
        return signature_def_utils.regression_signature_def(examples, self._value)


class PredictOutput(ExportOutput):
    """Any tensors (a dict, or one tensor named `output`) for the predict API, over any inputs."""

    def __init__(self, outputs):
        if not isinstance(outputs, dict):
            outputs = {"output": outputs}
        checked = {}
        for key, value in outputs.items():
            if not isinstance(key, str):
                raise ValueError(f"Prediction output key must be a string; got {key}.")
            if isinstance(value, Variable):
                value = value.value()
            if not isinstance(value, Tensor):
                raise ValueError(f"Prediction output value must be a Tensor; got {value}.")
            checked[key] = value
        self._outputs = checked

    outputs = property(lambda self: dict(self._outputs))

    def as_signature_def(self, receiver_tensors):
        if not isinstance(receiver_tensors, dict):
            receiver_tensors = {"input": receiver_tensors}
        if any(isinstance(t, SparseTensor) for t in receiver_tensors.values()):
            raise ValueError(f"Prediction inputs must be Tensors (a SparseTensor has no TensorInfo here); got "
                             f"{receiver_tensors}")
        return signature_def_utils.predict_signature_def(receiver_tensors, self._outputs)


def check_export_outputs(export_outputs, predictions=None):
    """TF1's rules for a spec's export_outputs: a dict of ExportOutputs; one output is also the
    default (`serving_default`); several must name the default. None: a PredictOutput of the
    predictions (when given)."""
    if export_outputs is None:
        if predictions is None:
            return None
        return {sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY: PredictOutput(predictions)}
    if not isinstance(export_outputs, dict):
        raise TypeError(f"export_outputs must be dict, given: {export_outputs}")
    for value in export_outputs.values():
        if not isinstance(value, ExportOutput):
            raise TypeError(f"Values in export_outputs must be ExportOutput objects. Given: {export_outputs}")
    export_outputs = dict(export_outputs)
    if len(export_outputs) == 1:
        (_, value), = export_outputs.items()
        export_outputs.setdefault(sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY, value)
    if len(export_outputs) > 1 and sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY not in export_outputs:
        raise ValueError("Multiple export_outputs were provided, but none of them is specified as the default.  Do "
                         "this by naming one of them with signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY.")
    return export_outputs
