"""Image files as tensors (TF1's `tf.image.decode_png/decode_jpeg/decode_image`, `encode_png`,
`encode_jpeg`, also under `tf.io`), with Pillow.

A decode takes a scalar string of file bytes and gives [height, width, channels] (`channels` 0:
the file's own; 1, 3 or 4 convert: grayscale with ITU-R 601 weights, as libpng's); decode_png
with dtype=uint16 scales 8-bit values by 257, as TF. PNG round-trips are exact; JPEG decodes
come from Pillow's libjpeg and may differ from TF's by a level or two in some pixels. A file that
is not an image is InvalidArgumentError with TF1's message. Each op runs on the host in one task.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape
from .common import STRING, apply_op, check_dtype, convert_to_tensor
from .math_ops import equal
from .string_ops import _host
from .text_ops import substr
from .whole_task import lower_whole

__all__ = ["decode_png", "decode_jpeg", "decode_image", "encode_png", "encode_jpeg"]
# also decode_gif, decode_bmp, is_jpeg, extract_jpeg_shape, decode_and_crop_jpeg, adjust_jpeg_quality_op:
# tf.image / tf.io names only (image.py, io/__init__.py)

_UNKNOWN = "Unknown image file format. One of JPEG, PNG, GIF, BMP required."
_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


def _bytes(x):
    return np.asarray(_host(x), dtype=object).item()


def _open(data):
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except Exception:  # noqa: BLE001 - Pillow raises several kinds for a file that is not an image
        raise InvalidArgumentError(None, None, _UNKNOWN) from None
    return img


def _pixels(img, channels):
    if channels:
        mode = _MODES[channels]
        if img.mode != mode:
            img = img.convert(mode)
    elif img.mode not in ("L", "RGB", "RGBA", "I;16", "I;16B"):
        img = img.convert("RGBA" if "A" in img.mode or "transparency" in img.info else "RGB")
    arr = np.asarray(img)
    return arr[:, :, None] if arr.ndim == 2 else arr


def _decode_infer_of(op):
    def infer(inputs, attrs):
        check_dtype(inputs[0], STRING, op, arg="contents")
        if inputs[0].shape.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {inputs[0].shape.ndims} for '{op}'")
        if attrs["channels"] not in (0, 1, 3, 4):
            raise ValueError(f"{op}: channels must be 0, 1, 3 or 4, got {attrs['channels']}")
        c = attrs["channels"] or None
        return (TensorShape(None) if op == "DecodeImage" else TensorShape([None, None, c])), attrs["dtype"]

    return infer


def _decode_eager_of(op):
    def eager(xp, contents, channels, dtype):
        return _decode_eager(xp, contents, op, channels, dtype)

    return eager


def _decode_eager(xp, contents, op, channels, dtype):
    img = _open(_bytes(contents))
    if op == "DecodeImage" and getattr(img, "n_frames", 1) > 1:  # an animated GIF: [frames, h, w, 3]
        frames = []
        for k in range(img.n_frames):
            img.seek(k)
            frames.append(_pixels(img, channels or 3))
        return _convert(np.stack(frames), dtype)
    return _convert(_pixels(img, channels), dtype)


def _convert(arr, dtype):
    if dtype == dtypes.uint8:
        return arr.astype(np.uint8) if arr.dtype != np.uint8 else arr
    if dtype == dtypes.uint16:
        return arr.astype(np.uint16) * 257 if arr.dtype == np.uint8 else arr.astype(np.uint16)
    return (arr.astype(np.float32) / (255.0 if arr.dtype == np.uint8 else 65535.0)).astype(dtype.np_dtype)


for _op in ("DecodePng", "DecodeJpeg", "DecodeImage"):
    register_op(_op, _decode_infer_of(_op), eager=_decode_eager_of(_op), lower=lower_whole(_decode_eager_of(_op)))


def _encode_infer(inputs, attrs):
    x, op = inputs[0], "Encode" + attrs["format"].title()
    if x.dtype not in (dtypes.uint8, dtypes.uint16) or (attrs["format"] == "JPEG" and x.dtype != dtypes.uint8):
        raise TypeError(f"{op}: image must be uint8{' or uint16' * (attrs['format'] == 'PNG')}, got {x.dtype.name}")
    if x.shape.ndims not in (None, 3):
        raise ValueError(f"Shape must be rank 3 but is rank {x.shape.ndims} for '{op}'")
    return TensorShape([]), dtypes.string


def _encode_eager(xp, image, format, quality, compression):  # noqa: A002
    arr = np.asarray(_host(image))
    if arr.ndim != 3 or arr.shape[2] not in (1, 3, 4) or (format == "JPEG" and arr.shape[2] == 4):
        raise InvalidArgumentError(None, None, f"image must be 3-dimensional with 1, 3{' or 4' * (format == 'PNG')} "
                                   f"channels, got shape {list(arr.shape)}")
    if arr.dtype == np.uint16 and arr.shape[2] != 1:
        raise InvalidArgumentError(None, None, "EncodePng: uint16 images with more than one channel are not "
                                   "encoded by dflow")
    img = Image.fromarray(np.ascontiguousarray(arr[:, :, 0] if arr.shape[2] == 1 else arr))  # L, I;16, RGB, RGBA
    buf = io.BytesIO()
    if format == "PNG":
        img.save(buf, "PNG", compress_level=6 if compression < 0 else int(compression))
    else:
        img.save(buf, "JPEG", quality=int(quality))
    out = np.empty((), dtype=object)
    out[()] = buf.getvalue()
    return out


register_op("EncodePng", _encode_infer, eager=_encode_eager, lower=lower_whole(_encode_eager))
register_op("EncodeJpeg", _encode_infer, eager=_encode_eager, lower=lower_whole(_encode_eager))
not_differentiable("DecodePng", "DecodeJpeg", "DecodeImage", "EncodePng", "EncodeJpeg")


def _decode(op, contents, channels, dtype, name, default_name):
    x = convert_to_tensor(contents, dtype=None if hasattr(contents, "dtype") else dtypes.string, name="contents")
    return apply_op(op, [x], {"channels": int(channels or 0), "dtype": dtypes.as_dtype(dtype)}, name=name,
                    default_name=default_name)


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """A PNG file's pixels, [height, width, channels] uint8 (or uint16)."""
    return _decode("DecodePng", contents, channels, dtype, name, "DecodePng")


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """A JPEG file's pixels, [height, width, channels] uint8 (Pillow's decoder; `ratio` 1 only)."""
    if ratio != 1:
        raise ValueError("decode_jpeg: ratio other than 1 is not available in dflow")
    return _decode("DecodeJpeg", contents, channels, dtypes.uint8, name, "DecodeJpeg")


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None, expand_animations=True):
    """Any of PNG, JPEG, GIF, BMP: [height, width, channels] ([frames, height, width, 3] for an
    animated GIF), of unknown static rank; float dtypes are scaled to [0, 1]."""
    return _decode("DecodeImage", contents, channels, dtype, name, "decode_image")


def encode_png(image, compression=-1, name=None):
    """A [height, width, channels] uint8 image (1, 3 or 4 channels; one-channel uint16) as PNG bytes."""
    return apply_op("EncodePng", [convert_to_tensor(image)], {"format": "PNG", "quality": 0,
                                                                "compression": int(compression)},
                    name=name, default_name="EncodePng")


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False, chroma_downsampling=True,  # noqa: A002
                density_unit="in", x_density=300, y_density=300, xmp_metadata="", name=None):
    """A [height, width, channels] uint8 image (1 or 3 channels) as JPEG bytes of `quality`."""
    return apply_op("EncodeJpeg", [convert_to_tensor(image)], {"format": "JPEG", "quality": int(quality),
                                                                "compression": -1},
                    name=name, default_name="EncodeJpeg")


# ---- GIF and BMP, JPEG shapes and crops, JPEG re-encoding (issue 28) -----------------------------------


def _decode_format(data, fmt, op):
    img = _open(data)
    if img.format != fmt:
        raise InvalidArgumentError(None, None, f"{op}: expected a {fmt} file, got "
                                   f"{img.format or 'an unknown format'} ({_UNKNOWN})")
    return img


def _decode_gif(xp, contents):
    img = _decode_format(_bytes(contents), "GIF", "DecodeGif")
    frames = []
    for k in range(getattr(img, "n_frames", 1)):
        img.seek(k)
        frames.append(_pixels(img, 3))
    return np.stack(frames).astype(np.uint8)


def _decode_webp(xp, contents, channels, dtype):
    img = _decode_format(_bytes(contents), "WEBP", "DecodeWebP")
    frames = []
    for k in range(getattr(img, "n_frames", 1)):
        img.seek(k)
        frames.append(_pixels(img, channels or (4 if "A" in img.mode else 3)))
    return _convert(np.stack(frames), dtype)


def _decode_bmp(xp, contents, channels):
    return _pixels(_decode_format(_bytes(contents), "BMP", "DecodeBmp"), channels).astype(np.uint8)


def _jpeg(data, op):
    return _decode_format(data, "JPEG", op)


def _extract_jpeg_shape(xp, contents, output_type):
    img = _jpeg(_bytes(contents), "ExtractJpegShape")
    return np.asarray([img.height, img.width, len(img.getbands())], output_type.np_dtype)


def _decode_and_crop_jpeg(xp, contents, window, channels):
    arr = _pixels(_jpeg(_bytes(contents), "DecodeAndCropJpeg"), channels)
    y, x, h, w = (int(v) for v in np.asarray(window).reshape(-1))
    if min(y, x) < 0 or h <= 0 or w <= 0 or y + h > arr.shape[0] or x + w > arr.shape[1]:
        raise InvalidArgumentError(None, None, f"DecodeAndCropJpeg: crop window [{y}, {x}, {h}, {w}] is not inside "
                                   f"the image of {arr.shape[0]}x{arr.shape[1]}")
    return np.ascontiguousarray(arr[y:y + h, x:x + w]).astype(np.uint8)


def _adjust_jpeg_quality(xp, image, quality):
    q = int(np.asarray(quality))
    if not 0 <= q <= 100:
        raise InvalidArgumentError(None, None, f"AdjustJpegQuality: quality must be in [0, 100], got {q}")
    data = _encode_eager(xp, image, "JPEG", q, -1)[()]
    return _pixels(_open(data), int(np.shape(image)[-1]))


def _scalar_string_infer(op, out_shape, out_dtype):
    def infer(inputs, attrs):
        check_dtype(inputs[0], STRING, op, arg="contents")
        if inputs[0].shape.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {inputs[0].shape.ndims} for '{op}'")
        return out_shape(attrs), out_dtype(attrs)

    return infer


def _adjust_quality_infer(inputs, attrs):
    x = inputs[0]
    if x.dtype != dtypes.uint8 or x.shape.ndims not in (None, 3):
        raise ValueError(f"AdjustJpegQuality: image must be a 3-D uint8 tensor, got {x.dtype.name} {x.shape}")
    return TensorShape(x.shape), dtypes.uint8


for _op, _infer, _eager in [
    ("DecodeGif", _scalar_string_infer("DecodeGif", lambda a: TensorShape([None, None, None, 3]),
                                       lambda a: dtypes.uint8), _decode_gif),
    ("DecodeBmp", _scalar_string_infer("DecodeBmp", lambda a: TensorShape([None, None, a["channels"] or None]),
                                       lambda a: dtypes.uint8), _decode_bmp),
    ("DecodeWebP", _scalar_string_infer("DecodeWebP", lambda a: TensorShape([None, None, None, a["channels"] or None]),
                                        lambda a: a["dtype"]), _decode_webp),
    ("ExtractJpegShape", _scalar_string_infer("ExtractJpegShape", lambda a: TensorShape([3]),
                                              lambda a: a["output_type"]), _extract_jpeg_shape),
    ("DecodeAndCropJpeg", _scalar_string_infer("DecodeAndCropJpeg",
                                               lambda a: TensorShape([None, None, a["channels"] or None]),
                                               lambda a: dtypes.uint8), _decode_and_crop_jpeg),
    ("AdjustJpegQuality", _adjust_quality_infer, _adjust_jpeg_quality),
]:
    register_op(_op, _infer, eager=_eager, lower=lower_whole(_eager))
not_differentiable("DecodeWebP", "DecodeGif", "DecodeBmp", "ExtractJpegShape", "DecodeAndCropJpeg", "AdjustJpegQuality")


def _contents(contents):
    return convert_to_tensor(contents, dtype=None if hasattr(contents, "dtype") else dtypes.string, name="contents")


def decode_gif(contents, name=None):
    """A GIF file's frames, [num_frames, height, width, 3] uint8. InvalidArgumentError for another format."""
    return apply_op("DecodeGif", [_contents(contents)], name=name, default_name="DecodeGif")


def decode_webp(contents, channels=0, dtype=dtypes.uint8, name=None):
    """A WebP file's frames, [num_frames, height, width, channels] (channels 0: 3, or 4 with alpha; 3 or
    4 convert); float dtypes scaled to [0, 1]. InvalidArgumentError for another format."""
    if channels not in (0, 3, 4):
        raise ValueError(f"decode_webp: channels must be 0, 3 or 4, got {channels}")
    return apply_op("DecodeWebP", [_contents(contents)], {"channels": int(channels), "dtype": dtypes.as_dtype(dtype)},
                    name=name, default_name="DecodeWebP")


def decode_bmp(contents, channels=0, name=None):
    """A BMP file's pixels, [height, width, channels] uint8 (channels 0: the file's; 3 or 4 convert)."""
    if channels not in (0, 3, 4):
        raise ValueError(f"decode_bmp: channels must be 0, 3 or 4, got {channels}")
    return apply_op("DecodeBmp", [_contents(contents)], {"channels": int(channels)}, name=name,
                    default_name="DecodeBmp")


def extract_jpeg_shape(contents, output_type=dtypes.int32, name=None):
    """[height, width, channels] of a JPEG file, read from its header without decoding the pixels."""
    return apply_op("ExtractJpegShape", [_contents(contents)], {"output_type": dtypes.as_dtype(output_type)},
                    name=name, default_name="ExtractJpegShape")


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """The `crop_window` [y, x, height, width] of a JPEG file's pixels, uint8. InvalidArgumentError for a
    window outside the image."""
    if ratio != 1:
        raise ValueError("decode_and_crop_jpeg: ratio other than 1 is not available in dflow")
    window = convert_to_tensor(crop_window, dtype=dtypes.int32, name="crop_window")
    return apply_op("DecodeAndCropJpeg", [_contents(contents), window], {"channels": int(channels or 0)}, name=name,
                    default_name="DecodeAndCropJpeg")


def adjust_jpeg_quality_op(image, quality, name=None):
    """The AdjustJpegQuality op: a [h, w, c] uint8 image encoded as JPEG of `quality` (a scalar
    tensor in [0, 100]) and decoded again."""
    q = convert_to_tensor(quality, dtype=dtypes.int32, name="jpeg_quality")
    return apply_op("AdjustJpegQuality", [image, q], name=name, default_name="AdjustJpegQuality")


def is_jpeg(contents, name=None):
    """Whether each string starts with a JPEG header (the bytes FF D8 FF): bool, contents' shape."""
    with name_scope(name, "is_jpeg", [contents]):
        return equal(substr(_contents(contents), 0, 3), b"\xff\xd8\xff")
