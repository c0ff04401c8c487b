"""TF1's grayscale morphology: `tf.nn.dilation2d` (op Dilation2D, with its gradients
Dilation2DBackpropInput and Dilation2DBackpropFilter) and `tf.nn.erosion2d` (TF1's composite
-dilation2d(-x, filter reversed in both spatial dims)).

out[b, y, x, c] = max over taps (i, j) inside the input of
input[b, y*sy + i*ry - pad_top, x*sx + j*rx - pad_left, c] + filter[i, j, c]; the window is
(kh-1)*rh+1 by (kw-1)*rw+1, padded as conv2d pads (SAME: out = ceil(in / stride), VALID) but
padding never wins. The gradients send each output's gradient to the tap that won it (the first
in row-major order on ties, as TF's kernel: strictly greater replaces). Each op is one whole-array
numpy task: a loop over the kh*kw taps, vectorized over batch, positions and channels.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph.graph import name_scope
from ..graph.registry import def_grad
from ..graph.shape import TensorShape
from .common import apply_op, convert_pair
from .manip_ops import reverse
from .math_ops import negative
from .numpy_kernels import numpy_op

__all__ = ["dilation2d", "erosion2d"]

_NAN = float("nan")
_REAL = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
         "uint32", "uint64")


def _out_and_pad(size, k, stride, rate, padding):
    """(output size, padding before) of one spatial dim, or None for a window larger than the input."""
    eff = (k - 1) * rate + 1
    if padding == "VALID":
        out = (size - eff + stride) // stride
        return (out, 0) if out >= 0 else None
    out = -(-size // stride)
    return out, max((out - 1) * stride + eff - size, 0) // 2


def _geometry(x_shape, f_shape, strides, rates, padding):
    (_, h, w, _), (kh, kw, _) = x_shape, f_shape
    rows = _out_and_pad(h, kh, strides[1], rates[1], padding)
    cols = _out_and_pad(w, kw, strides[2], rates[2], padding)
    return rows, cols


def _argmax_taps(x, f, strides, rates, padding):
    """(max, winning tap index or -1) per output: [n, oh, ow, c] each."""
    if x.ndim != 4 or f.ndim != 3 or f.shape[2] != x.shape[3]:
        raise InvalidArgumentError(None, None, f"Dilation2D: input must be [batch, rows, cols, depth] and filter "
                                   f"[rows, cols, depth] of the same depth, got {list(x.shape)} and {list(f.shape)}")
    rows, cols = _geometry(x.shape, f.shape, strides, rates, padding)
    if rows is None or cols is None:
        raise InvalidArgumentError(None, None, f"Dilation2D: the filter {list(f.shape[:2])} at rates "
                                   f"{rates[1:3]} is larger than the input {list(x.shape[1:3])} (VALID padding)")
    (oh, pt), (ow, pl) = rows, cols
    n, h, w, c = x.shape
    kh, kw, _ = f.shape
    sh, sw, rh, rw = strides[1], strides[2], rates[1], rates[2]
    lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    best = np.full((n, oh, ow, c), lowest, x.dtype)
    arg = np.full((n, oh, ow, c), -1, np.int64)
    ys, xs = np.arange(oh) * sh - pt, np.arange(ow) * sw - pl
    for i in range(kh):
        yi = ys + i * rh
        yok = (yi >= 0) & (yi < h)
        for j in range(kw):
            xj = xs + j * rw
            xok = (xj >= 0) & (xj < w)
            val = x[:, np.clip(yi, 0, h - 1)][:, :, np.clip(xj, 0, w - 1)] + f[i, j]
            win = (val > best) & yok[None, :, None, None] & xok[None, None, :, None]
            best = np.where(win, val, best)
            arg = np.where(win, i * kw + j, arg)
    return best, arg, (ys, xs)


def _dilation(np_, x, f, *, strides, rates, padding):
    return _argmax_taps(x, f, strides, rates, padding)[0]


def _backprop_input(np_, x, f, dy, *, strides, rates, padding):
    _, arg, (ys, xs) = _argmax_taps(x, f, strides, rates, padding)
    n, h, w, c = x.shape
    kw = f.shape[1]
    i, j = arg // kw, arg % kw
    # TF's kernel: an output no tap won sends its gradient to the window's first in-bounds position
    yy = np.where(arg >= 0, ys[None, :, None, None] + i * rates[1], np.maximum(ys, 0)[None, :, None, None])
    xx = np.where(arg >= 0, xs[None, None, :, None] + j * rates[2], np.maximum(xs, 0)[None, None, :, None])
    out = np.zeros(x.shape, dy.dtype)
    b = np.broadcast_to(np.arange(n)[:, None, None, None], arg.shape)
    d = np.broadcast_to(np.arange(c)[None, None, None, :], arg.shape)
    np.add.at(out, (b, np.broadcast_to(yy, arg.shape), np.broadcast_to(xx, arg.shape), d), dy)
    return out


def _backprop_filter(np_, x, f, dy, *, strides, rates, padding):
    _, arg, _ = _argmax_taps(x, f, strides, rates, padding)
    kh, kw, c = f.shape
    tap = np.maximum(arg, 0)  # TF's kernel: an output no tap won counts for tap (0, 0)
    out = np.zeros((kh * kw, c), dy.dtype)
    d = np.broadcast_to(np.arange(c)[None, None, None, :], arg.shape)
    np.add.at(out, (tap, d), dy)
    return out.reshape(f.shape)


def _check(x, f, attrs, what):
    if x.dtype != f.dtype:
        raise TypeError(f"{what}: input and filter must have one dtype, got {x.dtype.name} and {f.dtype.name}")
    if x.dtype.name not in _REAL:
        raise TypeError(f"{what}: dtype {x.dtype.name} is not a real number type")
    xs, fs = x.shape.with_rank(4).as_list(), f.shape.with_rank(3).as_list()
    if xs[3] is not None and fs[2] is not None and xs[3] != fs[2]:
        raise ValueError(f"{what}: input depth {xs[3]} and filter depth {fs[2]} must be equal")
    if None in xs[1:3] or None in fs[:2]:
        return xs, None
    rows, cols = _geometry(xs, fs, attrs["strides"], attrs["rates"], attrs["padding"])
    if rows is None or cols is None:
        raise ValueError(f"{what}: the filter {fs[:2]} at rates {attrs['rates'][1:3]} is larger than the input "
                         f"{xs[1:3]} with VALID padding")
    return xs, (rows[0], cols[0])


def _infer(inputs, attrs):
    x, f = inputs
    xs, out = _check(x, f, attrs, "Dilation2D")
    depth = xs[3] if xs[3] is not None else f.shape.with_rank(3).as_list()[2]
    return TensorShape([xs[0], *(out or (None, None)), depth]), x.dtype


def _infer_input(inputs, attrs):
    _check(inputs[0], inputs[1], attrs, "Dilation2DBackpropInput")
    return TensorShape(inputs[0].shape), inputs[0].dtype


def _infer_filter(inputs, attrs):
    _check(inputs[0], inputs[1], attrs, "Dilation2DBackpropFilter")
    return TensorShape(inputs[1].shape), inputs[1].dtype


def _out_shape(x, f, strides, rates, padding):
    if any(d != d for d in (*x, *f)):
        return (x[0], _NAN, _NAN, x[3])
    rows, cols = _geometry(x, f, strides, rates, padding)
    return (x[0], rows[0], cols[0], x[3])


numpy_op("Dilation2D", _infer, _dilation, lambda x, f, **a: [_out_shape(x, f, **a)])
numpy_op("Dilation2DBackpropInput", _infer_input, _backprop_input, lambda x, f, dy, **a: [x])
numpy_op("Dilation2DBackpropFilter", _infer_filter, _backprop_filter, lambda x, f, dy, **a: [f])


@def_grad("Dilation2D")
def _dilation_grad(op, dy):
    x, f = op.inputs
    attrs = {k: op.get_attr(k) for k in ("strides", "rates", "padding")}
    return [apply_op("Dilation2DBackpropInput", [x, f, dy], attrs),
            apply_op("Dilation2DBackpropFilter", [x, f, dy], attrs)]


def _four(v, what):
    v = [int(s) for s in (v if isinstance(v, (list, tuple)) else [v])]
    if len(v) != 4 or v[0] != 1 or v[3] != 1 or min(v) < 1:
        raise ValueError(f"{what} must be 4 positive values [1, rows, cols, 1], got {v}")
    return v


def _attrs(strides, rates, padding):
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    return {"strides": _four(strides, "strides"), "rates": _four(rates, "rates"), "padding": padding}


def dilation2d(input=None, filter=None, strides=None, rates=None, padding=None, name=None,  # noqa: A002
               filters=None, dilations=None):
    """Grayscale dilation of `input` [N, H, W, C] by `filter` [KH, KW, C] (op Dilation2D): the
    max over the window of input + filter. strides, rates: [1, rows, cols, 1]; padding "SAME" or
    "VALID". TF1's spellings `filters` and `dilations` are accepted for filter and rates."""
    filter = filters if filter is None else filter
    rates = dilations if rates is None else rates
    if filter is None or strides is None or rates is None or padding is None:
        raise ValueError("dilation2d needs `filter`, `strides`, `rates` and `padding`")
    attrs = _attrs(strides, rates, padding)
    with name_scope(name, "Dilation2D", [input, filter]) as scope:
        x, f = convert_pair(input, filter, "Dilation2D")
        return apply_op("Dilation2D", [x, f], attrs, name=scope)


def erosion2d(value, kernel, strides, rates, padding, name=None):
    """Grayscale erosion of `value` [N, H, W, C] by `kernel` [KH, KW, C]: the min over the window
    of value - kernel, as TF1 builds it: -dilation2d(-value, kernel reversed in rows and cols)."""
    attrs = _attrs(strides, rates, padding)
    with name_scope(name, "erosion2d", [value, kernel]) as scope:
        x, k = convert_pair(value, kernel, "erosion2d")
        return negative(apply_op("Dilation2D", [negative(x), reverse(k, [0, 1])], attrs, name=scope))
