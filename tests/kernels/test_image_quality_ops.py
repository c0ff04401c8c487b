"""YIQ/YUV, PSNR, SSIM, MS-SSIM and Sobel edges (dflow/kernels/image_quality_ops.py) against TF 1.x's
outputs (tests/fixtures/tf_image) and numpy, on the default session and chunked on every mode."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes
from tests.kernels.image_fixture import inputs, tf_outputs

X, TF = inputs(), tf_outputs()


def run(fetches):
    with tf.Session() as s:
        return s.run(fetches)


@pytest.mark.parametrize("fwd,back,matrix", [
    (tf.image.rgb_to_yiq, tf.image.yiq_to_rgb, [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
                                                 [0.114, -0.32134392, 0.31119955]]),
    (tf.image.rgb_to_yuv, tf.image.yuv_to_rgb, [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
                                                 [0.114, 0.43601035, -0.10001026]]),
])
def test_color_spaces_are_tf_matrices_and_round_trip(fwd, back, matrix):
    x = X["a"]
    there = fwd(x)
    out, again = run_modes([there, back(there)])
    np.testing.assert_allclose(out, x @ np.asarray(matrix, np.float32), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(again, x, atol=1e-4)  # TF's inverse matrices are rounded to 8 digits


def test_color_space_errors_and_gradient():
    with pytest.raises(ValueError, match="last dimension of images must be 3"):
        tf.image.rgb_to_yiq(np.zeros((2, 2, 4), np.float32))
    with pytest.raises(TypeError, match="float"):
        tf.image.rgb_to_yuv(np.zeros((2, 2, 3), np.uint8))
    x = tf.constant(X["img"])
    g = run(tf.gradients(tf.reduce_sum(tf.image.rgb_to_yiq(x)), x)[0])
    np.testing.assert_allclose(g[0, 0, 0], np.sum([[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
                                                   [0.114, -0.32134392, 0.31119955]], axis=1), rtol=1e-5)


def test_psnr_and_ssim_match_tf():
    a, b = X["a"], X["b"]
    ai, bi = (a * 255).astype(np.uint8), (b * 255).astype(np.uint8)
    out = run_modes({"psnr": tf.image.psnr(a, b, 1.0), "psnr_uint8": tf.image.psnr(ai, bi, 255),
                     "ssim": tf.image.ssim(a, b, 1.0), "ssim_uint8": tf.image.ssim(ai, bi, 255),
                     "ssim_small_filter": tf.image.ssim(a, b, 1.0, filter_size=5, filter_sigma=0.8)})
    for k, v in out.items():
        assert v.dtype == np.float32 and v.shape == (2,), k
        np.testing.assert_allclose(v, TF[k], rtol=1e-5, err_msg=k)


def test_ssim_multiscale_matches_tf():
    out = run_modes(tf.image.ssim_multiscale(X["big_a"], X["big_b"], 1.0, power_factors=(0.3, 0.3, 0.4),
                                             filter_size=5))
    np.testing.assert_allclose(out, TF["ms_ssim"], rtol=1e-5)


def test_psnr_of_equal_images_is_infinite_and_ssim_one():
    a = X["a"]
    p, s = run([tf.image.psnr(a, a, 1.0), tf.image.ssim(a, a, 1.0)])
    assert np.all(np.isinf(p))
    np.testing.assert_allclose(s, 1.0, rtol=1e-6)


def test_ssim_gradient_is_finite_and_points_to_the_reference():
    a = tf.constant(X["a"])
    s = tf.reduce_sum(tf.image.ssim(a, X["b"], 1.0))
    g = run(tf.gradients(s, a)[0])
    assert g.shape == X["a"].shape and np.all(np.isfinite(g))
    assert np.sum(g * (X["b"] - X["a"])) > 0  # moving towards b raises the similarity


def test_quality_measure_errors():
    with pytest.raises(ValueError, match="smaller than the filter"):
        tf.image.ssim(X["a"][:, :8], X["b"][:, :8], 1.0)
    with pytest.raises(ValueError, match="last three dimensions must match"):
        tf.image.psnr(X["a"], X["b"][:, :, :5], 1.0)
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        tf.image.psnr(np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32), 1.0)


def test_sobel_edges_match_tf():
    x = X["a"][:, :6, :7]
    out = run_modes(tf.image.sobel_edges(tf.constant(x)))
    assert out.shape == (2, 6, 7, 3, 2)
    np.testing.assert_allclose(out, TF["sobel"], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="4-D"):
        tf.image.sobel_edges(np.zeros((3, 3, 1), np.float32))


def test_sobel_edges_of_unknown_batch():
    p = tf.placeholder(tf.float32, [None, 6, 7, 3])
    with tf.Session() as s:
        out = s.run(tf.image.sobel_edges(p), {p: X["a"][:, :6, :7]})
    np.testing.assert_allclose(out, TF["sobel"], rtol=1e-5, atol=1e-6)


# ---- bicubic and area resizes (kernels/resize_matrix_ops.py) ---------------------------------------


def test_bicubic_and_area_resizes_match_tf():
    img = X["img"]
    out = run_modes({"bicubic": tf.image.resize_bicubic(img, [9, 4]),
                     "bicubic_align": tf.image.resize_bicubic(img, [3, 11], align_corners=True),
                     "area": tf.image.resize_area(img, [3, 4]),
                     "area_up": tf.image.resize_images(img, [8, 10], method=tf.image.ResizeMethod.AREA)})
    for k, v in out.items():
        assert v.dtype == np.float32
        np.testing.assert_allclose(v, TF[k], rtol=1e-5, atol=1e-6, err_msg=k)
    x = tf.constant(img)
    g = run(tf.gradients(tf.reduce_sum(tf.image.resize_images(x, [9, 4], method=tf.image.ResizeMethod.BICUBIC) ** 2),
                         x)[0])
    np.testing.assert_allclose(g, TF["bicubic_grad"], rtol=1e-4, atol=1e-5)


def test_bicubic_of_one_image_and_errors():
    one = run(tf.image.resize_bicubic(X["img"][0], [9, 4]))
    np.testing.assert_allclose(one, TF["bicubic"][0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="half_pixel_centers"):
        tf.image.resize_bicubic(X["img"], [3, 3], half_pixel_centers=True)
    with pytest.raises(ValueError, match="size"):
        tf.image.resize_area(X["img"], [3, 0])
    with pytest.raises(ValueError, match="height and width"):
        tf.image.resize_area(tf.placeholder(tf.float32, [1, None, 4, 1]), [2, 2])
