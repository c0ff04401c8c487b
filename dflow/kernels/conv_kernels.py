"""The NHWC kernels of the convolutions (conv_ops' Conv2D family; depthwise_ops uses the geometry
and the tap views): where a filter's windows sit in its input, and the forward pass and the two
gradients as BLAS matmuls over im2col columns, through the array namespace `xp`.

- Conv2D is im2col + one matmul: the (padded) input viewed as windows [n, OH, OW, KH, KW, C]
  with `as_strided` (no copy), copied into a [rows, KH*KW*C] matrix and multiplied by the
  filter [KH*KW*C, O], one BLAS call per slab of the batch: ~4 MiB of columns while dflow holds
  BLAS at one thread, ~8 MiB otherwise (`SLAB_BYTES`), copied into one buffer reused by every slab and written by the matmul straight into the output, so a task
  never holds the column matrix of a whole large chunk and a slab's columns are still in cache
  when multiplied. One input channel: the columns are built tap-major (`_im2col_slabs`).
- Conv2DBackpropInput (conv2d's input gradient, conv2d_transpose): at stride 1 it is itself a
  convolution, of the output gradient by the filter flipped in H and W with its channel axes
  swapped, padded so that every input cell sees the taps that read it (`_flipped_geom`), and goes
  through Conv2D's im2col path. Strided convolutions (and paddings past the filter's reach): per
  filter tap, one matmul dy @ w[i, j]^T added onto the strided view of the padded input that tap
  reads (col2im by taps).
- Conv2DBackpropFilter: cols^T @ dy, summed over the slabs.
The loops are over slabs of the batch and over the filter window, never over pixels.

The `_*_eager` wrappers take and give values in the op's data_format (an NCHW value is viewed
transposed, no copy) and compute float16 in float32.
"""

from __future__ import annotations

import numpy as np

from .cores import blas_held, intra_op_parts, run_parts
from .creation_ops import _ints

# im2col columns held at once by a kernel: a slab's columns stay in cache between their copy and the
# matmul. With BLAS at one thread (an in-process run, a split kernel, a Dask task's share:
# `cores.blas_held`) a slab is ~4 MiB, six images of LeNet's conv2 (one thread, a part of batch 32,
# OpenBLAS's kernel for this AVX-512 CPU; ms for the forward pass, the input and the filter
# gradient: 1 MiB slabs 3.5/4.2/3.8, 4 MiB 3.2/3.9/3.5; a CNN's two convs over 4096 images 0.205 s
# -> 0.186 s; with OPENBLAS_CORETYPE=Haswell the same order). Otherwise 8 MiB: each slab is one
# BLAS call, and on a loaded machine every call with 2 BLAS threads can wait a time slice for the
# second thread (more calls, more waits)
SLAB_BYTES = 8 << 20
_HELD_SLAB_BYTES = 4 << 20
# output rows an epilogue (a fused elementwise chain) takes at a time, in place: its temporaries stay
# in cache and no output-sized value is made (one input channel makes a slab's output 32x its
# columns: 10 MiB for LeNet's first conv). Rows are handed over in blocks of about this size however
# small the im2col slabs are (a chain per image of LeNet's conv2 cost more than the conv)
_EPILOGUE_BYTES = 1 << 20
# ... for outputs of at least this size; a smaller one takes the chain whole. On a whole larger output
# each value the chain makes is a fresh output-sized block, page faults and all: LeNet's first conv at
# batch 128 (12.8 MB) is faster in place (bench_layers)
_EPILOGUE_MIN_BYTES = 4 << 20
# output rows a tail (a pool reading the conv's output alone, on the Dask path) takes at a time: a
# CNN's conv + bias + relu + 2x2 max pool at 4096 images a chunk, one thread, 0.30 s with the pool
# after the whole output, 0.26 s by blocks of 64 images (~3 MiB of LeNet's first conv)
_TAIL_BYTES = 2 << 20


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
    """Slices of the batch axis holding ~SLAB_BYTES of columns each (one, empty, for n = 0)."""
    step = max(1, (_HELD_SLAB_BYTES if blas_held() else SLAB_BYTES) // max(item_bytes, 1))
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
    next one is yielded. A padded convolution pads each slab's images into one zeroed buffer (its
    borders are never written), not the whole input: no input-sized copy (LeNet's second conv at
    batch 4096: 85 MB). A one-channel input (C = 1) is copied tap-major, one contiguous row of
    the slab's cells per filter tap, and the columns are that buffer's transposed view: a
    window-major copy would move one float at a time (1.7x slower on LeNet's first conv)."""
    n, h, w, c = x.shape
    slabs = _slabs(n, g.oh * g.ow * kh * kw * c * x.dtype.itemsize)
    step = slabs[0].stop - slabs[0].start
    pbuf = xp.zeros((step, h + g.pt + g.pb, w + g.pl + g.pr, c), dtype=x.dtype) \
        if g.pt or g.pb or g.pl or g.pr else None

    def padded(s):
        if pbuf is None:
            return x[s, ...]
        m = s.stop - s.start
        pbuf[:m, g.pt:g.pt + h, g.pl:g.pl + w, :] = x[s, ...]
        return pbuf[:m, ...]

    if c == 1:
        buf = xp.empty((kh * kw, step * g.oh * g.ow), dtype=x.dtype)
        for s in slabs:
            m, xs = s.stop - s.start, padded(s)
            rows = buf[:, :m * g.oh * g.ow]
            for i in range(kh):
                for j in range(kw):  # reshape of a contiguous row: a view (numpy, cupy) written in place
                    xp.reshape(rows[i * kw + j], (m, g.oh, g.ow, 1))[...] = _tap(xs, g, i, j)
            yield s, xp.matrix_transpose(rows)
        return
    buf = xp.empty((step, g.oh, g.ow, kh, kw, c), dtype=x.dtype)
    for s in slabs:
        m = s.stop - s.start
        buf[:m, ...] = _windows(xp, padded(s), g, kh, kw)
        yield s, xp.reshape(buf[:m, ...], (-1, kh * kw * c))


def _compute_dtype(xp, *arrays):
    """float16 convolves in float32 (BLAS has no half), as TF's CPU kernels accumulate."""
    return [xp.astype(a, xp.float32) if a.dtype == xp.float16 else a for a in arrays]


def _conv_fwd(xp, x, w, g, epilogue=None, tail=None):
    """x conv w; `epilogue(rows)`, if given, is called on each slab of the output's rows as soon as
    the matmul has written it (an in-place update of those rows, while they are in cache). `tail`
    = (fn, row_shape): an op on whole images (a pool) applied to blocks of ~_TAIL_BYTES of output
    rows in one reused buffer, the result `fn(rows)` [rows, *row_shape]: the convolution's own
    output is never held whole. A large batch is split over the intra-op threads (`cores.py`), a
    part of the batch per thread."""
    n, c, (kh, kw, _, o) = x.shape[0], x.shape[3], w.shape
    w2 = xp.reshape(w, (kh * kw * c, o))
    parts = intra_op_parts(xp, n, 2.0 * n * g.oh * g.ow * kh * kw * c * o)
    if tail is None:
        out = xp.empty((n, g.oh, g.ow, o), dtype=x.dtype)
        run_parts(lambda p: _conv_fwd_into(xp, x[p, ...], w2, (kh, kw), g, out[p, ...], epilogue), parts)
        return out
    fn, row_shape = tail
    out = xp.empty((n,) + tuple(row_shape), dtype=x.dtype)
    block = max(1, _TAIL_BYTES // max(1, g.oh * g.ow * o * x.dtype.itemsize))

    def part(p):
        buf = xp.empty((min(block, p.stop - p.start), g.oh, g.ow, o), dtype=x.dtype)
        for i in range(p.start, p.stop, block):
            j = min(i + block, p.stop)
            _conv_fwd_into(xp, x[i:j, ...], w2, (kh, kw), g, buf[:j - i, ...], epilogue)
            out[i:j, ...] = fn(buf[:j - i, ...])

    run_parts(part, parts)
    return out


def _conv_fwd_into(xp, x, w2, k_hw, g, out, epilogue):
    n, o = x.shape[0], w2.shape[1]
    rows = max(1, _EPILOGUE_BYTES // max(1, g.oh * g.ow * o * x.dtype.itemsize))
    done = 0  # images [0, done) went through the epilogue
    for s, cols in _im2col_slabs(xp, x, g, *k_hw):
        _matmul_into(xp, cols, w2, xp.reshape(out[s, ...], (-1, o)))
        if epilogue is not None:  # whole blocks of `rows` images, the rest at the end
            end = s.stop if s.stop == n else s.stop - (s.stop - done) % rows
            for i in range(done, end, rows):
                epilogue(out[i:min(i + rows, end), ...])
            done = end


def _matmul_into(xp, a, b, out):
    """out[...] = a @ b, written in place by numpy (`out` a C-contiguous view), copied otherwise."""
    if isinstance(out, np.ndarray):
        np.matmul(a, b, out=out)
    else:
        out[...] = xp.matmul(a, b)


def _conv_backprop_input(xp, dy, w, g, in_nhwc):
    flipped = _flipped_geom(g, w.shape[:2])
    if flipped is not None:
        return _conv_fwd(xp, dy, _flipped_filter(xp, w), flipped)
    return _conv_backprop_input_by_taps(xp, dy, w, g, in_nhwc)


def _flipped_geom(g, k_hw):
    """The geometry of the stride-1 input gradient as a convolution of the output gradient: the
    tap that met input cell h from output cell h - k*d + pt meets it again from the other side,
    so the output gradient is padded by (reach - 1 - pad) on each side (reach = (k-1)*d + 1).
    None for strides other than 1 or a padding past the filter's reach (a crop, not a pad)."""
    if g.sh != 1 or g.sw != 1:
        return None
    (kh, kw), f = k_hw, _Geom.__new__(_Geom)
    rh, rw = (kh - 1) * g.dh, (kw - 1) * g.dw
    f.pt, f.pb, f.pl, f.pr = rh - g.pt, rh - g.pb, rw - g.pl, rw - g.pr
    if min(f.pt, f.pb, f.pl, f.pr) < 0:
        return None
    f.oh, f.ow = g.oh + rh - g.pt - g.pb, g.ow + rw - g.pl - g.pr  # the input's H and W
    f.sh, f.sw, f.dh, f.dw = 1, 1, g.dh, g.dw
    return f


def _flipped_filter(xp, w):
    """w [KH, KW, C, O] flipped in H and W, as a [KH, KW, O, C] filter (contiguous: it is reshaped
    into the matmul's right-hand side)."""
    return xp.asarray(xp.permute_dims(xp.flip(w, axis=(0, 1)), (0, 1, 3, 2)), copy=True)


def _conv_backprop_input_by_taps(xp, dy, w, g, in_nhwc):
    # strides other than 1: one matmul per filter tap, dy [m, O] @ w[i, j]^T [O, C], added onto
    # the cells that tap read (the flops of one [m, KH*KW*C] column-gradient matrix, without
    # holding it; a matmul into that matrix and KH*KW strided adds out of it was 1.8x slower).
    # At stride 1 the flipped-filter convolution beats this by ~10 % on LeNet's second conv: one
    # matmul with K = KH*KW*O instead of KH*KW with K = O, and no strided adds.
    n, h, wd, c = in_nhwc
    d2 = xp.reshape(dy, (-1, w.shape[3]))
    dx = xp.zeros((n, h + g.pt + g.pb, wd + g.pl + g.pr, c), dtype=dy.dtype)
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            _tap(dx, g, i, j)[...] += xp.reshape(xp.matmul(d2, xp.matrix_transpose(w[i, j])), (n, g.oh, g.ow, c))
    return dx[:, g.pt:g.pt + h, g.pl:g.pl + wd, :]


def _conv_backprop_filter(xp, x, dy, g, kshape):
    kh, kw, c, o = kshape
    n = x.shape[0]
    parts = intra_op_parts(xp, n, 2.0 * n * g.oh * g.ow * kh * kw * c * o)
    dws = run_parts(lambda p: _filter_grad_part(xp, x[p, ...], dy[p, ...], g, kshape), parts)
    dw = dws[0]
    for part in dws[1:]:
        dw = _add_into(dw, part)
    return xp.reshape(dw, kshape)


def _filter_grad_part(xp, x, dy, g, kshape):
    kh, kw, c, o = kshape
    dw = None
    for s, cols in _im2col_slabs(xp, x, g, kh, kw):
        part = xp.matmul(xp.matrix_transpose(cols), xp.reshape(dy[s, ...], (-1, o)))
        dw = part if dw is None else _add_into(dw, part)
    return dw


# The eager kernels in the value's data_format; `op_type` names the op in errors. Module-level
# functions bound with functools.partial, so the lowered tasks pickle for process schedulers.


def _add_into(acc, part):
    if isinstance(acc, np.ndarray):
        acc += part
        return acc
    return acc + part


def _cast(xp, x, dtype):
    return x if x.dtype == dtype else xp.astype(x, dtype)


def _fwd_eager(kernel, op_type, xp, x, w, epilogue=None, tail=None, **attrs):
    """The forward kernel in data_format; `epilogue(value) -> new value` (of the same shape and
    dtype: an elementwise chain reading the output, OpDef `epilogue`) is applied to each slab of
    the output's rows inside the kernel and written back there; to the whole output at the end
    for an output under _EPILOGUE_MIN_BYTES, and for float16 (computed in float32: the chain must
    see float16 values, as unfused). `tail` = (fn, row_shape): an op on whole images reading the
    (epilogue's) output alone, in data_format, whose result [n, *row_shape] is returned instead
    (`_conv_fwd`; Conv2D only)."""
    fmt, dtype = attrs["data_format"], x.dtype
    x, w = _compute_dtype(xp, _nhwc(xp, x, fmt), w)
    g = _Geom(x.shape[1:3], w.shape[:2], attrs, op_type)
    if epilogue is None and tail is None:
        return _cast(xp, _from_nhwc(xp, kernel(xp, x, w, g), fmt), dtype)
    out_bytes = x.shape[0] * g.oh * g.ow * w.shape[3] * x.dtype.itemsize
    if x.dtype != dtype or out_bytes < _EPILOGUE_MIN_BYTES:
        y = _cast(xp, _from_nhwc(xp, kernel(xp, x, w, g), fmt), dtype)
        y = y if epilogue is None else epilogue(y)
        return y if tail is None else tail[0](y)

    def in_place(rows):  # NHWC rows of the output, seen in data_format
        view = _from_nhwc(xp, rows, fmt)
        view[...] = epilogue(view)

    if tail is None:
        return _from_nhwc(xp, kernel(xp, x, w, g, epilogue=in_place), fmt)
    fn, row_shape = tail
    return kernel(xp, x, w, g, epilogue=None if epilogue is None else in_place,
                  tail=(lambda rows: fn(_from_nhwc(xp, rows, fmt)), row_shape))


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
