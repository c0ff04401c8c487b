"""Eager execution benchmarks of issue #17: per-op overhead, a GradientTape step, and defun.

    python benchmarks/bench_eager.py [--record]       # dflow; TF_PYTHON=... adds TF 2.x eager

Cases (each in its own interpreter, benchmarks/harness.py):
- `matmul` of 1×1 float32 tensors, per op;
- `a + a` on a 100×100 float32 tensor, per op;
- a GradientTape step: `reduce_sum(matmul(a, w) ** 2)` and its gradient with respect to w
  (a 100×100, w a 100×1 variable);
- the same step under `tfe.defun` (TF: `tf.function`), timed in alternation with the eager step;
- out of core (`--lazy-gb G`, default 4; 0 skips): the column means of the G GB n×1000 float32 Zarr
  array of the workload (benchmarks/workload.py), `tf.reduce_mean(tf.io.read_zarr(X), 0).numpy()`
  in eager mode (a lazy value run through Dask) against the same graph's `Session.run`, default
  Session settings (the default memory budget), each in its own interpreter with its peak RSS.
Targets (issue #17): per-op times ≤ 0.5× TF's, the tape step ≤ TF's, defun ≤ 0.3× the eager step,
the lazy reduction ≤ 1.2× the graph-mode plan's time at the same peak RSS.
Figures are the median over batches (harness.time_calls); on a loaded machine read the ratios only.
Module-level imports are standard library only so that a TF interpreter can load this file.
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
)
from harness import tf_python as find_tf_python  # noqa: E402

CASES = ["matmul_1x1", "add_100x100", "steps"]
LAZY_CASES = ["lazy_graph", "lazy_eager"]


def _setup(tf_mode):
    import numpy as np

    if tf_mode:
        import tensorflow as tf

        function = tf.function
        variable = tf.Variable
        tape = tf.GradientTape
    else:
        import dflow as tf
        import dflow.contrib.eager as tfe

        tfe.enable_eager_execution()
        function = tfe.defun
        variable = tfe.Variable
        tape = tf.GradientTape
    rng = np.random.default_rng(0)
    return tf, function, variable, tape, rng


def _lazy_case(eager):
    import os
    import time

    import dflow as tf

    path = os.path.join(os.environ["BENCH_EAGER_LAZY_DIR"], "X.zarr")
    if eager:
        import dflow.contrib.eager as tfe

        tfe.enable_eager_execution()
        t0 = time.perf_counter()
        m = tf.reduce_mean(tf.io.read_zarr(path), 0).numpy()
    else:
        m_t = tf.reduce_mean(tf.io.read_zarr(path), 0)
        with tf.Session() as sess:
            t0 = time.perf_counter()
            m = sess.run(m_t)
    return {("lazy_eager" if eager else "lazy_graph"): time.perf_counter() - t0, "checksum": float(m.sum())}


def _case(name, tf_mode):
    import statistics

    if name.startswith("lazy_"):
        return _lazy_case(name == "lazy_eager")

    from harness import time_calls

    tf, function, variable, tape_cls, rng = _setup(tf_mode)
    if name == "matmul_1x1":
        x = tf.constant([[2.0]])
        fn = lambda: tf.matmul(x, x)  # noqa: E731
    elif name == "add_100x100":
        a = tf.constant(rng.random((100, 100), dtype="float32"))
        fn = lambda: a + a  # noqa: E731
    else:  # the tape step and its defun, timed in alternation (a loaded machine drifts between cases)
        a = tf.constant(rng.random((100, 100), dtype="float32"))
        w = variable(rng.random((100, 1), dtype="float32"))

        def step():
            with tape_cls() as tape:
                loss = tf.reduce_sum(tf.matmul(a, w) ** 2)
            return tape.gradient(loss, w)

        fast = function(step)
        step(), fast(), fast()
        eager, traced = [], []
        for _ in range(5):
            eager.append(time_calls(step, repeat=3)["median"])
            traced.append(time_calls(fast, repeat=3)["median"])
        return {"tape_step": statistics.median(eager), "defun_step": statistics.median(traced)}
    fn()
    fn()
    t = time_calls(fn, repeat=7)
    return {name: t["median"]}


def main(argv):
    if "--case" in argv:
        import importlib.util

        tf_mode = importlib.util.find_spec("tensorflow") is not None  # the TF peer's interpreter
        case_main({n: (lambda n=n: _case(n, tf_mode)) for n in CASES + LAZY_CASES}, argv)
        return
    out = Report()
    out(machine_line())
    tf_python = find_tf_python()
    ours, theirs, errors = {}, {}, []
    for name in CASES:
        d = run_case(Path(__file__), name)
        t = run_case(Path(__file__), name, python=tf_python) if tf_python else {}
        for figures, into, who in ((d, ours, "dflow"), (t, theirs, "TF")):
            if "error" in figures:
                errors.append(f"{who} {name}: {figures['error']}")
            into.update({k: v for k, v in figures.items() if k != "peak_rss_mb"})
    rows = [[k, fmt_time(ours.get(k)), fmt_time(theirs.get(k)), fmt_ratio(ours.get(k), theirs.get(k))]
            for k in ["matmul_1x1", "add_100x100", "tape_step", "defun_step"]]
    out(table(["case", "dflow eager", "TF eager", "dflow ÷ TF"], rows))
    out(f"defun step ÷ eager tape step: dflow {fmt_ratio(ours.get('defun_step'), ours.get('tape_step'))}, "
        f"TF {fmt_ratio(theirs.get('defun_step'), theirs.get('tape_step'))}  (target for dflow ≤ 0.30×)")
    out("targets: matmul and add ≤ 0.50× TF, the tape step ≤ 1.00× TF")
    gb = float(argv[argv.index("--lazy-gb") + 1]) if "--lazy-gb" in argv else 4.0
    if gb > 0:
        _lazy(out, gb, errors)
    for e in errors:
        out(f"error: {e}")
    if "--record" in argv:
        record_run("bench_eager (issue #17)", __file__, argv, out.text)


def _lazy(out, gb, errors):
    import os
    import shutil
    import tempfile

    import workload

    root = tempfile.mkdtemp(prefix="dflow-bench-eager-")
    try:
        os.environ["BENCH_EAGER_LAZY_DIR"] = root
        meta = workload.generate(root, gb)
        res = {n: run_case(Path(__file__), n, timeout=3600) for n in ("lazy_graph", "lazy_eager")}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for n, r in res.items():
        if "error" in r:
            errors.append(f"dflow {n}: {r['error']}")
    g, e = res["lazy_graph"], res["lazy_eager"]
    out(f"\nout of core: column means of a {gb:g} GB Zarr array ({meta['n']}×{meta['d']} float32), default Session settings")
    out(table(["peer", "time", "peak RSS MiB", "checksum"],
              [[n, fmt_time(r.get(n)), f"{r.get('peak_rss_mb', 0):.0f}", f"{r.get('checksum', float('nan')):.4f}"]
               for n, r in (("lazy_graph", g), ("lazy_eager", e))]))
    if "lazy_graph" in g and "lazy_eager" in e:
        ratio = e["lazy_eager"] / g["lazy_graph"]
        out(f"lazy eager ÷ graph plan: {ratio:.2f}× (target ≤ 1.2×: {'met' if ratio <= 1.2 else 'MISSED'}); "
            f"peak RSS {e['peak_rss_mb']:.0f} vs {g['peak_rss_mb']:.0f} MiB")


if __name__ == "__main__":
    main(sys.argv[1:])
