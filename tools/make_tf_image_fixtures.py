"""Writes tests/fixtures/tf_image/tf1_image.npz: TF 1.x's outputs of the tf.image ops dflow
re-implements (quality measures, Sobel, crop_and_resize and its gradients, the NMS family), on
inputs the tests rebuild from the same numpy seeds. Run with TensorFlow's interpreter:

    /tmp/tfenv/bin/python tools/make_tf_image_fixtures.py
"""

from __future__ import annotations

import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tests.kernels.image_fixture import combined_inputs, inputs  # noqa: E402  (the tests' own inputs)

tf.disable_v2_behavior()

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "tf_image", "tf1_image.npz")


def main():
    x = inputs()
    out = {}
    with tf.Session() as s:
        img, boxes = tf.constant(x["img"]), tf.constant(x["boxes"])
        crops = tf.image.crop_and_resize(img, boxes, x["box_ind"], [3, 4])
        w = np.random.RandomState(1).rand(4, 3, 4, 3).astype(np.float32)
        g_img, g_boxes = tf.gradients(tf.reduce_sum(crops * w), [img, boxes])
        ai, bi = (x["a"] * 255).astype(np.uint8), (x["b"] * 255).astype(np.uint8)
        fetch = {
            "psnr": tf.image.psnr(x["a"], x["b"], 1.0),
            "psnr_uint8": tf.image.psnr(ai, bi, 255),
            "ssim": tf.image.ssim(x["a"], x["b"], 1.0),
            "ssim_uint8": tf.image.ssim(ai, bi, 255),
            "ssim_small_filter": tf.image.ssim(x["a"], x["b"], 1.0, filter_size=5, filter_sigma=0.8),
            "ms_ssim": tf.image.ssim_multiscale(x["big_a"], x["big_b"], 1.0, power_factors=(0.3, 0.3, 0.4),
                                               filter_size=5),
            "sobel": tf.image.sobel_edges(tf.constant(x["a"][:, :6, :7])),
            "crops": crops,
            "crops_grad_image": g_img,
            "crops_grad_boxes": g_boxes,
            "crops_nearest": tf.image.crop_and_resize(img, boxes, x["box_ind"], [5, 2], method="nearest",
                                                      extrapolation_value=-1.0),
            "crops_1x1": tf.image.crop_and_resize(img, boxes, x["box_ind"], [1, 1]),
            "bicubic": tf.image.resize_bicubic(img, [9, 4]),
            "bicubic_align": tf.image.resize_bicubic(img, [3, 11], align_corners=True),
            "area": tf.image.resize_area(img, [3, 4]),
            "area_up": tf.image.resize_area(img, [8, 10]),
            "bicubic_grad": tf.gradients(tf.reduce_sum(tf.image.resize_bicubic(img, [9, 4]) ** 2), img)[0],
        }
        for k, v in zip(("nms_hard_idx", "nms_hard_scores"),
                        tf.image.non_max_suppression_with_scores(x["nms_boxes"], x["nms_scores"], 12, 0.3)):
            fetch[k] = v
        for k, v in zip(("nms_soft_idx", "nms_soft_scores"),
                        tf.image.non_max_suppression_with_scores(x["nms_boxes"], x["nms_scores"], 12, 0.3, 0.2,
                                                                 soft_nms_sigma=0.5)):
            fetch[k] = v
        idx, valid = tf.raw_ops.NonMaxSuppressionV4(boxes=x["nms_boxes"], scores=x["nms_scores"], max_output_size=15,
                                                   iou_threshold=0.2, score_threshold=0.1,
                                                   pad_to_max_output_size=True)
        fetch["nms_padded_idx"], fetch["nms_padded_valid"] = idx, valid
        fetch["nms_overlaps"] = tf.image.non_max_suppression_overlaps(x["overlaps"], x["nms_scores"], 10, 0.6, 0.1)
        b, bq, sc = combined_inputs()
        for k, v in zip(("boxes", "scores", "classes", "valid"), tf.image.combined_non_max_suppression(b, sc, 3, 5, 0.3, 0.2)):
            fetch["combined_" + k] = v
        for k, v in zip(("boxes", "scores", "classes", "valid"),
                        tf.image.combined_non_max_suppression(bq, sc, 2, 10, 0.4, pad_per_class=True, clip_boxes=False)):
            fetch["combined_q_" + k] = v
        out = s.run(fetch)
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT}: {sorted(out)}")


if __name__ == "__main__":
    main()
