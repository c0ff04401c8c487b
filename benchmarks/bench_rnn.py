"""The RNN benchmark of issue #18: an LSTM `dynamic_rnn` forward and forward+backward, dflow vs TF1.

    python benchmarks/bench_rnn.py [--batch 64] [--units 128] [--steps 100] [--repeat 5] [--rounds 3] [--record]
    python benchmarks/bench_rnn.py --quick                  # batch 16, 32 units, 20 steps: a smoke run
    TF_PYTHON=/path/to/python ...                           # adds the TF1 peer (tf.compat.v1 graph mode)

One graph in each peer: `tf.nn.dynamic_rnn(BasicLSTMCell(units), x)` over x [batch, steps, units]
(float32, fed), with the default Session. "forward" fetches the outputs; "forward+backward" fetches
the gradients of sum(outputs) w.r.t. the kernel and bias (the reverse pass through the loop and
its TensorArrays). Each figure is the median time of one `Session.run`, also shown per time step.
Targets: dflow ≤ 2× TF1's time for each; dflow's forward+backward ≤ 3× its forward.

This machine's speed changes over seconds (host contention: one build measured 1.54× and 2.02×
a minute apart, each peer timed once after the other), so the peers run in `--rounds` alternating
rounds (dflow, TF1, dflow, ...; a fresh interpreter each): each figure is the median over rounds
of the rounds' medians, and the ratios' round-by-round spread is printed.

On a loaded machine OpenBLAS's own threads can make each of these small matmuls ([64, 256] by
[256, 512]) 50× slower than one thread (they wait for each other while descheduled; 2 cores at a
load of 10-18 measured 47 ms against 1 ms): `OPENBLAS_NUM_THREADS=1` in front shows dflow with one
BLAS thread (TF1 uses its own Eigen thread pool either way).

Every peer runs in its own interpreter (benchmarks/harness.py); the TF1 peer needs TF_PYTHON (its
cells come from tf_keras's legacy cells: TF_USE_LEGACY_KERAS=1 is set for it). Module-level
imports are standard library only so that the TF1 interpreter can load this file.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from harness import (  # noqa: E402
    Report,
    case_main,
    env_value,
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

FORWARD_TARGET = 2.0
GRADIENT_TARGET = 3.0


def _measure(tf, sess):
    import numpy as np

    batch, units, steps = env_value("BENCH_BATCH"), env_value("BENCH_UNITS"), env_value("BENCH_STEPS")
    repeat = env_value("BENCH_REPEAT")
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [batch, steps, units])
    cell = tf.nn.rnn_cell.BasicLSTMCell(units)
    outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    grads = tf.gradients(tf.reduce_sum(outputs), tf.trainable_variables())
    sess.run(tf.global_variables_initializer())
    feed = {x: np.random.RandomState(0).rand(batch, steps, units).astype(np.float32)}
    first_fwd, out = timed(lambda: sess.run(outputs, feed))
    first_grad, g = timed(lambda: sess.run(grads, feed))
    fwd = time_calls(lambda: sess.run(outputs, feed), repeat=repeat, number=1)
    grad = time_calls(lambda: sess.run(grads, feed), repeat=repeat, number=1)
    return {"forward": fwd["median"], "forward_min": fwd["min"], "gradient": grad["median"],
            "gradient_min": grad["min"], "first_forward": first_fwd, "first_gradient": first_grad,
            "out_mean": float(np.mean(out)), "grad_norm": float(sum(np.sum(np.square(v)) for v in g)) ** 0.5}


def case_dflow():
    import dflow as tf

    return _measure(tf, tf.Session())


def case_tf1():
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()  # TF1 as it was: graph mode, v1 control flow and TensorArrays
    return _measure(tf, tf.Session())


def case_dflow_profile():
    """Where dflow's forward and forward+backward runs go: cProfile's top entries by own time."""
    import cProfile
    import io
    import pstats

    import numpy as np

    import dflow as tf

    batch, units, steps = env_value("BENCH_BATCH"), env_value("BENCH_UNITS"), env_value("BENCH_STEPS")
    x = tf.placeholder(tf.float32, [batch, steps, units])
    outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(units), x, dtype=tf.float32)
    grads = tf.gradients(tf.reduce_sum(outputs), tf.trainable_variables())
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    feed = {x: np.random.RandomState(0).rand(batch, steps, units).astype(np.float32)}
    text = io.StringIO()
    for label, fetch in (("forward", outputs), ("forward+backward", grads)):
        sess.run(fetch, feed)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(3):
            sess.run(fetch, feed)
        prof.disable()
        text.write(f"---- {label}, 3 runs\n")
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(14)
    return {"profile": text.getvalue()}


CASES = {"dflow": case_dflow, "tf1": case_tf1, "dflow-profile": case_dflow_profile}


def _combined(rounds):
    """One peer's figures over its rounds: the median of each timing (the first round's first-run
    figures and output), the largest peak RSS; an error if any round failed."""
    for r in rounds:
        if "error" in r:
            return r
    out = dict(rounds[0])
    for key in ("forward", "forward_min", "gradient", "gradient_min"):
        values = sorted(r[key] for r in rounds)
        out[key] = values[len(values) // 2]
    if "peak_rss_mb" in out:
        out["peak_rss_mb"] = max(r["peak_rss_mb"] for r in rounds)
    return out


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--units", type=int, default=128)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the two peers")
    parser.add_argument("--quick", action="store_true", help="batch 16, 32 units, 20 steps, 3 repeats")
    parser.add_argument("--profile", action="store_true", help="print where dflow's forward run spends its time")
    parser.add_argument("--record", action="store_true", help="append the output to benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    if args.quick:
        args.batch, args.units, args.steps, args.repeat = 16, 32, 20, 3
    os.environ.update(BENCH_BATCH=str(args.batch), BENCH_UNITS=str(args.units), BENCH_STEPS=str(args.steps),
                      BENCH_REPEAT=str(args.repeat))
    report = Report()
    report(f"LSTM dynamic_rnn: batch {args.batch}, {args.units} units, {args.steps} steps, float32; "
           f"{machine_line()}")
    tf_py = find_tf_python()
    rounds = {"dflow": [], "TF1": []}
    for _ in range(max(1, args.rounds)):  # alternating, so that both peers meet the machine's spells
        rounds["dflow"].append(run_case(__file__, "dflow"))
        rounds["TF1"].append(run_case(__file__, "tf1", python=tf_py) if tf_py else {"error": "no TF_PYTHON"})
    results = {name: _combined(rs) for name, rs in rounds.items()}
    rows = []
    for name, r in results.items():
        if "error" in r:
            rows.append([name, r["error"], "", "", "", ""])
            continue
        rows.append([name, fmt_time(r["forward"]), fmt_time(r["forward"] / args.steps), fmt_time(r["gradient"]),
                     fmt_time(r["gradient"] / args.steps), fmt_ratio(r["gradient"], r["forward"])])
    report(table(["peer", "forward", "per time step", "forward+backward", "per time step", "fwd+bwd / fwd"],
                 rows))
    d, t = results["dflow"], results["TF1"]
    if "error" not in d:
        report(f"\ndflow first runs (plans compiled): forward {fmt_time(d['first_forward'])}, "
               f"forward+backward {fmt_time(d['first_gradient'])}; peak RSS {d['peak_rss_mb']:.0f} MiB")
        grad_ratio = d["gradient"] / d["forward"]
        report(f"dflow forward+backward / forward: {grad_ratio:.2f}× (target ≤ {GRADIENT_TARGET:g}×: "
               f"{'met' if grad_ratio <= GRADIENT_TARGET else 'missed'})")
    if "error" not in d and "error" not in t:
        for key, label in (("forward", "forward"), ("gradient", "forward+backward")):
            ratio = d[key] / t[key]
            by_round = [a[key] / b[key] for a, b in zip(rounds["dflow"], rounds["TF1"])]
            report(f"dflow / TF1, {label}: {ratio:.2f}× (target ≤ {FORWARD_TARGET:g}×: "
                   f"{'met' if ratio <= FORWARD_TARGET else 'missed'}); round by round: "
                   + ", ".join(f"{r:.2f}×" for r in by_round))
        report(f"mean output: dflow {d['out_mean']:.4f}, TF1 {t['out_mean']:.4f} (different random weights)")
    if args.profile:
        p = run_case(__file__, "dflow-profile")
        report("\n" + p.get("profile", p.get("error", "")))
    if args.record:
        record_run("bench_rnn", "bench_rnn.py", argv, report.text)


if __name__ == "__main__":
    if "--case" in sys.argv:
        case_main(CASES, sys.argv)
    else:
        main(sys.argv[1:])
