"""`TensorArray` (TF1): a list of tensors written and read by index, usable as a while_loop var.

The array's state is its `flow`: a 0-d object tensor (dtype variant) holding an immutable tuple of
numpy arrays (None where unwritten). Every write makes a new flow, so a TensorArray is a value like
any other loop variable; it is meant for the small states of host-run loops (its ops run in one
task). Gradients flow backwards through the flows (see "gradients" below).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.ops import constant_value
from ..graph.registry import def_grad, not_differentiable, register_op
from ..graph.shape import TensorShape, as_shape
from .array_ops import identity, shape
from .common import apply_op, convert_to_tensor
from .control_ops import no_op

__all__ = ["TensorArray"]


def _box(items):
    a = np.empty((), dtype=object)
    a[()] = tuple(items)
    return a


def _items(flow):
    return flow[()] if isinstance(flow, np.ndarray) else flow


def _flow_infer(inputs, attrs):
    return TensorShape([]), dtypes.variant


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
    if items[i] is not None:  # TF1's TensorArray: one write per element
        raise InvalidArgumentError(None, None, f"Could not write to TensorArray index {i} because it has already "
                                   "been written to.")
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


def _split(flow, value, lengths, dtype, element_shape, dynamic_size):
    value, lengths = np.asarray(value), np.asarray(lengths).reshape(-1)
    if lengths.sum() != value.shape[0]:
        raise InvalidArgumentError(None, None, f"Expected sum of lengths to be equal to values.shape[0], but sum of "
                                   f"lengths is {int(lengths.sum())} and value's shape is: {list(value.shape)}")
    bounds = np.cumsum(lengths)[:-1]
    return _box(np.split(value, bounds) if len(lengths) else [])


def _size(flow, dtype, element_shape, dynamic_size):
    return np.int32(len(_items(flow)))


def _register(name, fn, infer, grad=None):
    eager, lower = _on_host(fn)
    register_op(name, infer, eager=eager, lower=lower, stateful=True)
    if grad is None:
        not_differentiable(name)
    else:
        def_grad(name)(grad)


def _stacked_infer(inputs, attrs):
    return TensorShape([None]).concatenate(attrs["element_shape"]), attrs["dtype"]


# ---- gradients: a gradient TensorArray flows backwards, as TF's --------------------------------------
#
# The gradient of a flow is a flow (dtype variant, so the autodiff engine carries it): a `_Grads`,
# the gradients by index (an index without one has zero gradient). A read's gradient is a gradient
# TensorArray with the read's gradient at its index; a write's gradient takes the gradient at its
# index for the value written and clears it for the array before the write (the write replaced
# that element). A flow read twice gets two gradient flows, summed by AddN index by index
# (`_Grads.__add__`); a ZerosLike of a flow (a 0 in an object array) is the empty gradient. Sums
# over a loop's iterations add in place (`+=`) into an accumulator the loop owns, so a long loop
# reading one element per iteration costs one entry per iteration, not the array's length.


class _Grads:
    """A gradient TensorArray's state: `entries` {index: gradient array}, absent ones zero."""

    def __init__(self, entries=()):
        self.entries = dict(entries)

    def __add__(self, other):
        out = _Grads(self.entries)
        out += other
        return out

    __radd__ = __add__

    def __iadd__(self, other):
        for i, v in _grad_entries(other).items():
            mine = self.entries.get(i)
            self.entries[i] = v if mine is None else mine + v
        return self

    def __repr__(self):
        return f"TensorArrayGradient(indices {sorted(self.entries)})"


def _grad_entries(g):
    g = g[()] if isinstance(g, np.ndarray) else g
    return g.entries if isinstance(g, _Grads) else {}  # 0 or None: no gradient at any index


def _grad_box(entries):
    a = np.empty((), dtype=object)
    a[()] = _Grads(entries)
    return a


def _grad_at(entries, i, shape, dtype):
    v = entries.get(i)
    return np.zeros(tuple(int(d) for d in shape), dtype=dtype.np_dtype) if v is None else v


def _grad_pick(g, index, shape, dtype, **_):
    """The gradient of a written value: the gradient at its index (zeros of its shape if none)."""
    return _grad_at(_grad_entries(g), int(index), shape, dtype)


def _grad_gather(g, indices, shape, dtype, **_):
    entries, shape = _grad_entries(g), tuple(int(d) for d in shape)
    out = np.zeros(shape, dtype=dtype.np_dtype)
    for k, i in enumerate(np.asarray(indices).reshape(-1)):
        v = entries.get(int(i))
        if v is not None:
            out[k] = v
    return out


def _grad_stack(g, shape, dtype, **_):
    return _grad_gather(g, np.arange(int(shape[0])), shape, dtype)


def _grad_concat(g, shape, lengths, dtype, **_):
    entries, lengths = _grad_entries(g), np.asarray(lengths).reshape(-1)
    rest = tuple(int(d) for d in shape[1:])
    parts = [_grad_at(entries, i, (int(n),) + rest, dtype) for i, n in enumerate(lengths)]
    return np.concatenate(parts) if parts else np.zeros((0,) + rest, dtype=dtype.np_dtype)


def _grad_clear(g, indices, **_):
    """The gradient of the array before a write: the written indices' gradients dropped."""
    entries = dict(_grad_entries(g))  # a C-level copy: cheap even for a long sequence's gradient
    for i in np.asarray(indices).reshape(-1):
        entries.pop(int(i), None)
    return _grad_box(entries)


def _grad_scatter(flow, indices, values, **_):
    """A gradient TensorArray with `values[k]` added at `indices[k]`."""
    entries = {}
    for i, v in zip(np.asarray(indices).reshape(-1), np.asarray(values)):
        i = int(i)
        entries[i] = v if i not in entries else entries[i] + v
    return _grad_box(entries)


def _grad_from_read(flow, index, value, **_):
    return _grad_box({int(index): np.asarray(value)})


def _grad_from_stack(flow, values, **_):
    return _grad_box(enumerate(np.asarray(values)))


def _grad_from_concat(flow, value, **_):
    lengths = [v.shape[0] for v in _items(flow)]
    return _grad_box(enumerate(np.split(np.asarray(value), np.cumsum(lengths)[:-1]) if lengths else []))


def _apply(op_type, inputs, op, **extra):
    attrs = {k: op.get_attr(k) for k in ("dtype", "element_shape", "dynamic_size")}
    return apply_op(op_type, inputs, {**attrs, **extra})


def _write_grad(op, g):
    flow, index, value = op.inputs
    return [_apply("TensorArrayGradClear", [g, index], op), None,
            _apply("TensorArrayGradPick", [g, index, shape(value)], op, value_shape=value.shape)]


def _scatter_grad(op, g):
    flow, indices, value = op.inputs
    return [_apply("TensorArrayGradClear", [g, indices], op),
            None, _apply("TensorArrayGradGather", [g, indices, shape(value)], op, value_shape=value.shape)]


def _unstack_grad(op, g):  # the array before an unstack is replaced whole: no gradient
    return [None, _apply("TensorArrayGradStack", [g, shape(op.inputs[1])], op, value_shape=op.inputs[1].shape)]


def _split_grad(op, g):
    flow, value, lengths = op.inputs
    return [None, _apply("TensorArrayGradConcat", [g, shape(value), lengths], op, value_shape=value.shape), None]


def _read_grad(op, g):
    return [_apply("TensorArrayGradFromRead", [op.inputs[0], op.inputs[1], g], op), None]


def _gather_grad(op, g):
    return [_apply("TensorArrayGradScatter", [op.inputs[0], op.inputs[1], g], op), None]


def _stack_grad(op, g):
    return [_apply("TensorArrayGradFromStack", [op.inputs[0], g], op)]


def _concat_grad(op, g):
    return [_apply("TensorArrayGradFromConcat", [op.inputs[0], g], op)]


def _value_infer(inputs, attrs):
    return attrs["value_shape"], attrs["dtype"]


_register("TensorArrayV3", _create, _flow_infer)
_register("TensorArrayWriteV3", _write, _flow_infer, _write_grad)
_register("TensorArrayUnstack", _unstack, _flow_infer, _unstack_grad)
_register("TensorArrayScatterV3", _scatter, _flow_infer, _scatter_grad)
_register("TensorArraySplitV3", _split, _flow_infer, _split_grad)
_register("TensorArrayReadV3", _read, _elem_infer, _read_grad)
_register("TensorArrayStack", _stack, _stacked_infer, _stack_grad)
_register("TensorArrayGatherV3", _gather, _stacked_infer, _gather_grad)
_register("TensorArrayConcatV3", _concat, lambda i, a: (TensorShape([None]).concatenate(a["element_shape"][1:])
                                                        if a["element_shape"].ndims else TensorShape(None), a["dtype"]),
          _concat_grad)
_register("TensorArraySizeV3", _size, lambda i, a: (TensorShape([]), dtypes.int32))
# the gradient TensorArray's ops (first-order gradients only: these have none of their own)
_register("TensorArrayGradPick", _grad_pick, _value_infer)
_register("TensorArrayGradGather", _grad_gather, _value_infer)
_register("TensorArrayGradStack", _grad_stack, _value_infer)
_register("TensorArrayGradConcat", _grad_concat, _value_infer)
_register("TensorArrayGradClear", _grad_clear, _flow_infer)
_register("TensorArrayGradFromRead", _grad_from_read, _flow_infer)
_register("TensorArrayGradScatter", _grad_scatter, _flow_infer)
_register("TensorArrayGradFromStack", _grad_from_stack, _flow_infer)
_register("TensorArrayGradFromConcat", _grad_from_concat, _flow_infer)


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
        self._static_size = None  # the length stack() gives as its static first dimension, when known
        if flow is None:
            if size is None:
                raise ValueError("TensorArray: size must be given when no flow is")
            size = convert_to_tensor(size, dtype=dtypes.int32)
            flow = apply_op("TensorArrayV3", [size], self._attrs(),
                            name=name or tensor_array_name, default_name="TensorArray")
            known = constant_value(size)
            if known is not None and not self._dynamic_size:
                self._static_size = int(known)
        self._flow = flow

    def _attrs(self):
        return {"dtype": self._dtype, "element_shape": self._element_shape, "dynamic_size": self._dynamic_size}

    def _with(self, flow, element_shape=None):
        ta = TensorArray(self._dtype, dynamic_size=self._dynamic_size, flow=flow,
                         element_shape=element_shape if element_shape is not None else self._element_shape,
                         infer_shape=self._infer_shape)
        ta._static_size = self._static_size
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

    @property
    def dynamic_size(self):
        return self._dynamic_size

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
        """The elements stacked; its static shape is [size] + element_shape when the size is a
        known constant and not dynamic (as TF 1.15 gives), else [None] + element_shape."""
        out = apply_op("TensorArrayStack", [self._flow], self._attrs(), name=name)
        if self._static_size is not None and out.shape.ndims is not None:
            out.set_shape([self._static_size] + [None] * (out.shape.ndims - 1))
        elif self._static_size is not None and self._element_shape.ndims is not None:
            out.set_shape([self._static_size] + self._element_shape.as_list())
        return out

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

    def split(self, value, lengths, name=None):
        """Splits `value` along axis 0 into pieces of `lengths`, one per index (a new TensorArray)."""
        value = convert_to_tensor(value, dtype=self._dtype)
        flow = apply_op("TensorArraySplitV3", [self._flow, value, convert_to_tensor(lengths, dtype=dtypes.int64)],
                        self._attrs(), name=name)
        shape = TensorShape([None]).concatenate(value.shape[1:]) if value.shape.ndims else None
        return self._with(flow, shape)

    def identity(self):
        """The same array through an Identity op (for control dependencies, as TF1)."""
        return self._with(identity(self._flow))

    def size(self, name=None):
        return apply_op("TensorArraySizeV3", [self._flow], self._attrs(), name=name)

    def close(self, name=None):
        return no_op(name=name)
