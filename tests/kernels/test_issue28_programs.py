"""TF1-style programs over issue 28's single names, run in every program mode (tests/conftest.py)."""

import numpy as np
import pytest

import dflow as tf


@pytest.mark.program
def test_eval_loop_with_confusion_matrix_histogram_and_scatter_nd_counts():
    # an evaluation loop as TF1 code wrote it: a confusion matrix per batch, accumulated in a
    # variable with scatter_nd_add, plus a histogram of the scores and the sorted top scores
    labels = tf.placeholder(tf.int32, [None], name="labels")
    scores = tf.placeholder(tf.float32, [None, 3], name="scores")
    preds = tf.argmax(scores, axis=1, output_type=tf.int32)
    cm = tf.confusion_matrix(labels, preds, num_classes=3)
    counts = tf.Variable(tf.zeros([3, 3], tf.int32), name="counts")
    pairs = tf.stack([labels, preds], axis=1)
    update = tf.scatter_nd_add(counts, pairs, tf.ones_like(labels))
    hist = tf.histogram_fixed_width(tf.reduce_max(scores, axis=1), [0.0, 1.0], nbins=4)
    best = tf.sort(tf.reduce_max(scores, axis=1), direction="DESCENDING")[:2]
    rng = np.random.default_rng(5)
    batches = [(rng.integers(0, 3, 6), rng.random((6, 3)).astype(np.float32)) for _ in range(3)]
    total = np.zeros((3, 3), np.int64)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for lv, sv in batches:
            c, _, h, b = sess.run([cm, update, hist, best], {labels: lv, scores: sv})
            want = np.zeros((3, 3), np.int64)
            np.add.at(want, (lv, sv.argmax(1)), 1)
            total += want
            np.testing.assert_array_equal(c, want)
            np.testing.assert_array_equal(h, np.histogram(sv.max(1), bins=4, range=(0, 1))[0])
            np.testing.assert_allclose(b, np.sort(sv.max(1))[::-1][:2])
        np.testing.assert_array_equal(sess.run(counts), total)


@pytest.mark.program
def test_augmentation_pipeline_with_seeded_random_ops():
    images = tf.placeholder(tf.float32, [None, 6, 6, 3])
    tf.set_random_seed(7)
    x = tf.image.random_flip_left_right(images, seed=1)
    x = tf.image.random_hue(x, 0.1, seed=2)
    x = tf.image.random_saturation(x, 0.8, 1.2, seed=3)
    x = tf.image.adjust_gamma(tf.clip_by_value(x, 0.0, 1.0), 1.2)
    x = tf.image.rot90(x, 1)
    tv = tf.image.total_variation(x)
    data = np.random.default_rng(0).random((4, 6, 6, 3)).astype(np.float32)
    with tf.Session() as sess:
        a, t = sess.run([x, tv], {images: data})
    with tf.Session() as sess:  # a second session over the same seeded graph: the same draws
        b = sess.run(x, {images: data})
    assert a.shape == (4, 6, 6, 3) and t.shape == (4,)
    np.testing.assert_allclose(a, b)
