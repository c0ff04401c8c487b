"""The inputs (fixed numpy seeds) tools/make_tf_image_fixtures.py runs TF 1.x on, and TF's outputs on
them (tests/fixtures/tf_image/tf1_image.npz)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tf_image" / "tf1_image.npz"


def inputs():
    rng = np.random.RandomState(0)
    a = rng.rand(2, 16, 17, 3).astype(np.float32)
    b = np.clip(a + 0.1 * rng.randn(*a.shape), 0, 1).astype(np.float32)
    big_a = rng.rand(1, 45, 38, 2).astype(np.float32)
    big_b = np.clip(big_a + 0.2 * rng.randn(*big_a.shape), 0, 1).astype(np.float32)
    img = rng.rand(2, 5, 6, 3).astype(np.float32)
    boxes = np.array([[0.1, 0.2, 0.7, 0.9], [0.5, 0.5, 0.2, 0.1], [-0.2, 0.0, 1.3, 1.0], [0.3, 0.3, 0.3, 0.3]],
                     np.float32)
    box_ind = np.array([0, 1, 1, 0], np.int32)
    nms_boxes = (rng.rand(20, 4) * [1, 1, 0.5, 0.5]).astype(np.float32)
    nms_boxes[:, 2:] += nms_boxes[:, :2]
    nms_scores = rng.rand(20).astype(np.float32)
    nms_scores[3] = nms_scores[5]  # a tie: the lower index first
    overlaps = rng.rand(20, 20).astype(np.float32)
    return dict(a=a, b=b, big_a=big_a, big_b=big_b, img=img, boxes=boxes, box_ind=box_ind, nms_boxes=nms_boxes,
                nms_scores=nms_scores, overlaps=overlaps)


def combined_inputs():
    """Inputs of combined_non_max_suppression: shared boxes, per-class boxes, scores."""
    rng = np.random.RandomState(5)
    b = (rng.rand(2, 10, 1, 4) * [1, 1, .5, .5]).astype(np.float32)
    b[..., 2:] += b[..., :2]
    b[0, 0, 0] = [-0.1, 0.2, 1.2, 0.9]  # clipped by clip_boxes
    bq = (rng.rand(2, 10, 3, 4) * [1, 1, .5, .5]).astype(np.float32)
    bq[..., 2:] += bq[..., :2]
    s = rng.rand(2, 10, 3).astype(np.float32)
    return b, bq, s


def tf_outputs():
    with np.load(FIXTURE) as f:
        return {k: f[k] for k in f.files}
