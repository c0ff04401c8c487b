"""Plans refuse what cannot exist before anything is allocated (dflow/schedule/memory.py), and
plan building stays linear in the chunks a plan touches (issue #14).

- more than 2**63 - 1 elements: ValueError when a Placeholder/Variable is built (TF1's words),
  InvalidArgumentError naming the op at plan time otherwise (TF1 raises it when the op runs);
- a value the process must hold whole (a fetch) over the budget, or over half the machine:
  ResourceExhaustedError naming the op and the shape, with no memory used;
- a slice of a huge lazy array builds and reads only the chunks it touches;
- budgets and other Session arguments are validated when the Session is made.
"""

from __future__ import annotations

import time

import numpy as np
import psutil
import pytest

import dflow as tf
from dflow.devices import machine_memory
from dflow.errors import InvalidArgumentError, ResourceExhaustedError

SCHEDULERS = [None, "sync", "threads", "processes"]  # None: the default session (in-process path)


def _rss():
    return psutil.Process().memory_info().rss


def _refused(fetch, error, match, feed_dict=None, **session_kw):
    """Runs `fetch` expecting `error`; asserts it came fast and with no memory jump."""
    before, t0 = _rss(), time.perf_counter()
    with tf.Session(**session_kw) as s, pytest.raises(error, match=match) as info:
        s.run(fetch, feed_dict)
    assert time.perf_counter() - t0 < 10
    assert _rss() - before < 200 << 20
    return info.value


@pytest.mark.timeout(30)
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_more_than_int64_elements_is_refused_at_plan_time_naming_the_op(scheduler):
    x = tf.zeros([10**12, 10**12], name="huge")[:3]
    err = _refused(x, InvalidArgumentError, r"Fill op 'huge': Shape \[1000000000000,1000000000000\] would "
                   r"have more than 2\*\*63 - 1 elements", scheduler=scheduler)
    assert err.op is tf.get_default_graph().get_operation_by_name("huge")


@pytest.mark.timeout(30)
def test_overflowing_tile_and_run_time_dims_are_refused():
    t = tf.tile(tf.zeros([10**6, 10**6]), [10**6, 10**6], name="tiled")
    _refused(t[:2, :2], InvalidArgumentError, r"Tile op 'tiled': Shape \[1000000000000,1000000000000\]")
    tf.reset_default_graph()
    dims = tf.placeholder(tf.int64, [2])
    x = tf.fill(dims, 1.0, name="filled")[:3]
    for scheduler in SCHEDULERS:
        _refused(x, InvalidArgumentError, r"'filled'.*Shape \[1000000000000,1000000000000\] would have more "
                 r"than 2\*\*63 - 1 elements", {dims: [10**12, 10**12]}, scheduler=scheduler)
    with tf.Session() as s:  # the same graph with possible dims runs
        assert s.run(x, {dims: [5, 2]}).shape == (3, 2)


def test_placeholders_and_variables_over_int64_elements_are_refused_when_built():
    with pytest.raises(ValueError, match=r"Shape \[1000000000000,1000000000000\] is too large \(more than "
                       r"2\*\*63 - 1 entries\) for Placeholder 'p'"):
        tf.placeholder(tf.float32, [10**12, 10**12], name="p")
    with pytest.raises(ValueError, match=r"too large .* for Placeholder"):
        tf.placeholder(tf.float32, [2**62, 2])  # exactly 2**63
    with pytest.raises(ValueError, match=r"too large .* for Variable 'v'"):
        tf.Variable(tf.zeros([10**12, 10**12]), name="v")
    tf.placeholder(tf.float32, [None, 10**12, 10**12])  # an unknown dim may be 0: accepted, as TF1
    tf.placeholder(tf.int8, [2**62, 1])


@pytest.mark.timeout(30)
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_a_fetch_no_machine_could_hold_is_refused_before_allocating(scheduler):
    x = tf.ones([10**6, 10**6], name="ones4tb")  # 4 TB
    err = _refused(tf.identity(x, name="fetched"), ResourceExhaustedError,
                   r"OOM when allocating tensor with shape\[1000000,1000000\] and type float32: Identity op "
                   r"'fetched' \(fetched 'fetched:0'\) needs 3\.6 TiB.*machine's memory", scheduler=scheduler)
    assert err.op.name == "fetched"


@pytest.mark.timeout(30)
def test_a_fetch_over_the_budget_is_refused_and_a_reduction_of_it_runs():
    x = tf.ones([4000, 1000], name="big")  # 16 MB
    _refused(x, ResourceExhaustedError, r"shape\[4000,1000\].*Fill op 'big'.*over the memory budget of 7\.6 MiB",
             memory_budget="8MB", scheduler="sync")
    with tf.Session(memory_budget="8MB", scheduler="sync") as s:
        assert s.run(tf.reduce_sum(x)) == 4e6  # lazy: never held whole
        assert s.run(x[:2, :3]).tolist() == [[1.0] * 3] * 2


def test_run_time_fetch_shapes_are_checked_too():
    n = tf.placeholder(tf.int32, [])
    x = tf.fill(tf.stack([n, 1000]), 2.0, name="dyn")  # static shape unknown
    with tf.Session(memory_budget="8MB", scheduler="sync") as s:
        assert s.run(x, {n: 3}).shape == (3, 1000)
        with pytest.raises(ResourceExhaustedError, match=r"shape\[4000,1000\].*'dyn'"):
            s.run(x, {n: 4000})


@pytest.mark.timeout(30)
@pytest.mark.parametrize("scheduler", [None, "sync", "threads"])  # (processes: the same plan, but the
def test_a_slice_of_a_huge_lazy_array_touches_one_chunk(scheduler):  # 128 MiB chunk crosses processes)
    x = tf.zeros([10**9, 10**4])  # 40 TB, lazy
    y = x[:3] + 1.0
    before, t0 = _rss(), time.perf_counter()
    with tf.Session(scheduler=scheduler) as s:
        out = s.run(y)
        if scheduler is not None:
            plan, _ = s._plan_for(y, None)
            assert plan.n_tasks < 20  # the chunks it touches, not the array's ~345 000
    np.testing.assert_array_equal(out, np.ones((3, 10**4), np.float32))
    assert time.perf_counter() - t0 < 10
    assert _rss() - before < 300 << 20


@pytest.mark.timeout(60)
def test_plan_building_grows_with_touched_chunks_not_with_the_array():
    def compile_time(rows):
        tf.reset_default_graph()
        y = tf.zeros([rows, 10**4])[5:8]
        with tf.Session(scheduler="sync") as s:
            t0 = time.perf_counter()
            s.explain(y)
            return time.perf_counter() - t0

    compile_time(10**5)  # warm up
    small, large = compile_time(10**5), compile_time(10**8)  # 1 000× the chunks
    assert large < max(1.0, 50 * small)  # building every block was ~1000× (seconds)


def test_the_machine_limit_is_known_here():
    assert machine_memory() is None or machine_memory() > 1 << 28


# ---- Session arguments are validated when the Session is made --------------------------------


@pytest.mark.parametrize("budget", [0, -1, "0", "-5MB", "lots", "", float("nan"), float("inf"), True, [1]])
def test_bad_memory_budgets_are_refused_at_construction(budget):
    with pytest.raises(ValueError, match=r"memory_budget must be a positive number of bytes"):
        tf.Session(memory_budget=budget)


@pytest.mark.parametrize("budget, expected", [("1GB", 10**9), ("512MiB", 512 << 20), (2**30, 2**30),
                                              (1.5e9, 1_500_000_000), (np.int64(4096), 4096)])
def test_good_memory_budgets_are_bytes(budget, expected):
    with tf.Session(memory_budget=budget) as s:
        assert s.memory_budget == expected


@pytest.mark.parametrize("kwargs, match", [(dict(num_workers=0), "num_workers"), (dict(num_workers=-2), "num_workers"),
                                           (dict(num_workers=1.5), "num_workers"),
                                           (dict(small_plan_bytes=-1), "small_plan_bytes")])
def test_bad_worker_counts_and_plan_sizes_are_refused_at_construction(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tf.Session(**kwargs)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("shape, chunks", [([10**9, 10**4], 2), ([10**15], "auto")])
def test_a_chunk_grid_too_long_to_plan_is_refused_naming_the_op(shape, chunks):
    x = tf.zeros(shape, name="grid")[:3]
    _refused(x, ResourceExhaustedError, r"Fill op 'grid': shape \[.*\] makes \d+ chunks along axis 0, more than "
             r"the 4194304 a plan can track; use larger chunks", scheduler="sync", chunks=chunks)


@pytest.mark.parametrize("make", ["zeros", "random_uniform", "tile"])
def test_a_run_time_shape_over_the_budget_runs_through_dask_instead_of_whole(make):
    """#29: on the default session a plan of unknown static shapes runs in this process; a size
    fed at run time (4 M rows x 8 float32s: 128 MB under a 32 MB budget) made the whole value
    there. The kernel now refuses it before allocating, and the session runs those fetches
    through Dask, chunked: the same answer, and the value never held whole."""
    n = tf.placeholder(tf.int32, [])
    if make == "zeros":
        big = tf.zeros(tf.stack([n, 8])) + 1.0
    elif make == "random_uniform":
        big = tf.random_uniform(tf.stack([n, 8]), seed=1)
    else:
        big = tf.tile(tf.ones([1, 8]), tf.stack([n, 1]))
    total = tf.reduce_sum(big)
    # (explicit chunks: the default ones under a budget this small make a task's projection, its
    # output and an output-sized scratch, just over the budget)
    with tf.Session(memory_budget="32MB", chunks=(262144, 8)) as s:
        small = s.run(total, {n: 1000})
        kinds = {p.kind for p in s._plans.values()}
        assert "eager" in kinds and "dask" not in kinds  # in this process while it fits
        got = s.run(total, {n: 4_000_000})
        assert "dask" in {p.kind for p in s._plans.values()}  # those fetches now go through Dask
        again = s.run(total, {n: 1000})
        assert again == pytest.approx(small, rel=1e-6) if make != "random_uniform" else again == pytest.approx(4000, rel=0.05)
    if make == "random_uniform":
        assert got == pytest.approx(4_000_000 * 8 * 0.5, rel=1e-3)
    else:
        assert got == 4_000_000 * 8
