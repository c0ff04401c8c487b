"""The state benchmarks of issue #3: per-run cost of a variable update, leaks, and shipping.

    python benchmarks/bench_state.py [--record]          # TF_PYTHON=... adds the TF1 peer

a) scalar: sess.run(assign_add(v, 1.0)) on a float32 scalar variable, plan cached.
   Peers: dflow (default Session), dflow through Dask (threads), TF1 (ref variables).
   Target: dflow ≤ TF1 (TF1 ~110 µs/run on this kind of machine).
b) leak: RSS of the process before and after 10,000 such runs (after 1,000 warm-up runs).
   Target: growth ≤ 5 %.
c) big: a 100 MB float32 variable (4 chunks of 25 MB) on a LocalCluster of 2 worker processes,
   updated each run by v.assign_add(1.0) (the op is fetched, not the value). Measured per run:
   bytes the worker processes read from their TCP comms (a counter installed in the workers),
   the part of it sent worker to worker (the workers' transfer_outgoing_bytes_total), bytes they
   write, the time, and the growth of the scheduler's task table and of this process's RSS (the
   client and the LocalCluster's scheduler live here).
   Target: bytes sent to workers per run ≈ the update (a scalar here), not the variable.
   A second row feeds a 100 MB delta each run: there the update itself is 100 MB.

Every case runs in its own interpreter (benchmarks/harness.py). Module-level imports are standard
library only so that the TF1 interpreter can load this file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from harness import (  # noqa: E402
    Report,
    case_main,
    fmt_ratio,
    fmt_time,
    record_run,
    run_case,
    table,
    time_calls,
    timed,
)
from harness import tf_python as find_tf_python  # noqa: E402

LEAK_WARMUP, LEAK_RUNS = 1_000, 10_000
BIG_N = 25_000_000  # float32: 100 MB
BIG_CHUNK = BIG_N // 4
BIG_RUNS = 20
BIG_FED_RUNS = 10  # the fed case holds on to memory per run (see the RSS column)
MB = 1e6


def _rss_bytes():
    """This process's current resident set size (Linux /proc; stdlib only, for the TF peer too)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


# ---- a) + b) scalar assign_add ------------------------------------------------------------------
def _scalar_loop(sess, inc, read):
    calls = [0]

    def run():
        sess.run(inc)
        calls[0] += 1

    first, _ = timed(run)
    t = time_calls(run)
    value = float(sess.run(read))
    return {"per_run": t["median"], "min": t["min"], "first": first, "value": value,
            "value_ok": value == calls[0]}


def _leak_loop(sess, inc, read):
    import gc

    for _ in range(LEAK_WARMUP):
        sess.run(inc)
    gc.collect()
    before = _rss_bytes()
    for _ in range(LEAK_RUNS):
        sess.run(inc)
    gc.collect()
    after = _rss_bytes()
    value = float(sess.run(read))
    return {"rss_before": before, "rss_after": after, "value": value,
            "value_ok": value == LEAK_WARMUP + LEAK_RUNS}


def _dflow_scalar(**session_kwargs):
    import dflow as tf

    v = tf.Variable(0.0, name="v")
    inc = tf.assign_add(v, 1.0)
    sess = tf.Session(**session_kwargs)
    sess.run(v.initializer)
    return sess, inc, v


def _tf1_scalar():
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()  # TF1 ref variables and graph mode
    v = tf.Variable(0.0, name="v")
    inc = tf.assign_add(v, 1.0)
    sess = tf.Session()
    sess.run(v.initializer)
    return sess, inc, v


def scalar_dflow():
    return _scalar_loop(*_dflow_scalar())


def scalar_dflow_dask():
    return _scalar_loop(*_dflow_scalar(small_plan_bytes=0))


def scalar_tf1():
    return _scalar_loop(*_tf1_scalar())


def leak_dflow():
    return _leak_loop(*_dflow_scalar())


def leak_tf1():
    return _leak_loop(*_tf1_scalar())


# ---- c) 100 MB variable on a LocalCluster ----------------------------------------------------------
def _install_counters():
    """Runs in each worker: counts the bytes its TCP comms read and write (payload frames)."""
    import distributed.comm.tcp as tcp

    if getattr(tcp, "_dflow_counts", None) is not None:
        return
    counts = tcp._dflow_counts = {"read": 0, "write": 0}
    real_read, real_write = tcp.read_bytes_rw, tcp.TCP.write

    async def read_bytes_rw(stream, n):
        counts["read"] += n
        return await real_read(stream, n)

    async def write(self, msg, serializers=None, on_error="message"):
        n = await real_write(self, msg, serializers, on_error)
        counts["write"] += n or 0
        return n

    tcp.read_bytes_rw = read_bytes_rw
    tcp.TCP.write = write


def _read_counters(dask_worker):
    import distributed.comm.tcp as tcp

    return {**tcp._dflow_counts, "peer": dask_worker.transfer_outgoing_bytes_total}


def _totals(client):
    per_worker = client.run(_read_counters)
    out = {k: sum(w[k] for w in per_worker.values()) for k in ("read", "write", "peer")}
    out["tasks"] = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
    out["rss"] = _rss_bytes()  # this process: the client and the LocalCluster's scheduler
    return out


def _big(fed):
    import time

    import numpy as np
    from distributed import Client, LocalCluster

    import dflow as tf

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=":0", silence_logs=40)
    client = Client(cluster)
    try:
        v = tf.Variable(tf.zeros([BIG_N]), name="big")
        if fed:
            delta = tf.placeholder(tf.float32, [BIG_N], name="delta")
            step = v.assign_add(delta, read_value=False)
            feed = {delta: np.ones(BIG_N, np.float32)}
        else:
            step = v.assign_add(1.0, read_value=False)
            feed = None
        total = v[0] + v[BIG_N - 1]  # a small read: fetching v itself would gather 100 MB
        sess = tf.Session(scheduler=client, chunks=(BIG_CHUNK,))
        sess.run(v.initializer)
        first, _ = timed(lambda: sess.run(step, feed))
        client.run(_install_counters)
        before = _totals(client)
        runs = BIG_FED_RUNS if fed else BIG_RUNS
        t0 = time.perf_counter()
        for _ in range(runs):
            sess.run(step, feed)
        per_run = (time.perf_counter() - t0) / runs
        after = _totals(client)
        got = float(sess.run(total))
        want = 2.0 * (runs + 1)
        out = {f"{k}_per_run": (after[k] - before[k]) / runs for k in after}
        out.update(per_run=per_run, first=first, value=got, value_ok=got == want, runs=runs,
                   variable_bytes=BIG_N * 4, update_bytes=BIG_N * 4 if fed else 4)
        sess.close()
        return out
    finally:
        client.close()
        cluster.close()


def big_scalar_update():
    return _big(fed=False)


def big_fed_update():
    return _big(fed=True)


CASES = {
    "scalar:dflow": scalar_dflow, "scalar:dflow-dask": scalar_dflow_dask, "scalar:tf1": scalar_tf1,
    "leak:dflow": leak_dflow, "leak:tf1": leak_tf1,
    "big:scalar": big_scalar_update, "big:fed": big_fed_update,
}


# ---- parent ---------------------------------------------------------------------------------------

def _run(name, python=None):
    r = run_case(__file__, name, python=python)
    if "error" in r:
        print(f"  {name}: FAILED {r['error']}", file=sys.stderr)
    return r


def _target(report, what, ok):
    report(f"  target {what}: " + ("not measured" if ok is None else "met" if ok else "MISSED"))


def bench_scalar(report, tf_python):
    peers = {"dflow (default Session)": "scalar:dflow", "dflow (small_plan_bytes=0: via dask threads)":
             "scalar:dflow-dask"}
    results = {label: _run(case) for label, case in peers.items()}
    if tf_python:
        results["TF1 (ref variables)"] = _run("scalar:tf1", tf_python)
    base = results["dflow (default Session)"].get("per_run")
    rows = [[label, fmt_time(r.get("per_run")), fmt_time(r.get("min")), fmt_time(r.get("first")),
             fmt_ratio(r.get("per_run"), base), r.get("value_ok", r.get("error", "-"))]
            for label, r in results.items()]
    report("a) sess.run(assign_add(v, 1.0)), v a float32 scalar, plan cached")
    report(table(["peer", "per run (median)", "min", "first run", "÷ dflow", "value exact"], rows))
    tf_run = results.get("TF1 (ref variables)", {}).get("per_run")
    _target(report, f"dflow ≤ TF1 (dflow ÷ TF1 = {fmt_ratio(base, tf_run)})",
            None if base is None or tf_run is None else base <= tf_run)


def bench_leak(report, tf_python):
    results = {"dflow (default Session)": _run("leak:dflow")}
    if tf_python:
        results["TF1 (ref variables)"] = _run("leak:tf1", tf_python)
    rows = []
    for label, r in results.items():
        if "rss_before" not in r:
            rows.append([label, "-", "-", "-", "-", r.get("error", "-")])
            continue
        grown = r["rss_after"] - r["rss_before"]
        rows.append([label, f"{r['rss_before'] / 2**20:.1f}", f"{r['rss_after'] / 2**20:.1f}",
                     f"{grown / 2**20:+.2f}", f"{100 * grown / r['rss_before']:+.2f} %", r["value_ok"]])
    report("")
    report(f"b) RSS over {LEAK_RUNS:,} runs of the same assign_add (after {LEAK_WARMUP:,} warm-up runs)")
    report(table(["peer", "RSS before MiB", "after MiB", "growth MiB", "growth", "value exact"], rows))
    d = results["dflow (default Session)"]
    ok = None if "rss_before" not in d else (d["rss_after"] - d["rss_before"]) <= 0.05 * d["rss_before"]
    _target(report, "dflow RSS growth ≤ 5 %", ok)


def bench_big(report):
    results = {"assign_add(1.0): update 4 B": _run("big:scalar"),
               "assign_add(delta), delta fed: update 100 MB": _run("big:fed")}
    rows = []
    for label, r in results.items():
        if "read_per_run" not in r:
            rows.append([label] + ["-"] * 8 + [r.get("error", "-")])
            continue
        rows.append([label, f"{r['read_per_run'] / MB:.3f}", f"{r['peer_per_run'] / MB:.3f}",
                     f"{r['write_per_run'] / MB:.3f}", f"{r['read_per_run'] / r['variable_bytes']:.3f}",
                     fmt_time(r["per_run"]), fmt_time(r["first"]), f"{r['tasks_per_run']:+.1f}",
                     f"{r['rss_per_run'] / MB:+.1f}", r["value_ok"]])
    report("")
    report(f"c) a {BIG_N * 4 / MB:.0f} MB float32 variable in 4 chunks on a LocalCluster (2 worker processes), "
           f"updated each run ({BIG_RUNS} runs; {BIG_FED_RUNS} with a fed delta)")
    report(table(["update", "MB to workers", "of which worker→worker", "MB from workers",
                  "to workers ÷ variable", "time", "first run", "scheduler tasks", "RSS MB",
                  "value exact"], rows))
    report("  (all columns per run but 'first run')")
    small = results["assign_add(1.0): update 4 B"]
    fed = results["assign_add(delta), delta fed: update 100 MB"]
    _target(report, "scalar update: bytes to workers per run ≪ the variable (≤ 1 % of it)",
            None if "read_per_run" not in small else small["read_per_run"] <= 0.01 * small["variable_bytes"])
    _target(report, "fed update: bytes to workers per run ≈ the update (≤ 1.1×), not the variable twice",
            None if "read_per_run" not in fed else fed["read_per_run"] <= 1.1 * fed["update_bytes"])
    for label, r in results.items():
        if r.get("tasks_per_run", 0) > 0.5:
            report(f"  note ({label}): the scheduler's task table grows by {r['tasks_per_run']:.1f} tasks "
                   f"per run and this process's RSS by {r['rss_per_run'] / MB:+.1f} MB per run")


def main(argv):
    if "--case" in argv:
        case_main(CASES, argv)
        return 0
    tf_python = find_tf_python()
    report = Report()
    report(f"TF1 peer: {tf_python or 'not measured (set TF_PYTHON to an interpreter with tensorflow)'}")
    try:
        report(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    except OSError:
        pass
    bench_scalar(report, tf_python)
    bench_leak(report, tf_python)
    bench_big(report)
    if "--record" in argv:
        record_run("bench_state (issue #3: variable updates, leaks, shipping)", "bench_state.py", argv, report.text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
