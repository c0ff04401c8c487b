"""`tf.summary.image` and `tf.summary.audio`: the `ImageSummary` and `AudioSummaryV2` ops.

Images are PNG-encoded by Pillow (a dependency of the `tensorboard` package), audio is 16-bit
PCM WAV written by Python's `wave` module. Only the first `max_outputs` batch entries are
encoded; on Dask the op slices them off first, so one task receives those entries only.

Float images are scaled one image at a time as TF1's `NormalizeFloatImage`: over the pixels
whose channels are all finite, if the smallest value is >= 0 they are scaled by 255 / max, else
by 127 / max(|min|, |max|) and shifted by 128 (a maximum below 1e-6 scales by 0), then truncated
to uint8; a pixel with a non-finite channel gets `bad_color` (red). uint8 images pass unchanged.
Audio samples are clipped to [-1, 1] and written as round(x * 32768) clamped to int16, as TF's
`EncodeAudioAsS16LEWav`.
"""

from __future__ import annotations

import functools
import io
import wave

import numpy as np
from tensorboard.compat.proto import summary_pb2

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.evaluate import OpTask
from ..graph.keys import GraphKeys
from ..graph.registry import not_differentiable, register_op
from ..kernels.common import apply_op, check_dtype, constant, convert_to_tensor
from .common import (
    collect,
    gather,
    host,
    scalar_string_infer,
    serialized,
    summary_of,
    summary_scope,
    tag_text,
)

__all__ = ["image", "audio"]

_BAD_COLOR = np.array([255, 0, 0, 255], dtype=np.uint8)

# ---- images ------------------------------------------------------------------------------------------


def _normalize(img, bad_color):
    """One float image [h, w, d] as uint8, TF1's NormalizeFloatImage."""
    h, w, d = img.shape
    compute = np.float64 if img.dtype == np.float64 else np.float32
    flat = img.reshape(-1, d).astype(compute, copy=False)
    finite = np.isfinite(flat).all(axis=1)
    good = flat[finite]
    lo = float(good.min()) if good.size else np.inf
    hi = float(good.max()) if good.size else -np.inf
    if lo < 0:
        max_val = max(abs(lo), abs(hi))
        scale, offset = (0.0 if max_val < 1e-6 else 127.0 / max_val), 128.0
    else:
        scale, offset = (0.0 if hi < 1e-6 else 255.0 / hi), 0.0
    out = np.empty((flat.shape[0], d), dtype=np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        out[finite] = (good * compute(scale) + compute(offset)).astype(np.uint8)
    out[~finite] = bad_color[:d]
    return out.reshape(h, w, d)


def _png(img):
    from PIL import Image  # Pillow: a dependency of tensorboard

    arr = img[:, :, 0] if img.shape[2] == 1 else img
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(arr)).save(buf, "PNG")  # uint8 [h, w] / [h, w, 3|4]: L, RGB, RGBA
    return buf.getvalue()


def _image_eager(xp, tag, tensor, max_images):
    tag, x = tag_text(tag), host(tensor)
    if x.ndim != 4 or x.shape[3] not in (1, 3, 4):
        raise InvalidArgumentError(None, None, f"ImageSummary (tag {tag!r}): Tensor must be 4-D with last dim 1, 3, "
                                   f"or 4, not [{','.join(str(d) for d in x.shape)}]")
    values = []
    for i in range(min(max_images, x.shape[0])):
        img = x[i] if x.dtype == np.uint8 else _normalize(x[i], _BAD_COLOR)
        encoded = _png(img) if img.size else b""
        values.append(summary_pb2.Summary.Value(
            tag=f"{tag}/image/{i}" if max_images > 1 else f"{tag}/image",
            image=summary_pb2.Summary.Image(height=x.shape[1], width=x.shape[2], colorspace=x.shape[3],
                                            encoded_image_string=encoded)))
    return serialized(summary_of(values))


def _image_infer(inputs, attrs):
    if inputs[1].dtype not in (dtypes.uint8, dtypes.float32, dtypes.float16, dtypes.float64):
        raise TypeError(f"Value passed to parameter 'tensor' has DataType {inputs[1].dtype.name} not in list of "
                        f"allowed values: uint8, float32, float16, float64 (op 'ImageSummary', tensor "
                        f"{inputs[1].name!r})")
    if attrs["max_images"] < 1:
        raise ValueError(f"ImageSummary: max_images must be >= 1, got {attrs['max_images']}")
    return scalar_string_infer("ImageSummary", (0,))(inputs, attrs)


def _first(ctx, x, n):
    """The first `n` entries of a batch (all of an array of rank 0, which the kernel refuses)."""
    x = ctx.as_dask(x)
    return x[:n] if x.ndim else x


def _image_lower(ctx, tag, tensor, max_images):
    task = OpTask(functools.partial(_image_eager, np, max_images=max_images), ctx.op.type, ctx.op.name)
    return gather(ctx, task, tag, _first(ctx, tensor, max_images))


register_op("ImageSummary", _image_infer, eager=_image_eager, lower=_image_lower)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """Up to `max_outputs` images of a [batch, height, width, channels] tensor (channels 1, 3 or 4;
    uint8 or float) as PNG (TF1's `tf.summary.image`). Tags are `name/image/i`, or `name/image`
    when `max_outputs` is 1."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tensor = convert_to_tensor(tensor, name="tensor")
        val = apply_op("ImageSummary", [constant(tag, name="tag"), tensor], {"max_images": int(max_outputs)},
                       name=scope)
        collect(val, collections, [GraphKeys.SUMMARIES])
    return val


# ---- audio -------------------------------------------------------------------------------------------


def _wav(samples, sample_rate):
    """16-bit PCM WAV of float samples [frames, channels]."""
    scaled = np.clip(samples.astype(np.float32), -1.0, 1.0) * np.float32(32768.0)
    pcm = np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5)), -32768, 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(samples.shape[1])
        w.setsampwidth(2)
        w.setframerate(int(sample_rate))
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


def _audio_eager(xp, tag, tensor, sample_rate, max_outputs):
    tag, x, rate = tag_text(tag), host(tensor), float(host(sample_rate).reshape(-1)[0])
    if rate <= 0:
        raise InvalidArgumentError(None, None, f"AudioSummaryV2 (tag {tag!r}): sample_rate must be > 0, got {rate}")
    if x.ndim not in (2, 3):
        raise InvalidArgumentError(None, None, f"AudioSummaryV2 (tag {tag!r}): Tensor must be 3-D or 2-D, got: "
                                   f"[{','.join(str(d) for d in x.shape)}]")
    if x.ndim == 2:
        x = x[:, :, None]
    values = []
    for i in range(min(max_outputs, x.shape[0])):
        values.append(summary_pb2.Summary.Value(
            tag=f"{tag}/audio/{i}" if max_outputs > 1 else f"{tag}/audio",
            audio=summary_pb2.Summary.Audio(sample_rate=rate, num_channels=x.shape[2], length_frames=x.shape[1],
                                            encoded_audio_string=_wav(x[i], rate), content_type="audio/wav")))
    return serialized(summary_of(values))


def _audio_infer(inputs, attrs):
    check_dtype(inputs[1], "f", "AudioSummaryV2", arg="tensor")
    if inputs[1].dtype != dtypes.float32:
        raise TypeError(f"AudioSummaryV2: tensor must be float32, got {inputs[1].dtype.name} ({inputs[1].name!r})")
    if inputs[2].dtype != dtypes.float32 or inputs[2].shape.ndims not in (None, 0):
        raise TypeError(f"AudioSummaryV2: sample_rate must be a float32 scalar, got {inputs[2].dtype.name} "
                        f"{inputs[2].shape}")
    if attrs["max_outputs"] < 1:
        raise ValueError(f"AudioSummaryV2: max_outputs must be >= 1, got {attrs['max_outputs']}")
    return scalar_string_infer("AudioSummaryV2", (0,))(inputs, attrs)


def _audio_lower(ctx, tag, tensor, sample_rate, max_outputs):
    task = OpTask(functools.partial(_audio_eager, np, max_outputs=max_outputs), ctx.op.type, ctx.op.name)
    return gather(ctx, task, tag, _first(ctx, tensor, max_outputs), sample_rate)


register_op("AudioSummaryV2", _audio_infer, eager=_audio_eager, lower=_audio_lower)
not_differentiable("ImageSummary", "AudioSummaryV2")


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """Up to `max_outputs` clips of a float32 [batch, frames] or [batch, frames, channels] tensor
    of samples in [-1, 1], as 16-bit WAV at `sample_rate` Hz (TF1's `tf.summary.audio`). Tags are
    `name/audio/i`, or `name/audio` when `max_outputs` is 1."""
    with summary_scope(name, family=family, values=[tensor]) as (tag, scope):
        tensor = convert_to_tensor(tensor, dtype=dtypes.float32, name="tensor")
        rate = convert_to_tensor(sample_rate, dtype=dtypes.float32, name="sample_rate")
        val = apply_op("AudioSummaryV2", [constant(tag, name="tag"), tensor, rate], {"max_outputs": int(max_outputs)},
                       name=scope)
        collect(val, collections, [GraphKeys.SUMMARIES])
    return val
