"""Ops whose output sizes depend on the data: boolean_mask, where(condition) coordinates, unique,
dynamic_partition, dynamic_stitch, sequence_mask (without maxlen); and gather_nd.

Static shapes carry None where the size is data; `dflow.shape`/`dflow.size` of the results are
right at run time. Lowerings give dask arrays of unknown (nan) chunk sizes, never computed while
lowering (a plan is lowered once, without data):
- boolean_mask, dynamic_partition, where: one output chunk per input chunk along the masked axis
  (inner masked dims merged into one chunk first).
- unique: one task over the whole input (as `da.unique`); `y` is one chunk.
- dynamic_stitch: the permutation is one task over all indices; rows are gathered by dask when
  their sizes are known, else each output chunk reads them merged into one chunk (gather_nd too;
  its params may have unknown sizes only for depth-1 index rows without batch dims).
- sequence_mask without maxlen: the width is max(lengths), a reduction read by every chunk.

Later ops on unknown chunk sizes: elementwise ops between results of one source, sums, shape and
size, the ops of this module work; ops needing sizes while lowering (reshape of an unknown dim,
slicing by position, matmul over an unknown contraction, gather) raise UnimplementedError.
"""

from __future__ import annotations

import collections
import operator

import dask.array as da
import numpy as np
from toolz import identity as _identity

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.evaluate import namespace
from ..graph.ops import Tensor, constant_value
from ..graph.registry import def_grad, not_differentiable, register_op
from ..graph.shape import TensorShape, unknown_shape
from .array_ops import reshape
from .common import INT, REAL, apply_op, check_dtype, convert_to_tensor, normalize_axis
from .manip_ops import add_n
from .math_ops import cast, equal
from .scatter_ops import unsorted_segment_sum

__all__ = ["boolean_mask", "unique", "dynamic_partition", "dynamic_stitch", "gather_nd", "sequence_mask"]

_NAN = float("nan")
_LETTERS = "abcdefghijklmnopqrstuvwxy"  # blockwise index names; "z..." name new axes


def _xp(*arrays):
    return namespace([a for a in arrays if hasattr(a, "shape")])


def _as_bool(xp, m):
    return m if m.dtype == xp.bool else m != 0


def _known(chunks):
    return all(c == c for c in chunks)


def _merge_dims(x, dims):
    """`x` with each of `dims` in one chunk; works for unknown chunk sizes (blockwise contraction)."""
    dims = [d for d in dims if x.numblocks[d] > 1]
    if not dims:
        return x
    if all(_known(x.chunks[d]) for d in dims):
        return x.rechunk(dict.fromkeys(dims, -1))
    ind = _LETTERS[:x.ndim]
    out = [f"z{d}" if d in dims else c for d, c in enumerate(ind)]
    return da.blockwise(_identity, out, x, ind, new_axes={f"z{d}": (sum(x.chunks[d]),) for d in dims},
                        concatenate=True, dtype=x.dtype, meta=x._meta)


def _count(b, axis, true_only):
    xp = _xp(b)
    n = int(xp.sum(xp.astype(_as_bool(xp, b), xp.int64))) if true_only else b.shape[axis]
    return np.array([n], dtype=np.int64)


def _starts(x, axis=0, true_only=False):
    """Per block of x along `axis` (1-D, chunks of 1): the rows (`true_only`: true entries of a mask
    merged beyond axis 0) before it; computed in the run when the sizes are unknown."""
    c = x.chunks[axis]
    if _known(c) and not true_only:
        return da.from_array(np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64), chunks=1)
    ind = _LETTERS[:x.ndim]
    first = x.blocks[tuple(slice(None) if i == axis else 0 for i in range(x.ndim))]
    n = da.blockwise(_count, ind[axis], first, ind, axis=axis, true_only=true_only, adjust_chunks={ind[axis]: 1},
                     concatenate=True, dtype=np.int64, meta=np.empty((0,), dtype=np.int64))
    return da.cumsum(n) - n


def _aligned(x, mask, axis, k):
    """(x, mask) chunked so that each block of x along `axis` pairs with one block of whole mask rows."""
    for i, (a, b) in enumerate(zip(x.shape[axis:axis + k], mask.shape)):
        if a == a and b == b and int(a) != int(b):
            raise InvalidArgumentError(None, None, f"boolean_mask: mask shape {list(mask.shape)} does not match the tensor's dims "
                                       f"{list(x.shape[axis:axis + k])} (dim {i})")
    x, mask = _merge_dims(x, range(axis + 1, axis + k)), _merge_dims(mask, range(1, k))
    cx, cm = x.chunks[axis], mask.chunks[0]
    if _known(cx) and _known(cm):
        mask = mask.rechunk({0: cx}) if cx != cm else mask
    elif _known(cx) or _known(cm) or len(cx) != len(cm):
        x, mask = _merge_dims(x, [axis]), _merge_dims(mask, [0])
    # else both unknown, one block count: results of one source (each block checks its sizes)
    return x, mask


# ---- boolean_mask (and its gradient) ------------------------------------------------------------


def _mask_infer(inputs, attrs):
    (x, mask), what = inputs, "dynamic_partition: partitions" if "num_partitions" in attrs else "boolean_mask: mask"
    k, axis = mask.shape.ndims, attrs.get("axis", 0)
    if x.shape.ndims is None:
        return unknown_shape(), x.dtype
    if x.shape.ndims < axis + k:
        raise ValueError(f"{what} of rank {k} at axis {axis} needs a tensor of rank at least "
                         f"{axis + k}, got {x.shape}")
    if not x.shape[axis:axis + k].is_compatible_with(mask.shape):
        raise ValueError(f"{what} shape {mask.shape} is incompatible with the tensor's {x.shape[axis:axis + k]}")
    return x.shape[:axis].concatenate([None]).concatenate(x.shape[axis + k:]), x.dtype


def _mask_block(xb, mb, axis, part=None, n=None):
    """xb at the true entries of mb (of the entries equal to `part` of partitions mb)."""
    xp = _xp(xb, mb)
    if tuple(xb.shape[axis:axis + mb.ndim]) != tuple(mb.shape):
        raise InvalidArgumentError(None, None, f"boolean_mask: mask shape {list(mb.shape)} does not match the tensor's dims "
                                   f"{list(xb.shape[axis:axis + mb.ndim])}")
    if part is not None:  # mb: the partitions, checked
        bad = (mb < 0) | (mb >= n)
        if bool(xp.any(bad)):
            pos = tuple(int(i[0]) for i in xp.nonzero(bad))
            raise InvalidArgumentError(None, None, f"DynamicPartition: partitions[{','.join(map(str, pos))}] = {int(mb[pos])} is not in [0, {n})")
        mb = mb == part
    return xb[(slice(None),) * axis + (_as_bool(xp, mb),)]


def _masked(ctx, x, mask, axis, **kw):
    """The chunked lowering of boolean_mask and of each dynamic_partition output."""
    k = np.ndim(mask)
    x, mask = _aligned(ctx.as_dask(x), ctx.as_dask(mask), axis, k)
    ind = _LETTERS[:x.ndim]
    return da.blockwise(_mask_block, ind[:axis + 1] + ind[axis + k:], x, ind, mask, ind[axis:axis + k], axis=axis,
                        adjust_chunks={ind[axis]: lambda c: _NAN}, concatenate=True, align_arrays=False,
                        dtype=x.dtype, meta=x._meta, **kw)


register_op("BooleanMask", _mask_infer, eager=lambda xp, x, m, axis: _mask_block(x, m, axis),
            lower=lambda ctx, x, m, axis: _masked(ctx, x, m, axis))


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The entries of `tensor` where `mask` is true (nonzero), flattened over the masked dims.

    mask: rank k >= 1 known statically, shape tensor.shape[axis:axis+k], bool or numeric.
    Output: tensor.shape[:axis] + [None] + tensor.shape[axis+k:], tensor's dtype. ValueError for a
    scalar mask, a mask of unknown rank or incompatible shapes; InvalidArgumentError at run time
    when the fed shapes do not match.
    """
    tensor, mask = convert_to_tensor(tensor), convert_to_tensor(mask)
    if mask.shape.ndims is None:
        raise ValueError("Number of mask dimensions must be specified, even if some dimensions are None.  "
                         "E.g. shape=[None] is ok, but shape=None is not.")
    if mask.shape.ndims == 0:
        raise ValueError("mask cannot be scalar.")
    if isinstance(axis, Tensor) and constant_value(axis) is None:
        raise ValueError("boolean_mask: axis must be known when the graph is built")
    axis = normalize_axis(constant_value(axis) if isinstance(axis, Tensor) else axis or 0, tensor.shape.ndims,
                          "boolean_mask")
    return apply_op("BooleanMask", [tensor, mask], {"axis": axis}, name=name, default_name="boolean_mask")


def _unmask_infer(inputs, attrs):
    (g, mask, _), a = inputs, attrs["axis"]
    if g.shape.ndims is None or mask.shape.ndims is None:
        return unknown_shape(), g.dtype
    return g.shape[:a].concatenate(mask.shape).concatenate(g.shape[a + 1:]), g.dtype


def _unmask_block(gb, mb, start=None, *, axis):
    """Zeros shaped like the masked block with gb's rows at mb's true entries (from `start` of a whole gb)."""
    xp = _xp(gb, mb)
    mb = _as_bool(xp, mb)
    n = int(xp.sum(xp.astype(mb, xp.int64)))
    if start is not None:
        gb = gb[(slice(None),) * axis + (slice(int(start[0]), int(start[0]) + n),)]
    if gb.shape[axis] != n:
        raise InvalidArgumentError(None, None, f"BooleanMaskGrad: the gradient has {gb.shape[axis]} rows where the mask has {n} true entries")
    out = xp.zeros(tuple(gb.shape[:axis]) + tuple(mb.shape) + tuple(gb.shape[axis + 1:]), dtype=gb.dtype)
    out[(slice(None),) * axis + (mb,)] = gb
    return out


def _unmask_lower(ctx, g, mask, x, axis):
    """Chunked like the masked tensor (x: only its chunks are read, to pair blocks as the forward)."""
    k = np.ndim(mask)
    _, mask = _aligned(ctx.as_dask(x), ctx.as_dask(mask), axis, k)
    g = ctx.as_dask(g)
    ind, mind = _LETTERS[:g.ndim], _LETTERS[g.ndim:g.ndim + k - 1]
    if len(g.chunks[axis]) == len(mask.chunks[0]) and not _known(g.chunks[axis]):
        args = (g, ind, mask, ind[axis] + mind)  # one block of g per block of the mask
    else:
        g = _merge_dims(g, [axis])
        args = (g, ind[:axis] + "z" + ind[axis + 1:], mask, ind[axis] + mind, _starts(mask, 0, True), ind[axis])
    return da.blockwise(_unmask_block, ind[:axis + 1] + mind + ind[axis + 1:], *args, axis=axis,
                        adjust_chunks={ind[axis]: mask.chunks[0]}, concatenate=True, align_arrays=False,
                        dtype=g.dtype, meta=g._meta)


register_op("BooleanMaskGrad", _unmask_infer, eager=lambda xp, g, m, x, axis: _unmask_block(g, m, axis=axis),
            lower=_unmask_lower)


@def_grad("BooleanMask")
def _boolean_mask_grad(op, g):
    x, mask = op.inputs
    return [apply_op("BooleanMaskGrad", [g, mask, x], {"axis": op.get_attr("axis")}), None]


# ---- where(condition): coordinates of true elements ----------------------------------------------


def _where_infer(inputs, attrs):
    n = inputs[0].shape.ndims
    if n == 0:
        raise ValueError(f"where: condition {inputs[0].name!r} must have rank >= 1 (coordinates of a scalar)")
    return TensorShape([None, n]), dtypes.int64


def _coords(cb, start=None):
    xp = _xp(cb)
    out = xp.astype(xp.stack(xp.nonzero(_as_bool(xp, cb)), axis=1), xp.int64)
    if start is not None:  # rows of this block start at start[0] in the whole condition
        out = out + xp.asarray([int(start[0])] + [0] * (cb.ndim - 1), dtype=xp.int64)
    return out


def _where_lower(ctx, c):
    c = _merge_dims(ctx.as_dask(c), range(1, np.ndim(c)))
    ind = _LETTERS[:c.ndim]
    return da.blockwise(_coords, ind[0] + "z", c, ind, _starts(c), ind[0], new_axes={"z": c.ndim},
                        adjust_chunks={ind[0]: lambda n: _NAN}, concatenate=True, align_arrays=False,
                        dtype=np.int64, meta=np.empty((0, 0), dtype=np.int64))


register_op("Where", _where_infer, eager=lambda xp, c: _coords(c), lower=_where_lower)


def where_coordinates(condition, name=None):
    """The coordinates of the true (nonzero) entries of `condition` in row-major order (TF1's
    one-argument `where`): int64 of shape [None, rank(condition)]. ValueError for a scalar."""
    return apply_op("Where", [convert_to_tensor(condition)], name=name, default_name="Where")


# ---- unique ----------------------------------------------------------------------------------------


def _unique_infer(inputs, attrs):
    (x,), idx = inputs, attrs["out_idx"]
    if x.shape.ndims not in (None, 1):
        raise ValueError(f"unique: Shape must be rank 1 but is rank {x.shape.ndims} ({x.name!r})")
    if idx not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"unique: out_idx must be int32 or int64, got {idx.name}")
    return [(TensorShape([None]), x.dtype), (x.shape if x.shape.ndims == 1 else TensorShape([None]), idx)]


def _unique(x, out_idx):
    """(y, idx) with y in order of first occurrence (NaNs each distinct, as TF)."""
    xp = _xp(x)
    if x.ndim != 1:
        raise InvalidArgumentError(None, None, f"unique: unique expects a 1D vector, got shape {list(x.shape)}")
    values, first, inverse, _ = xp.unique_all(x)
    order = xp.argsort(first)
    return xp.take(values, order), xp.astype(xp.take(xp.argsort(order), xp.reshape(inverse, (-1,))), out_idx.np_dtype)


def _unique_lower(ctx, x, out_idx):
    x = ctx.as_dask(x)
    t = da.blockwise(_unique, "", x, "a", out_idx=out_idx, concatenate=True, dtype=object, meta=np.empty((), object))
    n, meta = x.shape[0], np.empty((0,), dtype=out_idx.np_dtype)
    y = da.blockwise(operator.getitem, "z", t, "", 0, None, new_axes={"z": (_NAN,)}, dtype=x.dtype, meta=x._meta)
    idx = da.blockwise(operator.getitem, "z", t, "", 1, None, new_axes={"z": (n,)}, dtype=meta.dtype, meta=meta)
    return y, idx.rechunk(x.chunks) if n == n and x.numblocks[0] > 1 else idx


register_op("Unique", _unique_infer, eager=lambda xp, x, out_idx: _unique(x, out_idx), lower=_unique_lower,
            num_outputs=2)
UniqueOutput = collections.namedtuple("Unique", ["y", "idx"])


def unique(x, out_idx=dtypes.int32, name=None):
    """(y, idx): the distinct values of 1-D `x` in order of first occurrence, and for each entry of
    `x` its position in `y` (x == y[idx]). y: [None] of x's dtype; idx: x's shape, `out_idx`
    (int32/int64). ValueError if x is not 1-D. Computed in one task (y is one chunk)."""
    return UniqueOutput(*apply_op("Unique", [convert_to_tensor(x)], {"out_idx": as_dtype(out_idx)}, name=name,
                                  default_name="Unique"))


# ---- dynamic_partition / dynamic_stitch -------------------------------------------------------------


def _partition_infer(inputs, attrs):
    if inputs[1].dtype != dtypes.int32:
        raise TypeError(f"dynamic_partition: partitions must be int32, got {inputs[1].dtype.name}")
    out = _mask_infer(inputs, attrs) if inputs[1].shape.ndims is not None else (unknown_shape(), inputs[0].dtype)
    return [out] * attrs["num_partitions"]


register_op("DynamicPartition", _partition_infer, num_outputs=None,
            eager=lambda xp, data, p, num_partitions: tuple(_mask_block(data, p, 0, i, num_partitions)
                                                            for i in range(num_partitions)),
            lower=lambda ctx, data, p, num_partitions: [_masked(ctx, data, p, 0, part=i, n=num_partitions)
                                                        for i in range(num_partitions)])


def dynamic_partition(data, partitions, num_partitions, name=None):
    """Splits `data` into `num_partitions` tensors: output i holds data[partitions == i], in order.

    partitions: int32, its shape a prefix of data's. Each output: [None] + data.shape[rank(p):].
    InvalidArgumentError at run time for a partition outside [0, num_partitions).
    """
    data, partitions = convert_to_tensor(data), convert_to_tensor(partitions)
    if int(num_partitions) < 1:
        raise ValueError(f"dynamic_partition: num_partitions must be at least 1, got {num_partitions}")
    outs = apply_op("DynamicPartition", [data, partitions], {"num_partitions": int(num_partitions)}, name=name,
                    default_name="DynamicPartition")
    return list(outs) if isinstance(outs, list) else [outs]


@def_grad("DynamicPartition")
def _partition_grad(op, *grads):
    """Each part's gradient put back where its rows came from (chunked like the data)."""
    data, p = op.inputs
    back = [apply_op("BooleanMaskGrad", [g, equal(p, i), data], {"axis": 0}) for i, g in enumerate(grads)
            if g is not None]
    return [add_n(back) if len(back) > 1 else back[0] if back else None, None]


def _stitch_infer(inputs, attrs):
    idx, data = inputs[:attrs["N"]], inputs[attrs["N"]:]
    rest = None
    for i, d in zip(idx, data):
        check_dtype(i, INT, "DynamicStitch", "indices")
        if d.dtype != data[0].dtype:
            raise TypeError(f"dynamic_stitch: data must have one dtype, got {data[0].dtype.name} and {d.dtype.name}")
        if i.shape.ndims is None or d.shape.ndims is None:
            continue
        if d.shape.ndims < i.shape.ndims or not d.shape[:i.shape.ndims].is_compatible_with(i.shape):
            raise ValueError(f"dynamic_stitch: data shape {d.shape} must start with its indices' shape {i.shape}")
        try:
            rest = d.shape[i.shape.ndims:] if rest is None else rest.merge_with(d.shape[i.shape.ndims:])
        except ValueError:
            raise ValueError(f"dynamic_stitch: data shapes beyond the indices differ: {rest} vs {d.shape}") from None
    vals = [constant_value(i) for i in idx]
    size = max((int(v.max()) + 1 for v in vals if v.size), default=0) if all(v is not None for v in vals) else None
    return TensorShape([size]).concatenate(unknown_shape() if rest is None else rest), data[0].dtype


def _stitch_perm(*indices):
    """Rows of the flattened data (plus a last zero row) making the output: later entries win."""
    xp = _xp(*indices)
    flat = xp.concat([xp.reshape(xp.astype(i, xp.int64), (-1,)) for i in indices])
    total = int(flat.shape[0])
    if total and bool(xp.any(flat < 0)):
        raise InvalidArgumentError(None, None, f"DynamicStitch: indices[{int(xp.nonzero(flat < 0)[0][0])}] is out of range")
    perm = xp.full((int(xp.max(flat)) + 1 if total else 0,), total, dtype=xp.int64)  # unset rows: the zero row
    perm[flat] = xp.arange(total, dtype=xp.int64)  # numpy assigns in order: the last write wins
    return perm


def _stitch_eager(xp, *args, N):  # noqa: N803 - TF1 attr name
    idx, data = args[:N], args[N:]
    rest = tuple(data[0].shape[idx[0].ndim:])
    flat = xp.concat([xp.reshape(d, (-1,) + rest) for d in data] + [xp.zeros((1,) + rest, dtype=data[0].dtype)])
    return xp.take(flat, _stitch_perm(*idx), axis=0)


def _gather_rows(idx_b, flat):
    xp = _xp(flat)
    bad = (idx_b < 0) | (idx_b >= flat.shape[0])
    if idx_b.size and bool(xp.any(bad)):
        raise InvalidArgumentError(None, None, f"gather: row index {int(idx_b[xp.nonzero(bad)[0][0]])} is not in [0, {flat.shape[0]})")
    return xp.take(flat, idx_b, axis=0)


def _take_rows(ctx, flat, idx):
    """flat[idx] (rows): dask's gather for rows of known sizes, else each idx chunk reads them merged."""
    shape = idx.shape if idx.ndim == 1 else ctx.known_shape(idx)  # flattening idx needs its sizes
    idx = idx if idx.ndim == 1 else idx.reshape((-1,)) if idx.ndim else idx.reshape((1,))
    if _known(flat.chunks[0]):
        out = flat[idx]
    else:
        flat = _merge_dims(flat, [0])
        ind = _LETTERS[:flat.ndim]
        out = da.blockwise(_gather_rows, "z" + ind[1:], idx, "z", flat, ind, concatenate=True, dtype=flat.dtype,
                           meta=flat._meta)
    return out if len(shape) == 1 else out.reshape(tuple(shape) + tuple(out.shape[1:]))


def _stitch_lower(ctx, *args, N):  # noqa: N803 - TF1 attr name
    idx, data = args[:N], [ctx.as_dask(d) for d in args[N:]]
    if all(not isinstance(i, da.Array) for i in idx):
        perm = ctx.as_dask(_stitch_perm(*[np.asarray(i) for i in idx]))
    else:
        perm = da.blockwise(_stitch_perm, "z", *[a for i in idx for a in (ctx.as_dask(i), _LETTERS[:np.ndim(i)])],
                            new_axes={"z": (_NAN,)}, concatenate=True, dtype=np.int64, meta=np.empty((0,), np.int64))
    rest = tuple(int(r) for r in data[0].shape[np.ndim(idx[0]):])
    parts = [d if np.ndim(i) == 1 else d.reshape((-1,) + tuple(ctx.known_shape(d)[np.ndim(i):]))
             for i, d in zip(idx, data)]
    parts.append(da.zeros((1,) + rest, dtype=data[0].dtype, chunks=((1,),) + tuple(parts[0].chunks[1:])))
    return _take_rows(ctx, da.concatenate(parts, axis=0), perm)


register_op("DynamicStitch", _stitch_infer, eager=_stitch_eager, lower=_stitch_lower)


def dynamic_stitch(indices, data, name=None):
    """merged[indices[m][i...]] = data[m][i...]: interleaves `data` by `indices` (later entries win).

    indices: list of int tensors; data: list of one dtype, data[m].shape = indices[m].shape + R.
    Output: [max(indices) + 1] + R (static when every index is a constant, else None); rows no
    index names are zeros. ValueError for lists of different lengths; InvalidArgumentError at
    run time for a negative index.
    """
    indices, data = list(indices), list(data)
    if len(indices) != len(data) or not indices:
        raise ValueError(f"List argument 'data' to 'dynamic_stitch' Op with length {len(data)} must match "
                         f"length {len(indices)} of argument 'indices'.")
    inputs = [convert_to_tensor(i) for i in indices] + [convert_to_tensor(d) for d in data]
    return apply_op("DynamicStitch", inputs, {"N": len(indices)}, name=name, default_name="DynamicStitch")


@def_grad("DynamicStitch")
def _stitch_grad(op, g):
    n = op.get_attr("N")
    return [None] * n + [gather_nd(g, i[..., None]) for i in op.inputs[:n]]


# ---- gather_nd ----------------------------------------------------------------------------------------


def _gather_nd_infer(inputs, attrs):
    params, indices = inputs
    check_dtype(indices, INT, "GatherNd", "indices")
    b = attrs["batch_dims"]
    if indices.shape.ndims == 0:
        raise ValueError(f"gather_nd: indices must have rank at least 1, got shape {indices.shape}")
    if params.shape.ndims is None or indices.shape.ndims is None or indices.shape[-1].value is None:
        return unknown_shape(), params.dtype
    depth = indices.shape[-1].value
    if depth > params.shape.ndims - b:
        raise ValueError(f"gather_nd: indices.shape[-1] must be <= params.rank, but saw indices shape: "
                         f"{indices.shape} and params shape: {params.shape}")
    if indices.shape.ndims - 1 < b or not params.shape[:b].is_compatible_with(indices.shape[:b]):
        raise ValueError(f"gather_nd: batch dims of params {params.shape} and indices {indices.shape} differ")
    return indices.shape[:-1].concatenate(params.shape[b + depth:]), params.dtype


def _linear(ib, *, pshape, b, block_info=None):
    """Each index row's row in params reshaped to [-1] + rest, checked (unknown dims: when read)."""
    xp = _xp(ib)
    depth = ib.shape[-1]
    ib = xp.astype(ib, xp.int64)
    bad = (ib < 0) | (ib >= xp.asarray([d if d == d else 2**62 for d in pshape[b:b + depth]], dtype=xp.int64))
    if depth and bool(xp.any(bad)):
        row = tuple(int(i[0]) for i in xp.nonzero(xp.any(bad, axis=-1)))
        raise InvalidArgumentError(None, None, f"GatherNd: indices{list(row)} = {[int(v) for v in ib[row]]} does not index into param "
                               f"shape {list(pshape)}")
    strides = [int(np.prod(pshape[b + j + 1:b + depth])) for j in range(depth)]
    lin = xp.sum(ib * xp.asarray(strides, dtype=xp.int64), axis=-1) if depth else xp.zeros(ib.shape[:-1], dtype=xp.int64)
    if b:  # the flat batch position of each row, from where this block lies in the batch dims
        loc = [0] * b if block_info is None else [s for s, _ in block_info[0]["array-location"][:b]]
        grid = np.indices(ib.shape[:b]).reshape((b,) + tuple(ib.shape[:b]) + (1,) * (ib.ndim - 1 - b))
        flat_b = np.ravel_multi_index(tuple(grid[j] + loc[j] for j in range(b)), tuple(pshape[:b]))
        lin = lin + xp.asarray(flat_b * int(np.prod(pshape[b:b + depth])), dtype=xp.int64)
    return lin


def _gather_nd_eager(xp, params, indices, batch_dims):
    b, pshape = batch_dims, tuple(int(d) for d in params.shape)
    if tuple(indices.shape[:b]) != pshape[:b]:
        raise InvalidArgumentError(None, None, f"GatherNd: batch dims of params {list(pshape)} and indices {list(indices.shape)} differ")
    rest = pshape[b + indices.shape[-1]:]
    lin = xp.reshape(_linear(indices, pshape=pshape, b=b), (-1,))
    return xp.reshape(xp.take(xp.reshape(params, (-1,) + rest), lin, axis=0), tuple(indices.shape[:-1]) + rest)


def _linear_lower(ctx, indices, pshape, b):
    indices = _merge_dims(ctx.as_dask(indices), [np.ndim(indices) - 1])
    if b:
        ctx.known_shape(indices)  # the batch position of a row comes from its block's location
    return indices.map_blocks(_linear, drop_axis=indices.ndim - 1, dtype=np.int64, pshape=tuple(pshape), b=b,
                              meta=np.empty((0,) * (indices.ndim - 1), dtype=np.int64))


def _gather_nd_lower(ctx, params, indices, batch_dims):
    params = ctx.as_dask(params)
    b, depth = batch_dims, int(np.shape(indices)[-1])
    # index rows picking rows of params need no reshape of it: its chunk sizes may be unknown
    pshape = tuple(params.shape) if b == 0 and depth <= 1 else ctx.known_shape(params)
    lin = _linear_lower(ctx, indices, pshape, b)
    flat = params[None] if b + depth == 0 else params if b + depth == 1 else params.reshape(
        (-1,) + tuple(pshape[b + depth:]))
    return _take_rows(ctx, flat, lin)


register_op("GatherNd", _gather_nd_infer, eager=_gather_nd_eager, lower=_gather_nd_lower)
register_op("GatherNdLinear", lambda inputs, attrs: (inputs[0].shape[:-1], dtypes.int64),
            eager=lambda xp, i, pshape, b: _linear(i, pshape=tuple(pshape), b=b), lower=_linear_lower)


def gather_nd(params, indices, name=None, batch_dims=0):
    """Slices of `params` at the index rows of `indices` (TF1's GatherNd).

    indices: int32/int64 of shape B + [N...] + [D] (D <= rank(params) - batch_dims); output:
    indices.shape[:-1] + params.shape[batch_dims + D:], params' dtype. TypeError for non-integer
    indices, ValueError for impossible shapes; InvalidArgumentError at run time for an index row
    outside params.
    """
    params, indices = convert_to_tensor(params), convert_to_tensor(indices)
    return apply_op("GatherNd", [params, indices], {"batch_dims": int(batch_dims)}, name=name,
                    default_name="GatherNd")


@def_grad("GatherNd")
def _gather_nd_grad(op, g):
    params, indices = op.inputs
    b = op.get_attr("batch_dims")
    if not params.shape.is_fully_defined() or indices.shape.ndims is None or indices.shape[-1].value is None:
        raise LookupError("The gradient of gather_nd needs params of static shape and index rows of known depth")
    pshape, depth = params.shape.as_list(), indices.shape[-1].value
    lin = cast(apply_op("GatherNdLinear", [indices], {"pshape": tuple(pshape), "b": b}), dtypes.int32)
    rows = int(np.prod(pshape[:b + depth], dtype=np.int64))
    if indices.shape.ndims != 2:  # one dim of index rows needs no reshape (its size may be unknown)
        g, lin = reshape(g, [-1] + pshape[b + depth:]), reshape(lin, [-1])
    return [reshape(unsorted_segment_sum(g, lin, rows), pshape), None]


# ---- sequence_mask -------------------------------------------------------------------------------------


def _default_width(xp, lengths):
    """max(lengths), rounded up (TF1: range(max(lengths))); 0 for no lengths."""
    return 0 if not lengths.size else xp.ceil(xp.max(lengths)) if lengths.dtype.kind == "f" else xp.max(lengths)


def _seqmask_infer(inputs, attrs):
    check_dtype(inputs[0], REAL, "SequenceMask", "lengths")
    v = constant_value(inputs[-1])
    if v is not None and len(inputs) == 1:
        v = _default_width(np, np.asarray(v))
    return inputs[0].shape.concatenate([None if v is None else max(0, int(v))]), attrs["dtype"]


def _seqmask_block(lb, width, *, out_dtype, cast):
    xp = _xp(lb)
    if cast:  # TF1 casts lengths to maxlen's integer dtype (float lengths truncate)
        lb = xp.astype(lb, xp.int64)
    out = xp.arange(max(0, int(width))) < lb[..., None]
    return out if out_dtype.is_bool else xp.astype(out, out_dtype.np_dtype)


def _seqmask_lower(ctx, lengths, maxlen=None, *, dtype):
    cast = maxlen is not None and lengths.dtype.kind == "f"
    if maxlen is None:  # the width is a reduction of the lengths (on the host when they are known)
        maxlen = _default_width(da if isinstance(lengths, da.Array) else np, lengths)
    lengths, width = ctx.as_dask(lengths), (_NAN,) if isinstance(maxlen, da.Array) else (max(0, int(maxlen)),)
    ind = _LETTERS[:lengths.ndim]
    return da.blockwise(_seqmask_block, ind + "z", lengths, ind, ctx.as_dask(maxlen), "", new_axes={"z": width},
                        out_dtype=dtype, cast=cast, dtype=dtype.np_dtype,
                        meta=np.empty((0,) * (lengths.ndim + 1), dtype=dtype.np_dtype))


register_op("SequenceMask", _seqmask_infer, lower=_seqmask_lower, eager=lambda xp, lengths, maxlen=None, *, dtype: (
    _seqmask_block(lengths, _default_width(xp, lengths) if maxlen is None else maxlen, out_dtype=dtype,
                   cast=maxlen is not None and lengths.dtype.kind == "f")))
not_differentiable("Unique", "Where", "GatherNdLinear", "SequenceMask")


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """mask[..., j] = j < lengths[...]: shape lengths.shape + [maxlen], of `dtype` (default bool).

    maxlen: a scalar int (default: max(lengths), data-dependent unless lengths is a constant).
    ValueError for a non-scalar maxlen; TypeError for non-real lengths or a non-integer maxlen.
    """
    lengths = convert_to_tensor(lengths)
    inputs = [lengths]
    if maxlen is not None:
        maxlen = convert_to_tensor(maxlen, preferred_dtype=dtypes.int32)
        if maxlen.shape.ndims not in (None, 0):
            raise ValueError(f"Argument `maxlen` must be scalar for sequence_mask, received `maxlen` = "
                             f"{maxlen!r} with shape '{maxlen.shape}' instead")
        check_dtype(maxlen, INT, "SequenceMask", "maxlen")
        inputs.append(maxlen)
    return apply_op("SequenceMask", inputs, {"dtype": as_dtype(dtype)}, name=name, default_name="SequenceMask")
