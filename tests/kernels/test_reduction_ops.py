"""Reductions, argmax/argmin, cumsum and count_nonzero against numpy, in every local mode with several
chunks along the reduced axes; static shapes, TF1 names and build-time errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf
from dflow.graph.ops import constant_value
from tests.conftest import rand, run_modes

HYP = settings(max_examples=20, deadline=None)


def np_logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
        out = np.where(m == np.inf, np.inf, out).astype(x.dtype)
    return out if keepdims else np.squeeze(out, axis=axis)


def np_reference(name, x, axis, keepdims):
    ax = None if axis is None else tuple(np.atleast_1d(axis).tolist())
    fns = {
        "reduce_sum": lambda: np.sum(x, axis=ax, keepdims=keepdims, dtype=x.dtype),
        "reduce_mean": lambda: np.mean(x, axis=ax, keepdims=keepdims).astype(x.dtype),
        "reduce_max": lambda: np.max(x, axis=ax, keepdims=keepdims),
        "reduce_min": lambda: np.min(x, axis=ax, keepdims=keepdims),
        "reduce_prod": lambda: np.prod(x, axis=ax, keepdims=keepdims, dtype=x.dtype),
        "reduce_logsumexp": lambda: np_logsumexp(x, ax, keepdims),
        "reduce_any": lambda: np.any(x, axis=ax, keepdims=keepdims),
        "reduce_all": lambda: np.all(x, axis=ax, keepdims=keepdims),
    }
    return np.asarray(fns[name]())


def check(got, want, rtol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


@st.composite
def shape_and_axis(draw):
    """A shape of rank 1..4 and an axis spec: None, an int, or a list of distinct axes (any sign)."""
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))
    rank = len(shape)
    kind = draw(st.sampled_from(["none", "int", "list"]))
    if kind == "none":
        return shape, None
    if kind == "int":
        return shape, draw(st.integers(-rank, rank - 1))
    axes = draw(st.lists(st.integers(0, rank - 1), unique=True, max_size=rank))
    return shape, [a - rank if draw(st.booleans()) else a for a in axes]


FLOAT_REDUCTIONS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
                    "reduce_logsumexp"]


@HYP
@given(sa=shape_and_axis(), keepdims=st.booleans(), name=st.sampled_from(FLOAT_REDUCTIONS),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_float_reductions_match_numpy(sa, keepdims, name, dtype):
    shape, axis = sa
    tf.reset_default_graph()
    xv = rand(shape, dtype, len(shape))
    if name == "reduce_prod":
        xv = (1 + 0.1 * xv).astype(dtype)  # products of many values stay in range
    x = tf.placeholder(dtype, shape)
    y = getattr(tf, name)(x, axis=axis, keepdims=keepdims)
    want = np_reference(name, xv, axis, keepdims)
    assert y.shape.as_list() == list(want.shape)
    check(run_modes(y, {x: xv}), want)


@HYP
@given(sa=shape_and_axis(), keepdims=st.booleans(),
       name=st.sampled_from(["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"]),
       dtype=st.sampled_from([np.int32, np.int64, np.uint8, np.int8]))
def test_integer_reductions_match_numpy(sa, keepdims, name, dtype):
    shape, axis = sa
    tf.reset_default_graph()
    lo = 0 if np.dtype(dtype).kind == "u" else -100
    xv = rand(shape, dtype, 1, lo=lo, hi=100)
    x = tf.placeholder(dtype, shape)
    y = getattr(tf, name)(x, axis=axis, keepdims=keepdims)
    check(run_modes(y, {x: xv}), np_reference(name, xv, axis, keepdims))


@HYP
@given(sa=shape_and_axis(), keepdims=st.booleans(), name=st.sampled_from(["reduce_any", "reduce_all"]))
def test_bool_reductions_match_numpy(sa, keepdims, name):
    shape, axis = sa
    tf.reset_default_graph()
    xv = rand(shape, np.bool_, 2)
    x = tf.placeholder(tf.bool, shape)
    y = getattr(tf, name)(x, axis=axis, keepdims=keepdims)
    check(run_modes(y, {x: xv}), np_reference(name, xv, axis, keepdims))


def test_integer_mean_truncates_toward_zero_and_does_not_overflow():
    cases = [([7, -7, 5], np.int32, 1), ([-1, -2], np.int32, -1), ([-3, -3, -4], np.int64, -3),
             ([200, 200], np.uint8, 200), ([100, 100], np.int8, 100), ([1, 2, 2], np.uint16, 1)]
    for values, dtype, want in cases:
        tf.reset_default_graph()
        x = tf.placeholder(dtype, [len(values)])
        got = run_modes(tf.reduce_mean(x), {x: np.array(values, dtype)})
        assert got.dtype == dtype and got == want, (values, got)
    tf.reset_default_graph()
    xv = rand((6, 7), np.int32, 3, lo=-50, hi=50)
    x = tf.placeholder(tf.int32, [6, 7])
    got = run_modes(tf.reduce_mean(x, 1), {x: xv})
    np.testing.assert_array_equal(got, np.trunc(xv.sum(1) / 7).astype(np.int32))


def test_sum_wraps_in_its_dtype_and_float16_mean():
    x = tf.placeholder(tf.uint8, [4])
    assert run_modes(tf.reduce_sum(x), {x: np.array([200, 200, 1, 2], np.uint8)}) == np.uint8(147)
    h = tf.placeholder(tf.float16, [6])
    got = run_modes(tf.reduce_mean(h), {h: np.full(6, 1000, np.float16)})
    assert got.dtype == np.float16 and got == 1000  # accumulated in float32: no float16 overflow


def test_logsumexp_is_stable_for_large_and_infinite_values():
    xv = np.array([
        [1000.0] * 6,
        [-1000.0] * 6,
        [-np.inf] * 6,
        [-np.inf] * 3 + [1.0, 2.0, 3.0],  # an all -inf chunk next to finite chunks
        [np.inf, 1.0, 2.0, 3.0, 4.0, 5.0],
        [np.inf, -np.inf, 0.0, 0.0, 0.0, 0.0],
        [np.nan, 1.0, 2.0, 3.0, 4.0, 5.0],
        [-1000.0, -1000.0, 1000.0, 1000.0, 0.0, 0.0],
    ], np.float32)
    x = tf.placeholder(tf.float32, xv.shape)
    got = run_modes([tf.reduce_logsumexp(x, 1), tf.reduce_logsumexp(x, -1, keepdims=True)], {x: xv})
    want = np.array([1000 + np.log(6), -1000 + np.log(6), -np.inf, np.log(np.exp([1, 2, 3]).sum()),
                     np.inf, np.inf, np.nan, 1000 + np.log(2)], np.float32)
    check(got[0], want)
    check(got[1], want[:, None])
    # whole-tensor reduction of large values across many chunks
    big = rand((9, 10), np.float64, 4) * 500
    b = tf.placeholder(tf.float64, big.shape)
    check(run_modes(tf.reduce_logsumexp(b), {b: big}), np_logsumexp(big), rtol=1e-12)


def test_empty_reductions_follow_tf1():
    x = tf.placeholder(tf.float32, [2, 0])
    i = tf.placeholder(tf.int32, [2, 0])
    b = tf.placeholder(tf.bool, [2, 0])
    fetches = [tf.reduce_sum(x, 1), tf.reduce_prod(x, 1), tf.reduce_max(x, 1), tf.reduce_min(x, 1),
               tf.reduce_logsumexp(x, 1), tf.reduce_max(i, 1), tf.reduce_all(b, 1), tf.reduce_any(b, 1)]
    feed = {x: np.zeros((2, 0), np.float32), i: np.zeros((2, 0), np.int32), b: np.zeros((2, 0), bool)}
    got = run_modes(fetches, feed, modes=["eager", "sync"])
    assert got[0].tolist() == [0, 0] and got[1].tolist() == [1, 1]
    assert got[2].tolist() == [-np.inf] * 2 and got[3].tolist() == [np.inf] * 2
    assert got[4].tolist() == [-np.inf] * 2
    assert got[5].tolist() == [np.iinfo(np.int32).min] * 2
    assert got[6].tolist() == [True, True] and got[7].tolist() == [False, False]


def test_many_chunks_tree_reduction():
    xv = rand((400, 30), np.float64, 5)
    x = tf.placeholder(tf.float64, xv.shape)
    fetches = [tf.reduce_sum(x), tf.reduce_mean(x, 0), tf.reduce_max(x, 1), tf.reduce_logsumexp(x, 0)]
    got = run_modes(fetches, {x: xv}, chunks=(7, 4))
    check(got[0], xv.sum(), rtol=1e-12)
    check(got[1], xv.mean(0), rtol=1e-12)
    check(got[2], xv.max(1))
    check(got[3], np_logsumexp(xv, 0), rtol=1e-12)


# ---- axes, static shapes, names, errors ------------------------------------------------------------


def test_axis_forms_and_aliases():
    xv = rand((3, 4, 5), seed=6)
    x = tf.placeholder(tf.float32, [3, 4, 5])
    fetches = [
        tf.reduce_sum(x, tf.constant(np.array([0, 2], np.int32))),
        tf.reduce_sum(x, tf.constant(np.array(-1, np.int64))),
        tf.reduce_sum(x, tf.rank(x) - 1),  # folded from the static shape
        tf.reduce_sum(x, reduction_indices=[1]),
        tf.reduce_sum(x, 1, keep_dims=True),
        tf.reduce_sum(x, np.array([2, 0])),
        tf.reduce_sum(x, axis=[]),  # no axes: identity
    ]
    got = run_modes(fetches, {x: xv})
    check(got[0], xv.sum((0, 2)))
    check(got[1], xv.sum(-1))
    check(got[2], xv.sum(2))
    check(got[3], xv.sum(1))
    check(got[4], xv.sum(1, keepdims=True))
    check(got[5], xv.sum((0, 2)))
    check(got[6], xv)
    assert [t.shape.as_list() for t in fetches] == [[4], [3, 4], [3, 4], [3, 5], [3, 1, 5], [4], [3, 4, 5]]


def test_static_shapes_with_unknown_dims_and_axes():
    u = tf.placeholder(tf.float32, [None, 3, None])
    assert tf.reduce_sum(u, 1).shape.as_list() == [None, None]
    assert tf.reduce_max(u, [0, 2], keepdims=True).shape.as_list() == [1, 3, 1]
    assert tf.reduce_sum(u).shape.as_list() == []
    a = tf.placeholder(tf.int32, [])
    assert tf.reduce_sum(u, a).shape.as_list() == [None, None]
    assert tf.reduce_sum(u, a, keepdims=True).shape.as_list() == [None, None, None]
    assert tf.reduce_sum(u, tf.placeholder(tf.int32, [2])).shape.ndims is None
    r = tf.placeholder(tf.float32)
    assert tf.reduce_sum(r).shape.as_list() == []
    assert tf.reduce_sum(r, 1).shape.ndims is None
    assert tf.argmax(u, 1).shape.as_list() == [None, None]
    assert tf.cumsum(u, 2).shape.as_list() == [None, 3, None]


def test_unknown_rank_and_computed_axis_run():
    r = tf.placeholder(tf.float32)
    xv = rand((3, 4), seed=7)
    got = run_modes([tf.reduce_sum(r), tf.reduce_mean(r, keepdims=True), tf.reduce_max(r, -1)], {r: xv})
    check(got[0], xv.sum())
    check(got[1], xv.mean(keepdims=True))
    check(got[2], xv.max(-1))
    # an axis fed in the run: the chunked compiler makes its plan for the axis's value
    a = tf.placeholder(tf.int32, [])
    y = tf.reduce_sum(r, a)
    check(run_modes(y, {r: xv, a: 1}), xv.sum(1))
    check(run_modes(y, {r: xv, a: 0}), xv.sum(0))


def test_default_names_and_op_types():
    x = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.bool, [2, 3])
    ops = [tf.reduce_sum(x, 1), tf.reduce_mean(x, 1), tf.reduce_max(x, 1), tf.reduce_min(x, 1),
           tf.reduce_prod(x, 1), tf.reduce_any(b, 1), tf.reduce_all(b, 1), tf.reduce_logsumexp(x, 1),
           tf.argmax(x, 1), tf.argmin(x, 1), tf.cumsum(x, 1)]
    assert [t.op.type for t in ops] == ["Sum", "Mean", "Max", "Min", "Prod", "Any", "All",
                                        "ReduceLogSumExp", "ArgMax", "ArgMin", "Cumsum"]
    assert [t.op.name for t in ops] == ["Sum", "Mean", "Max", "Min", "Prod", "Any", "All",
                                        "ReduceLogSumExp", "ArgMax", "ArgMin", "Cumsum"]
    assert ops[0].op.inputs[1].op.name == "Sum/reduction_indices"
    assert ops[8].op.inputs[1].op.name == "ArgMax/dimension"
    assert ops[0].op.get_attr("keep_dims") is False
    assert tf.reduce_sum(x, 0, name="foo").op.name == "foo"
    assert tf.reduce_sum(x).op.name == "Sum_1"
    c = tf.count_nonzero(x, 1)
    assert c.op.name == "count_nonzero/Sum" and c.dtype == tf.int64


def test_build_time_errors():
    x = tf.placeholder(tf.float32, [2, 3, 4])
    with pytest.raises(ValueError, match="Invalid reduction dimension 3"):
        tf.reduce_sum(x, 3)
    with pytest.raises(ValueError, match="Invalid reduction dimension -4"):
        tf.reduce_mean(x, [0, -4])
    with pytest.raises(ValueError, match="duplicate"):
        tf.reduce_sum(x, [1, -2])
    with pytest.raises(TypeError, match="reduction_indices"):
        tf.reduce_sum(x, 1.0)
    with pytest.raises(TypeError, match="reduction_indices"):
        tf.reduce_sum(x, tf.placeholder(tf.float32, []))
    with pytest.raises(ValueError, match="both 'reduction_indices' and 'axis'"):
        tf.reduce_sum(x, axis=1, reduction_indices=1)
    with pytest.raises(ValueError, match="both 'keep_dims' and 'keepdims'"):
        tf.reduce_sum(x, keepdims=True, keep_dims=True)
    b = tf.placeholder(tf.bool, [3])
    for fn in (tf.reduce_sum, tf.reduce_mean, tf.reduce_max, tf.reduce_prod, tf.argmax, tf.cumsum):
        with pytest.raises(TypeError):
            fn(b)
    for fn in (tf.reduce_any, tf.reduce_all):
        with pytest.raises(TypeError):
            fn(x)
    with pytest.raises(TypeError):
        tf.reduce_max(tf.placeholder(tf.complex64, [3]))
    with pytest.raises(TypeError):
        tf.reduce_logsumexp(tf.placeholder(tf.int32, [3]))
    with pytest.raises(ValueError, match=r"must be in the range \[-3, 3\)"):
        tf.argmax(x, 5)
    with pytest.raises(ValueError, match="both 'dimension' and 'axis'"):
        tf.argmax(x, axis=1, dimension=1)
    with pytest.raises(TypeError, match="output_type"):
        tf.argmax(x, 1, output_type=tf.float32)
    with pytest.raises(ValueError):
        tf.cumsum(x, 3)


def test_complex_sum_and_mean():
    xv = (rand((4, 5), np.float64, 8) + 1j * rand((4, 5), np.float64, 9)).astype(np.complex128)
    x = tf.placeholder(tf.complex128, [4, 5])
    got = run_modes([tf.reduce_sum(x, 0), tf.reduce_mean(x, 1)], {x: xv})
    check(got[0], xv.sum(0))
    check(got[1], xv.mean(1))


def test_reduce_python_values_fold():
    y = tf.reduce_sum([[1, 2], [3, 4]], 0)
    assert y.dtype == tf.int32 and y.shape.as_list() == [2]
    assert constant_value(y).tolist() == [4, 6]
    check(run_modes(y), np.array([4, 6], np.int32))


# ---- argmax / argmin -----------------------------------------------------------------------------


@HYP
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), data=st.data(),
       dtype=st.sampled_from([np.float32, np.int32, np.uint8]), out=st.sampled_from([tf.int32, tf.int64]))
def test_argmax_argmin_match_numpy(shape, data, dtype, out):
    tf.reset_default_graph()
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    xv = rand(shape, dtype, 10, lo=0, hi=4)  # small int range: ties resolve to the first index
    x = tf.placeholder(dtype, shape)
    got = run_modes([tf.argmax(x, axis, output_type=out), tf.argmin(x, axis, output_type=out)], {x: xv})
    check(got[0], np.argmax(xv, axis).astype(out.as_numpy_dtype))
    check(got[1], np.argmin(xv, axis).astype(out.as_numpy_dtype))


def test_argmax_defaults_and_nan():
    xv = rand((5, 4), seed=11)
    xv[2, 1] = np.nan
    xv[4, 3] = np.nan
    x = tf.placeholder(tf.float32, [5, 4])
    y = tf.argmax(x)
    assert y.dtype == tf.int64 and y.shape.as_list() == [4]
    got = run_modes([y, tf.argmax(x, dimension=1), tf.argmin(x, [1])], {x: xv})
    # TF1 never picks a NaN (numpy's argmax does): see test_argmax_and_argmin_never_pick_nan_as_tf1
    check(got[0], np.argmax(np.where(np.isnan(xv), -np.inf, xv), 0))
    check(got[1], np.argmax(np.where(np.isnan(xv), -np.inf, xv), 1))
    check(got[2], np.argmin(np.where(np.isnan(xv), np.inf, xv), 1))


def test_argmax_of_empty_axis_is_an_error():
    x = tf.placeholder(tf.float32, [2, 0])
    y = tf.argmax(x, 1)
    for mode in ["eager", "sync"]:
        with pytest.raises(tf.errors.InvalidArgumentError, match="empty"):
            run_modes(y, {x: np.zeros((2, 0), np.float32)}, modes=[mode])


# ---- cumsum ----------------------------------------------------------------------------------------


def np_cumsum(x, axis, exclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:
        out = np.concatenate([np.zeros_like(np.take(out, [0], axis)),
                              np.take(out, np.arange(out.shape[axis] - 1), axis)], axis=axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8])
def test_cumsum_matches_numpy(exclusive, reverse, dtype):
    xv = rand((5, 7), dtype, 12, lo=-60, hi=60)
    x = tf.placeholder(dtype, [5, 7])
    fetches = [tf.cumsum(x, a, exclusive=exclusive, reverse=reverse) for a in (0, 1, -1)]
    got = run_modes(fetches, {x: xv})
    for g, a in zip(got, (0, 1, -1)):
        check(g, np_cumsum(xv, a, exclusive, reverse))


def test_cumsum_axis_tensor_and_default():
    xv = rand((4, 3), np.int64, 13)
    x = tf.placeholder(tf.int64, [4, 3])
    got = run_modes([tf.cumsum(x), tf.cumsum(x, axis=tf.constant(np.array(1, np.int32)))], {x: xv})
    check(got[0], np.cumsum(xv, 0))
    check(got[1], np.cumsum(xv, 1))


# ---- count_nonzero -----------------------------------------------------------------------------------


def test_count_nonzero_matches_numpy():
    xv = rand((6, 5), np.int32, 14, lo=-1, hi=2)
    bv = rand((6, 5), np.bool_, 15)
    x = tf.placeholder(tf.int32, [6, 5])
    b = tf.placeholder(tf.bool, [6, 5])
    fetches = [tf.count_nonzero(x), tf.count_nonzero(x, 1, keepdims=True),
               tf.count_nonzero(b, axis=0, dtype=tf.int32)]
    got = run_modes(fetches, {x: xv, b: bv})
    check(got[0], np.int64(np.count_nonzero(xv)))
    check(got[1], np.count_nonzero(xv, axis=1, keepdims=True).astype(np.int64))
    check(got[2], np.count_nonzero(bv, axis=0).astype(np.int32))


# ---- every scheduler ----------------------------------------------------------------------------------


def test_reductions_on_every_scheduler(any_mode, sess_factory):
    xv = rand((6, 8), seed=16) * 100
    x = tf.placeholder(tf.float32, [6, 8], chunks=(2, 3))
    fetches = [tf.reduce_sum(x, 1), tf.reduce_logsumexp(x, [0, 1]), tf.argmax(x, 0), tf.cumsum(x, 1),
               tf.reduce_mean(x, 0, keepdims=True)]
    with sess_factory(any_mode, chunks=(2, 3)) as s:
        got = s.run(fetches, {x: xv})
    check(got[0], xv.sum(1))
    check(got[1], np_logsumexp(xv))
    check(got[2], np.argmax(xv, 0))
    check(got[3], np.cumsum(xv, 1))
    check(got[4], xv.mean(0, keepdims=True))


def test_arg_max_arg_min_tf1_aliases():
    rng = np.random.default_rng(3)
    v = rng.standard_normal((4, 5)).astype(np.float32)
    x = tf.placeholder(tf.float32, [4, 5])
    amax, amin = tf.arg_max(x, 1), tf.arg_min(x, dimension=0, output_type=tf.int32)
    assert (amax.op.type, amax.op.name, amax.dtype) == ("ArgMax", "ArgMax", tf.int64)
    assert (amin.op.type, amin.dtype, amin.shape.as_list()) == ("ArgMin", tf.int32, [5])
    named = tf.arg_max(x, tf.constant(0), name="best")
    assert named.op.name == "best"
    got = run_modes([amax, amin, named], {x: v})
    np.testing.assert_array_equal(got[0], np.argmax(v, 1))
    np.testing.assert_array_equal(got[1], np.argmin(v, 0))
    np.testing.assert_array_equal(got[2], np.argmax(v, 0))
    with pytest.raises(TypeError):
        tf.arg_max(x)  # dimension is required, as TF1


def test_argmax_and_argmin_never_pick_nan_as_tf1():
    """TF1's CPU kernels (checked with TF 2.21's tf.compat.v1): argmax([1, nan, 3]) = 2,
    argmin = 0; argmax([nan, 1, 3]) = 2, argmin = 1; all NaN gives 0; the max itself is NaN."""
    x = tf.placeholder(tf.float32, [None, 3])
    v = np.array([[1, np.nan, 3], [np.nan, 1, 3], [np.nan, np.nan, np.nan]], np.float32)
    amax, amin = run_modes([tf.argmax(x, 1), tf.argmin(x, 1)], {x: v})
    assert amax.tolist() == [2, 2, 0] and amin.tolist() == [0, 1, 0]
