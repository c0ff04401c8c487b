"""The graph layer: graphs, ops, tensors, static shapes, dtypes and the op registry.

Imports nothing else of dflow except `dflow.errors`: kernels fill the registry, the compiler and
autodiff read it.
"""

from . import dtypes, registry, shape
from .dtypes import DType, as_dtype
from .graph import (
    Graph,
    add_to_collection,
    add_to_collections,
    control_dependencies,
    device,
    get_collection,
    get_collection_ref,
    get_default_graph,
    get_default_session,
    get_seed,
    name_scope,
    reset_default_graph,
    set_random_seed,
)
from .ops import Operation, Tensor, constant_value
from .registry import OpDef, OpState, RegisterGradient, Traits, get_opdef, register_op
from .shape import Dimension, TensorShape, as_shape, broadcast_static_shape, dimension_value

__all__ = [
    "dtypes", "registry", "shape", "DType", "as_dtype", "Graph", "Operation", "Tensor", "OpDef", "OpState", "Traits",
    "RegisterGradient", "get_opdef", "register_op", "Dimension", "TensorShape", "as_shape",
    "broadcast_static_shape", "dimension_value", "constant_value", "add_to_collection",
    "add_to_collections", "control_dependencies", "device", "get_collection", "get_collection_ref",
    "get_default_graph", "get_default_session", "get_seed", "name_scope", "reset_default_graph",
    "set_random_seed",
]
