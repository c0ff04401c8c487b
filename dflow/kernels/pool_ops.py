"""Pooling over the spatial axes (1-, 2- and 3-D windows): MaxPool, AvgPool, MaxPoolWithArgmax and
their gradient ops, and the public functions `tf.nn.max_pool`, `avg_pool`, `max_pool_with_argmax`,
`max_pool1d/3d`, `avg_pool1d/3d` and `pool`.

Kernels walk the window offsets, not the pixels (the geometry and the walks are pool_windows'):
for each of the kh*kw offsets one strided view of the (padded) input holds that offset's cell of
every window, and the windows are reduced across those views (max, sum, or the first strict
maximum for the argmax). Gradients walk the same views and add into them. Every kernel takes whole images, so the chunked lowering is blockwise over the
batch axis N: one task per N chunk, the other axes in one chunk (`_blockwise`).

TF1 semantics: SAME pads (total = max((out - 1) * stride + k - in, 0), the smaller half before);
padded cells never win a max and are not counted in an average; the max-pool gradient goes to the
first maximum of each window in row-major window order (TF's MaxPoolGrad on CPU); argmax is the
flat index ((b * H + y) * W + x) * C + c of the unpadded NHWC input (b only with
`include_batch_in_index`). MaxPoolGrad and MaxPoolGradGrad take TF1's (orig_input, orig_output,
grad): the windows' maxima come from MaxPool's output instead of being recomputed. Gradient ops
are linear in the incoming gradient and each one's gradient is the other (MaxPoolGrad <->
MaxPoolGradGrad, AvgPool <-> AvgPoolGrad), so second derivatives work.
"""

from __future__ import annotations

import functools
import math

import array_api_compat
import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.registry import def_grad, register_op
from ..graph.shape import TensorShape
from .array_ops import shape as _shape
from .common import apply_op, convert_to_tensor
from .cores import intra_op_parts, run_parts
from .creation_ops import _ints, _partial_shape
from .pool_windows import (
    _add,
    _argmax,
    _channel_axis,
    _counts,
    _device,
    _first_max,
    _first_max_tiled,
    _geometry,
    _interior,
    _lowest,
    _maximum,
    _offsets,
    _out_shape,
    _out_size,
    _pad,
    _padded_shape,
    _spatial_axes,
    _tiling,
    _view,
)

__all__: list[str] = []  # public through dflow.nn (TF1 has no top-level max_pool)

_CHANNELS_LAST = {"NWC": 3, "NHWC": 4, "NDHWC": 5}
_CHANNELS_FIRST = {"NCW": 3, "NCHW": 4, "NCDHW": 5}


# ---- static inference and the chunked lowering (blockwise over N), shared --------------------


def _pool_attrs(attrs):
    return {k: attrs[k] for k in ("ksize", "strides", "padding", "data_format")}


def _attrs_of(op):
    return {k: op.get_attr(k) for k in ("ksize", "strides", "padding", "data_format")}


def _check_attrs(x_shape, attrs, op_type):
    rank, fmt = len(attrs["ksize"]), attrs["data_format"]
    if x_shape.ndims is not None and x_shape.ndims != rank:
        raise ValueError(f"{op_type}: input must be rank {rank} for data_format {fmt!r}, got shape {x_shape}")
    c = _channel_axis(fmt, rank)
    for what in ("ksize", "strides"):
        v = attrs[what]
        if v[0] != 1 or v[c] != 1:
            raise ValueError(f"{op_type}: pooling over the batch or channel dimension is not supported "
                             f"({what}={list(v)} for data_format {fmt!r})")
        if any(e < 1 for e in v):
            raise ValueError(f"{op_type}: {what} must be positive, got {list(v)}")


def _pooled_static(x_shape, attrs, op_type):
    rank = len(attrs["ksize"])
    dims = x_shape.as_list() if x_shape.ndims is not None else [None] * rank
    out = list(dims)
    for ax in _spatial_axes(attrs["data_format"], rank):
        if dims[ax] is not None:
            out[ax] = _out_size(dims[ax], attrs["ksize"][ax], attrs["strides"][ax], attrs["padding"], op_type)[0]
    return TensorShape(out)


def _pool_infer(op_type, kinds):
    def infer(inputs, attrs):
        x = inputs[0]
        if x.dtype.np_dtype.kind not in kinds:
            raise TypeError(f"Value passed to parameter 'input' of {op_type!r} has DataType {x.dtype.name}, "
                            f"not a {'floating' if kinds == 'f' else 'real'} type")
        _check_attrs(x.shape, attrs, op_type)
        return _pooled_static(x.shape, attrs, op_type), x.dtype

    return infer


def _grad_infer(op_type, pooled_second):
    def infer(inputs, attrs):
        x, y, g = inputs
        _check_attrs(x.shape, attrs, op_type)
        if x.dtype != y.dtype or x.dtype != g.dtype:
            raise TypeError(f"{op_type}: orig_input, orig_output and grad must have one dtype, got {x.dtype.name}, "
                            f"{y.dtype.name} and {g.dtype.name}")
        pooled = _pooled_static(x.shape, attrs, op_type)
        if not y.shape.is_compatible_with(pooled):
            raise ValueError(f"{op_type}: orig_output has shape {y.shape}, but max-pooling orig_input of shape "
                             f"{x.shape} gives {pooled}")
        return (x.shape if pooled_second else pooled), g.dtype

    return infer


def _per_block(kernel, *blocks, **attrs):
    return kernel(array_api_compat.array_namespace(blocks[0]), *blocks, **attrs)


def _blockwise(ctx, kernel, x, *others, out_shape, dtype, **attrs):
    """`kernel` on each N chunk of `x` (the other axes in one chunk) and the matching rows of
    `others`; output chunks (x's N chunks, whole other axes)."""
    x = ctx.as_dask(x)
    ctx.known_shape(x)
    x = x.rechunk({i: -1 for i in range(1, x.ndim)})
    others = [ctx.as_dask(o).rechunk((x.chunks[0],) + tuple((d,) for d in o.shape[1:])) for o in others]
    chunks = (x.chunks[0],) + tuple((int(d),) for d in out_shape[1:])
    return ctx.da.map_blocks(_per_block, kernel, x, *others, chunks=chunks, dtype=dtype, name=ctx.name(),
                             meta=np.empty((0,) * len(out_shape), dtype=dtype), **attrs)


def _lower_pool(kernel, op_type, by_blocks=False):
    """`by_blocks`: the kernel pools a large chunk by blocks of _BLOCK_CELLS input cells (MaxPool),
    holding a few blocks besides its output, not an output-sized buffer (the memory projection)."""

    def lower(ctx, x, **attrs):
        x = ctx.as_dask(x)
        out = _out_shape(ctx.known_shape(x), _geometry(x.shape, attrs, op_type))
        pooled = tuple(i for i, k in enumerate(attrs["ksize"]) if k > 1) if op_type == "MaxPool" else None
        inside = ctx.row_tail(x, kernel, attrs, out[1:], max_axes=pooled)  # in the tasks of the conv it pools
        if inside is not None:
            return inside
        rows = max(x.chunks[0]) if x.ndim and x.chunks[0] else 0
        cells = int(np.prod(x.shape[1:])) if x.ndim else 1
        if by_blocks and rows > 4 * max(1, _BLOCK_CELLS // max(1, cells)):
            out_chunk = rows * int(np.prod(out[1:])) * x.dtype.itemsize
            ctx.set_scratch(3 * _BLOCK_CELLS * x.dtype.itemsize / max(1, out_chunk))
        return _blockwise(ctx, kernel, x, out_shape=out, dtype=x.dtype, **attrs)

    return lower


def _lower_same_as_input(kernel, pooled_second):
    """Lowering of a max-pool gradient op (x, y, g): output x's shape (`pooled_second`, g pooled-shaped)
    or y's (g input-shaped)."""

    def lower(ctx, x, y, g, **attrs):
        x, y, g = ctx.as_dask(x), ctx.as_dask(y), ctx.as_dask(g)
        shape = ctx.known_shape(x)
        out = _out_shape(shape, _geometry(shape, attrs, "pool gradient")) if not pooled_second else shape
        return _blockwise(ctx, kernel, x, y, g, out_shape=out, dtype=g.dtype, **attrs)

    return lower


# ---- MaxPool ---------------------------------------------------------------------------------


_BLOCK_CELLS = 1 << 20  # a large input is pooled by blocks of images whose maxima stay in cache
# the work of a pool kernel per input cell, in matmul flops (how cores.intra_op_parts weighs work): a
# memory-bound cell costs about as much as 64 float32 matmul flops on one thread (LeNet's 2x2 pools),
# so LeNet's pools split at batch 128 too
_CELL_FLOPS = 64.0


def _max_pool(xp, x, **attrs):
    geo = _geometry(x.shape, attrs, "MaxPool")
    n = int(x.shape[0])
    step = max(1, _BLOCK_CELLS // max(1, x.size // max(n, 1)))  # (array_api_strict dtypes have no itemsize)
    parts = intra_op_parts(xp, n, _CELL_FLOPS * x.size)
    if n <= 4 * step and len(parts) == 1:
        return _max_pool_walk(xp, x, geo)
    # the walk reads and writes its output once per window offset: by blocks, in cache; the blocks of a large batch on the intra-op threads
    out = xp.empty(_out_shape(x.shape, geo), dtype=x.dtype, device=_device(x))

    def blocks(part):
        for i in range(part.start, part.stop, step):
            j = min(i + step, part.stop)
            out[i:j, ...] = _max_pool_walk(xp, x[i:j, ...], geo)

    run_parts(blocks, parts)
    return out


def _max_pool_walk(xp, x, geo):
    """The max of a box is the max along one axis of the maxima along the others: one pooled axis
    at a time, k strided views each, so kh + kw views instead of kh * kw, the later ones over an
    already pooled value. The outer axis first: its views are whole rows (long runs for numpy's
    loops) and the inner axis' views, whose runs are a channel vector, are read at 1/k the size."""
    v = _pad(xp, x, geo, _lowest(xp, x.dtype))
    for ax, k, s, n, _b, _a in geo:
        taps = [tuple(slice(o, o + s * (n - 1) + 1, s) if i == ax else slice(None) for i in range(x.ndim))
                for o in range(k)]
        out = xp.maximum(v[taps[0]], v[taps[1]]) if k > 1 else xp.asarray(v[taps[0]], copy=True)
        for tap in taps[2:]:
            out = _maximum(xp, out, v[tap])
        v = out
    return v


register_op("MaxPool", _pool_infer("MaxPool", "iuf"), eager=_max_pool, lower=_lower_pool(_max_pool, "MaxPool", by_blocks=True))


@def_grad("MaxPool")
def _max_pool_gradient(op, g):
    return [apply_op("MaxPoolGrad", [op.inputs[0], op.outputs[0], g], _attrs_of(op))]


# ---- MaxPoolGrad and MaxPoolGradGrad: each is the other's gradient (both linear in g) --------


def _max_pool_grad(xp, x, y, g, **attrs):
    """g added into the input cell of each window's first maximum; y is MaxPool(x), the windows'
    maxima (TF's CPU kernel recomputes them: the same values for the y its gradient passes). A
    large batch runs a part per intra-op thread (cores.py)."""
    n = int(x.shape[0])
    parts = intra_op_parts(xp, n, _CELL_FLOPS * x.size)
    if len(parts) == 1:
        return _max_pool_grad_part(xp, x, y, g, **attrs)
    _geometry(x.shape, attrs, "MaxPoolGrad")  # the whole input's errors, before any part runs
    dx = xp.empty(x.shape, dtype=g.dtype)

    def part(p):
        _max_pool_grad_part(xp, x[p, ...], y[p, ...], g[p, ...], out=dx[p, ...], **attrs)

    run_parts(part, parts)
    return dx


def _max_pool_grad_part(xp, x, y, g, out=None, **attrs):
    """The gradient of one part; written into `out` (numpy, a C-contiguous view) when given."""
    geo = _geometry(x.shape, attrs, "MaxPoolGrad")
    # g * hit is ~10x faster than where(hit, g, 0) but gives nan for an infinite g outside the hit
    finite = bool(xp.all(xp.isfinite(g))) if xp.isdtype(g.dtype, "real floating") else True
    if finite and isinstance(x, np.ndarray) and _pairs_nhwc(x, geo, attrs):
        return _max_pool_grad_pairs(x, y, g, out)
    tiling = _tiling(x.shape, geo)
    if tiling is not None:  # LeNet's 2x2/2 pools: ~1.7x faster than the walk below
        hit, gs = _first_max_tiled(xp, x, tiling, y), xp.reshape(g, tiling[1])
        if finite and isinstance(hit, np.ndarray) and out is not None:  # the product straight into the part
            np.multiply(gs, hit, out=np.reshape(out, tiling[0]))
            return out
        # numpy multiplies by the bool mask itself (an astype first: 2x slower); strict namespaces need it
        dx = xp.multiply(gs, hit if isinstance(hit, np.ndarray) else xp.astype(hit, g.dtype)) if finite else \
            xp.where(hit, gs, xp.zeros((), dtype=g.dtype, device=_device(g)))
        return _into(xp.reshape(dx, x.shape), out)
    dx = xp.zeros(_padded_shape(x.shape, geo), dtype=g.dtype, device=_device(g))
    zero = xp.zeros((), dtype=g.dtype, device=_device(g))
    for _i, view, hit in _first_max(xp, x, geo, y):
        dx[view] += g * xp.astype(hit, g.dtype) if finite else xp.where(hit, g, zero)  # in place on the view
    return _into(dx[_interior(x.ndim, geo)], out)


def _pairs_nhwc(x, geo, attrs):
    """A 2x2 window at stride 2 over NHWC without padding (the CNN pool), on a value whose W and C
    axes are contiguous: `_max_pool_grad_pairs` takes it."""
    return (attrs["data_format"] == "NHWC" and x.ndim == 4 and all(k == s == 2 and not b and not a
                                                                  for _ax, k, s, _n, b, a in geo)
            and x.strides[3] == x.itemsize and x.strides[2] == x.shape[3] * x.itemsize)


def _window_rows(a, n, h2, length):
    """[n, h2, 2, length] view of an NHWC value's window rows: the two input rows of each row of
    windows, each cut to its first `length` cells (the W*C run the windows cover)."""
    s = a.strides
    return np.lib.stride_tricks.as_strided(a, (n, h2, 2, length), (s[0], 2 * s[1], s[1], a.itemsize))


def _max_pool_grad_pairs(x, y, g, out):
    """MaxPoolGrad of a 2x2/2 NHWC pool (numpy, finite g) on whole input rows: numpy's loops run
    over rows of W*C cells instead of one channel vector at a time (the tiled walk's views). y and g are repeated along W to the rows' layout; a cell is its
    window's first maximum (TF's row-major ties) when it equals the maximum and no earlier cell of
    its window does: the right cell of a pair loses to the left one (the row shifted by C), the
    bottom row to either cell of the top row. A cropped last row or column (odd sizes) gets 0."""
    n, h, w, c = x.shape
    h2, w2 = int(y.shape[1]), int(y.shape[2])
    length = 2 * w2 * c
    hit = np.equal(_window_rows(x, n, h2, length), np.repeat(y, 2, axis=2).reshape(n, h2, 1, length))
    right = _right_cells(length, c)
    rows = hit.reshape(-1, length)
    np.greater(rows[:, c:], rows[:, :-c] & right[c:], out=rows[:, c:])  # a > b is a and not b
    top, bottom = hit[:, :, 0, :], hit[:, :, 1, :]
    either = top.copy()  # the top row's hit, on both cells of its pair
    either[..., c:] |= top[..., :-c] & right[c:]
    either[..., :-c] |= top[..., c:] & ~right[:-c]
    np.greater(bottom, either, out=bottom)
    if out is None:
        out = np.empty(x.shape, dtype=g.dtype)
    if 2 * h2 < h or 2 * w2 < w:
        out[:, 2 * h2:, ...] = 0
        out[:, :, 2 * w2:, ...] = 0
    np.multiply(hit, np.repeat(g, 2, axis=2).reshape(n, h2, 1, length), out=_window_rows(out, n, h2, length))
    return out


@functools.lru_cache(maxsize=64)
def _right_cells(length, c):
    """Which cells of a window row (`length` = W*C) are the right cell of their pair."""
    right = (np.arange(length) // c) % 2 == 1
    right.flags.writeable = False
    return right


def _into(value, out):
    if out is None:
        return value
    out[...] = value
    return out


def _max_pool_grad_grad(xp, x, y, gg, **attrs):
    """The cell of `gg` (input-shaped) at each window's first maximum: pooled shape (y: MaxPool(x))."""
    geo = _geometry(x.shape, attrs, "MaxPoolGradGrad")
    ggpad = _pad(xp, gg, geo, 0)
    out = None
    for _i, view, hit in _first_max(xp, x, geo, y):
        out = xp.where(hit, ggpad[view], xp.zeros((), dtype=gg.dtype, device=_device(gg)) if out is None else out)
    return out


register_op("MaxPoolGrad", _grad_infer("MaxPoolGrad", True), eager=_max_pool_grad,
            lower=_lower_same_as_input(_max_pool_grad, True))


register_op("MaxPoolGradGrad", _grad_infer("MaxPoolGradGrad", False), eager=_max_pool_grad_grad,
            lower=_lower_same_as_input(_max_pool_grad_grad, False))


@def_grad("MaxPoolGrad")
def _max_pool_grad_gradient(op, gg):
    return [None, None, apply_op("MaxPoolGradGrad", [op.inputs[0], op.inputs[1], gg], _attrs_of(op))]


@def_grad("MaxPoolGradGrad")
def _max_pool_grad_grad_gradient(op, ggg):
    return [None, None, apply_op("MaxPoolGrad", [op.inputs[0], op.inputs[1], ggg], _attrs_of(op))]


# ---- MaxPoolWithArgmax -----------------------------------------------------------------------


def _max_pool_argmax(xp, x, batch_start=0, *, include_batch_in_index=False, Targmax=dtypes.int64, **attrs):
    """Flat NHWC indices ((b * H + y) * W + x) * C + c of each window's first maximum."""
    geo = _geometry(x.shape, attrs, "MaxPoolWithArgmax")
    arg = xp.astype(_argmax(xp, x, geo), xp.int64)
    dev = _device(x)
    flat = xp.zeros(arg.shape, dtype=xp.int64, device=dev)
    ks = [k for _ax, k, *_ in geo]
    inner = math.prod(ks)
    for ax, k, s, n, b, _a in geo:  # coordinate along ax = out position * s - pad + offset along ax
        inner //= k
        off = (arg // inner) % k
        pos = xp.reshape(xp.arange(n, dtype=xp.int64, device=dev) * s - b, tuple(n if i == ax else 1 for i in range(x.ndim)))
        flat = flat * int(x.shape[ax]) + pos + off
    c = x.shape[-1]
    flat = flat * int(c) + xp.reshape(xp.arange(c, dtype=xp.int64, device=dev), (1,) * (x.ndim - 1) + (c,))
    if include_batch_in_index:
        per_image = math.prod(int(d) for d in x.shape[1:])
        b = xp.arange(x.shape[0], dtype=xp.int64, device=dev) + int(batch_start)
        flat = flat + xp.reshape(b, (-1,) + (1,) * (x.ndim - 1)) * per_image
    return xp.astype(flat, getattr(xp, dtypes.as_dtype(Targmax).name))


def _argmax_infer(inputs, attrs):
    out, dtype = _pool_infer("MaxPoolWithArgmax", "iuf")(inputs, _pool_attrs(attrs))
    return [(out, dtype), (out, dtypes.as_dtype(attrs["Targmax"]))]


def _argmax_lower(ctx, x, **attrs):
    x = ctx.as_dask(x)
    out = _out_shape(ctx.known_shape(x), _geometry(x.shape, attrs, "MaxPoolWithArgmax"))
    values = _blockwise(ctx, _max_pool, x, out_shape=out, dtype=x.dtype, **_pool_attrs(attrs))
    xr = x.rechunk({i: -1 for i in range(1, x.ndim)})
    starts = np.cumsum((0,) + xr.chunks[0][:-1]).astype(np.int64)
    arg_dtype = np.dtype(dtypes.as_dtype(attrs["Targmax"]).np_dtype)
    argmax = ctx.da.map_blocks(_argmax_block, xr, starts, chunks=(xr.chunks[0],) + tuple((d,) for d in out[1:]),
                               dtype=arg_dtype, meta=np.empty((0,) * len(out), arg_dtype), attrs=attrs,
                               name=ctx.name("-argmax"))
    return values, argmax


def _argmax_block(block, starts, attrs, block_id=None):
    xp = array_api_compat.array_namespace(block)
    return _max_pool_argmax(xp, block, int(starts[block_id[0]]), **attrs)


register_op("MaxPoolWithArgmax", _argmax_infer, num_outputs=2, lower=_argmax_lower,
            eager=lambda xp, x, **attrs: (_max_pool(xp, x, **_pool_attrs(attrs)), _max_pool_argmax(xp, x, **attrs)))


@def_grad("MaxPoolWithArgmax")
def _max_pool_argmax_gradient(op, g, g_argmax):
    return [apply_op("MaxPoolGrad", [op.inputs[0], op.outputs[0], g], _attrs_of(op))]


# ---- AvgPool and AvgPoolGrad: each is the other's gradient -----------------------------------


def _avg_pool(xp, x, **attrs):
    geo = _geometry(x.shape, attrs, "AvgPool")
    xpad = _pad(xp, x, geo, 0)
    out = None
    for off in _offsets(geo):
        v = xpad[_view(x.ndim, geo, off)]
        out = xp.asarray(v, copy=True) if out is None else _add(out, v)
    return out / _counts(xp, x.shape, geo, x)


def _avg_pool_grad(xp, in_shape, g, **attrs):
    """g / count spread evenly over the unpadded cells of each window."""
    in_shape = (int(g.shape[0]),) + tuple(_ints(in_shape)[1:])
    geo = _geometry(in_shape, attrs, "AvgPoolGrad")
    share = g / _counts(xp, in_shape, geo, g)
    dx = xp.zeros(_padded_shape(in_shape, geo), dtype=g.dtype, device=_device(g))
    for off in _offsets(geo):
        view = _view(len(in_shape), geo, off)
        dx[view] += share
    return dx[_interior(len(in_shape), geo)]


def _avg_grad_infer(inputs, attrs):
    shp, g = inputs
    dims = _partial_shape(shp)  # shape(x) of an x of partly known shape gives those dims
    return TensorShape(dims if dims is not None else [None] * len(attrs["ksize"])), g.dtype


def _avg_grad_lower(ctx, in_shape, g, **attrs):
    in_shape = [int(d) for d in ctx.host_value(in_shape, "AvgPoolGrad orig_input_shape").reshape(-1)]
    g = ctx.as_dask(g)
    g = g.rechunk({i: -1 for i in range(1, g.ndim)})
    chunks = (g.chunks[0],) + tuple((d,) for d in in_shape[1:])
    return ctx.da.map_blocks(_avg_grad_block, g, chunks=chunks, dtype=g.dtype, name=ctx.name(),
                             meta=np.empty((0,) * len(in_shape), g.dtype), in_shape=in_shape, attrs=attrs)


def _avg_grad_block(g, in_shape, attrs):
    return _avg_pool_grad(array_api_compat.array_namespace(g), in_shape, g, **attrs)


register_op("AvgPool", _pool_infer("AvgPool", "f"), eager=_avg_pool, lower=_lower_pool(_avg_pool, "AvgPool"))


register_op("AvgPoolGrad", _avg_grad_infer, eager=_avg_pool_grad, lower=_avg_grad_lower)


@def_grad("AvgPool")
def _avg_pool_gradient(op, g):
    x = op.inputs[0]
    in_shape = _shape(x) if not x.shape.is_fully_defined() else \
        convert_to_tensor(np.array(x.shape.as_list(), dtype=np.int32))
    return [apply_op("AvgPoolGrad", [in_shape, g], _attrs_of(op))]


@def_grad("AvgPoolGrad")
def _avg_pool_grad_gradient(op, gg):
    return [None, apply_op("AvgPool", [gg], _attrs_of(op))]


# ---- public functions ------------------------------------------------------------------------


def _full(v, what, rank, data_format, fn):
    """ksize/strides as one int per axis: an int or a list of 1, rank - 2 or rank ints (TF1)."""
    if isinstance(v, (int, np.integer)):
        v = [int(v)]
    v = [int(e) for e in v]
    spatial = _spatial_axes(data_format, rank)
    if len(v) == rank:
        return tuple(v)
    if len(v) in (1, rank - 2):
        full = [1] * rank
        for i, ax in enumerate(spatial):
            full[ax] = v[0] if len(v) == 1 else v[i]
        return tuple(full)
    raise ValueError(f"{fn}: {what} should be of length 1, {rank - 2} or {rank}. Received: {what}={v} of "
                     f"length {len(v)}")


def _attrs(x, ksize, strides, padding, data_format, fn, rank=None):
    padding = padding.decode() if isinstance(padding, bytes) else str(padding)
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{fn}: padding must be 'SAME' or 'VALID', got {padding!r}")
    fmts = _CHANNELS_LAST | _CHANNELS_FIRST
    if data_format not in fmts:
        raise ValueError(f"{fn}: data_format must be one of {sorted(fmts)}, got {data_format!r}")
    r = fmts[data_format]
    if rank is not None and r != rank:
        raise ValueError(f"{fn}: data_format {data_format!r} is not a rank-{rank} layout")
    if x.shape.ndims is not None and x.shape.ndims != r:
        raise ValueError(f"{fn}: input must be rank {r} for data_format {data_format!r}, got {x.name!r} of "
                         f"shape {x.shape}")
    return {"ksize": _full(ksize, "ksize", r, data_format, fn), "strides": _full(strides, "strides", r, data_format, fn),
            "padding": padding, "data_format": data_format}


def _pool(op_type, value, ksize, strides, padding, data_format, name, fn, rank=None):
    with name_scope(name, op_type, [value]) as scope:
        x = convert_to_tensor(value, name="input")
        return apply_op(op_type, [x], _attrs(x, ksize, strides, padding, data_format, fn, rank), name=scope)


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """Max over each window of the spatial axes: [N, H, W, C] (or NCHW) -> pooled H, W.

    ksize/strides: an int or 1, 2 or 4 ints (no pooling over N or C: ValueError); padding SAME
    (padded cells never win) or VALID. Real dtypes. Gradient: to each window's first maximum.
    """
    value = input if value is None else value
    return _pool("MaxPool", value, ksize, strides, padding, data_format, name, "max_pool")


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """Mean over each window of the spatial axes (SAME: over the unpadded cells only); float dtypes."""
    value = input if value is None else value
    return _pool("AvgPool", value, ksize, strides, padding, data_format, name, "avg_pool")


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """max_pool over H, W of [N, H, W, C] (or NCHW)."""
    return _pool("MaxPool", input, ksize, strides, padding, data_format, name or "MaxPool2d", "max_pool2d", 4)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """avg_pool over H, W of [N, H, W, C] (or NCHW)."""
    return _pool("AvgPool", input, ksize, strides, padding, data_format, name or "AvgPool2D", "avg_pool2d", 4)


def _by_rank(input, data_format, fn):  # noqa: A002
    x = convert_to_tensor(input, name="input")
    if data_format is not None:
        return x, data_format
    if x.shape.ndims not in (3, 4, 5):
        raise ValueError(f"{fn}: input must be of rank 3, 4 or 5 (known when building), got shape {x.shape}")
    return x, {3: "NWC", 4: "NHWC", 5: "NDHWC"}[x.shape.ndims]


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """max_pool of a 3-, 4- or 5-D input (TF2's tf.nn.max_pool, TF1's max_pool_v2)."""
    x, data_format = _by_rank(input, data_format, "max_pool_v2")
    return _pool("MaxPool", x, ksize, strides, padding, data_format, name or "MaxPool", "max_pool_v2")


def avg_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """avg_pool of a 3-, 4- or 5-D input (TF2's tf.nn.avg_pool, TF1's avg_pool_v2)."""
    x, data_format = _by_rank(input, data_format, "avg_pool_v2")
    return _pool("AvgPool", x, ksize, strides, padding, data_format, name or "AvgPool", "avg_pool_v2")


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """max_pool over the W axis of [N, W, C] (or NCW)."""
    return _pool("MaxPool", input, ksize, strides, padding, data_format, name or "MaxPool1d", "max_pool1d", 3)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """avg_pool over the W axis of [N, W, C] (or NCW)."""
    return _pool("AvgPool", input, ksize, strides, padding, data_format, name or "AvgPool1D", "avg_pool1d", 3)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """max_pool over D, H, W of [N, D, H, W, C] (or NCDHW)."""
    return _pool("MaxPool", input, ksize, strides, padding, data_format, name or "MaxPool3D", "max_pool3d", 5)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """avg_pool over D, H, W of [N, D, H, W, C] (or NCDHW)."""
    return _pool("AvgPool", input, ksize, strides, padding, data_format, name or "AvgPool3D", "avg_pool3d", 5)


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", Targmax=None, name=None,  # noqa: A002,N803
                         output_dtype=None, include_batch_in_index=False):
    """(max_pool, argmax): argmax is the flat index ((b * H + y) * W + x) * C + c of each max in the
    unpadded input (b only with include_batch_in_index). NHWC real input only (TF1)."""
    if data_format != "NHWC":
        raise ValueError(f"max_pool_with_argmax only supports data_format 'NHWC', got {data_format!r}")
    if Targmax is not None and output_dtype is not None and dtypes.as_dtype(Targmax) != dtypes.as_dtype(output_dtype):
        raise ValueError("Targmax and output_dtype must agree")
    arg_dtype = dtypes.as_dtype(output_dtype or Targmax or dtypes.int64)
    if arg_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"max_pool_with_argmax: Targmax must be int32 or int64, got {arg_dtype.name}")
    with name_scope(name, "MaxPoolWithArgmax", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        attrs = _attrs(x, ksize, strides, padding, data_format, "max_pool_with_argmax", 4)
        attrs |= {"Targmax": arg_dtype, "include_batch_in_index": bool(include_batch_in_index)}
        return tuple(apply_op("MaxPoolWithArgmax", [x], attrs, name=scope))


def pool(input, window_shape, pooling_type, padding, dilation_rate=None, strides=None, name=None,  # noqa: A002
         data_format=None):
    """max or avg pooling of an N-D input (1-, 2- or 3-D windows); dilation_rate must be 1s."""
    window_shape = [int(w) for w in window_shape]
    n = len(window_shape)
    if n not in (1, 2, 3):
        raise ValueError(f"pool: window_shape must have 1, 2 or 3 entries, got {window_shape}")
    if dilation_rate is not None and any(int(d) != 1 for d in dilation_rate):
        raise NotImplementedError("dflow's tf.nn.pool does not support dilation_rate other than 1")
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"pool: pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    data_format = data_format or {1: "NWC", 2: "NHWC", 3: "NDHWC"}[n]
    strides = [1] * n if strides is None else [int(s) for s in strides]
    op_type = "MaxPool" if pooling_type == "MAX" else "AvgPool"
    return _pool(op_type, input, window_shape, strides, padding, data_format, name or f"{pooling_type.lower()}_pool",
                 "pool", n + 2)
