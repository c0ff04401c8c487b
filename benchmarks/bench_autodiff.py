"""Autodiff benchmarks of issue #4: the cheap-gradient ratio, and a full-batch gradient step on chunked data.

    python benchmarks/bench_autodiff.py [--record]       # dflow, dask.array; TF_PYTHON=... adds TF1

a) cheap gradient: time of (loss + gradient) ÷ time of (loss alone), plan cached, for
   - logistic regression, X 1,000,000×100 float32 in 16 row chunks (an in-memory dask array),
     loss = mean(sigmoid_cross_entropy_with_logits(y, Xw)), gradient with respect to w;
   - a 3-layer MLP 100→256→256→1 (relu) on 200,000×100 float32 in 8 row chunks, mean squared
     error, gradients with respect to all 6 variables.
   Peers: a hand-written dask.array forward/backward pass of the same model, TF1 (numpy feeds).
   Op counts: ops of the forward graph (the loss and what it depends on) and ops tf.gradients adds.
   Targets: dflow ratio ≤ 3; gradient ops ≤ 5× forward ops.
b) full-batch gradient-descent step for the logistic regression: dflow
   `GradientDescentOptimizer(lr).minimize(loss)` run, then the updated w fetched, vs the hand-written
   dask.array step w - lr·Xᵀ(σ(Xw) − y)/n computed to numpy, on the same X: the in-memory dask array of
   a), and da.from_zarr of the same values on disk (16 chunks). Target: dflow ≥ 0.8× dask throughput.

"dflow, stage_bytes=0" rows are a diagnostic, not a peer: the same program with the compiler's stage
splitting turned off (a reduction of an input over 128 MiB otherwise ends a stage, and later stages
re-read that input); the plan lines give each Dask plan's task count and stage sizes.

Every case runs in its own interpreter (benchmarks/harness.py), so peak RSS is the case's own; BLAS
libraries run one thread per task (override with OPENBLAS_NUM_THREADS etc. in the environment).
Module-level imports are standard library only so that a TF interpreter can load this file.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
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

LR_N, LR_D, LR_CHUNKS = 1_000_000, 100, 16
MLP_N, MLP_D, MLP_H, MLP_CHUNKS = 200_000, 100, 256, 8
REPEAT = 9  # timed runs per figure (after one untimed run that compiles the plan)
MLP_REPEAT = 3  # the MLP's loss + gradient takes seconds per run
STEPS = 3  # gradient steps per timed run in b)
LEARNING_RATE = 0.5
# One BLAS thread per task: with OpenBLAS's own threads under Dask's thread pool the cores are
# oversubscribed and the MLP's loss + gradient varied 4× between runs (2.4 s to 9.4 s, same case).
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
ZARR_DIR = Path(os.environ.get("DFLOW_BENCH_DIR", tempfile.gettempdir())) / "dflow-bench-autodiff.zarr"


# ---- data (seeded, identical in every case) ----------------------------------------------------
def _lr_numpy():
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((LR_N, LR_D), dtype=np.float32)
    w_true = rng.standard_normal((LR_D, 1), dtype=np.float32) / 4
    y = ((x @ w_true)[:, 0] + rng.standard_normal(LR_N, dtype=np.float32) > 0).astype(np.float32)
    return x, y


def _lr_dask(source="memory"):
    import dask.array as da

    rows = LR_N // LR_CHUNKS
    if source == "zarr":
        return da.from_zarr(str(ZARR_DIR), component="x"), da.from_zarr(str(ZARR_DIR), component="y")
    x, y = _lr_numpy()
    return da.from_array(x, chunks=(rows, LR_D)), da.from_array(y, chunks=rows)


def _mlp_numpy():
    import numpy as np

    rng = np.random.default_rng(1)
    x = rng.standard_normal((MLP_N, MLP_D), dtype=np.float32)
    y = (np.sin(x[:, :1]) + x[:, 1:2] * x[:, 2:3]).astype(np.float32)
    shapes = [(MLP_D, MLP_H), (MLP_H,), (MLP_H, MLP_H), (MLP_H,), (MLP_H, 1), (1,)]
    params = [(rng.standard_normal(s, dtype=np.float32) / (s[0] ** 0.5 if len(s) == 2 else 10)) for s in shapes]
    return x, y, params


def _alternate(fns, repeat=REPEAT):
    """Median seconds per call of each function, timed in alternation so that load drifts hit all."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times], [min(t) for t in times]


def _ratio_figures(run_loss, run_both, extra=None, repeat=REPEAT):
    first_loss, first_both = _timed_once(run_loss), _timed_once(run_both)
    (loss, both), (loss_min, both_min) = _alternate([run_loss, run_both], repeat)
    out = {"loss": loss, "both": both, "loss_min": loss_min, "both_min": both_min, "first_loss": first_loss,
           "first_both": first_both}
    out.update(extra or {})
    return out


def _timed_once(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# ---- graph builders shared by dflow and TF1 ----------------------------------------------------
def _logreg_graph(tf, n=None):
    x = tf.placeholder(tf.float32, [n, LR_D], name="x")
    y = tf.placeholder(tf.float32, [n], name="y")
    w = tf.Variable(tf.zeros([LR_D, 1]), name="w")
    logits = tf.squeeze(tf.matmul(x, w), 1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    return x, y, [w], loss


def _mlp_graph(tf, params):
    x = tf.placeholder(tf.float32, [None, MLP_D], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    v = [tf.Variable(p, name=f"p{i}") for i, p in enumerate(params)]
    h1 = tf.nn.relu(tf.matmul(x, v[0]) + v[1])
    h2 = tf.nn.relu(tf.matmul(h1, v[2]) + v[3])
    out = tf.matmul(h2, v[4]) + v[5]
    loss = tf.reduce_mean(tf.square(out - y))
    return x, y, v, loss


def _op_counts(tf, loss, variables):
    """(forward ops: the loss and the ops it depends on, ops added by tf.gradients, gradients)."""
    graph = loss.graph
    seen, stack = set(), [loss.op]
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        stack.extend(t.op for t in op.inputs)
    before = len(graph.get_operations())
    grads = tf.gradients(loss, variables)
    return len(seen), len(graph.get_operations()) - before, grads


# ---- a) cheap gradient -------------------------------------------------------------------------
def _import_dflow():
    import dflow as tf
    import dflow.nn  # noqa: F401 - makes tf.nn available whether or not dflow's namespace has it

    return tf


def _session(tf, staged):
    """A threaded Session; staged=False turns off the compiler's stage splitting (a diagnostic: a
    reduction of an input over Options.stage_bytes otherwise ends a stage, and the next stage re-reads
    that input)."""
    import dataclasses

    sess = tf.Session(scheduler="threads")
    if not staged:
        sess._options = dataclasses.replace(sess._options, stage_bytes=0)
    return sess


def ratio_logreg_dflow(staged=True):
    tf = _import_dflow()
    x_da, y_da = _lr_dask()
    x, y, ws, loss = _logreg_graph(tf)
    n_fwd, n_grad, grads = _op_counts(tf, loss, ws)
    sess = _session(tf, staged)
    sess.run(tf.global_variables_initializer())
    feed = {x: x_da, y: y_da}
    out = _ratio_figures(lambda: sess.run(loss, feed), lambda: sess.run([loss, grads], feed),
                         {"ops_forward": n_fwd, "ops_gradient": n_grad})
    value, g = sess.run([loss, grads], feed)
    out["value"] = float(value) + float(abs(g[0]).sum())
    out["plan"] = _plan_summary(sess)
    return out


def _plan_summary(sess):
    """Tasks and stages of each Dask plan the session compiled (the diagnosis of a missed target)."""
    rows = []
    for p in sess._plans.values():
        if hasattr(p, "n_tasks") and p.n_tasks > 2:
            rows.append(f"{p.n_tasks} tasks, stages {[len(s.dsk) for s in p.stages] + [len(p.dsk)]}")
    return "; ".join(rows)


def _dask_logreg(x, y, w):
    """The hand-written dask.array loss and gradient of the logistic regression (lazy)."""
    import dask.array as da

    z = (x @ w)[:, 0]
    loss = da.mean(da.maximum(z, 0) - z * y + da.log1p(da.exp(-abs(z))))
    grad = x.T @ (1 / (1 + da.exp(-z)) - y)[:, None] / x.shape[0]
    return loss, grad


def ratio_logreg_dask():
    import dask
    import numpy as np

    x, y = _lr_dask()
    w = np.zeros((LR_D, 1), np.float32)

    def run_loss():
        return _dask_logreg(x, y, w)[0].compute(scheduler="threads")

    def run_both():
        return dask.compute(*_dask_logreg(x, y, w), scheduler="threads")

    out = _ratio_figures(run_loss, run_both)
    value, g = run_both()
    out["value"] = float(value) + float(abs(g).sum())
    return out


def ratio_logreg_tf1():
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    xv, yv = _lr_numpy()
    x, y, ws, loss = _logreg_graph(tf)
    n_fwd, n_grad, grads = _op_counts(tf, loss, ws)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    feed = {x: xv, y: yv}
    out = _ratio_figures(lambda: sess.run(loss, feed), lambda: sess.run([loss, grads], feed),
                         {"ops_forward": n_fwd, "ops_gradient": n_grad})
    value, g = sess.run([loss, grads], feed)
    out["value"] = float(value) + float(abs(g[0]).sum())
    return out


def ratio_mlp_dflow(staged=True):
    import dask.array as da

    tf = _import_dflow()
    xv, yv, params = _mlp_numpy()
    rows = MLP_N // MLP_CHUNKS
    x, y, vs, loss = _mlp_graph(tf, params)
    n_fwd, n_grad, grads = _op_counts(tf, loss, vs)
    sess = _session(tf, staged)
    sess.run(tf.global_variables_initializer())
    feed = {x: da.from_array(xv, chunks=(rows, MLP_D)), y: da.from_array(yv, chunks=(rows, 1))}
    out = _ratio_figures(lambda: sess.run(loss, feed), lambda: sess.run([loss, grads], feed),
                         {"ops_forward": n_fwd, "ops_gradient": n_grad}, repeat=MLP_REPEAT)
    value, g = sess.run([loss, grads], feed)
    out["value"] = float(value) + sum(float(abs(a).sum()) for a in g)
    out["plan"] = _plan_summary(sess)
    return out


def _dask_mlp(x, y, p, with_grad):
    """The hand-written dask.array forward (and backward) pass of the MLP (lazy)."""
    import dask.array as da

    z1 = x @ p[0] + p[1]
    h1 = da.maximum(z1, 0)
    z2 = h1 @ p[2] + p[3]
    h2 = da.maximum(z2, 0)
    out = h2 @ p[4] + p[5]
    loss = da.mean((out - y) ** 2)
    if not with_grad:
        return [loss]
    d_out = 2 * (out - y) / x.shape[0]
    d_z2 = (d_out @ p[4].T) * (z2 > 0)
    d_z1 = (d_z2 @ p[2].T) * (z1 > 0)
    return [loss, x.T @ d_z1, d_z1.sum(0), h1.T @ d_z2, d_z2.sum(0), h2.T @ d_out, d_out.sum(0)]


def ratio_mlp_dask():
    import dask
    import dask.array as da

    xv, yv, params = _mlp_numpy()
    rows = MLP_N // MLP_CHUNKS
    x, y = da.from_array(xv, chunks=(rows, MLP_D)), da.from_array(yv, chunks=(rows, 1))
    out = _ratio_figures(lambda: dask.compute(*_dask_mlp(x, y, params, False), scheduler="threads"),
                         lambda: dask.compute(*_dask_mlp(x, y, params, True), scheduler="threads"),
                         repeat=MLP_REPEAT)
    value, *g = dask.compute(*_dask_mlp(x, y, params, True), scheduler="threads")
    out["value"] = float(value) + sum(float(abs(a).sum()) for a in g)
    return out


def ratio_mlp_tf1():
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    xv, yv, params = _mlp_numpy()
    x, y, vs, loss = _mlp_graph(tf, params)
    n_fwd, n_grad, grads = _op_counts(tf, loss, vs)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    feed = {x: xv, y: yv}
    out = _ratio_figures(lambda: sess.run(loss, feed), lambda: sess.run([loss, grads], feed),
                         {"ops_forward": n_fwd, "ops_gradient": n_grad}, repeat=MLP_REPEAT)
    value, g = sess.run([loss, grads], feed)
    out["value"] = float(value) + sum(float(abs(a).sum()) for a in g)
    return out


# ---- b) full-batch gradient step -----------------------------------------------------------------
def prepare_zarr():
    """Writes the logistic-regression data as a Zarr group (x: 16 row chunks, y) at ZARR_DIR."""
    import zarr

    x, y = _lr_numpy()
    rows = LR_N // LR_CHUNKS
    g = zarr.open_group(str(ZARR_DIR), mode="w")
    g.create_array("x", shape=x.shape, chunks=(rows, LR_D), dtype=x.dtype)[...] = x
    g.create_array("y", shape=y.shape, chunks=(rows,), dtype=y.dtype)[...] = y
    return {"bytes": int(x.nbytes + y.nbytes)}


def _steps_figures(step, read_w):
    """Time of STEPS gradient steps (then the final w), after one untimed step that compiles."""
    first = _timed_once(step)

    def run():
        for _ in range(STEPS):
            step()
        return read_w()

    (t,), (t_min,) = _alternate([run])
    w = read_w()
    return {"steps": t, "steps_min": t_min, "first": first, "rows_per_s": LR_N * STEPS / t,
            "value": float(abs(w).sum())}


def step_dflow(source, staged=True):
    tf = _import_dflow()
    x_da, y_da = _lr_dask(source)
    x, y, (w,), loss = _logreg_graph(tf)
    train = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
    sess = _session(tf, staged)
    sess.run(tf.global_variables_initializer())
    feed = {x: x_da, y: y_da}
    out = _steps_figures(lambda: sess.run(train, feed), lambda: sess.run(w))
    out["plan"] = _plan_summary(sess)
    return out


def step_dask(source):
    import numpy as np

    x, y = _lr_dask(source)
    state = {"w": np.zeros((LR_D, 1), np.float32)}

    def step():
        g = _dask_logreg(x, y, state["w"])[1]
        state["w"] = state["w"] - LEARNING_RATE * g.compute(scheduler="threads")

    return _steps_figures(step, lambda: state["w"])


CASES = {
    "ratio:logreg:dflow": ratio_logreg_dflow, "ratio:logreg:dask": ratio_logreg_dask,
    "ratio:logreg:tf1": ratio_logreg_tf1, "ratio:logreg:dflow-unstaged": lambda: ratio_logreg_dflow(False),
    "ratio:mlp:dflow": ratio_mlp_dflow, "ratio:mlp:dask": ratio_mlp_dask, "ratio:mlp:tf1": ratio_mlp_tf1,
    "ratio:mlp:dflow-unstaged": lambda: ratio_mlp_dflow(False),
    "prepare:zarr": prepare_zarr,
    "step:memory:dflow": lambda: step_dflow("memory"), "step:memory:dask": lambda: step_dask("memory"),
    "step:zarr:dflow": lambda: step_dflow("zarr"), "step:zarr:dask": lambda: step_dask("zarr"),
    "step:memory:dflow-unstaged": lambda: step_dflow("memory", False),
    "step:zarr:dflow-unstaged": lambda: step_dflow("zarr", False),
}


# ---- parent: run every case, print tables with ratios and the targets ------------------------------

UNSTAGED = "dflow, stage_bytes=0 (diagnostic)"


def _run(name, python=None):
    r = run_case(__file__, name, python=python, timeout=1800)
    if "error" in r:
        print(f"  {name}: FAILED {r['error']}", file=sys.stderr)
    return r


def _rss(r):
    return f"{r['peak_rss_mb']:.0f}" if "peak_rss_mb" in r else r.get("error", "-")


def _target(report, what, ok):
    report(f"  target {what}: {'met' if ok else 'MISSED'}" if ok is not None
           else f"  target {what}: not measured")


def _check_values(report, results, ref="dask.array", rtol=1e-3):
    want = results.get(ref, {}).get("value")
    for name, r in results.items():
        v = r.get("value")
        if want is not None and v is not None and abs(v - want) > rtol * max(1.0, abs(want)):
            report(f"  WRONG RESULT: {name} {v!r} vs {ref} {want!r}")


def bench_ratio(report, model, title, tf_python):
    results = {"dflow": _run(f"ratio:{model}:dflow"), "dask.array": _run(f"ratio:{model}:dask"),
               UNSTAGED: _run(f"ratio:{model}:dflow-unstaged")}
    if tf_python:
        results["TF1"] = _run(f"ratio:{model}:tf1", tf_python)
    rows = []
    for label, r in results.items():
        ops = f"{r['ops_forward']} → +{r['ops_gradient']}" if "ops_forward" in r else "-"
        rows.append([label, fmt_time(r.get("loss")), fmt_time(r.get("both")), fmt_ratio(r.get("both"), r.get("loss")),
                     fmt_ratio(r.get("both"), results["dask.array"].get("both")), ops, _rss(r)])
    report("")
    report(title)
    report(table(["peer", "loss", "loss + gradient", "ratio", "(loss+grad) ÷ dask", "ops fwd → +grad",
                  "peak RSS MiB"], rows))
    _check_values(report, results)
    d = results["dflow"]
    for label in ("dflow", UNSTAGED):
        if results[label].get("plan"):
            report(f"  {label} plans (init; loss; loss + gradient): {results[label]['plan']}")
    if "both" in d:
        ratio = d["both"] / d["loss"]
        _target(report, f"dflow (loss + gradient) ÷ loss ≤ 3 (got {ratio:.2f})", ratio <= 3)
        ops = d["ops_gradient"] / d["ops_forward"]
        _target(report, f"gradient ops ≤ 5× forward ops (got {d['ops_gradient']} ÷ {d['ops_forward']} = "
                f"{ops:.2f}×)", ops <= 5)
    else:
        _target(report, "dflow cheap-gradient ratio", None)


def bench_step(report):
    prep = _run("prepare:zarr")
    results = {}
    for source in ("memory", "zarr"):
        if source == "zarr" and "error" in prep:
            continue
        for peer, label in (("dflow", "dflow"), ("dask", "dask.array"), ("dflow-unstaged", UNSTAGED)):
            results[(source, label)] = _run(f"step:{source}:{peer}")
    shutil.rmtree(ZARR_DIR, ignore_errors=True)
    rows = []
    for (source, label), r in results.items():
        base = results.get((source, "dask.array"), {})
        rows.append([source, label, fmt_time(r.get("first")), fmt_time(r.get("steps")),
                     f"{r['rows_per_s'] / 1e6:.1f} M" if "rows_per_s" in r else "-",
                     fmt_ratio(r.get("rows_per_s"), base.get("rows_per_s")), _rss(r)])
    report("")
    report(f"b) full-batch GD step, logistic regression on X {LR_N:,}×{LR_D} float32 in {LR_CHUNKS} row chunks "
           f"({STEPS} steps, then w fetched; dflow: GradientDescentOptimizer({LEARNING_RATE}).minimize, "
           "dask.array: w - lr·Xᵀ(σ(Xw) − y)/n)")
    report(table(["X source", "peer", "first step", f"{STEPS} steps (median)", "rows/s",
                  "throughput ÷ dask", "peak RSS MiB"], rows))
    for source in ("memory", "zarr"):
        sub = {label: r for (s, label), r in results.items() if s == source}
        _check_values(report, sub)
        d, k = sub.get("dflow", {}), sub.get("dask.array", {})
        for label in ("dflow", UNSTAGED):
            if sub.get(label, {}).get("plan"):
                report(f"  {label} plans, X {source} (init; step; read w): {sub[label]['plan']}")
        if "rows_per_s" in d and "rows_per_s" in k:
            r = d["rows_per_s"] / k["rows_per_s"]
            _target(report, f"dflow ≥ 0.8× dask.array throughput, X {source} (got {r:.2f}×)", r >= 0.8)
        elif sub:
            _target(report, f"dflow ≥ 0.8× dask.array throughput, X {source}", None)


def main(argv):
    if "--case" in argv:
        case_main(CASES, argv)
        return 0
    tf_python = find_tf_python()
    for var in BLAS_THREAD_VARS:  # inherited by every case's interpreter
        os.environ.setdefault(var, "1")
    report = Report()
    report(machine_line())
    report("BLAS threads: " + ", ".join(f"{v}={os.environ[v]}" for v in BLAS_THREAD_VARS)
           + " (the scheduler's threads are the parallelism)")
    report(f"TF1 peer: {tf_python or 'not measured (set TF_PYTHON to an interpreter with tensorflow)'}")
    report("times are medians of alternating runs, plan cached (the first, compiling run is excluded)")
    bench_ratio(report, "logreg", f"a1) cheap gradient, logistic regression: X {LR_N:,}×{LR_D} float32 in "
                f"{LR_CHUNKS} row chunks (in-memory dask array; TF1: the numpy array)", tf_python)
    bench_ratio(report, "mlp", f"a2) cheap gradient, MLP {MLP_D}→{MLP_H}→{MLP_H}→1 (relu, MSE): X {MLP_N:,}×{MLP_D} "
                f"float32 in {MLP_CHUNKS} row chunks, gradients of all 6 variables", tf_python)
    bench_step(report)
    if "--record" in argv:
        record_run("bench_autodiff (issue #4: cheap gradient, full-batch GD step on chunked data)",
                   "bench_autodiff.py", argv, report.text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
