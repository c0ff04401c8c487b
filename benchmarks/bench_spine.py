"""The spine benchmarks of issue #2: per-run overhead of a tiny graph, and a 1000-op elementwise chain.

    python benchmarks/bench_spine.py [--record]          # all peers; TF_PYTHON=... adds TF1

a) tiny: reduce_sum(x * 2 + 1) on a fed 100×100 float32, Session.run repeated with the plan cached.
   Peers: numpy, dask.array (build + compute each run), TF1. Targets: dflow ≤ 200 µs/run, ≤ TF1.
b) chain: 1000 × tanh(x * 1.01 + 0.1) on a 1000×100 float64 fed as a dask array in 4 row chunks
   (numpy and TF1 get the same values in memory: neither takes a dask array). Peers: numpy,
   dask.array, TF1. Targets: dflow build + first run ≤ 1 s, later runs ≤ 2× numpy.
c) the same chain fed as a numpy array on the default session (the path users take: the plan runs
   in process), without and with a `chunks=` hint on the placeholder. Targets (issue #12): build +
   first run ≤ 1 s, later runs ≤ 1.5× numpy, peak RSS ≤ 250 MB.

Every case runs in its own interpreter (benchmarks/harness.py); the TF1 cases run under the
interpreter named by TF_PYTHON (TensorFlow is never a dependency of dflow), or this one if it can
import tensorflow. Module-level imports are standard library only so that interpreter can load it.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The harness beside this file, and the checkout's dflow even when it is not installed.
sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from harness import (  # noqa: E402
    Report,
    case_main,
    fmt_ratio,
    fmt_time,
    machine_line,
    record_run,
    run_case,
    table,
    time_calls,
    timed,
)
from harness import tf_python as find_tf_python  # noqa: E402

TINY_SHAPE = (100, 100)
CHAIN_SHAPE, CHAIN_CHUNKS, CHAIN_DEPTH = (1000, 100), (250, 100), 1000
CHAIN_REPEAT = 5


def _tiny_data():
    import numpy as np

    return np.random.default_rng(0).random(TINY_SHAPE, dtype=np.float32)


def _chain_data():
    import numpy as np

    return np.random.default_rng(1).standard_normal(CHAIN_SHAPE)


# ---- a) tiny graph ---------------------------------------------------------------------------
def tiny_numpy():
    import numpy as np

    x = _tiny_data()
    t = time_calls(lambda: np.sum(x * 2 + 1))
    return {"per_run": t["median"], "min": t["min"], "value": float(np.sum(x * 2 + 1))}


def tiny_dask():
    import dask.array as da

    x = _tiny_data()

    def run():
        dx = da.from_array(x, chunks=x.shape)
        return (dx * 2 + 1).sum().compute()

    t = time_calls(run)
    return {"per_run": t["median"], "min": t["min"], "value": float(run())}


def _tiny_dflow(**session_kwargs):
    import dflow as tf

    x = tf.placeholder(tf.float32, TINY_SHAPE, name="x")
    y = tf.reduce_sum(x * 2 + 1)
    xv = _tiny_data()
    sess = tf.Session(**session_kwargs)
    first, value = timed(lambda: sess.run(y, {x: xv}))
    t = time_calls(lambda: sess.run(y, {x: xv}))
    return {"per_run": t["median"], "min": t["min"], "first": first, "value": float(value)}


def tiny_dflow():
    return _tiny_dflow()


def tiny_dflow_dask():
    return _tiny_dflow(small_plan_bytes=0)


def tiny_tf1():
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    x = tf.placeholder(tf.float32, TINY_SHAPE, name="x")
    y = tf.reduce_sum(x * 2 + 1)
    xv = _tiny_data()
    sess = tf.Session()
    first, value = timed(lambda: sess.run(y, {x: xv}))
    t = time_calls(lambda: sess.run(y, {x: xv}))
    return {"per_run": t["median"], "min": t["min"], "first": first, "value": float(value)}


# ---- b) 1000-op elementwise chain ------------------------------------------------------------
def chain_numpy():
    import numpy as np

    x = _chain_data()

    def run():
        y = x
        for _ in range(CHAIN_DEPTH):
            y = np.tanh(y * 1.01 + 0.1)
        return y

    first, value = timed(run)
    t = time_calls(run, repeat=CHAIN_REPEAT, number=1)
    return {"first": first, "later": t["median"], "min": t["min"], "value": float(value.sum())}


def chain_dask():
    import dask.array as da

    x = _chain_data()

    def build():
        y = da.from_array(x, chunks=CHAIN_CHUNKS)
        for _ in range(CHAIN_DEPTH):
            y = da.tanh(y * 1.01 + 0.1)
        return y

    build_s, y = timed(build)
    first, value = timed(y.compute)
    # dask takes ~40× numpy here: fewer repeats keep `make bench` short; the spread shows in min.
    t = time_calls(y.compute, repeat=3, number=1)
    return {"build": build_s, "first": first, "later": t["median"], "min": t["min"],
            "value": float(value.sum())}


def chain_dflow(numpy_feed=False, hint=None):
    import dask.array as da

    import dflow as tf

    xv = _chain_data()
    feed = xv if numpy_feed else da.from_array(xv, chunks=CHAIN_CHUNKS)

    def build():
        x = tf.placeholder(tf.float64, CHAIN_SHAPE, name="x", chunks=hint)
        y = x
        for _ in range(CHAIN_DEPTH):
            y = tf.tanh(y * 1.01 + 0.1)
        return x, y

    build_s, (x, y) = timed(build)
    sess = tf.Session()
    first, value = timed(lambda: sess.run(y, {x: feed}))
    t = time_calls(lambda: sess.run(y, {x: feed}), repeat=CHAIN_REPEAT, number=1)
    return {"build": build_s, "first": first, "later": t["median"], "min": t["min"],
            "value": float(value.sum())}


def chain_tf1():
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    xv = _chain_data()

    def build():
        x = tf.placeholder(tf.float64, CHAIN_SHAPE, name="x")
        y = x
        for _ in range(CHAIN_DEPTH):
            y = tf.tanh(y * 1.01 + 0.1)
        return x, y

    build_s, (x, y) = timed(build)
    sess = tf.Session()
    first, value = timed(lambda: sess.run(y, {x: xv}))
    t = time_calls(lambda: sess.run(y, {x: xv}), repeat=CHAIN_REPEAT, number=1)
    return {"build": build_s, "first": first, "later": t["median"], "min": t["min"],
            "value": float(value.sum())}


CASES = {
    "tiny:numpy": tiny_numpy, "tiny:dask": tiny_dask, "tiny:dflow": tiny_dflow,
    "tiny:dflow-dask": tiny_dflow_dask, "tiny:tf1": tiny_tf1,
    "chain:numpy": chain_numpy, "chain:dask": chain_dask, "chain:dflow": chain_dflow,
    "chain:tf1": chain_tf1,
    "chain:dflow-numpy": lambda: chain_dflow(numpy_feed=True),
    "chain:dflow-numpy-hint": lambda: chain_dflow(numpy_feed=True, hint=CHAIN_CHUNKS),
}


# ---- parent: run every case, print tables with ratios and the targets --------------------------

def _run(name, python=None):
    r = run_case(__file__, name, python=python)
    if "error" in r:
        print(f"  {name}: FAILED {r['error']}", file=sys.stderr)
    return r


def _agree(results, ref="numpy", rtol=1e-4):
    """Names of the peers whose checksum differs from the reference peer's."""
    want = results.get(ref, {}).get("value")
    bad = []
    for name, r in results.items():
        v = r.get("value")
        if want is not None and v is not None and abs(v - want) > rtol * max(1.0, abs(want)):
            bad.append(f"{name} ({v!r} vs {want!r})")
    return bad


def _target(report, what, ok):
    report(f"  target {what}: {'met' if ok else 'MISSED'}" if ok is not None
           else f"  target {what}: not measured")


def bench_tiny(report, tf_python):
    peers = {"dflow": "tiny:dflow", "dflow (small_plan_bytes=0: via dask)": "tiny:dflow-dask",
             "numpy": "tiny:numpy", "dask.array (build + compute)": "tiny:dask"}
    results = {label: _run(case) for label, case in peers.items()}
    if tf_python:
        results["TF1"] = _run("tiny:tf1", tf_python)
    base = results["dflow"].get("per_run")
    rows = []
    for label, r in results.items():
        p = r.get("per_run")
        rows.append([label, fmt_time(p), fmt_time(r.get("min")), fmt_ratio(p, base),
                     f"{r['peak_rss_mb']:.0f}" if "peak_rss_mb" in r else r.get("error", "-")])
    report(f"a) tiny graph: reduce_sum(x * 2 + 1), x fed as {TINY_SHAPE[0]}×{TINY_SHAPE[1]} float32, "
           "plan cached")
    report(table(["peer", "per run (median)", "min", "÷ dflow", "peak RSS MiB"], rows))
    for bad in _agree({k: v for k, v in results.items()}, ref="numpy"):
        report(f"  WRONG RESULT: {bad}")
    tf_run = results.get("TF1", {}).get("per_run")
    _target(report, f"dflow ≤ 200 µs/run (got {fmt_time(base)})",
            None if base is None else base <= 200e-6)
    _target(report, f"dflow ≤ TF1 (dflow ÷ TF1 = {fmt_ratio(base, tf_run)})",
            None if base is None or tf_run is None else base <= tf_run)


def bench_chain(report, tf_python):
    peers = {"dflow": "chain:dflow", "numpy": "chain:numpy", "dask.array": "chain:dask"}
    results = {label: _run(case) for label, case in peers.items()}
    if tf_python:
        results["TF1"] = _run("chain:tf1", tf_python)
    d = results["dflow"]
    rows = []
    for label, r in results.items():
        rows.append([label, fmt_time(r.get("build")), fmt_time(r.get("first")),
                     fmt_time(r.get("later")), fmt_ratio(r.get("later"), d.get("later")),
                     f"{r['peak_rss_mb']:.0f}" if "peak_rss_mb" in r else r.get("error", "-")])
    report("")
    report(f"b) chain: {CHAIN_DEPTH} × tanh(x * 1.01 + 0.1), x {CHAIN_SHAPE[0]}×{CHAIN_SHAPE[1]} "
           f"float64 fed as a dask array in {CHAIN_SHAPE[0] // CHAIN_CHUNKS[0]} row chunks "
           "(numpy and TF1: the same values in memory)")
    report(table(["peer", "build", "first run", "later runs (median)", "later ÷ dflow",
                  "peak RSS MiB"], rows))
    for bad in _agree(results, ref="numpy"):
        report(f"  WRONG RESULT: {bad}")
    np_later = results["numpy"].get("later")
    if d.get("build") is not None:
        total = d["build"] + d["first"]
        _target(report, f"dflow build + first run ≤ 1 s (got {fmt_time(total)})", total <= 1.0)
        _target(report, f"dflow later runs ≤ 2× numpy (dflow ÷ numpy = "
                f"{fmt_ratio(d['later'], np_later)})",
                None if np_later is None else d["later"] <= 2 * np_later)
    else:
        _target(report, "dflow chain", None)


def bench_chain_numpy(report, tf_python):
    peers = {"dflow, numpy feed": "chain:dflow-numpy",
             f"dflow, numpy feed, chunks={CHAIN_CHUNKS}": "chain:dflow-numpy-hint",
             "numpy": "chain:numpy"}
    results = {label: _run(case) for label, case in peers.items()}
    if tf_python:
        results["TF1"] = _run("chain:tf1", tf_python)
    np_later = results["numpy"].get("later")
    rows = []
    for label, r in results.items():
        rows.append([label, fmt_time(r.get("build")), fmt_time(r.get("first")), fmt_time(r.get("later")),
                     fmt_ratio(r.get("later"), np_later),
                     f"{r['peak_rss_mb']:.0f}" if "peak_rss_mb" in r else r.get("error", "-")])
    report("")
    report("c) the same chain fed as a numpy array on the default session (in-process plan)")
    report(table(["peer", "build", "first run", "later runs (median)", "later ÷ numpy", "peak RSS MiB"], rows))
    for bad in _agree(results, ref="numpy"):
        report(f"  WRONG RESULT: {bad}")
    for label in list(peers)[:2]:
        d = results[label]
        if d.get("build") is None:
            _target(report, label, None)
            continue
        total = d["build"] + d["first"]
        _target(report, f"{label}: build + first run ≤ 1 s (got {fmt_time(total)})", total <= 1.0)
        _target(report, f"{label}: later runs ≤ 1.5× numpy (got {fmt_ratio(d['later'], np_later)})",
                None if np_later is None else d["later"] <= 1.5 * np_later)
        _target(report, f"{label}: peak RSS ≤ 250 MB (got {d['peak_rss_mb'] * 1.048576:.0f} MB)",
                d["peak_rss_mb"] * 1.048576 <= 250)


def main(argv):
    if "--case" in argv:
        case_main(CASES, argv)
        return 0
    tf_python = find_tf_python()
    report = Report()
    report(machine_line())
    report(f"TF1 peer: {tf_python or 'not measured (set TF_PYTHON to an interpreter with tensorflow)'}")
    bench_tiny(report, tf_python)
    bench_chain(report, tf_python)
    bench_chain_numpy(report, tf_python)
    if "--record" in argv:
        record_run("bench_spine (issue #2: tiny graph, 1000-op chain)", "bench_spine.py", argv, report.text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
