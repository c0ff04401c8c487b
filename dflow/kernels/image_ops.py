"""Resizing [N, H, W, C] images: ResizeBilinear, ResizeNearestNeighbor and their gradient ops (each
pair is the other's gradient: all are linear in their image input), and the public functions
`tf.image.resize_bilinear` and `tf.image.resize_nearest_neighbor`.

TF's coordinates, computed in float32 on the host from the sizes: output row y reads source row
y * scale (legacy), or (y + 0.5) * scale (- 0.5 for bilinear) with `half_pixel_centers`, where
scale = in / out, or (in - 1) / (out - 1) with `align_corners`. Bilinear interpolates between
floor and ceil (clamped to the image) with weight src - floor(src): the kernel gathers the two
columns and lerps, then the two rows (TF's order), O(output); nearest neighbour gathers
floor(src) (roundf with `align_corners`). The gradient kernels apply the transposed [out, in]
weight matrices as two matrix products (BLAS). Every kernel takes whole images, so the chunked
lowering is blockwise over N: one task per N chunk.
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from ..graph import dtypes
from ..graph.evaluate import namespace
from ..graph.graph import name_scope
from ..graph.registry import def_grad, register_op
from ..graph.shape import TensorShape
from .array_ops import shape as _shape
from .common import apply_op, convert_to_tensor
from .creation_ops import _ints, _partial_shape
from .math_ops import cast

__all__: list[str] = []  # public through dflow.image


def _scaled(n_out, n_in, align_corners, half_pixel_centers, offset):
    """Float32 source coordinates of output positions 0..n_out-1 (TF's scale and scalers)."""
    f = np.float32
    scale = f(n_in - 1) / f(n_out - 1) if align_corners and n_out > 1 else f(n_in) / f(n_out)
    pos = np.arange(n_out, dtype=np.float32)
    return (pos + f(0.5)) * scale - f(offset) if half_pixel_centers else pos * scale


def _bilinear_source(n_out, n_in, align_corners, half_pixel_centers):
    """(lower, upper, lerp) per output position along one axis."""
    src = _scaled(n_out, n_in, align_corners, half_pixel_centers, 0.5)
    low = np.floor(src)
    lower = np.maximum(low.astype(np.int64), 0)
    upper = np.minimum(np.ceil(src).astype(np.int64), n_in - 1)
    return lower, upper, (src - low).astype(np.float32)


def _nearest_source(n_out, n_in, align_corners, half_pixel_centers):
    """The source position of each output position along one axis (roundf with align_corners)."""
    src = _scaled(n_out, n_in, align_corners, half_pixel_centers, 0.0)
    src = np.floor(src + np.float32(0.5)) if align_corners else np.floor(src)
    return np.clip(src.astype(np.int64), 0, n_in - 1)


def _weights(method, n_out, n_in, align_corners, half_pixel_centers):
    """The [out, in] matrix of one axis: output = weights @ input along that axis."""
    w = np.zeros((n_out, n_in), np.float32)
    rows = np.arange(n_out)
    if method == "nearest":
        w[rows, _nearest_source(n_out, n_in, align_corners, half_pixel_centers)] = 1
        return w
    lower, upper, lerp = _bilinear_source(n_out, n_in, align_corners, half_pixel_centers)
    np.add.at(w, (rows, lower), 1 - lerp)
    np.add.at(w, (rows, upper), lerp)
    return w


def _bilinear(xp, images, size, *, align_corners, half_pixel_centers):
    """Two gathers and a lerp per axis: columns first, then rows (TF's order); float32."""
    oh, ow = _ints(size)
    x = xp.astype(images, xp.float32)
    dev = array_api_compat.device(x)
    _, h, w, _ = x.shape
    cols = [xp.asarray(v, device=dev) for v in _bilinear_source(ow, w, align_corners, half_pixel_centers)]
    rows = [xp.asarray(v, device=dev) for v in _bilinear_source(oh, h, align_corners, half_pixel_centers)]
    left, right = xp.take(x, cols[0], axis=2), xp.take(x, cols[1], axis=2)
    x = left + (right - left) * xp.reshape(cols[2], (1, 1, ow, 1))
    top, bottom = xp.take(x, rows[0], axis=1), xp.take(x, rows[1], axis=1)
    return top + (bottom - top) * xp.reshape(rows[2], (1, oh, 1, 1))


def _nearest(xp, images, size, *, align_corners, half_pixel_centers):
    """One gather per axis; the images' dtype."""
    oh, ow = _ints(size)
    dev = array_api_compat.device(images)
    _, h, w, _ = images.shape
    x = xp.take(images, xp.asarray(_nearest_source(ow, w, align_corners, half_pixel_centers), device=dev), axis=2)
    return xp.take(x, xp.asarray(_nearest_source(oh, h, align_corners, half_pixel_centers), device=dev), axis=1)


def _adjoint(method):
    def kernel(xp, grads, in_shape, *, align_corners, half_pixel_centers):
        """dx[n, h, w, c] = sum over (y, x) of W_h[y, h] W_w[x, w] g[n, y, x, c]: two matrix products."""
        n, oh, ow, c = grads.shape
        _, h, w, _ = _ints(in_shape)
        dev = array_api_compat.device(grads)
        w_h, w_w = (xp.asarray(_weights(method, o, i, align_corners, half_pixel_centers), dtype=grads.dtype,
                               device=dev) for o, i in ((oh, h), (ow, w)))
        g = xp.reshape(xp.permute_dims(grads, (0, 1, 3, 2)), (-1, ow)) @ w_w  # [n * oh * c, w]
        g = xp.reshape(xp.permute_dims(xp.reshape(g, (n, oh, c, w)), (0, 2, 3, 1)), (-1, oh)) @ w_h  # [n*c*w, h]
        return xp.permute_dims(xp.reshape(g, (n, c, w, h)), (0, 3, 2, 1))

    return kernel


# ---- static inference and the chunked lowering ------------------------------------------------


def _check_images(t, op_type):
    if t.shape.ndims not in (None, 4):
        raise ValueError(f"{op_type}: images must be 4-dimensional [batch, height, width, channels], got "
                         f"{t.name!r} of shape {t.shape}")
    if t.dtype.np_dtype.kind not in "iuf":
        raise TypeError(f"{op_type}: images must be of a real dtype, got {t.dtype.name}")


def _resize_infer(op_type, out_dtype):
    def infer(inputs, attrs):
        images, size = inputs
        _check_images(images, op_type)
        if size.dtype != dtypes.int32 or not size.shape.is_compatible_with([2]):
            raise ValueError(f"{op_type}: size must be a 1-D int32 tensor of 2 elements, got {size.dtype.name} "
                             f"{size.shape}")
        new = _partial_shape(size) or [None, None]
        if any(d is not None and d <= 0 for d in new):
            raise ValueError(f"{op_type}: size must be positive, got {new}")
        dims = images.shape.as_list() if images.shape.ndims is not None else [None] * 4
        return TensorShape([dims[0], new[0], new[1], dims[3]]), out_dtype or images.dtype

    return infer


def _grad_infer(inputs, attrs):
    grads, in_shape = inputs
    dims = _partial_shape(in_shape)
    return TensorShape(dims if dims is not None else [None] * 4), grads.dtype


def _per_block(block, kernel, arg, **attrs):
    return kernel(namespace((block,)), block, arg, **attrs)


def _blockwise(ctx, kernel, x, arg, out_hw, dtype, **attrs):
    x = ctx.as_dask(x)
    ctx.known_shape(x)
    x = x.rechunk({1: -1, 2: -1, 3: -1})
    chunks = (x.chunks[0], (int(out_hw[0]),), (int(out_hw[1]),), x.chunks[3])
    return ctx.da.map_blocks(_per_block, x, kernel=kernel, arg=arg, chunks=chunks, dtype=dtype,
                             name=ctx.name(), meta=np.empty((0,) * 4, dtype), **attrs)


def _resize_lower(kernel, out_dtype):
    def lower(ctx, images, size, **attrs):
        size = [int(d) for d in _ints(ctx.host_value(size, f"{ctx.op.type} size"))]
        images = ctx.as_dask(images)
        return _blockwise(ctx, kernel, images, size, size, out_dtype or images.dtype, **attrs)

    return lower


def _grad_lower(kernel):
    def lower(ctx, grads, in_shape, **attrs):
        in_shape = [int(d) for d in _ints(ctx.host_value(in_shape, f"{ctx.op.type} original image shape"))]
        grads = ctx.as_dask(grads)
        return _blockwise(ctx, kernel, grads, in_shape, in_shape[1:3], grads.dtype, **attrs)

    return lower


def _flags(op):
    return {k: op.get_attr(k) for k in ("align_corners", "half_pixel_centers")}


def _image_shape(images):
    if images.shape.is_fully_defined():
        return convert_to_tensor(np.array(images.shape.as_list(), np.int32))
    return _shape(images)


def _hw(t):
    if t.shape[1:3].is_fully_defined():
        return convert_to_tensor(np.array(t.shape.as_list()[1:3], np.int32))
    return _shape(t)[1:3]


# ---- ResizeBilinear and ResizeBilinearGrad: each the other's gradient ------------------------------


register_op("ResizeBilinear", _resize_infer("ResizeBilinear", dtypes.float32), eager=_bilinear,
            lower=_resize_lower(_bilinear, np.float32))
register_op("ResizeBilinearGrad", _grad_infer, eager=_adjoint("bilinear"), lower=_grad_lower(_adjoint("bilinear")))


@def_grad("ResizeBilinear")
def _bilinear_gradient(op, g):
    images = op.inputs[0]
    if not images.dtype.is_floating:
        return [None, None]  # as TF: integer images get no gradient
    dx = apply_op("ResizeBilinearGrad", [g, _image_shape(images)], _flags(op))
    return [dx if images.dtype == dtypes.float32 else cast(dx, images.dtype), None]


@def_grad("ResizeBilinearGrad")
def _bilinear_grad_gradient(op, gg):
    return [apply_op("ResizeBilinear", [gg, _hw(op.inputs[0])], _flags(op)), None]


# ---- ResizeNearestNeighbor and ResizeNearestNeighborGrad: each the other's gradient ----------------


register_op("ResizeNearestNeighbor", _resize_infer("ResizeNearestNeighbor", None), eager=_nearest,
            lower=_resize_lower(_nearest, None))
register_op("ResizeNearestNeighborGrad", _grad_infer, eager=_adjoint("nearest"),
            lower=_grad_lower(_adjoint("nearest")))


@def_grad("ResizeNearestNeighbor")
def _nearest_gradient(op, g):
    images = op.inputs[0]
    if not images.dtype.is_floating:
        return [None, None]
    return [apply_op("ResizeNearestNeighborGrad", [g, _image_shape(images)], _flags(op)), None]


@def_grad("ResizeNearestNeighborGrad")
def _nearest_grad_gradient(op, gg):
    return [apply_op("ResizeNearestNeighbor", [gg, _hw(op.inputs[0])], _flags(op)), None]


# ---- public functions ----------------------------------------------------------------------------


def _resize_op(op_type, images, size, align_corners, half_pixel_centers, name):
    if align_corners and half_pixel_centers:
        raise ValueError("If half_pixel_centers is True, align_corners must be False.")
    with name_scope(name, op_type, [images, size]) as scope:
        images = convert_to_tensor(images, name="images")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        return apply_op(op_type, [images, size], {"align_corners": bool(align_corners),
                                                  "half_pixel_centers": bool(half_pixel_centers)}, name=scope)


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """[batch, h, w, c] images resized to `size` = [new_h, new_w] by bilinear interpolation; float32.

    ValueError for images not 4-D, a size not of 2 positive ints, or align_corners together with
    half_pixel_centers. Gradient w.r.t. float images.
    """
    return _resize_op("ResizeBilinear", images, size, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """[batch, h, w, c] images resized to `size` by nearest neighbour; the images' dtype.

    Errors as resize_bilinear. Gradient w.r.t. float images (each output's gradient goes to its
    source pixel).
    """
    return _resize_op("ResizeNearestNeighbor", images, size, align_corners, half_pixel_centers, name)
