"""crop_and_resize (and its gradients), the non-max suppression family and
sample_distorted_bounding_box (dflow/kernels/box_ops.py) against TF 1.x's outputs
(tests/fixtures/tf_image), on every local mode."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes
from tests.kernels.image_fixture import combined_inputs, inputs, tf_outputs

X, TF = inputs(), tf_outputs()


def run(fetches, feed=None):
    with tf.Session() as s:
        return s.run(fetches, feed)


def test_crop_and_resize_matches_tf():
    img = X["img"]
    out = run_modes({
        "crops": tf.image.crop_and_resize(img, X["boxes"], X["box_ind"], [3, 4]),
        "crops_nearest": tf.image.crop_and_resize(img, X["boxes"], X["box_ind"], [5, 2], method="nearest",
                                                  extrapolation_value=-1.0),
        "crops_1x1": tf.image.crop_and_resize(img, X["boxes"], box_indices=X["box_ind"], crop_size=[1, 1]),
    })
    for k, v in out.items():
        assert v.dtype == np.float32
        np.testing.assert_allclose(v, TF[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_crop_and_resize_of_integer_images_and_unknown_shapes():
    p = tf.placeholder(tf.uint8, [None, None, None, 3])
    b = tf.placeholder(tf.float32, [None, 4])
    imgs = (X["img"] * 200).astype(np.uint8)
    out = run(tf.image.crop_and_resize(p, b, X["box_ind"], [3, 4]), {p: imgs, b: X["boxes"]})
    want = run(tf.image.crop_and_resize(imgs.astype(np.float32), X["boxes"], X["box_ind"], [3, 4]))
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_crop_and_resize_gradients_match_tf():
    img, boxes = tf.constant(X["img"]), tf.constant(X["boxes"])
    crops = tf.image.crop_and_resize(img, boxes, X["box_ind"], [3, 4])
    w = np.random.RandomState(1).rand(4, 3, 4, 3).astype(np.float32)
    g_img, g_boxes = run_modes(tf.gradients(tf.reduce_sum(crops * w), [img, boxes]))
    np.testing.assert_allclose(g_img, TF["crops_grad_image"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_boxes, TF["crops_grad_boxes"], rtol=1e-4, atol=1e-4)


def test_crop_and_resize_errors():
    with pytest.raises(ValueError, match="method"):
        tf.image.crop_and_resize(X["img"], X["boxes"], X["box_ind"], [2, 2], method="bicubic")
    with pytest.raises(ValueError, match="crop_size"):
        tf.image.crop_and_resize(X["img"], X["boxes"], X["box_ind"], [2, 0])
    with pytest.raises(ValueError, match="4-D"):
        tf.image.crop_and_resize(X["img"][0], X["boxes"], X["box_ind"], [2, 2])
    with pytest.raises(ValueError, match=r"\[num_boxes, 4\]"):
        tf.image.crop_and_resize(X["img"], X["boxes"][:, :3], X["box_ind"], [2, 2])


def test_nms_with_scores_hard_and_soft_match_tf():
    b, s = X["nms_boxes"], X["nms_scores"]
    hard = tf.image.non_max_suppression_with_scores(b, s, 12, 0.3)
    soft = tf.image.non_max_suppression_with_scores(b, s, 12, 0.3, 0.2, soft_nms_sigma=0.5)
    (hi, hs), (si, ss) = run_modes([list(hard), list(soft)])
    np.testing.assert_array_equal(hi, TF["nms_hard_idx"])
    np.testing.assert_allclose(hs, TF["nms_hard_scores"], rtol=1e-6)
    np.testing.assert_array_equal(si, TF["nms_soft_idx"])
    np.testing.assert_allclose(ss, TF["nms_soft_scores"], rtol=1e-5)
    # hard NMS keeps what non_max_suppression keeps
    np.testing.assert_array_equal(run(tf.image.non_max_suppression(b, s, 12, 0.3)), hi)


def test_nms_padded_and_overlaps_match_tf():
    idx, valid = tf.image.non_max_suppression_padded(X["nms_boxes"], X["nms_scores"], 15, 0.2, 0.1,
                                                     pad_to_max_output_size=True)
    assert idx.shape.as_list() == [15]
    ov = tf.image.non_max_suppression_overlaps(X["overlaps"], X["nms_scores"], 10, 0.6, 0.1)
    i, v, o = run_modes([idx, valid, ov])
    np.testing.assert_array_equal(i, TF["nms_padded_idx"])
    assert v == TF["nms_padded_valid"]
    np.testing.assert_array_equal(o, TF["nms_overlaps"])
    i2, v2 = run(list(tf.image.non_max_suppression_padded(X["nms_boxes"], X["nms_scores"], 15, 0.2, 0.1)))
    np.testing.assert_array_equal(i2, TF["nms_padded_idx"][:int(v2)])


def test_nms_bad_input():
    with pytest.raises(tf.errors.InvalidArgumentError, match="iou_threshold"):
        run(tf.image.non_max_suppression_with_scores(X["nms_boxes"], X["nms_scores"], 3, 1.5)[0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="soft_nms_sigma"):
        run(tf.image.non_max_suppression_with_scores(X["nms_boxes"], X["nms_scores"], 3, 0.5,
                                                     soft_nms_sigma=-1.0)[0])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"overlaps must be \[n, n\]"):
        run(tf.image.non_max_suppression_overlaps(X["overlaps"][:5], X["nms_scores"], 3))
    with pytest.raises(ValueError, match="scores"):
        tf.image.non_max_suppression_padded(X["nms_boxes"], X["nms_scores"][None], 3)


def test_sample_distorted_bounding_box_covers_the_object_and_slices():
    image = np.zeros((40, 50, 3), np.float32)
    box = [[[0.1, 0.1, 0.5, 0.6]]]
    begin, size, bboxes = tf.image.sample_distorted_bounding_box([40, 50, 3], box, seed=3, min_object_covered=0.5)
    crop = tf.slice(image, begin, size)
    draws = [run_modes([begin, size, bboxes, tf.shape(crop)]) for _ in range(2)]
    for bg, sz, bb, cs in draws:
        y, x, h, w = bg[0], bg[1], sz[0], sz[1]
        assert bg[2] == 0 and sz[2] == -1 and list(cs) == [h, w, 3]
        assert 0 <= y and y + h <= 40 and 0 <= x and x + w <= 50
        inter = max(min(y + h, 20) - max(y, 4), 0) * max(min(x + w, 30) - max(x, 5), 0)
        assert inter / (16 * 25) >= 0.5
        np.testing.assert_allclose(bb[0, 0], [y / 40, x / 50, (y + h) / 40, (x + w) / 50], rtol=1e-6)
        assert 0.05 * 2000 <= h * w <= 2000


def test_sample_distorted_bounding_box_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="No bounding boxes"):
        run(tf.image.sample_distorted_bounding_box([4, 4, 3], np.zeros((1, 0, 4), np.float32))[0])
    begin, size, _ = tf.image.sample_distorted_bounding_box([4, 5, 3], np.zeros((1, 0, 4), np.float32),
                                                            use_image_if_no_bounding_boxes=True, area_range=(1, 1))
    assert [list(v) for v in run([begin, size])] == [[0, 0, 0], [4, 5, -1]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"in \[0.0, 1.0\]"):
        run(tf.image.sample_distorted_bounding_box([4, 4, 3], [[[0, 0, 2.0, 1]]])[0])
    with pytest.raises(ValueError, match="integer"):
        tf.image.sample_distorted_bounding_box([4.0, 4.0, 3.0], [[[0, 0, 1.0, 1]]])


GLIMPSE_IMG = np.arange(2 * 6 * 7, dtype=np.float32).reshape(2, 6, 7, 1)
GLIMPSES = [  # TF 2.21's ExtractGlimpse (TF1's op) with noise="zero", on GLIMPSE_IMG, size [3, 4]
    ([[0.0, 0.0], [0.3, -0.5]], True, True,
     [[[8, 9, 10, 11], [15, 16, 17, 18], [22, 23, 24, 25]], [[56, 57, 58, 59], [63, 64, 65, 66], [70, 71, 72, 73]]]),
    ([[1.0, 2.0], [2.5, 3.7]], False, False,
     [[[0, 1, 2, 3], [7, 8, 9, 10], [14, 15, 16, 17]], [[50, 51, 52, 53], [57, 58, 59, 60], [64, 65, 66, 67]]]),
    ([[0.9, 0.9], [-0.9, 0.1]], True, True,
     [[[32, 33, 34, 0], [39, 40, 41, 0], [0, 0, 0, 0]], [[0, 0, 0, 0], [43, 44, 45, 46], [50, 51, 52, 53]]]),
    ([[-1.5, 2.2], [1.4, 1.6]], True, False,
     [[[2, 3, 4, 5], [9, 10, 11, 12], [16, 17, 18, 19]], [[58, 59, 60, 61], [65, 66, 67, 68], [72, 73, 74, 75]]]),
]


@pytest.mark.parametrize("offsets,centered,normalized,want", GLIMPSES)
def test_extract_glimpse_matches_tf(offsets, centered, normalized, want):
    g = tf.image.extract_glimpse(GLIMPSE_IMG, [3, 4], offsets, centered=centered, normalized=normalized, noise="zero")
    assert g.shape.as_list() == [2, 3, 4, 1]
    np.testing.assert_array_equal(run_modes(g)[..., 0], want)


def test_extract_glimpse_noise_outside_the_image():
    g = tf.image.extract_glimpse(GLIMPSE_IMG, [3, 4], [[0.9, 0.9], [-0.9, 0.1]])
    with tf.Session() as s:
        a, b = s.run(g), s.run(g)
    inside = np.asarray(GLIMPSES[2][3]) > 0
    np.testing.assert_array_equal(a[..., 0][inside], np.asarray(GLIMPSES[2][3])[inside])
    assert (a[0, ..., 0][~inside[0]] >= 0).all() and (a[0, ..., 0][~inside[0]] <= 41).all()  # image 0's range
    assert not np.array_equal(a, b)  # fresh noise each run
    gauss = run(tf.image.extract_glimpse(GLIMPSE_IMG, [3, 4], [[0.9, 0.9], [-0.9, 0.1]], uniform_noise=False))
    np.testing.assert_array_equal(gauss[..., 0][inside], np.asarray(GLIMPSES[2][3])[inside])
    with pytest.raises(tf.errors.InvalidArgumentError, match="2 images but 1 offsets"):
        run(tf.image.extract_glimpse(GLIMPSE_IMG, [3, 4], [[0.0, 0.0]]))
    with pytest.raises(ValueError, match="float32"):
        tf.image.extract_glimpse(GLIMPSE_IMG.astype(np.float64), [3, 4], [[0.0, 0.0]] * 2)


def test_combined_non_max_suppression_matches_tf():
    b, bq, s = combined_inputs()
    shared = tf.image.combined_non_max_suppression(b, s, 3, 5, 0.3, 0.2)
    per_class = tf.image.combined_non_max_suppression(bq, s, 2, 10, 0.4, pad_per_class=True, clip_boxes=False)
    assert shared[0].shape.as_list() == [2, 5, 4] and per_class[1].shape.as_list() == [2, 6]
    got = run_modes([list(shared), list(per_class)])
    for prefix, outs in zip(("combined_", "combined_q_"), got):
        for k, v in zip(("boxes", "scores", "classes", "valid"), outs):
            np.testing.assert_allclose(v, TF[prefix + k], rtol=1e-6, err_msg=prefix + k)
    with pytest.raises(ValueError, match="4-D"):
        tf.image.combined_non_max_suppression(b[0], s, 3, 5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="q 1 or num_classes"):
        run(tf.image.combined_non_max_suppression(np.zeros((2, 10, 2, 4), np.float32), s, 3, 5)[0])
