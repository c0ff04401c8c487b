"""Data-dependent shapes (boolean_mask, where(cond), unique, dynamic_partition/stitch, gather_nd,
sequence_mask) against numpy, in every local mode with small chunks so the chunked lowerings see
several chunks of unknown size; static shapes; errors; chains of data-dependent results."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf
from dflow.kernels import data_dependent_ops as dd
from tests.conftest import LOCAL_MODES, make_session, run_modes


def _first_occurrence_unique(v):
    y, first, inv = np.unique(v, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.argsort(order)
    return y[order], rank[inv.reshape(-1)]


def _raises_in_each_mode(fetch, feed, match, modes=LOCAL_MODES):
    for m in modes:
        with make_session(m, chunks=2) as s, pytest.raises(tf.errors.InvalidArgumentError, match=match):
            s.run(fetch, feed)


# ---- boolean_mask ---------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_boolean_mask_matches_numpy(data):
    rank = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    k = data.draw(st.integers(1, rank))
    axis = data.draw(st.integers(0, rank - k))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.normal(size=shape).astype(np.float32)
    mask = rng.random(shape[axis:axis + k]) > 0.5
    xt = tf.placeholder(tf.float32, [None] * rank)
    mt = tf.placeholder(tf.bool, [None] * k)
    y = dd.boolean_mask(xt, mt, axis=axis)
    assert y.shape.as_list() == [None] * (axis + 1) + [None] * (rank - axis - k)
    expect = x[(slice(None),) * axis + (mask,)]
    got, n = run_modes([y, tf.shape(y)], {xt: x, mt: mask})
    np.testing.assert_array_equal(got, expect)
    np.testing.assert_array_equal(n, expect.shape)


def test_boolean_mask_static_shape_and_numeric_mask():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 4, 3)).astype(np.float32)
    m = (rng.random((6, 4)) > 0.5).astype(np.int32)
    y = dd.boolean_mask(tf.constant(x), tf.constant(m))
    assert y.shape.as_list() == [None, 3] and y.op.type == "BooleanMask" and y.op.name == "boolean_mask"
    np.testing.assert_array_equal(run_modes(y), x[m != 0])
    assert dd.boolean_mask(tf.placeholder(tf.float32, [2, 4, 3]), tf.placeholder(tf.bool, [4]),
                           axis=1).shape.as_list() == [2, None, 3]


def test_boolean_mask_errors():
    x = tf.placeholder(tf.float32, [3, 2])
    with pytest.raises(ValueError, match="scalar"):
        dd.boolean_mask(x, True)
    with pytest.raises(ValueError, match="must be specified"):
        dd.boolean_mask(x, tf.placeholder(tf.bool))
    with pytest.raises(ValueError, match="incompatible"):
        dd.boolean_mask(x, tf.constant([True, False]))
    m = tf.placeholder(tf.bool, [None])
    _raises_in_each_mode(dd.boolean_mask(x, m), {x: np.ones((3, 2), np.float32), m: [True] * 4}, "mask shape")


def test_results_of_one_source_combine_and_reduce():
    """Elementwise ops between results of one mask, reductions and shape work on unknown chunks."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(9, 2)).astype(np.float32)
    m = rng.random(9) > 0.4
    xt, mt = tf.placeholder(tf.float32, [9, 2]), tf.placeholder(tf.bool, [9])
    a = dd.boolean_mask(xt, mt)
    b = dd.boolean_mask(xt * 2.0, mt)
    out = run_modes([a + b, tf.reduce_sum(a, axis=0), tf.reduce_sum(b), tf.shape(a)], {xt: x, mt: m})
    np.testing.assert_allclose(out[0], 3 * x[m], rtol=1e-6)
    np.testing.assert_allclose(out[1], x[m].sum(0), rtol=1e-5)
    np.testing.assert_allclose(out[2], 2 * x[m].sum(), rtol=1e-5)
    np.testing.assert_array_equal(out[3], [m.sum(), 2])


def test_boolean_mask_gradient():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(7, 3)).astype(np.float32)
    m = rng.random(7) > 0.5
    xt, mt = tf.placeholder(tf.float32, [7, 3], chunks=3), tf.placeholder(tf.bool, [7], chunks=2)
    y = dd.boolean_mask(xt * xt, mt)
    (g,) = tf.gradients(tf.reduce_sum(y), [xt])
    np.testing.assert_allclose(run_modes(g, {xt: x, mt: m}), 2 * x * m[:, None], rtol=1e-6)
    gy = tf.placeholder(tf.float32, [None, 3])  # a gradient chunked unlike the masked result
    (g2,) = tf.gradients(y, [xt], grad_ys=gy)
    w = rng.normal(size=(m.sum(), 3)).astype(np.float32)
    expect = np.zeros_like(x)
    expect[m] = 2 * x[m] * w
    np.testing.assert_allclose(run_modes(g2, {xt: x, mt: m, gy: w}), expect, rtol=1e-6)


# ---- where(condition) ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(7,), (5, 4), (3, 4, 2)])
def test_where_coordinates(shape):
    rng = np.random.default_rng(4)
    c = rng.random(shape) > 0.6
    ct = tf.placeholder(tf.bool, shape)
    w = dd.where_coordinates(ct)
    assert w.shape.as_list() == [None, len(shape)] and w.dtype == tf.int64 and w.op.type == "Where"
    got = run_modes(w, {ct: c})
    np.testing.assert_array_equal(got, np.argwhere(c))
    assert got.dtype == np.int64
    numeric = run_modes(dd.where_coordinates(tf.constant(c.astype(np.float32) * 3)))
    np.testing.assert_array_equal(numeric, np.argwhere(c))


def test_where_of_a_scalar_is_an_error():
    with pytest.raises(ValueError, match="rank"):
        dd.where_coordinates(tf.constant(True))


# ---- unique ----------------------------------------------------------------------------------------


def test_unique_first_occurrence_order():
    rng = np.random.default_rng(5)
    v = rng.integers(0, 6, 17).astype(np.int32)
    xt = tf.placeholder(tf.int32, [None])
    u = dd.unique(xt)
    assert u.y.shape.as_list() == [None] and u.idx.shape.as_list() == [None] and u.idx.dtype == tf.int32
    y, idx = run_modes(list(u), {xt: v})
    ey, eidx = _first_occurrence_unique(v)
    np.testing.assert_array_equal(y, ey)
    np.testing.assert_array_equal(idx, eidx)
    y2, idx2 = run_modes(list(dd.unique(xt, out_idx=tf.int64)), {xt: v})
    assert idx2.dtype == np.int64
    np.testing.assert_array_equal(idx2, eidx)


def test_unique_nans_are_distinct_and_rank_checked():
    y, idx = run_modes(list(dd.unique(tf.constant([np.nan, 1.0, np.nan, 1.0], tf.float32))))
    assert y.shape == (3,) and np.isnan(y[0]) and y[1] == 1 and np.isnan(y[2])
    np.testing.assert_array_equal(idx, [0, 1, 2, 1])
    with pytest.raises(ValueError, match="rank 1"):
        dd.unique(tf.constant([[1, 2]]))


def test_chains_of_data_dependent_results():
    """unique / where / boolean_mask of inputs whose chunk sizes are unknown."""
    rng = np.random.default_rng(6)
    v = rng.integers(0, 5, 12).astype(np.int32)
    m = rng.random(12) > 0.3
    xt, mt = tf.placeholder(tf.int32, [12]), tf.placeholder(tf.bool, [12])
    kept = dd.boolean_mask(xt, mt)
    u = dd.unique(kept)
    big = dd.boolean_mask(kept, kept > 1)
    w = dd.where_coordinates(kept > 2)
    got = run_modes([u.y, u.idx, big, w], {xt: v, mt: m})
    ey, eidx = _first_occurrence_unique(v[m])
    np.testing.assert_array_equal(got[0], ey)
    np.testing.assert_array_equal(got[1], eidx)
    np.testing.assert_array_equal(got[2], v[m][v[m] > 1])
    np.testing.assert_array_equal(got[3], np.argwhere(v[m] > 2))


def test_data_dependent_ops_on_every_scheduler(any_mode, sess_factory):
    v = np.array([4, 1, 4, 0, 3, 1, 2, 2], np.int32)
    xt = tf.placeholder(tf.int32, [8])
    kept = dd.boolean_mask(xt, xt > 0)
    u = dd.unique(kept)
    parts = dd.dynamic_partition(xt, tf.cast(xt > 2, tf.int32), 2)
    ids = dd.dynamic_partition(tf.range(8), tf.cast(xt > 2, tf.int32), 2)
    back = dd.dynamic_stitch(ids, parts)
    picked = dd.gather_nd(xt, dd.where_coordinates(xt > 2))
    with sess_factory(any_mode, chunks=3) as s:
        got = s.run([kept, u.y, u.idx, tf.shape(kept), back, picked], {xt: v})
    np.testing.assert_array_equal(got[0], [4, 1, 4, 3, 1, 2, 2])
    np.testing.assert_array_equal(got[1], [4, 1, 3, 2])
    np.testing.assert_array_equal(got[2], [0, 1, 0, 2, 1, 3, 3])
    np.testing.assert_array_equal(got[3], [7])
    np.testing.assert_array_equal(got[4], v)
    np.testing.assert_array_equal(got[5], [4, 4, 3])


# ---- dynamic_partition / dynamic_stitch --------------------------------------------------------------


@pytest.mark.parametrize("p_shape", [(6,), (3, 2)])
def test_dynamic_partition(p_shape):
    rng = np.random.default_rng(7)
    data = rng.normal(size=p_shape + (2,)).astype(np.float32)
    p = rng.integers(0, 3, p_shape).astype(np.int32)
    dt, pt = tf.placeholder(tf.float32, data.shape), tf.placeholder(tf.int32, p_shape)
    parts = dd.dynamic_partition(dt, pt, 3)
    assert len(parts) == 3 and all(t.shape.as_list() == [None, 2] for t in parts)
    got = run_modes(parts, {dt: data, pt: p})
    for i in range(3):
        np.testing.assert_array_equal(got[i], data[p == i])
    _raises_in_each_mode(parts[0], {dt: data, pt: np.full(p_shape, 3, np.int32)}, r"is not in \[0, 3\)")
    with pytest.raises(ValueError, match="partitions shape .* incompatible"):
        dd.dynamic_partition(dt, tf.placeholder(tf.int32, [4]), 2)


def test_dynamic_stitch_constant_and_fed_indices():
    d0 = np.array([[1, 2], [3, 4]], np.float32)
    d1 = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    idx = [np.array([0, 2], np.int32), np.array([[1, 5], [6, 1]], np.int32)]
    st_ = dd.dynamic_stitch([tf.constant(i) for i in idx], [tf.constant(d0), tf.constant(d1)])
    assert st_.shape.as_list() == [7, 2]
    expect = np.zeros((7, 2), np.float32)
    expect[[0, 2]] = d0
    expect[[1, 5]] = d1[0]
    expect[[6, 1]] = d1[1]  # later entries win; row 3 and 4 are unset (zeros)
    np.testing.assert_array_equal(run_modes(st_), expect)
    it = [tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int32, [2, 2])]
    fed = dd.dynamic_stitch(it, [tf.constant(d0), tf.constant(d1)])
    assert fed.shape.as_list() == [None, 2]
    np.testing.assert_array_equal(run_modes(fed, {it[0]: idx[0], it[1]: idx[1]}), expect)
    _raises_in_each_mode(fed, {it[0]: [-1, 0], it[1]: idx[1]}, "out of range")
    with pytest.raises(ValueError, match="must match"):
        dd.dynamic_stitch([tf.constant([0])], [tf.constant([1.0])] * 2)


def test_partition_stitch_round_trip_and_gradients():
    """The TF1 idiom: partition, work on each part, stitch back (data of unknown chunk sizes)."""
    rng = np.random.default_rng(8)
    x = rng.normal(size=(10, 3)).astype(np.float32)
    p = rng.integers(0, 2, 10).astype(np.int32)
    xt, pt = tf.placeholder(tf.float32, [10, 3]), tf.placeholder(tf.int32, [10])
    ids = dd.dynamic_partition(tf.range(10), pt, 2)
    parts = dd.dynamic_partition(xt, pt, 2)
    y = dd.dynamic_stitch(ids, [parts[0] * 2.0, parts[1] * 3.0])
    expect = x * np.where(p == 0, 2.0, 3.0)[:, None]
    np.testing.assert_allclose(run_modes(y, {xt: x, pt: p}), expect, rtol=1e-6)
    w = np.linspace(1, 2, 10, dtype=np.float32)[:, None]
    sq = dd.dynamic_partition(xt * xt * w, pt, 2)
    (g,) = tf.gradients(tf.reduce_sum(dd.dynamic_stitch(ids, sq)), [xt])
    np.testing.assert_allclose(run_modes(g, {xt: x, pt: p}), 2 * x * w, rtol=1e-5)


# ---- gather_nd ------------------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_gather_nd_matches_numpy(data):
    rank = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    depth = data.draw(st.integers(0, rank))
    lead = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    params = rng.normal(size=shape).astype(np.float32)
    idx = np.stack([rng.integers(0, shape[j], lead) for j in range(depth)], -1).astype(np.int32) if depth else \
        np.zeros(lead + (0,), np.int32)
    pt, it = tf.placeholder(tf.float32, shape), tf.placeholder(tf.int32, idx.shape)
    g = dd.gather_nd(pt, it)
    assert g.shape.as_list() == list(lead) + list(shape[depth:])
    expect = params[tuple(np.moveaxis(idx, -1, 0))] if depth else np.broadcast_to(params, lead + shape)
    np.testing.assert_array_equal(run_modes(g, {pt: params, it: idx}), expect)


def test_gather_nd_batch_dims_errors_and_gradient():
    rng = np.random.default_rng(9)
    params = rng.normal(size=(3, 4, 2)).astype(np.float32)
    idx = rng.integers(0, 4, (3, 5, 1)).astype(np.int64)
    g = dd.gather_nd(tf.constant(params), tf.constant(idx), batch_dims=1)
    assert g.shape.as_list() == [3, 5, 2]
    np.testing.assert_array_equal(run_modes(g), np.stack([params[b][idx[b, :, 0]] for b in range(3)]))
    with pytest.raises(ValueError, match="params.rank"):
        dd.gather_nd(tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.int32, [5, 3]))
    with pytest.raises(TypeError):
        dd.gather_nd(tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [5, 2]))
    pt, it = tf.placeholder(tf.float32, [3, 4]), tf.placeholder(tf.int32, [2, 2])
    _raises_in_each_mode(dd.gather_nd(pt, it), {pt: params[:, :, 0], it: [[0, 1], [3, 0]]}, "does not index")
    ii = np.array([[0, 1], [2, 3], [0, 1]], np.int32)
    (grad,) = tf.gradients(tf.reduce_sum(dd.gather_nd(pt, tf.constant(ii)) * 2.0), [pt])
    expect = np.zeros((3, 4), np.float32)
    np.add.at(expect, (ii[:, 0], ii[:, 1]), 2.0)
    np.testing.assert_allclose(run_modes(grad, {pt: params[:, :, 0]}), expect)


def test_gather_nd_of_where_is_boolean_mask():
    rng = np.random.default_rng(10)
    x = rng.normal(size=(5, 4)).astype(np.float32)
    m = rng.random((5, 4)) > 0.5
    xt, mt = tf.placeholder(tf.float32, [5, 4]), tf.placeholder(tf.bool, [5, 4])
    picked = dd.gather_nd(xt, dd.where_coordinates(mt))
    (g,) = tf.gradients(tf.reduce_sum(picked), [xt])
    got, grad = run_modes([picked, g], {xt: x, mt: m})
    np.testing.assert_array_equal(got, x[m])
    np.testing.assert_array_equal(grad, m.astype(np.float32))


# ---- sequence_mask ------------------------------------------------------------------------------------------


def test_sequence_mask():
    lengths = np.array([[1, 3], [0, 2], [4, 2]], np.int32)
    lt = tf.placeholder(tf.int32, [3, 2])
    fixed = dd.sequence_mask(lt, 5, dtype=tf.float32)
    free = dd.sequence_mask(lt)
    const = dd.sequence_mask(tf.constant(lengths))
    assert fixed.shape.as_list() == [3, 2, 5] and fixed.dtype == tf.float32
    assert free.shape.as_list() == [3, 2, None] and const.shape.as_list() == [3, 2, 4]
    got = run_modes([fixed, free, const, tf.shape(free)], {lt: lengths})
    np.testing.assert_array_equal(got[0], (np.arange(5) < lengths[..., None]).astype(np.float32))
    np.testing.assert_array_equal(got[1], np.arange(4) < lengths[..., None])
    np.testing.assert_array_equal(got[2], got[1])
    np.testing.assert_array_equal(got[3], [3, 2, 4])
    floats = run_modes(dd.sequence_mask(tf.constant([1.5, 2.0]), 3))
    np.testing.assert_array_equal(floats, [[True, False, False], [True, True, False]])
    with pytest.raises(ValueError, match="scalar"):
        dd.sequence_mask(lt, [3])


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_elementwise_between_two_masks_pairs_rows_not_blocks(scheduler):
    # the masks keep rows from different chunks: positional block pairing would be wrong
    a = tf.placeholder(tf.float32, [8])
    b = tf.placeholder(tf.float32, [8])
    ma, mb = tf.boolean_mask(a, a > 0), tf.boolean_mask(b, b > 0)
    av = np.array([1, 2, 3, -1, -1, -1, -1, 4], np.float32)
    bv = np.array([-1, -1, -1, 5, 6, 7, 8, -1], np.float32)
    with tf.Session(scheduler=scheduler, chunks=4) as s:
        np.testing.assert_array_equal(s.run(ma + mb, {a: av, b: bv}), av[av > 0] + bv[bv > 0])
        np.testing.assert_array_equal(s.run(ma * 2 + ma, {a: av}), av[av > 0] * 3)
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(ma + mb, {a: av, b: np.ones(8, np.float32)})  # 4 rows + 8 rows


def test_one_mask_reused_keeps_its_blocks():
    from dflow.schedule.fusion import _aligned

    a = tf.placeholder(tf.float32, [8])
    ma = tf.boolean_mask(a, a > 0)
    with tf.Session(scheduler="sync", chunks=4) as s:
        plan, _ = s._plan_for(ma * 2 + ma, {a: np.ones(8, np.float32)})
    assert not any(str(k[0]).startswith("one-block-") for k in plan.dsk if isinstance(k, tuple))
    assert _aligned([]) == []
