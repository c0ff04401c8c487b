"""`dflow.image`: resizing, flips and per-image standardization (TF1's `tf.image`).

Flips and standardization are composites of registered ops (gradients from their rules); the
resizes are ops of dflow/kernels/image_ops.py. All run blockwise over the batch axis N of chunked
images. Resizing follows TF1's legacy kernels
(`half_pixel_centers=False` unless asked): output row y reads input row y * scale with
scale = in / out in float32, or (in - 1) / (out - 1) with `align_corners`; nearest neighbour
takes the floor (round with `align_corners`), bilinear interpolates between floor and ceil
(clamped to the image): gathers forward, two matrix products backward.
"""

from __future__ import annotations

import enum

import numpy as np

from .graph import dtypes
from .graph.graph import name_scope
from .graph.ops import Tensor, constant_value
from .kernels.array_ops import shape
from .kernels.common import convert_to_tensor
from .kernels.image_ops import resize_bilinear as _resize_bilinear_op
from .kernels.image_ops import resize_nearest_neighbor as _resize_nearest_op
from .kernels.manip_ops import expand_dims, reverse, squeeze
from .kernels.math_ops import (
    cast,
    less,
    maximum,
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


def _resize(method, images, size, align_corners):
    op = _resize_bilinear_op if method == ResizeMethod.BILINEAR else _resize_nearest_op
    return op(images, list(size), align_corners=align_corners)


# ---- resizing ----------------------------------------------------------------------------------


resize_bilinear = _resize_bilinear_op
resize_nearest_neighbor = _resize_nearest_op


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
        out = _resize(method, x, new, align_corners)
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
        min_std = rsqrt(num if isinstance(num, Tensor) else convert_to_tensor(np.float32(num)))
        return realdiv(subtract(x, mean), maximum(sqrt(variance), min_std), name=scope)


from .tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)  # a TF1 name dflow lacks says so (docs/tf1_coverage.md)
