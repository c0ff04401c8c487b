"""Convolutions: Conv2D and its two backprop ops, and the composites conv1d, conv2d_transpose,
atrous_conv2d and convolution. `register_conv_family` also makes depthwise_ops' three ops.

Kernels work in NHWC (an NCHW value is viewed transposed, no copy) through the array namespace:
- Conv2D is im2col + one matmul: the (padded) input viewed as windows [n, OH, OW, KH, KW, C]
  with `as_strided` (no copy), copied into a [rows, KH*KW*C] matrix and multiplied by the
  filter [KH*KW*C, O], one BLAS call per slab of the batch: ~8 MiB of columns, copied into one
  buffer reused by every slab and written by the matmul straight into the output, so a task
  never holds the column matrix of a whole large chunk and a slab's columns are still in cache
  when multiplied. One input channel: the columns are built tap-major (`_im2col_slabs`).
- Conv2DBackpropInput (conv2d's input gradient, conv2d_transpose): per filter tap, one matmul
  dy @ w[i, j]^T added onto the strided view of the padded input that tap reads (col2im by taps).
- Conv2DBackpropFilter: cols^T @ dy, summed over the slabs.
The loops are over slabs of the batch and over the filter window, never over pixels.

Chunked lowering: blockwise over the batch axis N. Each chunk of N is one task, H, W and C are
rechunked to one chunk, and the filter is one block broadcast to every task. The filter
gradients are per-chunk partial sums reduced by a tree over the N chunks (`sum(axis=0)`), so a CNN
trains over an image set chunked along N in bounded memory.

Gradients follow TF1's nn_grad: Conv2D's are the two backprop ops, and each backprop op's are
Conv2D and the other backprop op, so second order works.
"""

from __future__ import annotations

import functools

import array_api_compat
import numpy as np

from ..graph.graph import name_scope
from ..graph.ops import constant_value
from ..graph.registry import def_grad, register_op
from ..graph.shape import TensorShape
from .array_ops import shape as _shape_op
from .common import apply_op, constant, convert_pair, convert_to_tensor
from .creation_ops import _int_input, _ints, _partial_shape
from .manip_ops import expand_dims, squeeze

__all__ = ["conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "conv2d_transpose", "conv1d", "atrous_conv2d",
           "convolution"]

# im2col columns held at once by a kernel: a few MiB stay in cache between their copy and the
# matmul (LeNet's conv2 at 1 BLAS thread: 16 MiB 37 ms, 8 MiB 30 ms, 4 MiB 30 ms), but each slab is
# one BLAS call, and on a loaded machine every call with 2 BLAS threads can wait a time slice for
# the second thread (10 calls of 2548 rows: +40 ms, 21 of 1176: +135 ms, measured here)
_SLAB_BYTES = 8 << 20
_FLOATS = ("float16", "float32", "float64")


# ---- geometry ----------------------------------------------------------------------------------


def _hwc(data_format):
    """Axes (H, W, C) of a 4-D value in `data_format`."""
    return (2, 3, 1) if data_format == "NCHW" else (1, 2, 3)


def _window(n, k, stride, dilation, padding, explicit, what):
    """(out, pad_before, pad_after) of one spatial dim (TF's arithmetic; SAME pads more after)."""
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        out = -(-n // stride)
        total = max((out - 1) * stride + eff - n, 0)
        return out, total // 2, total - total // 2
    before, after = explicit if padding == "EXPLICIT" else (0, 0)
    if n + before + after < eff:
        raise ValueError(f"Negative dimension size caused by subtracting {eff} from {n + before + after} "
                         f"for '{what}'")
    return (n + before + after - eff) // stride + 1, before, after


def _spatial(in_hw, k_hw, attrs, what):
    """[(out, pad_before, pad_after) or None where a size is unknown] for H and W."""
    axes = _hwc(attrs["data_format"])[:2]
    pads = attrs["explicit_paddings"] or (0,) * 8
    return [None if n is None or k is None else
            _window(n, k, attrs["strides"][a], attrs["dilations"][a], attrs["padding"], pads[2 * a:2 * a + 2], what)
            for n, k, a in zip(in_hw, k_hw, axes)]


class _Geom:
    """Where the windows of a conv sit in its NHWC input: out dims, pads, strides, dilations."""

    def __init__(self, in_hw, k_hw, attrs, what):
        (self.oh, self.pt, self.pb), (self.ow, self.pl, self.pr) = _spatial(in_hw, k_hw, attrs, what)
        axes = _hwc(attrs["data_format"])[:2]
        self.sh, self.sw = (attrs["strides"][a] for a in axes)
        self.dh, self.dw = (attrs["dilations"][a] for a in axes)


# ---- kernels (NHWC arrays of the namespace xp) ----------------------------------------------------


def _nhwc(xp, x, data_format):
    return xp.permute_dims(x, (0, 2, 3, 1)) if data_format == "NCHW" else x


def _from_nhwc(xp, x, data_format):
    return xp.permute_dims(x, (0, 3, 1, 2)) if data_format == "NCHW" else x


def _slabs(n, item_bytes):
    """Slices of the batch axis holding ~_SLAB_BYTES of columns each (one, empty, for n = 0)."""
    step = max(1, _SLAB_BYTES // max(item_bytes, 1))
    return [slice(i, min(i + step, n)) for i in range(0, n, step)] or [slice(0, 0)]


def _padded(xp, x, g):
    if not (g.pt or g.pb or g.pl or g.pr):
        return x
    n, h, w, c = x.shape
    out = xp.zeros((n, h + g.pt + g.pb, w + g.pl + g.pr, c), dtype=x.dtype)
    out[:, g.pt:g.pt + h, g.pl:g.pl + w, :] = x
    return out


def _windows(xp, xp_pad, g, kh, kw):
    """The windows of a padded NHWC value, [n, OH, OW, KH, KW, C], as a strided view (no copy)."""
    n, _, _, c = xp_pad.shape
    s0, s1, s2, s3 = xp_pad.strides
    # only ever read; no writeable=False, which cupy's as_strided does not take
    return xp.lib.stride_tricks.as_strided(
        xp_pad, (n, g.oh, g.ow, kh, kw, c), (s0, s1 * g.sh, s2 * g.sw, s1 * g.dh, s2 * g.dw, s3))


def _tap(x, g, i, j):
    """The input cells filter tap (i, j) meets, [n, OH, OW, C], from a padded NHWC value."""
    h0, w0 = i * g.dh, j * g.dw
    return x[:, h0:h0 + (g.oh - 1) * g.sh + 1:g.sh, w0:w0 + (g.ow - 1) * g.sw + 1:g.sw, :]


def _im2col_slabs(xp, x, g, kh, kw):
    """(batch slice, its im2col columns [rows, KH*KW*C]) for each slab of the batch. The columns
    of every slab are copied from the window view into one buffer allocated once (a fresh
    allocation per slab costs its page faults again); a slab's columns are only valid until the
    next one is yielded. A one-channel input (C = 1) is copied tap-major, one contiguous row of
    the slab's cells per filter tap, and the columns are that buffer's transposed view: a
    window-major copy would move one float at a time (1.7x slower on LeNet's first conv)."""
    n, c = x.shape[0], x.shape[3]
    xpad = _padded(xp, x, g)
    slabs = _slabs(n, g.oh * g.ow * kh * kw * c * x.dtype.itemsize)
    step = slabs[0].stop - slabs[0].start
    if c == 1:
        buf = xp.empty((kh * kw, step * g.oh * g.ow), dtype=x.dtype)
        for s in slabs:
            m = s.stop - s.start
            rows = buf[:, :m * g.oh * g.ow]
            for i in range(kh):
                for j in range(kw):  # reshape of a contiguous row: a view (numpy, cupy) written in place
                    xp.reshape(rows[i * kw + j], (m, g.oh, g.ow, 1))[...] = _tap(xpad[s, ...], g, i, j)
            yield s, xp.matrix_transpose(rows)
        return
    win = _windows(xp, xpad, g, kh, kw)
    buf = xp.empty((step, g.oh, g.ow, kh, kw, c), dtype=x.dtype)
    for s in slabs:
        m = s.stop - s.start
        buf[:m, ...] = win[s, ...]
        yield s, xp.reshape(buf[:m, ...], (-1, kh * kw * c))


def _compute_dtype(xp, *arrays):
    """float16 convolves in float32 (BLAS has no half), as TF's CPU kernels accumulate."""
    return [xp.astype(a, xp.float32) if a.dtype == xp.float16 else a for a in arrays]


def _conv_fwd(xp, x, w, g):
    n, c, (kh, kw, _, o) = x.shape[0], x.shape[3], w.shape
    w2 = xp.reshape(w, (kh * kw * c, o))
    out = xp.empty((n, g.oh, g.ow, o), dtype=x.dtype)
    for s, cols in _im2col_slabs(xp, x, g, kh, kw):
        _matmul_into(xp, cols, w2, xp.reshape(out[s, ...], (-1, o)))
    return out


def _matmul_into(xp, a, b, out):
    """out[...] = a @ b, written in place by numpy (`out` a C-contiguous view), copied otherwise."""
    if isinstance(out, np.ndarray):
        np.matmul(a, b, out=out)
    else:
        out[...] = xp.matmul(a, b)


def _conv_backprop_input(xp, dy, w, g, in_nhwc):
    # one matmul per filter tap, dy [m, O] @ w[i, j]^T [O, C], added onto the cells that tap read:
    # the same flops as one [m, KH*KW*C] column-gradient matrix, without holding it (25-30 %
    # faster on LeNet's second conv, as fast at 8x the batch; one matmul into that matrix and
    # KH*KW strided adds out of it: 1.8x slower, the adds from its strided columns dominate)
    n, h, wd, c = in_nhwc
    d2 = xp.reshape(dy, (-1, w.shape[3]))
    dx = xp.zeros((n, h + g.pt + g.pb, wd + g.pl + g.pr, c), dtype=dy.dtype)
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            _tap(dx, g, i, j)[...] += xp.reshape(xp.matmul(d2, xp.matrix_transpose(w[i, j])), (n, g.oh, g.ow, c))
    return dx[:, g.pt:g.pt + h, g.pl:g.pl + wd, :]


def _conv_backprop_filter(xp, x, dy, g, kshape):
    kh, kw, c, o = kshape
    dw = None
    for s, cols in _im2col_slabs(xp, x, g, kh, kw):
        part = xp.matmul(xp.matrix_transpose(cols), xp.reshape(dy[s, ...], (-1, o)))
        dw = part if dw is None else _add_into(dw, part)
    return xp.reshape(dw, kshape)


# The eager kernels in the value's data_format; `op_type` names the op in errors. Module-level
# functions bound with functools.partial, so the lowered tasks pickle for process schedulers.


def _add_into(acc, part):
    if isinstance(acc, np.ndarray):
        acc += part
        return acc
    return acc + part


def _cast(xp, x, dtype):
    return x if x.dtype == dtype else xp.astype(x, dtype)


def _fwd_eager(kernel, op_type, xp, x, w, **attrs):
    fmt, dtype = attrs["data_format"], x.dtype
    x, w = _compute_dtype(xp, _nhwc(xp, x, fmt), w)
    g = _Geom(x.shape[1:3], w.shape[:2], attrs, op_type)
    return _cast(xp, _from_nhwc(xp, kernel(xp, x, w, g), fmt), dtype)


def _input_grad_eager(kernel, op_type, xp, input_sizes, w, dy, **attrs):
    fmt, dtype = attrs["data_format"], dy.dtype
    sizes = _ints(input_sizes)
    if len(sizes) != 4:
        raise ValueError(f"input_sizes must have 4 elements, got {sizes}")
    in_nhwc = [sizes[i] for i in (0,) + _hwc(fmt)]
    w, dy = _compute_dtype(xp, w, _nhwc(xp, dy, fmt))
    g = _Geom(in_nhwc[1:3], w.shape[:2], attrs, op_type)
    _check_out(g, dy.shape, in_nhwc)
    return _cast(xp, _from_nhwc(xp, kernel(xp, dy, w, g, in_nhwc), fmt), dtype)


def _filter_grad_eager(kernel, op_type, xp, x, filter_sizes, dy, **attrs):
    fmt, dtype = attrs["data_format"], x.dtype
    kshape = tuple(_ints(filter_sizes))
    if len(kshape) != 4:
        raise ValueError(f"filter_sizes must have 4 elements, got {list(kshape)}")
    x, dy = _compute_dtype(xp, _nhwc(xp, x, fmt), _nhwc(xp, dy, fmt))
    g = _Geom(x.shape[1:3], kshape[:2], attrs, op_type)
    _check_out(g, dy.shape, x.shape)
    return _cast(xp, kernel(xp, x, dy, g, kshape), dtype)


def _check_out(g, dy_shape, in_nhwc):
    if tuple(dy_shape[1:3]) != (g.oh, g.ow) or dy_shape[0] != in_nhwc[0]:
        raise ValueError(f"out_backprop has batch and spatial dims {list(dy_shape[:3])}, but the "
                         f"convolution of an input of NHWC shape {list(in_nhwc)} gives {[in_nhwc[0], g.oh, g.ow]}")


# ---- chunked lowering: blockwise over the batch axis --------------------------------------------------


def _on_block(eager, attrs, x, w):
    """`eager` on one task's blocks: a batch chunk and the whole filter."""
    return eager(array_api_compat.array_namespace(x, w), x, w, **attrs)


def _on_block_input_grad(eager, attrs, sizes, w, dy):
    """One batch chunk's input gradient: `sizes` (the whole input's) with this chunk's batch."""
    xp = array_api_compat.array_namespace(w, dy)
    return eager(xp, xp.asarray([dy.shape[0]] + [int(s) for s in sizes[1:]]), w, dy, **attrs)


def _on_block_partial(eager, attrs, kshape, x, dy):
    """One batch chunk's part of a filter gradient, with a leading axis of 1 for the tree sum."""
    xp = array_api_compat.array_namespace(x, dy)
    return xp.reshape(eager(xp, x, xp.asarray(kshape), dy, **attrs), (1,) + tuple(int(k) for k in kshape))


def _batch_chunked(ctx, x):
    """`x` (4-D) chunked along N only."""
    x = ctx.as_dask(x)
    ctx.known_shape(x)
    return x.rechunk({1: -1, 2: -1, 3: -1}) if any(len(c) > 1 for c in x.chunks[1:]) else x


def _whole(ctx, w):
    w = ctx.as_dask(w)
    return w.rechunk(-1) if w.npartitions > 1 else w


def _meta(x, ndim):
    from dask.array.utils import meta_from_array

    return meta_from_array(x._meta, ndim=ndim, dtype=x.dtype)


def _fwd_lower(eager, out_c, ctx, x, w, **attrs):
    x, w = _batch_chunked(ctx, x), _whole(ctx, w)
    dims = _out_shape("", list(x.shape), list(w.shape[:2]), attrs, out_c(w.shape)).as_list()
    return ctx.da.blockwise(functools.partial(_on_block, eager, attrs), "nxyz", x, "nabc", w, "ijkl",
                            new_axes=dict(zip("xyz", dims[1:])), concatenate=True, dtype=x.dtype, meta=_meta(x, 4))


def _input_grad_lower(eager, ctx, input_sizes, w, dy, **attrs):
    sizes = np.asarray(_ints(ctx.host_value(input_sizes, "input_sizes")), np.int64)
    dy, w = _batch_chunked(ctx, dy), _whole(ctx, w)
    return ctx.da.blockwise(functools.partial(_on_block_input_grad, eager, attrs, sizes), "nxyz", w, "ijkl", dy, "nabc",
                            new_axes=dict(zip("xyz", sizes[1:].tolist())), concatenate=True, dtype=dy.dtype,
                            meta=_meta(dy, 4))


def _filter_grad_lower(eager, ctx, x, filter_sizes, dy, **attrs):
    kshape = np.asarray(_ints(ctx.host_value(filter_sizes, "filter_sizes")), np.int64)
    x, dy = _batch_chunked(ctx, x), _batch_chunked(ctx, dy)
    parts = ctx.da.blockwise(functools.partial(_on_block_partial, eager, attrs, kshape), "nijkl", x, "nabc", dy,
                             "ndef", new_axes=dict(zip("ijkl", kshape.tolist())), adjust_chunks={"n": 1},
                             concatenate=True, dtype=x.dtype, meta=_meta(x, 5))
    return parts.sum(axis=0, dtype=x.dtype)  # a tree over the batch chunks


# ---- static inference ---------------------------------------------------------------------------


def _shape_str(s):
    return "?" if s.ndims is None else "[" + ",".join("?" if d is None else str(d) for d in s.as_list()) + "]"


def _check_inputs(op_type, x, w, names=("input", "filter")):
    if x.dtype != w.dtype:
        raise TypeError(f"Input {names[1]!r} of {op_type!r} Op has type {w.dtype.name} that does not match type "
                        f"{x.dtype.name} of argument {names[0]!r}.")
    if x.dtype.name not in _FLOATS:
        raise TypeError(f"Value passed to parameter {names[0]!r} of {op_type!r} has DataType {x.dtype.name} not in "
                        f"list of allowed values: {', '.join(_FLOATS)}")
    for t, name in zip((x, w), names):
        if t.shape.ndims is not None and t.shape.ndims != 4:
            raise ValueError(f"Shape must be rank 4 but is rank {t.shape.ndims} for '{op_type}' ({name}) with input "
                             f"shapes: {_shape_str(x.shape)}, {_shape_str(w.shape)}.")


def _dims4(t):
    return t.shape.as_list() if t.shape.ndims is not None else [None] * 4


def _check_depth(op_type, c, fc, x, w):
    if c is not None and fc is not None and c != fc:
        raise ValueError(f"Depth of input ({c}) is not a multiple of input depth of filter ({fc}) for '{op_type}' "
                         f"with input shapes: {_shape_str(x.shape)}, {_shape_str(w.shape)}."
                         if c % fc else f"{op_type}: grouped convolutions (input depth {c}, filter depth {fc}) "
                         "are not supported")


def _out_shape(op_type, x_dims, k_dims, attrs, out_c):
    """The static output shape of a conv of input dims `x_dims` (data_format order)."""
    h, w, _ = _hwc(attrs["data_format"])
    oh, ow = (None if d is None else d[0] for d in _spatial([x_dims[h], x_dims[w]], k_dims, attrs, op_type))
    return TensorShape([x_dims[0], out_c, oh, ow] if attrs["data_format"] == "NCHW" else [x_dims[0], oh, ow, out_c])


def _conv_infer(op_type, depthwise=False):
    def infer(inputs, attrs):
        x, w = inputs
        _check_inputs(op_type, x, w)
        xd, wd = _dims4(x), _dims4(w)
        c = xd[_hwc(attrs["data_format"])[2]]
        if depthwise:
            if c is not None and wd[2] is not None and c != wd[2]:
                raise ValueError(f"Dimensions must be equal, but are {c} and {wd[2]} for '{op_type}' with input "
                                 f"shapes: {_shape_str(x.shape)}, {_shape_str(w.shape)}.")
            out_c = None if None in (wd[2], wd[3]) else wd[2] * wd[3]
        else:
            _check_depth(op_type, c, wd[2], x, w)
            out_c = wd[3]
        return _out_shape(op_type, xd, wd[:2], attrs, out_c), x.dtype
    return infer


def _input_grad_infer(op_type, depthwise=False):
    def infer(inputs, attrs):
        sizes, w, dy = inputs
        _check_inputs(op_type, dy, w, ("out_backprop", "filter"))
        dims = _partial_shape(sizes)
        if dims is not None and len(dims) != 4:
            raise ValueError(f"{op_type}: input_sizes must have 4 elements, got {dims}")
        dims = dims or [None] * 4
        h, wa, c = _hwc(attrs["data_format"])
        wd, dyd = _dims4(w), _dims4(dy)
        dims[0] = dims[0] if dims[0] is not None else dyd[0]
        dims[c] = dims[c] if dims[c] is not None else wd[2]
        if None not in (dims[c], wd[2]) and dims[c] != wd[2]:
            raise ValueError(f"{op_type}: input_sizes has depth {dims[c]}, the filter {wd[2]} (filter shape {w.shape})")
        _check_backprop(op_type, dims, wd, dyd, attrs, depthwise)
        return TensorShape(dims), dy.dtype
    return infer


def _filter_grad_infer(op_type, depthwise=False):
    def infer(inputs, attrs):
        x, sizes, dy = inputs
        _check_inputs(op_type, x, dy, ("input", "out_backprop"))
        dims = _partial_shape(sizes)
        if dims is not None and len(dims) != 4:
            raise ValueError(f"{op_type}: filter_sizes must have 4 elements, got {dims}")
        dims = dims or [None] * 4
        xd = _dims4(x)
        c = xd[_hwc(attrs["data_format"])[2]]
        dims[2] = dims[2] if dims[2] is not None else c
        _check_backprop(op_type, xd, dims, _dims4(dy), attrs, depthwise)
        return TensorShape(dims), x.dtype
    return infer


def _check_backprop(op_type, x_dims, w_dims, dy_dims, attrs, depthwise):
    """ValueError if the out_backprop's known dims differ from those the conv of x_dims gives."""
    out_c = (None if None in w_dims[2:] else w_dims[2] * w_dims[3]) if depthwise else w_dims[3]
    want = _out_shape(op_type, x_dims, w_dims[:2], attrs, out_c).as_list()
    if any(a is not None and b is not None and a != b for a, b in zip(want, dy_dims)):
        raise ValueError(f"{op_type}: out_backprop has shape {dy_dims}, but the convolution of an input of shape "
                         f"{x_dims} by a filter of shape {w_dims} gives {want}")


# ---- the ops ------------------------------------------------------------------------------------


def register_conv_family(op, kernels, depthwise, out_channels):
    """Registers `op`, `op`BackpropInput and `op`BackpropFilter from their NHWC kernels (forward,
    input gradient, filter gradient) and gives them their gradient rules; `out_channels(filter
    shape)` is the output depth."""
    types = (op, op + "BackpropInput", op + "BackpropFilter")
    eager = [functools.partial(wrap, kernel, t) for wrap, kernel, t in
             zip((_fwd_eager, _input_grad_eager, _filter_grad_eager), kernels, types)]
    register_op(op, _conv_infer(op, depthwise), eager=eager[0],
                lower=functools.partial(_fwd_lower, eager[0], out_channels))
    register_op(types[1], _input_grad_infer(types[1], depthwise), eager=eager[1],
                lower=functools.partial(_input_grad_lower, eager[1]))
    register_op(types[2], _filter_grad_infer(types[2], depthwise), eager=eager[2],
                lower=functools.partial(_filter_grad_lower, eager[2]))
    _conv_grads(op)


def _attrs(op):
    return {k: op.get_attr(k) for k in ("strides", "padding", "explicit_paddings", "data_format", "dilations")}


def _shape_of(t):
    """`t`'s shape as an int32 tensor: a constant when static, else a Shape op."""
    return constant(t.shape.as_list(), dtype="int32") if t.shape.is_fully_defined() else _shape_op(t)


def _conv_grads(prefix):
    @def_grad(prefix)
    def _fwd_grad(op, g):
        x, w = op.inputs
        a = _attrs(op)
        return [apply_op(prefix + "BackpropInput", [_shape_of(x), w, g], a),
                apply_op(prefix + "BackpropFilter", [x, _shape_of(w), g], a)]

    @def_grad(prefix + "BackpropInput")
    def _input_grad_grad(op, g):
        _, w, dy = op.inputs
        a = _attrs(op)
        return [None, apply_op(prefix + "BackpropFilter", [g, _shape_of(w), dy], a), apply_op(prefix, [g, w], a)]

    @def_grad(prefix + "BackpropFilter")
    def _filter_grad_grad(op, g):
        x, _, dy = op.inputs
        a = _attrs(op)
        return [apply_op(prefix + "BackpropInput", [_shape_of(x), g, dy], a), None, apply_op(prefix, [x, g], a)]


register_conv_family("Conv2D", (_conv_fwd, _conv_backprop_input, _conv_backprop_filter), False, lambda ws: ws[3])


# ---- public functions ---------------------------------------------------------------------------


def _sequence(v, what, data_format, default=1):
    """strides/dilations as 4 ints in data_format order; an int or 1 or 2 values set H and W."""
    v = [default] if v is None else [int(e) for e in (v if isinstance(v, (list, tuple, np.ndarray)) else [v])]
    if len(v) == 1:
        v = v * 2
    if len(v) == 2:
        v = [1, 1] + v if data_format == "NCHW" else [1] + v + [1]
    if len(v) != 4:
        raise ValueError(f"{what} should be of length 1, 2 or 4. Received: {what}={v} of length {len(v)}")
    n_ax, c_ax = 0, _hwc(data_format)[2]
    if v[n_ax] != 1 or v[c_ax] != 1:
        raise ValueError(f"Current implementation does not yet support {what} in the batch and depth dimensions. "
                         f"Received: {what}={v}")
    if min(v) < 1:
        raise ValueError(f"{what} must be positive, got {v}")
    return tuple(v)


def _padding(padding, data_format):
    """(padding attr, explicit_paddings): "SAME"/"VALID", or an explicit [[b, a]] * 4 list."""
    if isinstance(padding, str):
        p = padding.upper()
        if p not in ("SAME", "VALID"):
            raise ValueError(f"Attr 'padding' of 'Conv2D' Op passed string {padding!r} not in: \"SAME\", \"VALID\", "
                             "\"EXPLICIT\".")
        return p, ()
    flat = [int(e) for pair in padding for e in pair]
    if len(flat) != 8:
        raise ValueError(f"padding should be a list of 4 [before, after] pairs, got {padding}")
    n_ax, c_ax = 0, _hwc(data_format)[2]
    if flat[2 * n_ax:2 * n_ax + 2] != [0, 0] or flat[2 * c_ax:2 * c_ax + 2] != [0, 0] or min(flat) < 0:
        raise ValueError(f"Explicit padding must be non-negative and zero in the batch and depth dimensions, got "
                         f"{padding}")
    return "EXPLICIT", tuple(flat)


def _conv_attrs(strides, padding, data_format, dilations):
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    padding, explicit = _padding(padding, data_format)
    return {"strides": _sequence(strides, "strides", data_format), "padding": padding,
            "explicit_paddings": explicit, "data_format": data_format,
            "dilations": _sequence(dilations, "dilations", data_format)}


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002 - TF1 names
           data_format="NHWC", dilations=[1, 1, 1, 1], name=None, filters=None):  # noqa: B006 - TF1 default
    """2-D convolution (cross-correlation) of `input` [N, H, W, C] (NHWC; or NCHW) by `filter`
    [KH, KW, C, O] (op `Conv2D`).

    strides, dilations: an int, or 1, 2 or 4 values (batch and depth entries 1). padding: "SAME"
    (out = ceil(in / stride), extra padding at the bottom/right), "VALID", or explicit
    [[0, 0], [top, bottom], [left, right], [0, 0]] pairs in data_format order. Float dtypes.
    ValueError: ranks other than 4, input and filter depths that differ, a window larger than the
    (padded) input; TypeError: dtypes that differ or are not float.
    """
    del use_cudnn_on_gpu
    filter = filters if filter is None else filter
    if filter is None or strides is None or padding is None:
        raise ValueError("conv2d needs `filter`, `strides` and `padding`")
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    with name_scope(name, "Conv2D", [input, filter]) as scope:
        x, w = convert_pair(input, filter, "Conv2D")
        return apply_op("Conv2D", [x, w], attrs, name=scope)


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None, padding=None,  # noqa: A002
                          use_cudnn_on_gpu=True, data_format="NHWC", dilations=[1, 1, 1, 1],  # noqa: B006
                          name=None, filters=None):
    """The gradient of conv2d with respect to its input of shape `input_sizes` (op
    `Conv2DBackpropInput`); `out_backprop` has conv2d's output shape."""
    del use_cudnn_on_gpu
    filter = filters if filter is None else filter
    if filter is None or out_backprop is None or strides is None or padding is None:
        raise ValueError("conv2d_backprop_input needs `filter`, `out_backprop`, `strides` and `padding`")
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    with name_scope(name, "Conv2DBackpropInput", [filter, out_backprop]) as scope:
        dy, w = convert_pair(out_backprop, filter, "Conv2DBackpropInput")
        sizes = _int_input(input_sizes, "input_sizes", "Conv2DBackpropInput")
        return apply_op("Conv2DBackpropInput", [sizes, w, dy], attrs, name=scope)


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002 - TF1 names
                           use_cudnn_on_gpu=True, data_format="NHWC", dilations=[1, 1, 1, 1],  # noqa: B006
                           name=None):
    """The gradient of conv2d with respect to its filter of shape `filter_sizes` (op
    `Conv2DBackpropFilter`); `out_backprop` has conv2d's output shape."""
    del use_cudnn_on_gpu
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    with name_scope(name, "Conv2DBackpropFilter", [input, out_backprop]) as scope:
        x, dy = convert_pair(input, out_backprop, "Conv2DBackpropFilter")
        sizes = _int_input(filter_sizes, "filter_sizes", "Conv2DBackpropFilter")
        return apply_op("Conv2DBackpropFilter", [x, sizes, dy], attrs, name=scope)


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NHWC", name=None, input=None, filters=None, dilations=None):  # noqa: A002
    """The transpose (gradient) of conv2d: `value` [N, H, W, in_c] by `filter` [KH, KW, out_c, in_c]
    gives `output_shape` [N, OH, OW, out_c] (op `Conv2DBackpropInput`).

    ValueError: data_format not NHWC/NCHW, padding not SAME/VALID, output_shape not of 4
    elements, or channels that do not match the filter's.
    """
    value = input if value is None else value
    filter = filters if filter is None else filter
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"padding must be either VALID or SAME: {padding}")
    with name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        dy, w = convert_pair(value, filter, "conv2d_transpose")
        c_ax = _hwc(data_format)[2]
        if dy.shape.ndims is not None and w.shape.ndims is not None and \
                not dy.shape[c_ax].is_compatible_with(w.shape[3]):
            raise ValueError(f"input channels does not match filter's input channels, {dy.shape[c_ax]} != {w.shape[3]}")
        sizes = _int_input(output_shape, "output_shape", "conv2d_transpose")
        if sizes.shape.ndims is not None and not sizes.shape.is_compatible_with([4]):
            raise ValueError(f"output_shape must have shape (4,), got {sizes.shape}")
        known = constant_value(sizes)
        if known is not None and w.shape.ndims is not None and not w.shape[2].is_compatible_with(int(known[c_ax])):
            raise ValueError(f"output_shape does not match filter's output channels, {int(known[c_ax])} != "
                             f"{w.shape[2]}")
        attrs = _conv_attrs(strides, padding, data_format, dilations)
        return apply_op("Conv2DBackpropInput", [sizes, w, dy], attrs, name=scope)


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None, data_format=None,
           name=None, input=None, dilations=None):  # noqa: A002 - TF1 names
    """1-D convolution of `value` [N, W, C] (NWC; or NCW) by `filters` [K, C, O], as TF1: the
    inputs get a height of 1 (ExpandDims), go through conv2d and lose it again (Squeeze)."""
    del use_cudnn_on_gpu
    value = input if value is None else value
    if data_format not in (None, "NWC", "NHWC", "NCW", "NCHW"):
        raise ValueError(f"data_format must be \"NWC\" or \"NCW\". Received: data_format={data_format}")
    nchw = data_format in ("NCW", "NCHW")
    with name_scope(name, "conv1d", [value, filters]) as scope:
        x = convert_to_tensor(value, name="input")
        w = convert_to_tensor(filters, dtype=x.dtype, name="filters")
        spatial = 2 if nchw else 1
        x = expand_dims(x, spatial)
        w = expand_dims(w, 0)
        stride = [1] + [int(s) for s in (stride if isinstance(stride, (list, tuple)) else [stride])][-1:]
        rate = [1] + [int(s) for s in (dilations if isinstance(dilations, (list, tuple)) else [dilations or 1])][-1:]
        y = conv2d(x, w, strides=stride, padding=padding, data_format="NCHW" if nchw else "NHWC", dilations=rate,
                   name=scope)
        return squeeze(y, [spatial])


def atrous_conv2d(value, filters, rate, padding, name=None):
    """conv2d of `value` (NHWC) by `filters` with holes: dilation `rate` in H and W, stride 1.
    ValueError for a rate below 1 or a padding other than SAME/VALID."""
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"padding must be either VALID or SAME: {padding}")
    with name_scope(name, "atrous_conv2d", [value, filters]) as scope:
        return conv2d(value, filters, [1, 1, 1, 1], padding, dilations=[1, int(rate), int(rate), 1], name=scope)


def convolution(input, filter=None, padding=None, strides=None, dilation_rate=None, name=None,  # noqa: A002
                data_format=None, filters=None, dilations=None):
    """N-D convolution for N = 1 (conv1d) and N = 2 (conv2d), chosen from the input's rank.
    ValueError for an input of unknown rank or of rank other than 3 or 4 (dflow has no Conv3D)."""
    filter = filters if filter is None else filter
    rate = dilation_rate if dilation_rate is not None else dilations
    x = convert_to_tensor(input, name="input")
    rank = x.shape.ndims
    if rank == 3:
        fmt = "NCW" if data_format is not None and data_format.startswith("NC") else "NWC"
        return conv1d(x, filter, stride=strides or 1, padding=padding, data_format=fmt, name=name or "convolution",
                      dilations=rate)
    if rank == 4:
        return conv2d(x, filter, strides=strides or 1, padding=padding, data_format=data_format or "NHWC",
                      dilations=rate, name=name or "convolution")
    raise ValueError(f"convolution: dflow provides 1-D and 2-D convolutions (input rank 3 or 4); the input has "
                     f"shape {x.shape}")
