"""Array manipulation ops against numpy: every local mode (eager, sync, threads) on several chunks,
static shape inference, tensor-valued shape arguments and the build-time errors."""

from __future__ import annotations

import tracemalloc

import dask.array as da
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf
from dflow.graph.ops import constant_value
from dflow.graph.registry import get_opdef
from tests.conftest import rand, run_modes

SETTINGS = settings(max_examples=20, deadline=None)
shapes = st.lists(st.integers(1, 5), min_size=1, max_size=4)


def ph(value, known=False):
    """A placeholder for `value` with unknown dims (or its static shape when `known`)."""
    shape = value.shape if known else [None] * value.ndim
    return tf.placeholder(tf.as_dtype(value.dtype), shape)


def check(t, feeds, expected, shape=None):
    """Runs `t` in every local mode; compares with numpy (exactly) and the static shape."""
    got = run_modes(t, feeds)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype
    if shape is not None:
        assert t.shape.as_list() == shape
    assert t.shape.is_compatible_with(expected.shape)
    return got


class StubCtx:
    """The part of the compiler's lowering context that lowerings use, with fixed chunks."""

    da = da
    op = None

    def __init__(self, chunks=2):
        self.chunks = chunks

    def as_dask(self, x):
        return x if isinstance(x, da.Array) else da.from_array(np.asarray(x), chunks=self.chunks)

    def host_value(self, x, what):
        assert not isinstance(x, da.Array), what
        return np.asarray(x)

    def note_fill(self, arr, value):  # the compiler's record of a Fill's value (reductions fold it)
        pass

    def known_shape(self, x):
        return tuple(x.shape)

    def default_chunks(self, shape, dtype):
        return da.core.normalize_chunks(self.chunks, shape, dtype=np.dtype(dtype))


# ---- zeros, ones, fill, *_like ---------------------------------------------------------------------


@pytest.mark.parametrize("fn,ref", [(tf.zeros, np.zeros), (tf.ones, np.ones)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_zeros_ones_static(fn, ref, dtype):
    t = fn([3, 5], dtype=tf.as_dtype(dtype))
    assert t.op.name in ("zeros", "ones")
    check(t, None, ref((3, 5), dtype), shape=[3, 5])
    check(fn(tf.TensorShape([2, 1, 4])), None, ref((2, 1, 4), np.float32), shape=[2, 1, 4])
    check(fn([]), None, ref((), np.float32), shape=[])


def test_zeros_ones_tensor_shape():
    v = rand((7, 3))
    x = ph(v)
    z = tf.zeros(tf.shape(x), dtype=tf.int32)
    assert z.shape.as_list() == [None, None]
    check(z, {x: v}, np.zeros((7, 3), np.int32))
    xk = tf.placeholder(tf.float32, [None, 3])
    o = tf.ones(tf.shape(xk))
    assert o.shape.as_list() == [None, 3]  # the known dims of x carry through shape(x)
    check(o, {xk: v}, np.ones((7, 3), np.float32))
    # a list mixing ints and scalar tensors is stacked; its known entries stay known
    m = tf.zeros([tf.size(x), 2])
    assert m.shape.as_list() == [None, 2]
    check(m, {x: v}, np.zeros((21, 2), np.float32))
    check(tf.ones(xk.shape[1:]), None, np.ones((3,), np.float32), shape=[3])


def test_fill():
    check(tf.fill([2, 3], 7), None, np.full((2, 3), 7, np.int32), shape=[2, 3])
    check(tf.fill([4], 2.5), None, np.full((4,), 2.5, np.float32), shape=[4])
    v = rand((5, 4))
    x = ph(v)
    # a value computed in the run, broadcast lazily over the chunks
    t = tf.fill(tf.shape(x), tf.constant(np.float64(1.5)))
    check(t, {x: v}, np.full((5, 4), 1.5))
    with pytest.raises(ValueError, match="Fill"):
        tf.fill([2, -1], 1.0)
    with pytest.raises(ValueError, match="rank 0"):
        tf.fill([2], [1.0, 2.0])
    with pytest.raises(TypeError):
        tf.fill([2.5], 1.0)


@pytest.mark.parametrize("fn,val", [(tf.zeros_like, 0), (tf.ones_like, 1)])
def test_like(fn, val):
    v = rand((5, 3))
    x = tf.placeholder(tf.float32, [None, 3])
    t = fn(x)
    assert t.shape.as_list() == [None, 3] and t.dtype == tf.float32
    check(t, {x: v}, np.full((5, 3), val, np.float32))
    check(fn(x, dtype=tf.int64), {x: v}, np.full((5, 3), val, np.int64))
    check(fn([[1, 2], [3, 4]]), None, np.full((2, 2), val, np.int32), shape=[2, 2])
    folded = constant_value(fn(tf.placeholder(tf.float32, [2, 2])))  # from the static shape alone
    np.testing.assert_array_equal(folded, np.full((2, 2), val, np.float32))


def test_like_keeps_chunks_and_skips_input():
    x = da.ones((7, 5), chunks=(3, 2))
    for name in ("ZerosLike", "OnesLike"):
        y = get_opdef(name).lower(StubCtx(), x, dtype=tf.int32)
        assert y.chunks == x.chunks and y.dtype == np.int32
        # built from the shape alone: the input's tasks are not in the result's graph
        assert not set(x.__dask_graph__()) & set(y.__dask_graph__())


def test_large_fill_stays_lazy():
    y = get_opdef("Fill").lower(StubCtx(chunks=1000), np.array([10**5, 10**6]), np.float32(3))
    assert y.shape == (10**5, 10**6) and y.chunksize == (1000, 1000)  # 400 GB, never materialized
    assert y[5:7, 1:3].compute().tolist() == [[3, 3], [3, 3]]
    # through a session: a 400 MB zeros of which only the head is fetched
    z = tf.zeros([10**8])
    head = tf.split(z, [5, -1])[0]
    tracemalloc.start()
    with tf.Session(scheduler="sync", chunks=10**6) as s:
        out = s.run(head)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    np.testing.assert_array_equal(out, np.zeros(5, np.float32))
    assert peak < 50 * 2**20, peak


# ---- range, linspace -----------------------------------------------------------------------------


@pytest.mark.parametrize("args,kwargs", [
    ((5,), {}), ((2, 9), {}), ((2, 9, 3), {}), ((9, 2, -2), {}), ((0,), {}), ((1, 5.5), {}),
    ((0.5, 3.0, 0.3), {}), ((3,), {"dtype": tf.float64}), ((1, 10, 4), {"dtype": tf.int64}),
])
def test_range(args, kwargs):
    t = tf.range(*args, **kwargs)
    start, limit, delta = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
    if "dtype" in kwargs:
        dtype = kwargs["dtype"].as_numpy_dtype
    else:
        dtype = np.float32 if any(isinstance(a, float) for a in args) else np.int32
    expected = np.arange(start, limit, delta).astype(dtype)
    got = run_modes(t, None)
    assert got.dtype == dtype and t.dtype == tf.as_dtype(dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert t.shape.as_list() == [len(expected)]


def test_range_tensor_args():
    v = rand((3, 4))
    x = ph(v)
    t = tf.range(tf.size(x))  # known from the feed's shape when the plan is compiled
    assert t.shape.as_list() == [None]
    check(t, {x: v}, np.arange(12, dtype=np.int32))
    check(tf.range(2, tf.size(x), 3, dtype=tf.float32), {x: v}, np.arange(2, 12, 3, dtype=np.float32))
    check(tf.range(tf.constant(np.int64(4))), None, np.arange(4, dtype=np.int64), shape=[4])


def test_range_errors():
    with pytest.raises(ValueError, match="start <= limit"):
        tf.range(5, 1)
    with pytest.raises(ValueError, match="delta != 0"):
        tf.range(1, 5, 0)
    with pytest.raises(TypeError):
        tf.range(tf.constant([1, 2]), dtype=tf.bool)


def test_linspace():
    for start, stop, num in [(0.0, 1.0, 5), (-3.0, 7.0, 11), (2.0, -1.0, 4), (1.5, 9.0, 1)]:
        t = tf.linspace(start, stop, num)
        assert t.shape.as_list() == [num] and t.dtype == tf.float32
        got = run_modes(t, None)
        np.testing.assert_allclose(got, np.linspace(start, stop, num, dtype=np.float32), rtol=1e-6)
    t = tf.lin_space(tf.constant(np.float64(1.0)), 2, 3)
    assert t.dtype == tf.float64
    np.testing.assert_allclose(run_modes(t, None), [1.0, 1.5, 2.0])
    v = rand((6,))
    x = ph(v)
    t = tf.linspace(0.0, 1.0, tf.size(x))
    assert t.shape.as_list() == [None]
    np.testing.assert_allclose(run_modes(t, {x: v}), np.linspace(0, 1, 6), rtol=1e-6)
    s = tf.placeholder(tf.float32, [])  # an endpoint that is data in the run
    t = tf.linspace(s, 4.0, 5)
    np.testing.assert_allclose(run_modes(t, {s: np.float32(2)}), np.linspace(2, 4, 5), rtol=1e-6)
    with pytest.raises(ValueError, match="num > 0"):
        tf.linspace(0.0, 1.0, 0)


# ---- transpose, expand_dims, squeeze --------------------------------------------------------------


@SETTINGS
@given(shape=shapes, seed=st.integers(0, 1000))
def test_transpose(shape, seed):
    tf.reset_default_graph()
    v = rand(shape, seed=seed)
    perm = list(np.random.default_rng(seed).permutation(len(shape)))
    x = ph(v)
    check(tf.transpose(x, perm), {x: v}, np.transpose(v, perm))
    xk = ph(v, known=True)
    check(tf.transpose(xk), {xk: v}, v.T, shape=list(v.T.shape))
    neg = [p - len(shape) for p in perm]  # negative entries count from the end
    check(tf.transpose(xk, neg), {xk: v}, np.transpose(v, perm), shape=[shape[p] for p in perm])


def test_transpose_unknown_rank_and_tensor_perm():
    v = rand((2, 3, 4))
    x = tf.placeholder(tf.float32)
    t = tf.transpose(x)
    assert t.shape.ndims is None
    check(t, {x: v}, v.T)
    perm = tf.range(tf.rank(x) - 1, -1, -1)  # rank known when the plan is compiled
    check(tf.transpose(x, perm), {x: v}, v.T)
    c = (rand((3, 2)) + 1j * rand((3, 2), seed=1)).astype(np.complex64)
    check(tf.transpose(tf.constant(c), conjugate=True), None, np.conj(c.T), shape=[2, 3])


def test_transpose_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="rank 2"):
        tf.transpose(x, [0])
    with pytest.raises(ValueError, match="permutation"):
        tf.transpose(x, [0, 0])
    with pytest.raises(ValueError, match="out of range"):
        tf.transpose(x, [0, 2])


def test_expand_dims():
    v = rand((3, 4))
    for axis in range(-3, 3):
        x = ph(v, known=True)
        t = tf.expand_dims(x, axis)
        expected = np.expand_dims(v, axis)
        check(t, {x: v}, expected, shape=list(expected.shape))
    x = ph(v)
    check(tf.expand_dims(x, dim=tf.constant(1)), {x: v}, v[:, None], shape=[None, 1, None])
    check(tf.expand_dims(x, [-1]), {x: v}, v[..., None])
    check(tf.expand_dims(x, tf.rank(x)), {x: v}, v[..., None])
    with pytest.raises(ValueError, match="interval"):
        tf.expand_dims(tf.zeros([2, 3]), 3)
    with pytest.raises(ValueError, match="interval"):
        tf.expand_dims(tf.zeros([2, 3]), -4)
    with pytest.raises(ValueError, match="axis"):
        tf.expand_dims(tf.zeros([2, 3]))


def test_squeeze():
    v = rand((1, 3, 1, 4, 1))
    x = ph(v, known=True)
    check(tf.squeeze(x), {x: v}, np.squeeze(v), shape=[3, 4])
    check(tf.squeeze(x, [0, -1]), {x: v}, np.squeeze(v, (0, 4)), shape=[3, 1, 4])
    check(tf.squeeze(x, axis=2), {x: v}, np.squeeze(v, 2), shape=[1, 3, 4, 1])
    check(tf.squeeze(x, squeeze_dims=[-3]), {x: v}, np.squeeze(v, 2))
    u = ph(v)  # unknown dims: all-dims squeeze has unknown rank, listed ones are checked at run time
    t = tf.squeeze(u)
    assert t.shape.ndims is None
    check(t, {u: v}, np.squeeze(v))
    check(tf.squeeze(u, [0, 2]), {u: v}, np.squeeze(v, (0, 2)), shape=[None, None, None])
    with pytest.raises(ValueError, match="squeeze dim\\[1\\]"):
        tf.squeeze(x, [1])
    with pytest.raises(ValueError, match="not in"):
        tf.squeeze(x, [5])
    with pytest.raises(tf.errors.InvalidArgumentError):
        with tf.Session() as s:
            s.run(tf.squeeze(u, [1]), {u: v})


# ---- concat, unstack, split --------------------------------------------------------------------------


@SETTINGS
@given(shape=shapes, seed=st.integers(0, 1000), n=st.integers(2, 4))
def test_concat(shape, seed, n):
    tf.reset_default_graph()
    rng = np.random.default_rng(seed)
    axis = int(rng.integers(-len(shape), len(shape)))
    vals = []
    for i in range(n):
        s = list(shape)
        s[axis] = int(rng.integers(0, 4))
        vals.append(rand(s, seed=seed + i))
    xs = [ph(v, known=(i % 2 == 0)) for i, v in enumerate(vals)]
    t = tf.concat(xs, axis)
    expected = np.concatenate(vals, axis)
    got = check(t, dict(zip(xs, vals)), expected)
    assert got.shape == expected.shape
    known = tf.concat([tf.constant(v) for v in vals], axis)
    assert known.shape.as_list() == list(expected.shape)


def test_concat_partial_shapes_and_errors():
    a = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [2, None])
    assert tf.concat([a, b], 0).shape.as_list() == [None, 3]
    assert tf.concat([a, b], 1).shape.as_list() == [2, None]
    assert tf.concat([a, b], tf.placeholder(tf.int32, [])).shape.as_list() == [None, None]
    assert tf.concat([a], 0).shape.as_list() == [None, 3]
    q = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="rank"):
        tf.concat([q, tf.zeros([2, 3, 1])], 0)
    with pytest.raises(ValueError, match="dimension 1"):
        tf.concat([q, tf.zeros([3, 4])], 0)
    with pytest.raises(TypeError, match="match"):
        tf.concat([q, tf.zeros([3, 3], tf.int32)], 0)
    with pytest.raises(ValueError, match="out of range"):
        tf.concat([q, q], 2)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_unstack(axis):
    v = rand((3, 4, 2))
    x = ph(v, known=True)
    outs = tf.unstack(x, axis=axis)
    expected = [np.take(v, i, axis=axis) for i in range(v.shape[axis])]
    assert len(outs) == len(expected)
    got = run_modes(outs, {x: v})
    for t, g, e in zip(outs, got, expected):
        np.testing.assert_array_equal(g, e)
        assert t.shape.as_list() == list(e.shape)


def test_unstack_num_and_errors():
    v = rand((3, 2))
    x = ph(v)
    outs = tf.unstack(x, num=2, axis=1)
    got = run_modes(outs, {x: v})
    np.testing.assert_array_equal(got[1], v[:, 1])
    one = tf.unstack(tf.constant(v[:1]))
    assert isinstance(one, list) and len(one) == 1
    np.testing.assert_array_equal(run_modes(one, None)[0], v[0])
    with pytest.raises(ValueError, match="num"):
        tf.unstack(x)
    with pytest.raises(ValueError, match="axis"):
        tf.unstack(tf.zeros([2, 3]), axis=2)


@pytest.mark.parametrize("sizes,axis", [(3, 1), ([1, 2, 3], -1), ([2, -1], 1), ([-1, 4], 1), (1, 0),
                                        ([1, 1], 0), (2, -2)])
def test_split(sizes, axis):
    v = rand((2, 6))
    x = ph(v, known=True)
    outs = tf.split(x, sizes, axis=axis)
    if isinstance(sizes, int):
        expected = np.split(v, sizes, axis=axis)
    else:
        fixed = [v.shape[axis] - sum(s for s in sizes if s != -1) if s == -1 else s for s in sizes]
        expected = np.split(v, np.cumsum(fixed)[:-1], axis=axis)
    assert isinstance(outs, list) and len(outs) == len(expected)
    got = run_modes(outs, {x: v})
    for t, g, e in zip(outs, got, expected):
        np.testing.assert_array_equal(g, e)
        assert t.shape.as_list() == list(e.shape)


def test_split_tensor_sizes_and_unknown_dims():
    v = rand((7, 3))
    x = ph(v)
    outs = tf.split(x, tf.constant([2, -1]), axis=0)
    assert [t.shape.as_list() for t in outs] == [[2, None], [None, None]]
    got = run_modes(outs, {x: v})
    np.testing.assert_array_equal(got[0], v[:2])
    np.testing.assert_array_equal(got[1], v[2:])
    a, b, c = tf.split(x, tf.constant(3), axis=tf.constant(1))
    np.testing.assert_array_equal(run_modes(c, {x: v}), v[:, 2:])
    xk = tf.placeholder(tf.float32, [None, 3])
    assert [t.shape.as_list() for t in tf.split(xk, [1, 2], 1)] == [[None, 1], [None, 2]]


def test_split_errors():
    q = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="size 3"):
        tf.split(q, [1, 1], axis=1)
    with pytest.raises(ValueError, match="divisible"):
        tf.split(q, 2, axis=1)
    with pytest.raises(ValueError, match="one -1"):
        tf.split(q, [-1, -1, 1], axis=1)
    with pytest.raises(ValueError, match="num"):
        tf.split(q, [1, 2], axis=1, num=3)
    with pytest.raises(ValueError, match="num"):
        tf.split(q, tf.placeholder(tf.int32, [None]))
    with pytest.raises(ValueError, match=">= 1"):
        tf.split(q, 0)
    x = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(tf.errors.InvalidArgumentError):
        run_modes(tf.split(x, 2, axis=0), {x: rand((3, 3))}, modes=["sync"])


# ---- tile, pad, reverse ------------------------------------------------------------------------------


@SETTINGS
@given(shape=shapes, seed=st.integers(0, 1000))
def test_tile(shape, seed):
    tf.reset_default_graph()
    v = rand(shape, seed=seed)
    mult = [int(m) for m in np.random.default_rng(seed).integers(0, 4, len(shape))]
    x = ph(v, known=True)
    expected = np.tile(v, mult)
    check(tf.tile(x, mult), {x: v}, expected, shape=list(expected.shape))


def test_tile_tensor_multiples_and_errors():
    v, w = rand((2, 3)), rand((3, 1))
    x, y = ph(v), ph(w)
    t = tf.tile(x, tf.shape(y))  # multiples known once the feeds' shapes are
    assert t.shape.as_list() == [None, None]
    check(t, {x: v, y: w}, np.tile(v, (3, 1)))
    with pytest.raises(ValueError, match="Tile"):
        tf.tile(tf.zeros([2, 3]), [1, 2, 3])
    with pytest.raises(ValueError, match="Tile"):
        tf.tile(tf.zeros([2, 3]), [1, -1])


@SETTINGS
@given(shape=st.lists(st.integers(2, 5), min_size=1, max_size=3), seed=st.integers(0, 1000),
       mode=st.sampled_from(["CONSTANT", "REFLECT", "SYMMETRIC", "constant"]))
def test_pad(shape, seed, mode):
    tf.reset_default_graph()
    rng = np.random.default_rng(seed)
    v = rand(shape, seed=seed)
    limit = {"REFLECT": 1, "SYMMETRIC": 0}.get(mode, -3)
    pads = [[int(rng.integers(0, d - limit + 1)) for _ in range(2)] for d in shape]
    x = ph(v, known=True)
    cv = float(rng.integers(0, 3))
    if mode.upper() == "CONSTANT":
        expected = np.pad(v, pads, constant_values=cv)
        t = tf.pad(x, pads, mode=mode, constant_values=cv)
    else:
        expected = np.pad(v, pads, mode=mode.lower())
        t = tf.pad(x, pads, mode=mode)
    check(t, {x: v}, expected, shape=list(expected.shape))


def test_pad_tensor_paddings_and_values():
    v = rand((3, 4))
    x = ph(v)
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    y = ph(ints)
    pads = tf.stack([tf.shape(x), tf.constant([1, 0])], axis=1)  # [[3, 1], [4, 0]]
    t = tf.pad(y, pads, constant_values=tf.constant(np.int32(-2)))
    assert t.shape.as_list() == [None, None]
    check(t, {x: v, y: ints}, np.pad(ints, [[3, 1], [4, 0]], constant_values=-2))
    c = tf.placeholder(tf.float32, [])  # a value that is data in the run
    t = tf.pad(x, [[1, 0], [0, 2]], constant_values=c)
    check(t, {x: v, c: np.float32(9)}, np.pad(v, [[1, 0], [0, 2]], constant_values=9))


def test_pad_errors():
    q = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="mode"):
        tf.pad(q, [[1, 1], [1, 1]], "foo")
    with pytest.raises(ValueError, match=r"\[rank, 2\]"):
        tf.pad(q, [[1, 1]])
    with pytest.raises(ValueError, match="non-negative"):
        tf.pad(q, [[1, -1], [0, 0]])
    with pytest.raises(ValueError, match="REFLECT"):
        tf.pad(q, [[2, 0], [0, 0]], "REFLECT")
    with pytest.raises(ValueError, match="SYMMETRIC"):
        tf.pad(q, [[3, 0], [0, 0]], "SYMMETRIC")


@SETTINGS
@given(shape=shapes, seed=st.integers(0, 1000))
def test_reverse(shape, seed):
    tf.reset_default_graph()
    rng = np.random.default_rng(seed)
    v = rand(shape, np.int32, seed)
    axes = [int(a) for a in rng.permutation(len(shape))[: rng.integers(0, len(shape) + 1)]]
    axes = [a - len(shape) if rng.integers(2) else a for a in axes]
    x = ph(v, known=bool(seed % 2))
    t = tf.reverse(x, axes)
    expected = np.flip(v, axis=tuple(axes)) if axes else v
    check(t, {x: v}, expected)
    assert t.shape.as_list() == list(x.shape.as_list())


def test_reverse_errors():
    q = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="more than once"):
        tf.reverse(q, [0, -2])
    with pytest.raises(ValueError, match="range"):
        tf.reverse_v2(q, [2])


# ---- add_n -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5])
def test_add_n(n):
    vals = [rand((5, 3), seed=i) for i in range(n)]
    xs = [ph(v, known=(i == 0)) for i, v in enumerate(vals)]
    t = tf.add_n(xs)
    got = run_modes(t, dict(zip(xs, vals)))
    np.testing.assert_allclose(got, sum(vals), rtol=1e-6)
    assert t.shape.as_list() == [5, 3]  # merged from the inputs' static shapes
    ints = [np.arange(6, dtype=np.int64).reshape(2, 3) * i for i in range(3)]
    check(tf.add_n([tf.constant(a) for a in ints]), None, sum(ints), shape=[2, 3])


def test_add_n_errors():
    with pytest.raises(ValueError, match="at least one"):
        tf.add_n([])
    with pytest.raises(ValueError, match="shape"):
        tf.add_n([tf.zeros([2, 3]), tf.zeros([3, 3])])
    with pytest.raises(TypeError, match="dtype"):
        tf.add_n([tf.zeros([2, 3]), tf.zeros([2, 3], tf.int32)])


# ---- chunking of the lowerings -----------------------------------------------------------------------


def test_lowerings_keep_chunks():
    ctx = StubCtx()
    x = da.from_array(rand((6, 5)), chunks=(2, 3))
    y = get_opdef("ConcatV2").lower(ctx, x, x, np.int32(0))
    assert y.chunks == ((2, 2, 2, 2, 2, 2), (3, 2))
    r = get_opdef("ReverseV2").lower(ctx, x, np.array([0, 1]))
    assert r.chunks == ((2, 2, 2), (2, 3))
    t = get_opdef("Tile").lower(ctx, x, np.array([2, 1]))
    assert t.chunks == ((2, 2, 2) * 2, (3, 2))
    p = get_opdef("Pad").lower(ctx, x, np.array([[1, 0], [0, 0]]))
    assert p.chunks == ((1, 2, 2, 2), (3, 2))
    parts = get_opdef("SplitV").lower(ctx, x, np.array([2, 4]), np.int32(0), num_split=2)
    assert [q.chunks for q in parts] == [((2,), (3, 2)), ((2, 2), (3, 2))]


@pytest.mark.parametrize("mode", ["sync", "distributed"])  # distributed: kernels travel pickled
def test_pipeline_on_a_cluster(mode, sess_factory):
    v = rand((6, 4))
    x = ph(v)
    halves = tf.split(tf.transpose(x), 2, axis=1)
    padded = tf.pad(tf.concat(halves[::-1], 0), [[1, 0], [0, 1]], "SYMMETRIC")
    out = tf.add_n([tf.tile(tf.reverse(padded, [-1]), [1, 2]), tf.ones_like(tf.tile(padded, [1, 2]))])
    t = v.T
    ref = np.pad(np.concatenate([t[:, 3:], t[:, :3]], 0), [[1, 0], [0, 1]], mode="symmetric")
    expected = np.tile(ref[:, ::-1], (1, 2)) + 1
    s = sess_factory(mode, chunks=2)
    for _ in range(2):  # the cached plan gives the same answer
        np.testing.assert_array_equal(s.run(out, {x: v}), expected)
    parts = s.run(tf.unstack(tf.range(tf.size(x)), num=24)[::7], {x: v})
    assert [int(p) for p in parts] == [0, 7, 14, 21]
