"""The issue-13 benchmark: a LeNet-style CNN on 28×28×1 float32, dflow vs TF1 vs numpy.

    python benchmarks/bench_layers.py [--repeat 7] [--blas-threads N] [--zarr-gb 2 [--zarr-chunk 64]
                                      [--zarr-batch 2048] [--zarr-only]] [--record]          # TF_PYTHON=... adds TF1

Model: conv 5×5×32 SAME + bias, relu, max-pool 2; conv 5×5×64 SAME + bias, relu, max-pool 2;
dense 1024 relu; dense 10; sparse softmax cross-entropy; GradientDescent (lr 0.01). Every peer
starts from the same weights (numpy, seeded) and the same batch.

a) training step, batch 128 (numpy feeds, plan cached): dflow's default Session (the path users
   take), TF1 (`tensorflow.compat.v1`, graph mode, oneDNN). Target: dflow ≥ 0.5× TF1's throughput.
b) inference, batch 1024 (logits fetched): dflow, TF1 and a hand-written numpy forward pass (im2col
   with sliding_window_view + one matmul per conv, reshape-max pooling, float32 throughout).
c) where dflow's time goes: a cProfile of training steps on the sync scheduler (tasks then run in
   this thread), summed per kernel function (inclusive time, ms per step).
d) `--zarr-gb G`: one epoch over an image set of G GB written as Zarr (chunks of `--zarr-chunk`
   images along N, default 64) by a separate process; steps of `--zarr-batch` images (default
   2048), each fed as a dask slice of the Zarr array to the default Session, so each step's
   convolutions run blockwise over the chunks and the filter gradients are tree sums. Peak RSS is
   the child's own ru_maxrss (harness.case_main); RSS after each step shows whether anything
   accumulates between steps. Target: ≤ 512 MB. A task's memory grows with the chunk (a 64-image
   chunk's first conv output is 6.4 MB, its im2col columns 5 MB), the tasks in flight with the
   step batch: on a loaded 2-core machine 0.1 GB (31,887 images, 16 steps) peaked at 405 MiB with
   64-image chunks and 530 MiB with 128. The epoch is compute-bound: 2 GB is 637k images, 20 minutes
   to 2 hours at the 90-560 images/s seen here (load average 4-10 on 2 cores).

Every case runs in its own interpreter (benchmarks/harness.py). Module-level imports are standard
library only, so the TF interpreter can load this file. The default Session runs a) and b) in this
process (numpy feeds, every tensor under 64 MiB), so dflow, numpy and TF1 there keep the caller's
BLAS environment. The Dask peers (dflow-dask, the profile on the sync scheduler, the Zarr epoch)
run one BLAS thread per task (`--blas-threads N` overrides): with OpenBLAS's own threads under Dask's
two worker threads the 2 cores were oversubscribed, and on a shared machine a single GEMM of the
filter gradient then took 0.5-1.9 s instead of ~40 ms.
"""

from __future__ import annotations

import os
import shutil
import subprocess
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
    rss_mb,
    run_case,
    table,
    time_calls,
)
from harness import tf_python as find_tf_python  # noqa: E402

TRAIN_BATCH, INFER_BATCH = 128, 1024
LR = 0.01
THROUGHPUT_TARGET = 0.5  # dflow ≥ 0.5× TF1's images/s
RSS_TARGET_MB = 512
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _env(name, default, cast=int):
    return cast(os.environ.get(name, default))


# ---- the model, shared by every peer ------------------------------------------------------------


def weights():
    """The initial weights: truncated-normal-like draws, seeded (numpy, so every peer starts equal)."""
    import numpy as np

    rng = np.random.default_rng(0)

    def draw(shape, std):
        return np.clip(rng.standard_normal(shape), -2, 2).astype(np.float32) * np.float32(std)

    return {"W1": draw((5, 5, 1, 32), 0.1), "b1": np.full(32, 0.1, np.float32),
            "W2": draw((5, 5, 32, 64), 0.1), "b2": np.full(64, 0.1, np.float32),
            "W3": draw((7 * 7 * 64, 1024), 0.02), "b3": np.full(1024, 0.1, np.float32),
            "W4": draw((1024, 10), 0.05), "b4": np.zeros(10, np.float32)}


def batch(n, seed=1):
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng.random((n, 28, 28, 1), dtype=np.float32), rng.integers(0, 10, n).astype(np.int64)


def build(tf, x, y):
    """The LeNet graph in TF1's API (dflow and TF1 alike): (logits, loss, train op)."""
    v = {k: tf.Variable(val, name=k) for k, val in weights().items()}
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, v["W1"], [1, 1, 1, 1], "SAME"), v["b1"]))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, v["W2"], [1, 1, 1, 1], "SAME"), v["b2"]))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 7 * 7 * 64]), v["W3"]) + v["b3"])
    logits = tf.matmul(h, v["W4"]) + v["b4"]
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    return logits, loss, tf.train.GradientDescentOptimizer(LR).minimize(loss)


def _graph(tf):
    x = tf.placeholder(tf.float32, [None, 28, 28, 1], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    return (x, y) + build(tf, x, y)


def _train_case(tf, sess_kwargs=None):
    x, y, logits, loss, train = _graph(tf)
    sess = tf.Session(**(sess_kwargs or {}))
    sess.run(tf.global_variables_initializer())
    xv, yv = batch(TRAIN_BATCH)
    first = float(sess.run(loss, {x: xv, y: yv}))
    t0 = time.perf_counter()
    sess.run(train, {x: xv, y: yv})  # compiles the training plan
    compile_s = time.perf_counter() - t0
    t = time_calls(lambda: sess.run(train, {x: xv, y: yv}), repeat=_env("BENCH_REPEAT", 7), min_repeat_s=0)
    return {"per_step": t["median"], "min": t["min"], "first_step_s": compile_s, "loss0": first}


def _infer_case(tf, sess_kwargs=None):
    x, _, logits, _, _ = _graph(tf)
    sess = tf.Session(**(sess_kwargs or {}))
    sess.run(tf.global_variables_initializer())
    xv, _ = batch(INFER_BATCH, seed=2)
    out = sess.run(logits, {x: xv})
    t = time_calls(lambda: sess.run(logits, {x: xv}), repeat=_env("BENCH_REPEAT", 7), min_repeat_s=0)
    return {"per_step": t["median"], "min": t["min"], "checksum": float(abs(out).sum())}


def dflow_train():
    import dflow as tf

    return _train_case(tf)


def dflow_infer():
    import dflow as tf

    return _infer_case(tf)


DASK = {"scheduler": "threads"}  # every plan through Dask's worker threads (one BLAS thread per task)


def dflow_dask_train():
    import dflow as tf

    return _train_case(tf, DASK)


def dflow_dask_infer():
    import dflow as tf

    return _infer_case(tf, DASK)


def _tf1():
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    return tf


def tf1_train():
    return _train_case(_tf1())


def tf1_infer():
    return _infer_case(_tf1())


# ---- hand-written numpy forward pass -----------------------------------------------------------------


def numpy_infer():
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view

    w = weights()

    def conv_same(x, k, b):  # 5×5 SAME, stride 1: im2col (a copy of the windows) and one matmul
        n, h, wd, c = x.shape
        xp = np.pad(x, [(0, 0), (2, 2), (2, 2), (0, 0)])
        cols = sliding_window_view(xp, (5, 5), axis=(1, 2))  # [n, h, w, c, 5, 5]
        cols = cols.transpose(0, 1, 2, 4, 5, 3).reshape(n * h * wd, 25 * c)
        return np.maximum(cols @ k.reshape(25 * c, -1) + b, 0).reshape(n, h, wd, -1)

    def pool(x):  # 2×2, stride 2 (even sizes: SAME = VALID)
        n, h, wd, c = x.shape
        return x.reshape(n, h // 2, 2, wd // 2, 2, c).max(axis=(2, 4))

    def forward(x):
        h = pool(conv_same(x, w["W1"], w["b1"]))
        h = pool(conv_same(h, w["W2"], w["b2"]))
        h = np.maximum(h.reshape(len(x), -1) @ w["W3"] + w["b3"], 0)
        return h @ w["W4"] + w["b4"]

    xv, _ = batch(INFER_BATCH, seed=2)
    out = forward(xv)
    t = time_calls(lambda: forward(xv), repeat=_env("BENCH_REPEAT", 7), min_repeat_s=0)
    return {"per_step": t["median"], "min": t["min"], "checksum": float(abs(out).sum())}


# ---- where dflow's time goes ------------------------------------------------------------------------


def dflow_profile():
    """Training steps on the sync scheduler under cProfile; inclusive ms per step of each kernel
    function (dflow/kernels/*: the ops' eager kernels and their helpers) and of BLAS matmul."""
    import cProfile
    import pstats

    import dflow as tf

    x, y, logits, loss, train = _graph(tf)
    sess = tf.Session(scheduler="sync")
    sess.run(tf.global_variables_initializer())
    xv, yv = batch(TRAIN_BATCH)
    sess.run(train, {x: xv, y: yv})
    steps = 3
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for _ in range(steps):
        sess.run(train, {x: xv, y: yv})
    prof.disable()
    total = (time.perf_counter() - t0) / steps
    rows = []
    for (path, line, fn), (_, ncalls, tottime, cumtime, _) in pstats.Stats(prof).stats.items():
        if "dflow/kernels/" in path or fn in ("matmul", "_matmul"):
            rows.append([cumtime / steps, tottime / steps, ncalls // steps, f"{Path(path).name}:{line} {fn}"])
    rows.sort(reverse=True)
    return {"per_step": total, "top": rows[:_env("BENCH_PROFILE_ROWS", 14)]}


# ---- one epoch over a Zarr image set -------------------------------------------------------------------


def write_zarr_set(directory, gb, chunk):
    """X [n, 28, 28, 1] float32 and y [n] int64 under `directory`, chunked along N, chunk by chunk."""
    import zarr

    n = int(gb * 1e9) // (28 * 28 * 4)
    X = zarr.create_array(os.path.join(directory, "X.zarr"), shape=(n, 28, 28, 1), chunks=(chunk, 28, 28, 1),
                          dtype="float32", overwrite=True)
    Y = zarr.create_array(os.path.join(directory, "y.zarr"), shape=(n,), chunks=(chunk,), dtype="int64",
                          overwrite=True)
    for i in range(0, n, chunk):
        xb, yb = batch(min(chunk, n - i), seed=i)
        X[i:i + len(xb)] = xb
        Y[i:i + len(yb)] = yb
    return n


def dflow_zarr():
    import dask.array as da
    import numpy as np

    import dflow as tf

    directory, step_batch = os.environ["BENCH_ZARR_DIR"], _env("BENCH_ZARR_BATCH", 2048)
    X, Y = da.from_zarr(os.path.join(directory, "X.zarr")), da.from_zarr(os.path.join(directory, "y.zarr"))
    x, y, logits, loss, train = _graph(tf)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    losses, rss = [], []
    t0 = time.perf_counter()
    for i in range(0, X.shape[0], step_batch):
        _, value = sess.run([train, loss], {x: X[i:i + step_batch], y: Y[i:i + step_batch]})
        losses.append(float(value))
        rss.append(rss_mb())  # resident after each step: flat if nothing accumulates between steps
    return {"epoch_s": time.perf_counter() - t0, "images": int(X.shape[0]), "steps": len(losses),
            "loss_first": losses[0], "loss_last": losses[-1], "finite": bool(np.all(np.isfinite(losses))),
            "rss_first_step": rss[0], "rss_last_step": rss[-1], "rss_max_between_steps": max(rss)}


CASES = {"dflow:train": dflow_train, "dflow:infer": dflow_infer, "numpy:infer": numpy_infer,
         "dflow:profile": dflow_profile,
         "dflow-dask:train": dflow_dask_train, "dflow-dask:infer": dflow_dask_infer, "dflow:zarr": dflow_zarr, "tf1:train": tf1_train, "tf1:infer": tf1_infer}


# ---- the parent --------------------------------------------------------------------------------------


def _run(name, python=None):
    r = run_case(__file__, name, python=python, timeout=_env("BENCH_TIMEOUT", 7200))
    if "error" in r:
        print(f"  {name}: FAILED {r['error']}", file=sys.stderr)
    return r


def _throughput(r, n):
    return n / r["per_step"] if "per_step" in r else None


def _rows(results, names, n):
    base = _throughput(results[names[0]], n)
    rows = []
    for name in names:
        r = results.get(name)
        if r is None:
            continue
        ips = _throughput(r, n)
        rows.append([name.split(":")[0], fmt_time(r.get("per_step")), fmt_time(r.get("min")),
                     f"{ips:,.0f}" if ips else "-", fmt_ratio(ips, base), f"{r.get('peak_rss_mb', 0):.0f}",
                     r.get("error", "")])
    return rows


def _flag(argv, name, default, cast=float):
    return cast(argv[argv.index(name) + 1]) if name in argv else default


def main(argv):
    report = Report()
    report(machine_line())
    os.environ["BENCH_REPEAT"] = str(int(_flag(argv, "--repeat", 7)))
    user_env = {v: os.environ.get(v) for v in BLAS_THREAD_VARS}
    for v in BLAS_THREAD_VARS:  # inherited by the dflow and numpy interpreters (as bench_autodiff)
        os.environ[v] = str(int(_flag(argv, "--blas-threads", 0))) if "--blas-threads" in argv else \
            os.environ.get(v, "1")
    report("BLAS threads of the Dask peers (dflow-dask, profile, Zarr epoch): "
           + ", ".join(f"{v}={os.environ[v]}" for v in BLAS_THREAD_VARS)
           + "; the in-process peers (dflow's default Session, numpy, TF1) keep the caller's environment ("
           + (", ".join(f"{v}={val}" for v, val in user_env.items() if val is not None) or "unset") + ")")
    tf_python = find_tf_python()
    report(f"TF1 peer: {tf_python or 'none (set TF_PYTHON)'}")
    results = {}
    if "--zarr-only" in argv:  # d) alone (a long epoch; a) to c) are recorded by a run of their own)
        return _zarr_epoch(argv, report)
    for name in ("dflow-dask:train", "dflow-dask:infer", "dflow:profile"):
        results[name] = _run(name)
    dflow_env = {v: os.environ.pop(v) for v in BLAS_THREAD_VARS}
    os.environ.update({v: val for v, val in user_env.items() if val is not None})
    # the default Session runs these plans in this process (numpy feeds, tensors under 64 MiB): BLAS keeps
    # the caller's environment, as TF1 and the numpy peer do
    for name in ("dflow:train", "dflow:infer", "numpy:infer"):
        results[name] = _run(name)
    if tf_python:
        for name in ("tf1:train", "tf1:infer"):
            results[name] = _run(name, tf_python)
    os.environ.update(dflow_env)
    met = lambda ok: "met" if ok else "MISSED"

    report(f"\na) training step, batch {TRAIN_BATCH} (LeNet: conv5×5×32, pool, conv5×5×64, pool, dense 1024, "
           "dense 10; GradientDescent), numpy feeds, plan cached")
    report(table(["peer", "per step (median)", "min", "images/s", "÷ dflow", "peak RSS MiB", "error"],
                 _rows(results, ["dflow:train", "dflow-dask:train", "tf1:train"], TRAIN_BATCH)))
    report("  dflow: the default Session (the plan runs in this process, BLAS with its own threads); dflow-dask: "
           "Session(scheduler='threads'), the plan on Dask's worker threads with one BLAS thread per task")
    d, t = results["dflow:train"], results.get("tf1:train", {})
    if "loss0" in d and "loss0" in t:
        report(f"  loss before the first step: dflow {d['loss0']:.6f}, TF1 {t['loss0']:.6f}")
    if "first_step_s" in d:
        report(f"  dflow first step (compiles the plan): {fmt_time(d['first_step_s'])}")
    if "per_step" in d and "per_step" in t:
        ratio = t["per_step"] / d["per_step"]
        report(f"  target dflow ≥ {THROUGHPUT_TARGET}× TF1's training throughput (got {ratio:.2f}×): "
               f"{met(ratio >= THROUGHPUT_TARGET)}")


    report(f"\nb) inference, batch {INFER_BATCH} (logits fetched)")
    report(table(["peer", "per batch (median)", "min", "images/s", "÷ dflow", "peak RSS MiB", "error"],
                 _rows(results, ["dflow:infer", "dflow-dask:infer", "tf1:infer", "numpy:infer"], INFER_BATCH)))
    sums = {k: results[k].get("checksum") for k in ("dflow:infer", "tf1:infer", "numpy:infer") if k in results}
    report("  sum |logits|: " + ", ".join(f"{k.split(':')[0]} {v:.3f}" for k, v in sums.items() if v is not None))
    d, t = results["dflow:infer"], results.get("tf1:infer", {})
    if "per_step" in d and "per_step" in t:
        ratio = t["per_step"] / d["per_step"]
        report(f"  target dflow ≥ {THROUGHPUT_TARGET}× TF1's inference throughput (got {ratio:.2f}×): "
               f"{met(ratio >= THROUGHPUT_TARGET)}")


    p = results["dflow:profile"]
    if "top" in p:
        report(f"\nc) where a dflow training step goes (sync scheduler, cProfile: {fmt_time(p['per_step'])} per step "
               "with the profiler's overhead); inclusive ms per step")
        report(table(["function", "inclusive ms", "own ms", "calls"],
                     [[r[3], f"{r[0] * 1e3:.1f}", f"{r[1] * 1e3:.1f}", r[2]] for r in p["top"]]))

    _zarr_epoch(argv, report)


def _zarr_epoch(argv, report):
    met = lambda ok: "met" if ok else "MISSED"
    gb = _flag(argv, "--zarr-gb", None)
    if gb:
        chunk, step_batch = int(_flag(argv, "--zarr-chunk", 64)), int(_flag(argv, "--zarr-batch", 2048))
        directory = tempfile.mkdtemp(prefix="dflow-bench-layers-")
        try:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, __file__, "--write-zarr", directory, str(gb), str(chunk)], check=True)
            written = time.perf_counter() - t0
            os.environ.update(BENCH_ZARR_DIR=directory, BENCH_ZARR_BATCH=str(step_batch))
            z = _run("dflow:zarr")
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        report(f"\nd) one training epoch over a {gb:g} GB Zarr image set (chunks of {chunk} images along N, written in "
               f"{written:.0f} s by another process), steps of {step_batch} images fed as dask slices, default Session")
        if "epoch_s" in z:
            report(table(["images", "steps", "epoch", "images/s", "loss first → last step",
                          "RSS after first → last step MiB", "peak RSS MiB"],
                         [[f"{z['images']:,}", z["steps"], fmt_time(z["epoch_s"]), f"{z['images'] / z['epoch_s']:,.0f}",
                           f"{z['loss_first']:.4f} → {z['loss_last']:.4f}",
                           f"{z['rss_first_step']:.0f} → {z['rss_last_step']:.0f}", f"{z['peak_rss_mb']:.0f}"]]))
            mb = z["peak_rss_mb"] * 1.048576
            report(f"  target peak RSS ≤ {RSS_TARGET_MB} MB (got {mb:.0f} MB): {met(mb <= RSS_TARGET_MB)}")
        else:
            report(f"  FAILED: {z.get('error')}")
    if "--record" in argv:
        record_run("bench_layers (issue #13: LeNet CNN, convolutions)", "bench_layers.py", argv, report.text)


if __name__ == "__main__":
    if "--case" in sys.argv:
        case_main(CASES, sys.argv)
    elif "--write-zarr" in sys.argv:
        i = sys.argv.index("--write-zarr")
        write_zarr_set(sys.argv[i + 1], float(sys.argv[i + 2]), int(sys.argv[i + 3]))
    else:
        main(sys.argv[1:])
