"""The compiler: fusion of elementwise chains, shared intermediates, eager vs dask plans, pruning."""

from __future__ import annotations

import dataclasses
import threading

import dask.array as da
import numpy as np
import pytest

import dflow as tf
from dflow.graph import registry
from dflow.schedule import program
from dflow.schedule.session import _DEFAULT_SMALL_PLAN_BYTES

CHUNKS = 4
XV = np.random.default_rng(7).standard_normal((16, 4))  # chunks of 4 rows: CHUNKS chunks


def only_plan(sess):
    (plan,) = sess._plans.values()
    return plan


@pytest.fixture
def counted(monkeypatch):
    """counted("Tanh") makes ops of that type created afterwards record each kernel call's input
    shape in the returned list (sync/threads/eager only: the list lives in this process)."""

    def patch(op_type):
        calls = []
        lock = threading.Lock()
        opdef = registry.get_opdef(op_type)
        kernel = opdef.eager

        def counting(xp, *args, **attrs):
            with lock:
                calls.append(tuple(getattr(args[0], "shape", ())))
            return kernel(xp, *args, **attrs)

        monkeypatch.setitem(registry._REGISTRY, op_type, dataclasses.replace(opdef, eager=counting))
        return calls

    return patch


def chain(x, n):
    """n elementwise ops over x, tensor-tensor and unary only (no constants)."""
    y = x
    for k in range(n):
        y = tf.tanh(y) if k % 2 else y + x
    return y


def chain_np(xv, n):
    y = xv
    for k in range(n):
        y = np.tanh(y) if k % 2 else y + xv
    return y


# ---- fusion ------------------------------------------------------------------------------------

@pytest.mark.parametrize("sched", [None, "sync", "threads"])
def test_long_chain_is_one_task_per_chunk(sched):
    x = tf.placeholder(tf.float64, [None, 4], name="x")
    y = chain(x, 200)
    with tf.Session(scheduler=sched) as s:
        got = s.run(y, {x: da.from_array(XV, chunks=4)})
        plan = only_plan(s)
    np.testing.assert_allclose(got, chain_np(XV, 200), rtol=1e-12)
    assert plan.kind == "dask"
    # CHUNKS feed keys + CHUNKS fused-kernel keys, not 200 * CHUNKS
    assert plan.n_tasks <= 2 * CHUNKS + 2, plan.n_tasks


def test_task_count_does_not_grow_with_chain_length():
    x = tf.placeholder(tf.float64, [16, 4], name="x")
    counts = []
    for n in [2, 20, 200]:
        with tf.Session(scheduler="sync", chunks=4) as s:
            np.testing.assert_allclose(s.run(chain(x, n), {x: XV}), chain_np(XV, n), rtol=1e-12)
            counts.append(only_plan(s).n_tasks)
    assert counts[0] == counts[1] == counts[2], counts


def test_chain_over_broadcast_inputs_is_fused():
    col = tf.placeholder(tf.float64, [16, 1], name="col")
    row = tf.placeholder(tf.float64, [1, 4], name="row")
    y = col + row
    for _ in range(50):
        y = tf.sin(y) * col + row
    cv, rv = XV[:, :1], XV[:1, :]
    want = cv + rv
    for _ in range(50):
        want = np.sin(want) * cv + rv
    with tf.Session(scheduler="sync") as s:
        got = s.run(y, {col: da.from_array(cv, chunks=(4, 1)), row: da.from_array(rv, chunks=(1, 4))})
        n_tasks = only_plan(s).n_tasks
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert n_tasks <= 4 + 1 + 4 + 2, n_tasks  # col chunks + row chunk + fused chunks


def test_scalar_constants_are_inlined_into_the_fused_kernel():
    x = tf.placeholder(tf.float64, [16, 4], name="x")
    y = x
    for k in range(100):
        y = y * (1.0 + k / 1000.0) - k / 7.0  # 200 distinct constants
    with tf.Session(scheduler="sync", chunks=4) as s:
        s.run(y, {x: XV})
        assert only_plan(s).n_tasks <= 2 * CHUNKS + 2, only_plan(s).n_tasks


def test_chain_with_scalar_constants_is_correct_on_dask():
    x = tf.placeholder(tf.float64, [16, 4], name="x")
    y, want = x, XV
    for k in range(100):
        y = y * (1.0 + k / 1000.0) - k / 7.0
        want = want * (1.0 + k / 1000.0) - k / 7.0
    with tf.Session(scheduler="sync", chunks=4) as s:
        np.testing.assert_allclose(s.run(y, {x: XV}), want, rtol=1e-12)


@pytest.mark.parametrize("sched", ["sync", "threads"])
def test_shared_intermediate_is_computed_once(counted, sched):
    calls = counted("Tanh")
    x = tf.placeholder(tf.float64, [16, 4], name="x")
    shared = tf.tanh(x, name="shared")
    z = (shared * x + shared) - tf.square(shared)  # three consumers of `shared`
    t = tf.sqrt(tf.abs(shared))  # and another chain
    with tf.Session(scheduler=sched, chunks=4, small_plan_bytes=0) as s:
        got_z, got_t = s.run([z, t], {x: XV})
    sh = np.tanh(XV)
    np.testing.assert_allclose(got_z, sh * XV + sh - sh ** 2, rtol=1e-12)
    np.testing.assert_allclose(got_t, np.sqrt(np.abs(sh)), rtol=1e-12)
    # once per chunk; meta inference by dask may add calls on empty arrays, which do no work
    assert sorted(c for c in calls if 0 not in c) == [(4, 4)] * CHUNKS, calls


def test_fetched_intermediate_is_computed_once(counted):
    calls = counted("Tanh")
    x = tf.placeholder(tf.float64, [16, 4], name="x")
    mid = tf.tanh(x)
    out = mid + x
    with tf.Session(scheduler="sync", chunks=4) as s:
        got_mid, got_out = s.run([mid, out], {x: XV})
    np.testing.assert_allclose(got_out, np.tanh(XV) + XV, rtol=1e-12)
    np.testing.assert_allclose(got_mid, np.tanh(XV), rtol=1e-12)
    assert [c for c in calls if 0 not in c] == [(4, 4)] * CHUNKS


def test_error_in_fused_chunk_names_the_op(monkeypatch):
    opdef = registry.get_opdef("Sin")

    def broken(xp, x):
        raise ValueError("boom")

    monkeypatch.setitem(registry._REGISTRY, "Sin", dataclasses.replace(opdef, eager=broken))
    x = tf.placeholder(tf.float64, [16, 4], name="x")
    y = tf.exp(tf.sin(x + x, name="bad_sine"))
    with tf.Session(scheduler="sync", chunks=4) as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad_sine"):
            s.run(y, {x: XV})
    with tf.Session() as s:  # the eager path names the op too
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad_sine"):
            s.run(y, {x: XV})


# ---- eager or dask -----------------------------------------------------------------------------

def test_plan_kind_depends_on_size_scheduler_and_feed_kind():
    x = tf.placeholder(tf.float64, [None, 4], name="x")
    y = tf.exp(x) + x
    small = XV
    big = np.zeros((_DEFAULT_SMALL_PLAN_BYTES // 32 + 1, 4))  # just over the default (float64, 4 columns)
    cases = [(dict(), small, "eager"), (dict(), big, "dask"), (dict(scheduler="threads"), small, "eager"),
             (dict(scheduler="threads", small_plan_bytes=0), small, "dask"),
             (dict(scheduler="sync"), small, "dask"), (dict(small_plan_bytes=0), small, "dask"),
             (dict(), da.from_array(small, chunks=4), "dask"),
             (dict(scheduler="sync", small_plan_bytes=1 << 30), small, "eager")]
    for kwargs, feed, kind in cases:
        with tf.Session(**kwargs) as s:
            got = s.run(y, {x: feed})
            assert only_plan(s).kind == kind, (kwargs, kind)
        want = np.exp(np.asarray(feed)) + np.asarray(feed)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_large_intermediate_makes_the_plan_dask():
    col = tf.placeholder(tf.float64, [400, 1], name="col")
    row = tf.placeholder(tf.float64, [1, 400], name="row")
    cv, rv = np.arange(400.0).reshape(400, 1), np.arange(400.0).reshape(1, 400)
    with tf.Session(small_plan_bytes=1 << 20) as s:
        got = s.run(col * row, {col: cv, row: rv})  # 1.28 MB (over the 1 MiB limit) from two 3.2 kB feeds
        assert only_plan(s).kind == "dask"
    np.testing.assert_array_equal(got, cv * rv)


# ---- pruning -----------------------------------------------------------------------------------

def test_prune_keeps_only_what_the_fetches_need():
    x = tf.placeholder(tf.float32, [3], name="x")
    unused = tf.placeholder(tf.float32, [3], name="unused")
    a = tf.exp(x, name="a")
    b = tf.sin(a, name="b")
    c = tf.cos(unused + a, name="c")  # noqa: F841 - not fetched
    names = [op.name for op in program.prune([b], set())]
    assert names == ["x", "a", "b"]
    names = [op.name for op in program.prune([b], {a})]  # a fed: x is not needed
    assert names == ["b"]
    names = [op.name for op in program.prune([b.op, a], set())]
    assert names == ["x", "a", "b"]


def test_prune_follows_control_dependencies():
    x = tf.placeholder(tf.float32, [3], name="x")
    side = tf.square(x, name="side")
    with tf.control_dependencies([side]):
        out = tf.identity(x, name="out")
    assert [op.name for op in program.prune([out], set())] == ["x", "side", "out"]


@pytest.mark.parametrize("sched", [None, "sync"])
def test_unneeded_ops_are_not_run(counted, sched):
    calls = counted("Cos")
    x = tf.placeholder(tf.float64, [16, 4], name="x")
    wanted = tf.exp(x)
    tf.cos(wanted, name="not_needed")
    tf.cos(x) + wanted  # another unneeded branch
    with tf.Session(scheduler=sched, chunks=4, small_plan_bytes=0) as s:
        np.testing.assert_allclose(s.run(wanted, {x: XV}), np.exp(XV), rtol=1e-12)
        plan = only_plan(s)
    assert calls == []
    if plan.kind == "dask":
        assert not any("not_needed" in str(k) for k in plan.dsk)


@pytest.mark.parametrize("sched", [None, "sync"])
def test_control_dependency_ops_run(counted, sched):
    calls = counted("Cos")
    x = tf.placeholder(tf.float64, [16, 4], name="x")
    side = tf.cos(x, name="side")
    with tf.control_dependencies([side]):
        out = tf.identity(x * 2.0)
    with tf.Session(scheduler=sched, chunks=4, small_plan_bytes=0) as s:
        np.testing.assert_array_equal(s.run(out, {x: XV}), XV * 2)
    assert [c for c in calls if 0 not in c], "the control input was not run"


def test_fed_intermediate_cuts_upstream_ops(counted):
    calls = counted("Exp")
    x = tf.placeholder(tf.float64, [16, 4], name="x")
    y = tf.exp(x)
    z = y * 2.0
    for sched in [None, "sync"]:
        with tf.Session(scheduler=sched, chunks=4, small_plan_bytes=0) as s:
            np.testing.assert_array_equal(s.run(z, {y: XV}), XV * 2)
    assert calls == []


def test_missing_feed_is_reported_before_anything_runs(counted):
    calls = counted("Exp")
    x = tf.placeholder(tf.float64, [3], name="x")
    p = tf.placeholder(tf.float64, [3], name="p")
    y = tf.exp(x) + p
    with tf.Session(scheduler="sync") as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="'p"):
            s.run(y, {x: np.ones(3)})
    assert calls == []


def test_a_model_with_megabyte_weights_trains_in_process():
    # a 4 MB weight and its gradient stay in process under the 64 MiB default (BLAS keeps its threads)
    x = tf.placeholder(tf.float32, [None, 1000], name="x")
    w = tf.Variable(np.full((1000, 1000), 1e-3, np.float32), name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    xv = np.ones((8, 1000), np.float32)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(train, {x: xv})
        assert {p.kind for p in s._plans.values() if hasattr(p, "kind")} == {"eager"}
        got = s.run(w)
    grad = 2 * xv.T @ (xv @ np.full((1000, 1000), 1e-3)) / (8 * 1000)
    np.testing.assert_allclose(got, 1e-3 - 0.1 * grad, rtol=1e-5)


def test_a_budget_caps_the_in_process_size():
    assert tf.Session(memory_budget="64MB")._options.small_plan_bytes == (64 * 10**6) // 16
    assert tf.Session()._options.small_plan_bytes == _DEFAULT_SMALL_PLAN_BYTES
    assert tf.Session(scheduler="threads")._options.small_plan_bytes == _DEFAULT_SMALL_PLAN_BYTES  # the default, named
    assert tf.Session(scheduler="processes")._options.small_plan_bytes == 0
