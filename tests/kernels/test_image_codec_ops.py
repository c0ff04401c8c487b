"""decode_png / decode_jpeg / decode_image / encode_png / encode_jpeg (tf.image.*, tf.io.*).
PNG figures are TF 2.21's (`tensorflow.compat.v1`) on the same pixels: the grayscale conversion,
the 16-bit scaling and the error message; JPEG round trips are compared within a tolerance
(Pillow's libjpeg, not TF's)."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

IMG = (np.arange(18, dtype=np.uint8).reshape(2, 3, 3) * 10)


def test_png_round_trip_and_channels():
    png = run_modes(tf.image.encode_png(IMG))
    assert png.startswith(b"\x89PNG")
    p = tf.placeholder(tf.string, [])
    decoded = tf.image.decode_png(p)
    assert decoded.shape.as_list() == [None, None, None] and decoded.op.type == "DecodePng"
    np.testing.assert_array_equal(run_modes(decoded, {p: png}), IMG)
    gray = run_modes(tf.image.decode_png(png, channels=1))
    assert gray.shape == (2, 3, 1) and gray.ravel().tolist() == [8, 38, 68, 98, 128, 158]  # TF's
    assert run_modes(tf.image.decode_png(png, channels=4))[0, 0].tolist() == [0, 10, 20, 255]
    assert run_modes(tf.io.decode_png(png, dtype=tf.uint16))[0, 1].tolist() == [7710, 10280, 12850]
    any_image = tf.image.decode_image(png)
    assert any_image.shape.ndims is None
    np.testing.assert_array_equal(run_modes(any_image), IMG)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
        run_modes(tf.image.decode_png(b"garbage"))


def test_jpeg_round_trip_is_close():
    smooth = np.broadcast_to(np.linspace(0, 250, 16, dtype=np.uint8)[None, :, None], (16, 16, 3)).copy()
    jpg = run_modes(tf.image.encode_jpeg(smooth, quality=95))
    assert jpg[:2] == b"\xff\xd8"
    back = run_modes(tf.image.decode_jpeg(jpg))
    assert back.shape == (16, 16, 3) and np.abs(back.astype(int) - smooth).max() <= 8
    assert run_modes(tf.image.decode_jpeg(jpg, channels=1)).shape == (16, 16, 1)


def test_decode_in_a_dataset(tmp_path):
    for k in range(2):
        (tmp_path / f"{k}.png").write_bytes(run_modes(tf.image.encode_png(IMG + k), modes=["eager"]))
    ds = tf.data.Dataset.list_files(str(tmp_path / "*.png"), shuffle=False).map(
        lambda f: tf.image.convert_image_dtype(tf.image.decode_png(tf.read_file(f), channels=3), tf.float32))
    x = ds.batch(2).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        out = sess.run(x)
    np.testing.assert_allclose(out, np.stack([IMG, IMG + 1]) / 255.0, rtol=1e-6)


# ---- GIF, BMP, JPEG sniffing, shapes and crops, JPEG quality, resize with pad (issue 28) -------------


def _pillow(arr, fmt, **kw):
    import io

    from PIL import Image
    buf = io.BytesIO()
    if fmt == "GIF" and arr.ndim == 4:
        frames = [Image.fromarray(a) for a in arr]
        frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:])
    else:
        Image.fromarray(arr).save(buf, fmt, **kw)
    return buf.getvalue()


SMOOTH = np.stack(np.broadcast_arrays(np.arange(16)[:, None] * 12, np.arange(20)[None, :] * 10,
                                      np.arange(16)[:, None] + np.arange(20)[None, :] * 5), -1).astype(np.uint8)


def test_gif_and_bmp():
    frames = np.zeros((3, 4, 5, 3), np.uint8)
    for k in range(3):
        frames[k, k, :] = [255, 0, 0]  # a palette a GIF keeps exactly
    out = run_modes(tf.image.decode_gif(_pillow(frames, "GIF")))
    np.testing.assert_array_equal(out, frames)
    bmp = _pillow(SMOOTH, "BMP")
    np.testing.assert_array_equal(run_modes(tf.io.decode_bmp(bmp)), SMOOTH)
    assert run_modes(tf.image.decode_bmp(bmp, channels=4)).shape == (16, 20, 4)
    assert tf.image.decode_gif(b"").shape.as_list() == [None, None, None, 3]
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected a GIF file, got BMP"):
        run_modes(tf.image.decode_gif(bmp))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
        run_modes(tf.image.decode_bmp(b"not an image"))
    with pytest.raises(ValueError, match="channels"):
        tf.image.decode_bmp(bmp, channels=1)


def test_is_jpeg_shape_and_crop():
    jpg = _pillow(SMOOTH, "JPEG", quality=95)
    p = tf.placeholder(tf.string, [3])
    assert run_modes(tf.image.is_jpeg(p), {p: [jpg, _pillow(SMOOTH, "PNG"), b""]}).tolist() == [True, False, False]
    assert run_modes(tf.io.extract_jpeg_shape(jpg)).tolist() == [16, 20, 3]
    assert run_modes(tf.image.extract_jpeg_shape(jpg, output_type=tf.int64)).dtype == np.int64
    whole = run_modes(tf.image.decode_jpeg(jpg))
    crop = run_modes(tf.image.decode_and_crop_jpeg(jpg, [2, 3, 5, 7]))
    np.testing.assert_array_equal(crop, whole[2:7, 3:10])
    with pytest.raises(tf.errors.InvalidArgumentError, match="not inside"):
        run_modes(tf.io.decode_and_crop_jpeg(jpg, [10, 3, 7, 7]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected a JPEG"):
        run_modes(tf.image.extract_jpeg_shape(_pillow(SMOOTH, "PNG")))


def test_adjust_jpeg_quality_is_a_jpeg_round_trip():
    x = SMOOTH.astype(np.float32) / 255
    out = run_modes(tf.image.adjust_jpeg_quality(x, 30))
    assert out.dtype == np.float32 and out.shape == x.shape
    direct = run_modes(tf.image.decode_jpeg(tf.image.encode_jpeg(SMOOTH, quality=30)))
    np.testing.assert_allclose(out, direct / np.float32(255), atol=1e-6)
    assert np.abs(out - x).max() < 0.11  # TF 2.21's own round trip differs from x by 0.106 here
    q = run_modes(tf.image.random_jpeg_quality(SMOOTH, 20, 90, seed=1))
    assert q.dtype == np.uint8 and q.shape == SMOOTH.shape
    with pytest.raises(ValueError, match="greater than min"):
        tf.image.random_jpeg_quality(SMOOTH, 50, 50)
    with pytest.raises(ValueError, match=r"range \[0, 100\]"):
        tf.image.adjust_jpeg_quality(x, 101)
    with pytest.raises(tf.errors.InvalidArgumentError, match="quality"):
        run_modes(tf.image.adjust_jpeg_quality(x, tf.constant(-3)))


def test_resize_image_with_pad_keeps_the_aspect_ratio():
    x = SMOOTH.astype(np.float32) / 255  # 16 x 20
    out = run_modes(tf.image.resize_image_with_pad(x, 21, 13))
    # TF: ratio max(20/13, 16/21) = 1.538; resized to floor(10.4) x 13, padded 5 rows above
    inner = run_modes(tf.image.resize_images(x, [10, 13]))
    assert out.shape == (21, 13, 3)
    np.testing.assert_allclose(out[5:15], inner, rtol=1e-6)
    assert not out[:5].any() and not out[15:].any()
    assert tf.image.resize(x, [8, 10]).shape.as_list() == [8, 10, 3]


def test_decode_webp():
    rgb = (np.arange(24).reshape(2, 4, 3) * 10).astype(np.uint8)
    webp = _pillow(rgb, "WEBP", lossless=True)
    out = run_modes(tf.io.decode_webp(webp))
    assert out.shape == (1, 2, 4, 3) and out[0, ..., 0].tolist() == [[0, 30, 60, 90], [120, 150, 180, 210]]  # TF's
    assert run_modes(tf.image.decode_webp(webp, channels=4)).shape == (1, 2, 4, 4)
    assert run_modes(tf.io.decode_webp(webp, dtype=tf.float32)).dtype == np.float32
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected a WEBP file"):
        run_modes(tf.io.decode_webp(_pillow(rgb, "PNG")))
