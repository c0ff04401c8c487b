"""Session.run from several threads on one Session (TF1 allows it): a failing run affects only
itself on every scheduler, each run has its own per-run values (run token, random counters), and
variable commits stay consistent (a run's commits land together; concurrent `assign_add`s all
land)."""

import threading

import numpy as np
import pytest

import dflow as tf
from dflow.errors import OpError

SCHEDULERS = ["sync", "threads", "processes"]


def _in_threads(*fns):
    """Runs each fn in its own thread; returns the exceptions they raised (one list per fn)."""
    errors = [[] for _ in fns]

    def wrap(fn, errs):
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - reported to the test
            errs.append(e)

    threads = [threading.Thread(target=wrap, args=(fn, errs)) for fn, errs in zip(fns, errors)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=240)
        assert not t.is_alive(), "a run hung"
    return errors


def _fail(a):
    raise ValueError("bad batch")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scheduler, n", [("sync", 100), ("threads", 100), ("processes", 25),
                                          pytest.param("processes", 100, marks=pytest.mark.slow)])
def test_failing_runs_in_one_thread_leave_the_other_threads_runs_alone(scheduler, n):
    """n failing runs in one thread, n valid runs in another (100 each: ~9 s on processes, slow)."""
    x = tf.placeholder(tf.float32, [None], name="x")
    v = tf.Variable(0.0, name="v")
    good = tf.reduce_sum(x * 2.0) + v
    bad = tf.py_func(_fail, [x * 3.0], tf.float32, name="bad")
    with tf.Session(scheduler=scheduler, chunks=4) as sess:
        sess.run(v.initializer)
        results, failures = [], []

        def valid_runs():
            for i in range(n):
                value = np.arange(10 + i % 7, dtype=np.float32)
                results.append((i, sess.run(good, {x: value})))

        def failing_runs():
            for _ in range(n):
                try:
                    sess.run(bad, {x: np.ones(12, np.float32)})
                except OpError as e:
                    failures.append(e)

        errors = _in_threads(valid_runs, failing_runs)
        assert errors == [[], []]
        assert len(results) == n
        for i, r in results:
            assert r == pytest.approx(2 * np.arange(10 + i % 7).sum())
        assert len(failures) == n
        assert all("bad" in str(e) for e in failures)
        assert sess.run(good, {x: np.ones(3, np.float32)}) == 6.0  # the pool is still there


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scheduler", ["eager"] + SCHEDULERS)
def test_concurrent_assign_adds_all_land(scheduler):
    v = tf.Variable(0.0, name="counter")
    w = tf.Variable(np.zeros(4, np.float32), name="w")
    step = tf.group(tf.assign_add(v, 1.0), tf.assign_sub(w, tf.ones([4])))
    n = 20 if scheduler == "processes" else 50
    kwargs = {"small_plan_bytes": 1 << 20} if scheduler == "eager" else {"scheduler": scheduler}
    with tf.Session(**kwargs) as sess:
        sess.run(tf.global_variables_initializer())

        def steps():
            for _ in range(n):
                sess.run(step)

        assert _in_threads(steps, steps, steps) == [[], [], []]
        assert sess.run(v) == 3 * n
        np.testing.assert_array_equal(sess.run(w), np.full(4, -3.0 * n, np.float32))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scheduler", ["eager", "threads"])
def test_a_runs_commits_land_together(scheduler):
    """A writer sets a and b to the same value in one run; readers never see them differ."""
    a = tf.Variable(0, name="a")
    b = tf.Variable(0, name="b")
    i = tf.placeholder(tf.int32, [])
    write = tf.group(tf.assign(a, i), tf.assign(b, i))
    kwargs = {"small_plan_bytes": 1 << 20} if scheduler == "eager" else {"scheduler": scheduler}
    with tf.Session(**kwargs) as sess:
        sess.run(tf.global_variables_initializer())
        seen = []

        def writer():
            for k in range(1, 80):
                sess.run(write, {i: k})

        def reader():
            for _ in range(80):
                seen.append(tuple(sess.run([a, b])))

        assert _in_threads(writer, reader) == [[], []]
        assert all(x == y for x, y in seen), [s for s in seen if s[0] != s[1]][:3]
        assert tuple(sess.run([a, b])) == (79, 79)


@pytest.mark.timeout(300)
def test_concurrent_zarr_writes_use_their_own_run_token(tmp_path):
    """Each run's sink writes under its own run token; a token read from another thread's run
    would leave the output unpublished (or publish the other run's temporary array)."""
    x = tf.placeholder(tf.float32, [8], name="x")
    outs = [tf.io.write_zarr(x * float(k), str(tmp_path / f"out{k}.zarr"), overwrite=True) for k in (1, 2)]
    with tf.Session(scheduler="threads", small_plan_bytes=0, chunks=4) as sess:

        def writes(k):
            def fn():
                for j in range(15):
                    sess.run(outs[k - 1], {x: np.full(8, j, np.float32)})
                    got = tf.io.read_zarr(str(tmp_path / f"out{k}.zarr"))
                    np.testing.assert_array_equal(sess.run(got), np.full(8, j * k, np.float32))
            return fn

        assert _in_threads(writes(1), writes(2)) == [[], []]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out1.zarr", "out2.zarr"]


def test_random_ops_draw_distinct_values_in_concurrent_runs():
    r = tf.random_uniform([3], seed=1)
    with tf.Session(scheduler="threads", small_plan_bytes=0) as sess:
        draws = []

        def draw():
            for _ in range(20):
                draws.append(tuple(sess.run(r)))

        assert _in_threads(draw, draw) == [[], []]
    assert len(set(draws)) == 40  # one counter value per run, none repeated


N_BUMPS = 10


@pytest.mark.timeout(300)
def test_a_stored_variable_replaced_while_another_run_reads_it():
    """A variable held on disk (memory budget): a commit replacing it while another thread's run
    still reads the old value leaves that value on disk until the reader is done."""
    v = tf.Variable(tf.zeros([1200, 1000]), name="big")  # 4.8 MB: over a quarter of the budget
    bump = tf.assign_add(v, tf.ones([1200, 1000])).op
    mean = tf.reduce_mean(v)
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="16MB") as sess:
        sess.run(v.initializer)
        assert sess.variables.stores((1200, 1000), np.float32)
        seen = []

        def bumps():
            for _ in range(N_BUMPS):
                sess.run(bump)

        def reads():
            for _ in range(2 * N_BUMPS):
                seen.append(float(sess.run(mean)))

        assert _in_threads(bumps, reads) == [[], []]
        assert all(m == int(m) and 0 <= m <= N_BUMPS for m in seen), seen  # whole values, never a torn one
        assert seen == sorted(seen)
        assert sess.run(mean) == N_BUMPS


def _die(a):
    import os

    os._exit(3)  # the worker process dies mid-task


@pytest.mark.slow  # a second process pool starts: ~6 s
@pytest.mark.timeout(300)
def test_a_dead_process_worker_aborts_its_run_and_the_next_run_gets_a_fresh_pool():
    x = tf.placeholder(tf.float32, [None], name="x")
    dies = tf.py_func(_die, [x], tf.float32, name="dies")
    fine = tf.reduce_sum(x * 2.0)
    with tf.Session(scheduler="processes") as sess:
        assert sess.run(fine, {x: np.ones(4, np.float32)}) == 8.0
        with pytest.raises(tf.errors.AbortedError, match="worker pool failed"):
            sess.run(dies, {x: np.ones(4, np.float32)})
        assert sess.run(fine, {x: np.ones(5, np.float32)}) == 10.0
