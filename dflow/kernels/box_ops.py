"""TF1's box ops: crop_and_resize (a composite), the non-max suppression family (NonMaxSuppressionV4,
V5 with soft-NMS, WithOverlaps), SampleDistortedBoundingBoxV2 and ExtractGlimpse.

crop_and_resize is written with gather_nd and arithmetic as TF's CropAndResize kernel computes
each output pixel (bilinear or nearest, `extrapolation_value` outside the image), so its
gradients with respect to the image and the boxes come from those ops' rules. The others run on
the host in one task (`numpy_op`): boxes and scores are small next to the images. The random
ones take a seed drawn by dflow's counter-based random ops each run, so every scheduler sees the
same draw (not TF's stream: the same seed gives other crops than TF).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.ops import constant_value
from ..graph.registry import not_differentiable
from ..graph.shape import TensorShape
from .array_ops import shape, stack
from .common import apply_op, convert_to_tensor
from .creation_ops import range as range_
from .data_dependent_ops import gather_nd
from .manip_ops import broadcast_to
from .math_ops import (
    cast,
    ceil,
    clip_by_value,
    floor,
    greater_equal,
    less_equal,
    logical_and,
    where,
)
from .numpy_kernels import numpy_op
from .random_ops import random_uniform

__all__: list[str] = []


# ---- crop_and_resize -------------------------------------------------------------------------------


def _static_pair(v, what, fn):
    c = v if isinstance(v, (list, tuple, np.ndarray)) else constant_value(convert_to_tensor(v))
    if c is None:
        raise ValueError(f"{fn}: dflow needs {what} known when building, got a computed tensor")
    c = [int(e) for e in np.asarray(c).reshape(-1)]
    if len(c) != 2 or min(c) <= 0:
        raise ValueError(f"{fn}: {what} must be 2 positive ints, got {c}")
    return c


def _sample_points(lo, hi, n, size):
    """TF's source coordinates of n output samples between lo and hi ([nb, 1], normalized)."""
    size1 = size - 1.0
    if n > 1:
        scale = (hi - lo) * size1 / np.float32(n - 1)
        return lo * size1 + cast(range_(n), dtypes.float32)[None, :] * scale
    return 0.5 * (lo + hi) * size1


def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear", extrapolation_value=0,
                    name=None, box_indices=None):
    """Crops of `image` [batch, h, w, c] at `boxes` [nb, 4] (normalized y1, x1, y2, x2; y1 > y2 flips)
    from images `box_ind` [nb], each resized to `crop_size` [ch, cw]: float32 [nb, ch, cw, c].
    Samples outside the image take `extrapolation_value`. Gradients for image and boxes."""
    box_ind = box_ind if box_ind is not None else box_indices
    if box_ind is None or crop_size is None:
        raise TypeError("crop_and_resize() needs box_ind (box_indices) and crop_size")
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"crop_and_resize: method must be 'bilinear' or 'nearest', got {method!r}")
    with name_scope(name, "CropAndResize", [image, boxes, box_ind]):
        img = convert_to_tensor(image, name="image")
        if img.shape.ndims not in (None, 4):
            raise ValueError(f"crop_and_resize: image must be 4-D [batch, height, width, depth], got {img.shape}")
        img = cast(img, dtypes.float32) if img.dtype != dtypes.float32 else img
        boxes = cast(convert_to_tensor(boxes, name="boxes"), dtypes.float32)
        if boxes.shape.ndims not in (None, 2) or (boxes.shape.ndims == 2 and boxes.shape[1].value not in (None, 4)):
            raise ValueError(f"crop_and_resize: boxes must be [num_boxes, 4], got {boxes.shape}")
        ind = cast(convert_to_tensor(box_ind, name="box_ind"), dtypes.int32)
        ch, cw = _static_pair(crop_size, "crop_size", "crop_and_resize")
        dims = shape(img)
        h, w = (cast(dims[i], dtypes.float32) if img.shape[i].value is None else np.float32(img.shape[i].value)
                for i in (1, 2))
        in_y = _sample_points(boxes[:, 0:1], boxes[:, 2:3], ch, h) + np.zeros((1, ch), np.float32)  # [nb, ch]
        in_x = _sample_points(boxes[:, 1:2], boxes[:, 3:4], cw, w) + np.zeros((1, cw), np.float32)  # [nb, cw]
        ok_y = logical_and(greater_equal(in_y, 0.0), less_equal(in_y, h - 1.0))
        ok_x = logical_and(greater_equal(in_x, 0.0), less_equal(in_x, w - 1.0))
        nb = shape(boxes)[0]
        grid = stack([nb, ch, cw], axis=0)

        def pixels(ys, xs):
            ys = cast(clip_by_value(ys, 0.0, h - 1.0), dtypes.int32)
            xs = cast(clip_by_value(xs, 0.0, w - 1.0), dtypes.int32)
            idx = stack([broadcast_to(ind[:, None, None], grid), broadcast_to(ys[:, :, None], grid),
                         broadcast_to(xs[:, None, :], grid)], axis=-1)
            return gather_nd(img, idx)  # [nb, ch, cw, c]

        if method == "nearest":
            out = pixels(floor(in_y + 0.5), floor(in_x + 0.5))  # std::round of a non-negative coordinate
        else:
            top, left = floor(in_y), floor(in_x)
            bottom, right = ceil(in_y), ceil(in_x)  # as TF: on a whole coordinate both corners are one pixel
            ly, lx = (in_y - top)[:, :, None, None], (in_x - left)[:, None, :, None]
            upper = pixels(top, left) + (pixels(top, right) - pixels(top, left)) * lx
            lower = pixels(bottom, left) + (pixels(bottom, right) - pixels(bottom, left)) * lx
            out = upper + (lower - upper) * ly
        ok = logical_and(ok_y[:, :, None, None], ok_x[:, None, :, None])
        fill = cast(convert_to_tensor(extrapolation_value, name="extrapolation_value"), dtypes.float32)
        return where(broadcast_to(ok, shape(out)), out, broadcast_to(fill, shape(out)), name="crops")


# ---- non-max suppression --------------------------------------------------------------------------


def _iou_matrix(boxes):
    """IoU of every pair of [n, 4] boxes (corners in either order), 0 where either box is empty."""
    b = np.asarray(boxes, np.float64)
    y0, y1 = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
    x0, x1 = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    area = (y1 - y0) * (x1 - x0)
    ih = np.clip(np.minimum(y1[:, None], y1[None, :]) - np.maximum(y0[:, None], y0[None, :]), 0, None)
    iw = np.clip(np.minimum(x1[:, None], x1[None, :]) - np.maximum(x0[:, None], x0[None, :]), 0, None)
    inter = ih * iw
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area[:, None] + area[None, :] - inter)
    return np.where((area[:, None] > 0) & (area[None, :] > 0), iou, 0.0)


def _greedy(sim, scores, max_out, threshold, score_threshold, sigma):
    """TF's NonMaxSuppressionOp loop (soft-NMS when sigma > 0): kept indices and their scores."""
    scores = np.asarray(scores, np.float32)
    scale = np.float32(-0.5 / sigma) if sigma > 0 else np.float32(0)
    heap = [[-float(scores[i]), int(i), 0] for i in range(len(scores)) if scores[i] > score_threshold]
    heap.sort()
    kept, kept_scores = [], []
    while len(kept) < max_out and heap:
        cand = heap.pop(0)
        score, original = np.float32(-cand[0]), np.float32(-cand[0])
        hard = False
        for j in range(len(kept) - 1, cand[2] - 1, -1):
            s = np.float32(sim[cand[1], kept[j]])
            score = np.float32(score * (np.exp(np.float32(scale * s * s)) if s <= threshold else 0.0))
            if sigma <= 0 and s > threshold:
                hard = True
                break
            if score <= score_threshold:
                break
        cand[2] = len(kept)
        if hard:
            continue
        if score == original:
            kept.append(cand[1])
            kept_scores.append(score)
        elif score > score_threshold:
            cand[0] = -float(score)
            heap.append(cand)
            heap.sort()
    return np.asarray(kept, np.int32), np.asarray(kept_scores, np.float32)


def _check_thresholds(max_out, threshold, what):
    if not 0 <= threshold <= 1 and what == "iou_threshold":
        raise InvalidArgumentError(None, None, "iou_threshold must be in [0, 1]")
    if max_out < 0:
        raise InvalidArgumentError(None, None, f"max_output_size must be non-negative, got {max_out}")


def _nms_v5(np_, boxes, scores, max_out, iou, score_threshold, sigma, pad_to_max_output_size):
    max_out, iou, st, sigma = int(max_out), float(iou), float(score_threshold), float(sigma)
    _check_thresholds(max_out, iou, "iou_threshold")
    if sigma < 0:
        raise InvalidArgumentError(None, None, "soft_nms_sigma must be non-negative")
    if boxes.shape[0] != scores.shape[0]:
        raise InvalidArgumentError(None, None, f"NonMaxSuppression: boxes has {boxes.shape[0]} rows but scores "
                                   f"{scores.shape[0]}")
    idx, sc = _greedy(_iou_matrix(boxes), scores, max_out, iou, st, sigma)
    valid = np.int32(len(idx))
    if pad_to_max_output_size:
        idx = np.pad(idx, (0, max_out - len(idx)))
        sc = np.pad(sc, (0, max_out - len(sc)))
    return idx, sc.astype(boxes.dtype), valid


def _nms_overlaps(np_, overlaps, scores, max_out, overlap_threshold, score_threshold):
    max_out = int(max_out)
    _check_thresholds(max_out, 0, "overlap_threshold")
    if overlaps.ndim != 2 or overlaps.shape[0] != overlaps.shape[1] or overlaps.shape[0] != scores.shape[0]:
        raise InvalidArgumentError(None, None, f"NonMaxSuppressionWithOverlaps: overlaps must be [n, n] for {len(scores)} "
                                   f"scores, got {overlaps.shape}")
    return _greedy(overlaps, scores, max_out, float(overlap_threshold), float(score_threshold), 0.0)[0]


def _nms_infer(inputs, attrs):
    boxes, scores = inputs[0], inputs[1]
    if boxes.shape.ndims not in (None, 2) or scores.shape.ndims not in (None, 1):
        raise ValueError(f"NonMaxSuppression: boxes must be [num_boxes, 4] (or overlaps [n, n]) and scores "
                         f"[num_boxes], got {boxes.shape} and {scores.shape}")
    n = None
    if attrs.get("pad_to_max_output_size"):
        c = constant_value(inputs[2])
        n = int(c) if c is not None else None
    if len(inputs) == 5:  # NonMaxSuppressionWithOverlaps
        return TensorShape([None]), dtypes.int32
    return [(TensorShape([n]), dtypes.int32), (TensorShape([n]), boxes.dtype), (TensorShape([]), dtypes.int32)]


def _nms_shapes(sb, ss, max_out, *rest, pad_to_max_output_size):
    n = int(max_out) if pad_to_max_output_size else float("nan")
    return [(n,), (n,), ()]


numpy_op("NonMaxSuppressionV5", _nms_infer, _nms_v5, _nms_shapes, n_out=3, host_inputs=(2,),
         out_dtypes=lambda db, *rest, **attrs: [np.dtype(np.int32), db, np.dtype(np.int32)])
numpy_op("NonMaxSuppressionWithOverlaps", _nms_infer, _nms_overlaps, lambda *s: [(float("nan"),)],
         out_dtypes=lambda *dts: [np.dtype(np.int32)])
not_differentiable("NonMaxSuppressionV5", "NonMaxSuppressionWithOverlaps")


def _nms_inputs(boxes, scores, max_output_size, thresholds):
    boxes = convert_to_tensor(boxes, name="boxes")
    scores = convert_to_tensor(scores, dtype=boxes.dtype, name="scores")
    max_out = convert_to_tensor(max_output_size, dtype=dtypes.int32, name="max_output_size")
    return [boxes, scores, max_out] + [convert_to_tensor(v, dtype=dtypes.float32, name=k) for k, v in thresholds]


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0, name=None):
    """(selected_indices int32, selected_scores): greedy NMS of boxes [n, 4]; with soft_nms_sigma > 0,
    overlapping boxes' scores decay by exp(-iou^2 / (2 sigma)) instead of being dropped (Soft-NMS)."""
    with name_scope(name, "non_max_suppression_with_scores"):
        ins = _nms_inputs(boxes, scores, max_output_size, [("iou_threshold", iou_threshold),
                                                            ("score_threshold", score_threshold),
                                                            ("soft_nms_sigma", soft_nms_sigma)])
        idx, sc, _ = apply_op("NonMaxSuppressionV5", ins, {"pad_to_max_output_size": False},
                              default_name="NonMaxSuppressionV5")
        return idx, sc


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"),
                               pad_to_max_output_size=False, name=None):
    """(selected_indices, valid_outputs): greedy NMS; with pad_to_max_output_size the indices are
    zero-padded to max_output_size and valid_outputs counts the real ones (TF 1.15's signature)."""
    with name_scope(name, "non_max_suppression_padded"):
        ins = _nms_inputs(boxes, scores, max_output_size, [("iou_threshold", iou_threshold),
                                                            ("score_threshold", score_threshold),
                                                            ("soft_nms_sigma", 0.0)])
        idx, _, valid = apply_op("NonMaxSuppressionV5", ins, {"pad_to_max_output_size": bool(pad_to_max_output_size)},
                                 default_name="NonMaxSuppressionV4")
        return idx, valid


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None):
    """int32 indices chosen greedily by score from an [n, n] `overlaps` matrix: a box is dropped when
    its overlap with a kept box is > overlap_threshold."""
    with name_scope(name, "non_max_suppression_overlaps"):
        overlaps = convert_to_tensor(overlaps, name="overlaps")
        ins = _nms_inputs(overlaps, scores, max_output_size, [("overlap_threshold", overlap_threshold),
                                                               ("score_threshold", score_threshold)])
        return apply_op("NonMaxSuppressionWithOverlaps", ins, default_name="NonMaxSuppressionWithOverlaps")


# ---- sample_distorted_bounding_box -------------------------------------------------------------------


def _random_crop_rect(rng, width, height, area_range, aspect_ratio):
    """TF's GenerateRandomCrop: (x, y, w, h) of a crop with that aspect ratio and an area in range, or None."""
    min_area, max_area = area_range[0] * width * height, area_range[1] * width * height
    height_ = int(np.rint(np.sqrt(min_area / aspect_ratio)))
    max_height = int(np.rint(np.sqrt(max_area / aspect_ratio)))
    if np.rint(max_height * aspect_ratio) > width:
        max_height = int((width + 0.5 - 1e-7) / aspect_ratio)
        if np.rint(max_height * aspect_ratio) > width:
            max_height -= 1
    max_height = min(max_height, height)
    height_ = min(height_, max_height)
    if height_ < max_height:
        height_ += int(rng.integers(max_height - height_ + 1))
    w = int(np.rint(height_ * aspect_ratio))
    if w * height_ < min_area:
        height_ += 1
        w = int(np.rint(height_ * aspect_ratio))
    if w * height_ > max_area:
        height_ -= 1
        w = int(np.rint(height_ * aspect_ratio))
    area = w * height_
    if area < min_area or area > max_area or w > width or height_ > height or w <= 0 or height_ <= 0:
        return None
    y = int(rng.integers(height - height_)) if height_ < height else 0
    x = int(rng.integers(width - w)) if w < width else 0
    return x, y, w, height_


def _covers(rect, boxes, min_covered):
    x, y, w, h = rect
    for y0, x0, y1, x1 in boxes:
        area = (y1 - y0) * (x1 - x0)
        inter = max(min(y + h, y1) - max(y, y0), 0) * max(min(x + w, x1) - max(x, x0), 0)
        if area > 0 and inter / area >= min_covered:
            return True
    return False


def _sample_box(np_, image_size, boxes, min_covered, seed, *, aspect_ratio_range, area_range, max_attempts,
                use_image_if_no_bounding_boxes):
    size = np.asarray(image_size).reshape(-1)
    if size.shape[0] != 3:
        raise InvalidArgumentError(None, None, f"image_size must be [height, width, channels], got {size.tolist()}")
    height, width = int(size[0]), int(size[1])
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    if not len(boxes):
        if not use_image_if_no_bounding_boxes:
            raise InvalidArgumentError(None, None, "No bounding boxes provided as input. One must enable "
                                       "use_image_if_no_bounding_boxes=True if you want to sample from the whole image")
        boxes = np.asarray([[0.0, 0.0, 1.0, 1.0]])
    if np.any(boxes < 0) or np.any(boxes > 1):
        raise InvalidArgumentError(None, None, f"All bounding box coordinates must be in [0.0, 1.0], got {boxes.tolist()}")
    pix = boxes * [height, width, height, width]
    rng = np.random.default_rng(int(np.asarray(seed).reshape(-1)[0]) & 0x7FFFFFFF)
    rect = None
    for _ in range(max_attempts):
        ratio = rng.uniform(aspect_ratio_range[0], aspect_ratio_range[1])
        r = _random_crop_rect(rng, width, height, area_range, ratio)
        if r is not None and _covers(r, pix, float(min_covered)):
            rect = r
            break
    x, y, w, h = rect or (0, 0, width, height)
    bbox = np.asarray([[[y / height, x / width, (y + h) / height, (x + w) / width]]], np.float32)
    dt = np.asarray(image_size).dtype
    return np.asarray([y, x, 0], dt), np.asarray([h, w, -1], dt), bbox


def _sample_infer(inputs, attrs):
    size = inputs[0]
    if not size.dtype.is_integer or size.shape.ndims not in (None, 1):
        raise ValueError(f"SampleDistortedBoundingBoxV2: image_size must be a 1-D integer tensor [h, w, c], got "
                         f"{size.dtype.name} {size.shape}")
    if inputs[1].shape.ndims not in (None, 3):
        raise ValueError(f"SampleDistortedBoundingBoxV2: bounding_boxes must be [batch, N, 4], got {inputs[1].shape}")
    return [(TensorShape([3]), size.dtype), (TensorShape([3]), size.dtype), (TensorShape([1, 1, 4]), dtypes.float32)]


numpy_op("SampleDistortedBoundingBoxV2", _sample_infer, _sample_box, lambda *s, **a: [(3,), (3,), (1, 1, 4)], n_out=3,
         out_dtypes=lambda d0, *rest, **attrs: [d0, d0, np.dtype(np.float32)])
not_differentiable("SampleDistortedBoundingBoxV2")


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """(begin, size, bboxes): a random crop of an image of `image_size` [h, w, c] covering at least
    `min_object_covered` of one of `bounding_boxes` [1, N, 4] (normalized), for `tf.slice` (begin
    [y, x, 0], size [h, w, -1]) and drawing ([1, 1, 4]). A fresh draw each run; after
    `max_attempts` failures, the whole image. InvalidArgumentError for boxes outside [0, 1]."""
    with name_scope(name, "sample_distorted_bounding_box", [image_size, bounding_boxes]):
        size = convert_to_tensor(image_size, name="image_size")
        boxes = convert_to_tensor(bounding_boxes, dtype=dtypes.float32, name="bounding_boxes")
        covered = convert_to_tensor(min_object_covered, dtype=dtypes.float32, name="min_object_covered")
        draw = random_uniform([], 0, 2 ** 31 - 1, dtype=dtypes.int64, seed=seed if seed2 is None else (seed, seed2)[0])
        attrs = {"aspect_ratio_range": tuple(float(v) for v in (aspect_ratio_range or (0.75, 1.33))),
                 "area_range": tuple(float(v) for v in (area_range or (0.05, 1.0))),
                 "max_attempts": int(max_attempts or 100),
                 "use_image_if_no_bounding_boxes": bool(use_image_if_no_bounding_boxes)}
        return tuple(apply_op("SampleDistortedBoundingBoxV2", [size, boxes, covered, draw], attrs,
                              default_name="SampleDistortedBoundingBoxV2"))


# ---- extract_glimpse ------------------------------------------------------------------------------


def _glimpse(np_, images, size, offsets, seed, *, centered, normalized, noise):
    n, height, width, depth = images.shape
    gh, gw = (int(v) for v in np.asarray(size).reshape(-1))
    offsets = np.asarray(offsets, np.float32).reshape(-1, 2)
    if offsets.shape[0] != n:
        raise InvalidArgumentError(None, None, f"ExtractGlimpse: {n} images but {offsets.shape[0]} offsets")
    if gh <= 0 or gw <= 0:
        raise InvalidArgumentError(None, None, f"ExtractGlimpse: size must be positive, got {[gh, gw]}")
    rng = np.random.default_rng(int(np.asarray(seed).reshape(-1)[0]) & 0x7FFFFFFF)
    out = np.zeros((n, gh, gw, depth), np.float32)
    for b in range(n):
        y, x = np.float32(offsets[b, 0]), np.float32(offsets[b, 1])
        if normalized:
            y, x = y * np.float32(height), x * np.float32(width)
        if centered:
            y, x = y / np.float32(2) + np.float32(height) / 2, x / np.float32(2) + np.float32(width) / 2
        y, x = int(y - np.float32(gh) / 2), int(x - np.float32(gw) / 2)  # truncated, as TF's (Index) cast
        img = images[b].astype(np.float32)
        if noise == "uniform":
            lo, hi = img.min(axis=(0, 1)), img.max(axis=(0, 1))
            out[b] = lo + (hi - lo) * rng.random((gh, gw, depth), np.float32)
        elif noise == "gaussian":
            out[b] = img.mean(axis=(0, 1)) + img.std(axis=(0, 1)) * rng.standard_normal((gh, gw, depth), np.float32)
        y0, y1, x0, x1 = max(y, 0), min(y + gh, height), max(x, 0), min(x + gw, width)
        if y0 < y1 and x0 < x1:
            out[b, y0 - y:y1 - y, x0 - x:x1 - x] = img[y0:y1, x0:x1]
    return out


def _glimpse_infer(inputs, attrs):
    x, size, offsets = inputs[:3]
    if x.dtype != dtypes.float32 or x.shape.ndims not in (None, 4):
        raise ValueError(f"ExtractGlimpse: input must be a 4-D float32 tensor [batch, h, w, c], got {x.dtype.name} "
                         f"{x.shape}")
    if offsets.shape.ndims not in (None, 2):
        raise ValueError(f"ExtractGlimpse: offsets must be [batch, 2], got {offsets.shape}")
    c = constant_value(size)
    gh, gw = (None, None) if c is None else (int(v) for v in np.asarray(c).reshape(-1))
    return TensorShape([x.shape[0].value if x.shape.ndims else None, gh, gw,
                        x.shape[3].value if x.shape.ndims else None]), dtypes.float32


numpy_op("ExtractGlimpse", _glimpse_infer, _glimpse,
         lambda si, size, so, ss, **a: [(si[0], int(size[0]), int(size[1]), si[3])], host_inputs=(1,))
not_differentiable("ExtractGlimpse")


def extract_glimpse(input, size, offsets, centered=True, normalized=True, uniform_noise=True, name=None,  # noqa: A002
                    noise=None):
    """Glimpses [batch, gh, gw, c] of float32 images [batch, h, w, c] at `offsets` [batch, 2] of
    (y, x), TF1's ExtractGlimpse coordinates (centred: in [-1, 1] with (0, 0) the image centre;
    normalized: times the image size; the glimpse is centred on the point). Pixels outside the
    image are noise, uniform in each channel's [min, max] (or gaussian with its mean and deviation,
    uniform_noise=False; noise="zero" for zeros), drawn each run."""
    noise = noise or ("uniform" if uniform_noise else "gaussian")
    if noise not in ("uniform", "gaussian", "zero"):
        raise ValueError(f"extract_glimpse: noise must be 'uniform', 'gaussian' or 'zero', got {noise!r}")
    with name_scope(name, "ExtractGlimpse", [input, size, offsets]):
        x = convert_to_tensor(input, name="input")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        offsets = convert_to_tensor(offsets, dtype=dtypes.float32, name="offsets")
        draw = random_uniform([], 0, 2 ** 31 - 1, dtype=dtypes.int64)
        return apply_op("ExtractGlimpse", [x, size, offsets, draw],
                        {"centered": bool(centered), "normalized": bool(normalized), "noise": noise},
                        default_name="ExtractGlimpse")


# ---- combined_non_max_suppression ---------------------------------------------------------------------


def _combined_nms(np_, boxes, scores, max_per_class, max_total, iou, score_threshold, *, pad_per_class, clip_boxes):
    boxes, scores = np.asarray(boxes, np.float32), np.asarray(scores, np.float32)
    max_per_class, max_total, iou = int(max_per_class), int(max_total), float(iou)
    _check_thresholds(max_per_class, iou, "iou_threshold")
    if boxes.ndim != 4 or boxes.shape[3] != 4 or scores.ndim != 3 or boxes.shape[:2] != scores.shape[:2] or \
            boxes.shape[2] not in (1, scores.shape[2]):
        raise InvalidArgumentError(None, None, f"CombinedNonMaxSuppression: boxes must be [batch, num_boxes, q, 4] "
                                   f"with q 1 or num_classes, scores [batch, num_boxes, num_classes]; got "
                                   f"{list(boxes.shape)} and {list(scores.shape)}")
    batch, _, q, _ = boxes.shape
    classes = scores.shape[2]
    total = min(max_total, max_per_class * classes) if pad_per_class else max_total
    out_boxes = np.zeros((batch, total, 4), np.float32)
    out_scores = np.zeros((batch, total), np.float32)
    out_classes = np.zeros((batch, total), np.float32)
    valid = np.zeros(batch, np.int32)
    for b in range(batch):
        found = []
        for c in range(classes):
            cb = boxes[b, :, 0 if q == 1 else c]
            idx, sc = _greedy(_iou_matrix(cb), scores[b, :, c], max_per_class, iou, float(score_threshold), 0.0)
            found += [(float(s), c, cb[i]) for i, s in zip(idx, sc)]
        found.sort(key=lambda t: -t[0])  # stable: ties keep class order, then box order
        found = found[:total]
        valid[b] = len(found)
        for k, (s, c, box) in enumerate(found):
            out_boxes[b, k] = np.clip(box, 0, 1) if clip_boxes else box
            out_scores[b, k], out_classes[b, k] = s, c
    return out_boxes, out_scores, out_classes, valid


def _combined_infer(inputs, attrs):
    boxes, scores = inputs[0], inputs[1]
    if boxes.shape.ndims not in (None, 4) or scores.shape.ndims not in (None, 3):
        raise ValueError(f"combined_non_max_suppression: boxes must be 4-D and scores 3-D, got {boxes.shape} and "
                         f"{scores.shape}")
    n = boxes.shape[0].value if boxes.shape.ndims else None
    c, k = constant_value(inputs[3]), constant_value(inputs[2])
    total = None if c is None else int(c)
    classes = scores.shape[2].value if scores.shape.ndims else None
    if attrs["pad_per_class"] and total is not None:
        total = None if k is None or classes is None else min(total, int(k) * classes)
    return [(TensorShape([n, total, 4]), dtypes.float32), (TensorShape([n, total]), dtypes.float32),
            (TensorShape([n, total]), dtypes.float32), (TensorShape([n]), dtypes.int32)]


def _combined_shapes(sb, ss, per_class, total, *rest, pad_per_class, clip_boxes):
    t = min(int(total), int(per_class) * ss[2]) if pad_per_class else int(total)
    return [(sb[0], t, 4), (sb[0], t), (sb[0], t), (sb[0],)]


numpy_op("CombinedNonMaxSuppression", _combined_infer, _combined_nms, _combined_shapes, n_out=4, host_inputs=(2, 3),
         out_dtypes=lambda *dts, **a: [np.dtype(np.float32)] * 3 + [np.dtype(np.int32)])
not_differentiable("CombinedNonMaxSuppression")


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size, iou_threshold=0.5,
                                 score_threshold=float("-inf"), pad_per_class=False, clip_boxes=True, name=None):
    """Greedy NMS per batch entry and class, then the best `max_total_size` of all classes:
    (nmsed_boxes [batch, total, 4], nmsed_scores, nmsed_classes [batch, total], valid_detections
    [batch]), zero-padded. boxes [batch, n, q, 4] (q = 1: shared by the classes), scores
    [batch, n, num_classes]; clip_boxes clips the coordinates to [0, 1]."""
    with name_scope(name, "combined_non_max_suppression"):
        boxes = convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes")
        scores = convert_to_tensor(scores, dtype=dtypes.float32, name="scores")
        ins = [boxes, scores, convert_to_tensor(max_output_size_per_class, dtype=dtypes.int32,
                                                name="max_output_size_per_class"),
               convert_to_tensor(max_total_size, dtype=dtypes.int32, name="max_total_size"),
               convert_to_tensor(iou_threshold, dtype=dtypes.float32, name="iou_threshold"),
               convert_to_tensor(score_threshold, dtype=dtypes.float32, name="score_threshold")]
        return tuple(apply_op("CombinedNonMaxSuppression", ins,
                              {"pad_per_class": bool(pad_per_class), "clip_boxes": bool(clip_boxes)},
                              default_name="CombinedNonMaxSuppression"))
