"""tf.image (dflow/image.py): TF1's legacy resize against a direct numpy reference and TF's
figures, gradients against central differences, flips, per-image standardization, static shapes,
errors, and chunked batches on every mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf
from tests.conftest import ALL_MODES

SETTINGS = settings(max_examples=20, deadline=None)

IMG = (np.arange(1 * 3 * 4 * 2, dtype=np.float32).reshape(1, 3, 4, 2) ** 1.5).astype(np.float32)


def run(fetches, feed=None):
    with tf.Session() as s:
        return s.run(fetches, feed)


# ---- numpy reference: TF's legacy kernels, written per output pixel ----------------------------------


def _scale(n_in, n_out, align):
    if align and n_out > 1:
        return np.float32(n_in - 1) / np.float32(n_out - 1)
    return np.float32(n_in) / np.float32(n_out)


def ref_resize(x, size, method, align=False, half=False):
    n, h, w, c = x.shape
    oh, ow = size
    sh, sw = _scale(h, oh, align), _scale(w, ow, align)
    out = np.zeros((n, oh, ow, c), np.float32 if method == "bilinear" else x.dtype)
    for i in range(oh):
        for j in range(ow):
            if method == "nearest":
                fy = (np.float32(i) + np.float32(0.5 * half)) * sh
                fx = (np.float32(j) + np.float32(0.5 * half)) * sw
                yi = int(np.floor(fy + np.float32(0.5))) if align else int(np.floor(fy))
                xi = int(np.floor(fx + np.float32(0.5))) if align else int(np.floor(fx))
                out[:, i, j] = x[:, max(min(yi, h - 1), 0), max(min(xi, w - 1), 0)]
                continue
            fy = (np.float32(i) + np.float32(0.5)) * sh - np.float32(0.5) if half else np.float32(i) * sh
            fx = (np.float32(j) + np.float32(0.5)) * sw - np.float32(0.5) if half else np.float32(j) * sw
            y0, x0 = max(int(np.floor(fy)), 0), max(int(np.floor(fx)), 0)
            y1, x1 = min(int(np.ceil(fy)), h - 1), min(int(np.ceil(fx)), w - 1)
            ly, lx = fy - np.floor(fy), fx - np.floor(fx)
            top = x[:, y0, x0] + (x[:, y0, x1] - x[:, y0, x0]) * lx
            bottom = x[:, y1, x0] + (x[:, y1, x1] - x[:, y1, x0]) * lx
            out[:, i, j] = top + (bottom - top) * ly
    return out


@SETTINGS
@given(n=st.integers(1, 2), h=st.integers(1, 6), w=st.integers(1, 6), oh=st.integers(1, 9), ow=st.integers(1, 9),
       method=st.sampled_from(["bilinear", "nearest"]), corners=st.sampled_from(["legacy", "align", "half"]),
       seed=st.integers(0, 1000))
def test_resize_matches_reference(n, h, w, oh, ow, method, corners, seed):
    x = np.random.default_rng(seed).standard_normal((n, h, w, 2)).astype(np.float32)
    fn = tf.image.resize_bilinear if method == "bilinear" else tf.image.resize_nearest_neighbor
    y = fn(x, [oh, ow], align_corners=corners == "align", half_pixel_centers=corners == "half")
    assert y.shape.as_list() == [n, oh, ow, 2]
    np.testing.assert_allclose(run(y), ref_resize(x, (oh, ow), method, corners == "align", corners == "half"),
                               rtol=1e-5, atol=1e-5)


def test_resize_images_tf_figures():
    # TensorFlow 2.21.0, tf.compat.v1.image.resize_images (legacy kernels), IMG = arange(24) ** 1.5
    bil = tf.image.resize_images(IMG, [5, 7])
    bil_ac = tf.image.resize_images(IMG, [5, 7], align_corners=True)
    near = tf.image.resize_images(IMG, [5, 3], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)
    near_ac = tf.image.resize_images(IMG, [5, 3], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR, align_corners=True)
    down = tf.image.resize_images(IMG, [2, 3], align_corners=True)
    hp = tf.image.resize_bilinear(IMG, [5, 3], half_pixel_centers=True)
    b, ba, nn_, na, d, h = run([bil, bil_ac, near, near_ac, down, hp])
    np.testing.assert_allclose(b[0, 1, :, 0], [13.576450, 17.307072, 21.253109, 25.845394, 30.760725, 35.999104,
                                               37.308697], rtol=1e-6)
    np.testing.assert_allclose(b[0, 4, :3, 0], [64.0, 71.067162, 78.235413], rtol=1e-6)
    np.testing.assert_allclose(ba[0, 1, :, 0], [11.313708, 14.269654, 17.225601, 21.005108, 24.784611, 29.162340,
                                                33.540070], rtol=1e-6)
    np.testing.assert_allclose(nn_[0, :, :, 0], [[0.0, 2.828427, 8.0], [0.0, 2.828427, 8.0],
                                                 [22.627417, 31.622776, 41.569221], [22.627417, 31.622776, 41.569221],
                                                 [64.0, 76.367531, 89.442719]], rtol=1e-6)
    np.testing.assert_allclose(na[0, :, :, 0], [[0.0, 8.0, 14.696939], [22.627417, 41.569221, 52.383202],
                                                [22.627417, 41.569221, 52.383202], [64.0, 89.442719, 103.189148],
                                                [64.0, 89.442719, 103.189148]], rtol=1e-6)
    np.testing.assert_allclose(d[0, :, :, 1], [[1.0, 8.188246, 18.520258], [70.092796, 89.526581, 110.304123]],
                               rtol=1e-6)
    np.testing.assert_allclose(h[0, 1, :, 1], [12.451807, 21.583956, 32.867893], rtol=1e-6)


def test_resize_images_dtypes_ranks_and_shortcuts():
    u8 = np.arange(12, dtype=np.uint8).reshape(3, 4, 1)
    same = tf.image.resize_images(u8, [3, 4])  # TF1 returns the images unchanged (and uint8)
    up = tf.image.resize_images(u8, [6, 8])
    near = tf.image.resize_images(u8, [6, 8], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)
    assert (same.dtype, up.dtype, near.dtype) == (tf.uint8, tf.float32, tf.uint8)
    assert same.shape.as_list() == [3, 4, 1] and up.shape.as_list() == [6, 8, 1]
    aspect = tf.image.resize_images(np.zeros((30, 40, 1), np.float32), [20, 20], preserve_aspect_ratio=True)
    assert aspect.shape.as_list() == [15, 20, 1]  # TF 2.21.0 gives (15, 20, 1)
    s, u, n = run([same, up, near])
    np.testing.assert_array_equal(s, u8)
    np.testing.assert_allclose(u, ref_resize(u8[None].astype(np.float32), (6, 8), "bilinear")[0])
    np.testing.assert_array_equal(n, ref_resize(u8[None], (6, 8), "nearest")[0])


def test_resize_with_sizes_known_only_at_run_time():
    x = tf.placeholder(tf.float32, [None, None, None, 2])
    size = tf.placeholder(tf.int32, [2])
    y = tf.image.resize_images(x, size)
    z = tf.image.resize_images(x, size, method=tf.image.ResizeMethod.NEAREST_NEIGHBOR, align_corners=True)
    a, b = run([y, z], {x: IMG, size: [5, 7]})
    np.testing.assert_allclose(a, ref_resize(IMG, (5, 7), "bilinear"), rtol=1e-6)
    np.testing.assert_array_equal(b, ref_resize(IMG, (5, 7), "nearest", align=True))


def test_bilinear_gradient():
    # TensorFlow 2.21.0: d sum(resize_images(IMG, [5, 7]) * arange(35)) / d IMG[0, :, :, 0]
    x = tf.constant(IMG)
    g = tf.gradients(tf.reduce_sum(tf.image.resize_images(x, [5, 7]) *
                                   np.arange(35, dtype=np.float32).reshape(1, 5, 7, 1)), x)[0]
    np.testing.assert_allclose(run(g)[0, :, :, 0], [[4.6, 9.2, 13.2, 22.0], [28.685711, 38.628563, 43.2, 60.285713],
                                                    [68.857147, 87.885712, 93.6, 124.857147]], rtol=1e-5)
    for align in (False, True):
        p = tf.placeholder(tf.float64, [2, 3, 4, 1])
        y = tf.image.resize_images(p, [4, 6], align_corners=align)
        with tf.Session():
            err = tf.test.compute_gradient_error(p, [2, 3, 4, 1], y, [2, 4, 6, 1], delta=1e-2)
        assert err < 1e-3  # the float32 interpolation weights limit the precision


def test_resize_errors():
    with pytest.raises(ValueError, match="3 or 4 dimensions"):
        tf.image.resize_images(np.zeros((2, 2), np.float32), [3, 3])
    with pytest.raises(ValueError, match="size"):
        tf.image.resize_images(np.zeros((2, 2, 1), np.float32), [3, 3, 3])
    with pytest.raises(ValueError, match="not implemented"):
        tf.image.resize_images(np.zeros((2, 2, 1), np.float32), [3, 3], method=7)
    with pytest.raises(ValueError, match="half_pixel_centers"):
        tf.image.resize_bilinear(np.zeros((1, 2, 2, 1), np.float32), [3, 3], align_corners=True,
                                 half_pixel_centers=True)
    with pytest.raises(ValueError, match="contains no shape"):
        tf.image.resize_images(tf.placeholder(tf.float32), [3, 3])


# ---- flips and standardization --------------------------------------------------------------------


def test_flips():
    x3 = np.random.default_rng(0).standard_normal((3, 4, 2)).astype(np.float32)
    x4 = np.random.default_rng(1).standard_normal((2, 3, 4, 2)).astype(np.float32)
    got = run([tf.image.flip_left_right(x3), tf.image.flip_up_down(x3), tf.image.flip_left_right(x4),
               tf.image.flip_up_down(x4)])
    for g, w in zip(got, [x3[:, ::-1], x3[::-1], x4[:, :, ::-1], x4[:, ::-1]]):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError, match="3-D or 4-D"):
        tf.image.flip_left_right(np.zeros((2, 2), np.float32))


def test_random_flips_flip_whole_images():
    x4 = np.random.default_rng(2).standard_normal((64, 3, 4, 1)).astype(np.float32)
    y = tf.image.random_flip_left_right(x4, seed=3)
    z = tf.image.random_flip_up_down(x4[0], seed=4)
    with tf.Session() as s:
        a, b = s.run([y, z])
    flipped = [np.array_equal(a[i], x4[i, :, ::-1]) for i in range(64)]
    kept = [np.array_equal(a[i], x4[i]) for i in range(64)]
    assert all(f or k for f, k in zip(flipped, kept)) and 10 < sum(flipped) < 54
    assert np.array_equal(b, x4[0]) or np.array_equal(b, x4[0, ::-1])


def ref_standardize(x):
    x = x.astype(np.float32)
    axes = (-1, -2, -3)
    mean = x.mean(axis=axes, keepdims=True)
    std = np.maximum(x.std(axis=axes, keepdims=True), 1 / np.sqrt(np.prod(x.shape[-3:])))
    return (x - mean) / std


def test_per_image_standardization():
    # TensorFlow 2.21.0: per_image_standardization(arange(12).reshape(2, 2, 3)) and of uint8 ones
    a = tf.image.per_image_standardization(np.arange(12, dtype=np.float32).reshape(2, 2, 3))
    b = tf.image.per_image_standardization(np.ones((2, 2, 3), np.uint8))
    x4 = np.random.default_rng(0).standard_normal((3, 4, 5, 2)) * 5 + 2
    c = tf.image.per_image_standardization(x4)
    p = tf.placeholder(tf.uint8, [None, None, None, 3])
    d = tf.image.per_image_standardization(p)
    u8 = np.random.default_rng(1).integers(0, 255, (2, 3, 3, 3)).astype(np.uint8)
    assert b.dtype == tf.float32 and c.dtype == tf.float32
    ra, rb, rc, rd = run([a, b, c, d], {p: u8})
    np.testing.assert_allclose(ra.ravel()[:3], [-1.593255, -1.303572, -1.013890], rtol=1e-5)
    np.testing.assert_array_equal(rb, np.zeros((2, 2, 3)))
    np.testing.assert_allclose(rc, ref_standardize(x4), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rd, ref_standardize(u8), rtol=1e-4, atol=1e-5)
    q = tf.placeholder(tf.float64, [2, 2, 2, 2])
    with tf.Session():
        err = tf.test.compute_gradient_error(q, [2, 2, 2, 2], tf.image.per_image_standardization(q), [2, 2, 2, 2],
                                             delta=1e-2)
    assert err < 2e-3  # computed in float32, as TF1


# ---- chunked along N on every mode ----------------------------------------------------------------


@pytest.mark.parametrize("mode", ALL_MODES)
def test_chunked_batch_on_every_mode(mode, sess_factory):
    x0 = np.random.default_rng(5).standard_normal((5, 6, 7, 2)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 6, 7, 2])
    r = tf.image.resize_images(x, [9, 4])
    n = tf.image.resize_images(x, [4, 9], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)
    s = tf.image.per_image_standardization(tf.image.flip_left_right(x))
    (g,) = tf.gradients(tf.reduce_sum(r * r) + tf.reduce_sum(s * s * x) + tf.reduce_sum(n * n * n), x)
    with sess_factory("eager") as sess:
        want = sess.run([r, n, s, g], {x: x0})
    with sess_factory(mode, chunks=(2, 3, 7, 2)) as sess:
        got = sess.run([r, n, s, g], {x: x0})
    for w, v in zip(want, got):
        np.testing.assert_allclose(v, w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(want[0], ref_resize(x0, (9, 4), "bilinear"), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(want[2], ref_standardize(x0[:, :, ::-1]), rtol=1e-4, atol=1e-5)


def test_resize_bilinear_second_order_and_float64():
    x0 = np.random.default_rng(8).standard_normal((2, 3, 5, 2))
    x = tf.constant(x0)
    y = tf.image.resize_bilinear(x, [4, 3], half_pixel_centers=True)
    assert y.dtype == tf.float32
    g = tf.placeholder(tf.float32, [2, 4, 3, 2])
    (dx,) = tf.gradients(y, x, grad_ys=g)
    assert dx.dtype == tf.float64 and dx.shape.as_list() == [2, 3, 5, 2]
    gg = tf.placeholder(tf.float64, [2, 3, 5, 2])
    (ddx,) = tf.gradients(dx, g, grad_ys=gg)  # ResizeBilinearGrad's gradient is ResizeBilinear
    with tf.Session():
        assert tf.test.compute_gradient_error(g, [2, 4, 3, 2], dx, [2, 3, 5, 2], delta=1e-2) < 1e-4
        assert tf.test.compute_gradient_error(gg, [2, 3, 5, 2], ddx, [2, 4, 3, 2], delta=1e-2) < 1e-4


@pytest.mark.parametrize("device", [None, "device1"])
def test_resize_kernels_on_array_api_strict(device):
    xps = pytest.importorskip("array_api_strict")
    import array_api_compat.numpy as np_xp

    from dflow.graph.registry import get_opdef

    x = tf.constant(np.random.default_rng(9).standard_normal((2, 3, 4, 2)).astype(np.float32))
    y = tf.image.resize_bilinear(x, [5, 3])
    z = tf.image.resize_nearest_neighbor(x, [5, 3], align_corners=True)
    dy, dz = tf.gradients(tf.reduce_sum(y * y), x)[0], tf.gradients(tf.reduce_sum(z * z), x)[0]
    dev = xps.Device(device) if device else None
    for op in (y.op, dy.op, z.op, dz.op):
        with tf.Session() as s:
            arrays = [np.asarray(v) for v in s.run(list(op.inputs))]
        want = get_opdef(op.type).eager(np_xp, *arrays, **op.attrs)
        # image data on the device; the size / shape input stays a host value (the lowering reads it so)
        got = get_opdef(op.type).eager(xps, *[v if v.dtype.kind == "i" else xps.asarray(v, device=dev) if dev
                                              else xps.asarray(v) for v in arrays], **op.attrs)
        got = got.to_device(xps.Device("CPU_DEVICE")) if dev else got
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=op.type)


def test_resize_is_one_task_per_batch_chunk(sess_factory):
    x0 = np.random.default_rng(10).standard_normal((6, 5, 5, 2)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 5, 5, 2])
    y = tf.image.resize_bilinear(x, [7, 3], name="resized")
    (dx,) = tf.gradients(tf.reduce_sum(y), x)
    s = sess_factory("sync", chunks=(2, 2, 5, 2))
    plan, _ = s._plan_for([y, dx], {x: x0})
    for prefix in ("resized-", "gradients.resized_grad.ResizeBilinearGrad-"):
        keys = sorted(k[1:] for k in plan.dsk if isinstance(k, tuple) and k[0].startswith(prefix))
        assert keys == [(0, 0, 0, 0), (1, 0, 0, 0), (2, 0, 0, 0)], (prefix, keys)
    ry, rdx = s.run([y, dx], {x: x0})
    np.testing.assert_allclose(ry, ref_resize(x0, (7, 3), "bilinear"), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("corners", ["legacy", "align", "half"])
def test_nearest_gradients(corners):
    kw = dict(align_corners=corners == "align", half_pixel_centers=corners == "half")
    x0 = np.random.default_rng(13).standard_normal((2, 4, 3, 2))
    p = tf.placeholder(tf.float64, x0.shape)
    for size in ([7, 2], [3, 5]):
        y = tf.image.resize_nearest_neighbor(p, size, **kw)
        assert y.dtype == tf.float64
        with tf.Session():
            assert tf.test.compute_gradient_error(p, x0.shape, y, y.shape.as_list(), x_init_value=x0,
                                                  delta=1e-6) < 1e-8
    g = tf.placeholder(tf.float64, [2, 7, 2, 2])
    (dx,) = tf.gradients(tf.image.resize_nearest_neighbor(p, [7, 2], **kw), p, grad_ys=g)
    gg = tf.placeholder(tf.float64, x0.shape)
    (ddx,) = tf.gradients(dx, g, grad_ys=gg)
    with tf.Session():
        assert tf.test.compute_gradient_error(g, [2, 7, 2, 2], dx, list(x0.shape), delta=1e-6) < 1e-8
        assert tf.test.compute_gradient_error(gg, list(x0.shape), ddx, [2, 7, 2, 2], delta=1e-6) < 1e-8


# ---- dtype conversion, brightness, contrast, grayscale, crops and pads ------------------------------


def test_convert_image_dtype_tf_figures():
    # TensorFlow 2.21.0, tf.compat.v1.image.convert_image_dtype
    u8 = np.array([[[0, 100, 255], [1, 128, 254]]], np.uint8)
    f = np.array([[[0.0, 0.5, 1.0], [-0.2, 0.999, 1.3]]], np.float32)
    i32 = np.array([0, 2**31 - 1, 2**24, 12345678], np.int32)
    c = tf.image.convert_image_dtype
    got = run([c(u8, tf.float32), c(f, tf.uint8, saturate=True), c(u8, tf.int32), c(i32, tf.uint8), c(u8, tf.int16),
               c(f[:, :1], tf.uint8), c(f, tf.float64)])
    np.testing.assert_allclose(got[0].ravel(), [0.0, 0.39215690, 1.0, 0.00392157, 0.50196081, 0.99607849], rtol=1e-6)
    assert got[1].ravel().tolist() == [0, 127, 255, 0, 255, 255]
    assert got[2].ravel().tolist() == [0, 838860800, 2139095040, 8388608, 1073741824, 2130706432]
    assert got[3].tolist() == [0, 255, 2, 1]
    assert got[4].ravel().tolist() == [0, 12800, 32640, 128, 16384, 32512]
    assert got[5].ravel().tolist() == [0, 127, 255]
    assert got[6].dtype == np.float64
    assert c(u8, tf.uint8).op.type == "Identity"
    with pytest.raises(AttributeError):
        c(u8, tf.bool)


def test_brightness_contrast_grayscale_tf_figures():
    # TensorFlow 2.21.0 figures
    u8 = np.array([[[0, 100, 255], [1, 128, 254]]], np.uint8)
    f = np.array([[[0.0, 0.5, 1.0], [-0.2, 0.999, 1.3]]], np.float32)
    img = (np.arange(2 * 3 * 4 * 3).reshape(2, 3, 4, 3) % 7).astype(np.float32) / 7
    u8i = (np.arange(3 * 4 * 3).reshape(3, 4, 3) * 7 % 256).astype(np.uint8)
    got = run([tf.image.adjust_brightness(u8, 0.1), tf.image.adjust_brightness(f, 0.1),
               tf.image.adjust_contrast(img, 1.7), tf.image.adjust_contrast(u8i, 1.7), tf.image.rgb_to_grayscale(u8i),
               tf.image.rgb_to_grayscale(img)])
    assert got[0].ravel().tolist() == [25, 125, 255, 26, 153, 255]
    np.testing.assert_allclose(got[1], f + np.float32(0.1))
    mean = img.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(got[2], (img - mean) * 1.7 + mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2][1, :, :, 2].ravel()[:4], [0.41190475, 1.14047623, 0.16904762, 0.89761907],
                               rtol=1e-5)
    assert got[3][:, :, 0].ravel().tolist() == [0, 0, 0, 26, 62, 97, 133, 169, 205, 240, 255, 255]
    assert got[4].shape == (3, 4, 1) and got[4][:, :, 0].ravel().tolist() == [5, 26, 47, 68, 89, 110, 131, 152,
                                                                                 174, 195, 216, 237]
    np.testing.assert_allclose(got[5][..., 0], img @ np.array([0.2989, 0.5870, 0.1140], np.float32), rtol=1e-6)


def test_random_brightness_and_contrast_ranges():
    x = np.random.default_rng(14).random((2, 4, 4, 3)).astype(np.float32)
    b = tf.image.random_brightness(x, 0.2, seed=1)
    c = tf.image.random_contrast(x, 0.5, 1.5, seed=2)
    with tf.Session() as s:
        deltas = [np.unique(np.round(s.run(b) - x, 5)) for _ in range(5)]
        factors = []
        for _ in range(5):
            out = s.run(c)
            mean = x.mean(axis=(1, 2), keepdims=True)
            factors.append(np.median((out - mean) / (x - mean)))
    assert all(len(d) == 1 and -0.2 <= d[0] <= 0.2 for d in deltas) and len({float(d[0]) for d in deltas}) > 1
    assert all(0.5 <= f <= 1.5 for f in factors)
    with pytest.raises(ValueError, match="max_delta"):
        tf.image.random_brightness(x, -1.0)
    with pytest.raises(ValueError, match="upper"):
        tf.image.random_contrast(x, 1.0, 0.5)


def test_crops_and_pads_tf_figures():
    # TensorFlow 2.21.0 figures, x = arange(70).reshape(5, 7, 2)
    x = np.arange(5 * 7 * 2).reshape(5, 7, 2).astype(np.float32)
    got = run([tf.image.resize_image_with_crop_or_pad(x, 3, 10), tf.image.resize_image_with_crop_or_pad(x, 8, 4),
               tf.image.crop_to_bounding_box(x, 1, 2, 3, 4), tf.image.pad_to_bounding_box(x[:2, :2], 1, 2, 4, 5),
               tf.image.resize_image_with_crop_or_pad(np.stack([x, x + 1]), 4, 4)])
    assert got[0][:, :, 0].tolist() == [[0, 14, 16, 18, 20, 22, 24, 26, 0, 0], [0, 28, 30, 32, 34, 36, 38, 40, 0, 0],
                                        [0, 42, 44, 46, 48, 50, 52, 54, 0, 0]]
    assert got[1][:, :, 0].tolist() == [[0, 0, 0, 0], [2, 4, 6, 8], [16, 18, 20, 22], [30, 32, 34, 36],
                                        [44, 46, 48, 50], [58, 60, 62, 64], [0, 0, 0, 0], [0, 0, 0, 0]]
    np.testing.assert_array_equal(got[2], x[1:4, 2:6])
    assert got[3][:, :, 1].tolist() == [[0, 0, 0, 0, 0], [0, 0, 1, 3, 0], [0, 0, 15, 17, 0], [0, 0, 0, 0, 0]]
    np.testing.assert_array_equal(got[4], np.stack([x, x + 1])[:, 0:4, 1:5])
    with pytest.raises(ValueError, match="at least the target"):
        tf.image.crop_to_bounding_box(x, 3, 0, 3, 2)
    with pytest.raises(ValueError, match="at least the image"):
        tf.image.pad_to_bounding_box(x, 1, 0, 5, 7)
    with pytest.raises(ValueError, match="known when the graph is built"):
        tf.image.resize_image_with_crop_or_pad(tf.placeholder(tf.float32, [None, None, 3]), 2, 2)


# ---- issue 28: rotations, colour, gamma, total variation, gradients, boxes -------------------------
# The expected arrays below were obtained by running the same calls with TensorFlow 2.21's
# tensorflow.compat.v1 (graph mode) and copying its output.

RGB = np.array([[[0.2, 0.4, 0.6], [0.9, 0.1, 0.3]], [[0.5, 0.5, 0.5], [0.0, 0.8, 0.2]]], np.float32)


def test_hsv_hue_saturation_gamma_tf_figures():
    from tests.conftest import run_modes

    got = run_modes([tf.image.rgb_to_hsv(RGB), tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(RGB)),
                     tf.image.adjust_hue(RGB, 0.3), tf.image.adjust_hue(RGB, -0.45),
                     tf.image.adjust_saturation(RGB, 1.7), tf.image.adjust_saturation((RGB * 255).astype(np.uint8), 0.4),
                     tf.image.adjust_gamma(RGB, 2.0, 1.5), tf.image.adjust_gamma((RGB * 255).astype(np.uint8), 0.5)],
                    chunks=1)
    want = [
        [[[0.5833334, 0.6666667, 0.6], [0.9583333, 0.8888888, 0.9]], [[0, 0, 0.5], [0.375, 1, 0.8]]],
        RGB,
        [[[0.6, 0.2, 0.48], [0.4599998, 0.9, 0.1]], [[0.5, 0.5, 0.5], [0.0400002, 0, 0.8]]],
        [[[0.6, 0.5200001, 0.2], [0.1, 0.8599998, 0.9]], [[0.5, 0.5, 0.5], [0.8, 0, 0.3599999]]],
        [[[0, 0.3, 0.6], [0.9, 0, 0.225]], [[0.5, 0.5, 0.5], [0, 0.8, 0.2]]],
        [[[112, 132, 153], [229, 147, 168]], [[127, 127, 127], [122, 204, 143]]],
        [[[0.06, 0.24, 0.5400001], [1.2149999, 0.015, 0.135]], [[0.375, 0.375, 0.375], [0, 0.96, 0.06]]],
        [[[114, 161, 197], [242, 80, 139]], [[180, 180, 180], [0, 228, 114]]],
    ]
    for i, (g, w) in enumerate(zip(got, want)):
        if g.dtype == np.uint8:
            assert np.abs(g.astype(int) - np.asarray(w)).max() <= 1, i  # float rounding at the .5 boundary
        else:
            np.testing.assert_allclose(g, w, atol=2e-6, err_msg=str(i))


def test_random_hue_and_saturation_are_reproducible_and_in_range():
    from tests.conftest import run_modes

    tf.set_random_seed(3)
    outs = [tf.image.random_hue(RGB, 0.2, seed=1), tf.image.random_saturation(RGB, 0.5, 1.5, seed=2)]
    got = run_modes(outs)  # the same draw on every scheduler
    assert got[0].shape == RGB.shape and not np.allclose(got[0], RGB)
    hsv_in, hsv_out = run([tf.image.rgb_to_hsv(RGB), tf.image.rgb_to_hsv(got[1])])
    np.testing.assert_allclose(hsv_out[..., 0], hsv_in[..., 0], atol=1e-5)  # saturation only
    with pytest.raises(ValueError, match="max_delta must be <= 0.5"):
        tf.image.random_hue(RGB, 0.6)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_saturation(RGB, 1.0, 0.5)


def test_rot90_transpose_central_crop_tf_figures():
    img = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4, 1)
    got = run([tf.image.rot90(img[0], 1), tf.image.rot90(img, 3), tf.image.rot90(img, 2),
               tf.image.transpose_image(img), tf.image.central_crop(np.arange(35.).reshape(7, 5, 1), 0.5)])
    np.testing.assert_array_equal(got[0][..., 0], [[3, 7, 11], [2, 6, 10], [1, 5, 9], [0, 4, 8]])
    np.testing.assert_array_equal(got[1][0, ..., 0], [[8, 4, 0], [9, 5, 1], [10, 6, 2], [11, 7, 3]])
    np.testing.assert_array_equal(got[2], img[:, ::-1, ::-1])
    np.testing.assert_array_equal(got[3], img.transpose(0, 2, 1, 3))
    np.testing.assert_array_equal(got[4][..., 0], np.arange(35.).reshape(7, 5)[1:6, 1:4])
    with pytest.raises(ValueError, match="central_fraction"):
        tf.image.central_crop(img, 0.0)
    with pytest.raises(ValueError, match="k must be known"):
        tf.image.rot90(img, tf.placeholder(tf.int32, []))


def test_total_variation_and_image_gradients_tf_figures():
    img = tf.constant(np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4, 1))
    sq = img * img
    dy, dx = tf.image.image_gradients(sq)
    got = run([tf.image.total_variation(sq), tf.image.total_variation(sq[0]), dy, dx])
    np.testing.assert_array_equal(got[0], [451, 1435])
    assert got[1] == 451
    np.testing.assert_array_equal(got[2][0, ..., 0], [[16, 24, 32, 40], [48, 56, 64, 72], [0, 0, 0, 0]])
    np.testing.assert_array_equal(got[3][0, ..., 0], [[1, 3, 5, 0], [9, 11, 13, 0], [17, 19, 21, 0]])
    x = tf.placeholder(tf.float64, [1, 3, 3, 1])
    with tf.Session():
        err = tf.test.compute_gradient_error(x, [1, 3, 3, 1], tf.image.total_variation(x * x), [1],
                                             x_init_value=np.arange(1., 10.).reshape(1, 3, 3, 1))
        assert err < 1e-6
    with pytest.raises(ValueError, match="image_gradients expects a 4D tensor"):
        tf.image.image_gradients(np.zeros((3, 3, 1), np.float32))


def test_grayscale_to_rgb_and_draw_bounding_boxes_tf_figures():
    assert run(tf.image.grayscale_to_rgb(np.full((2, 2, 1), 0.5, np.float32))).shape == (2, 2, 3)
    canvas = np.zeros((1, 5, 6, 3), np.float32)
    out = run(tf.image.draw_bounding_boxes(canvas, [[[0.2, 0.1, 0.8, 0.9], [-0.1, 0.5, 0.5, 1.2]]]))
    yellow_blue_r = [[1, 1, 0, 0, 0, 0], [1, 0, 0, 0, 1, 0], [1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 0], [0] * 6]
    blue_b = [[0, 0, 1, 1, 1, 1], [0, 0, 1, 0, 0, 0], [0, 0, 1, 1, 1, 1], [0] * 6, [0] * 6]
    np.testing.assert_array_equal(out[0, ..., 0], yellow_blue_r)
    np.testing.assert_array_equal(out[0, ..., 1], yellow_blue_r)
    np.testing.assert_array_equal(out[0, ..., 2], blue_b)


def test_non_max_suppression_tf_figures():
    boxes = [[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1], [0, 100, 1, 101]]
    scores = [0.9, 0.75, 0.6, 0.95, 0.5, 0.3]
    n = tf.image.non_max_suppression(boxes, scores, 3, 0.5)
    assert n.op.type == "NonMaxSuppressionV3"
    from tests.conftest import run_modes

    got = run_modes([n, tf.image.non_max_suppression(boxes, scores, 10, 0.5, score_threshold=0.4)])
    np.testing.assert_array_equal(got[0], [3, 0, 5])
    np.testing.assert_array_equal(got[1], [3, 0])
