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
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape
from .common import STRING, apply_op, check_dtype, convert_to_tensor
from .string_ops import _host
from .whole_task import lower_whole

__all__ = ["decode_png", "decode_jpeg", "decode_image", "encode_png", "encode_jpeg"]

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
