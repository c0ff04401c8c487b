"""`dflow.image`: resizing, flips, standardization, dtype conversion, brightness and contrast,
crops and pads (TF1's `tf.image`).

Flips and standardization are composites of registered ops (gradients from their rules); the
resizes are ops of dflow/kernels/image_ops.py. All run blockwise over the batch axis N of chunked
images. Resizing follows TF1's legacy kernels
(`half_pixel_centers=False` unless asked): output row y reads input row y * scale with
scale = in / out in float32, or (in - 1) / (out - 1) with `align_corners`; nearest neighbour
takes the floor (round with `align_corners`), bilinear interpolates between floor and ceil
(clamped to the image): gathers forward, two matrix products backward.

Rotations, transposes, gamma, total variation and image gradients are composites too; HSV,
hue, saturation, box drawing and non-max suppression are ops of dflow/kernels/color_ops.py.
Random adjustments draw from dflow's counter-based random ops (a scalar per run), so every
scheduler sees the same draw. YIQ/YUV, PSNR, SSIM and Sobel edges are composites of
kernels/image_quality_ops.py; crop_and_resize, the NMS variants and sample_distorted_bounding_box
are kernels/box_ops.py; GIF/BMP/JPEG extras are kernels/image_codec_ops.py.
"""

from __future__ import annotations

import enum

import numpy as np

from .graph import dtypes
from .graph.graph import name_scope
from .graph.ops import Tensor, constant_value
from .kernels.array_ops import identity, shape
from .kernels.box_ops import (
    combined_non_max_suppression,
    crop_and_resize,
    extract_glimpse,
    non_max_suppression_overlaps,
    non_max_suppression_padded,
    non_max_suppression_with_scores,
    sample_distorted_bounding_box,
)
from .kernels.color_ops import (
    adjust_hue_op,
    adjust_saturation_op,
    draw_bounding_boxes,
    hsv_to_rgb,
    non_max_suppression,
    rgb_to_hsv,
)
from .kernels.common import convert_to_tensor
from .kernels.image_codec_ops import (
    adjust_jpeg_quality_op,
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    decode_webp,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    is_jpeg,
)
from .kernels.image_ops import resize_bilinear as _resize_bilinear_op
from .kernels.image_ops import resize_nearest_neighbor as _resize_nearest_op
from .kernels.image_quality_ops import (
    psnr,
    rgb_to_yiq,
    rgb_to_yuv,
    sobel_edges,
    ssim,
    ssim_multiscale,
    yiq_to_rgb,
    yuv_to_rgb,
)
from .kernels.linalg_ops import tensordot
from .kernels.manip_ops import expand_dims, reverse, squeeze
from .kernels.manip_ops import transpose as _transpose
from .kernels.math_ops import abs as abs_
from .kernels.math_ops import (
    add,
    cast,
    clip_by_value,
    floordiv,
    less,
    maximum,
    multiply,
    realdiv,
    relu,
    rsqrt,
    sqrt,
    square,
    subtract,
    where,
)
from .kernels.math_ops import pow as pow_
from .kernels.pad_ops import pad, tile
from .kernels.random_ops import random_uniform
from .kernels.reduction_ops import reduce_mean, reduce_prod, reduce_sum
from .kernels.resize_matrix_ops import resize_area, resize_bicubic
from .kernels.sampling_ops import random_crop

__all__ = [
    "ResizeMethod", "resize_images", "resize_bilinear", "resize_nearest_neighbor", "flip_left_right",
    "flip_up_down", "random_flip_left_right", "random_flip_up_down", "per_image_standardization",
    "convert_image_dtype", "adjust_brightness", "random_brightness", "adjust_contrast", "random_contrast",
    "rgb_to_grayscale", "crop_to_bounding_box", "pad_to_bounding_box", "resize_image_with_crop_or_pad",
]
__all__ += ["rot90", "transpose_image", "random_crop", "central_crop", "adjust_gamma", "grayscale_to_rgb",
            "rgb_to_hsv", "hsv_to_rgb", "adjust_hue", "random_hue", "adjust_saturation", "random_saturation",
            "total_variation", "image_gradients", "draw_bounding_boxes", "non_max_suppression", "transpose",
            "resize_with_crop_or_pad"]


class ResizeMethod(enum.IntEnum):
    """TF1's resize methods."""

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
    op = {ResizeMethod.BILINEAR: _resize_bilinear_op, ResizeMethod.NEAREST_NEIGHBOR: _resize_nearest_op,
          ResizeMethod.BICUBIC: resize_bicubic, ResizeMethod.AREA: resize_area}[method]
    return op(images, list(size), align_corners=align_corners)


# ---- resizing ----------------------------------------------------------------------------------


resize_bilinear = _resize_bilinear_op
resize_nearest_neighbor = _resize_nearest_op


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False, preserve_aspect_ratio=False,
                  name=None):
    """images ([batch,] h, w, c) resized to `size` = [new_h, new_w] (TF1's legacy resize).

    BILINEAR, BICUBIC and AREA return float32; NEAREST_NEIGHBOR keeps the dtype. When the size is
    already the image's (known when building), the images are returned unchanged (TF1). With
    `preserve_aspect_ratio`, the largest size within `size` keeping h/w (static sizes only).
    BICUBIC and AREA need a size known when building. Gradient w.r.t. images for every method.
    """
    try:
        method = ResizeMethod(method)
    except ValueError:
        raise ValueError(f"Resize method is not implemented: {method}") from None
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


# ---- dtype conversion, brightness, contrast, grayscale ---------------------------------------------


def _saturate_cast(x, dtype):
    lo, hi = max(float(dtype.min), float(x.dtype.min)), min(float(dtype.max), float(x.dtype.max))
    return cast(clip_by_value(x, np.asarray(lo, x.dtype.np_dtype), np.asarray(hi, x.dtype.np_dtype)), dtype)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """image converted to `dtype`, rescaling values: integers span [0, dtype.max], floats [0, 1).

    int -> int scales by the ratio of the ranges (a floor division down, a product up); int ->
    float multiplies by 1 / in.max; float -> int multiplies by out.max + 0.5 and casts (clipped
    first with `saturate`); float -> float casts (TF1).
    """
    image = convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError("dtype must be either floating point or integer")
    if not (image.dtype.is_floating or image.dtype.is_integer):
        raise TypeError(f"convert_image_dtype: image must be floating point or integer, got {image.dtype.name}")
    if dtype == image.dtype:
        return identity(image, name=name)
    with name_scope(name, "convert_image", [image]) as scope:
        convert = (lambda t: _saturate_cast(t, dtype)) if saturate else (lambda t: cast(t, dtype))
        if image.dtype.is_integer and dtype.is_integer:
            scale_in, scale_out = int(image.dtype.max), int(dtype.max)
            if scale_in > scale_out:
                return convert(floordiv(image, np.asarray((scale_in + 1) // (scale_out + 1), image.dtype.np_dtype)))
            return multiply(convert(image), np.asarray((scale_out + 1) // (scale_in + 1), dtype.np_dtype), name=scope)
        if image.dtype.is_floating and dtype.is_floating:
            return cast(image, dtype, name=scope)
        if image.dtype.is_integer:
            return multiply(cast(image, dtype), np.asarray(1.0 / float(image.dtype.max), dtype.np_dtype), name=scope)
        return convert(multiply(image, np.asarray(float(dtype.max) + 0.5, image.dtype.np_dtype)))


def _as_float(image):
    """(float image, original dtype): float16/32 images stay, others go through convert_image_dtype."""
    image = convert_to_tensor(image, name="image")
    keep = image.dtype in (dtypes.float16, dtypes.float32)
    return (image if keep else convert_image_dtype(image, dtypes.float32)), image.dtype


def adjust_brightness(image, delta):
    """image + delta in the [0, 1) float scale, converted back to image's dtype (saturated)."""
    with name_scope(None, "adjust_brightness", [image, delta]):
        flt, orig = _as_float(image)
        adjusted = add(flt, cast(convert_to_tensor(delta), flt.dtype))
        return convert_image_dtype(adjusted, orig, saturate=True)


def random_brightness(image, max_delta, seed=None):
    """adjust_brightness by a delta drawn uniformly in [-max_delta, max_delta) per run."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def adjust_contrast(images, contrast_factor):
    """(x - mean) * contrast_factor + mean per image and channel (mean over h, w), in the float scale,
    converted back to the images' dtype (saturated)."""
    with name_scope(None, "adjust_contrast", [images, contrast_factor]):
        flt, orig = _as_float(images)
        if flt.shape.ndims is not None and flt.shape.ndims < 3:
            raise ValueError(f"adjust_contrast: images must be at least 3-D, got shape {flt.shape}")
        mean = reduce_mean(flt, [-3, -2], keepdims=True)
        factor = cast(convert_to_tensor(contrast_factor), flt.dtype)
        return convert_image_dtype(add(multiply(subtract(flt, mean), factor), mean), orig, saturate=True)


def random_contrast(image, lower, upper, seed=None):
    """adjust_contrast by a factor drawn uniformly in [lower, upper) per run."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_contrast(image, random_uniform([], lower, upper, seed=seed))


def rgb_to_grayscale(images, name=None):
    """[..., 3] RGB -> [..., 1] gray with TF's weights (0.2989, 0.5870, 0.1140), in images' dtype."""
    with name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        flt = convert_image_dtype(images, dtypes.float32)
        gray = tensordot(flt, np.array([0.2989, 0.5870, 0.1140], np.float32), [[-1], [-1]])
        return convert_image_dtype(expand_dims(gray, -1), images.dtype, name=scope)


# ---- crops and pads (static sizes) ----------------------------------------------------------------


def _hwc(image, fn):
    x, is_batch = _batched(image, fn)
    h, w = x.shape[1].value, x.shape[2].value
    if h is None or w is None:
        raise ValueError(f"{fn}: the image height and width must be known when the graph is built, got shape "
                         f"{x.shape}")
    return x, is_batch, h, w


def _ints_of(fn, **values):
    for k, v in values.items():
        if not isinstance(v, (int, np.integer)):
            raise ValueError(f"{fn}: {k} must be a Python int in dflow (got {v!r})")
    return [int(v) for v in values.values()]


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """image[..., offset_height:offset_height + target_height, offset_width:... + target_width, :]."""
    fn = "crop_to_bounding_box"
    oh, ow, th, tw = _ints_of(fn, offset_height=offset_height, offset_width=offset_width,
                              target_height=target_height, target_width=target_width)
    with name_scope(None, "crop_to_bounding_box", [image]):
        x, is_batch, h, w = _hwc(image, fn)
        if oh < 0 or ow < 0:
            raise ValueError("offset_height and offset_width must be >= 0.")
        if th <= 0 or tw <= 0:
            raise ValueError("target_height and target_width must be > 0.")
        if h < th + oh or w < tw + ow:
            raise ValueError(f"{fn}: the image ({h} x {w}) must be at least the target plus the offset "
                             f"({th} + {oh} x {tw} + {ow})")
        out = x[:, oh:oh + th, ow:ow + tw, :]
        return out if is_batch else squeeze(out, [0])


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """image zero-padded to target_height x target_width, placed at (offset_height, offset_width)."""
    fn = "pad_to_bounding_box"
    oh, ow, th, tw = _ints_of(fn, offset_height=offset_height, offset_width=offset_width,
                              target_height=target_height, target_width=target_width)
    with name_scope(None, "pad_to_bounding_box", [image]):
        x, is_batch, h, w = _hwc(image, fn)
        if oh < 0 or ow < 0:
            raise ValueError("offset_height and offset_width must be >= 0")
        if th - oh - h < 0 or tw - ow - w < 0:
            raise ValueError(f"{fn}: the target ({th} x {tw}) must be at least the image plus the offset "
                             f"({h} + {oh} x {w} + {ow})")
        out = pad(x, [[0, 0], [oh, th - oh - h], [ow, tw - ow - w], [0, 0]])
        return out if is_batch else squeeze(out, [0])


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """image centrally cropped or zero-padded (each axis on its own) to target_height x target_width."""
    fn = "resize_image_with_crop_or_pad"
    th, tw = _ints_of(fn, target_height=target_height, target_width=target_width)
    if th <= 0 or tw <= 0:
        raise ValueError("target_height and target_width must be > 0.")
    with name_scope(None, "resize_image_with_crop_or_pad", [image]):
        x, is_batch, h, w = _hwc(image, fn)
        dh, dw = th - h, tw - w
        cropped = crop_to_bounding_box(x, max(-dh // 2, 0), max(-dw // 2, 0), min(th, h), min(tw, w))
        out = pad_to_bounding_box(cropped, max(dh // 2, 0), max(dw // 2, 0), th, tw)
        return out if is_batch else squeeze(out, [0])

# ---- rotations, transposes, central crops (issue 28) ---------------------------------------------


def rot90(image, k=1, name=None):
    """image rotated counter-clockwise by k * 90 degrees ([h, w, c] or [batch, h, w, c]); k a Python
    int or a constant (dflow needs it when building: the output's shape depends on it)."""
    with name_scope(name, "rot90", [image, k]) as scope:
        x = convert_to_tensor(image, name="image")
        kv = k if isinstance(k, (int, np.integer)) else constant_value(convert_to_tensor(k))
        if kv is None:
            raise ValueError("rot90: k must be known when the graph is built in dflow, got a computed tensor")
        if x.shape.ndims not in (3, 4):
            raise ValueError(f"rot90: 'image' must be 3-D or 4-D (known when building), got shape {x.shape}")
        kv, b = int(kv) % 4, x.shape.ndims - 3
        swap = [0, 2, 1, 3] if b else [1, 0, 2]
        if kv == 0:
            return identity(x, name=scope)
        if kv == 1:
            return _transpose(reverse(x, [b + 1]), swap, name=scope)
        if kv == 2:
            return reverse(x, [b, b + 1], name=scope)
        return reverse(_transpose(x, swap), [b + 1], name=scope)


def transpose_image(image):
    """image with height and width swapped ([h, w, c] or [batch, h, w, c])."""
    with name_scope(None, "transpose_image", [image]) as scope:
        x = convert_to_tensor(image, name="image")
        if x.shape.ndims not in (3, 4):
            raise ValueError(f"transpose_image: 'image' must be 3-D or 4-D (known when building), got shape {x.shape}")
        return _transpose(x, [1, 0, 2] if x.shape.ndims == 3 else [0, 2, 1, 3], name=scope)


transpose = transpose_image  # TF1's other spelling


def central_crop(image, central_fraction):
    """The central `central_fraction` (in (0, 1]) of each image's height and width (TF1: the
    border start is int((size - size * fraction) / 2) on each side)."""
    if central_fraction <= 0.0 or central_fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    with name_scope(None, "central_crop", [image]):
        x = convert_to_tensor(image, name="image")
        if central_fraction == 1.0:
            return x
        x4, is_batch, h, w = _hwc(x, "central_crop")
        top, left = int((h - h * central_fraction) / 2), int((w - w * central_fraction) / 2)
        out = x4[:, top:h - top, left:w - left, :]
        return out if is_batch else squeeze(out, [0])


# ---- gamma, grayscale to RGB, HSV, hue and saturation ----------------------------------------------


def adjust_gamma(image, gamma=1, gain=1):
    """gain * image ** gamma in the [0, 1] float scale, converted back to image's dtype (saturated).
    ValueError for a negative constant gamma."""
    with name_scope(None, "adjust_gamma", [image, gamma, gain]):
        flt, orig = _as_float(image)
        if isinstance(gamma, (int, float)) and gamma < 0:
            raise ValueError("Gamma should be a non-negative real number.")
        adjusted = multiply(cast(convert_to_tensor(gain), flt.dtype),
                            pow_(flt, cast(convert_to_tensor(gamma), flt.dtype)))
        return convert_image_dtype(adjusted, orig, saturate=True)


def grayscale_to_rgb(images, name=None):
    """[..., 1] gray -> [..., 3] with the channel repeated. ValueError when the last dimension is not 1."""
    with name_scope(name, "grayscale_to_rgb", [images]) as scope:
        x = convert_to_tensor(images, name="images")
        if x.shape.ndims is None or x.shape.ndims < 2 or x.shape[-1].value not in (None, 1):
            raise ValueError(f"grayscale_to_rgb: images must be at least 2-D with last dimension 1, got {x.shape}")
        return tile(x, [1] * (x.shape.ndims - 1) + [3], name=scope)


def _rgb_float(image, fn):
    flt, orig = _as_float(image)
    if flt.shape.ndims is None or flt.shape.ndims < 1 or flt.shape[-1].value not in (None, 3):
        raise ValueError(f"{fn}: image must have 3 channels (RGB) in its last dimension, got shape {flt.shape}")
    return flt, orig


def adjust_hue(image, delta, name=None):
    """image's hue shifted by `delta` (in [-1, 1], wrapping), RGB [..., 3], back in image's dtype."""
    with name_scope(name, "adjust_hue", [image]) as scope:
        flt, orig = _rgb_float(image, "adjust_hue")
        return convert_image_dtype(adjust_hue_op(flt, delta), orig, name=scope)


def random_hue(image, max_delta, seed=None):
    """adjust_hue by a delta drawn uniformly in [-max_delta, max_delta] per run (max_delta <= 0.5)."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, random_uniform([], -max_delta, max_delta, seed=seed))


def adjust_saturation(image, saturation_factor, name=None):
    """image's saturation multiplied by `saturation_factor` (clipped to [0, 1]), RGB [..., 3]."""
    with name_scope(name, "adjust_saturation", [image]) as scope:
        flt, orig = _rgb_float(image, "adjust_saturation")
        return convert_image_dtype(adjust_saturation_op(flt, saturation_factor), orig, name=scope)


def random_saturation(image, lower, upper, seed=None):
    """adjust_saturation by a factor drawn uniformly in [lower, upper) per run."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_saturation(image, random_uniform([], lower, upper, seed=seed))


# ---- total variation and image gradients ----------------------------------------------------------


def total_variation(images, name=None):
    """Sum of absolute differences of neighbouring pixels (down and right), per image: a scalar
    for [h, w, c], [batch] for [batch, h, w, c]. ValueError for another rank."""
    with name_scope(name, "total_variation"):
        x = convert_to_tensor(images, name="images")
        if x.shape.ndims == 3:
            d1, d2, axes = x[1:, :, :] - x[:-1, :, :], x[:, 1:, :] - x[:, :-1, :], None
        elif x.shape.ndims == 4:
            d1, d2, axes = x[:, 1:, :, :] - x[:, :-1, :, :], x[:, :, 1:, :] - x[:, :, :-1, :], [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return add(reduce_sum(abs_(d1), axis=axes), reduce_sum(abs_(d2), axis=axes))


def image_gradients(image):
    """(dy, dx): I(y + 1, x) - I(y, x) and I(y, x + 1) - I(y, x) of [batch, h, w, d] images, zero on
    the last row (dy) and column (dx), each of the image's shape."""
    x = convert_to_tensor(image, name="image")
    if x.shape.ndims != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {x.shape}.")
    dy = pad(x[:, 1:, :, :] - x[:, :-1, :, :], [[0, 0], [0, 1], [0, 0], [0, 0]])
    dx = pad(x[:, :, 1:, :] - x[:, :, :-1, :], [[0, 0], [0, 0], [0, 1], [0, 0]])
    return dy, dx


resize_with_crop_or_pad = resize_image_with_crop_or_pad  # TF 1.15's other spelling

__all__ += ["decode_png", "decode_jpeg", "decode_image", "encode_png", "encode_jpeg"]  # kernels/image_codec_ops.py

from .kernels.space_ops import extract_image_patches, extract_patches  # noqa: E402

__all__ += ["extract_image_patches", "extract_patches"]


# ---- JPEG quality, JPEG sniffing, resize with pad (issue 28) ----------------------------------------


def adjust_jpeg_quality(image, jpeg_quality, name=None):
    """image [h, w, c] (1 or 3 channels) as it looks after a JPEG round trip at `jpeg_quality` (an int
    in [0, 100], or a scalar tensor), back in image's dtype. Pillow's codec: a level or two off TF's."""
    with name_scope(name, "adjust_jpeg_quality", [image]) as scope:
        x = convert_to_tensor(image, name="image")
        if x.shape.ndims not in (None, 3):
            raise ValueError(f"adjust_jpeg_quality: image must be 3-D [height, width, channels], got {x.shape}")
        if isinstance(jpeg_quality, (int, np.integer)) and not 0 <= jpeg_quality <= 100:
            raise ValueError(f"jpeg_quality must be in range [0, 100], got {jpeg_quality}")
        out = adjust_jpeg_quality_op(convert_image_dtype(x, dtypes.uint8, saturate=True), jpeg_quality)
        return convert_image_dtype(out, x.dtype, name=scope)


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    """adjust_jpeg_quality with a quality drawn uniformly in [min, max) each run (0 <= min < max <= 100)."""
    if min_jpeg_quality < 0 or max_jpeg_quality < 0 or min_jpeg_quality > 100 or max_jpeg_quality > 100:
        raise ValueError("jpeg_quality must be in range [0, 100]")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("max_jpeg_quality must be greater than min_jpeg_quality.")
    q = random_uniform([], min_jpeg_quality, max_jpeg_quality, dtype=dtypes.int32, seed=seed)
    return adjust_jpeg_quality(image, q)


def resize_image_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR, align_corners=False):
    """image resized keeping its aspect ratio to fit target_height x target_width, then zero-padded
    (centred) to exactly that size (TF1's arithmetic in float32; sizes known when building)."""
    fn = "resize_image_with_pad"
    th, tw = _ints_of(fn, target_height=target_height, target_width=target_width)
    if th <= 0 or tw <= 0:
        raise ValueError("target_height and target_width must be > 0.")
    with name_scope(None, "resize_image_with_pad", [image]):
        x, is_batch, h, w = _hwc(image, fn)
        f32 = np.float32
        ratio = max(f32(w) / f32(tw), f32(h) / f32(th))
        rh, rw = f32(h) / ratio, f32(w) / ratio
        ph, pw = max(0, int(np.floor((f32(th) - rh) / f32(2)))), max(0, int(np.floor((f32(tw) - rw) / f32(2))))
        resized = resize_images(x, [int(np.floor(rh)), int(np.floor(rw))], method=method, align_corners=align_corners)
        out = pad_to_bounding_box(resized, ph, pw, th, tw)
        return out if is_batch else squeeze(out, [0])


resize = resize_images  # TF 1.15's tf.compat.v1.image.resize is resize_images

__all__ += ["decode_webp", "combined_non_max_suppression", "extract_glimpse", "resize_bicubic", "resize_area",
            "is_jpeg", "adjust_jpeg_quality", "random_jpeg_quality", "resize_image_with_pad", "resize", "decode_gif", "decode_bmp", "extract_jpeg_shape", "decode_and_crop_jpeg", "rgb_to_yiq", "yiq_to_rgb",
            "rgb_to_yuv", "yuv_to_rgb", "psnr", "ssim", "ssim_multiscale", "sobel_edges", "crop_and_resize",
            "non_max_suppression_with_scores", "non_max_suppression_padded", "non_max_suppression_overlaps",
            "sample_distorted_bounding_box"]

from .tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)  # a TF1 name dflow lacks says so (docs/tf1_coverage.md)
