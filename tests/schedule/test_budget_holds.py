"""`memory_budget` as a cap on RSS growth (#29): programs over Zarr data larger than the budget
run in a child process whose peak RSS growth is measured (ru_maxrss; the data is written by
another process first), or run under an address-space limit and end in success or a clean dflow
refusal; plans that would allocate more than the machine are refused or computed at once."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dflow as tf
from dflow.schedule.memory import WORKER_PROCESS_BYTES
from dflow.schedule.plan import FeedSlot, FeedSpec

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SLACK_MB = 64  # what the budget allows besides: the interpreter's own noise (allocator, imports)

PREPARE = textwrap.dedent("""
    import sys, numpy as np, zarr
    path, n, d, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    z = zarr.create_array(path, shape=(n, d), chunks=(rows, d), dtype="f4")
    rng = np.random.default_rng(0)
    for i in range(0, n, rows):
        z[i:i + rows] = rng.standard_normal((min(rows, n - i), d), dtype=np.float32)
""")

# The program, in a child: RSS growth from just before the graph is built to the end of the run.
# `limit_as`: RLIMIT_AS set before dflow is imported (see test_programs_under_an_address_space_limit).
PROGRAM = textwrap.dedent("""
    import json, os, resource, sys
    path, which, budget, scheduler, limit_as = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    if limit_as:
        resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
    import numpy as np
    import dflow as tf

    def main():
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        x = tf.io.read_zarr(path)
        fetch = {"top_k_rows": lambda: tf.reduce_sum(tf.nn.top_k(x, k=5).values),
                 "top_k_transposed": lambda: tf.reduce_sum(tf.nn.top_k(tf.transpose(x), k=5).values),
                 "standardize_sum": lambda: tf.reduce_sum((x - tf.reduce_mean(x, 0)) / tf.math.reduce_std(x, 0)),
                 "sum": lambda: tf.reduce_sum(x * 2.0)}[which]()
        s = tf.Session(scheduler=None if scheduler == "default" else scheduler, memory_budget=budget)
        try:
            value, outcome = float(s.run(fetch)), "ok"
        except tf.errors.ResourceExhaustedError as e:
            value, outcome = None, "refused: " + str(e)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"growth_mb": (peak - base) / 1024, "value": value, "outcome": outcome}))

    if __name__ == "__main__":
        main()
""")


@pytest.fixture(scope="module")
def zarr_192mb(tmp_path_factory):
    """192 MiB of float32 (49,152 x 1,024) in 16 MiB row chunks, written by another process."""
    path = str(tmp_path_factory.mktemp("budget") / "x.zarr")
    subprocess.run([sys.executable, "-c", PREPARE, path, "49152", "1024", "4096"], check=True, timeout=120,
                   env=dict(os.environ, PYTHONPATH=REPO))
    return path


def _program(path, which, budget, scheduler="default", limit_as=0, env=None):
    script = os.path.join(os.path.dirname(path), "program.py")
    with open(script, "w") as f:
        f.write(PROGRAM)
    return subprocess.run([sys.executable, script, path, which, budget, scheduler, str(limit_as)],
                          capture_output=True, text=True, timeout=240,
                          env=dict(os.environ, PYTHONPATH=REPO, **(env or {})))


def _result(res):
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(300)
@pytest.mark.parametrize("which", ["top_k_rows", pytest.param("top_k_transposed", marks=pytest.mark.slow)])
def test_top_k_over_data_larger_than_the_budget_stays_within_it(zarr_192mb, which):
    """top_k over rows and over a transpose of 192 MiB under 64 MB: growth <= budget + 64 MB (a
    16 MiB chunk's stable descending argsort held ~5 chunks of int64 positions per task before)."""
    out = _result(_program(zarr_192mb, which, "64MB"))
    assert out["outcome"] == "ok", out
    assert out["growth_mb"] <= 64e6 / 2**20 + SLACK_MB, out


@pytest.mark.timeout(300)
def test_processes_scheduler_counts_its_worker_processes(zarr_192mb):
    """Each worker process holds an interpreter (WORKER_PROCESS_BYTES) besides its task and pickles
    its result back: a budget caps the workers to what fits, and explain() says so."""
    budget = WORKER_PROCESS_BYTES + (96 << 20)
    x = tf.io.read_zarr(zarr_192mb)
    with tf.Session(scheduler="processes", num_workers=8, memory_budget=budget) as s:
        text = s.explain(tf.reduce_sum(x * 2.0))
        plan, _ = s._plan_for(tf.reduce_sum(x * 2.0), None)
    assert plan.num_workers == 1, text
    assert "each 112.0 MiB besides its task" in text and plan.memory.peak <= budget, text
    # a budget that cannot hold one worker process is the data's alone (this process's own
    # interpreter is outside every budget too), and explain() says so
    with tf.Session(scheduler="processes", memory_budget=16 << 20) as s:
        text = s.explain(tf.reduce_sum(tf.random_uniform([1000, 1000]) * 2.0))
    assert "interpreter, 112.0 MiB, is beyond a budget this small" in text, text


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_processes_scheduler_tree_stays_within_the_budget(zarr_192mb):
    """The whole process tree (this program and its worker processes, sampled) grows by no more
    than budget + 64 MB on a chunked sum (3 GiB under 1 GB on 16 cores before)."""
    psutil = pytest.importorskip("psutil")
    import time

    script = os.path.join(os.path.dirname(zarr_192mb), "program.py")
    with open(script, "w") as f:
        f.write(PROGRAM)
    budget = WORKER_PROCESS_BYTES + (64 << 20)
    p = subprocess.Popen([sys.executable, script, zarr_192mb, "sum", str(budget), "processes", "0"],
                         stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=REPO))
    proc, first, peak = psutil.Process(p.pid), None, 0
    while p.poll() is None:
        try:
            total = sum(q.memory_info().rss for q in [proc] + proc.children(recursive=True))
        except psutil.Error:
            continue
        first = first or total
        peak = max(peak, total)
        time.sleep(0.02)
    out = json.loads(p.stdout.read().strip().splitlines()[-1])
    assert out["outcome"] == "ok", out
    base = 110 << 20  # this program's own interpreter with dflow imported, before the plan
    assert (peak - base) / 2**20 <= budget / 2**20 + SLACK_MB, (peak / 2**20, out)


@pytest.fixture(scope="module")
def idle_address_space():
    """VmPeak (bytes) of a process that imported dflow and ran one small plan on threads: the
    address space the interpreter, its libraries, thread stacks and allocator arenas reserve
    before any data (hundreds of MB that RSS never touches)."""
    code = ("import numpy as np, dflow as tf\n"
            "s = tf.Session(scheduler='threads', small_plan_bytes=0)\n"
            "s.run(tf.reduce_sum(tf.constant(np.ones((64, 64), np.float32))))\n"
            "print([l for l in open('/proc/self/status') if l.startswith('VmPeak')][0].split()[1])")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=REPO, MALLOC_ARENA_MAX="2"))
    assert res.returncode == 0, res.stderr[-2000:]
    return int(res.stdout.split()[-1]) * 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/status: Linux")
@pytest.mark.timeout(300)
@pytest.mark.parametrize("which, budget", [("top_k_rows", "64MB"),
                                           pytest.param("standardize_sum", "64MB", marks=pytest.mark.slow),
                                           ("top_k_rows", "1MB")])
def test_programs_under_an_address_space_limit(zarr_192mb, idle_address_space, which, budget):
    """Out-of-core programs under RLIMIT_AS = (an idle dflow process's address space) + budget +
    margin: success or a clean ResourceExhaustedError, never a MemoryError or a kill.

    RLIMIT_AS caps virtual memory, not RSS: the interpreter, numpy's and dask's libraries, every
    thread's stack (8 MiB reserved each) and glibc's malloc arenas (64 MiB reserved per arena) all
    count though little of them is ever touched. So the cap is a measured baseline (VmPeak of an
    idle process that imported dflow and ran a plan on threads, MALLOC_ARENA_MAX=2 in both) plus
    the budget plus 128 MiB (dask's threads started for the run, the allocator's slack). A budget
    the plan cannot fit (1 MB here) must be refused before anything is allocated."""
    limit = idle_address_space + tf.Session(memory_budget=budget).memory_budget + (128 << 20)
    res = _program(zarr_192mb, which, budget, "threads", limit, env={"MALLOC_ARENA_MAX": "2"})
    assert "MemoryError" not in res.stderr and res.returncode == 0, res.stderr[-3000:]
    out = _result(res)
    assert out["outcome"] == "ok" or out["outcome"].startswith("refused: "), out
    if budget == "1MB":
        assert out["outcome"].startswith("refused: ") and "memory budget" in out["outcome"], out


# ---- no hangs: what would allocate more than the machine is refused or computed at once ---------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scheduler", [None, "threads", "processes"])
def test_reductions_of_a_fill_larger_than_the_machine_are_computed_at_once(scheduler):
    """reduce_sum(zeros([2**21, 2**20])) (8 TB) summed its chunks for hours on threads and
    processes; TF1 fails allocating it. A reduction of a Fill larger than the machine is computed
    from the value and the shape (exactly: integer sums wrap as TF's kernels do)."""
    big = [2**21, 2**20]
    fetches = [tf.reduce_sum(tf.zeros(big)), tf.reduce_max(tf.fill(big, 3.0)), tf.reduce_mean(tf.ones(big)),
               tf.reduce_sum(tf.ones(big, tf.int32)), tf.reduce_sum(tf.fill(big, 2.0), axis=1)[:3],
               tf.reduce_any(tf.zeros(big, tf.bool)), tf.reduce_prod(tf.ones(big))]
    with tf.Session(scheduler=scheduler) as s:
        got = s.run(fetches)
    assert got[0] == 0.0 and got[1] == 3.0 and got[2] == 1.0
    assert got[3] == np.int32(0)  # 2**41 ones wrap to 0 in int32
    np.testing.assert_array_equal(got[4], np.full(3, 2.0 * 2**20, np.float32))
    assert not got[5] and got[6] == 1.0


@pytest.mark.timeout(60)
def test_an_empty_shape_whose_other_dims_overflow_is_refused_in_words():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"'z'.* has no elements, but its other dimensions "
                       r"multiply to more than 2\*\*63 - 1"):
        tf.Session().run(tf.reduce_sum(tf.zeros([2**40, 2**30, 0], name="z")))


@pytest.mark.timeout(120)
def test_one_hot_is_chunked_to_the_budget():
    """one_hot(range(n), n) was one task of n*n values whatever the budget (refused below it)."""
    n = 4000
    oh = tf.one_hot(tf.range(n), n)
    with tf.Session(scheduler="threads", memory_budget="8MB") as s:
        plan, _ = s._plan_for(tf.reduce_sum(oh), None)
        assert plan.memory.largest.total <= 8e6 / 4
        assert s.run(tf.reduce_sum(oh)) == n
        np.testing.assert_array_equal(s.run(tf.argmax(oh, 1))[:5], np.arange(5))


@pytest.mark.slow  # (~10 s: the 160,000 tasks are built before the plan is refused)
@pytest.mark.timeout(120)
def test_a_plan_whose_tasks_bookkeeping_exceeds_the_budget_is_refused():
    """Each task costs the scheduler ~3 KiB while a plan runs: 160,000 tasks under a 1 MB budget
    grew RSS by 434 MiB. Such a plan is refused, saying how many tasks and what they cost."""
    n = 20000
    with tf.Session(scheduler="threads", memory_budget="1MB") as s:
        with pytest.raises(tf.errors.ResourceExhaustedError, match=r"The plan has \d+ tasks, whose scheduling alone "
                           r"needs a projected .* MiB .*one_hot.*memory budget of 976\.6 KiB"):
            s.run(tf.reduce_sum(tf.one_hot(tf.range(n), n)))


def test_a_broadcast_feed_travels_as_its_base():
    """A 40 GB np.broadcast_to feed was pickled to the processes scheduler's workers chunk by chunk:
    its blocks are now its distinct elements and a task broadcasting them."""
    spec = FeedSpec("numpy", (100_000, 100_000), tf.float32, ((50_000, 50_000), (100_000,)))
    value = np.broadcast_to(np.arange(100_000, dtype=np.float32), (100_000, 100_000))
    pieces = FeedSlot(None, "feed-x", spec).pieces(value)
    assert len(pieces) == 2
    for piece in pieces.values():
        base = piece.args[0] if hasattr(piece, "args") else None
        assert isinstance(base, np.ndarray) and base.shape == (1, 100_000), piece
    plain = FeedSlot(None, "feed-y", FeedSpec("numpy", (4, 3), tf.float32, ((2, 2), (3,)))).pieces(
        np.ones((4, 3), np.float32))
    assert all(isinstance(p, np.ndarray) for p in plain.values())  # an ordinary feed stays data


@pytest.mark.timeout(120)
def test_a_broadcast_feed_runs_on_processes():
    x = tf.placeholder(tf.float32, [None, None])
    with tf.Session(scheduler="processes", chunks=(1000, 2000)) as s:
        value = np.broadcast_to(np.arange(2000, dtype=np.float32), (3000, 2000))
        assert s.run(tf.reduce_sum(x, 0), {x: value})[7] == 7 * 3000
