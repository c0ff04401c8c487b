"""TF1's `tf.estimator.export`: what a serving input function returns
(`ServingInputReceiver`, `TensorServingInputReceiver`), the two canned ones
(`build_parsing_serving_input_receiver_fn`: serialized tf.Examples parsed with `tf.parse_example`;
`build_raw_serving_input_receiver_fn`: one placeholder per feature) and the ExportOutputs; and
`build_all_signature_defs`, the SignatureDefs `Estimator.export_saved_model` writes.
"""

from __future__ import annotations

import collections
import logging

from ..graph import dtypes
from ..graph.ops import Tensor
from ..kernels.array_ops import placeholder
from ..kernels.parsing_ops import parse_example
from ..kernels.sparse_ops import SparseTensor
from ..saved_model import signature_constants as sc
from ..saved_model import signature_def_utils
from .export_output import ClassificationOutput, ExportOutput, PredictOutput, RegressionOutput

__all__ = ["ServingInputReceiver", "TensorServingInputReceiver", "build_parsing_serving_input_receiver_fn",
           "build_raw_serving_input_receiver_fn", "ExportOutput", "ClassificationOutput", "RegressionOutput",
           "PredictOutput"]

_log = logging.getLogger("tensorflow")
_SINGLE_NAMES = {"feature": "feature", "receiver_tensor": "input", "label": "label"}


def _wrap_and_check(tensors, field_name):
    """{name: Tensor or SparseTensor}; a single tensor gets TF1's default name."""
    if tensors is None:
        raise ValueError(f"{field_name}s must be defined.")
    if not isinstance(tensors, dict):
        tensors = {_SINGLE_NAMES[field_name]: tensors}
    for name, tensor in tensors.items():
        if not isinstance(name, str):
            raise ValueError(f"{field_name} keys must be strings: {name}.")
        if not isinstance(tensor, (Tensor, SparseTensor)):
            raise ValueError(f"{field_name} {name} must be a Tensor or SparseTensor.")
    return dict(tensors)


def _alternatives(alternatives):
    if alternatives is None:
        return None
    if not isinstance(alternatives, dict):
        raise ValueError(f"receiver_tensors_alternatives must be a dict: {alternatives}.")
    return {name: _wrap_and_check(tensors, "receiver_tensors_alternative") if isinstance(tensors, dict) else
            _wrap_and_check(tensors, "receiver_tensor") for name, tensors in alternatives.items()}


class ServingInputReceiver(collections.namedtuple("ServingInputReceiver", [
        "features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """`features` (a dict of Tensor/SparseTensor, or one tensor as {"feature": t}) given to the
    model_fn, and `receiver_tensors` (the tensors a request feeds; one tensor as {"input": t})."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        features = _wrap_and_check(features, "feature")
        receiver_tensors = _wrap_and_check(receiver_tensors, "receiver_tensor")
        return super().__new__(cls, features, receiver_tensors, _alternatives(receiver_tensors_alternatives))


class TensorServingInputReceiver(collections.namedtuple("TensorServingInputReceiver", [
        "features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """Like ServingInputReceiver, but `features` is one Tensor given to the model_fn as it is."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if features is None:
            raise ValueError("features must be defined.")
        if not isinstance(features, (Tensor, SparseTensor)):
            raise ValueError(f"feature must be a Tensor or SparseTensor, got {features}.")
        receiver = ServingInputReceiver({"feature": features}, receiver_tensors, receiver_tensors_alternatives)
        return super().__new__(cls, features, receiver.receiver_tensors, receiver.receiver_tensors_alternatives)


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A serving input function feeding serialized tf.Examples (placeholder `input_example_tensor`,
    receiver key `examples`) parsed by `tf.parse_example(feature_spec)`, e.g. the spec of
    `tf.feature_column.make_parse_example_spec(columns)`."""

    def serving_input_receiver_fn():
        serialized = placeholder(dtype=dtypes.string, shape=[default_batch_size], name="input_example_tensor")
        features = parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})

    return serving_input_receiver_fn


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A serving input function feeding each feature raw: one placeholder per tensor of `features`
    (a dict of Tensors, or one Tensor), of its dtype and shape past the batch dimension."""

    def serving_input_receiver_fn():
        receiver = {}
        items = features.items() if isinstance(features, dict) else [("feature", features)]
        for name, t in items:
            shape = [default_batch_size] + t.shape.as_list()[1:] if t.shape.ndims is not None else None
            receiver[name] = placeholder(dtype=t.dtype, shape=shape, name=t.op.name)
        if not isinstance(features, dict):
            return TensorServingInputReceiver(receiver["feature"], receiver)
        return ServingInputReceiver(receiver, dict(receiver))

    return serving_input_receiver_fn


def build_all_signature_defs(receiver_tensors, export_outputs, receiver_tensors_alternatives=None,
                             serving_only=True):
    """{signature name: SignatureDef} of every export output over the receiver tensors (and each
    alternative, named `<alternative>:<output>`); outputs that do not fit the inputs (a classify
    signature over raw features) are left out with a log line, as TF1."""
    if not isinstance(receiver_tensors, dict):
        receiver_tensors = {"input": receiver_tensors}
    if export_outputs is None or not isinstance(export_outputs, dict):
        raise ValueError(f"export_outputs must be a dict and not{type(export_outputs)}")
    signatures, excluded = {}, {}
    for key, output in export_outputs.items():
        name = f"{key or 'None'}"
        try:
            signatures[name] = output.as_signature_def(receiver_tensors)
        except ValueError as e:
            excluded[name] = str(e)
    for alt_name, alt_tensors in (receiver_tensors_alternatives or {}).items():
        for key, output in export_outputs.items():
            name = f"{alt_name or 'None'}:{key or 'None'}"
            try:
                signatures[name] = output.as_signature_def(alt_tensors)
            except ValueError as e:
                excluded[name] = str(e)
    for name, why in sorted(excluded.items()):
        _log.info("Signature %s is excluded from the export: %s", name, why)
    if serving_only:
        signatures = {k: v for k, v in signatures.items() if signature_def_utils.is_valid_signature(v)}
    if not signatures:
        _log.warning("Export includes no signatures!")
    elif sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY not in signatures:
        _log.warning("Export includes no default signature!")
    return signatures
