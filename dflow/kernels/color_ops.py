"""Image colour ops (TF1's RGBToHSV, HSVToRGB, AdjustHue, AdjustSaturation) and the box ops
DrawBoundingBoxesV2 and NonMaxSuppressionV3.

The colour ops act on each pixel's last axis (3 channels, float): on Dask the channel axis is
one chunk and every other axis keeps its chunks (one `map_blocks`). Hue is in [0, 1); hue shifts
wrap around, saturation is clipped to [0, 1] (TF1's kernels). Boxes are drawn and suppressed in
one whole-array task (`numpy_op`): they are small next to the images.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape, unknown_shape
from .common import apply_op, check_dtype, convert_to_tensor
from .numpy_kernels import numpy_op

__all__: list[str] = []


# ---- per-pixel colour ops -------------------------------------------------------------------------


def rgb_to_hsv_np(rgb):
    """[..., 3] RGB in [0, 1] -> [..., 3] HSV (hue in [0, 1)), as TF's RGBToHSV kernel."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    vmax, vmin = np.max(rgb, axis=-1), np.min(rgb, axis=-1)
    rng = vmax - vmin
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(vmax > 0, rng / vmax, 0)
        norm = np.where(rng > 0, 1.0 / (6.0 * rng), 0)
        h = np.where(r == vmax, norm * (g - b),
                     np.where(g == vmax, norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0))
    h = np.where(rng > 0, h, 0)
    h = np.where(h < 0, h + 1, h)
    return np.stack([h, s, vmax], axis=-1).astype(rgb.dtype)


def hsv_to_rgb_np(hsv):
    """[..., 3] HSV -> [..., 3] RGB, as TF's HSVToRGB kernel (six sectors of the hue)."""
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    c = s * v
    m = v - c
    dh = h * 6
    x = c * (1 - np.abs(np.fmod(dh, 2) - 1))
    sector = np.floor(dh).astype(np.int64) % 6
    zero = np.zeros_like(c)
    choices = [(c, x, zero), (x, c, zero), (zero, c, x), (zero, x, c), (x, zero, c), (c, zero, x)]
    rgb = [np.choose(sector, [ch[i] for ch in choices]) + m for i in range(3)]
    return np.stack(rgb, axis=-1).astype(hsv.dtype)


def _adjust_hue_np(rgb, delta):
    hsv = rgb_to_hsv_np(rgb)
    h = np.mod(hsv[..., 0] + np.float64(delta), 1.0)
    return hsv_to_rgb_np(np.stack([h.astype(rgb.dtype), hsv[..., 1], hsv[..., 2]], axis=-1))


def _adjust_saturation_np(rgb, scale):
    hsv = rgb_to_hsv_np(rgb)
    s = np.clip(hsv[..., 1] * np.float64(scale), 0.0, 1.0).astype(rgb.dtype)
    return hsv_to_rgb_np(np.stack([hsv[..., 0], s, hsv[..., 2]], axis=-1))


def _pixel_infer(op_type):
    def infer(inputs, attrs):
        x = inputs[0]
        check_dtype(x, "f", op_type, "images")
        if x.shape.ndims == 0 or (x.shape.ndims is not None and x.shape[-1].value not in (None, 3)):
            raise ValueError(f"{op_type}: the last dimension of images must be 3 (RGB), got shape {x.shape} "
                             f"({x.name!r})")
        for t in inputs[1:]:
            if t.shape.ndims not in (None, 0):
                raise ValueError(f"{op_type}: {t.name!r} must be a scalar, got shape {t.shape}")
        return TensorShape(x.shape), x.dtype

    return infer


def _pixel_op(op_type, fn):
    def eager(xp, x, *scalars):
        return xp.asarray(fn(np.asarray(x), *[np.asarray(s) for s in scalars]))

    def lower(ctx, x, *scalars):
        x = ctx.as_dask(x)
        x = x.rechunk({x.ndim - 1: -1})
        scalars = [ctx.as_dask(s) for s in scalars]
        return ctx.da.map_blocks(_pixels, fn, x, *scalars, dtype=x.dtype, meta=x._meta)

    register_op(op_type, _pixel_infer(op_type), eager=eager, lower=lower)


def _pixels(fn, x, *scalars):
    return fn(np.asarray(x), *[np.asarray(s) for s in scalars])


_pixel_op("RGBToHSV", rgb_to_hsv_np)
_pixel_op("HSVToRGB", hsv_to_rgb_np)
_pixel_op("AdjustHue", _adjust_hue_np)
_pixel_op("AdjustSaturation", _adjust_saturation_np)
not_differentiable("AdjustHue", "AdjustSaturation")  # as TF 1.x: no gradient for these kernels


def rgb_to_hsv(images, name=None):
    """[..., 3] float RGB in [0, 1] -> HSV, hue in [0, 1) (TF1's RGBToHSV)."""
    return apply_op("RGBToHSV", [convert_to_tensor(images, name="images")], name=name, default_name="RGBToHSV")


def hsv_to_rgb(images, name=None):
    """[..., 3] float HSV -> RGB (TF1's HSVToRGB)."""
    return apply_op("HSVToRGB", [convert_to_tensor(images, name="images")], name=name, default_name="HSVToRGB")


def adjust_hue_op(images, delta, name=None):
    """The AdjustHue op: hue shifted by `delta` (wrapping), float images [..., 3]."""
    return apply_op("AdjustHue", [images, convert_to_tensor(delta, dtype=images.dtype.base_dtype, name="delta")],
                    name=name, default_name="AdjustHue")


def adjust_saturation_op(images, scale, name=None):
    """The AdjustSaturation op: saturation times `scale`, clipped to [0, 1]."""
    return apply_op("AdjustSaturation",
                    [images, convert_to_tensor(scale, dtype=images.dtype.base_dtype, name="scale")],
                    name=name, default_name="AdjustSaturation")


# ---- boxes ------------------------------------------------------------------------------------------

_COLORS = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1], [0.5, 0.5, 0, 1],
                    [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]], np.float32)  # TF's default table


def _draw_infer(inputs, attrs):
    images, boxes, colors = inputs
    check_dtype(images, "f", "DrawBoundingBoxes", "images")
    if images.shape.ndims not in (None, 4):
        raise ValueError(f"DrawBoundingBoxes: images must be 4-D [batch, height, width, depth], got {images.shape}")
    if boxes.shape.ndims not in (None, 3) or (boxes.shape.ndims == 3 and boxes.shape[-1].value not in (None, 4)):
        raise ValueError(f"DrawBoundingBoxes: boxes must be [batch, num_boxes, 4], got {boxes.shape}")
    return TensorShape(images.shape), images.dtype


def _draw_boxes(np_, images, boxes, colors):
    canvas = np.array(images, copy=True)
    batch, height, width, depth = canvas.shape
    if boxes.shape[0] != batch:
        raise InvalidArgumentError(None, None, f"DrawBoundingBoxes: images has {batch} images but boxes "
                                   f"{boxes.shape[0]} rows")
    table = np.asarray(colors, np.float32).reshape(-1, np.shape(colors)[-1]) if np.size(colors) else _COLORS.copy()
    if not np.size(colors) and depth == 1:
        table[:, 0] = 1
    if table.shape[1] < depth:
        raise InvalidArgumentError(None, None, f"DrawBoundingBoxes: colors must have at least {depth} channels, got "
                                   f"{table.shape[1]}")
    for b in range(batch):
        for k, box in enumerate(np.asarray(boxes[b], np.float32)):
            color = table[k % len(table), :depth].astype(canvas.dtype)
            # TF's kernel: float coordinates times (size - 1), truncated toward zero
            r0, c0 = int(box[0] * (height - 1)), int(box[1] * (width - 1))
            r1, c1 = int(box[2] * (height - 1)), int(box[3] * (width - 1))
            if r0 > r1 or c0 > c1 or r1 < 0 or c1 < 0 or r0 >= height or c0 >= width:
                continue
            r0c, r1c, c0c, c1c = max(r0, 0), min(r1, height - 1), max(c0, 0), min(c1, width - 1)
            if r0 >= 0:
                canvas[b, r0, c0c:c1c + 1] = color
            if r1 < height:
                canvas[b, r1, c0c:c1c + 1] = color
            if c0 >= 0:
                canvas[b, r0c:r1c + 1, c0] = color
            if c1 < width:
                canvas[b, r0c:r1c + 1, c1] = color
    return canvas


numpy_op("DrawBoundingBoxesV2", _draw_infer, _draw_boxes, lambda si, sb, sc: [si])
not_differentiable("DrawBoundingBoxesV2")


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """images ([batch, h, w, depth], float) with the outlines of `boxes` ([batch, n, 4] of
    [y_min, x_min, y_max, x_max] in [0, 1]) drawn in `colors` (rows of RGBA; TF's table by default)."""
    images = convert_to_tensor(images, name="images")
    boxes = convert_to_tensor(boxes, name="boxes")
    colors = convert_to_tensor(np.zeros((0, 4), np.float32) if colors is None else colors, name="colors")
    return apply_op("DrawBoundingBoxesV2", [images, boxes, colors], name=name, default_name="DrawBoundingBoxesV2")


def _nms_infer(inputs, attrs):
    boxes, scores, max_out, iou, score_threshold = inputs
    if boxes.shape.ndims not in (None, 2) or scores.shape.ndims not in (None, 1):
        raise ValueError(f"NonMaxSuppressionV3: boxes must be [num_boxes, 4] and scores [num_boxes], got "
                         f"{boxes.shape} and {scores.shape}")
    return unknown_shape(1), dtypes.int32


def _iou(a, b):
    ya0, ya1 = min(a[0], a[2]), max(a[0], a[2])
    xa0, xa1 = min(a[1], a[3]), max(a[1], a[3])
    yb0, yb1 = min(b[0], b[2]), max(b[0], b[2])
    xb0, xb1 = min(b[1], b[3]), max(b[1], b[3])
    area_a, area_b = (ya1 - ya0) * (xa1 - xa0), (yb1 - yb0) * (xb1 - xb0)
    if area_a <= 0 or area_b <= 0:
        return 0.0
    inter = max(min(ya1, yb1) - max(ya0, yb0), 0.0) * max(min(xa1, xb1) - max(xa0, xb0), 0.0)
    return inter / (area_a + area_b - inter)


def _nms(np_, boxes, scores, max_out, iou_threshold, score_threshold):
    max_out, iou_threshold = int(max_out), float(iou_threshold)
    if not 0 <= iou_threshold <= 1:
        raise InvalidArgumentError(None, None, "iou_threshold must be in [0, 1]")
    if max_out < 0:
        raise InvalidArgumentError(None, None, f"max_output_size must be non-negative, got {max_out}")
    order = [i for i in np.argsort(-np.asarray(scores, np.float64), kind="stable")
             if scores[i] > float(score_threshold)]
    kept = []
    for i in order:
        if len(kept) >= max_out:
            break
        if all(_iou(boxes[i], boxes[j]) <= iou_threshold for j in kept):
            kept.append(int(i))
    return np.asarray(kept, np.int32)


numpy_op("NonMaxSuppressionV3", _nms_infer, _nms, lambda *shapes: [(float("nan"),)],
         out_dtypes=lambda *dts: [np.dtype(np.int32)])
not_differentiable("NonMaxSuppressionV3")


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"),
                        name=None):
    """Greedy non-maximum suppression: int32 indices (best score first, at most `max_output_size`)
    of boxes ([n, 4]) whose IoU with every box kept before is <= iou_threshold and whose score is
    > score_threshold (TF1's NonMaxSuppressionV3)."""
    boxes = convert_to_tensor(boxes, name="boxes")
    scores = convert_to_tensor(scores, dtype=boxes.dtype, name="scores")
    max_out = convert_to_tensor(max_output_size, name="max_output_size")
    iou = convert_to_tensor(iou_threshold, dtype=boxes.dtype, name="iou_threshold")
    st = convert_to_tensor(score_threshold, dtype=boxes.dtype, name="score_threshold")
    return apply_op("NonMaxSuppressionV3", [boxes, scores, max_out, iou, st], name=name,
                    default_name="NonMaxSuppressionV3")
