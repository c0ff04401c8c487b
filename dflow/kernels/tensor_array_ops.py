"""`TensorArray` (TF1): a list of tensors written and read by index, usable as a while_loop var.

The array's state is its `flow`: a 0-d object tensor holding an immutable tuple of numpy arrays
(None where unwritten). Every write makes a new flow, so a TensorArray is a value like any other
loop variable; it is meant for the small states of host-run loops (its ops run in one task).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape, as_shape
from .common import apply_op, convert_to_tensor

__all__ = ["TensorArray"]


def _box(items):
    a = np.empty((), dtype=object)
    a[()] = tuple(items)
    return a


def _items(flow):
    return flow[()] if isinstance(flow, np.ndarray) else flow


def _flow_infer(inputs, attrs):
    return TensorShape([]), dtypes.string


def _elem_infer(inputs, attrs):
    return attrs["element_shape"], attrs["dtype"]


def _on_host(fn):
    """An eager kernel and a lowering running it in one task (TensorArray states are small)."""
    def lower(ctx, *args, **attrs):
        out = ctx.op.outputs[0]
        if out.shape.ndims is None:
            raise InvalidArgumentError(None, ctx.op, f"{ctx.op.type} op {ctx.op.name!r}: on the Dask path the "
                                       "element rank must be known; pass element_shape= to the TensorArray")
        shape = tuple(np.nan if d is None else d for d in out.shape.as_list())  # unknown: sized in the run
        return ctx.delayed(_call, fn, attrs, *args, shape=shape, dtype=out.dtype.np_dtype)

    return (lambda xp, *args, **attrs: fn(*args, **attrs)), lower


def _call(fn, attrs, *args):
    return fn(*args, **attrs)


def _create(size, dtype, element_shape, dynamic_size):
    return _box([None] * int(size))


def _write(flow, index, value, dtype, element_shape, dynamic_size):
    items = list(_items(flow))
    i = int(index)
    if i < 0 or (i >= len(items) and not dynamic_size):
        raise InvalidArgumentError(None, None, f"Tried to write to index {i} but array is not resizeable and size "
                                   f"is: {len(items)}")
    items.extend([None] * (i + 1 - len(items)))
    items[i] = np.asarray(value, dtype=dtype.np_dtype)
    return _box(items)


def _read(flow, index, dtype, element_shape, dynamic_size):
    items = _items(flow)
    i = int(index)
    if not 0 <= i < len(items):
        raise InvalidArgumentError(None, None, f"Tried to read from index {i} but array size is: {len(items)}")
    if items[i] is None:
        raise InvalidArgumentError(None, None, f"Could not read from TensorArray index {i} because it has not yet "
                                   "been written to.")
    return items[i]


def _stack(flow, dtype, element_shape, dynamic_size):
    items = _items(flow)
    for i, v in enumerate(items):
        if v is None:
            raise InvalidArgumentError(None, None, f"Could not read from TensorArray index {i} because it has not "
                                       "yet been written to.")
    if not items:
        shape = element_shape.as_list() if element_shape.is_fully_defined() else [0]
        return np.zeros([0] + list(shape), dtype=dtype.np_dtype)
    return np.stack(items)


def _gather(flow, indices, dtype, element_shape, dynamic_size):
    return np.stack([_read(flow, i, dtype, element_shape, dynamic_size) for i in np.asarray(indices).reshape(-1)])


def _concat(flow, dtype, element_shape, dynamic_size):
    return np.concatenate([_read(flow, i, dtype, element_shape, dynamic_size) for i in range(len(_items(flow)))])


def _unstack(flow, value, dtype, element_shape, dynamic_size):
    return _box(list(np.asarray(value)))


def _scatter(flow, indices, value, dtype, element_shape, dynamic_size):
    out = flow
    for i, v in zip(np.asarray(indices).reshape(-1), np.asarray(value)):
        out = _write(out, i, v, dtype, element_shape, dynamic_size)
    return out


def _size(flow, dtype, element_shape, dynamic_size):
    return np.int32(len(_items(flow)))


def _register(name, fn, infer):
    eager, lower = _on_host(fn)
    register_op(name, infer, eager=eager, lower=lower, stateful=True)
    not_differentiable(name)


_register("TensorArrayV3", _create, _flow_infer)
_register("TensorArrayWriteV3", _write, _flow_infer)
_register("TensorArrayUnstack", _unstack, _flow_infer)
_register("TensorArrayScatterV3", _scatter, _flow_infer)
_register("TensorArrayReadV3", _read, _elem_infer)
_register("TensorArrayStack", _stack, lambda i, a: (TensorShape([None]).concatenate(a["element_shape"]), a["dtype"]))
_register("TensorArrayGatherV3", _gather,
          lambda i, a: (TensorShape([None]).concatenate(a["element_shape"]), a["dtype"]))
_register("TensorArrayConcatV3", _concat, lambda i, a: (TensorShape([None]).concatenate(a["element_shape"][1:])
                                                        if a["element_shape"].ndims else TensorShape(None), a["dtype"]))
_register("TensorArraySizeV3", _size, lambda i, a: (TensorShape([]), dtypes.int32))


class TensorArray:
    """A list of `dtype` tensors indexed by int (TF1's `tf.TensorArray`); each write returns a new
    TensorArray (use the returned one, as in TF1)."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        self._dtype = as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._element_shape = as_shape(element_shape) if element_shape is not None else TensorShape(None)
        self._infer_shape = infer_shape
        if flow is None:
            if size is None:
                raise ValueError("TensorArray: size must be given when no flow is")
            flow = apply_op("TensorArrayV3", [convert_to_tensor(size, dtype=dtypes.int32)], self._attrs(),
                            name=name or tensor_array_name, default_name="TensorArray")
        self._flow = flow

    def _attrs(self):
        return {"dtype": self._dtype, "element_shape": self._element_shape, "dynamic_size": self._dynamic_size}

    def _with(self, flow, element_shape=None):
        ta = TensorArray(self._dtype, dynamic_size=self._dynamic_size, flow=flow,
                         element_shape=element_shape if element_shape is not None else self._element_shape,
                         infer_shape=self._infer_shape)
        return ta

    @property
    def flow(self):
        return self._flow

    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self):
        return self._element_shape

    def _merge_shape(self, value):
        shape = self._element_shape
        if self._infer_shape and value.shape.ndims is not None:
            if not shape.is_compatible_with(value.shape):
                raise ValueError(f"TensorArray: inconsistent shapes: saw {value.shape} but expected {shape}")
            shape = shape.merge_with(value.shape)
        return shape

    def write(self, index, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        shape = self._merge_shape(value)
        flow = apply_op("TensorArrayWriteV3", [self._flow, convert_to_tensor(index, dtype=dtypes.int32), value],
                        self._attrs(), name=name)
        return self._with(flow, shape)

    def read(self, index, name=None):
        return apply_op("TensorArrayReadV3", [self._flow, convert_to_tensor(index, dtype=dtypes.int32)],
                        self._attrs(), name=name)

    def stack(self, name=None):
        return apply_op("TensorArrayStack", [self._flow], self._attrs(), name=name)

    def gather(self, indices, name=None):
        return apply_op("TensorArrayGatherV3", [self._flow, convert_to_tensor(indices, dtype=dtypes.int32)],
                        self._attrs(), name=name)

    def concat(self, name=None):
        return apply_op("TensorArrayConcatV3", [self._flow], self._attrs(), name=name)

    def unstack(self, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        shape = value.shape[1:] if value.shape.ndims else TensorShape(None)
        flow = apply_op("TensorArrayUnstack", [self._flow, value], self._attrs(), name=name)
        return self._with(flow, shape)

    def scatter(self, indices, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        flow = apply_op("TensorArrayScatterV3", [self._flow, convert_to_tensor(indices, dtype=dtypes.int32), value],
                        self._attrs(), name=name)
        return self._with(flow, value.shape[1:] if value.shape.ndims else None)

    def size(self, name=None):
        return apply_op("TensorArraySizeV3", [self._flow], self._attrs(), name=name)

    def close(self, name=None):
        from .control_ops import no_op

        return no_op(name=name)
