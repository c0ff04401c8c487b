"""Bilinear resizing of [N, H, W, C] images: ResizeBilinear and ResizeBilinearGrad, each the other's
gradient (both are linear in their image input), and `tf.image.resize_bilinear`.

TF's coordinates, computed in float32 on the host from the sizes: output row y reads source row
y * scale (legacy), or (y + 0.5) * scale - 0.5 (`half_pixel_centers`), with scale = in / out, or
(in - 1) / (out - 1) with `align_corners`; it interpolates between floor and ceil (clamped to the
image) with weight src - floor(src). The forward kernel gathers the two columns, interpolates,
then the two rows (TF's order: top and bottom lerps in x, then the lerp in y), O(output). The
gradient kernel applies the transposed [out, in] weight matrices as two matrix products (BLAS).
Both take whole images, so the chunked lowering is blockwise over N: one task per N chunk.
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.registry import def_grad, register_op
from ..graph.shape import TensorShape
from .array_ops import shape as _shape
from .common import apply_op, convert_to_tensor
from .creation_ops import _ints, _partial_shape
from .math_ops import cast

__all__: list[str] = []  # public through dflow.image


def _source(n_out, n_in, align_corners, half_pixel_centers):
    """(lower, upper, lerp) per output position along one axis, as TF computes them."""
    f = np.float32
    scale = f(n_in - 1) / f(n_out - 1) if align_corners and n_out > 1 else f(n_in) / f(n_out)
    pos = np.arange(n_out, dtype=np.float32)
    src = (pos + f(0.5)) * scale - f(0.5) if half_pixel_centers else pos * scale
    low = np.floor(src)
    lower = np.maximum(low.astype(np.int64), 0)
    upper = np.minimum(np.ceil(src).astype(np.int64), n_in - 1)
    return lower, upper, (src - low).astype(np.float32)


def _weights(n_out, n_in, align_corners, half_pixel_centers):
    """The [out, in] interpolation matrix of one axis."""
    lower, upper, lerp = _source(n_out, n_in, align_corners, half_pixel_centers)
    w = np.zeros((n_out, n_in), np.float32)
    np.add.at(w, (np.arange(n_out), lower), 1 - lerp)
    np.add.at(w, (np.arange(n_out), upper), lerp)
    return w


def _resize(xp, images, size, *, align_corners, half_pixel_centers):
    oh, ow = _ints(size)
    x = xp.astype(images, xp.float32)
    dev = array_api_compat.device(x)
    _, h, w, _ = x.shape
    cols = [xp.asarray(v, device=dev) for v in _source(ow, w, align_corners, half_pixel_centers)]
    rows = [xp.asarray(v, device=dev) for v in _source(oh, h, align_corners, half_pixel_centers)]
    left, right = xp.take(x, cols[0], axis=2), xp.take(x, cols[1], axis=2)
    x = left + (right - left) * xp.reshape(cols[2], (1, 1, ow, 1))
    top, bottom = xp.take(x, rows[0], axis=1), xp.take(x, rows[1], axis=1)
    return top + (bottom - top) * xp.reshape(rows[2], (1, oh, 1, 1))


def _resize_grad(xp, grads, in_shape, *, align_corners, half_pixel_centers):
    """dx[n, h, w, c] = sum over (y, x) of W_h[y, h] W_w[x, w] g[n, y, x, c]: two matrix products."""
    n, oh, ow, c = grads.shape
    _, h, w, _ = _ints(in_shape)
    dev = array_api_compat.device(grads)
    w_h = xp.asarray(_weights(oh, h, align_corners, half_pixel_centers), device=dev)
    w_w = xp.asarray(_weights(ow, w, align_corners, half_pixel_centers), device=dev)
    g = xp.reshape(xp.permute_dims(grads, (0, 1, 3, 2)), (-1, ow)) @ w_w  # [n * oh * c, w]
    g = xp.reshape(xp.permute_dims(xp.reshape(g, (n, oh, c, w)), (0, 2, 3, 1)), (-1, oh)) @ w_h  # [n * c * w, h]
    return xp.permute_dims(xp.reshape(g, (n, c, w, h)), (0, 3, 2, 1))


# ---- static inference and the chunked lowering ------------------------------------------------


def _check_images(t, op_type):
    if t.shape.ndims not in (None, 4):
        raise ValueError(f"{op_type}: images must be 4-dimensional [batch, height, width, channels], got "
                         f"{t.name!r} of shape {t.shape}")
    if t.dtype.np_dtype.kind not in "iuf":
        raise TypeError(f"{op_type}: images must be of a real dtype, got {t.dtype.name}")


def _resize_infer(inputs, attrs):
    images, size = inputs
    _check_images(images, "ResizeBilinear")
    if size.dtype != dtypes.int32 or not size.shape.is_compatible_with([2]):
        raise ValueError(f"ResizeBilinear: size must be a 1-D int32 tensor of 2 elements, got {size.dtype.name} "
                         f"{size.shape}")
    new = _partial_shape(size) or [None, None]
    if any(d is not None and d <= 0 for d in new):
        raise ValueError(f"ResizeBilinear: size must be positive, got {new}")
    dims = images.shape.as_list() if images.shape.ndims is not None else [None] * 4
    return TensorShape([dims[0], new[0], new[1], dims[3]]), dtypes.float32


def _grad_infer(inputs, attrs):
    grads, in_shape = inputs
    dims = _partial_shape(in_shape)
    return TensorShape(dims if dims is not None else [None] * 4), dtypes.float32


def _per_block(block, kernel, arg, **attrs):
    return kernel(array_api_compat.array_namespace(block), block, arg, **attrs)


def _blockwise(ctx, kernel, x, arg, out_hw, **attrs):
    x = ctx.as_dask(x)
    ctx.known_shape(x)
    x = x.rechunk({1: -1, 2: -1, 3: -1})
    chunks = (x.chunks[0], (int(out_hw[0]),), (int(out_hw[1]),), x.chunks[3])
    return ctx.da.map_blocks(_per_block, x, kernel=kernel, arg=arg, chunks=chunks, dtype=np.float32,
                             name=ctx.name(), meta=np.empty((0,) * 4, np.float32), **attrs)


def _resize_lower(ctx, images, size, **attrs):
    size = [int(d) for d in _ints(ctx.host_value(size, "ResizeBilinear size"))]
    return _blockwise(ctx, _resize, images, size, size, **attrs)


def _grad_lower(ctx, grads, in_shape, **attrs):
    in_shape = [int(d) for d in _ints(ctx.host_value(in_shape, "ResizeBilinearGrad original image shape"))]
    return _blockwise(ctx, _resize_grad, grads, in_shape, in_shape[1:3], **attrs)


register_op("ResizeBilinear", _resize_infer, eager=_resize, lower=_resize_lower)
register_op("ResizeBilinearGrad", _grad_infer, eager=_resize_grad, lower=_grad_lower)


def _flags(op):
    return {k: op.get_attr(k) for k in ("align_corners", "half_pixel_centers")}


@def_grad("ResizeBilinear")
def _resize_gradient(op, g):
    images = op.inputs[0]
    in_shape = convert_to_tensor(np.array(images.shape.as_list(), np.int32)) if images.shape.is_fully_defined() \
        else _shape(images)
    if not images.dtype.is_floating:
        return [None, None]  # as TF: integer images get no gradient
    dx = apply_op("ResizeBilinearGrad", [g, in_shape], _flags(op))
    return [dx if images.dtype == dtypes.float32 else cast(dx, images.dtype), None]


@def_grad("ResizeBilinearGrad")
def _resize_grad_gradient(op, gg):
    size = convert_to_tensor(np.array(op.inputs[0].shape.as_list()[1:3], np.int32)) \
        if op.inputs[0].shape[1:3].is_fully_defined() else _shape(op.inputs[0])[1:3]
    return [apply_op("ResizeBilinear", [gg, size], _flags(op)), None]


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """[batch, h, w, c] images resized to `size` = [new_h, new_w] by bilinear interpolation; float32.

    ValueError for images not 4-D, a size not of 2 positive ints, or align_corners together with
    half_pixel_centers. Gradient w.r.t. float images.
    """
    if align_corners and half_pixel_centers:
        raise ValueError("If half_pixel_centers is True, align_corners must be False.")
    with name_scope(name, "ResizeBilinear", [images, size]) as scope:
        images = convert_to_tensor(images, name="images")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        return apply_op("ResizeBilinear", [images, size], {"align_corners": bool(align_corners),
                                                           "half_pixel_centers": bool(half_pixel_centers)},
                        name=scope)
