"""py_func overhead (issue #8): Session.run of a py_func on a fed 100×100 float32, against calling
the function directly and against the Session.run overhead of a tiny graph.

    python benchmarks/bench_py_ops.py [--record]          # TF_PYTHON=... adds the TF1 peer

Target: py_func run ≤ 2 × (direct call + tiny-graph run), for the default session (small plans
run in memory) and for the Dask path (small_plan_bytes=0, sync scheduler). The function is
np.tanh; the tiny graph is `identity(x)` with the same feed and fetch. map_blocks and TF1's
py_func are measured beside them. Every case runs in its own interpreter (benchmarks/harness.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

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
)
from harness import tf_python as find_tf_python  # noqa: E402

SHAPE = (100, 100)


def _data():
    import numpy as np

    return np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)


def direct():
    import numpy as np

    x = _data()
    t = time_calls(lambda: np.tanh(x))
    return {"per_run": t["median"], "min": t["min"], "value": float(np.tanh(x).sum())}


def _dflow(build, **session_kwargs):
    import numpy as np

    import dflow as tf

    x = tf.placeholder(tf.float32, SHAPE, name="x")
    y = build(tf, np, x)
    xv = _data()
    sess = tf.Session(**session_kwargs)
    value = sess.run(y, {x: xv})
    t = time_calls(lambda: sess.run(y, {x: xv}))
    return {"per_run": t["median"], "min": t["min"], "value": float(np.sum(value))}


def _py_func(tf, np, x):
    return tf.py_func(np.tanh, [x], tf.float32)


def _map_blocks(tf, np, x):
    return tf.map_blocks(np.tanh, x, dtype=tf.float32)


def _tiny(tf, np, x):
    return tf.identity(x)


_DASK = {"scheduler": "sync", "small_plan_bytes": 0}
CASES = {
    "direct": direct,
    "tiny": lambda: _dflow(_tiny),
    "py_func": lambda: _dflow(_py_func),
    "map_blocks": lambda: _dflow(_map_blocks),
    "tiny:dask": lambda: _dflow(_tiny, **_DASK),
    "py_func:dask": lambda: _dflow(_py_func, **_DASK),
    "map_blocks:dask": lambda: _dflow(_map_blocks, **_DASK),
}


def tf1_py_func():
    import numpy as np
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    x = tf.placeholder(tf.float32, SHAPE)
    xv = _data()
    sess = tf.Session()
    out = {}
    for label, y in (("tiny", tf.identity(x)), ("py_func", tf.py_func(np.tanh, [x], tf.float32))):
        sess.run(y, {x: xv})
        t = time_calls(lambda y=y: sess.run(y, {x: xv}))
        out[label] = t["median"]
    out["per_run"] = out["py_func"]
    out["value"] = float(np.sum(sess.run(y, {x: xv})))
    return out


CASES["tf1"] = tf1_py_func



def _run(name, python=None):
    r = run_case(__file__, name, python=python)
    if "error" in r:
        print(f"  {name}: FAILED {r['error']}", file=sys.stderr)
    return r


def main(argv):
    report = Report()
    report(machine_line())
    tf_python = find_tf_python()
    results = {name: _run(name) for name in CASES if name != "tf1"}
    if tf_python:
        results["tf1"] = _run("tf1", tf_python)
    want = results["direct"].get("value")
    for name, r in results.items():
        if name.startswith("tiny"):
            continue  # identity(x): not tanh
        v = r.get("value")
        if want is not None and v is not None and abs(v - want) > 1e-3 * max(1.0, abs(want)):
            report(f"  WRONG RESULT: {name} ({v!r} vs {want!r})")
    d = results["direct"].get("per_run")
    rows = []
    for path, suffix in (("default session (in memory)", ""), ("Dask path (sync, small_plan_bytes=0)", ":dask")):
        tiny, pyf, mb = (results[c + suffix].get("per_run") for c in ("tiny", "py_func", "map_blocks"))
        budget = None if None in (d, tiny) else 2 * (d + tiny)
        rows.append([path, fmt_time(d), fmt_time(tiny), fmt_time(pyf), fmt_time(mb), fmt_time(budget),
                     fmt_ratio(pyf, None if None in (d, tiny) else d + tiny)])
    tf1 = results.get("tf1", {})
    if "per_run" in tf1:
        rows.append(["TF1 (peer)", fmt_time(d), fmt_time(tf1.get("tiny")), fmt_time(tf1.get("py_func")), "-",
                     "-", fmt_ratio(tf1.get("py_func"), d + tf1["tiny"] if d and tf1.get("tiny") else None)])
    report(f"py_func(np.tanh) on a fed {SHAPE[0]}×{SHAPE[1]} float32, per Session.run (median)")
    report(table(["path", "direct call", "tiny run", "py_func run", "map_blocks run", "target ≤", "÷ (direct + tiny)"],
                 rows))
    for row, suffix in zip(rows, ("", ":dask")):
        pyf, tiny = results["py_func" + suffix].get("per_run"), results["tiny" + suffix].get("per_run")
        ok = None if None in (pyf, tiny, d) else pyf <= 2 * (d + tiny)
        report(f"  target py_func ≤ 2 × (direct + tiny), {row[0]}: "
               + ("not measured" if ok is None else "met" if ok else "MISSED"))
    if "--record" in argv:
        record_run("bench_py_ops (issue #8: py_func overhead)", "bench_py_ops.py", argv, report.text)


if __name__ == "__main__":
    if "--case" in sys.argv:
        case_main(CASES, sys.argv)
    else:
        main(sys.argv[1:])
