"""The scatter_nd family: `scatter_nd` (ScatterNd), `tensor_scatter_nd_update/add/sub/max/min`
(TensorScatterUpdate/Add/Sub/Max/Min; TF 1.15 spells three of them `tensor_scatter_update/add/sub`)
and the variable updates `scatter_nd_update/add/sub` (ScatterNdUpdate/Add/Sub).

`indices` is int32/int64 of shape [..., k]: each index row addresses a slice of the output's
shape[k:]; `updates` has shape indices.shape[:-1] + shape[k:]. Repeated rows add up (ScatterNd,
the Add/Sub ops) or one of them wins (Update). An index row outside the shape is TF1's
InvalidArgumentError "indices[i] = [...] does not index into shape [...]".

The tensor ops are one whole-array task (`numpy_op`); the variable ops return the variable's new
value like ScatterAdd (state_ops), computed in one task and chunked like the variable. Gradients
follow TF 1.15's array_grad: gather_nd of the incoming gradient for the updates, the gradient as
it is (Add), negated (Sub) or with the scattered slices zeroed (Update) for the tensor.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph.graph import name_scope
from ..graph.ops import constant_value
from ..graph.registry import def_grad, not_differentiable, register_op
from ..graph.shape import TensorShape, unknown_shape
from ..storage.patch import materialized
from .array_ops import reshape, shape, stack
from .common import INT, apply_op, check_dtype, convert_to_tensor
from .creation_ops import range as range_
from .creation_ops import zeros_like
from .data_dependent_ops import gather_nd
from .manip_ops import broadcast_to
from .math_ops import negative
from .numpy_kernels import numpy_op
from .state_ops import _check_ref

__all__ = ["scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
           "tensor_scatter_nd_max", "tensor_scatter_nd_min", "tensor_scatter_update", "tensor_scatter_add",
           "tensor_scatter_sub", "scatter_nd_update", "scatter_nd_add", "scatter_nd_sub", "batch_scatter_update"]

_UFUNC = {"add": np.add, "sub": np.subtract, "max": np.maximum, "min": np.minimum}


def _check_shapes(op_type, indices, updates, out_shape):
    """ValueError when the static shapes cannot scatter: updates must be indices.shape[:-1] + out_shape[k:]."""
    check_dtype(indices, INT, op_type, "indices")
    if indices.shape.ndims == 0:
        raise ValueError(f"{op_type}: indices must be at least rank 1, got a scalar")
    if indices.shape.ndims is None or updates.shape.ndims is None or out_shape.ndims is None:
        return
    k = indices.shape[-1].value
    if k is None:
        return
    if k > out_shape.ndims:
        raise ValueError(f"{op_type}: index rows of depth {k} (indices shape {indices.shape}) cannot index a "
                         f"tensor of rank {out_shape.ndims} (shape {out_shape})")
    want = indices.shape[:-1].concatenate(out_shape[k:])
    if not want.is_compatible_with(updates.shape):
        raise ValueError(f"{op_type}: updates must have shape indices.shape[:-1] + shape[{k}:] = {want}, got "
                         f"{updates.shape} (indices {indices.shape}, shape {out_shape})")


def _scatter_into(out, indices, updates, how, op_type):
    """Applies the scatter to the numpy array `out` in place and returns it."""
    indices = np.asarray(indices)
    k = indices.shape[-1]
    rows = indices.reshape(-1, k).astype(np.int64)
    slices = np.asarray(updates).reshape((rows.shape[0],) + out.shape[k:])
    bad = np.nonzero(((rows < 0) | (rows >= np.asarray(out.shape[:k], np.int64))).any(axis=1))[0]
    if bad.size:
        i = int(bad[0])
        raise InvalidArgumentError(None, None, f"{op_type}: indices{[int(j) for j in np.unravel_index(i, indices.shape[:-1])]} = "
                                   f"{rows[i].tolist()} does not index into shape {list(out.shape)}")
    if k == 0:  # every row addresses the whole tensor
        for s in slices:
            out[...] = s if how == "update" else _UFUNC[how](out, s)
        return out
    coords = tuple(rows.T)
    if how == "update":
        out[coords] = slices
    else:
        _UFUNC[how].at(out, coords, slices)
    return out


# ---- scatter_nd ----------------------------------------------------------------------------------


def _scatter_nd_infer(inputs, attrs):
    indices, updates, shape = inputs
    check_dtype(indices, INT, "ScatterNd", "indices")
    check_dtype(shape, INT, "ScatterNd", "shape")
    known = constant_value(shape)
    if known is not None:
        out = TensorShape([int(d) for d in np.asarray(known).reshape(-1)])
    else:
        out = unknown_shape(shape.shape[0].value if shape.shape.ndims == 1 else None)
    _check_shapes("ScatterNd", indices, updates, out)
    return out, updates.dtype


def _scatter_nd_kernel(np_, indices, updates, shape):
    shape = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    if any(d < 0 for d in shape):
        raise InvalidArgumentError(None, None, f"ScatterNd: the shape must be non-negative, got {list(shape)}")
    return _scatter_into(np.zeros(shape, np.asarray(updates).dtype), indices, updates, "add", "ScatterNd")


numpy_op("ScatterNd", _scatter_nd_infer, _scatter_nd_kernel,
         lambda si, su, shape: [tuple(int(d) for d in np.asarray(shape).reshape(-1))],
         out_dtypes=lambda di, du, ds: [du], host_inputs=(2,))


def scatter_nd(indices, updates, shape, name=None):
    """A zero tensor of `shape` with `updates` added at the index rows `indices` (repeats add up).

    indices: int32/int64 [..., k]; updates: indices.shape[:-1] + shape[k:]; output: `shape`,
    updates' dtype. ValueError for impossible static shapes; InvalidArgumentError at run time for
    an index row outside `shape`.
    """
    indices = convert_to_tensor(indices, name="indices")
    updates = convert_to_tensor(updates, name="updates")
    shape = convert_to_tensor(shape, dtype=indices.dtype if indices.dtype.is_integer else None, name="shape")
    return apply_op("ScatterNd", [indices, updates, shape], name=name, default_name="ScatterNd")


@def_grad("ScatterNd")
def _scatter_nd_grad(op, g):
    return [None, gather_nd(g, op.inputs[0]), None]


# ---- tensor_scatter_nd_* ---------------------------------------------------------------------------


def _tensor_scatter_infer(op_type):
    def infer(inputs, attrs):
        tensor, indices, updates = inputs
        if updates.dtype != tensor.dtype:
            raise TypeError(f"{op_type}: updates have dtype {updates.dtype.name}, the tensor {tensor.dtype.name}")
        _check_shapes(op_type, indices, updates, tensor.shape)
        return tensor.shape, tensor.dtype

    return infer


def _tensor_scatter_kernel(how, op_type):
    def kernel(np_, tensor, indices, updates):
        return _scatter_into(np.array(tensor, copy=True), indices, updates, how, op_type)

    return kernel


_TENSOR_OPS = {"update": "TensorScatterUpdate", "add": "TensorScatterAdd", "sub": "TensorScatterSub",
               "max": "TensorScatterMax", "min": "TensorScatterMin"}
for _how, _op_type in _TENSOR_OPS.items():
    numpy_op(_op_type, _tensor_scatter_infer(_op_type), _tensor_scatter_kernel(_how, _op_type),
             lambda st, si, su: [st])


def _tensor_scatter(how, tensor, indices, updates, name):
    tensor = convert_to_tensor(tensor, name="tensor")
    indices = convert_to_tensor(indices, name="indices")
    updates = convert_to_tensor(updates, dtype=tensor.dtype, name="updates")
    return apply_op(_TENSOR_OPS[how], [tensor, indices, updates], name=name, default_name=_TENSOR_OPS[how])


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of `tensor` with the slices at the index rows `indices` replaced by `updates`
    (indices [..., k], updates indices.shape[:-1] + tensor.shape[k:]); errors as `scatter_nd`."""
    return _tensor_scatter("update", tensor, indices, updates, name)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """A copy of `tensor` with `updates` added at the index rows `indices` (repeats add up)."""
    return _tensor_scatter("add", tensor, indices, updates, name)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """A copy of `tensor` with `updates` subtracted at the index rows `indices`."""
    return _tensor_scatter("sub", tensor, indices, updates, name)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """A copy of `tensor` holding the elementwise maximum with `updates` at the index rows."""
    return _tensor_scatter("max", tensor, indices, updates, name)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """A copy of `tensor` holding the elementwise minimum with `updates` at the index rows."""
    return _tensor_scatter("min", tensor, indices, updates, name)


tensor_scatter_update = tensor_scatter_nd_update  # TF 1.15's names
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub


@def_grad("TensorScatterUpdate")
def _tensor_scatter_update_grad(op, g):
    indices, updates = op.inputs[1], op.inputs[2]
    return [tensor_scatter_nd_update(g, indices, zeros_like(updates)), None, gather_nd(g, indices)]


@def_grad("TensorScatterAdd")
def _tensor_scatter_add_grad(op, g):
    return [g, None, gather_nd(g, op.inputs[1])]


@def_grad("TensorScatterSub")
def _tensor_scatter_sub_grad(op, g):
    return [g, None, negative(gather_nd(g, op.inputs[1]))]


# ---- scatter_nd_update/add/sub on variables --------------------------------------------------------


def _variable_scatter_infer(op_type):
    tensor_infer = _tensor_scatter_infer(op_type)

    def infer(inputs, attrs):
        ref = inputs[0]
        if inputs[2].dtype != ref.dtype:
            raise TypeError(f"{op_type} to variable {ref.op.name!r}: updates have dtype {inputs[2].dtype.name}, "
                            f"the variable {ref.dtype.name}")
        return tensor_infer(inputs, attrs)

    return infer


def _variable_scatter_eager(how, op_type):
    def kernel(xp, old, indices, updates):
        new = _scatter_into(np.array(materialized(old), copy=True), indices, updates, how, op_type)
        return xp.asarray(new)

    return kernel


def _variable_scatter_lower(how, op_type):
    def lower(ctx, old, indices, updates):
        old = ctx.as_dask(old)
        out = ctx.delayed(_variable_task, how, op_type, old, ctx.as_dask(indices), ctx.as_dask(updates),
                          shape=old.shape, dtype=old.dtype, meta=old._meta)
        return out.rechunk(old.chunks)

    return lower


def _variable_task(how, op_type, old, indices, updates):
    return _scatter_into(np.array(old, copy=True), indices, updates, how, op_type)


_VARIABLE_OPS = {"update": "ScatterNdUpdate", "add": "ScatterNdAdd", "sub": "ScatterNdSub", "max": "ScatterNdMax",
                 "min": "ScatterNdMin"}  # (max, min: only the Variable methods `scatter_nd_max/min`, as TF1)
for _how, _op_type in _VARIABLE_OPS.items():
    register_op(_op_type, _variable_scatter_infer(_op_type), eager=_variable_scatter_eager(_how, _op_type),
                lower=_variable_scatter_lower(_how, _op_type), stateful=True, state="update")
not_differentiable(*_VARIABLE_OPS.values(), "TensorScatterMax", "TensorScatterMin")


def variable_scatter_nd(how, ref, indices, updates, name, fn=None):
    """The ScatterNd{Update,Add,Sub,Max,Min} op of `how` on variable `ref`."""
    ref = _check_ref(ref, fn or f"scatter_nd_{how}")
    indices = convert_to_tensor(indices, name="indices")
    updates = convert_to_tensor(updates, dtype=ref.dtype, name="updates")
    return apply_op(_VARIABLE_OPS[how], [ref, indices, updates], name=name, default_name=_VARIABLE_OPS[how])


def scatter_nd_update(ref, indices, updates, use_locking=True, name=None):
    """Sets the slices of variable `ref` at the index rows `indices` to `updates`; returns the new value."""
    return variable_scatter_nd("update", ref, indices, updates, name, "scatter_nd_update")


def scatter_nd_add(ref, indices, updates, use_locking=False, name=None):
    """Adds `updates` to variable `ref` at the index rows `indices` (repeats add up); returns the new value."""
    return variable_scatter_nd("add", ref, indices, updates, name, "scatter_nd_add")


def scatter_nd_sub(ref, indices, updates, use_locking=False, name=None):
    """Subtracts `updates` from variable `ref` at the index rows `indices`; returns the new value."""
    return variable_scatter_nd("sub", ref, indices, updates, name, "scatter_nd_sub")


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """Sets `ref[i..., indices[i..., j]]` to `updates[i..., j]` along ref's last batch axis: the
    index of each update is prefixed by its batch position (TF 1.15's batch_scatter_update, a
    ScatterNdUpdate). `indices` has ref's leading batch dims (rank(indices) >= 1)."""
    ref = _check_ref(ref, "batch_scatter_update")
    with name_scope(name):
        indices = convert_to_tensor(indices, name="indices")
        updates = convert_to_tensor(updates, dtype=ref.dtype, name="updates")
        check_dtype(indices, INT, "batch_scatter_update", "indices")
        nd = indices.shape.ndims
        if nd is None:
            raise ValueError(f"batch_scatter_update: indices {indices.name!r} must have a known rank")
        if nd == 0:
            raise ValueError(f"batch_scatter_update: indices {indices.name!r} must be at least rank 1, got a scalar")
        if ref.shape.ndims is not None and ref.shape.ndims < nd:
            raise ValueError(f"batch_scatter_update: indices of rank {nd} need a variable of rank >= {nd}, got "
                             f"{ref.op.name!r} of shape {ref.shape}")
        # the batch positions of every index, stacked before it: [..., nd]
        dims = shape(indices, out_type=indices.dtype)
        grids = [broadcast_to(reshape(range_(dims[i], dtype=indices.dtype), [-1 if j == i else 1 for j in range(nd)]),
                              dims) for i in range(nd - 1)]
        full = stack(grids + [indices], axis=-1)
        return variable_scatter_nd("update", ref, full, updates, None, "batch_scatter_update")
