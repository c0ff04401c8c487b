"""Session: lifecycle, default sessions, fetch structures, feeds, errors and the plan cache."""

from __future__ import annotations

import collections

import dask.array as da
import numpy as np
import pytest

import dflow as tf
from dflow import errors
from dflow.schedule import session as session_mod

Pair = collections.namedtuple("Pair", ["a", "b"])


def _xv(shape=(4, 3), seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def only_plan(sess):
    (plan,) = sess._plans.values()
    return plan


@pytest.fixture
def count_compiles(monkeypatch):
    """Counts calls of compile_plan as the session module calls it (it imports the name)."""
    calls = []
    real = session_mod.compile_plan

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(session_mod, "compile_plan", spy)
    return calls


# ---- lifecycle and default sessions -----------------------------------------------------------

def test_context_manager_installs_default_and_closes():
    x = tf.placeholder(tf.float32, [3], name="x")
    assert tf.get_default_session() is None
    with tf.Session() as s:
        assert tf.get_default_session() is s
        assert tf.get_default_graph() is s.graph
        np.testing.assert_array_equal((x * 2).eval({x: np.ones(3, np.float32)}), [2, 2, 2])
    assert tf.get_default_session() is None
    with pytest.raises(errors.FailedPreconditionError):
        s.run(x, {x: np.ones(3, np.float32)})
    with pytest.raises(RuntimeError, match="closed"):
        s.run(x, {x: np.ones(3, np.float32)})


def test_close_is_idempotent_and_blocks_runs():
    x = tf.placeholder(tf.float32, [2], name="x")
    s = tf.Session(scheduler="sync")
    assert s.run(x + 1, {x: np.zeros(2, np.float32)}).tolist() == [1, 1]
    s.close()
    s.close()
    with pytest.raises(errors.FailedPreconditionError) as info:
        s.run(x + 1, {x: np.zeros(2, np.float32)})
    assert isinstance(info.value, RuntimeError)
    assert isinstance(info.value, errors.OpError)


def test_as_default_does_not_close():
    x = tf.placeholder(tf.float32, [2], name="x")
    s = tf.Session()
    with s.as_default():
        assert tf.get_default_session() is s
        assert (x + 1).eval({x: np.zeros(2, np.float32)}).tolist() == [1, 1]
    assert tf.get_default_session() is None
    assert s.run(x + 2, {x: np.zeros(2, np.float32)}).tolist() == [2, 2]  # still open
    s.close()


def test_nested_default_sessions():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        a = tf.placeholder(tf.float32, [], name="a")
    with g2.as_default():
        b = tf.placeholder(tf.float32, [], name="b")
    with tf.Session(graph=g1) as s1:
        with tf.Session(graph=g2) as s2:
            assert tf.get_default_session() is s2
            assert tf.get_default_graph() is g2
            assert b.eval({b: 2.0}) == 2.0
            with pytest.raises(ValueError):
                a.eval({a: 1.0})  # the default session runs another graph
            assert a.eval({a: 1.0}, session=s1) == 1.0
        assert tf.get_default_session() is s1
        assert a.eval({a: 3.0}) == 3.0


def test_eval_and_run_without_default_session():
    x = tf.placeholder(tf.float32, [2], name="x")
    with pytest.raises(ValueError, match="default session"):
        x.eval({x: np.zeros(2, np.float32)})
    with pytest.raises(ValueError):
        (x + 1).op.run({x: np.zeros(2, np.float32)})


def test_operation_run_returns_none():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.identity(x * 3, name="y")
    with tf.Session():
        assert y.op.run({x: np.ones(2, np.float32)}) is None
    s = tf.Session(scheduler="sync")
    assert y.op.run({x: np.ones(2, np.float32)}, session=s) is None
    assert y.eval({x: np.ones(2, np.float32)}, session=s).tolist() == [3, 3]
    s.close()


def test_interactive_session():
    x = tf.placeholder(tf.float64, [3], name="x")
    s = tf.InteractiveSession()
    try:
        assert tf.get_default_session() is s
        np.testing.assert_array_equal(tf.exp(x).eval({x: np.zeros(3)}), np.ones(3))
    finally:
        s.close()
    assert tf.get_default_session() is None
    with pytest.raises(errors.FailedPreconditionError):
        s.run(x, {x: np.zeros(3)})


def test_graph_and_graph_def_properties():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.sqrt(x, name="root")
    s = tf.Session(graph=g)
    assert s.graph is g
    names = [n["name"] for n in s.graph_def.node]
    assert names == ["x", "root"]
    assert tf.Session().graph is tf.get_default_graph()
    with g.as_default():
        assert tf.Session().graph is g


# ---- fetch structures --------------------------------------------------------------------------

@pytest.fixture
def xy():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.multiply(x, 2.0, name="y")
    return x, y, {x: _xv()}


@pytest.mark.parametrize("sched", [None, "sync"])
def test_fetch_single_tensor_and_names(xy, sched):
    x, y, feed = xy
    xv = feed[x]
    with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
        r = s.run(y, feed)
        assert isinstance(r, np.ndarray) and r.dtype == np.float32
        np.testing.assert_array_equal(r, xv * 2)
        np.testing.assert_array_equal(s.run("y:0", feed), xv * 2)
        assert s.run("y", feed) is None  # an op name fetches the op
        assert s.run(y.op, feed) is None
        np.testing.assert_array_equal(s.run(x, feed), xv)  # a fed tensor is returned as fed


@pytest.mark.parametrize("sched", [None, "sync"])
def test_fetch_nested_structures(xy, sched):
    x, y, feed = xy
    xv = feed[x]
    z = tf.add(y, 1.0, name="z")
    fetches = {"a": [y, (z, "y:0")], "b": Pair(a=z, b={"op": y.op, "t": x}), "c": (y,)}
    with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
        r = s.run(fetches, feed)
    assert set(r) == {"a", "b", "c"}
    assert isinstance(r["a"], list) and isinstance(r["a"][1], tuple)
    assert isinstance(r["b"], Pair) and isinstance(r["c"], tuple) and len(r["c"]) == 1
    np.testing.assert_array_equal(r["a"][0], xv * 2)
    np.testing.assert_array_equal(r["a"][1][0], xv * 2 + 1)
    np.testing.assert_array_equal(r["a"][1][1], xv * 2)
    np.testing.assert_array_equal(r["b"].a, xv * 2 + 1)
    assert r["b"].b["op"] is None
    np.testing.assert_array_equal(r["b"].b["t"], xv)


def test_fetch_ordered_dict_and_empty_structures(xy):
    x, y, feed = xy
    with tf.Session() as s:
        r = s.run(collections.OrderedDict([("z", y), ("a", x)]), feed)
        assert isinstance(r, collections.OrderedDict) and list(r) == ["z", "a"]
        assert s.run([], feed) == []
        assert s.run({}, feed) == {}
        assert s.run([[y]], feed)[0][0].shape == (4, 3)


@pytest.mark.parametrize("sched", [None, "sync"])
def test_fetch_duplicates(xy, sched):
    x, y, feed = xy
    with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
        a, b, c = s.run([y, y, "y:0"], feed)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("sched", [None, "sync", "threads"])
def test_zero_d_fetch_is_numpy_scalar(sched):
    x = tf.placeholder(tf.float32, [], name="x")
    v = tf.placeholder(tf.float32, [None, 2], name="v")
    with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
        r = s.run(x * x, {x: 3.0})
        assert isinstance(r, np.float32) and r == 9.0
        n, k = s.run([tf.size(v), tf.rank(v)], {v: np.zeros((5, 2), np.float32)})
        assert isinstance(n, np.int32) and n == 10
        assert isinstance(k, np.int32) and k == 2
        sh = s.run(tf.shape(v), {v: np.zeros((5, 2), np.float32)})
        assert isinstance(sh, np.ndarray) and sh.dtype == np.int32 and sh.tolist() == [5, 2]


# ---- feeds -------------------------------------------------------------------------------------

@pytest.mark.parametrize("sched", [None, "sync"])
def test_feed_python_scalars_and_lists(sched):
    f = tf.placeholder(tf.float32, [], name="f")
    m = tf.placeholder(tf.float64, [2, 3], name="m")
    i = tf.placeholder(tf.int32, [None], name="i")
    with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
        r = s.run([f + f, m * 2.0, i * 2], {f: 1.5, m: [[1, 2, 3], [4, 5, 6]], i: [1, 2, 3]})
    assert r[0] == np.float32(3.0) and isinstance(r[0], np.float32)
    assert r[1].dtype == np.float64 and r[1].tolist() == [[2, 4, 6], [8, 10, 12]]
    assert r[2].dtype == np.int32 and r[2].tolist() == [2, 4, 6]


def test_feed_numpy_of_wider_float_is_cast():
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.Session() as s:
        r = s.run(x, {x: np.array([1.0, 2.0, 3.0], np.float64)})
    assert r.dtype == np.float32


def test_a_repeated_numpy_feed_is_cast_and_checked_as_the_first():
    """Feeds seen before reuse their resolved tensor and spec: the cast still happens each run, a
    name key works like the tensor, and a set_shape after a run is still enforced."""
    x = tf.placeholder(tf.float32, [None], name="xr")
    y = x * 2.0
    with tf.Session() as s:
        for v in (np.arange(3.0), np.arange(3.0) + 1, np.arange(3.0) + 2):
            r = s.run(y, {x: v})
            assert r.dtype == np.float32 and r.tolist() == (2 * v).tolist()
            assert s.run(y, {"xr:0": v}).tolist() == (2 * v).tolist()
        with pytest.raises(tf.errors.InvalidArgumentError, match="dtype"):
            s.run(y, {x: np.array(["a", "b", "c"])})
        x.set_shape([4])
        with pytest.raises(ValueError, match="shape"):
            s.run(y, {x: np.arange(3.0)})


@pytest.mark.parametrize("sched", [None, "sync", "threads"])
def test_feed_dask_array_with_several_chunks(sched):
    x = tf.placeholder(tf.float64, [None, 4], name="x")
    xv = _xv((10, 4), seed=3, dtype=np.float64)
    xd = da.from_array(xv, chunks=(3, 2))
    with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
        r = s.run(tf.tanh(x) * 2.0 + x, {x: xd})
        plan = only_plan(s)
    np.testing.assert_allclose(r, np.tanh(xv) * 2 + xv, rtol=1e-12)
    assert plan.kind == "dask"  # a dask feed never takes the eager path
    assert plan.slots[0].spec.kind == "dask"
    assert plan.slots[0].spec.chunks == ((3, 3, 3, 1), (2, 2))


def test_feed_dask_array_of_other_dtype_is_cast():
    x = tf.placeholder(tf.float32, [6], name="x")
    with tf.Session(scheduler="sync") as s:
        r = s.run(x + 1.0, {x: da.arange(6, chunks=2).astype(np.float64)})
    assert r.dtype == np.float32 and r.tolist() == [1, 2, 3, 4, 5, 6]


def _zarr_array(path, data, chunks):
    zarr = pytest.importorskip("zarr")
    z = zarr.open_array(store=str(path), mode="w", shape=data.shape, chunks=chunks, dtype=data.dtype)
    z[...] = data
    return z


@pytest.mark.parametrize("sched", [None, "sync", "threads"])
def test_feed_zarr_array_read_lazily(tmp_path, sched):
    xv = _xv((8, 3), seed=4)
    z = _zarr_array(tmp_path / "x.zarr", xv, chunks=(2, 3))
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = x * 2.0
    with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
        np.testing.assert_array_equal(s.run(y, {x: z}), xv * 2)
        spec = only_plan(s).slots[0].spec
        assert spec.kind == "dask" and spec.chunks == ((2, 2, 2, 2), (3,))
        z[...] = xv + 1  # the array is read when the run happens, not when first fed
        np.testing.assert_array_equal(s.run(y, {x: z}), (xv + 1) * 2)
        assert len(s._plans) == 1


def test_feed_zarr_is_read_chunk_by_chunk(tmp_path, monkeypatch):
    zarr = pytest.importorskip("zarr")
    xv = _xv((8, 3), seed=5)
    z = _zarr_array(tmp_path / "x.zarr", xv, chunks=(2, 3))
    from dflow.storage.chunks import ChunkIO

    reads, whole = [], []
    real_read, real_getitem = ChunkIO.read, zarr.Array.__getitem__

    def counting(self, coords, out=None):
        reads.append(tuple(coords))
        return real_read(self, coords, out)

    def getitem(self, sel):
        whole.append(sel)
        return real_getitem(self, sel)

    monkeypatch.setattr(ChunkIO, "read", counting)
    monkeypatch.setattr(zarr.Array, "__getitem__", getitem)
    x = tf.placeholder(tf.float32, [8, 3], name="x")
    with tf.Session(scheduler="sync") as s:
        np.testing.assert_array_equal(s.run(x + 1.0, {x: z}), xv + 1)
    assert sorted(reads) == [(i, 0) for i in range(4)]  # each chunk file streamed once
    assert whole == []  # nothing read through zarr-python


def test_feed_intermediate_tensor_replaces_it():
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.exp(x, name="y")
    z = y + 1.0
    yv = np.array([1.0, 2.0, 3.0], np.float32)
    for sched in [None, "sync"]:
        with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
            np.testing.assert_array_equal(s.run(z, {y: yv}), yv + 1)  # x need not be fed
            np.testing.assert_array_equal(s.run(y, {y: yv}), yv)
            np.testing.assert_allclose(s.run(z, {x: np.zeros(3, np.float32)}), [2, 2, 2])


def test_feed_intermediate_with_dask_value():
    x = tf.placeholder(tf.float64, [6], name="x")
    y = tf.square(x)
    z = y * 2.0
    with tf.Session(scheduler="sync") as s:
        np.testing.assert_array_equal(s.run(z, {y: da.arange(6.0, chunks=2)}), np.arange(6.0) * 2)


def test_unneeded_placeholder_need_not_be_fed():
    a = tf.placeholder(tf.float32, [2], name="a")
    b = tf.placeholder(tf.float32, [2], name="b")
    c = a + b  # noqa: F841 - never fetched
    for sched in [None, "sync"]:
        with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
            assert s.run(a * 3.0, {a: np.ones(2, np.float32)}).tolist() == [3, 3]


def test_feeds_of_unused_tensors_are_allowed():
    a = tf.placeholder(tf.float32, [2], name="a")
    b = tf.placeholder(tf.float32, [2], name="b")
    with tf.Session() as s:
        r = s.run(a + 1.0, {a: np.zeros(2, np.float32), b: np.ones(2, np.float32)})
    assert r.tolist() == [1, 1]


def test_feed_by_name_string():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.Session() as s:
        assert s.run(x * 2.0, {"x:0": [1.0, 2.0]}).tolist() == [2, 4]


# ---- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("sched", [None, "sync"])
def test_unfed_placeholders_are_all_named(sched):
    a = tf.placeholder(tf.float32, [None, 2], name="alpha")
    b = tf.placeholder(tf.int32, [2], name="beta")
    out = a + tf.cast(b, tf.float32)
    with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
        with pytest.raises(errors.InvalidArgumentError) as info:
            s.run(out)
        assert "alpha" in str(info.value) and "beta" in str(info.value)
        assert "You must feed a value for placeholder" in str(info.value)
        with pytest.raises(errors.InvalidArgumentError, match="beta") as info:
            s.run(out, {a: np.zeros((1, 2), np.float32)})
        assert "alpha" not in str(info.value)


@pytest.mark.parametrize("sched", [None, "sync"])
def test_feed_shape_mismatch(sched):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
        for bad in [np.zeros((2, 4), np.float32), np.zeros(3, np.float32), da.zeros((2, 2), chunks=1)]:
            with pytest.raises(errors.InvalidArgumentError, match="x:0") as info:
                s.run(x + 1.0, {x: bad})
            assert isinstance(info.value, ValueError)  # TF1 raises ValueError here
            assert "shape" in str(info.value)


@pytest.mark.parametrize("sched", [None, "sync"])
def test_feed_dtype_conversions_are_tf1s(sched):
    """numpy feeds convert as TF1's Session converts them (`np.asarray(value, dtype)`, checked with
    TF 2.21's tf.compat.v1): floats truncated into ints, numeric strings parsed, object arrays of
    numbers, negative ints wrapped into uint8, ints into bool; a Python int the dtype cannot hold is
    TF1's TypeError; what numpy cannot convert (letters into ints) and a dask float array into
    ints (dflow's rule: no silent cast of a chunked feed) are refused naming the tensor."""
    i = tf.placeholder(tf.int32, [2], name="ints")
    b = tf.placeholder(tf.bool, [2], name="flags")
    f = tf.placeholder(tf.float32, [2], name="floats")
    u = tf.placeholder(tf.uint8, [2], name="bytes")
    with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
        assert s.run(i * 2, {i: np.array([1.5, -2.7])}).tolist() == [2, -4]
        assert s.run(i * 2, {i: [1.5, 2.5]}).tolist() == [2, 4]
        assert s.run(tf.logical_not(b), {b: np.array([1, 0])}).tolist() == [False, True]
        assert s.run(f * 2, {f: ["1.5", "2"]}).tolist() == [3.0, 4.0]
        assert s.run(f * 2, {f: np.array([1, 2.5], dtype=object)}).tolist() == [2.0, 5.0]
        assert s.run(u + 0, {u: np.array([-1, 300])}).tolist() == [255, 44]
        s2 = tf.placeholder(tf.int32, [], name="scalar")
        with pytest.raises(TypeError, match="Type of feed value 1099511627776 with type <class 'int'> is not "
                                            "compatible with Tensor type <class 'numpy.int32'>"):
            s.run(s2 + 1, {s2: 2 ** 40})
        with pytest.raises(errors.InvalidArgumentError, match="ints:0"):
            s.run(i * 2, {i: np.array(["a", "b"])})
        with pytest.raises(errors.InvalidArgumentError, match="ints:0"):
            s.run(i * 2, {i: da.from_array(np.array([1.0, 2.0]), chunks=1)})


def test_fetch_from_another_graph():
    g = tf.Graph()
    with g.as_default():
        other = tf.placeholder(tf.float32, [2], name="other")
    here = tf.placeholder(tf.float32, [2], name="here")
    with tf.Session() as s:
        with pytest.raises(ValueError, match="other"):
            s.run(other * 2.0, {here: np.zeros(2, np.float32)})
        with pytest.raises(ValueError):
            s.run([here, other], {here: np.zeros(2, np.float32)})
        with pytest.raises(ValueError):
            s.run(other.op)


def test_fetch_unknown_names():
    tf.placeholder(tf.float32, [2], name="x")
    with tf.Session() as s:
        for name in ["nope:0", "nope", "x:1"]:
            with pytest.raises(ValueError, match="nope|x:1") as info:
                s.run(name)
            assert isinstance(info.value, errors.OpError)


@pytest.mark.parametrize("bad", [3, object(), None, 2.5, np.zeros(2)])
def test_fetch_non_graph_element(bad):
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.Session() as s:
        with pytest.raises(TypeError):
            s.run(bad)
        with pytest.raises(TypeError):
            s.run([x, {"k": bad}], {x: np.zeros(2, np.float32)})


def test_feed_key_not_in_graph():
    g = tf.Graph()
    with g.as_default():
        other = tf.placeholder(tf.float32, [2], name="other")
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.Session() as s:
        for key in ["nope:0", other, 3]:
            with pytest.raises((TypeError, ValueError), match="feed_dict key"):
                s.run(x, {x: np.zeros(2, np.float32), key: np.zeros(2, np.float32)})


def test_feed_key_not_in_graph_is_type_error_as_tf1():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.Session() as s, pytest.raises(TypeError):
        s.run(x, {"nope:0": np.zeros(2, np.float32)})


def test_feeding_an_operation_is_an_error():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.Session() as s, pytest.raises((TypeError, ValueError)):
        s.run(x * 2.0, {(x * 2.0).op: np.zeros(2, np.float32)})


# ---- plan cache and chunking ---------------------------------------------------------------------

@pytest.mark.parametrize("sched", [None, "sync"])
def test_same_signature_reuses_plan(count_compiles, sched):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.tanh(x) + 1.0
    with tf.Session(scheduler=sched, chunks=2, **({} if sched is None else {"small_plan_bytes": 0})) as s:
        for seed in range(3):
            xv = _xv((4, 3), seed=seed)
            np.testing.assert_allclose(s.run(y, {x: xv}), np.tanh(xv) + 1, rtol=1e-6)
        assert len(count_compiles) == 1
        s.run([y], {x: _xv((4, 3))})  # another fetch structure of the same elements
        assert len(count_compiles) == 1
        xv = _xv((6, 3))
        np.testing.assert_allclose(s.run(y, {x: xv}), np.tanh(xv) + 1, rtol=1e-6)  # new shape
        assert len(count_compiles) == 2
        s.run(y, {x: _xv((4, 3), seed=9)})  # back to the first signature: cached
        assert len(count_compiles) == 2
        s.run(y * 2.0, {x: _xv((4, 3))})  # a new fetch
        assert len(count_compiles) == 3


def test_dask_feed_chunks_are_part_of_the_signature(count_compiles):
    x = tf.placeholder(tf.float64, [8], name="x")
    y = x * 2.0
    xv = np.arange(8.0)
    with tf.Session(scheduler="sync") as s:
        for chunks in [2, 2, 4, 4, 2]:
            np.testing.assert_array_equal(s.run(y, {x: da.from_array(xv + chunks, chunks=chunks)}),
                                          (xv + chunks) * 2)
        assert len(count_compiles) == 2
        s.run(y, {x: xv})  # numpy instead of dask: another plan
        assert len(count_compiles) == 3
        s.run(y, {x: xv.astype(np.float32)})  # cast to the placeholder's dtype: same signature
        assert len(count_compiles) == 3


def test_session_chunks_option_chunks_numpy_feeds():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    xv = _xv((6, 4))
    with tf.Session(scheduler="sync", chunks=2) as s:
        np.testing.assert_array_equal(s.run(x + 0.0, {x: xv}), xv)
        plan = only_plan(s)
    assert plan.kind == "dask"
    assert plan.slots[0].spec.kind == "numpy"
    assert plan.slots[0].spec.chunks == ((2, 2, 2), (2, 2))
    with tf.Session(scheduler="sync", chunks=(3, -1)) as s:
        np.testing.assert_array_equal(s.run(x * x, {x: xv}), xv * xv)
        assert only_plan(s).slots[0].spec.chunks == ((3, 3), (4,))


def test_session_chunks_tuple_with_constant_of_other_rank():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    xv = _xv((6, 4))
    b = np.arange(4, dtype=np.float32)
    with tf.Session(scheduler="sync", chunks=(3, -1)) as s:
        np.testing.assert_array_equal(s.run(x + b, {x: xv}), xv + b)


def test_session_chunks_tuple_with_feeds_of_other_ranks():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    b = tf.placeholder(tf.float32, [4], name="b")
    a = tf.placeholder(tf.float32, [], name="a")
    xv, bv = _xv((6, 4)), np.arange(4, dtype=np.float32)
    with tf.Session(scheduler="sync", chunks=(3, -1)) as s:
        np.testing.assert_array_equal(s.run(x + b * a, {x: xv, b: bv, a: 2.0}), xv + bv * 2)
        specs = {slot.tensor.name: slot.spec for slot in only_plan(s).slots}
        assert specs["x:0"].chunks == ((3, 3), (4,))


def test_placeholder_chunks_hint_wins_over_session_chunks():
    x = tf.placeholder(tf.float32, [None, 4], name="x", chunks=(4, 2))
    y = tf.placeholder(tf.float32, [None, 4], name="y")
    xv, yv = _xv((8, 4), 1), _xv((8, 4), 2)
    with tf.Session(scheduler="sync", chunks=8) as s:
        np.testing.assert_array_equal(s.run(x + y, {x: xv, y: yv}), xv + yv)
        specs = {slot.tensor.name: slot.spec for slot in only_plan(s).slots}
    assert specs["x:0"].chunks == ((4, 4), (2, 2))
    assert specs["y:0"].chunks == ((8,), (4,))


def test_default_session_small_plans_are_eager_and_large_are_dask():
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.Session() as s:
        s.run(x * 2.0, {x: np.zeros(10, np.float32)})
        assert only_plan(s).kind == "eager"
    with tf.Session(small_plan_bytes=16) as s:
        s.run(x * 2.0, {x: np.zeros(10, np.float32)})  # 40 bytes > 16
        assert only_plan(s).kind == "dask"
    with tf.Session(small_plan_bytes=0) as s:
        s.run(x * 2.0, {x: np.zeros(2, np.float32)})
        assert only_plan(s).kind == "dask"


def test_naming_the_default_scheduler_behaves_as_the_default():
    x = tf.placeholder(tf.float32, [None], name="x")
    for named in ("threads", "threading"):
        with tf.Session(scheduler=named) as s:
            s.run(x * 2.0, {x: np.zeros(10, np.float32)})
            assert only_plan(s).kind == "eager"
    with tf.Session(scheduler="threads", small_plan_bytes=0) as s:  # forcing Dask is its own setting
        s.run(x * 2.0, {x: np.zeros(10, np.float32)})
        assert only_plan(s).kind == "dask"
    for other in ("sync", "processes"):
        with tf.Session(scheduler=other) as s:
            s.run(x * 2.0, {x: np.zeros(10, np.float32)})
            assert only_plan(s).kind == "dask"
    tf.config.set_default_session_settings(scheduler="threads", small_plan_bytes=0)  # dflow run --always-dask
    try:
        with tf.Session() as s:
            s.run(x * 2.0, {x: np.zeros(10, np.float32)})
            assert only_plan(s).kind == "dask"
    finally:
        tf.config.set_default_session_settings()


def test_closing_drops_plans():
    x = tf.placeholder(tf.float32, [2], name="x")
    s = tf.Session()
    s.run(x + 1.0, {x: np.zeros(2, np.float32)})
    assert len(s._plans) == 1
    s.close()
    assert len(s._plans) == 0


# ---- RunOptions / RunMetadata ---------------------------------------------------------------------


def _sleepy(v):
    import time

    time.sleep(0.25)
    return v


def test_run_options_constants_are_tf1s():
    # tensorflow 2.21.0: tf.RunOptions.NO_TRACE ... FULL_TRACE
    assert (tf.RunOptions.NO_TRACE, tf.RunOptions.SOFTWARE_TRACE, tf.RunOptions.HARDWARE_TRACE,
            tf.RunOptions.FULL_TRACE) == (0, 1, 2, 3)
    assert tf.RunOptions.TraceLevel.FULL_TRACE == 3
    o = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, timeout_in_ms=5000)
    assert (o.trace_level, o.timeout_in_ms) == (3, 5000) and tf.RunOptions().trace_level == 0
    md = tf.RunMetadata()
    assert md.step_stats.dev_stats == [] and md.partition_graphs == []
    with pytest.raises(ValueError):
        tf.RunOptions(trace_level=7)


@pytest.mark.parametrize("mode", ["eager", "sync", "threads", "processes", "distributed"])
def test_full_trace_fills_step_stats(mode, sess_factory):
    import time

    x = tf.placeholder(tf.float32, [8, 8], name="x")
    y = tf.matmul(tf.exp(x) + 1.0, x)
    total = tf.reduce_sum(y)
    xv = _xv((8, 8), 3)
    sess = sess_factory(mode, chunks=4)
    md = tf.RunMetadata()
    before = time.time_ns() // 1000
    got = sess.run(total, {x: xv}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    after = time.time_ns() // 1000
    np.testing.assert_allclose(got, ((np.exp(xv) + 1) @ xv).sum(), rtol=1e-4)
    nodes = [n for d in md.step_stats.dev_stats for n in d.node_stats]
    assert nodes and all(d.device.startswith("/job:localhost") or "worker" in d.device
                         for d in md.step_stats.dev_stats)
    # a cluster's workers report their own clock, corrected by the scheduler's estimate of their
    # offset (a LocalCluster here: the same clock, within a few ms)
    skew = 50_000 if mode == "distributed" else 1000
    for n in nodes:
        assert n.node_name and n.all_end_rel_micros >= 0
        assert before - skew <= n.all_start_micros <= after + skew, (n, before, after)
        assert n.all_start_micros + n.all_end_rel_micros <= after + skew
    if mode == "eager":
        assert [n.node_name for n in nodes] == ["add", "MatMul", "Sum"]  # add: the fused exp + 1 chain
        assert nodes[0].timeline_label == "fused: Exp, add"
    else:
        assert len(nodes) >= 4  # one per task: the chunks of x (4 of them) are computed separately
        assert any("matmul" in n.node_name for n in nodes)
        assert not any(n.node_name.endswith("-r0") for n in nodes)  # the distributed run suffix is dropped
    # without a trace level, or without run metadata, nothing is recorded
    md2 = tf.RunMetadata()
    sess.run(total, {x: xv}, options=tf.RunOptions(), run_metadata=md2)
    assert md2.step_stats.dev_stats == []
    sess.run(total, {x: xv}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))


@pytest.mark.program
def test_trace_a_training_step_as_tf1_programs_do():
    w = tf.Variable(np.ones(3, np.float32))
    loss = tf.reduce_sum(tf.square(w))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        run_options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        run_metadata = tf.RunMetadata()
        sess.run(train, options=run_options, run_metadata=run_metadata)
        np.testing.assert_allclose(sess.run(w), 0.8 * np.ones(3), rtol=1e-6)
    assert sum(len(d.node_stats) for d in run_metadata.step_stats.dev_stats) > 0


@pytest.mark.parametrize("mode", ["eager", "sync", "threads"])
def test_timeout_raises_deadline_exceeded_and_commits_nothing(mode, sess_factory):
    v = tf.Variable(0.0)
    slow = tf.py_func(_sleepy, [tf.constant(1.0)], tf.float32)
    with tf.control_dependencies([slow]):
        bump = tf.assign_add(v, 1.0)
    sess = sess_factory(mode)
    sess.run(v.initializer)
    with pytest.raises(tf.errors.DeadlineExceededError, match="timeout_in_ms=50"):
        sess.run(bump, options=tf.RunOptions(timeout_in_ms=50))
    assert sess.run(v) == 0.0  # nothing committed
    assert sess.run(bump, options=tf.RunOptions(timeout_in_ms=60_000)) == 1.0  # a deadline it meets


def test_run_options_of_the_wrong_type_are_refused():
    x = tf.constant(1.0)
    with tf.Session() as sess:
        with pytest.raises(TypeError, match="RunOptions"):
            sess.run(x, options={"trace_level": 3})
        with pytest.raises(TypeError, match="RunMetadata"):
            sess.run(x, options=tf.RunOptions(trace_level=3), run_metadata=[])


_CALLS = []


def _count_call(v):
    _CALLS.append(1)
    return v


@pytest.mark.parametrize("mode", ["eager", "sync", "threads"])
def test_py_func_reached_only_through_a_control_input_runs(mode, sess_factory):
    # it was dropped from the Dask plan: its output (of unknown rank) is a one-task Whole value
    called = tf.py_func(_count_call, [tf.constant(1.0)], tf.float32)
    with tf.control_dependencies([called]):
        y = tf.identity(tf.constant(2.0))
    sess = sess_factory(mode)
    _CALLS.clear()
    assert sess.run(y) == 2.0
    assert len(_CALLS) == 1


def test_a_plan_run_often_runs_as_generated_code_with_the_same_results_and_errors():
    """A plan's first runs interpret its steps; from its third untraced run it is generated code
    (schedule/steps.StepCode). Both give numpy's answers, free nothing a fetch needs, count a
    stateful op's runs alike, and name the failing op with its input shapes."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    h = tf.nn.relu(tf.matmul(x, w) - 4.0)
    parts = tf.split(h, 2, axis=1)  # a multi-output step
    total = tf.reduce_sum(parts[0] * parts[1] + tf.random_uniform([1], seed=3))
    ids = tf.placeholder(tf.int32, [2], name="ids")
    picked = tf.gather(h, ids, name="picked")
    rng = np.random.default_rng(2)
    with tf.Session() as s:
        s.run(w.initializer)
        runner = s._plan_for([h, parts, total, picked], {x: np.ones((4, 3), np.float32), ids: [0, 1]})[0]._runner
        draws = []
        for step in range(5):
            xv = rng.standard_normal((4, 3)).astype(np.float32)
            got_h, got_parts, got_total, got_picked = s.run([h, parts, total, picked], {x: xv, ids: [3, 1]})
            want = np.maximum(xv @ np.arange(6, dtype=np.float32).reshape(3, 2) - 4, 0)
            np.testing.assert_allclose(got_h, want, rtol=1e-6)
            np.testing.assert_allclose(np.concatenate(got_parts, 1), want, rtol=1e-6)
            np.testing.assert_array_equal(got_picked, got_h[[3, 1]])
            draws.append(got_total - (want[:, 0] * want[:, 1]).sum())
            assert (runner._code is not None) == (step >= 2)
        assert len({round(float(d), 5) for d in draws}) == 5  # the random op drew anew each run
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"(?s)7 is not in \[0, 4\).*node picked"):
            s.run([h, parts, total, picked], {x: np.ones((4, 3), np.float32), ids: [0, 7]})
        # a bound kernel (Reshape to a constant shape) failing in generated code: its op's own
        # kernel on every input says what failed
        flat = tf.reshape(x, [-1, 5], name="flat")
        for _ in range(3):
            assert s.run(flat, {x: np.ones((5, 3), np.float32)}).shape == (3, 5)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"flat.*input shapes: \[4,3\], \[2\]"):
            s.run(flat, {x: np.ones((4, 3), np.float32)})


def test_feeding_a_tensor_is_tf1s_type_error():
    x = tf.placeholder(tf.float32, [2], name="x")
    c = tf.constant([1.0, 2.0], name="c")
    with tf.Session() as s:
        with pytest.raises(TypeError, match=r"The value of a feed cannot be a tf.Tensor object\..*tensor object "
                                            r"was Tensor\(\"c:0\".*feed with key Tensor\(\"x:0\""):
            s.run(x * 2.0, {x: c})


def test_session_arguments_are_checked_when_it_is_made():
    with pytest.raises(TypeError, match='Argument `config` must be a tf.ConfigProto, but got "str"'):
        tf.Session(config="abc")
    for bad in (0, -2, (4, 0), "lots", True):
        with pytest.raises(ValueError, match="Session: chunks must be"):
            tf.Session(chunks=bad)
    for good in ("auto", 8, (4, -1), (None, 2), "64MB", {0: 4}):
        tf.Session(chunks=good).close()
