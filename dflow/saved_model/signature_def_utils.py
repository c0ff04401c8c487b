"""TF1's `tf.saved_model.signature_def_utils`: SignatureDefs for serving (predict, classify,
regress) and the check TF Serving applies to them."""

from __future__ import annotations

from ..graph import dtypes
from ..io.signature import SignatureDef
from . import signature_constants as sc
from .utils import build_tensor_info

__all__ = ["build_signature_def", "predict_signature_def", "classification_signature_def",
           "regression_signature_def", "is_valid_signature"]


def build_signature_def(inputs=None, outputs=None, method_name=None, defaults=None):
    """A SignatureDef of {key: TensorInfo} inputs and outputs and a method name."""
    return SignatureDef(inputs, outputs, method_name)


def _infos(tensors, what):
    if not tensors:
        raise ValueError(f"Prediction `{what}` cannot be None or empty.")
    return {key: build_tensor_info(t) for key, t in tensors.items()}


def predict_signature_def(inputs, outputs):
    """A predict SignatureDef of {key: Tensor} inputs and outputs; ValueError when either is empty."""
    return SignatureDef(_infos(inputs, "inputs"), _infos(outputs, "outputs"), sc.PREDICT_METHOD_NAME)


def _check(tensor, dtype, message):
    if tensor is None or getattr(tensor, "dtype", None) != dtype:
        raise ValueError(f"{message}; got {tensor}")


def classification_signature_def(examples, classes, scores):
    """A classify SignatureDef: a string `examples` input, string `classes` and/or float32 `scores`."""
    _check(examples, dtypes.string, "Classification input must be a single string Tensor")
    outputs = {}
    if classes is not None:
        _check(classes, dtypes.string, "Classification classes must be a string Tensor")
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = build_tensor_info(classes)
    if scores is not None:
        _check(scores, dtypes.float32, "Classification scores must be a float32 Tensor")
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = build_tensor_info(scores)
    if not outputs:
        raise ValueError("Classification classes and scores cannot both be None.")
    return SignatureDef({sc.CLASSIFY_INPUTS: build_tensor_info(examples)}, outputs, sc.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples, predictions):
    """A regress SignatureDef: a string `examples` input and float32 `predictions`."""
    _check(examples, dtypes.string, "Regression input must be a single string Tensor")
    _check(predictions, dtypes.float32, "Regression output must be a float Tensor")
    return SignatureDef({sc.REGRESS_INPUTS: build_tensor_info(examples)},
                        {sc.REGRESS_OUTPUTS: build_tensor_info(predictions)}, sc.REGRESS_METHOD_NAME)


def _dtype_is(info, dtype):
    return info.dtype == dtype


def is_valid_signature(signature_def):
    """Whether a SignatureDef is a well-formed predict, classify or regress signature (TF1's rules)."""
    if not isinstance(signature_def, SignatureDef):
        return False
    s = signature_def
    if s.method_name == sc.PREDICT_METHOD_NAME:
        return bool(s.inputs) and bool(s.outputs)
    if s.method_name == sc.REGRESS_METHOD_NAME:
        return set(s.inputs) == {sc.REGRESS_INPUTS} and _dtype_is(s.inputs[sc.REGRESS_INPUTS], dtypes.string) and \
            set(s.outputs) == {sc.REGRESS_OUTPUTS} and _dtype_is(s.outputs[sc.REGRESS_OUTPUTS], dtypes.float32)
    if s.method_name == sc.CLASSIFY_METHOD_NAME:
        allowed = {sc.CLASSIFY_OUTPUT_CLASSES: dtypes.string, sc.CLASSIFY_OUTPUT_SCORES: dtypes.float32}
        return set(s.inputs) == {sc.CLASSIFY_INPUTS} and _dtype_is(s.inputs[sc.CLASSIFY_INPUTS], dtypes.string) \
            and bool(s.outputs) and set(s.outputs) <= set(allowed) and \
            all(_dtype_is(info, allowed[k]) for k, info in s.outputs.items())
    return False
