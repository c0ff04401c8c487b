"""`dflow.image`: resizing, flips and per-image standardization (TF1's `tf.image`).

Every function is a composite of registered ops, so each gets its gradient from their rules and
runs blockwise over the batch axis N of chunked images. Resizing follows TF1's legacy kernels
(`half_pixel_centers=False` unless asked): output row y reads input row y * scale with
scale = in / out in float32, or (in - 1) / (out - 1) with `align_corners`; nearest neighbour
takes the floor (round with `align_corners`), bilinear interpolates between floor and ceil
(clamped to the image). Bilinear is two contractions with [out, in] interpolation matrices built
from the sizes in float32 (`einsum`: blockwise over N, and its gradient is einsum again);
nearest neighbour is two gathers.
"""

from __future__ import annotations

import enum

import numpy as np

from .graph import dtypes
from .graph.graph import name_scope
from .graph.ops import Tensor, constant_value
from .kernels.array_ops import shape
from .kernels.common import convert_to_tensor
from .kernels.creation_ops import range as _range
from .kernels.gather_ops import gather, one_hot
from .kernels.linalg_ops import einsum
from .kernels.manip_ops import expand_dims, reverse, squeeze
from .kernels.math_ops import (
    add,
    cast,
    ceil,
    floor,
    less,
    maximum,
    minimum,
    multiply,
    realdiv,
    relu,
    rsqrt,
    sqrt,
    square,
    subtract,
    where,
)
from .kernels.random_ops import random_uniform
from .kernels.reduction_ops import reduce_mean, reduce_prod

__all__ = [
    "ResizeMethod", "resize_images", "resize_bilinear", "resize_nearest_neighbor", "flip_left_right",
    "flip_up_down", "random_flip_left_right", "random_flip_up_down", "per_image_standardization",
]


class ResizeMethod(enum.IntEnum):
    """TF1's resize methods (dflow implements BILINEAR and NEAREST_NEIGHBOR)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


# ---- helpers -----------------------------------------------------------------------------------


def _batched(images, fn):
    """images as a 4-D tensor and whether it was 3-D; ValueError for another or unknown rank."""
    images = convert_to_tensor(images, name="images")
    if images.shape.ndims is None:
        raise ValueError(f"{fn}: 'images' contains no shape.")
    if images.shape.ndims not in (3, 4):
        raise ValueError(f"{fn}: 'images' must have either 3 or 4 dimensions, got {images.name!r} of shape "
                         f"{images.shape}")
    return (images, True) if images.shape.ndims == 4 else (expand_dims(images, 0), False)


def _dim(t, axis):
    """Dimension `axis` of t: a Python int where known when building, else an int32 scalar tensor."""
    d = t.shape[axis].value
    return d if d is not None else shape(t)[axis]


def _f32(v):
    return cast(v, dtypes.float32) if isinstance(v, Tensor) else convert_to_tensor(np.float32(v))


def _source(out_size, in_size, align_corners, half_pixel_centers):
    """Float32 source coordinates of output positions 0..out-1 (TF's scale and scalers)."""
    if align_corners and isinstance(out_size, int) and out_size > 1:
        scale = realdiv(_f32(in_size - 1), _f32(out_size - 1))
    elif align_corners and not isinstance(out_size, int):
        big = maximum(out_size - 1, 1)
        scale = where(less(1, out_size), realdiv(_f32(in_size - 1), _f32(big)), realdiv(_f32(in_size), _f32(out_size)))
    else:
        scale = realdiv(_f32(in_size), _f32(out_size))
    pos = cast(_range(0, out_size), dtypes.float32)
    if half_pixel_centers:
        pos = add(pos, _f32(0.5))
    return pos, scale


def _interp_matrix(out_size, in_size, align_corners, half_pixel_centers):
    """[out, in] float32 bilinear weights: row y holds 1 - lerp at floor and lerp at ceil."""
    pos, scale = _source(out_size, in_size, align_corners, half_pixel_centers)
    src = multiply(pos, scale)
    if half_pixel_centers:
        src = subtract(src, _f32(0.5))
    lo_f = floor(src)
    lerp = subtract(src, lo_f)
    lo = maximum(cast(lo_f, dtypes.int32), 0)
    hi = minimum(cast(ceil(src), dtypes.int32), in_size - 1)
    w_lo = multiply(one_hot(lo, in_size, dtype=dtypes.float32), expand_dims(subtract(_f32(1), lerp), 1))
    return add(w_lo, multiply(one_hot(hi, in_size, dtype=dtypes.float32), expand_dims(lerp, 1)))


def _nearest_index(out_size, in_size, align_corners, half_pixel_centers):
    pos, scale = _source(out_size, in_size, align_corners, half_pixel_centers)
    src = multiply(pos, scale)
    src = floor(add(src, _f32(0.5))) if align_corners else floor(src)  # roundf of a non-negative value
    idx = minimum(cast(src, dtypes.int32), in_size - 1)
    return maximum(idx, 0) if half_pixel_centers else idx


def _size(size, fn):
    size = convert_to_tensor(size, dtype=dtypes.int32, name="size") if not isinstance(size, Tensor) else size
    if not size.shape.is_compatible_with([2]) or not size.dtype.is_integer:
        raise ValueError(f"{fn}: 'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    v = constant_value(size)
    if v is not None:
        h, w = (int(e) for e in np.asarray(v).reshape(-1))
        if h <= 0 or w <= 0:
            raise ValueError(f"{fn}: 'size' must be positive, got {[h, w]}")
        return h, w
    size = cast(size, dtypes.int32) if size.dtype != dtypes.int32 else size
    return size[0], size[1]


def _bilinear(images, size, align_corners, half_pixel_centers):
    oh, ow = size
    x = cast(images, dtypes.float32) if images.dtype != dtypes.float32 else images
    a_h = _interp_matrix(oh, _dim(x, 1), align_corners, half_pixel_centers)
    a_w = _interp_matrix(ow, _dim(x, 2), align_corners, half_pixel_centers)
    return einsum("pw,nowc->nopc", a_w, einsum("oh,nhwc->nowc", a_h, x))


def _nearest(images, size, align_corners, half_pixel_centers):
    oh, ow = size
    rows = _nearest_index(oh, _dim(images, 1), align_corners, half_pixel_centers)
    cols = _nearest_index(ow, _dim(images, 2), align_corners, half_pixel_centers)
    return gather(gather(images, rows, axis=1), cols, axis=2)


def _check_corners(align_corners, half_pixel_centers):
    if align_corners and half_pixel_centers:
        raise ValueError("If half_pixel_centers is True, align_corners must be False.")


# ---- resizing ----------------------------------------------------------------------------------


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """[batch, h, w, c] images resized to `size` = [new_h, new_w] by bilinear interpolation; float32."""
    _check_corners(align_corners, half_pixel_centers)
    with name_scope(name, "ResizeBilinear", [images, size]):
        x = convert_to_tensor(images, name="images")
        if x.shape.ndims not in (None, 4):
            raise ValueError(f"resize_bilinear: images must be 4-dimensional, got shape {x.shape}")
        return _bilinear(x, _size(size, "resize_bilinear"), align_corners, half_pixel_centers)


def resize_nearest_neighbor(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """[batch, h, w, c] images resized to `size` by nearest neighbour; same dtype as images."""
    _check_corners(align_corners, half_pixel_centers)
    with name_scope(name, "ResizeNearestNeighbor", [images, size]):
        x = convert_to_tensor(images, name="images")
        if x.shape.ndims not in (None, 4):
            raise ValueError(f"resize_nearest_neighbor: images must be 4-dimensional, got shape {x.shape}")
        return _nearest(x, _size(size, "resize_nearest_neighbor"), align_corners, half_pixel_centers)


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False, preserve_aspect_ratio=False,
                  name=None):
    """images ([batch,] h, w, c) resized to `size` = [new_h, new_w] (TF1's legacy resize).

    BILINEAR returns float32; NEAREST_NEIGHBOR keeps the dtype. When the size is already the
    image's (known when building), the images are returned unchanged (TF1). With
    `preserve_aspect_ratio`, the largest size within `size` keeping h/w (static sizes only).
    BICUBIC and AREA are not provided (ValueError). Gradient w.r.t. images for both methods.
    """
    try:
        method = ResizeMethod(method)
    except ValueError:
        raise ValueError(f"Resize method is not implemented: {method}") from None
    if method not in (ResizeMethod.BILINEAR, ResizeMethod.NEAREST_NEIGHBOR):
        raise ValueError(f"dflow's resize_images provides BILINEAR and NEAREST_NEIGHBOR, not {method.name}")
    with name_scope(name, "resize_images", [images, size]):
        x, is_batch = _batched(images, "resize_images")
        h, w = x.shape[1].value, x.shape[2].value
        new = _size(size, "resize_images")
        if preserve_aspect_ratio:
            if not all(isinstance(v, int) for v in (h, w) + new):
                raise ValueError("resize_images: preserve_aspect_ratio needs sizes known when the graph is built")
            f = min(np.float32(new[0]) / np.float32(h), np.float32(new[1]) / np.float32(w))
            new = (int(np.round(np.float32(f) * np.float32(h))), int(np.round(np.float32(f) * np.float32(w))))
        if all(isinstance(v, int) for v in new) and (h, w) == new:
            return x if is_batch else squeeze(x, [0])
        out = (_bilinear if method == ResizeMethod.BILINEAR else _nearest)(x, new, align_corners, False)
        return out if is_batch else squeeze(out, [0])


# ---- flips and standardization -----------------------------------------------------------------


def _flip(image, axis_3d, fn, name):
    with name_scope(None, name, [image]) as scope:
        x = convert_to_tensor(image, name="image")
        if x.shape.ndims not in (3, 4):
            raise ValueError(f"{fn}: 'image' must be 3-D or 4-D (known when building), got shape {x.shape}")
        return reverse(x, [axis_3d + x.shape.ndims - 3], name=scope)


def flip_left_right(image):
    """The width axis reversed ([h, w, c] or [batch, h, w, c])."""
    return _flip(image, 1, "flip_left_right", "flip_left_right")


def flip_up_down(image):
    """The height axis reversed ([h, w, c] or [batch, h, w, c])."""
    return _flip(image, 0, "flip_up_down", "flip_up_down")


def _random_flip(image, axis_3d, seed, fn):
    with name_scope(None, fn, [image]) as scope:
        x = convert_to_tensor(image, name="image")
        if x.shape.ndims not in (3, 4):
            raise ValueError(f"{fn}: 'image' must be 3-D or 4-D (known when building), got shape {x.shape}")
        # one draw per image (TF1): a scalar for [h, w, c], [batch, 1, 1, 1] for a batch
        draw_shape = [] if x.shape.ndims == 3 else [_dim(x, 0), 1, 1, 1]
        flip = less(random_uniform(draw_shape, 0, 1.0, seed=seed), 0.5)
        return where(flip, reverse(x, [axis_3d + x.shape.ndims - 3]), x, name=scope)


def random_flip_left_right(image, seed=None):
    """Each image flipped left-right with probability 1/2 (a new draw per run)."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """Each image flipped up-down with probability 1/2 (a new draw per run)."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def per_image_standardization(image):
    """(x - mean) / max(stddev, 1 / sqrt(num_elements)) per image, over its h, w, c; float32.

    image: [h, w, c] or [batch, h, w, c] (ValueError for lower rank), cast to float32 (TF1).
    """
    with name_scope(None, "per_image_standardization", [image]) as scope:
        x = convert_to_tensor(image, name="image")
        if x.shape.ndims is not None and x.shape.ndims < 3:
            raise ValueError(f"per_image_standardization: 'image' must be at least three-dimensional, got "
                             f"shape {x.shape}")
        dims = x.shape.as_list()[-3:] if x.shape.ndims is not None else [None]
        num = float(np.prod(dims)) if None not in dims else cast(reduce_prod(shape(x)[-3:]), dtypes.float32)
        x = cast(x, dtypes.float32)
        axes = [-1, -2, -3]
        mean = reduce_mean(x, axes, keepdims=True)
        variance = relu(subtract(reduce_mean(square(x), axes, keepdims=True), square(mean)))
        min_std = rsqrt(_f32(num) if not isinstance(num, Tensor) else num)
        return realdiv(subtract(x, mean), maximum(sqrt(variance), min_std), name=scope)
