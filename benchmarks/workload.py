"""The issue-6 workload: standardize a Zarr array larger than memory, then train logistic regression.

    python -m benchmarks.workload --engine dflow --gb 0.5 --dir DIR [--as-limit-gb G]

X is an n×d float32 Zarr array (d = 1000, row chunks of 25,000 rows), y its n×1 float32 labels.
1. Standardize: Z = (X − mean(X, 0)) / std(X, 0), written to Zarr.
2. Train: K = 3 full-batch gradient-descent steps (learning rate 0.5) of logistic regression on Z
   (mean sigmoid cross-entropy), from w = 0, b = 0, reading Z back from Zarr.

`--dir` holds the data (generated on first use, reused while its parameters match); each run
writes its Z into a temporary folder under it and removes it. The engines: dflow (TF1 style,
threaded scheduler), dask.array by hand (threads), Cubed (if installed) and numpy (all in memory).
The command prints one JSON line: engine, size, seconds (total, standardize, train), peak RSS
(this process, measured by the OS), the per-step losses (each before its step's update, as TF1's
`sess.run([train, loss])`), and the final w and b.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

D = 1000
CHUNK_ROWS = 25_000
STEPS = 3
LEARNING_RATE = 0.5
ENGINES = ("dflow", "dask", "cubed", "numpy")
_META = "workload.json"


# ---- data ------------------------------------------------------------------------------------
def rows_for(gb, d=D):
    """Rows n of an n×d float32 array of `gb` GB (10^9 bytes): 2 GB → 500,000 at d = 1000."""
    from dflow.demo import rows_for as rows

    return rows(gb, d)


def generate(data_dir, gb, d=D, chunk_rows=CHUNK_ROWS, seed=0, workers=2):
    """Writes X.zarr and y.zarr under `data_dir` (dflow.demo.write_dataset: the demo's data).

    Reuses them when `data_dir/workload.json` records the same parameters. Returns that record.
    """
    from dflow.demo import write_dataset

    data_dir = Path(data_dir)
    n = rows_for(gb, d)
    chunk_rows = min(chunk_rows, n)
    meta = {"n": n, "d": d, "chunk_rows": chunk_rows, "seed": seed}
    if is_generated(data_dir, meta):
        return meta
    meta_path = data_dir / _META
    data_dir.mkdir(parents=True, exist_ok=True)
    meta_path.unlink(missing_ok=True)
    write_dataset(data_dir, n, d, chunk_rows, seed=seed, workers=workers)
    meta_path.write_text(json.dumps(meta))
    return meta


def is_generated(data_dir, meta):
    """Whether `data_dir` holds data generated with the parameters `meta` (n, d, chunk_rows, seed)."""
    meta_path = Path(data_dir) / _META
    return meta_path.exists() and json.loads(meta_path.read_text()) == meta


def _paths(data_dir):
    return str(Path(data_dir) / "X.zarr"), str(Path(data_dir) / "y.zarr")


# ---- engines: each returns {"standardize_s", "train_s", "losses", "w", "b"} plus extras ----------
def run_dflow(data_dir, out_dir, memory_budget=None, scheduler="threads", device=None):
    """The workload written as a TF1 program with `import dflow as tf` (threaded scheduler, or
    `scheduler`: e.g. a distributed Client, as bench_cluster.py runs it); `device` ("/gpu:0", as
    bench_gpu.py runs it): both graphs built under `tf.device(device)`."""
    import contextlib
    import inspect

    import dflow as tf

    x_path, y_path = _paths(data_dir)
    z_path = os.path.join(out_dir, "Z.zarr")
    session_kw = {"scheduler": scheduler}
    if memory_budget is not None and "memory_budget" in inspect.signature(tf.Session).parameters:
        session_kw["memory_budget"] = memory_budget
    info = {"session": dict(session_kw)}

    placed = (lambda: tf.device(device)) if device else contextlib.nullcontext
    t0 = time.perf_counter()
    with tf.Graph().as_default(), placed():
        X = tf.io.read_zarr(x_path)
        mean = tf.reduce_mean(X, 0)
        std = tf.sqrt(tf.reduce_mean(tf.square(X - mean), 0))
        Z = (X - mean) / std
        write = tf.io.write_zarr(Z, z_path, overwrite=True)
        with tf.Session(**session_kw) as sess:
            sess.run(write)
            info["standardize_plans"] = _plan_summary(sess)
    t1, rss1 = time.perf_counter(), peak_rss_mb()

    with tf.Graph().as_default(), placed():
        Zr = tf.io.read_zarr(z_path)
        y = tf.io.read_zarr(y_path)
        d = Zr.shape[1]
        w = tf.Variable(tf.zeros([d, 1]), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        logits = tf.matmul(Zr, w) + b
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
        losses = []
        with tf.Session(**session_kw) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(STEPS):
                _, value = sess.run([train, loss])
                losses.append(float(value))
            w_value, b_value = sess.run([w, b])
            info["train_plans"] = _plan_summary(sess)
    t2 = time.perf_counter()
    return {"standardize_s": t1 - t0, "standardize_rss_mb": rss1, "train_s": t2 - t1, "losses": losses,
            "w": w_value.ravel().tolist(), "b": float(b_value[0]), "dflow": info}


def _plan_summary(sess):
    """Per cached plan: its kind, task count and the number of scheduler calls (stages + final)."""
    out = []
    for plan in getattr(sess, "_plans", {}).values():
        out.append({"kind": getattr(plan, "kind", type(plan).__name__),
                    "n_tasks": getattr(plan, "n_tasks", None),
                    "stages": len(getattr(plan, "stages", ()))})
    return out


def run_dask(data_dir, out_dir):
    """The workload by hand in dask.array on the threaded scheduler (the issue's baseline)."""
    import dask
    import dask.array as da
    import numpy as np

    x_path, y_path = _paths(data_dir)
    z_path = os.path.join(out_dir, "Z.zarr")
    with dask.config.set(scheduler="threads"):
        t0 = time.perf_counter()
        X = da.from_zarr(x_path)
        Z = (X - X.mean(axis=0)) / X.std(axis=0)
        da.to_zarr(Z, z_path, overwrite=True)
        t1, rss1 = time.perf_counter(), peak_rss_mb()

        Zr = da.from_zarr(z_path)
        y = da.from_zarr(y_path)
        n, d = Zr.shape
        w = np.zeros((d, 1), np.float32)
        b = np.zeros((1,), np.float32)
        losses = []
        for _ in range(STEPS):
            logits = Zr @ w + b
            loss = da.mean(da.maximum(logits, 0) - logits * y + da.log1p(da.exp(-abs(logits))))
            err = (1 / (1 + da.exp(-logits)) - y) / np.float32(n)
            loss_v, gw, gb = da.compute(loss, Zr.T @ err, err.sum(axis=0))
            losses.append(float(loss_v))
            w = w - np.float32(LEARNING_RATE) * gw
            b = b - np.float32(LEARNING_RATE) * gb
        t2 = time.perf_counter()
    return {"standardize_s": t1 - t0, "standardize_rss_mb": rss1, "train_s": t2 - t1, "losses": losses,
            "w": np.ravel(w).tolist(), "b": float(b[0])}


def run_cubed(data_dir, out_dir, allowed_mem="2GB"):
    """The workload in Cubed (bounded memory by design), threads executor, `allowed_mem` per task."""
    import cubed
    import cubed.array_api as xp
    import numpy as np

    x_path, y_path = _paths(data_dir)
    z_path = os.path.join(out_dir, "Z.zarr")
    spec = cubed.Spec(work_dir=os.path.join(out_dir, "cubed-work"), allowed_mem=allowed_mem,
                      executor_name="threads")
    t0 = time.perf_counter()
    X = cubed.from_zarr(x_path, spec=spec)
    Z = (X - xp.mean(X, axis=0)) / xp.std(X, axis=0)
    cubed.to_zarr(Z, z_path)
    t1, rss1 = time.perf_counter(), peak_rss_mb()

    Zr = cubed.from_zarr(z_path, spec=spec)
    y = cubed.from_zarr(y_path, spec=spec)
    n, d = Zr.shape
    w = np.zeros((d, 1), np.float32)
    b = np.zeros((1,), np.float32)
    losses = []
    for _ in range(STEPS):
        wc = cubed.from_array(w, spec=spec)
        logits = xp.matmul(Zr, wc) + float(b[0])
        loss = xp.mean(xp.maximum(logits, 0.0) - logits * y + xp.log1p(xp.exp(-xp.abs(logits))))
        err = (1 / (1 + xp.exp(-logits)) - y) / float(n)
        loss_v, gw, gb = cubed.compute(loss, xp.matmul(xp.matrix_transpose(Zr), err), xp.sum(err))
        losses.append(float(loss_v))
        w = (w - np.float32(LEARNING_RATE) * gw).astype(np.float32)
        b = (b - np.float32(LEARNING_RATE) * gb).astype(np.float32)
    t2 = time.perf_counter()
    return {"standardize_s": t1 - t0, "standardize_rss_mb": rss1, "train_s": t2 - t1, "losses": losses,
            "w": np.ravel(w).tolist(), "b": float(b[0])}


def run_numpy(data_dir, out_dir):
    """The workload in memory with numpy: X is loaded whole and standardized in place."""
    import numpy as np
    import zarr

    x_path, y_path = _paths(data_dir)
    t0 = time.perf_counter()
    X = zarr.open_array(x_path, mode="r")[...]
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    X -= mean
    X /= std
    zarr.create_array(os.path.join(out_dir, "Z.zarr"), data=X, chunks=zarr.open_array(x_path).chunks)
    t1, rss1 = time.perf_counter(), peak_rss_mb()

    y = zarr.open_array(y_path, mode="r")[...]
    n, d = X.shape
    w = np.zeros((d, 1), np.float32)
    b = np.zeros((1,), np.float32)
    losses = []
    for _ in range(STEPS):
        logits = X @ w + b
        losses.append(float(np.mean(np.maximum(logits, 0) - logits * y + np.log1p(np.exp(-np.abs(logits))))))
        err = (1 / (1 + np.exp(-logits)) - y) / np.float32(n)
        w = w - np.float32(LEARNING_RATE) * (X.T @ err)
        b = b - np.float32(LEARNING_RATE) * err.sum(axis=0)
    t2 = time.perf_counter()
    return {"standardize_s": t1 - t0, "standardize_rss_mb": rss1, "train_s": t2 - t1, "losses": losses,
            "w": np.ravel(w).tolist(), "b": float(b[0])}


RUNNERS = {"dflow": run_dflow, "dask": run_dask, "cubed": run_cubed, "numpy": run_numpy}


def peak_rss_mb():
    """This process's peak resident set size in MiB, as the OS counts it (Linux: KiB)."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / (1 << 20) if sys.platform == "darwin" else kb / 1024


def run_engine(engine, data_dir, *, memory_budget=None, allowed_mem="2GB", workdir=None):
    """Runs one engine on the data in `data_dir` (already generated); returns its figures."""
    meta = json.loads((Path(data_dir) / _META).read_text())
    kwargs = {}
    if engine == "dflow" and memory_budget is not None:
        kwargs["memory_budget"] = memory_budget
    if engine == "cubed":
        kwargs["allowed_mem"] = allowed_mem
    out_dir = tempfile.mkdtemp(prefix=f"out-{engine}-", dir=workdir or data_dir)
    try:
        figures = RUNNERS[engine](data_dir, out_dir, **kwargs)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    figures["time_s"] = figures["standardize_s"] + figures["train_s"]
    return {"engine": engine, "n": meta["n"], "d": meta["d"], "gb": meta["n"] * meta["d"] * 4 / 1e9,
            **figures}


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.workload", description=__doc__.splitlines()[0])
    p.add_argument("--engine", choices=ENGINES, required=True)
    p.add_argument("--gb", type=float, default=0.5, help="size of X in GB (default 0.5)")
    p.add_argument("--dir", required=True, help="data folder (X.zarr, y.zarr; generated when missing)")
    p.add_argument("--d", type=int, default=D, help=f"columns (default {D})")
    p.add_argument("--chunk-rows", type=int, default=CHUNK_ROWS, help=f"rows per chunk (default {CHUNK_ROWS})")
    p.add_argument("--memory-budget", default=None, help="dflow: Session(memory_budget=...)")
    p.add_argument("--allowed-mem", default="2GB", help="cubed: Spec(allowed_mem=...) (default 2GB)")
    p.add_argument("--as-limit-gb", type=float, default=None,
                   help="cap this process's address space (RLIMIT_AS) before running the engine")
    p.add_argument("--generate-only", action="store_true", help="write the data and exit")
    args = p.parse_args(argv)
    if args.generate_only:
        generate(args.dir, args.gb, args.d, args.chunk_rows)
        return 0
    n = rows_for(args.gb, args.d)
    if not is_generated(args.dir, {"n": n, "d": args.d, "chunk_rows": min(args.chunk_rows, n), "seed": 0}):
        # generated in a child so that this process's peak RSS is the engine's alone
        subprocess.run([sys.executable, "-m", "benchmarks.workload", "--engine", args.engine, "--gb", str(args.gb),
                        "--dir", args.dir, "--d", str(args.d), "--chunk-rows", str(args.chunk_rows),
                        "--generate-only"], check=True, cwd=Path(__file__).resolve().parents[1])
    if args.as_limit_gb is not None:
        cap = int(args.as_limit_gb * 1e9)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    budget = args.memory_budget
    if budget is not None and budget.isdigit():
        budget = int(budget)
    figures = run_engine(args.engine, args.dir, memory_budget=budget, allowed_mem=args.allowed_mem)
    figures["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
