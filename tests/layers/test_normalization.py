"""tf.layers.batch_normalization: variables and UPDATE_OPS as TF1, moving statistics after N
update steps against numpy, training as a fed placeholder, inference with the moving statistics.

Names come from TensorFlow 2.21.0's tf.compat.v1.layers (TF_USE_LEGACY_KERAS=1). TF takes its
fused kernel for 4-D inputs normalized along axis 3 (or 1), whose moving variance gets the
batch variance with Bessel's correction; other inputs get the biased one (checked in TF 2.21.0).
"""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import LOCAL_MODES, make_session


def _names(key):
    return [v.name for v in tf.get_collection(key)]


def test_variables_and_update_ops_as_tf1():
    c = tf.placeholder(tf.float32, [None, 6, 6, 4])
    x1 = tf.placeholder(tf.float32, [None, 10, 3])
    tr = tf.placeholder(tf.bool)
    tf.layers.batch_normalization(c, training=True)
    tf.layers.batch_normalization(x1, training=tr, momentum=0.9)
    tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, 5]), axis=1, center=False, scale=False)
    # TF 2.21.0 tf.compat.v1.layers
    assert _names(tf.GraphKeys.GLOBAL_VARIABLES) == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0", "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0", "batch_normalization_1/gamma:0", "batch_normalization_1/beta:0",
        "batch_normalization_1/moving_mean:0", "batch_normalization_1/moving_variance:0",
        "batch_normalization_2/moving_mean:0", "batch_normalization_2/moving_variance:0"]
    assert _names(tf.GraphKeys.TRAINABLE_VARIABLES) == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0", "batch_normalization_1/gamma:0",
        "batch_normalization_1/beta:0"]
    assert _names(tf.GraphKeys.MODEL_VARIABLES) == [] and _names(tf.GraphKeys.MOVING_AVERAGE_VARIABLES) == []
    # two updates per training layer (TF: AssignMovingAvg ops, or cond outputs for a tensor flag);
    # none for training=False
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 4
    assert all(u.name.startswith(("batch_normalization/", "batch_normalization_1/")) for u in updates)


@pytest.mark.parametrize("shape,axis,bessel", [((4, 3, 3, 2), -1, True), ((4, 2, 3, 3), 1, True),
                                               ((6, 3), -1, False), ((5, 4, 3), -1, False)])
def test_moving_statistics_after_n_steps_against_numpy(shape, axis, bessel):
    rng = np.random.RandomState(0)
    batches = [(rng.randn(*shape) * 2 + 1).astype(np.float32) for _ in range(3)]
    x = tf.placeholder(tf.float32, shape)
    layer = tf.layers.BatchNormalization(axis=axis, momentum=0.9, gamma_initializer=tf.constant_initializer(1.5),
                                         beta_initializer=tf.constant_initializer(-0.5))
    y = layer(x, training=True)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        step = tf.identity(y)
    ax = axis % len(shape)
    reduce = tuple(i for i in range(len(shape)) if i != ax)
    bshape = [1] * len(shape)
    bshape[ax] = shape[ax]
    n = np.prod([shape[i] for i in reduce])
    for mode in LOCAL_MODES:
        mm, mv = np.zeros(shape[ax]), np.ones(shape[ax])
        with make_session(mode, chunks=2) as s:
            s.run(tf.global_variables_initializer())
            for xb in batches:
                out = s.run(step, {x: xb})
                m, v = xb.mean(reduce), xb.var(reduce)
                ref = (xb - m.reshape(bshape)) / np.sqrt(v.reshape(bshape) + 1e-3) * 1.5 - 0.5
                np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
                mm = mm - (mm - m) * 0.1
                mv = mv - (mv - v * (n / (n - 1) if bessel else 1)) * 0.1
            got_mm, got_mv = s.run([layer.moving_mean, layer.moving_variance])
        np.testing.assert_allclose(got_mm, mm, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got_mv, mv, rtol=1e-5, atol=1e-6)


def test_training_placeholder_switches_between_batch_and_moving_statistics():
    rng = np.random.RandomState(1)
    xb = (rng.randn(8, 3) * 3 + 2).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3])
    training = tf.placeholder(tf.bool, [])
    y = tf.layers.batch_normalization(x, training=training, momentum=0.5)
    update = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    mean_var, var_var = tf.global_variables()[2:4]
    for mode in LOCAL_MODES:
        with make_session(mode, chunks=4) as s:
            s.run(tf.global_variables_initializer())
            out_infer = s.run([y] + update, {x: xb, training: False})[0]
            # inference: moving mean 0, variance 1, and the updates leave them unchanged
            np.testing.assert_allclose(out_infer, xb / np.sqrt(1 + 1e-3), rtol=1e-5)
            np.testing.assert_allclose(s.run(mean_var), 0)
            out_train = s.run([y] + update, {x: xb, training: True})[0]
            np.testing.assert_allclose(out_train, (xb - xb.mean(0)) / np.sqrt(xb.var(0) + 1e-3), rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(s.run(mean_var), 0.5 * xb.mean(0), rtol=1e-5)
            np.testing.assert_allclose(s.run(var_var), 0.5 + 0.5 * xb.var(0), rtol=1e-5)


def test_reuse_and_gradients():
    x = tf.constant(np.random.RandomState(2).randn(6, 3))
    with tf.variable_scope("bn"):
        y = tf.layers.batch_normalization(x, training=True, name="n")
    with tf.variable_scope("bn", reuse=True):
        tf.layers.batch_normalization(x, training=True, name="n")
    assert len(tf.global_variables()) == 4
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        err = tf.test.compute_gradient_error(x, [6, 3], y, [6, 3])
    assert err < 1e-4


def test_unsupported_options_and_bad_axes_raise():
    with pytest.raises(NotImplementedError, match="renorm"):
        tf.layers.BatchNormalization(renorm=True)
    with pytest.raises(ValueError, match="undefined `axis` dimension"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, None]))
    with pytest.raises(ValueError, match="Invalid axis"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, 3]), axis=4)
