"""TF1's `tf.saved_model.utils`: TensorInfo from a tensor and back."""

from __future__ import annotations

from ..graph.graph import get_default_graph
from ..graph.ops import Tensor
from ..io.signature import TensorInfo

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]


def build_tensor_info(tensor):
    """The TensorInfo (name, dtype, static shape) of a graph tensor; TypeError for anything else."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"build_tensor_info needs a graph Tensor, got {type(tensor).__name__} {tensor!r}")
    return TensorInfo(tensor.name, tensor.dtype, tensor.shape)


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The tensor of `graph` (the default graph) that `tensor_info` names, under `import_scope` when
    the graph was imported with one. KeyError when the graph has no such tensor, as TF1."""
    if not isinstance(tensor_info, TensorInfo):
        raise TypeError(f"get_tensor_from_tensor_info needs a TensorInfo, got {type(tensor_info).__name__}")
    graph = graph if graph is not None else get_default_graph()
    name = tensor_info.name
    if import_scope:
        name = f"{import_scope.rstrip('/')}/{name}"
    return graph.get_tensor_by_name(name)
