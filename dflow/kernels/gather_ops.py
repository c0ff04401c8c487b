"""Gathering ops: gather, one_hot and top_k, with their gradient rules.

Indices known when the graph is built give exact static shapes; indices that are data are read
inside the Dask graph, and an index out of range raises InvalidArgumentError when the plan runs.
"""

from __future__ import annotations

import collections
import math

import array_api_compat.numpy as np_xp
import dask.array as da
import numpy as np

from ..dask_compat import normalize_chunks
from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.evaluate import namespace
from ..graph.graph import name_scope
from ..graph.indexed_slices import IndexedSlices
from ..graph.ops import Tensor, constant_value
from ..graph.registry import def_grad, register_op
from ..graph.shape import TensorShape, unknown_shape
from .array_ops import reshape, shape
from .common import (
    REAL,
    apply_op,
    check_allocation,
    check_dtype,
    constant,
    convert_to_tensor,
    ints_in_range,
)
from .index_ops import _py_slice, _runtime_error, _tensor
from .math_ops import cast
from .reduction_ops import reduce_sum

__all__ = ["gather", "one_hot", "top_k"]


# ---- gather ------------------------------------------------------------------------------------


def _gather_infer(inputs, attrs):
    params, indices = inputs
    if indices.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"GatherV2: indices must be int32 or int64, got {indices.dtype.name} ({indices.name!r})")
    r = params.shape.ndims
    if r is None:
        return unknown_shape(), params.dtype
    if not -r <= attrs["axis"] < r:
        raise ValueError(f"GatherV2: axis {attrs['axis']} is out of range for params {params.name!r} of "
                         f"rank {r}")
    if indices.shape.ndims is None:
        return unknown_shape(), params.dtype
    a = attrs["axis"] % r
    p = params.shape.as_list()
    return TensorShape(p[:a] + indices.shape.as_list() + p[a + 1:]), params.dtype


def _raise_bad_indices(xp, indices, n, offsets=()):
    """InvalidArgumentError naming the first index outside [0, n), if any (TF1's message)."""
    if isinstance(indices, np.ndarray) and indices.dtype.kind in "iu":  # (cheaper than the mask)
        if ints_in_range(indices, n):
            return
    bad = (indices < 0) | (indices >= n)
    if bool(xp.any(bad)):
        pos = [int(a[0]) for a in xp.nonzero(bad)] if indices.ndim else []
        v = int(indices[tuple(pos)])
        pos = [p + o for p, o in zip(pos, offsets)] if offsets else pos
        raise _runtime_error(f"indices[{','.join(map(str, pos))}] = {v} is not in [0, {n})")


def _gather_eager(xp, params, indices, axis, batch_dims=0):
    a = axis % params.ndim
    _raise_bad_indices(xp, indices, params.shape[a])
    if indices.ndim == 1:
        return params.take(indices, axis=a) if type(params) is np.ndarray else xp.take(params, indices, axis=a)
    out = xp.take(params, xp.reshape(indices, (-1,)), axis=a)
    return xp.reshape(out, params.shape[:a] + indices.shape + params.shape[a + 1:])


def _checked_indices(block, n, block_info=None):
    offsets = [lo for lo, _ in block_info[0]["array-location"]] if block_info else ()
    _raise_bad_indices(namespace((block,)), block, n, offsets)
    return block


def _gather_lower(ctx, params, indices, axis, batch_dims=0):
    params = ctx.as_dask(params)
    a = axis % params.ndim
    n = params.shape[a]
    if n != n:
        n = ctx.known_shape(params)[a]
    if isinstance(indices, da.Array):
        idx = indices.map_blocks(_checked_indices, n=n, dtype=indices.dtype)
        params = params.rechunk(tuple(tuple(c for c in cs if c) or (0,) for cs in params.chunks))  # as _ss_lower
    else:
        idx = np.asarray(indices)
        try:
            _raise_bad_indices(np_xp, idx, n)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(None, ctx.op, f"GatherV2 op {ctx.op.name!r}: {e}") from None
    lead = (_py_slice(None),) * a
    if idx.ndim == 1:
        return params[lead + (idx,)]
    out = params[lead + (idx.reshape(-1),)]
    return out.reshape(params.shape[:a] + idx.shape + params.shape[a + 1:])


# reads_rows: an embedding read only by gathers keeps a plan in process
register_op("GatherV2", _gather_infer, eager=_gather_eager, lower=_gather_lower, reads_rows=True)


@def_grad("GatherV2")
def _gather_grad(op, g):
    """The rows of g summed into params' rows (UnsortedSegmentSum and Transpose of modules above
    this one, made by their registered types)."""
    params, indices = op.inputs[0], op.inputs[1]
    if params.shape.ndims is None or indices.shape.ndims is None:
        raise LookupError("The gradient of gather needs params and indices of known rank")
    axis = op.get_attr("axis") % params.shape.ndims
    rows = _rows_gradient(params, indices, g) if axis == 0 else None
    if rows is not None:
        return [rows, None]
    p = params.shape.ndims
    q = indices.shape.ndims
    psize = params.shape[axis].value
    n = psize if psize is not None else shape(params)[axis]

    def transpose(t, perm):
        if perm == list(range(len(perm))):
            return t
        return apply_op("Transpose", [t, constant(np.array(perm, dtype=np.int32))], default_name="transpose")

    # g: params[:axis] + indices + params[axis+1:]  ->  indices + params[:axis] + params[axis+1:]
    gt = transpose(g, list(range(axis, axis + q)) + list(range(axis)) + list(range(axis + q, p - 1 + q)))
    num = convert_to_tensor(n, dtype=indices.dtype) if not isinstance(n, Tensor) else \
        (n if n.dtype == indices.dtype else cast(n, indices.dtype))
    summed = apply_op("UnsortedSegmentSum", [gt, indices, num])  # params[axis] + params[:axis] + ...
    dparams = transpose(summed, list(range(1, axis + 1)) + [0] + list(range(axis + 1, p)))
    if params.shape.is_fully_defined():
        dparams = reshape(dparams, params.shape.as_list())
    return [dparams, None]


def _rows_gradient(params, indices, g):
    """The gradient of rows gathered along axis 0: an IndexedSlices of g's rows at the flattened
    indices (TF1's), so an optimizer touches only those rows of params. Needs params' trailing
    dimensions known (None otherwise: the caller takes the dense rule)."""
    rest = params.shape.as_list()[1:]
    if None in rest:
        return None
    if indices.shape.ndims != 1:
        g = reshape(g, [-1] + rest)
        indices = reshape(indices, [-1])
    dense_shape = constant(np.array(params.shape.as_list(), np.int32)) if params.shape.is_fully_defined() \
        else shape(params)
    return IndexedSlices(g, indices, dense_shape)


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Slices of `params` along `axis` at `indices` (TF1's GatherV2; `validate_indices` unused).

    Output shape: params.shape[:axis] + indices.shape + params.shape[axis+1:], params' dtype.
    indices: int32/int64, any shape. `axis` (default 0, may be negative) must be known when the
    graph is built. TypeError for non-integer indices, ValueError for an axis out of range or
    batch_dims != 0 (not supported); InvalidArgumentError at run time for an index outside
    [0, params.shape[axis]) (TF1 on CPU).
    """
    del validate_indices
    if batch_dims != 0:
        raise ValueError("gather: batch_dims other than 0 is not supported")
    params, indices = convert_to_tensor(params), _tensor(indices)
    if isinstance(axis, Tensor):
        if constant_value(axis) is None:
            raise ValueError(f"gather: axis {axis.name!r} must be known when the graph is built")
        axis = constant_value(axis)
    return apply_op("GatherV2", [params, indices], {"axis": int(axis or 0), "batch_dims": 0}, name=name,
                    default_name="GatherV2")


# ---- one_hot -----------------------------------------------------------------------------------


def _one_hot_infer(inputs, attrs):
    indices, depth, on, off = inputs
    check_dtype(indices, "iu", "OneHot", "indices")
    if depth.dtype != dtypes.int32 or depth.shape.ndims not in (None, 0):
        raise TypeError(f"OneHot: depth must be a scalar int32, got {depth.dtype.name} {depth.shape}")
    if on.dtype != off.dtype:
        raise TypeError(f"OneHot: on_value ({on.dtype.name}) and off_value ({off.dtype.name}) differ")
    if on.shape.ndims not in (None, 0) or off.shape.ndims not in (None, 0):
        raise ValueError(f"OneHot: on_value and off_value must be scalars, got {on.shape}, {off.shape}")
    d = constant_value(depth)
    if d is not None and int(d) < 0:
        raise ValueError(f"OneHot: depth must be non-negative, got {int(d)}")
    r = indices.shape.ndims
    if r is None:
        return unknown_shape(), on.dtype
    axis = attrs["axis"]
    if not -1 <= axis <= r:
        raise ValueError(f"OneHot: axis {axis} must be in [-1, {r}] for indices of rank {r}")
    dims = indices.shape.as_list()
    dims.insert(r if axis == -1 else axis, None if d is None else int(d))
    return TensorShape(dims), on.dtype


def _one_hot_hits(xp, indices, depth, axis):
    r = indices.ndim
    a = r if axis == -1 else axis
    classes = xp.reshape(xp.arange(depth, dtype=xp.int64), (depth,) + (1,) * (r - a))
    return xp.expand_dims(xp.astype(indices, xp.int64), axis=a) == classes


def _checked_depth(depth):
    if int(depth) < 0:
        raise _runtime_error(f"OneHot: depth must be non-negative, got {int(depth)}")
    return int(depth)


def _one_hot_eager(xp, indices, depth, on_value, off_value, axis):
    d = _checked_depth(depth)
    check_allocation(tuple(indices.shape) + (d,), on_value.dtype, "OneHot")
    return xp.where(_one_hot_hits(xp, indices, d, axis), on_value, off_value)


def _one_hot_lower(ctx, indices, depth, on_value, off_value, axis):
    d = _checked_depth(ctx.host_value(depth, "OneHot depth"))
    indices = ctx.as_dask(indices)
    # each index becomes `depth` values: its chunks are cut so that an output chunk (and the int64
    # comparison making it) stays within the session's chunk size, as a Fill's would (a range of
    # 20,000 in one chunk made one 1.5 GB task, refused under any small budget)
    limit = ctx.options.chunk_limit or (128 << 20)
    per_index = max(1, d) * 8
    if indices.size and not any(c != c for c in indices.shape):
        biggest = max((math.prod(int(max(c)) for c in indices.chunks) if indices.ndim else 1), 1)
        if biggest * per_index > limit:
            want = normalize_chunks("auto", indices.shape, limit=max(indices.dtype.itemsize,
                                                                     limit * indices.dtype.itemsize // per_index),
                                    dtype=indices.dtype)
            indices = indices.rechunk(want)
    hits = _one_hot_hits(ctx.xp, indices, d, axis)
    return da.where(hits, on_value, off_value).astype(ctx.op.outputs[0].dtype.np_dtype)


register_op("OneHot", _one_hot_infer, eager=_one_hot_eager, lower=_one_hot_lower)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A one-hot tensor: on_value where the class equals the index, off_value elsewhere.

    indices: integer tensor of shape S; output shape S with `depth` inserted at `axis` (default
    -1, last). dtype: `dtype`, else that of on_value/off_value, else float32. An index outside
    [0, depth) (e.g. -1) gives a row of off_value. TypeError when on_value, off_value and dtype
    disagree; ValueError for an axis outside [-1, rank] or a negative depth. In Dask plans depth
    must follow from constants and feed shapes (UnimplementedError otherwise).
    """
    with name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        dtype = None if dtype is None else dtypes.as_dtype(dtype)
        given = {}
        for what, v in (("on_value", on_value), ("off_value", off_value)):
            if v is not None:
                given[what] = _tensor(v, preferred_dtype=dtype, name=what)
                if dtype is not None and given[what].dtype != dtype:
                    raise TypeError(f"dtype {given[what].dtype.name} of {what} does not match dtype "
                                    f"parameter {dtype.name}")
        if len({t.dtype for t in given.values()}) > 1:
            raise TypeError(f"dtype {given['on_value'].dtype.name} of on_value does not match dtype "
                            f"{given['off_value'].dtype.name} of off_value")
        dtype = dtype or next((t.dtype for t in given.values()), dtypes.float32)
        on_value = given["on_value"] if "on_value" in given else _tensor(1, dtype, "on_value")
        off_value = given["off_value"] if "off_value" in given else _tensor(0, dtype, "off_value")
        indices = _tensor(indices, name="indices")
        depth = _tensor(depth, dtype=dtypes.int32, name="depth")
        return apply_op("OneHot", [indices, depth, on_value, off_value],
                        {"axis": -1 if axis is None else int(axis)}, name=scope)


# ---- top_k -------------------------------------------------------------------------------------

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _top_k_infer(inputs, attrs):
    x, k = inputs
    check_dtype(x, REAL, "TopKV2", "input")
    if k.dtype != dtypes.int32 or k.shape.ndims not in (None, 0):
        raise TypeError(f"TopKV2: k must be a scalar int32, got {k.dtype.name} {k.shape}")
    kv = None if constant_value(k) is None else int(constant_value(k))
    if kv is not None and kv < 0:
        raise ValueError(f"TopKV2: k must be non-negative, got {kv}")
    if x.shape.ndims is None:
        return [(unknown_shape(), x.dtype), (unknown_shape(), dtypes.int32)]
    if x.shape.ndims == 0:
        raise ValueError(f"TopKV2: input must be at least rank 1, got {x.name!r} of shape {x.shape}")
    last = x.shape.as_list()[-1]
    if kv is not None and last is not None and last < kv:
        raise ValueError(f"input must have last dimension >= k = {kv} but is {last} ({x.name!r})")
    out = TensorShape(x.shape.as_list()[:-1] + [kv])
    return [(out, x.dtype), (out, dtypes.int32)]


# A block's rows are ordered a slab of about this many bytes of input at a time: the sort's
# scratch (its int64 positions, twice, as array_api_compat's stable descending argsort builds
# them) is then ~5 slabs, not 5 blocks (a 32 MiB chunk held 160 MiB per task); the memory
# projection counts it (`_TOP_K_SCRATCH`).
_TOP_K_SLAB = 4 << 20
_TOP_K_SCRATCH = 5 * _TOP_K_SLAB


def _top_k_order(block, k):
    """Positions of the k largest along the last axis; ties: lower position first (stable).
    Sorted by slabs of rows (`_TOP_K_SLAB`), so the scratch stays small whatever the block."""
    xp = namespace((block,))
    n = block.shape[-1] if block.ndim else 1
    rows = int(np.prod(block.shape[:-1], dtype=np.int64)) if block.ndim > 1 else 1
    per = max(1, _TOP_K_SLAB // max(1, n * 8))  # (int64 positions: 8 bytes per entry)
    if block.ndim < 2 or rows <= per:
        return xp.argsort(block, axis=-1, descending=True, stable=True)[..., :k]
    flat = xp.reshape(block, (rows, n))
    out = xp.empty((rows, k), dtype=xp.int64)
    for i in range(0, rows, per):
        out[i:i + per] = xp.argsort(flat[i:i + per], axis=-1, descending=True, stable=True)[:, :k]
    return xp.reshape(out, tuple(block.shape[:-1]) + (k,))


def _take_last(block, order):
    return namespace((block,)).take_along_axis(block, order, axis=-1)


def _check_k(k, n, error):
    if k < 0:
        raise error(f"k must be non-negative, got {k}")
    if n < k:
        raise error(f"input must have last dimension >= k = {k} but is {n}")
    return k


def _top_k_eager(xp, x, k, sorted=True):  # noqa: A002 - TF1 attr name
    order = _top_k_order(x, _check_k(int(k), x.shape[-1], _runtime_error))
    return xp.take_along_axis(x, order, axis=-1), xp.astype(order, xp.int32)


def _add_offset(order, starts, block_id=None):
    return order + starts[block_id[-1]]


def _top_k_lower(ctx, x, k, sorted=True):  # noqa: A002 - TF1 attr name
    k = int(ctx.host_value(k, "TopKV2 k"))
    x = ctx.as_dask(x)
    n = x.shape[-1] if x.shape[-1] == x.shape[-1] else ctx.known_shape(x)[-1]
    _check_k(k, n, lambda m: InvalidArgumentError(None, ctx.op, f"TopKV2 op {ctx.op.name!r}: {m}"))
    lead = x.chunks[:-1]
    take = dict(dtype=x.dtype, meta=x._meta)  # map_blocks pairs blocks by index, whatever their sizes
    if x.numblocks[-1] > 1:
        # Each chunk's k best (global positions) are candidates; the k best of all candidates,
        # kept in chunk order, are the answer with TF's ties (lower index first).
        kc = tuple(min(k, c) for c in x.chunks[-1])
        local = x.map_blocks(_top_k_order, k, chunks=lead + (kc,), dtype=np.int64)
        starts = np.cumsum((0,) + x.chunks[-1][:-1]).astype(np.int64)
        cand_val = da.map_blocks(_take_last, x, local, chunks=lead + (kc,), **take)
        cand_pos = local.map_blocks(_add_offset, starts, dtype=np.int64).rechunk({x.ndim - 1: -1})
        x = cand_val.rechunk({x.ndim - 1: -1})
    else:
        cand_pos = None
    order = x.map_blocks(_top_k_order, k, chunks=lead + ((k,),), dtype=np.int64)
    values = da.map_blocks(_take_last, x, order, chunks=lead + ((k,),), **take)
    if cand_pos is not None:
        order = da.map_blocks(_take_last, cand_pos, order, chunks=lead + ((k,),), dtype=np.int64)
    out_chunk = max(1, int(np.prod([max(c) if c else 0 for c in lead], dtype=np.int64)) * max(1, k) * 12)
    ctx.set_scratch(max(1.0, _TOP_K_SCRATCH / out_chunk))  # the sort's slabs (values and positions: 12 B)
    return values, order.astype(np.int32)


register_op("TopKV2", _top_k_infer, eager=_top_k_eager, lower=_top_k_lower, num_outputs=2)


@def_grad("TopKV2")
def _top_k_grad(op, g_values, g_indices):
    x = op.inputs[0]
    depth = x.shape[-1].value
    if depth is None:
        depth = shape(x)[-1]
    hot = one_hot(op.outputs[1], depth, dtype=g_values.dtype)  # [..., k, n]
    expanded = apply_op("ExpandDims", [g_values, constant(np.int32(-1))])  # manip_ops' op, by its type
    return [reduce_sum(hot * expanded, axis=-2), None]


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002 - TF1 signature
    """The k largest entries along the last axis and their positions: TopKV2(values, indices).

    input: real tensor of shape [..., n]; values: same dtype, shape [..., k]; indices: int32.
    Ties go to the lower index first (TF1); always sorted descending (`sorted=False` lets TF pick
    any order). ValueError for k < 0 or k > n when building; InvalidArgumentError at run time.
    Chunked: each chunk of the last axis gives its k best, then the k best of those candidates
    (k x number of chunks per row, one chunk) are chosen.
    """
    x = convert_to_tensor(input)
    k = _tensor(k, dtype=dtypes.int32, name="k")
    values, indices = apply_op("TopKV2", [x, k], {"sorted": bool(sorted)}, name=name, default_name="TopKV2")
    return TopKV2(values, indices)
