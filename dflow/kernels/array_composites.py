"""TF1 array and arithmetic functions built from existing ops, as TF1's Python builds them:
repeat, shape_n, parallel_stack, batch_gather, required_space_to_batch_paddings, div_no_nan,
saturate_cast, accumulate_n. Their gradients are those of the ops they are made of. One op of its
own: RepeatIndices (repeat's gather indices, np.repeat of a range: a size known only at run time).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import name_scope
from ..graph.ops import Tensor, constant_value
from ..graph.registry import not_differentiable
from ..graph.shape import TensorShape
from .array_ops import reshape, shape, stack
from .common import INT, apply_op, check_dtype, convert_to_tensor
from .creation_ops import ones, zeros
from .creation_ops import range as range_
from .gather_ops import gather
from .manip_ops import add_n, concat
from .math_ops import cast, divide_no_nan, maximum, minimum
from .numpy_kernels import numpy_op
from .reduction_ops import reduce_prod

__all__ = ["repeat", "shape_n", "parallel_stack", "batch_gather", "required_space_to_batch_paddings", "div_no_nan",
           "saturate_cast", "accumulate_n"]

div_no_nan = divide_no_nan  # TF1's top-level spelling of tf.math.divide_no_nan


# ---- repeat ------------------------------------------------------------------------------------


def _repeat_indices(np_, repeats, n):
    repeats, n = np.asarray(repeats), int(n)
    if repeats.ndim > 1 or (repeats.ndim == 1 and repeats.shape[0] not in (1, n)):
        raise InvalidArgumentError(None, None, f"repeat: repeats of shape {list(repeats.shape)} must be a scalar "
                                                f"or of the axis' size {n}")
    if (repeats < 0).any():
        raise InvalidArgumentError(None, None, f"repeat: repeats must be non-negative, got {repeats.tolist()}")
    return np.repeat(np.arange(n, dtype=np.int64), np.broadcast_to(repeats, (n,)))


def _repeat_indices_infer(inputs, attrs):
    check_dtype(inputs[0], INT, "RepeatIndices", "repeats")
    return TensorShape([None]), dtypes.int64


numpy_op("RepeatIndices", _repeat_indices_infer, _repeat_indices,
         lambda repeats, n: [(int(np.broadcast_to(np.asarray(repeats), (int(n),)).sum()),)],
         out_dtypes=lambda *d, **a: [np.dtype(np.int64)], host_inputs=(0, 1))
not_differentiable("RepeatIndices")


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """Each element of `input` along `axis` repeated `repeats` times (a scalar or one count per
    element); axis None repeats the flattened input. ValueError when the counts' size does not
    match the axis (InvalidArgumentError at run time)."""
    with name_scope(name, "Repeat", [input, repeats]):
        x = convert_to_tensor(input, name="input")
        reps = convert_to_tensor(repeats, name="repeats")
        if reps.dtype.is_floating:
            raise TypeError(f"repeat: repeats must be integers, got {reps.dtype.name}")
        if axis is None:
            x, axis = reshape(x, [-1]), 0
        axis = int(axis)
        if x.shape.ndims is not None:
            axis %= max(x.shape.ndims, 1)
            n = x.shape.as_list()[axis]
            m = reps.shape.as_list()[0] if reps.shape.ndims == 1 else None
            if n is not None and m is not None and m not in (1, n):
                raise ValueError(f"Dimensions {n} and {m} are not compatible")
        return gather(x, apply_op("RepeatIndices", [reps, shape(x)[axis]]), axis=axis)


# ---- shapes and stacks --------------------------------------------------------------------------------


def shape_n(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The shapes of a list of tensors (one 1-D `out_type` tensor each), under one name scope."""
    with name_scope(name, "ShapeN", list(input)):
        return [shape(t, out_type=out_type) for t in input]


def parallel_stack(values, name="parallel_stack"):
    """stack(values) along a new first axis; every value's shape must be fully defined at graph
    time (ValueError otherwise, as TF1's ParallelConcat). Unlike TF1, gradients flow through it."""
    with name_scope(name):
        values = [convert_to_tensor(v) for v in values]
        for v in values:
            if not v.shape.is_fully_defined():
                raise ValueError(f"shape attr must be fully defined. for 'parallel_stack' ({v.name!r} has shape "
                                 f"{v.shape})")
        return stack(values, axis=0, name="ParallelConcat")


def batch_gather(params, indices, name=None):
    """gather with batch_dims = rank(indices) - 1: out[b..., i...] = params[b..., indices[b..., i...]],
    built from reshape, range and gather as TF1's _batch_gather. ValueError for indices of unknown rank."""
    with name_scope(name, "BatchGather", [params, indices]):
        indices = convert_to_tensor(indices, name="indices")
        params = convert_to_tensor(params, name="params")
        if indices.shape.ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        bd = indices.shape.ndims - 1
        if bd == 0:
            return gather(params, indices)
        params_shape = shape(params, out_type=indices.dtype)
        indices_shape = shape(indices, out_type=indices.dtype)
        batch_size = reduce_prod(indices_shape[:bd])
        offsets = range_(0, batch_size, dtype=indices.dtype) * params_shape[bd]
        offsets = reshape(offsets, concat([indices_shape[:bd], ones([1], dtype=indices.dtype)], 0))
        flat_params = reshape(params, concat([convert_to_tensor([-1], dtype=indices.dtype), params_shape[bd + 1:]], 0))
        flat = gather(flat_params, reshape(indices + offsets, [-1]))
        return reshape(flat, concat([indices_shape, params_shape[bd + 1:]], 0))


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """(paddings, crops), int32 [M, 2]: the least end padding that makes input_shape +
    base_paddings divisible by block_shape, for space_to_batch_nd and batch_to_space_nd (TF1's
    formula, on values when all three are known when the graph is built)."""
    with name_scope(name, "required_space_to_batch_paddings", [input_shape, block_shape]):
        input_shape = convert_to_tensor(input_shape, dtype=dtypes.int32, name="input_shape")
        block_shape = convert_to_tensor(block_shape, dtype=dtypes.int32, name="block_shape")
        if block_shape.shape.ndims != 1 or not block_shape.shape.is_fully_defined():
            raise ValueError(f"required_space_to_batch_paddings: block_shape must be 1-D of known size, got "
                             f"{block_shape.shape}")
        m = block_shape.shape.as_list()[0]
        if m == 0:
            return zeros([0, 2], dtypes.int32), zeros([0, 2], dtypes.int32)
        input_shape.shape.assert_is_compatible_with([m])
        if base_paddings is not None:
            base_paddings = convert_to_tensor(base_paddings, dtype=dtypes.int32, name="base_paddings")
            base_paddings.shape.assert_is_compatible_with([m, 2])
        else:
            base_paddings = zeros([m, 2], dtypes.int32)
        known = [constant_value(t) for t in (block_shape, input_shape, base_paddings)]
        if all(k is not None for k in known):
            block_shape, input_shape, base_paddings = (np.asarray(k, np.int32) for k in known)
        pad_start = base_paddings[:, 0]
        orig_pad_end = base_paddings[:, 1]
        full_input_shape = input_shape + pad_start + orig_pad_end
        pad_end_extra = (block_shape - full_input_shape % block_shape) % block_shape
        pad_end = orig_pad_end + pad_end_extra
        paddings = stack([stack([pad_start[i], pad_end[i]]) for i in range(m)], name="paddings")
        crops = stack([stack([np.int32(0), pad_end_extra[i]]) for i in range(m)], name="crops")
        return paddings, crops


# ---- casts and sums ------------------------------------------------------------------------------


def saturate_cast(value, dtype, name=None):
    """`value` clipped to `dtype`'s range, then cast (TF1's saturate_cast: no wrap-around)."""
    with name_scope(name, "saturate_cast", [value]) as scope:
        value = convert_to_tensor(value, name="value")
        dtype = as_dtype(dtype)
        src = value.dtype
        if src.min < dtype.min:
            value = maximum(value, convert_to_tensor(dtype.min, dtype=src, name="min"))
        if src.max > dtype.max:
            value = minimum(value, convert_to_tensor(dtype.max, dtype=src, name="max"))
        return cast(value, dtype, name=scope)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):  # noqa: A002
    """The elementwise sum of a list of tensors of one shape and dtype (TF1's accumulate_n, an
    add_n after its checks). ValueError in TF1's words for an empty list or mismatched shapes."""
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and shape")
    inputs = [convert_to_tensor(t) if not isinstance(t, Tensor) else t for t in inputs]
    if not all(t.dtype == inputs[0].dtype for t in inputs):
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and shape")
    merged = TensorShape(None) if shape is None else TensorShape(shape)
    for t in inputs:
        if not merged.is_compatible_with(t.shape):
            raise ValueError(f"Shapes {merged} and {t.shape} are not compatible")
        merged = merged.merge_with(t.shape)
    if tensor_dtype is not None and as_dtype(tensor_dtype) != inputs[0].dtype:
        raise TypeError(f"tensor_dtype is {as_dtype(tensor_dtype).name}, but input is of type "
                        f"{inputs[0].dtype.name}")
    return add_n(inputs, name=name)
