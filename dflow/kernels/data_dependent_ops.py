"""Ops whose output sizes depend on the data: boolean_mask, where(condition) coordinates, unique,
dynamic_partition, dynamic_stitch, sequence_mask (without maxlen); and gather_nd.

Static shapes carry None where the size is data; `dflow.shape`/`dflow.size` of the results are
right at run time. Chunked lowerings give dask arrays with unknown (nan) chunk sizes, never
computing them while lowering (a plan is lowered once, without data):

- boolean_mask, dynamic_partition, where: one output chunk per input chunk along the masked
  axis (inner masked dims are first merged into one chunk), so results stay chunked.
- unique: one task over the whole input (as `da.unique`); `y` is one chunk, `idx` is chunked
  like the input when its length is known.
- dynamic_stitch: the permutation is one task over all indices; the data are gathered chunk by
  chunk when their chunk sizes are known, else from one merged chunk per output chunk.
- sequence_mask without maxlen: the width is max(lengths), a reduction read by each chunk.

What later ops can do with unknown chunk sizes: elementwise ops between results of one source
(same unknown chunking), reductions, shape/size, the ops of this module, gather_nd with 1-D
index rows; ops that need sizes while lowering (reshape of an unknown dim, slicing by position,
matmul over an unknown contraction) raise UnimplementedError naming the op.
"""

from __future__ import annotations

import collections

import array_api_compat
import dask.array as da
import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.ops import Tensor, constant_value
from ..graph.registry import def_grad, not_differentiable, register_op
from ..graph.shape import TensorShape, unknown_shape
from .common import ANY, INT, NUMERIC, REAL, apply_op, check_dtype, convert_to_tensor, normalize_axis

__all__ = ["boolean_mask", "unique", "unique_with_counts", "dynamic_partition", "dynamic_stitch",
           "gather_nd", "sequence_mask"]

_NAN = float("nan")
_LETTERS = "abcdefghijklmnopqrstuvwxy"  # blockwise index letters; "z" is kept for new axes


def _err(op_name, msg):
    return InvalidArgumentError(None, None, f"{op_name}: {msg}")


def _xp(*arrays):
    return array_api_compat.array_namespace(*[a for a in arrays if hasattr(a, "shape")])


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


def _identity(b):
    return b


def _pick(t, i):
    return t[i]


def _block_lengths(x, axis):
    ind = _LETTERS[:x.ndim]
    first = x.blocks[tuple(slice(None) if i == axis else 0 for i in range(x.ndim))]
    return da.blockwise(_length, ind[axis], first, ind, axis=axis, adjust_chunks={ind[axis]: 1},
                        concatenate=True, dtype=np.int64, meta=np.empty((0,), dtype=np.int64))


def _length(b, axis):
    return np.array([b.shape[axis]], dtype=np.int64)


def _block_starts(x, axis):
    """A 1-D int64 dask array (one chunk of size 1 per block of `x` along `axis`): where each
    block starts; read in the run when the chunk sizes are unknown."""
    c = x.chunks[axis]
    if _known(c):
        return da.from_array(np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64), chunks=1)
    lengths = _block_lengths(x, axis)
    return da.cumsum(lengths) - lengths


def _aligned(x, mask, axis, n_mask_dims):
    """(x, mask) chunked so that each block of x along `axis` pairs with one block of the mask
    holding whole C-order runs (inner masked dims in one chunk)."""
    x = _merge_dims(x, range(axis + 1, axis + n_mask_dims))
    mask = _merge_dims(mask, range(1, n_mask_dims))
    cx, cm = x.chunks[axis], mask.chunks[0]
    if _known(cx) and _known(cm):
        if cx != cm:
            mask = mask.rechunk({0: cx})
    elif _known(cx) or _known(cm) or len(cx) != len(cm):
        x, mask = _merge_dims(x, [axis]), _merge_dims(mask, [0])
    # else: both unknown with one block count: results of one source; sizes checked per block
    return x, mask


def _check_prefix(op_name, shape, mask_shape, what="mask"):
    for i, (a, b) in enumerate(zip(shape, mask_shape)):
        if a == a and b == b and int(a) != int(b):
            raise _err(op_name, f"{what} shape {list(mask_shape)} does not match the tensor's dims "
                                f"{list(shape)} (dim {i})")


# ---- boolean_mask -------------------------------------------------------------------------------


def _mask_infer(inputs, attrs):
    x, mask = inputs
    k, axis = mask.shape.ndims, attrs["axis"]
    if x.shape.ndims is None:
        return unknown_shape(), x.dtype
    if x.shape.ndims < axis + k:
        raise ValueError(f"boolean_mask: mask of rank {k} at axis {axis} needs a tensor of rank at least "
                         f"{axis + k}, got {x.shape}")
    if not x.shape[axis:axis + k].is_compatible_with(mask.shape):
        raise ValueError(f"boolean_mask: Shapes {x.shape[axis:axis + k]} and {mask.shape} are incompatible")
    dims = x.shape.as_list()
    return TensorShape(dims[:axis] + [None] + dims[axis + k:]), x.dtype


def _mask_eager(xp, x, mask, axis):
    if tuple(x.shape[axis:axis + mask.ndim]) != tuple(mask.shape):
        raise _err("boolean_mask", f"mask shape {list(mask.shape)} does not match the tensor's dims "
                                   f"{list(x.shape[axis:axis + mask.ndim])}")
    return x[(slice(None),) * axis + (_as_bool(xp, mask),)]


def _mask_block(xb, mb, axis, op_name="boolean_mask", part=None, n=None):
    xp = _xp(xb, mb)
    if tuple(xb.shape[axis:axis + mb.ndim]) != tuple(mb.shape):
        raise _err(op_name, f"mask shape {list(mb.shape)} does not match the tensor's dims "
                            f"{list(xb.shape[axis:axis + mb.ndim])}")
    if part is not None:
        _check_partitions(xp, mb, n)
        mb = mb == part
    return xb[(slice(None),) * axis + (_as_bool(xp, mb),)]


def _masked(ctx, x, mask, axis, **kw):
    """The chunked lowering shared by boolean_mask and dynamic_partition."""
    x, mask = ctx.as_dask(x), ctx.as_dask(mask)
    k = mask.ndim
    _check_prefix(ctx.op.name, x.shape[axis:axis + k], mask.shape)
    x, mask = _aligned(x, mask, axis, k)
    ind = _LETTERS[:x.ndim]
    out = ind[:axis + 1] + ind[axis + k:]
    return da.blockwise(_mask_block, out, x, ind, mask, ind[axis:axis + k], axis=axis,
                        adjust_chunks={ind[axis]: lambda c: _NAN}, concatenate=True, align_arrays=False,
                        dtype=x.dtype, meta=x._meta, **kw)


register_op("BooleanMask", _mask_infer, eager=_mask_eager, lower=lambda ctx, x, m, axis: _masked(ctx, x, m, axis))


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The entries of `tensor` where `mask` is true (nonzero), flattened over the masked dims.

    mask: rank k >= 1 known statically, shape matching tensor.shape[axis:axis+k], bool or numeric.
    Output: tensor.shape[:axis] + [None] + tensor.shape[axis+k:], tensor's dtype. ValueError for a
    scalar mask, a mask of unknown rank or incompatible shapes; InvalidArgumentError at run time
    when the fed shapes do not match. Chunked: one output chunk per chunk along `axis`.
    """
    tensor, mask = convert_to_tensor(tensor), convert_to_tensor(mask)
    if mask.shape.ndims is None:
        raise ValueError("Number of mask dimensions must be specified, even if some dimensions are None. "
                         " E.g. shape=[None] is ok, but shape=None is not.")
    if mask.shape.ndims == 0:
        raise ValueError("mask cannot be scalar.")
    if isinstance(axis, Tensor):
        axis = constant_value(axis)
        if axis is None:
            raise ValueError("boolean_mask: axis must be known when the graph is built")
    axis = normalize_axis(axis or 0, tensor.shape.ndims, "boolean_mask")
    return apply_op("BooleanMask", [tensor, mask], {"axis": axis}, name=name, default_name="boolean_mask")


def _mask_grad_infer(inputs, attrs):
    g, mask = inputs
    axis = attrs["axis"]
    if g.shape.ndims is None:
        return unknown_shape(), g.dtype
    dims = g.shape.as_list()
    return TensorShape(dims[:axis] + mask.shape.as_list() + dims[axis + 1:]), g.dtype


def _unmask_block(gb, mb, start=None, *, axis):
    """Zeros of the block's shape with `gb`'s rows at the true entries of `mb`."""
    xp = _xp(gb, mb)
    mb = _as_bool(xp, mb)
    if start is not None:  # gb is the whole gradient: this block's rows start at `start`
        s = int(start[0])
        gb = gb[(slice(None),) * axis + (slice(s, s + int(xp.sum(xp.astype(mb, xp.int64)))),)]
    out = xp.zeros(tuple(gb.shape[:axis]) + tuple(mb.shape) + tuple(gb.shape[axis + 1:]), dtype=gb.dtype)
    out[(slice(None),) * axis + (mb,)] = gb
    return out


def _mask_grad_lower(ctx, g, mask, axis):
    g, mask = ctx.as_dask(g), ctx.as_dask(mask)
    k = mask.ndim
    mask = _merge_dims(mask, range(1, k))
    ind = _LETTERS[:g.ndim]
    mind = "".join(_LETTERS[g.ndim + j] for j in range(k - 1))
    out = ind[:axis + 1] + mind + ind[axis + 1:]
    same = len(g.chunks[axis]) == len(mask.chunks[0]) and not _known(g.chunks[axis])
    if same:  # one block of g per block of the mask (g came from the masked output)
        args = (g, ind, mask, ind[axis] + mind)
    else:  # whole g along axis, each block slicing its rows from where its mask block starts
        g = _merge_dims(g, [axis])
        gi = ind[:axis] + "z" + ind[axis + 1:]
        args = (g, gi, mask, ind[axis] + mind, _mask_starts(mask), ind[axis])
    return da.blockwise(_unmask_block, out, *args, axis=axis, adjust_chunks={ind[axis]: mask.chunks[0]},
                        concatenate=True, align_arrays=False, dtype=g.dtype, meta=g._meta)


def _count_rows(mb):
    xp = _xp(mb)
    return xp.sum(xp.astype(_as_bool(xp, mb), xp.int64))


def _mask_starts(mask):
    """Per mask block (along axis 0), the number of true entries before it (read in the run)."""
    ind = _LETTERS[:mask.ndim]
    counts = da.blockwise(_block_count, ind[0], mask, ind, adjust_chunks={ind[0]: 1}, concatenate=True,
                          dtype=np.int64, meta=np.empty((0,), dtype=np.int64))
    return da.cumsum(counts) - counts


def _block_count(mb):
    return np.array([int(_count_rows(mb))], dtype=np.int64)


register_op("BooleanMaskGrad", _mask_grad_infer, eager=lambda xp, g, m, axis: _unmask_block(g, m, axis=axis),
            lower=_mask_grad_lower)


@def_grad("BooleanMask")
def _boolean_mask_grad(op, g):
    return [apply_op("BooleanMaskGrad", [g, op.inputs[1]], {"axis": op.get_attr("axis")}), None]


# ---- where(condition): coordinates of true elements ----------------------------------------------


def _where_infer(inputs, attrs):
    (c,) = inputs
    n = c.shape.ndims
    if n == 0:
        raise ValueError(f"where: condition {c.name!r} must have rank >= 1 (coordinates of a scalar)")
    return TensorShape([None, n]), dtypes.int64


def _coords(xp, c):
    idx = xp.nonzero(_as_bool(xp, c))
    if not idx:
        return xp.zeros((0, 0), dtype=xp.int64)
    return xp.astype(xp.stack(idx, axis=1), xp.int64)


def _where_block(cb, start):
    xp = _xp(cb)
    out = _coords(xp, cb)
    shift = xp.zeros((cb.ndim,), dtype=xp.int64)
    shift[0] = int(start[0])
    return out + shift


def _where_lower(ctx, c):
    c = _merge_dims(ctx.as_dask(c), range(1, np.ndim(c)))
    ind = _LETTERS[:c.ndim]
    return da.blockwise(_where_block, ind[0] + "z", c, ind, _block_starts(c, 0), ind[0], new_axes={"z": c.ndim},
                        adjust_chunks={ind[0]: lambda n: _NAN}, concatenate=True, align_arrays=False,
                        dtype=np.int64, meta=np.empty((0, 0), dtype=np.int64))


register_op("Where", _where_infer, eager=lambda xp, c: _coords(xp, c), lower=_where_lower)


def where_coordinates(condition, name=None):
    """The coordinates of the true (nonzero) entries of `condition`, in row-major order (TF1's
    one-argument `where`): int64 of shape [None, rank(condition)]. ValueError for a scalar.
    Chunked: one output chunk per chunk of `condition` along its first dim."""
    return apply_op("Where", [convert_to_tensor(condition)], name=name, default_name="Where")


# ---- unique ----------------------------------------------------------------------------------------


def _unique_infer(n_out):
    def infer(inputs, attrs):
        (x,) = inputs
        if x.shape.ndims not in (None, 1):
            raise ValueError(f"unique: Shape must be rank 1 but is rank {x.shape.ndims} ({x.name!r})")
        idx = attrs["out_idx"]
        if idx not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"unique: out_idx must be int32 or int64, got {idx.name}")
        n = x.shape.as_list() if x.shape.ndims == 1 else [None]
        return [(TensorShape([None]), x.dtype), (TensorShape(n), idx), (TensorShape([None]), idx)][:n_out]
    return infer


def _unique_eager(xp, x, out_idx, counts=False):
    """(y, idx[, count]) with y in order of first occurrence (NaNs each distinct, as TF)."""
    if x.ndim != 1:
        raise _err("unique", f"unique expects a 1D vector, got shape {list(x.shape)}")
    values, first, inverse, cnt = xp.unique_all(x)
    order = xp.argsort(first)
    rank = xp.argsort(order)
    dt = out_idx.np_dtype
    out = (xp.take(values, order), xp.astype(xp.take(rank, xp.reshape(inverse, (-1,))), dt))
    return out + (xp.astype(xp.take(cnt, order), dt),) if counts else out


def _unique_task(x, out_idx, counts):
    return _unique_eager(_xp(x), x, out_idx, counts)


def _unique_lower(counts):
    def lower(ctx, x, out_idx):
        x = ctx.as_dask(x)
        t = da.blockwise(_unique_task, "", x, "a", out_idx=out_idx, counts=counts, concatenate=True,
                         dtype=object, meta=np.empty((), dtype=object))
        n = x.shape[0]
        y = da.blockwise(_pick, "z", t, "", i=0, new_axes={"z": (_NAN,)}, dtype=x.dtype, meta=x._meta)
        idx = da.blockwise(_pick, "z", t, "", i=1, new_axes={"z": (n,)}, dtype=out_idx.np_dtype,
                           meta=np.empty((0,), dtype=out_idx.np_dtype))
        if n == n and x.numblocks[0] > 1:
            idx = idx.rechunk(x.chunks)
        if not counts:
            return y, idx
        c = da.blockwise(_pick, "z", t, "", i=2, new_axes={"z": (_NAN,)}, dtype=out_idx.np_dtype,
                         meta=np.empty((0,), dtype=out_idx.np_dtype))
        return y, idx, c
    return lower


register_op("Unique", _unique_infer(2), eager=_unique_eager, lower=_unique_lower(False), num_outputs=2)
register_op("UniqueWithCounts", _unique_infer(3), eager=lambda xp, x, out_idx: _unique_eager(xp, x, out_idx, True),
            lower=_unique_lower(True), num_outputs=3)
not_differentiable("Unique", "UniqueWithCounts", "Where")

UniqueOutput = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCountsOutput = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def unique(x, out_idx=dtypes.int32, name=None):
    """(y, idx): the distinct values of 1-D `x` in order of first occurrence, and for each entry of
    `x` its position in `y` (x == y[idx]). y: [None] of x's dtype; idx: x's shape, `out_idx`
    (int32/int64). ValueError if x is not 1-D. Computed in one task (y is one chunk)."""
    y, idx = apply_op("Unique", [convert_to_tensor(x)], {"out_idx": as_dtype(out_idx)}, name=name,
                      default_name="Unique")
    return UniqueOutput(y, idx)


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """(y, idx, count): as `unique`, with how many times each value of y occurs in x."""
    outs = apply_op("UniqueWithCounts", [convert_to_tensor(x)], {"out_idx": as_dtype(out_idx)}, name=name,
                    default_name="UniqueWithCounts")
    return UniqueWithCountsOutput(*outs)


# ---- dynamic_partition / dynamic_stitch -------------------------------------------------------------


def _check_partitions(xp, p, n):
    bad = (p < 0) | (p >= n)
    if bool(xp.any(bad)):
        pos = tuple(int(i[0]) for i in xp.nonzero(bad))
        raise _err("DynamicPartition", f"partitions[{','.join(map(str, pos))}] = {int(p[pos])} is not in [0, {n})")


def _partition_infer(inputs, attrs):
    data, p = inputs
    if p.dtype != dtypes.int32:
        raise TypeError(f"dynamic_partition: partitions must be int32, got {p.dtype.name}")
    n = attrs["num_partitions"]
    if data.shape.ndims is None or p.shape.ndims is None:
        return [(unknown_shape(), data.dtype)] * n
    k = p.shape.ndims
    if data.shape.ndims < k or not data.shape[:k].is_compatible_with(p.shape):
        raise ValueError(f"dynamic_partition: partitions shape {p.shape} must be a prefix of data shape "
                         f"{data.shape}")
    return [(TensorShape([None] + data.shape.as_list()[k:]), data.dtype)] * n


def _partition_eager(xp, data, p, num_partitions):
    _check_partitions(xp, p, num_partitions)
    return tuple(_mask_eager(xp, data, p == i, 0) for i in range(num_partitions))


def _partition_lower(ctx, data, p, num_partitions):
    return [_masked(ctx, data, p, 0, part=i, n=num_partitions, op_name="DynamicPartition")
            for i in range(num_partitions)]


register_op("DynamicPartition", _partition_infer, eager=_partition_eager, lower=_partition_lower, num_outputs=None)


def dynamic_partition(data, partitions, num_partitions, name=None):
    """Splits `data` into `num_partitions` tensors: output i holds data[partitions == i], in order.

    partitions: int32, its shape a prefix of data's. Each output: [None] + data.shape[rank(p):].
    InvalidArgumentError at run time for a partition outside [0, num_partitions).
    """
    data, partitions = convert_to_tensor(data), convert_to_tensor(partitions)
    num_partitions = int(num_partitions)
    if num_partitions < 1:
        raise ValueError(f"dynamic_partition: num_partitions must be at least 1, got {num_partitions}")
    outs = apply_op("DynamicPartition", [data, partitions], {"num_partitions": num_partitions}, name=name,
                    default_name="DynamicPartition")
    return list(outs) if isinstance(outs, list) else [outs]


def _stitch_infer(inputs, attrs):
    n = attrs["N"]
    idx, data = inputs[:n], inputs[n:]
    rest = None
    for i, d in zip(idx, data):
        check_dtype(i, INT, "DynamicStitch", "indices")
        if d.dtype != data[0].dtype:
            raise TypeError(f"dynamic_stitch: data must have one dtype, got {data[0].dtype.name} and {d.dtype.name}")
        if i.shape.ndims is None or d.shape.ndims is None:
            continue
        if d.shape.ndims < i.shape.ndims or not d.shape[:i.shape.ndims].is_compatible_with(i.shape):
            raise ValueError(f"dynamic_stitch: data shape {d.shape} must start with its indices' shape {i.shape}")
        r = d.shape[i.shape.ndims:]
        try:
            rest = r if rest is None else rest.merge_with(r)
        except ValueError:
            raise ValueError(f"dynamic_stitch: data shapes beyond the indices differ: {rest} vs {r}") from None
    values = [constant_value(i) for i in idx]
    size = None
    if all(v is not None for v in values):
        size = max((int(v.max()) + 1 for v in values if v.size), default=0)
    if rest is None:
        return unknown_shape() if size is None else TensorShape([size]).concatenate(unknown_shape()), data[0].dtype
    return TensorShape([size]).concatenate(rest), data[0].dtype


def _stitch_perm(*indices):
    """(permutation into the flattened data + one zero row, output length): later entries win."""
    xp = _xp(*indices)
    flat = xp.concat([xp.reshape(xp.astype(i, xp.int64), (-1,)) for i in indices]) if indices else xp.zeros(0)
    total = int(flat.shape[0])
    if total and bool(xp.any(flat < 0)):
        raise _err("DynamicStitch", f"indices[{int(xp.nonzero(flat < 0)[0][0])}] is out of range")
    n = int(xp.max(flat)) + 1 if total else 0
    perm = xp.full((n,), total, dtype=xp.int64)  # unset rows read the zero row
    perm[flat] = xp.arange(total, dtype=xp.int64)  # numpy assigns in order: the last write wins
    return perm


def _stitch_eager(xp, *args, N):  # noqa: N803 - TF1 attr name
    idx, data = args[:N], args[N:]
    perm = _stitch_perm(*idx)
    return xp.take(_flat_data(xp, idx, data), perm, axis=0)


def _flat_data(xp, idx, data):
    rest = tuple(data[0].shape[idx[0].ndim:])
    for i, d in zip(idx, data):
        if tuple(d.shape[:i.ndim]) != tuple(i.shape):
            raise _err("DynamicStitch", f"data shape {list(d.shape)} must start with indices shape {list(i.shape)}")
    parts = [xp.reshape(d, (-1,) + rest) for d in data]
    return xp.concat(parts + [xp.zeros((1,) + rest, dtype=data[0].dtype)], axis=0)


def _gather_rows(perm_b, flat):
    return _xp(flat).take(flat, perm_b, axis=0)


def _stitch_lower(ctx, *args, N):  # noqa: N803 - TF1 attr name
    idx, data = args[:N], [ctx.as_dask(d) for d in args[N:]]
    rest = data[0].shape[np.ndim(idx[0]):]
    if all(not isinstance(i, da.Array) for i in idx):
        perm = ctx.as_dask(_stitch_perm(*[np.asarray(i) for i in idx]))
    else:
        perm = da.blockwise(_stitch_perm, "z", *[a for i in idx for a in (ctx.as_dask(i), _LETTERS[:np.ndim(i)])],
                            new_axes={"z": (_NAN,)}, concatenate=True, dtype=np.int64,
                            meta=np.empty((0,), dtype=np.int64))
    parts = []
    for i, d in zip(idx, data):
        k = np.ndim(i)
        parts.append(d if k == 1 else d.reshape((-1,) + tuple(ctx.known_shape(d)[k:])))
    parts.append(da.zeros((1,) + tuple(int(r) for r in rest), dtype=data[0].dtype,
                          chunks=((1,),) + tuple(parts[0].chunks[1:]) if parts else -1))
    flat = da.concatenate(parts, axis=0) if len(parts) > 1 else parts[0]
    if _known(flat.chunks[0]):
        return flat[perm]
    flat = _merge_dims(flat, [0])
    ind = _LETTERS[:flat.ndim]
    return da.blockwise(_gather_rows, "z" + ind[1:], perm, "z", flat, ind, concatenate=True,
                        dtype=flat.dtype, meta=flat._meta)


register_op("DynamicStitch", _stitch_infer, eager=_stitch_eager, lower=_stitch_lower)


def dynamic_stitch(indices, data, name=None):
    """merged[indices[m][i...]] = data[m][i...]: interleaves `data` by `indices` (later entries win).

    indices: list of int tensors; data: list of one dtype, data[m].shape = indices[m].shape + R.
    Output: [max(indices) + 1] + R (static when every index is a constant, else None); rows no
    index names are zeros. InvalidArgumentError at run time for a negative index.
    """
    indices, data = list(indices), list(data)
    if len(indices) != len(data):
        raise ValueError(f"List argument 'data' to 'dynamic_stitch' Op with length {len(data)} must match "
                         f"length {len(indices)} of argument 'indices'.")
    if not indices:
        raise ValueError("dynamic_stitch needs at least one indices tensor")
    inputs = [convert_to_tensor(i) for i in indices] + [convert_to_tensor(d) for d in data]
    return apply_op("DynamicStitch", inputs, {"N": len(indices)}, name=name, default_name="DynamicStitch")


@def_grad("DynamicStitch")
def _stitch_grad(op, g):
    from .index_ops import gather

    n = op.get_attr("N")
    return [None] * n + [gather(g, i) for i in op.inputs[:n]]


@def_grad("DynamicPartition")
def _partition_grad(op, *grads):
    from .array_ops import reshape, shape, size
    from .creation_ops import range as range_

    data, p = op.inputs
    original = reshape(range_(size(p)), shape(p))
    parts = dynamic_partition(original, p, op.get_attr("num_partitions"))
    grads = [g if g is not None else _zeros_rows(data, part) for g, part in zip(grads, op.outputs)]
    return [reshape(dynamic_stitch(parts, grads), shape(data)), None]


def _zeros_rows(data, part):
    from .creation_ops import zeros_like

    return zeros_like(part)


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


def _linear(ib, batch_start=(), *, pshape, b, block_info=None):
    """Row-major positions into params reshaped to [prod(batch+indexed dims), ...], checked."""
    xp = _xp(ib)
    depth = ib.shape[-1]
    dims = pshape[b:b + depth]
    ib = xp.astype(ib, xp.int64)
    bad = (ib < 0) | (ib >= xp.asarray(dims, dtype=xp.int64)) if depth else xp.zeros(ib.shape, dtype=xp.bool)
    if bool(xp.any(bad)):
        row = tuple(int(i[0]) for i in xp.nonzero(xp.any(bad, axis=-1)))
        raise _err("GatherNd", f"indices{list(row)} = {[int(v) for v in ib[row]]} does not index into param "
                               f"shape {list(pshape)}")
    strides = np.cumprod([1] + list(pshape[b:b + depth][::-1]))[::-1]
    lin = xp.sum(ib * xp.asarray(strides[1:], dtype=xp.int64), axis=-1) if depth else xp.zeros(ib.shape[:-1], dtype=xp.int64)
    if b:
        loc = [0] * b if block_info is None else [s for s, _ in block_info[0]["array-location"][:b]]
        grids = np.indices(ib.shape[:b]).reshape(b, *ib.shape[:b], *([1] * (ib.ndim - 1 - b)))
        flat_b = np.ravel_multi_index(tuple(grids[j] + loc[j] for j in range(b)), pshape[:b])
        lin = lin + xp.asarray(flat_b * int(strides[0]), dtype=xp.int64)
    return lin


def _gather_nd_eager(xp, params, indices, batch_dims):
    b, depth = batch_dims, indices.shape[-1]
    pshape = tuple(int(d) for d in params.shape)
    if tuple(indices.shape[:b]) != pshape[:b]:
        raise _err("GatherNd", f"batch dims of params {list(pshape)} and indices {list(indices.shape)} differ")
    lin = _linear(indices, pshape=pshape, b=b)
    rest = pshape[b + depth:]
    flat = xp.reshape(params, (-1,) + rest)
    return xp.reshape(xp.take(flat, xp.reshape(lin, (-1,)), axis=0), tuple(indices.shape[:-1]) + rest)


def _gather_nd_lower(ctx, params, indices, batch_dims):
    params, indices = ctx.as_dask(params), ctx.as_dask(indices)
    b, depth = batch_dims, int(indices.shape[-1])
    pshape = ctx.known_shape(params) if params.ndim > b + depth or depth > 1 or b else params.shape
    indices = indices.rechunk({indices.ndim - 1: -1}) if indices.numblocks[-1] > 1 else indices
    if b:
        ctx.known_shape(indices)
    lin = indices.map_blocks(_linear, drop_axis=indices.ndim - 1, dtype=np.int64, pshape=tuple(pshape), b=b,
                             meta=np.empty((0,) * (indices.ndim - 1), dtype=np.int64))
    rest = tuple(pshape[b + depth:])
    flat = params if (b + depth == 1) else params.reshape((-1,) + tuple(int(d) for d in rest))
    if depth == 0 and not b:
        flat = params.reshape((1,) + tuple(int(d) for d in rest))
    lin_flat = lin if lin.ndim == 1 else lin.reshape((-1,)) if lin.ndim else lin.reshape((1,))
    out = flat[lin_flat]
    if lin.ndim != 1:
        out = out.reshape(tuple(ctx.known_shape(lin)) + tuple(out.shape[1:]))
    return out


register_op("GatherNd", _gather_nd_infer, eager=_gather_nd_eager, lower=_gather_nd_lower)


def gather_nd(params, indices, name=None, batch_dims=0):
    """Slices of `params` at the index rows of `indices` (TF1's GatherNd).

    indices: int32/int64 of shape B + [N] + [D] (D <= rank(params) - batch_dims);
    output: indices.shape[:-1] + params.shape[batch_dims + D:], params' dtype. ValueError for
    impossible shapes; InvalidArgumentError at run time for an index row outside params.
    Chunked: a gather by positions (dask indexing); params and multi-dim index rows need known
    chunk sizes (UnimplementedError otherwise).
    """
    params, indices = convert_to_tensor(params), convert_to_tensor(indices)
    return apply_op("GatherNd", [params, indices], {"batch_dims": int(batch_dims)}, name=name,
                    default_name="GatherNd")


@def_grad("GatherNd")
def _gather_nd_grad(op, g):
    from .array_ops import reshape, shape
    from .math_ops import cast
    from .scatter_ops import unsorted_segment_sum

    params, indices = op.inputs
    b = op.get_attr("batch_dims")
    if not params.shape.is_fully_defined() or indices.shape.ndims is None or indices.shape[-1].value is None:
        raise LookupError("The gradient of gather_nd needs params of static shape and index rows of known depth")
    pshape = params.shape.as_list()
    depth = indices.shape[-1].value
    rest = pshape[b + depth:]
    lin = apply_op("GatherNdLinear", [indices], {"pshape": tuple(pshape), "b": b})
    n_rows = int(np.prod(pshape[:b + depth], dtype=np.int64))
    summed = unsorted_segment_sum(reshape(g, [-1] + rest), reshape(cast(lin, dtypes.int32), [-1]), n_rows)
    del shape
    return [reshape(summed, pshape), None]


def _linear_infer(inputs, attrs):
    return inputs[0].shape[:-1], dtypes.int64


def _linear_lower(ctx, indices, pshape, b):
    indices = ctx.as_dask(indices)
    indices = indices.rechunk({indices.ndim - 1: -1}) if indices.numblocks[-1] > 1 else indices
    return indices.map_blocks(_linear, drop_axis=indices.ndim - 1, dtype=np.int64, pshape=tuple(pshape), b=b,
                              meta=np.empty((0,) * (indices.ndim - 1), dtype=np.int64))


register_op("GatherNdLinear", _linear_infer, eager=lambda xp, i, pshape, b: _linear(i, pshape=tuple(pshape), b=b),
            lower=_linear_lower)
not_differentiable("GatherNdLinear")


# ---- sequence_mask -------------------------------------------------------------------------------------


def _seqmask_infer(inputs, attrs):
    lengths = inputs[0]
    check_dtype(lengths, REAL, "SequenceMask", "lengths")
    v = constant_value(inputs[-1])
    if v is not None and len(inputs) == 1:
        v = _default_width(np, np.asarray(v))
    return lengths.shape.concatenate([None if v is None else max(0, int(v))]), attrs["dtype"]


def _default_width(xp, lengths):
    """max(lengths), rounded up (TF1: range(max(lengths))); 0 for no lengths."""
    if not lengths.size:
        return 0
    return xp.ceil(xp.max(lengths)) if lengths.dtype.kind == "f" else xp.max(lengths)


def _seqmask_block(lb, width, *, out_dtype, cast):
    xp = _xp(lb)
    if cast:  # TF1 casts lengths to maxlen's integer dtype (float lengths truncate)
        lb = xp.astype(lb, xp.int64)
    out = xp.arange(max(0, int(width))) < lb[..., None]
    return out if out_dtype.is_bool else xp.astype(out, out_dtype.np_dtype)


def _seqmask_eager(xp, lengths, maxlen=None, *, dtype):
    width = _default_width(xp, lengths) if maxlen is None else maxlen
    return _seqmask_block(lengths, width, out_dtype=dtype, cast=maxlen is not None and lengths.dtype.kind == "f")


def _seqmask_lower(ctx, lengths, maxlen=None, *, dtype):
    cast = maxlen is not None and lengths.dtype.kind == "f"
    if maxlen is None:  # the width is a reduction of the lengths (on the host when they are known)
        maxlen = _default_width(da if isinstance(lengths, da.Array) else np, lengths)
    lengths = ctx.as_dask(lengths)
    ind = _LETTERS[:lengths.ndim]
    width = (max(0, int(maxlen)),) if not isinstance(maxlen, da.Array) else (_NAN,)
    return da.blockwise(_seqmask_block, ind + "z", lengths, ind, ctx.as_dask(maxlen), "", new_axes={"z": width},
                        out_dtype=dtype, cast=cast, dtype=dtype.np_dtype,
                        meta=np.empty((0,) * (lengths.ndim + 1), dtype=dtype.np_dtype))


register_op("SequenceMask", _seqmask_infer, eager=_seqmask_eager, lower=_seqmask_lower)
not_differentiable("SequenceMask")


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """mask[..., j] = j < lengths[...]: shape lengths.shape + [maxlen], of `dtype` (default bool).

    maxlen: a scalar int (default: max(lengths), data-dependent unless lengths is a constant).
    ValueError for a non-scalar maxlen; TypeError for non-real lengths.
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


del ANY, NUMERIC
