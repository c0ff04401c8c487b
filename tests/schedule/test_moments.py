"""The one-pass centered-moment rewrite (dflow/schedule/moments.py): a variance whose mean comes from
an earlier stage is computed in the mean's pass, with the same answers as numpy in float64."""

import numpy as np
import pytest
import zarr

import dflow as tf
from dflow.schedule.moments import Partials, _chunk, _merge


def _zarr(tmp_path, value, chunks):
    zarr.create_array(str(tmp_path / "x.zarr"), data=value, chunks=chunks)
    return str(tmp_path / "x.zarr")


def _staged(fetches, feed_dict=None):
    s = tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="1MB")  # stage_bytes = 256 KiB
    plan, _ = s._plan_for(fetches, feed_dict)
    return s, plan


@pytest.mark.parametrize("form", ["square", "squared_difference", "mul", "reversed"])
def test_variance_forms_take_one_read(tmp_path, form):
    rng = np.random.default_rng(1)
    # large offsets, small spread: sum-of-squares formulas lose every digit here
    X = (rng.standard_normal((3000, 40)) * rng.uniform(0.01, 2, 40) + rng.uniform(-3e3, 3e3, 40)).astype("f4")
    x = tf.io.read_zarr(_zarr(tmp_path, X, (400, 40)))
    m = tf.reduce_mean(x, 0)
    d = {"square": lambda: tf.square(x - m), "squared_difference": lambda: tf.squared_difference(x, m),
         "mul": lambda: (x - m) * (x - m), "reversed": lambda: tf.square(m - x)}[form]()
    var = tf.reduce_mean(d, 0)
    s, plan = _staged(var)
    assert len(plan.stages) == 1 and len(plan.stages[0].slots) == 2  # the mean and var's partials
    X64 = X.astype(np.float64)
    np.testing.assert_allclose(s.run(var), X64.var(0), rtol=1e-4)


@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("axes", [(0,), (0, 2), (2,)])
def test_sum_and_mean_over_axes_match_numpy(tmp_path, axes, keep_dims):
    X = np.random.default_rng(2).random((64, 5, 48)).astype("f4") * 10 + 5
    x = tf.io.read_zarr(_zarr(tmp_path, X, (8, 5, 12)))
    m = tf.reduce_mean(x, axes, keepdims=True)
    fetches = [tf.reduce_sum(tf.square(x - m), axes, keepdims=keep_dims),
               tf.reduce_mean(tf.square(x - m), axes, keepdims=keep_dims)]
    s = tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="256KB")
    X64 = X.astype(np.float64)
    dev = (X64 - X64.mean(axes, keepdims=True)) ** 2
    got = s.run(fetches)
    np.testing.assert_allclose(got[0], dev.sum(axes, keepdims=keep_dims), rtol=1e-4)
    np.testing.assert_allclose(got[1], dev.mean(axes, keepdims=keep_dims), rtol=1e-4)
    assert got[1].dtype == np.float32


def test_centre_need_not_be_the_mean(tmp_path):
    X = np.random.default_rng(3).random((4000, 30)).astype("f4")
    x = tf.io.read_zarr(_zarr(tmp_path, X, (250, 30)))
    c = tf.reduce_max(x, 0) * 0.5 + 1.0
    out = tf.reduce_sum(tf.square(x - c), 0)
    s, plan = _staged(out)
    assert len(plan.stages) == 1
    X64 = X.astype(np.float64)
    np.testing.assert_allclose(s.run(out), ((X64 - (X64.max(0) * 0.5 + 1)) ** 2).sum(0), rtol=1e-5)


def test_not_rewritten_when_the_centre_varies_along_the_reduced_axis(tmp_path):
    X = np.random.default_rng(4).random((4000, 30)).astype("f4")
    x = tf.io.read_zarr(_zarr(tmp_path, X, (250, 30)))
    c = x * tf.reduce_mean(x, 0)  # not constant down the rows: the identity does not hold
    out = tf.reduce_sum(tf.square(x - c), 0)
    s, plan = _staged(out)
    assert not any(isinstance(slot.tensor, Partials) for st in plan.stages for slot in st.slots)
    X64 = X.astype(np.float64)
    np.testing.assert_allclose(s.run(out), ((X64 - X64 * X64.mean(0)) ** 2).sum(0), rtol=1e-4)


def test_gradients_of_a_variance_are_unchanged(tmp_path):
    X = np.random.default_rng(5).random((4000, 20)).astype("f4")
    x = tf.io.read_zarr(_zarr(tmp_path, X, (250, 20)))
    w = tf.Variable(np.ones(20, np.float32))
    xw = x * w
    var = tf.reduce_sum(tf.reduce_mean(tf.square(xw - tf.reduce_mean(xw, 0)), 0))
    (g,) = tf.gradients(var, [w])
    s = tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="1MB")
    s.run(w.initializer)
    X64 = X.astype(np.float64)
    np.testing.assert_allclose(s.run(var), X64.var(0).sum(), rtol=1e-4)
    np.testing.assert_allclose(s.run(g), 2 * X64.var(0), rtol=1e-4)


def test_chunk_partials_merge_exactly():
    rng = np.random.default_rng(6)
    parts = [rng.standard_normal((n, 7)).astype("f4") * 3 + 1e3 for n in (5, 300, 1, 44)]
    stats = np.concatenate([_chunk(p, (0,)) for p in parts], axis=1)
    merged = _merge(stats, axis=(1,))
    whole = np.concatenate(parts).astype(np.float64)
    np.testing.assert_allclose(merged[0, 0], len(whole))
    np.testing.assert_allclose(merged[1, 0], whole.mean(0), rtol=1e-12)
    np.testing.assert_allclose(merged[2, 0], ((whole - whole.mean(0)) ** 2).sum(0), rtol=1e-5)
