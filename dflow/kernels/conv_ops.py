"""Convolutions: Conv2D and its two backprop ops, and the composites conv1d, conv2d_transpose,
atrous_conv2d and convolution. `register_conv_family` also makes depthwise_ops' three ops.

The kernels (NHWC, im2col + BLAS) are conv_kernels'; this module registers the ops, infers their
static shapes and lowers them.

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

from ..dask_compat import concatenate3
from ..graph.graph import name_scope
from ..graph.ops import constant_value
from ..graph.registry import def_grad, register_op
from ..graph.shape import TensorShape
from .array_ops import shape as _shape_op
from .common import apply_op, chain_on, constant, convert_pair, convert_to_tensor, run_with_epilogue
from .conv_kernels import (
    SLAB_BYTES,
    _conv_backprop_filter,
    _conv_backprop_input,
    _conv_fwd,
    _filter_grad_eager,
    _fwd_eager,
    _hwc,
    _input_grad_eager,
    _spatial,
)
from .creation_ops import _int_input, _ints, _partial_shape
from .manip_ops import expand_dims, squeeze

__all__ = ["conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "conv2d_transpose", "conv1d", "atrous_conv2d",
           "convolution"]

_FLOATS = ("float16", "float32", "float64")


# ---- chunked lowering: blockwise over the batch axis --------------------------------------------------


def _block(blocks):
    """The one block dask hands a task for axes it contracts (concatenate=False: nested lists of
    blocks; the lowerings rechunk those axes to one chunk). Dask's own concatenation copies even a
    single block: 64 MB a chunk of a CNN over 4096 images."""
    while isinstance(blocks, list):
        if len(blocks) != 1:
            return concatenate3(blocks)
        blocks = blocks[0]
    return blocks


def _on_block(eager, attrs, epilogue, tail, after_max, x, w, *others):
    """`eager` on one task's blocks: a batch chunk and the whole filter. `epilogue` = (kernel, slot):
    an elementwise chain (a FusedKernel) run on row slabs of the output in place, the slab its
    leaf `slot` and `others` the rest; `tail` = (eager kernel, attrs, row shape): an op on whole
    images (a pool) reading that output alone, whose rows are the task's result. `after_max`: the
    tail is a max pool and the chain is non-decreasing in the slab, its other leaves the same across
    the pool's windows (`LowerContext.offer_rows`): with finite other leaves the chain runs on the
    pooled rows, a quarter of them for 2x2 windows, the same values."""
    x, w, others = _block(x), _block(w), [_block(o) for o in others]
    xp = array_api_compat.array_namespace(x, w)
    if tail is not None:
        fn, tail_attrs, row_shape = tail
        pool = functools.partial(_apply, fn, xp, tail_attrs)
        if epilogue is not None and after_max and all(_finite(xp, o) for o in others):
            chain = functools.partial(chain_on, epilogue[0], epilogue[1], xp, others)
            return eager(xp, x, w, tail=(lambda rows: chain(pool(rows)), row_shape), **attrs)
        attrs = dict(attrs, tail=(pool, row_shape))
    if epilogue is None:
        return eager(xp, x, w, **attrs)
    return run_with_epilogue(eager, 2, epilogue[0], epilogue[1], xp, x, w, *others, **attrs)


def _apply(fn, xp, attrs, value):
    return fn(xp, value, **attrs)


def _finite(xp, value):
    return not xp.isdtype(value.dtype, "real floating") or bool(xp.all(xp.isfinite(value)))


def _on_block_input_grad(eager, attrs, sizes, w, dy):
    """One batch chunk's input gradient: `sizes` (the whole input's) with this chunk's batch."""
    w, dy = _block(w), _block(dy)
    xp = array_api_compat.array_namespace(w, dy)
    return eager(xp, xp.asarray([dy.shape[0]] + [int(s) for s in sizes[1:]]), w, dy, **attrs)


def _on_block_partial(eager, attrs, kshape, x, dy):
    """One batch chunk's part of a filter gradient, with a leading axis of 1 for the tree sum."""
    x, dy = _block(x), _block(dy)
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


def _fwd_lower(eager, out_c, slabbed, ctx, x, w, **attrs):
    x, w = _batch_chunked(ctx, x), _whole(ctx, w)
    dims = _out_shape("", list(x.shape), list(w.shape[:2]), attrs, out_c(w.shape)).as_list()
    if slabbed and x.dtype != np.float16:
        ctx.set_scratch(_slab_scratch(x, w, dims, attrs))

    def build(epilogue=None, tail=None, after_max=False):
        """The tasks, with an epilogue (kernel, slot, others) and a tail (eager, attrs, row shape)
        inside (`ctx.offer_rows`); the others (a bias) whole in every task, on letters of their own."""
        others = epilogue[2] if epilogue is not None else ()
        extra = [a for i, o in enumerate(others) for a in (_whole(ctx, o), _LETTERS[5 * i:5 * i + o.ndim])]
        rows = dims[1:] if tail is None else list(tail[2])
        if len(rows) != 3:
            return None
        fn = functools.partial(_on_block, eager, attrs, epilogue and epilogue[:2], tail, after_max)
        return ctx.da.blockwise(fn, "nxyz", x, "nabc", w, "ijkl", *extra, new_axes=dict(zip("xyz", rows)),
                                concatenate=False, dtype=x.dtype, meta=_meta(x, 4))

    out = build()
    if slabbed:  # Conv2D's kernel takes both (depthwise ones neither)
        ctx.offer_rows(out, build, _hwc(attrs["data_format"])[:2])
    return out


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _slab_scratch(x, w, out_dims, attrs):
    """What a task of Conv2D's kernel holds besides its input and output, in output chunks: one
    im2col slab of columns and of padded images (`conv_kernels._im2col_slabs`), not an
    output-sized buffer (the default projection: LeNet's first conv at 4096 images a chunk
    projected 410 MB a task for ~230 MB)."""
    h, wa, c = _hwc(attrs["data_format"])
    kh, kw = int(w.shape[0]), int(w.shape[1])
    item = x.dtype.itemsize
    col_image = out_dims[h] * out_dims[wa] * kh * kw * int(x.shape[c]) * item
    rows = max(x.chunks[0]) if x.chunks[0] else 0
    step = min(rows, max(1, SLAB_BYTES // max(1, col_image)))
    padded_image = (int(x.shape[h]) + kh) * (int(x.shape[wa]) + kw) * int(x.shape[c]) * item
    out_chunk = rows * out_dims[h] * out_dims[wa] * out_dims[c] * item
    return step * (col_image + padded_image) / max(1, out_chunk)


def _input_grad_lower(eager, ctx, input_sizes, w, dy, **attrs):
    sizes = np.asarray(_ints(ctx.host_value(input_sizes, "input_sizes")), np.int64)
    dy, w = _batch_chunked(ctx, dy), _whole(ctx, w)
    return ctx.da.blockwise(functools.partial(_on_block_input_grad, eager, attrs, sizes), "nxyz", w, "ijkl", dy, "nabc",
                            new_axes=dict(zip("xyz", sizes[1:].tolist())), concatenate=False, dtype=dy.dtype,
                            meta=_meta(dy, 4))


def _filter_grad_lower(eager, ctx, x, filter_sizes, dy, **attrs):
    kshape = np.asarray(_ints(ctx.host_value(filter_sizes, "filter_sizes")), np.int64)
    x, dy = _batch_chunked(ctx, x), _batch_chunked(ctx, dy)
    parts = ctx.da.blockwise(functools.partial(_on_block_partial, eager, attrs, kshape), "nijkl", x, "nabc", dy,
                             "ndef", new_axes=dict(zip("ijkl", kshape.tolist())), adjust_chunks={"n": 1},
                             concatenate=False, dtype=x.dtype, meta=_meta(x, 5))
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


def register_conv_family(op, kernels, depthwise, out_channels, epilogue=False):
    """Registers `op`, `op`BackpropInput and `op`BackpropFilter from their NHWC kernels (forward,
    input gradient, filter gradient) and gives them their gradient rules; `out_channels(filter
    shape)` is the output depth. `epilogue`: the forward kernel takes `epilogue=` (a `Traits` field)."""
    types = (op, op + "BackpropInput", op + "BackpropFilter")
    eager = [functools.partial(wrap, kernel, t) for wrap, kernel, t in
             zip((_fwd_eager, _input_grad_eager, _filter_grad_eager), kernels, types)]
    register_op(op, _conv_infer(op, depthwise), eager=eager[0],
                lower=functools.partial(_fwd_lower, eager[0], out_channels, not depthwise), epilogue=epilogue)
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


register_conv_family("Conv2D", (_conv_fwd, _conv_backprop_input, _conv_backprop_filter), False, lambda ws: ws[3],
                     epilogue=True)


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
