"""`tf.summary.scalar`, `tensor_summary`, `text`, `merge` and `merge_all`: registered ops whose
output is a serialized `Summary` (a scalar string tensor), with TF1's op types, names, tags and
errors. Each runs in one task on Dask (its inputs are scalars or small tensors).
"""

from __future__ import annotations

from google.protobuf.message import DecodeError
from tensorboard.compat.proto import summary_pb2

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.graph import get_collection, name_scope
from ..graph.keys import GraphKeys
from ..graph.ops import Tensor
from ..graph.registry import not_differentiable, register_op
from ..kernels.common import REAL, apply_op, check_dtype, constant, convert_to_tensor
from .common import (
    collect,
    host,
    lower_whole,
    scalar_string_infer,
    serialized,
    summary_of,
    summary_scope,
    tag_text,
    tensor_proto,
)

__all__ = ["scalar", "tensor_summary", "text", "merge", "merge_all"]


# ---- ScalarSummary ---------------------------------------------------------------------------------


def _scalar_infer(inputs, attrs):
    tags, values = inputs
    check_dtype(values, REAL, "ScalarSummary", arg="values")
    return scalar_string_infer("ScalarSummary", (0,))(inputs, attrs)


def _scalar_eager(xp, tags, values):
    tags, values = host(tags), host(values)
    if tags.shape != values.shape:
        raise InvalidArgumentError(None, None, f"tags and values are not the same shape: {list(tags.shape)} != "
                                   f"{list(values.shape)} (tag '{tag_text(tags.reshape(-1)[:1])}')")
    out = [summary_pb2.Summary.Value(tag=tag_text(t), simple_value=float(v))
           for t, v in zip(tags.reshape(-1), values.reshape(-1))]
    return serialized(summary_of(out))


register_op("ScalarSummary", _scalar_infer, eager=_scalar_eager, lower=lower_whole(_scalar_eager))


def scalar(name, tensor, collections=None, family=None):
    """A summary of one real number (TF1's `tf.summary.scalar`): the tag is the name scope (with
    `family` in front), the value the tensor's, as a float. Added to `collections` (default
    [GraphKeys.SUMMARIES]). A tensor that is not a scalar fails the run (InvalidArgumentError)."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tensor = convert_to_tensor(tensor, name="values")
        tags = constant(tag, name="tags")
        val = apply_op("ScalarSummary", [tags, tensor], name=scope)
        collect(val, collections, [GraphKeys.SUMMARIES])
    return val


# ---- TensorSummaryV2 (tensor_summary, text) -----------------------------------------------------


def _tensor_infer(inputs, attrs):
    return scalar_string_infer("TensorSummaryV2", (0, 2))(inputs, attrs)


def _tensor_eager(xp, tag, tensor, serialized_metadata):
    metadata = summary_pb2.SummaryMetadata.FromString(host(serialized_metadata).reshape(()).item())
    value = summary_pb2.Summary.Value(tag=tag_text(tag), tensor=tensor_proto(host(tensor)), metadata=metadata)
    return serialized(summary_of([value]))


register_op("TensorSummaryV2", _tensor_infer, eager=_tensor_eager, lower=lower_whole(_tensor_eager))


def tensor_summary(name, tensor, summary_description=None, collections=None, summary_metadata=None, family=None,
                   display_name=None):
    """A summary holding a whole tensor (TF1's `tf.summary.tensor_summary`), with the given
    `SummaryMetadata` (plugin data, description, display name)."""
    if summary_metadata is None:
        summary_metadata = summary_pb2.SummaryMetadata()
    if summary_description is not None:
        summary_metadata.summary_description = summary_description
    if display_name is not None:
        summary_metadata.display_name = display_name
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tensor = convert_to_tensor(tensor, name="tensor")
        inputs = [constant(tag, name="tag"), tensor,
                  constant(summary_metadata.SerializeToString(), name="serialized_summary_metadata")]
        val = apply_op("TensorSummaryV2", inputs, name=scope)
        collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def text(name, tensor, collections=None):
    """A summary of a string tensor that TensorBoard's text dashboard shows (TF1's
    `tf.summary.text`; markdown is rendered there). ValueError for a non-string tensor."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype != dtypes.string:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got {tensor.dtype!r}")
    metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name=name, tensor=tensor, summary_metadata=metadata, collections=collections)


# ---- MergeSummary -----------------------------------------------------------------------------------


def _merge_infer(inputs, attrs):
    if not inputs:
        raise ValueError("MergeSummary: expects at least one input")
    return scalar_string_infer("MergeSummary", range(len(inputs)))(inputs, attrs)


def _merge_eager(xp, *inputs):
    out, seen = summary_pb2.Summary(), set()
    for x in inputs:
        for data in host(x).reshape(-1):
            try:
                one = summary_pb2.Summary.FromString(data if isinstance(data, bytes) else str(data).encode())
            except DecodeError:
                raise InvalidArgumentError(None, None, "Could not parse one of the summary inputs") from None
            for v in one.value:
                if v.tag and v.tag in seen:
                    raise InvalidArgumentError(None, None, f"Duplicate tag {v.tag} found in summary inputs")
                seen.add(v.tag)
                out.value.add().CopyFrom(v)
    return serialized(out)


register_op("MergeSummary", _merge_infer, eager=_merge_eager, lower=lower_whole(_merge_eager))


def merge(inputs, collections=None, name=None):
    """One summary holding the values of `inputs` (string tensors of serialized summaries), in
    their order (TF1's `tf.summary.merge`); a tag found twice fails the run. Added to
    `collections` (default none)."""
    if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)):
        raise TypeError(f"merge: inputs must be a list of string tensors, got {type(inputs).__name__}")
    with name_scope(name, "Merge", inputs):
        tensors = [convert_to_tensor(t) for t in inputs]
        val = apply_op("MergeSummary", tensors, name=name, default_name="MergeSummary")
        collect(val, collections, [])
    return val


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """The merge of every summary in collection `key` (those whose name matches `scope`, if
    given), or None if there is none (TF1's `tf.summary.merge_all`)."""
    summary_ops = get_collection(key, scope=scope)
    if not summary_ops:
        return None
    return merge(summary_ops, name=name)


not_differentiable("ScalarSummary", "TensorSummaryV2", "MergeSummary")
