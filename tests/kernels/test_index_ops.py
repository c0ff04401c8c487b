"""Indexing ops (strided slice / __getitem__, gather, one_hot, top_k) against numpy, in every local
mode with small chunks so the chunked lowerings see several chunks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf
from dflow.graph.ops import constant_value
from tests.conftest import run_modes

# ---- __getitem__ / strided_slice ----------------------------------------------------------------


@st.composite
def slice_cases(draw):
    """(shape, numpy spec, which entries are fed as scalar placeholders)."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    entries = []
    for n in shape:
        if draw(st.booleans()):
            entries.append(draw(st.integers(-n, n - 1)))
        else:
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = st.sampled_from([None, 1, 2, 3, -1, -2])
            entries.append(slice(draw(bound), draw(bound), draw(step)))
    how = draw(st.sampled_from(["all", "ellipsis", "truncate"]))
    if how == "ellipsis":
        a = draw(st.integers(0, rank))
        b = draw(st.integers(a, rank))
        entries = entries[:a] + [Ellipsis] + entries[b:]
    elif how == "truncate":
        entries = entries[:draw(st.integers(0, rank))]
    for _ in range(draw(st.integers(0, 2))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    fed = draw(st.lists(st.booleans(), min_size=3 * len(entries), max_size=3 * len(entries)))
    return shape, tuple(entries), fed


def _symbolic_spec(entries, fed):
    """The spec with some ints / slice parts replaced by int32 scalar placeholders, and their feeds."""
    feeds = {}

    def maybe(v, flag):
        if v is None or not flag:
            return v
        p = tf.placeholder(tf.int32, [])
        feeds[p] = v
        return p

    out = []
    for j, e in enumerate(entries):
        f = fed[3 * j:3 * j + 3]
        if isinstance(e, slice):
            out.append(slice(maybe(e.start, f[0]), maybe(e.stop, f[1]), maybe(e.step, f[2])))
        elif isinstance(e, int):
            out.append(maybe(e, f[0]))
        else:
            out.append(e)
    return tuple(out), feeds


@settings(max_examples=25, deadline=None)
@given(slice_cases())
def test_getitem_matches_numpy(case):
    shape, entries, fed = case
    tf.reset_default_graph()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    xt = tf.placeholder(tf.float32, shape)
    spec, feeds = _symbolic_spec(entries, fed)
    y = xt[spec]
    want = x[entries]
    assert y.op.type == "StridedSlice" and y.dtype == tf.float32
    if feeds:
        assert y.shape.is_compatible_with(want.shape)
    else:
        assert y.shape.as_list() == list(want.shape)
    got = run_modes(y, {xt: x, **feeds})
    np.testing.assert_array_equal(np.asarray(got), want)


def test_getitem_names_and_inputs():
    x = tf.placeholder(tf.float32, [5, 6])
    y = x[1:3]
    assert y.op.name == "strided_slice" and y.op.type == "StridedSlice"
    assert [t.name for t in y.op.inputs[1:]] == ["strided_slice/stack:0", "strided_slice/stack_1:0",
                                                  "strided_slice/stack_2:0"]
    assert x[0].op.name == "strided_slice_1"
    assert tf.strided_slice(x, [0], [2]).op.name == "StridedSlice"


@pytest.mark.parametrize("spec,shape", [
    (np.s_[1:3], [2, 6, 7]), (np.s_[..., ::-2], [5, 6, 4]), (np.s_[-1], [6, 7]),
    (np.s_[:, None, 7:1:-3], [5, 1, 2, 7]), (np.s_[1, ..., None, 2], [6, 1]),
    (np.s_[10:], [0, 6, 7]), (np.s_[-100:100], [5, 6, 7]), (np.s_[None], [1, 5, 6, 7]),
    (np.s_[2, 3, 4], []), ((), [5, 6, 7]), ([1, 2], [7]),  # a list is a spec, as TF1
])
def test_getitem_static_shapes(spec, shape):
    x = np.arange(5 * 6 * 7, dtype=np.int64).reshape(5, 6, 7)
    xt = tf.placeholder(tf.int64, [5, 6, 7])
    y = xt[spec]
    assert y.shape.as_list() == shape
    np.testing.assert_array_equal(run_modes(y, {xt: x}),
                                  x[tuple(spec) if isinstance(spec, list) else spec])


def test_getitem_partial_shapes():
    x = tf.placeholder(tf.float32, [None, 3])
    assert x[5].shape.as_list() == [3]
    assert x[1:10].shape.as_list() == [None, 3]
    assert x[:, 1:].shape.as_list() == [None, 2]
    n = tf.placeholder(tf.int32, [])
    assert x[:, :n].shape.as_list() == [None, None]
    assert x[n].shape.as_list() == [3]
    assert tf.placeholder(tf.float32)[1:2].shape.ndims is None


def test_getitem_tensor_indices():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    xt = tf.placeholder(tf.float32, [4, 6])
    i = tf.placeholder(tf.int32, [])
    j = tf.placeholder(tf.int64, [])
    got = run_modes([xt[i], xt[:, i], xt[i, -j], xt[i:, ::j], xt[::-j, i - 1:]], {xt: x, i: 2, j: 2})
    for g, w in zip(got, [x[2], x[:, 2], x[2, -2], x[2:, ::2], x[::-2, 1:]]):
        np.testing.assert_array_equal(g, w)
    # tf.shape(x)[k] as an index and a bound
    got = run_modes(xt[tf.shape(xt)[0] - 1, : tf.shape(xt)[1] // 2], {xt: x})
    np.testing.assert_array_equal(got, x[3, :3])


def test_shape_index_folds_at_build_time():
    x = tf.placeholder(tf.float32, [5, 6])
    assert int(constant_value(tf.shape(x)[0])) == 5
    np.testing.assert_array_equal(constant_value(tf.shape(x)[::-1]), [6, 5])
    y = tf.placeholder(tf.float32, [None, 3])
    assert int(constant_value(tf.shape(y)[1])) == 3  # the picked dim is known
    assert constant_value(tf.shape(y)[0]) is None
    assert constant_value(tf.shape(y)[:]) is None
    assert tf.reshape(y, [-1, tf.shape(y)[1]]).shape.as_list() == [None, 3]


def test_getitem_build_time_errors():
    x = tf.placeholder(tf.float32, [5, 6, 7])
    for spec in [7, -6, np.s_[:, 6], np.s_[1, 2, 3, 4]]:
        with pytest.raises(ValueError, match="out of|Index out of range"):
            x[spec]
    with pytest.raises(ValueError, match="non-zero"):
        x[::0]
    with pytest.raises(ValueError, match="ellipses"):
        x[..., 1, ...]
    for bad in [1.5, "a", tf.placeholder(tf.float32, []), tf.placeholder(tf.int32, [2]), [[1, 2]]]:
        with pytest.raises(TypeError, match="valid indices"):
            x[bad]


@pytest.mark.parametrize("mode", ["eager", "sync", "threads"])
def test_getitem_run_time_errors(mode, sess_factory):
    y = tf.placeholder(tf.float32, [None, 3])
    i = tf.placeholder(tf.int32, [])
    s = tf.placeholder(tf.int32, [])
    x = np.zeros((2, 3), np.float32)
    sess = sess_factory(mode, chunks=1) if mode != "eager" else tf.Session(small_plan_bytes=1 << 30)
    with pytest.raises(tf.errors.InvalidArgumentError, match="slice index 5 of dimension 0 out of bounds"):
        sess.run(y[5], {y: x})
    with pytest.raises(tf.errors.InvalidArgumentError, match="slice index -3 of dimension 0 out of bounds"):
        sess.run(y[i], {y: x, i: -3})
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-zero"):
        sess.run(y[::s], {y: x, s: 0})
    np.testing.assert_array_equal(sess.run(y[i], {y: x + 1, i: -1}), np.ones(3, np.float32))


@pytest.mark.parametrize("args,kwargs,spec", [
    (([1, 0], [3, 2]), {}, np.s_[1:3, 0:2]),
    (([1, 0], [3, 2], [1, 1]), {"shrink_axis_mask": 2}, np.s_[1:3, 0]),
    (([0, 5], [0, 0], [1, -2]), {"begin_mask": 1, "end_mask": 3}, np.s_[:, 5::-2]),
    (([0, 1], [0, 2], [1, 1]), {"ellipsis_mask": 1}, np.s_[..., 1:2]),
    (([0, 0, 2], [0, 0, 4], [1, 1, 1]), {"new_axis_mask": 2, "begin_mask": 1, "end_mask": 1},
     np.s_[:, None, 2:4]),
    (([1, 0, 0], [2, 0, 0], [1, 1, 1]), {"new_axis_mask": 2, "shrink_axis_mask": 3},  # new wins
     np.s_[1, None, 0:0]),
    (([1, 0], [2, 0], [1, 1]), {"new_axis_mask": 2, "shrink_axis_mask": 3}, np.s_[1, None]),
])
def test_strided_slice_masks(args, kwargs, spec):
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    xt = tf.placeholder(tf.float32, [4, 6])
    y = tf.strided_slice(xt, *args, **kwargs)
    assert y.shape.as_list() == list(x[spec].shape)
    np.testing.assert_array_equal(run_modes(y, {xt: x}), x[spec])


def test_strided_slice_tensor_spec():
    x = np.arange(20, dtype=np.int32).reshape(4, 5)
    xt = tf.placeholder(tf.int32, [4, 5])
    b = tf.placeholder(tf.int32, [2])
    y = tf.strided_slice(xt, b, [4, 5])
    assert y.shape.as_list() == [None, None]
    np.testing.assert_array_equal(run_modes(y, {xt: x, b: [1, 2]}), x[1:4, 2:5])
    with pytest.raises(TypeError):
        tf.strided_slice(xt, tf.constant([0, 0], dtype=tf.int64), [1, 1])


# ---- gather ------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,axis,ishape", [
    ((7, 5), 0, (4,)), ((7, 5), 1, (3, 2)), ((4, 5, 6), -1, (2, 3)), ((4, 5, 6), 1, ()),
    ((9,), 0, (3, 1, 2)), ((4, 5, 6), -2, (0,)),
])
def test_gather_matches_numpy(shape, axis, ishape):
    rng = np.random.default_rng(2)
    p = rng.standard_normal(shape).astype(np.float32)
    idx = rng.integers(0, shape[axis], size=ishape).astype(np.int32)
    pt = tf.placeholder(tf.float32, shape)
    it = tf.placeholder(tf.int32, ishape)
    fed, const = tf.gather(pt, it, axis=axis), tf.gather(pt, idx, axis=axis)
    i64 = tf.gather(pt, tf.constant(idx.astype(np.int64)) if idx.ndim else np.int64(idx), axis=axis)
    want = np.take(p, idx, axis=axis)
    assert fed.op.type == "GatherV2" and fed.op.name == "GatherV2"
    assert fed.shape.as_list() == list(want.shape)
    for got in run_modes([fed, const, i64], {pt: p, it: idx}):
        np.testing.assert_array_equal(got, want)


def test_gather_after_slice_with_empty_chunks():
    # x[:-2:3] leaves a zero-size chunk, which dask's int-array indexing would lose
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    xt, it = tf.placeholder(tf.float32, [5, 4]), tf.placeholder(tf.int32, [None])
    got = run_modes([tf.gather(xt[:-2:3], it, axis=1), tf.gather(xt[:-2:3, ::-1], it, axis=1)], {xt: x, it: [1, 0]})
    np.testing.assert_array_equal(got[0], x[:-2:3][:, [1, 0]])
    np.testing.assert_array_equal(got[1], x[:-2:3, ::-1][:, [1, 0]])


def test_gather_shapes_and_build_errors():
    p = tf.placeholder(tf.float32, [None, 4])
    assert tf.gather(p, tf.placeholder(tf.int32, [None, 2]), axis=1).shape.as_list() == [None, None, 2]
    assert tf.gather(tf.placeholder(tf.float32), [1]).shape.ndims is None
    assert tf.gather(p, [0], axis=tf.constant(1)).shape.as_list() == [None, 1]
    assert tf.gather(p, 1).shape.as_list() == [4]  # a Python int index is a scalar
    assert tf.one_hot(2, 5).shape.as_list() == [5]
    with pytest.raises(ValueError, match="axis"):
        tf.gather(p, [0], axis=2)
    with pytest.raises(TypeError, match="int32 or int64"):
        tf.gather(p, [0.5])


@pytest.mark.parametrize("mode", ["eager", "sync", "threads"])
def test_gather_run_time_errors(mode, sess_factory):
    p = tf.placeholder(tf.float32, [None, 3])
    i = tf.placeholder(tf.int32, [None])
    sess = sess_factory(mode, chunks=2) if mode != "eager" else tf.Session(small_plan_bytes=1 << 30)
    x = np.zeros((4, 3), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[3\] = 4 is not in \[0, 4\)"):
        sess.run(tf.gather(p, i), {p: x, i: [0, 1, 2, 4]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = -1 is not in \[0, 3\)"):
        sess.run(tf.gather(p, [0, -1], axis=1), {p: x})


# ---- one_hot -----------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [None, -1, 0, 1, 2])
def test_one_hot_matches_numpy(axis):
    rng = np.random.default_rng(3)
    idx = rng.integers(-1, 6, size=(4, 3)).astype(np.int64)  # -1 and 5 are off the 0..4 classes
    it = tf.placeholder(tf.int64, [4, 3])
    y = tf.one_hot(it, 5, axis=axis)
    want = (idx[..., None] == np.arange(5)).astype(np.float32)
    want = np.moveaxis(want, -1, 2 if axis in (None, -1) else axis)
    assert y.op.name == "one_hot" and y.op.type == "OneHot" and y.dtype == tf.float32
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_array_equal(run_modes(y, {it: idx}), want)


def test_one_hot_values_and_dtypes():
    idx = np.array([0, 2, -1, 3], np.int32)
    it = tf.placeholder(tf.int32, [None])
    a = tf.one_hot(it, 3, on_value=5, off_value=-1)
    b = tf.one_hot(it, 3, on_value=2.5)
    c = tf.one_hot(it, 3, dtype=tf.int64)
    d = tf.one_hot(it, 3, off_value=tf.constant(7, tf.int64))
    assert [t.dtype for t in (a, b, c, d)] == [tf.int32, tf.float32, tf.int64, tf.int64]
    assert a.shape.as_list() == [None, 3]
    hot = idx[:, None] == np.arange(3)
    got = run_modes([a, b, c, d], {it: idx})
    np.testing.assert_array_equal(got[0], np.where(hot, 5, -1).astype(np.int32))
    np.testing.assert_array_equal(got[1], np.where(hot, 2.5, 0).astype(np.float32))
    np.testing.assert_array_equal(got[2], hot.astype(np.int64))
    np.testing.assert_array_equal(got[3], np.where(hot, 1, 7).astype(np.int64))
    with pytest.raises(TypeError, match="off_value"):
        tf.one_hot(it, 3, on_value=3, off_value=1.0)
    with pytest.raises(TypeError, match="dtype parameter"):
        tf.one_hot(it, 3, on_value=tf.constant(1.0), dtype=tf.int32)
    with pytest.raises(ValueError, match="axis"):
        tf.one_hot(it, 3, axis=2)
    with pytest.raises(TypeError):
        tf.one_hot([0.5], 3)


# ---- top_k -------------------------------------------------------------------------------------


def _np_top_k(x, k):
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(np.int32)


@pytest.mark.parametrize("shape,k,dtype", [
    ((4, 9), 3, np.int32), ((4, 9), 9, np.int32), ((4, 9), 0, np.int32), ((5, 7), 1, np.float32),
    ((11,), 4, np.int64), ((3, 2, 8), 5, np.float64),
])
def test_top_k_matches_numpy(shape, k, dtype):
    rng = np.random.default_rng(4)
    x = rng.integers(0, 4, size=shape).astype(dtype)  # many ties: lower index first
    if np.dtype(dtype).kind == "f":
        x += rng.integers(0, 2, size=shape) * 0.5
    xt = tf.placeholder(tf.as_dtype(dtype), shape)
    res = tf.nn.top_k(xt, k) if hasattr(tf, "nn") and hasattr(tf.nn, "top_k") else tf.top_k(xt, k)
    assert res.values.op.type == "TopKV2" and res.indices.dtype == tf.int32
    assert res.values.shape.as_list() == list(shape[:-1]) + [k]
    got = run_modes(res, {xt: x})  # chunks=2: several chunks along the last axis and the rows
    want = _np_top_k(x, k)
    np.testing.assert_array_equal(got.values, want[0])
    np.testing.assert_array_equal(got.indices, want[1])
    values, indices = got  # a (values, indices) pair
    assert values.dtype == np.dtype(dtype) and indices.dtype == np.int32


def test_top_k_errors():
    x = tf.placeholder(tf.float32, [3, 4])
    with pytest.raises(ValueError, match="last dimension >= k = 5"):
        tf.top_k(x, 5)
    with pytest.raises(ValueError, match="rank 1"):
        tf.top_k(tf.placeholder(tf.float32, []), 1)
    with pytest.raises(TypeError):
        tf.top_k(tf.placeholder(tf.bool, [3]), 1)
    y = tf.placeholder(tf.float32, [None, None])
    t = tf.top_k(y, 3)
    assert t.values.shape.as_list() == [None, 3] and t.values.op.name == "TopKV2_3"
    for mode in ["eager", "sync"]:
        sess = tf.Session(small_plan_bytes=1 << 30) if mode == "eager" else tf.Session(scheduler=mode, **({} if mode is None else {"small_plan_bytes": 0}))
        with pytest.raises(tf.errors.InvalidArgumentError, match="last dimension >= k = 3"):
            sess.run(t, {y: np.zeros((2, 2), np.float32)})
        sess.close()


# ---- other schedulers: data-dependent indices and errors raised inside tasks -------------------


def test_index_ops_every_scheduler(any_mode, sess_factory):
    x = np.arange(30, dtype=np.float32).reshape(6, 5)
    xt = tf.placeholder(tf.float32, [6, 5])
    i = tf.placeholder(tf.int32, [])
    idx = tf.placeholder(tf.int32, [None])
    fetches = [xt[i, ::-1], xt[:, i:], tf.gather(xt, idx, axis=1), tf.top_k(xt, 2).indices]
    sess = sess_factory(any_mode, chunks=2)
    got = sess.run(fetches, {xt: x, i: 2, idx: [4, 0, 4]})
    for g, w in zip(got, [x[2, ::-1], x[:, 2:], x[:, [4, 0, 4]], _np_top_k(x, 2)[1]]):
        np.testing.assert_array_equal(g, w)
    if any_mode == "processes":
        return  # each run starts a process pool; errors from worker processes: see distributed
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        sess.run(xt[i], {xt: x, i: 6})
    with pytest.raises(tf.errors.InvalidArgumentError, match="is not in"):
        sess.run(tf.gather(xt, idx), {xt: x, idx: [7]})
