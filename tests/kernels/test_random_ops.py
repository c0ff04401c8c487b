"""Random ops: statistics, ranges, dtypes, TF1 seed rules, a new draw per run, and identical draws
on every execution mode and chunking."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf
from dflow import errors
from dflow.graph.graph import _MAXINT32
from tests.conftest import LOCAL_MODES, make_session, run_modes

N = 100_000  # statistics: standard error of a mean of N unit-variance values is ~0.003
_erf = np.vectorize(math.erf, otypes=[np.float64])


def eager_session(graph=None):
    return make_session("eager", graph=graph)


def random_op(t):
    """The Random* op behind the output of a random_* function (under its mul/add scaling)."""
    op = t.op
    while not op.type.startswith(("Random", "Truncated")):
        op = op.inputs[0].op
    return op


def ks_stat(samples, cdf):
    """Kolmogorov-Smirnov distance between `samples` and the distribution with `cdf`."""
    x = np.sort(np.asarray(samples, dtype=np.float64).reshape(-1))
    f = cdf(x)
    n = x.size
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def normal_cdf(x):
    return 0.5 * (1 + _erf(x / math.sqrt(2)))


# ---- statistics and ranges -------------------------------------------------------------------


def test_random_normal_statistics():
    x = tf.random_normal([N], mean=3.0, stddev=2.0, seed=1)
    with eager_session() as s:
        v = s.run(x)
    assert v.dtype == np.float32 and v.shape == (N,)
    assert abs(v.mean() - 3.0) < 0.02
    assert abs(v.std() - 2.0) < 0.02
    assert ks_stat((v - 3.0) / 2.0, normal_cdf) < 0.007  # ~1.95/sqrt(N): the 0.1% critical value
    z = (v - 3.0) / 2.0
    assert abs(np.mean(z ** 3)) < 0.05 and abs(np.mean(z ** 4) - 3.0) < 0.1  # skew, kurtosis
    assert abs(np.corrcoef(v[:-1], v[1:])[0, 1]) < 0.02  # neighbours are independent


def test_random_uniform_float_statistics_and_range():
    x = tf.random_uniform([N], seed=2)
    y = tf.random_uniform([N], minval=-5.0, maxval=3.0, dtype=tf.float64, seed=3)
    with eager_session() as s:
        xv, yv = s.run([x, y])
    assert xv.dtype == np.float32 and yv.dtype == np.float64
    assert xv.min() >= 0.0 and xv.max() < 1.0
    assert abs(xv.mean() - 0.5) < 0.005 and abs(xv.var() - 1 / 12) < 0.002
    assert ks_stat(xv, lambda t: t) < 0.007
    assert yv.min() >= -5.0 and yv.max() < 3.0
    assert ks_stat(yv, lambda t: (t + 5.0) / 8.0) < 0.007


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_random_uniform_unit_interval_excludes_one(dtype):
    # the uniform is built from as many bits as the dtype holds, so rounding never reaches 1.0
    x = tf.random_uniform([20_000], dtype=dtype, seed=4)
    with eager_session() as s:
        v = s.run(x)
    assert v.dtype == dtype.np_dtype
    assert v.min() >= 0 and v.max() < 1
    assert len(np.unique(v)) > 1000


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_random_uniform_int_range_and_frequencies(dtype):
    x = tf.random_uniform([N], minval=-3, maxval=7, dtype=dtype, seed=5)
    with eager_session() as s:
        v = s.run(x)
    assert v.dtype == dtype.np_dtype
    assert v.min() == -3 and v.max() == 6
    counts = np.bincount(v + 3, minlength=10)
    chi2 = np.sum((counts - N / 10) ** 2 / (N / 10))
    assert chi2 < 30  # 9 degrees of freedom: p < 0.001 above ~27.9


def test_random_uniform_int64_wide_range():
    lo, hi = -(2**62), 2**62
    x = tf.random_uniform([1000], minval=lo, maxval=hi, dtype=tf.int64, seed=6)
    with eager_session() as s:
        v = s.run(x)
    assert v.dtype == np.int64 and v.min() >= lo and v.max() < hi
    assert v.min() < -(2**60) and v.max() > 2**60  # spread over the range, no overflow


def test_truncated_normal_bound_and_statistics():
    x = tf.truncated_normal([N], mean=1.0, stddev=2.0, seed=7)
    with eager_session() as s:
        v = s.run(x)
    assert v.dtype == np.float32
    assert np.all(np.abs(v - 1.0) <= 2 * 2.0 + 1e-6)
    assert abs(v.mean() - 1.0) < 0.02
    # std of a standard normal truncated at +-2: sqrt(1 - 4 phi(2) / (2 Phi(2) - 1)) = 0.8796
    assert abs(v.std() - 2.0 * 0.8796) < 0.02
    z = (v - 1.0) / 2.0
    mass = float(normal_cdf(np.array([2.0]))[0] - normal_cdf(np.array([-2.0]))[0])
    assert ks_stat(z, lambda t: (normal_cdf(t) - normal_cdf(np.array([-2.0]))) / mass) < 0.007


# ---- dtypes, shapes and names ----------------------------------------------------------------


@pytest.mark.parametrize("fn", [tf.random_normal, tf.truncated_normal, tf.random_uniform])
@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_float_dtypes(fn, dtype):
    x = fn([3, 4], dtype=dtype, seed=1)
    assert x.dtype == dtype and x.shape.as_list() == [3, 4]
    with eager_session() as s:
        v = s.run(x)
    assert v.dtype == dtype.np_dtype and v.shape == (3, 4) and np.all(np.isfinite(v))


def test_dtype_errors():
    with pytest.raises(ValueError, match="maxval"):
        tf.random_uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError):
        tf.random_uniform([2], dtype=tf.bool)
    with pytest.raises(ValueError):
        tf.random_uniform([2], dtype=tf.complex64)
    for fn in (tf.random_normal, tf.truncated_normal):
        with pytest.raises(TypeError):
            fn([2], dtype=tf.int32)
    with pytest.raises(ValueError):  # a mean of another dtype than the draw (TF1: ValueError)
        tf.random_normal([2], mean=tf.constant(1.0, tf.float64))
    with pytest.raises(ValueError, match="minval < maxval"):
        tf.random_uniform([2], minval=5, maxval=5, dtype=tf.int32)
    with pytest.raises(ValueError):
        tf.random_normal([2, -1])
    with pytest.raises(TypeError):
        tf.random_normal([2.5])


def test_int_bounds_known_only_at_run_time(mode):
    lo = tf.placeholder(tf.int32, [])
    x = tf.random_uniform([6], minval=lo, maxval=10, dtype=tf.int32, seed=1)
    with make_session(mode, chunks=2) as s:
        v = s.run(x, {lo: 8})
        assert v.min() >= 8 and v.max() < 10
        with pytest.raises(errors.InvalidArgumentError):
            s.run(x, {lo: 10})
    with pytest.raises(ValueError):  # bounds must be scalars
        tf.random_uniform([2], minval=[0, 1], maxval=5, dtype=tf.int32)


def test_op_structure_and_names():
    a = tf.random_normal([2, 3])
    b = tf.random_uniform([4], maxval=5, dtype=tf.int32)
    c = tf.truncated_normal([3], name="tn")
    d = tf.random_uniform([2], 1.0, 3.0)
    e = tf.random_normal([2])
    assert (a.name, b.name, c.name, d.name, e.name) == (
        "random_normal:0", "random_uniform:0", "tn:0", "random_uniform_1:0", "random_normal_1:0")
    g = tf.get_default_graph()
    assert g.get_operation_by_name("random_normal/RandomStandardNormal").type == "RandomStandardNormal"
    assert g.get_operation_by_name("random_normal/mul").type == "Mul"
    assert b.op.type == "RandomUniformInt"
    assert [t.name for t in b.op.inputs] == ["random_uniform/shape:0", "random_uniform/min:0",
                                             "random_uniform/max:0"]
    assert g.get_operation_by_name("tn/TruncatedNormal").type == "TruncatedNormal"
    assert g.get_operation_by_name("random_uniform_1/RandomUniform").type == "RandomUniform"
    assert g.get_operation_by_name("random_uniform_1/sub").type == "Sub"


def test_shapes_scalar_empty_and_broadcast_parameters(mode):
    s0 = tf.random_normal([], seed=1)
    e = tf.random_uniform([0, 3], seed=2)
    m = tf.random_normal([2, 3], mean=[0.0, 10.0, 100.0], stddev=0.0, seed=3)
    w = tf.random_normal([2], mean=[[0.0], [5.0], [9.0]], stddev=[1.0, 0.0], seed=4)
    assert s0.shape.as_list() == [] and e.shape.as_list() == [0, 3]
    assert m.shape.as_list() == [2, 3] and w.shape.as_list() == [3, 2]
    with make_session(mode, chunks=2) as s:
        v0, ve, vm, vw = s.run([s0, e, m, w])
    assert np.shape(v0) == () and ve.shape == (0, 3) and ve.dtype == np.float32
    np.testing.assert_array_equal(vm, np.broadcast_to([0.0, 10.0, 100.0], (2, 3)))
    np.testing.assert_array_equal(vw[:, 1], [0.0, 5.0, 9.0])


def test_shape_given_as_tensor():
    x = tf.placeholder(tf.float32, [None, 3])
    r = tf.random_normal(tf.shape(x), seed=1)
    assert r.shape.as_list() == [None, 3]
    n = tf.placeholder(tf.int32, [2])
    q = tf.random_uniform(n, seed=2)
    assert q.shape.as_list() == [None, None]
    assert tf.random_normal(tf.placeholder(tf.int32, [None])).shape.ndims is None
    assert tf.random_normal(tf.constant([2, 3], tf.int64)).shape.as_list() == [2, 3]
    assert tf.random_normal(tf.TensorShape([4, 1])).shape.as_list() == [4, 1]
    xv = np.zeros((5, 3), np.float32)
    for m in LOCAL_MODES:  # the shape of a feed is known on the host in every mode
        with make_session(m, chunks=2) as s:
            assert s.run(r, {x: xv}).shape == (5, 3)
    with eager_session() as s:  # a fed shape *value* works in memory ...
        assert s.run(q, {n: [2, 4]}).shape == (2, 4)
    with make_session("sync", chunks=2) as s:  # ... and through Dask: the plan is made for the value
        assert s.run(q, {n: [2, 4]}).shape == (2, 4)
        assert s.run(q, {n: [3, 1]}).shape == (3, 1)
    with pytest.raises(ValueError):
        tf.random_normal(tf.placeholder(tf.int32, [2, 2]))


# ---- a new draw per run; reproducibility -----------------------------------------------------


def _draws(graph_fn, session_fn, runs=3):
    g = tf.Graph()
    with g.as_default():
        fetches = graph_fn()
    with session_fn(g) as s:
        return [s.run(fetches) for _ in range(runs)]


def _graph_seeded():
    tf.set_random_seed(42)
    return [tf.random_normal([3, 5]), tf.random_uniform([7]), tf.truncated_normal([4]),
            tf.random_uniform([5], maxval=100, dtype=tf.int64)]


def _assert_draws_equal(a, b):
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x, y)


def test_new_draw_each_run_and_same_sequence_in_a_new_session():
    first = _draws(_graph_seeded, eager_session)
    for i in range(len(first)):
        for j in range(i):
            assert not np.array_equal(first[i][0], first[j][0])
            assert not np.array_equal(first[i][2], first[j][2])
    # the same program built in a new graph gets the same op seeds, hence the same draws
    _assert_draws_equal(first, _draws(_graph_seeded, eager_session))


def test_one_run_sees_one_draw():
    x = tf.random_normal([4], seed=1)
    y = x * 1.0
    with eager_session() as s:
        a, b, c = s.run([x, x, y])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_each_op_counts_its_own_runs():
    def build():
        tf.set_random_seed(3)
        return tf.random_normal([4]), tf.random_normal([4])

    g1 = tf.Graph()
    with g1.as_default():
        a1, b1 = build()
    g2 = tf.Graph()
    with g2.as_default():
        a2, b2 = build()
    with eager_session(g1) as s1, eager_session(g2) as s2:
        s1.run(a1)
        s1.run(a1)
        first_b = s1.run(b1)  # b's first run, after two runs of a
        np.testing.assert_array_equal(first_b, s2.run(b2))


@pytest.mark.parametrize("fn", ["normal", "uniform", "truncated", "int"])
def test_modes_agree_on_every_chunking(fn):
    def build():
        tf.set_random_seed(9)
        return {"normal": lambda: tf.random_normal([5, 7], mean=1.0, stddev=3.0),
                "uniform": lambda: tf.random_uniform([5, 7], -2.0, 2.0, dtype=tf.float64),
                "truncated": lambda: tf.truncated_normal([5, 7]),
                "int": lambda: tf.random_uniform([5, 7], 0, 1000, dtype=tf.int32)}[fn]()

    ref = run_modes(build(), chunks=2)  # eager vs sync vs threads, 2x2 chunks (first draw)
    for chunks in [1, 3, (2, 7), -1]:
        tf.reset_default_graph()
        got = run_modes(build(), chunks=chunks, modes=["sync", "threads"])
        np.testing.assert_array_equal(got, ref)


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(0, 6), max_size=3), chunk=st.integers(1, 4),
       kind=st.sampled_from(["normal", "truncated", "uniform", "int"]))
def test_draw_does_not_depend_on_chunking(shape, chunk, kind):
    tf.reset_default_graph()
    make = {"normal": lambda: tf.random_normal(shape, seed=1),
            "truncated": lambda: tf.truncated_normal(shape, seed=2, dtype=tf.float64),
            "uniform": lambda: tf.random_uniform(shape, seed=3, dtype=tf.float16),
            "int": lambda: tf.random_uniform(shape, -50, 50, dtype=tf.int64, seed=4)}[kind]
    x = make()
    with eager_session() as s:
        want = s.run(x)
    with make_session("sync", chunks=chunk) as s:
        got = s.run(x)
    assert got.dtype == want.dtype and got.shape == tuple(shape)
    np.testing.assert_array_equal(got, want)


def test_truncated_normal_redraws_agree_across_chunks():
    x = tf.truncated_normal([200, 50], seed=5)  # ~460 values are re-drawn, across many chunks
    ref = run_modes(x, chunks=(64, 16))
    assert np.all(np.abs(ref) <= 2.0)
    with eager_session() as s:
        np.testing.assert_array_equal(s.run(x), ref)


def test_every_scheduler_gives_the_eager_draws(any_mode, sess_factory):
    g_ref, g = tf.Graph(), tf.Graph()
    with g_ref.as_default():
        ref_fetches = _graph_seeded()
    with g.as_default():
        fetches = _graph_seeded()
    with eager_session(g_ref) as s:
        want = [s.run(ref_fetches) for _ in range(2)]
    s = sess_factory(any_mode, graph=g, chunks=3)
    _assert_draws_equal(want[:1], [s.run(fetches)])
    _assert_draws_equal(want[1:], [s.run(fetches)])


def test_lowering_is_lazy_and_per_chunk():
    import dask

    from dflow.schedule.compiler import LowerContext
    from dflow.schedule.session import Options

    def lower(t, chunks):
        op = random_op(t)
        ctx = LowerContext(Options(chunks=chunks), {})
        ctx.op = op
        arr = op.op_def.lower(ctx, np.array(t.shape.as_list()), **op.attrs)
        return arr, ctx.run_param(("counter", op.name))

    # 4.8 GB of float32: lowering builds one small task per chunk and generates nothing
    arr, _ = lower(tf.random_normal([40_000, 30_000], seed=1), (10_000, 10_000))
    assert arr.shape == (40_000, 30_000) and arr.numblocks == (4, 3)
    assert len(dict(arr.__dask_graph__())) <= 12 + 1  # the blocks and the run counter

    # one chunk computed alone is that slice of the whole (in-memory) draw
    small = tf.random_normal([40, 30], seed=1)
    with eager_session() as s:
        whole = s.run(random_op(small).outputs[0])
    arr, counter = lower(small, (16, 7))
    dsk = dict(arr.__dask_graph__())
    dsk[(counter.name,)] = np.int64(0)  # what a session sets for the first run
    np.testing.assert_array_equal(dask.get(dsk, (arr.name, 1, 2)), whole[16:32, 14:21])


# ---- TF1 seed rules ---------------------------------------------------------------------------


def _seeds(t):
    op = random_op(t)
    return op.get_attr("seed"), op.get_attr("seed2")


def test_seed_attrs_follow_tf1_rules():
    assert _seeds(tf.random_normal([1])) == (0, 0)  # unseeded
    assert _seeds(tf.random_normal([1], seed=7)) == (87654321, 7)  # op seed only: default graph seed
    tf.set_random_seed(5)
    a, b = tf.random_normal([1]), tf.random_uniform([1])
    assert _seeds(a)[0] == 5 and _seeds(b)[0] == 5 and _seeds(a)[1] != _seeds(b)[1]
    assert _seeds(tf.random_uniform([1], maxval=3, dtype=tf.int32, seed=11)) == (5, 11)
    tf.set_random_seed(0)
    assert _seeds(tf.truncated_normal([1], seed=0)) == (0, _MAXINT32)


def test_op_seed_only_is_reproducible_and_same_seed_same_values():
    a = tf.random_normal([6], seed=3)
    b = tf.random_normal([6], seed=3)  # same (seed, seed2): TF1 gives the same values
    c = tf.random_normal([6], seed=4)
    with eager_session() as s:
        va, vb, vc = s.run([a, b, c])
    np.testing.assert_array_equal(va, vb)
    assert not np.array_equal(va, vc)
    with eager_session() as s:
        np.testing.assert_array_equal(s.run(a), va)


def test_graph_seed_only_gives_distinct_ops_and_depends_on_the_seed():
    def build(seed):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(seed)
            x, y = tf.random_normal([6]), tf.random_normal([6])
        with eager_session(g) as s:
            return s.run([x, y])

    x1, y1 = build(1)
    assert not np.array_equal(x1, y1)
    x1b, _ = build(1)
    np.testing.assert_array_equal(x1, x1b)
    x2, _ = build(2)
    assert not np.array_equal(x1, x2)


def test_unseeded_differs_per_session_and_per_op():
    a, b = tf.random_normal([8]), tf.random_normal([8])
    with eager_session() as s1, eager_session() as s2:
        a1, b1 = s1.run([a, b])
        a2 = s2.run(a)
    assert not np.array_equal(a1, b1)
    assert not np.array_equal(a1, a2)
    with make_session("sync", chunks=3) as s:  # the dask path: a new draw per run as well
        r1, r2 = s.run(a), s.run(a)
    assert not np.array_equal(r1, r2)


def test_a_dimension_past_int32_is_an_int64_shape_never_a_negative_one():
    """TF1's shape_tensor: [3_000_000_000] is an int64 shape (#29: it wrapped to -1294967296)."""
    g = tf.Graph()
    with g.as_default():
        for fn in (tf.random_uniform, tf.random_normal, tf.truncated_normal):
            t = fn([3_000_000_000, 2])
            assert t.shape.as_list() == [3_000_000_000, 2], fn
        r = tf.random_uniform(tf.TensorShape([2**32]))
        assert r.shape.as_list() == [2**32]
        shapes = [op.inputs[0].dtype for op in g.get_operations() if op.type == "RandomUniform"]
        assert shapes == [tf.int64, tf.int64]
        tf.random_uniform([2, 3])
        assert [op.inputs[0].dtype for op in g.get_operations() if op.type == "RandomUniform"][-1] == tf.int32
        with tf.Session() as sess:  # a small one through an int64 shape runs
            assert sess.run(tf.random_uniform(np.array([3], np.int64))).shape == (3,)
