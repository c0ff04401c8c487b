"""Depthwise convolutions: DepthwiseConv2dNative and its two backprop ops, and the composites
depthwise_conv2d and separable_conv2d (depthwise, then a 1x1 conv2d, as TF1).

Each input channel is convolved with its own M filters: [N, H, W, C] by [KH, KW, C, M] gives
[N, OH, OW, C*M]. The kernels are KH*KW multiply-adds of strided views of the padded input (one
per filter tap; a per-channel product has no matmul to hand to BLAS); geometry, data formats,
the blockwise lowering over the batch axis and the gradient rules are conv_ops' (one
`register_conv_family` for both families).
"""

from __future__ import annotations

from ..graph.graph import name_scope
from .common import apply_op, convert_pair, convert_to_tensor
from .conv_kernels import _padded, _tap
from .conv_ops import _conv_attrs, _sequence, conv2d, register_conv_family

__all__ = ["depthwise_conv2d", "depthwise_conv2d_native", "separable_conv2d"]


# ---- kernels (NHWC arrays of the namespace xp) ----------------------------------------------------


def _depthwise_fwd(xp, x, w, g):
    kh, kw, c, m = w.shape
    xpad = _padded(xp, x, g)
    out = None
    for i in range(kh):
        for j in range(kw):
            term = _tap(xpad, g, i, j)[..., None] * w[i, j]
            out = term if out is None else out + term
    return xp.reshape(out, (x.shape[0], g.oh, g.ow, c * m))


def _depthwise_backprop_input(xp, dy, w, g, in_nhwc):
    n, h, wd, c = in_nhwc
    kh, kw, _, m = w.shape
    d = xp.reshape(dy, (n, g.oh, g.ow, c, m))
    dx = xp.zeros((n, h + g.pt + g.pb, wd + g.pl + g.pr, c), dtype=dy.dtype)
    for i in range(kh):
        for j in range(kw):
            _tap(dx, g, i, j)[...] += xp.sum(d * w[i, j], axis=-1)
    return dx[:, g.pt:g.pt + h, g.pl:g.pl + wd, :]


def _depthwise_backprop_filter(xp, x, dy, g, kshape):
    kh, kw, c, m = kshape
    xpad = _padded(xp, x, g)
    d = xp.reshape(dy, (-1, c, m))
    taps = [xp.sum(xp.reshape(_tap(xpad, g, i, j), (-1, c, 1)) * d, axis=0) for i in range(kh) for j in range(kw)]
    return xp.reshape(xp.stack(taps), kshape)


register_conv_family("DepthwiseConv2dNative", (_depthwise_fwd, _depthwise_backprop_input, _depthwise_backprop_filter),
                     True, lambda ws: ws[2] * ws[3])


# ---- public functions ---------------------------------------------------------------------------


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002 - TF1 names
                            dilations=[1, 1, 1, 1], name=None):  # noqa: B006 - TF1 default
    """Depthwise 2-D convolution: each of the C input channels convolved with its own M filters,
    `input` [N, H, W, C] by `filter` [KH, KW, C, M] -> [N, OH, OW, C*M] (op `DepthwiseConv2dNative`)."""
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    with name_scope(name, "DepthwiseConv2dNative", [input, filter]) as scope:
        x, w = convert_pair(input, filter, "DepthwiseConv2dNative")
        return apply_op("DepthwiseConv2dNative", [x, w], attrs, name=scope)


def _rate(rate, dilations, what):
    rate = dilations if rate is None else rate
    rate = [1, 1] if rate is None else [int(r) for r in (rate if isinstance(rate, (list, tuple)) else [rate] * 2)]
    if len(rate) != 2 or min(rate) < 1:
        raise ValueError(f"{what}: rate must be two positive ints, got {rate}")
    return rate


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,  # noqa: A002
                     dilations=None):
    """Depthwise 2-D convolution with `strides` (4 values) and a dilation `rate` (2 values);
    see depthwise_conv2d_native. TF1 requires strides of 1 when a rate is above 1."""
    fmt = data_format or "NHWC"
    rate = _rate(rate, dilations, "depthwise_conv2d")
    strides = _sequence(strides, "strides", fmt)
    if max(rate) > 1 and max(strides) > 1:
        raise ValueError(f"strides > 1 not supported in conjunction with dilation_rate > 1; got strides "
                         f"{list(strides)} and rate {rate}")
    with name_scope(name, "depthwise", [input, filter]) as scope:
        return depthwise_conv2d_native(input, filter, strides, padding, data_format=fmt, dilations=rate, name=scope)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None,  # noqa: A002
                     name=None, data_format=None, dilations=None):
    """A depthwise convolution by `depthwise_filter` [KH, KW, C, M] followed by a 1x1 conv2d by
    `pointwise_filter` [1, 1, C*M, O] (as TF1). ValueError for a pointwise filter that is not 1x1."""
    fmt = data_format or "NHWC"
    with name_scope(name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]) as scope:
        x = convert_to_tensor(input, name="input")
        dw = convert_to_tensor(depthwise_filter, dtype=x.dtype, name="depthwise_filter")
        pw = convert_to_tensor(pointwise_filter, dtype=x.dtype, name="pointwise_filter")
        if pw.shape.ndims is not None:
            if pw.shape.ndims != 4:
                raise ValueError(f"Shape must be rank 4 but is rank {pw.shape.ndims} for pointwise_filter")
            if pw.shape[0].value not in (None, 1) or pw.shape[1].value not in (None, 1):
                raise ValueError(f"pointwise_filter must be 1x1, got shape {pw.shape}")
        depthwise = depthwise_conv2d(x, dw, strides, padding, rate=rate, name="depthwise", data_format=fmt,
                                     dilations=dilations)
        return conv2d(depthwise, pw, [1, 1, 1, 1], padding="VALID", data_format=fmt, name=scope)
