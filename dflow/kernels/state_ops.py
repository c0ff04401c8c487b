"""State ops: variables, assigns and scatters (see dflow/schedule/state.py for their semantics).

A `VariableV2` op outputs the variable's handle. Every consumer of the handle sees the value the
compiler resolves for it (start of run, or the latest assign ordered before it), so these kernels
are pure functions: `Assign` returns its value, `AssignAdd` returns old + delta, and the Session
commits the last assign's output when the run succeeds.
"""

from __future__ import annotations

import numpy as np

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.evaluate import namespace
from ..graph.graph import get_default_graph
from ..graph.ops import Tensor
from ..graph.registry import OpState, register_op
from ..graph.shape import TensorShape, as_shape, broadcast_static_shape, check_static_size
from ..storage.patch import materialized, patched
from .common import apply_op, convert_to_tensor, ints_in_range

__all__ = ["assign", "assign_add", "assign_sub", "scatter_update", "scatter_add", "scatter_sub",
           "scatter_mul", "scatter_div", "scatter_max", "scatter_min", "is_variable_initialized", "count_up_to"]


def _variable_infer(inputs, attrs):
    check_static_size(attrs["shape"], "op VariableV2")
    return attrs["shape"], attrs["dtype"]


def _variable_eager(xp, ctx, shape, dtype, chunks=None):
    return ctx.run_param(("variable", ctx.op.name))


def _variable_lower(ctx, shape, dtype, chunks=None):
    # a variable held on disk is read in its stored chunks (one read task per chunk)
    chunks = ctx.options.storage.layout(shape.as_list(), dtype.np_dtype) or chunks
    return ctx.run_param(("variable", ctx.op.name), shape.as_list(), dtype.np_dtype, chunks)


register_op("VariableV2", _variable_infer, eager=_variable_eager, lower=_variable_lower,
            run_state=True, stateful=True, state="variable")


def variable_op(shape, dtype, name=None, chunks=None):
    """A variable's handle tensor (used by `dflow.Variable`); `shape` must be fully defined."""
    shape = as_shape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"Variable {name!r}: shape {shape} must be fully defined")
    check_static_size(shape, f"Variable {(name or 'Variable').rstrip('/')!r}")
    return apply_op("VariableV2", [], {"shape": as_shape(shape), "dtype": as_dtype(dtype), "chunks": chunks},
                    name=name, default_name="Variable", graph=get_default_graph())


def _check_ref(ref, op_type):
    ref = getattr(ref, "_handle", ref)
    ref = convert_to_tensor(ref)
    if ref.op.op_def.state is not OpState.VARIABLE:
        raise TypeError(f"{op_type}: 'ref' must be a variable, got tensor {ref.name!r} of op type {ref.op.type}")
    return ref


def _assign_infer(inputs, attrs):
    ref, value = inputs
    if value.dtype != ref.dtype:
        raise TypeError(f"Assign to variable {ref.op.name!r}: value has dtype {value.dtype.name}, the variable "
                        f"{ref.dtype.name}")
    if attrs.get("validate_shape", True):
        if not ref.shape.is_compatible_with(value.shape):
            raise ValueError(f"Assign to variable {ref.op.name!r}: shape {value.shape} is incompatible with the "
                             f"variable's shape {ref.shape}")
        return ref.shape.merge_with(value.shape), ref.dtype
    return value.shape, ref.dtype


def _assign_eager(xp, old, value, validate_shape=True, var_shape=None):
    # `old` is None: a plain assign does not read the value it overwrites.
    if validate_shape and tuple(value.shape) != tuple(var_shape):
        raise ValueError(f"shape {tuple(value.shape)} does not match the variable's {tuple(var_shape)}")
    return value


def _assign_lower(ctx, old, value, validate_shape=True, var_shape=None):
    if validate_shape and tuple(np.shape(value)) != tuple(var_shape):
        raise ValueError(f"shape {tuple(np.shape(value))} does not match the variable's {tuple(var_shape)}")
    return ctx.as_dask(value)


register_op("Assign", _assign_infer, eager=_assign_eager, lower=_assign_lower, stateful=True, state="assign")


def _update_infer(op_type):
    def infer(inputs, attrs):
        ref, delta = inputs
        if delta.dtype != ref.dtype:
            raise TypeError(f"{op_type} to variable {ref.op.name!r}: value has dtype {delta.dtype.name}, the "
                            f"variable {ref.dtype.name}")
        try:
            out = broadcast_static_shape(ref.shape, delta.shape)
        except ValueError:
            out = None
        if out is None or (out.ndims is not None and ref.shape.ndims is not None and not
                           out.is_compatible_with(ref.shape)):
            raise ValueError(f"{op_type} to variable {ref.op.name!r}: shape {delta.shape} does not broadcast to "
                             f"the variable's shape {ref.shape}")
        return ref.shape, ref.dtype

    return infer


register_op("AssignAdd", _update_infer("AssignAdd"), eager=lambda xp, old, delta: old + delta,
            elementwise=True, stateful=True, state="update")
register_op("AssignSub", _update_infer("AssignSub"), eager=lambda xp, old, delta: old - delta,
            elementwise=True, stateful=True, state="update")


def _value_for(ref, value, op_type):
    """`value` as the tensor an assign of `ref` takes; a tensor of another dtype is TF1's TypeError."""
    if isinstance(value, Tensor) and value.dtype.base_dtype != ref.dtype.base_dtype:
        raise TypeError(f"Input 'value' of '{op_type}' Op has type {value.dtype.name} that does not match type "
                        f"{ref.dtype.base_dtype.name} of argument 'ref' ({value.name!r} vs {ref.name!r}).")
    return convert_to_tensor(value, dtype=ref.dtype)


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Assigns `value` to variable `ref`; returns the new value. Committed when the run succeeds."""
    ref = _check_ref(ref, "assign")
    value = _value_for(ref, value, "Assign")
    validate = True if validate_shape is None else bool(validate_shape)
    return apply_op("Assign", [ref, value], {"validate_shape": validate, "var_shape": tuple(ref.shape.as_list())},
                    name=name)


def assign_add(ref, value, use_locking=None, name=None):
    """Adds `value` to variable `ref`; returns the new value."""
    ref = _check_ref(ref, "assign_add")
    return apply_op("AssignAdd", [ref, _value_for(ref, value, "AssignAdd")], name=name)


def assign_sub(ref, value, use_locking=None, name=None):
    """Subtracts `value` from variable `ref`; returns the new value."""
    ref = _check_ref(ref, "assign_sub")
    return apply_op("AssignSub", [ref, _value_for(ref, value, "AssignSub")], name=name)


# ---- scatters --------------------------------------------------------------------------------


def _scatter_infer(op_type):
    def infer(inputs, attrs):
        ref, indices, updates = inputs
        if not indices.dtype.is_integer:
            raise TypeError(f"{op_type}: indices must be integers, got {indices.dtype.name}")
        if updates.dtype != ref.dtype:
            raise TypeError(f"{op_type} to variable {ref.op.name!r}: updates have dtype {updates.dtype.name}, "
                            f"the variable {ref.dtype.name}")
        if ref.shape.ndims is not None and indices.shape.ndims is not None and updates.shape.ndims is not None:
            want = indices.shape.concatenate(ref.shape[1:])
            if not want.is_compatible_with(updates.shape) and updates.shape.ndims != 0:
                raise ValueError(f"{op_type} to variable {ref.op.name!r}: updates shape {updates.shape} must be "
                                 f"indices.shape + ref.shape[1:] = {want}")
        return ref.shape, ref.dtype

    return infer


def _scatter_rows(xp, old, indices, updates, sign):
    """(flat indices, rows) of a scatter, checked: IndexError naming an index out of range. Rows
    are negated for `sign` -1 (0: left as they are, for a RowPatch that subtracts them)."""
    n = old.shape[0]
    # (a 1-D index array as it is: two updates by one ids tensor share it, and a commit sorts it once)
    idx = indices if type(indices) is np.ndarray and indices.ndim == 1 else np.asarray(indices).reshape(-1)
    if not ints_in_range(idx, n):
        bad = idx[(idx < 0) | (idx >= n)][0]
        raise IndexError(f"index {int(bad)} is out of range [0, {n})")
    rows_shape = (idx.size,) + tuple(old.shape[1:])
    if np.shape(updates) == rows_shape:  # (an optimizer's sparse update: rows as they are)
        rows = updates
    else:
        rows = xp.reshape(xp.broadcast_to(updates, tuple(np.shape(indices)) + tuple(old.shape[1:])), rows_shape)
    return idx, (-rows if sign < 0 else rows)


def _scatter_kernel(add, sign=1):
    # The new value is the old one with rows changed: a RowPatch (storage/patch.py), which the
    # session commits in place and any other reader gets materialized, so a sparse update never
    # copies the whole variable.
    def kernel(xp, old, indices, updates):
        idx, rows = _scatter_rows(xp, materialized(old), indices, updates, 0 if add else sign)
        return patched(old, idx, rows, add, sign)  # (ScatterSub: the patch subtracts, no negated copy)

    return kernel


def _scatter_lower(add, sign=1):
    def lower(ctx, old, indices, updates):
        # The whole new value (only computed if something reads it as data) runs on the whole
        # variable in one task, then is re-chunked like the variable; the commit takes the rows
        # alone (`ctx.row_patch`) where the session can apply them in place.
        old = ctx.as_dask(old)
        idx_rows = ctx.delayed(_rows_task, ctx.as_dask(indices), ctx.as_dask(updates), tuple(old.shape), sign,
                               shape=(), dtype=object)
        ctx.row_patch(idx_rows, add)
        out = ctx.delayed(_scatter_task, add, sign, old, ctx.as_dask(indices), ctx.as_dask(updates),
                          shape=old.shape, dtype=old.dtype, meta=old._meta)
        return out.rechunk(old.chunks)

    return lower


def _rows_task(indices, updates, shape, sign):
    return _scatter_rows(namespace((updates,)), _Shaped(shape), indices, updates, sign)


class _Shaped:
    """A stand-in for the old value where only its shape is needed (the rows of a patch)."""

    def __init__(self, shape):
        self.shape = shape


def _scatter_task(add, sign, old, indices, updates):
    xp = namespace((old,))
    return _scatter_kernel(add, sign)(xp, old, indices, updates).materialize()


for _name, _add, _sign in (("ScatterUpdate", False, 1), ("ScatterAdd", True, 1), ("ScatterSub", True, -1)):
    register_op(_name, _scatter_infer(_name), eager=_scatter_kernel(_add, _sign), lower=_scatter_lower(_add, _sign),
                stateful=True, state="update", row_patch=True)


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    """Sets rows `indices` of variable `ref` to `updates`; returns the new value."""
    ref = _check_ref(ref, "scatter_update")
    indices = convert_to_tensor(indices)
    updates = convert_to_tensor(updates, dtype=ref.dtype)
    return apply_op("ScatterUpdate", [ref, indices, updates], name=name)


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    """Subtracts `updates` from rows `indices` of variable `ref` (repeated indices accumulate)."""
    ref = _check_ref(ref, "scatter_sub")
    indices = convert_to_tensor(indices)
    updates = convert_to_tensor(updates, dtype=ref.dtype)
    return apply_op("ScatterSub", [ref, indices, updates], name=name)


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    """Adds `updates` to rows `indices` of variable `ref` (repeated indices accumulate)."""
    ref = _check_ref(ref, "scatter_add")
    indices = convert_to_tensor(indices)
    updates = convert_to_tensor(updates, dtype=ref.dtype)
    return apply_op("ScatterAdd", [ref, indices, updates], name=name)


# ---- scatters that combine a row with its updates: ScatterMul/Div/Max/Min ----------------------
# The new rows depend on the old ones, so the patch (storage/patch.py) sets the rows each index
# names, once, to the old row combined with every update for it in order (TF1 applies repeated
# indices one after the other). The rows are computed from the old value in one task.


def _divide(a, b):
    """TF's `/` of the element type: true division for floats, truncation toward zero for ints."""
    if a.dtype.kind not in "iu":
        return a / b
    q = a // b
    return q + ((q < 0) & (q * b != a))


_COMBINE = {"ScatterMul": np.multiply, "ScatterDiv": _divide, "ScatterMax": np.maximum, "ScatterMin": np.minimum}


def _occurrence(inverse):
    """For each position, how many earlier positions hold the same value (0 for the first)."""
    order = np.argsort(inverse, kind="stable")
    s = inverse[order]
    pos = np.arange(s.size)
    start = np.maximum.accumulate(np.where(np.r_[True, s[1:] != s[:-1]] if s.size else s.astype(bool), pos, 0))
    rank = np.empty(s.size, np.int64)
    rank[order] = pos - start
    return rank


def _combined_rows(xp, old, indices, updates, op_type):
    """(unique row indices, their new rows) of a combining scatter; IndexError out of range."""
    idx, rows = _scatter_rows(xp, old, indices, updates, 1)
    uniq, inverse = np.unique(np.asarray(idx), return_inverse=True)
    cur = old[uniq]  # (a copy: fancy indexing)
    fn, rank = _COMBINE[op_type], _occurrence(inverse.reshape(-1))
    for k in range(int(rank.max()) + 1 if rank.size else 0):
        sel = np.nonzero(rank == k)[0]
        at = inverse.reshape(-1)[sel]
        cur[at] = fn(cur[at], rows[sel])
    return uniq, cur


def _combine_kernel(op_type):
    def kernel(xp, old, indices, updates):
        old = materialized(old)
        uniq, cur = _combined_rows(xp, old, indices, updates, op_type)
        return patched(old, uniq, cur, False)

    return kernel


def _combine_lower(op_type):
    def lower(ctx, old, indices, updates):
        old = ctx.as_dask(old)
        idx_rows = ctx.delayed(_combined_task, op_type, old, ctx.as_dask(indices), ctx.as_dask(updates),
                               shape=(), dtype=object)
        ctx.row_patch(idx_rows, False)
        out = ctx.delayed(_combine_whole_task, op_type, old, ctx.as_dask(indices), ctx.as_dask(updates),
                          shape=old.shape, dtype=old.dtype, meta=old._meta)
        return out.rechunk(old.chunks)

    return lower


def _combined_task(op_type, old, indices, updates):
    return _combined_rows(namespace((old,)), old, indices, updates, op_type)


def _combine_whole_task(op_type, old, indices, updates):
    return _combine_kernel(op_type)(namespace((old,)), old, indices, updates).materialize()


for _name in _COMBINE:
    register_op(_name, _scatter_infer(_name), eager=_combine_kernel(_name), lower=_combine_lower(_name),
                stateful=True, state="update", row_patch=True)


def _combining_scatter(op_type, fn, ref, indices, updates, name):
    ref = _check_ref(ref, fn)
    if ref.dtype == dtypes.bool or ref.dtype == dtypes.string:
        raise TypeError(f"{op_type}: variable {ref.op.name!r} has dtype {ref.dtype.name}, expected a numeric type")
    indices = convert_to_tensor(indices, name="indices")
    if not indices.dtype.is_integer:
        raise TypeError(f"Value passed to parameter 'indices' has DataType {indices.dtype.name} not in list of "
                        f"allowed values: int32, int64 ({op_type})")
    updates = _value_for(ref, updates, op_type)
    return apply_op(op_type, [ref, indices, updates], name=name)


def scatter_mul(ref, indices, updates, use_locking=False, name=None):
    """Multiplies rows `indices` of variable `ref` by `updates` (indices.shape + ref.shape[1:], or
    a scalar); repeated indices multiply in turn. Returns the new value."""
    return _combining_scatter("ScatterMul", "scatter_mul", ref, indices, updates, name)


def scatter_div(ref, indices, updates, use_locking=False, name=None):
    """Divides rows `indices` of variable `ref` by `updates` (integers truncate toward zero, as TF)."""
    return _combining_scatter("ScatterDiv", "scatter_div", ref, indices, updates, name)


def scatter_max(ref, indices, updates, use_locking=False, name=None):
    """Sets rows `indices` of variable `ref` to the elementwise maximum of the row and `updates`."""
    return _combining_scatter("ScatterMax", "scatter_max", ref, indices, updates, name)


def scatter_min(ref, indices, updates, use_locking=False, name=None):
    """Sets rows `indices` of variable `ref` to the elementwise minimum of the row and `updates`."""
    return _combining_scatter("ScatterMin", "scatter_min", ref, indices, updates, name)


# ---- initialization state ----------------------------------------------------------------------


def _initialized_eager(xp, ctx, var):
    return ctx.run_param(("initialized", var))


def _initialized_lower(ctx, var):
    return ctx.run_param(("initialized", var), (), np.bool_)


register_op("IsVariableInitialized", lambda inputs, attrs: (TensorShape([]), dtypes.bool),
            eager=_initialized_eager, lower=_initialized_lower, run_state=True, stateful=True)


def is_variable_initialized(variable):
    """A bool scalar: whether `variable` has a value in the session running it."""
    ref = _check_ref(variable, "is_variable_initialized")
    # The variable's name, not its handle, is the input: asking is not a read.
    return apply_op("IsVariableInitialized", [], {"var": ref.op.name}, default_name="IsVariableInitialized",
                    graph=ref.graph)


# ---- count_up_to --------------------------------------------------------------------------------
# An increment that fails at a limit, made at once under the variable's lock (TF1's atomic
# CountUpTo, which input producers' `limit_epochs` runs once per epoch from a queue runner): a
# host op (its hook is in schedule/host.py), because it must land even when the run that asked is
# a nested one (an enqueue evaluating its inputs), whose variable commits are dropped.


def _count_up_to_infer(inputs, attrs):
    if attrs["dtype"] not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"count_up_to: the variable must be int32 or int64, got {attrs['dtype'].name}")
    return TensorShape([]), attrs["dtype"]


register_op("CountUpTo", _count_up_to_infer, stateful=True, state="host")


def count_up_to(ref, limit, name=None):
    """The variable's value before it is incremented; `OutOfRangeError` ("Reached limit of N")
    once it has reached `limit` (an int32/int64 scalar variable)."""
    ref = _check_ref(ref, "count_up_to")
    if ref.shape.ndims != 0:
        raise ValueError(f"count_up_to: the variable {ref.op.name!r} must be a scalar, got shape {ref.shape}")
    return apply_op("CountUpTo", [], {"var": ref.op.name, "limit": int(limit), "dtype": ref.dtype},
                    name=name, default_name="CountUpTo", graph=ref.graph)


from ..graph.registry import not_differentiable  # noqa: E402

# Assigns change state; gradients do not flow through them (as TF1).
not_differentiable("VariableV2", "Assign", "AssignAdd", "AssignSub", "ScatterUpdate", "ScatterAdd",
                   "ScatterSub", *_COMBINE, "IsVariableInitialized", "CountUpTo")
