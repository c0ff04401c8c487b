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
