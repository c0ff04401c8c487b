"""The Zarr IO benchmarks of issue #5: checkpoints and streaming pipelines against zarr-python and dask.

    python benchmarks/bench_io.py [--mb 256] [--rss-mb 256] [--repeat 3] [--dir DIR] [--record]
    python benchmarks/bench_io.py --mb 1024 --rss-mb 1024 --record      # the issue's sizes (see b)

a) Save and restore `--mb` MB of variables (4 float32 variables of mb/4 MB, random values) with
   Saver vs writing / reading the same arrays with zarr-python directly (same chunks, default
   codec). Target: dflow throughput ≥ 0.8× zarr-python's, for save and for restore.
b) Peak RSS while saving / restoring one chunked variable of `--rss-mb` MB (the child's whole peak
   during the step). Target (issue): ≤ 512 MB for a 4 GB variable. The Session has
   `memory_budget="512MB"`, so the variable (over a quarter of the budget) lives on disk between
   runs (a StoredValue): it is initialized, saved and restored chunk by chunk, never resident.
   Peers: zarr-python copying the same array chunk by chunk, and dflow's read_zarr → write_zarr.
c) read_zarr → x - mean(x, 0) → write_zarr on `--mb` MB of float32 vs a hand-written
   dask.array from_zarr → x - x.mean(0) → to_zarr on the same store (threaded scheduler both).
   Target: dflow throughput ≥ 0.8× dask.array's.

Each case runs in its own interpreter (benchmarks/harness.py); the peak RSS column is that
child's. Data lives under `--dir` (default: a temporary folder, removed at the end).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from harness import (  # noqa: E402 - after the path
    Report,
    case_main,
    env_value,
    fmt_ratio,
    fmt_time,
    machine_line,
    record_run,
    rss_mb,
    run_case,
    table,
)

MB = 1 << 20
COLS = 1024  # float32 rows of 4 KiB
N_VARS = 4
PIPE_CHUNK_ROWS = 8192  # 32 MiB chunks for the pipeline's data
TARGET_RATIO = 0.8
RSS_TARGET_MB = 512
BUDGET = "512MB"  # the Session's memory budget in b)


def _values(total_mb, n, seed=0):
    """n float32 arrays of total_mb MB together, shape (rows, COLS), random normal values."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = max(1, total_mb * MB // (n * COLS * 4))
    return [rng.standard_normal((rows, COLS), dtype=np.float32) for _ in range(n)]


def _chunks(shape):
    from dflow.storage.chunks import row_chunks

    return row_chunks(shape, 4)  # the chunks Saver uses: the zarr peer writes the same layout


# ---- a) save / restore --------------------------------------------------------------------------

def _dflow_model(values):
    import dflow as tf

    variables = []
    for i, v in enumerate(values):
        with tf.variable_scope(f"layer{i}"):
            variables.append(tf.Variable(tf.zeros(v.shape), name="w"))
    sess = tf.Session()
    for var, v in zip(variables, values):
        var.load(v, sess)
    return tf, sess, variables


def save_restore_dflow():
    root, repeat = os.environ["BENCH_DIR"], env_value("BENCH_REPEAT")
    values = _values(env_value("BENCH_MB"), N_VARS)
    nbytes = sum(v.nbytes for v in values)
    tf, sess, variables = _dflow_model(values)
    del values
    saver = tf.train.Saver(max_to_keep=None)
    saves, restores = [], []
    for i in range(repeat):
        t0 = time.perf_counter()
        prefix = saver.save(sess, os.path.join(root, "dflow", "model"), global_step=i, write_meta_graph=False)
        saves.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        saver.restore(sess, prefix)
        restores.append(time.perf_counter() - t0)
        if i + 1 < repeat:
            from dflow.io.checkpoint import _remove_checkpoint

            _remove_checkpoint(prefix)  # the prefix is a symbolic link to the data (crash-safe publishing)
    disk = _du(os.path.realpath(prefix))
    shutil.rmtree(os.path.join(root, "dflow"))
    return {"bytes": nbytes, "save": min(saves), "restore": min(restores), "disk": disk}


def save_restore_zarr():
    import numpy as np
    import zarr

    root, repeat = os.environ["BENCH_DIR"], env_value("BENCH_REPEAT")
    values = _values(env_value("BENCH_MB"), N_VARS)
    nbytes = sum(v.nbytes for v in values)
    saves, restores = [], []
    for i in range(repeat):
        path = os.path.join(root, "zarr", f"model-{i}")
        t0 = time.perf_counter()
        g = zarr.open_group(path, mode="w")
        for k, v in enumerate(values):
            g.create_array(f"layer{k}/w", shape=v.shape, dtype=v.dtype, chunks=_chunks(v.shape))[...] = v
        saves.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        g = zarr.open_group(path, mode="r")
        back = [np.asarray(g[f"layer{k}/w"][...]) for k in range(len(values))]
        restores.append(time.perf_counter() - t0)
        assert all(np.array_equal(a, b) for a, b in zip(back, values))
        del back
        if i + 1 < repeat:
            shutil.rmtree(path)
    disk = _du(path)
    shutil.rmtree(os.path.join(root, "zarr"))
    return {"bytes": nbytes, "save": min(saves), "restore": min(restores), "disk": disk}


def _du(path):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


# ---- b) peak RSS of one big variable ------------------------------------------------------------

def _hwm_mb():
    """This process's peak RSS since the last `_reset_hwm` (Linux VmHWM)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _reset_hwm():
    with open("/proc/self/clear_refs", "w") as f:  # "5" resets the peak RSS to the current RSS
        f.write("5")


def _rss_steps(steps):
    """Runs (label, fn) steps; records the RSS after each and the peak RSS during each."""
    out = {"rss_start": rss_mb()}
    for label, fn in steps:
        _reset_hwm()
        fn()
        out[f"peak_{label}"] = _hwm_mb()
        out[f"rss_after_{label}"] = rss_mb()
    return out


def rss_save():
    root = os.environ["BENCH_DIR"]
    state = {}

    def build():  # initialized by the graph, chunk by chunk, straight into the session's store
        import dflow as tf

        rows = env_value("BENCH_RSS_MB") * MB // (COLS * 4)
        with tf.variable_scope("layer0"):
            v = tf.get_variable("w", [rows, COLS], initializer=tf.random_normal_initializer(seed=1))
        state["tf"], state["sess"] = tf, tf.Session(memory_budget=BUDGET)
        state["sess"].run(v.initializer)

    def save():
        saver = state["tf"].train.Saver()
        saver.save(state["sess"], os.path.join(root, "rss", "model"), write_meta_graph=False)

    return _rss_steps([("variable", build), ("save", save)])


def rss_restore():
    root = os.environ["BENCH_DIR"]
    state = {}

    def build():
        import dflow as tf

        rows = env_value("BENCH_RSS_MB") * MB // (COLS * 4)
        with tf.variable_scope("layer0"):
            state["v"] = tf.Variable(tf.zeros((rows, COLS)), name="w")  # not initialized: nothing resident
        state["tf"], state["sess"] = tf, tf.Session(memory_budget=BUDGET)

    def restore():
        state["tf"].train.Saver().restore(state["sess"], os.path.join(root, "rss", "model"))

    return _rss_steps([("graph", build), ("restore", restore)])


def rss_zarr_copy():
    import zarr

    root = os.environ["BENCH_DIR"]

    def copy():
        src = zarr.open_array(os.path.join(root, "rss", "model", "layer0", "w"), mode="r")
        dst = zarr.create_array(os.path.join(root, "rss-zarr-copy"), shape=src.shape, dtype=src.dtype,
                                chunks=src.chunks, overwrite=True)
        step = src.chunks[0]
        for start in range(0, src.shape[0], step):
            dst[start:start + step] = src[start:start + step]
        shutil.rmtree(os.path.join(root, "rss-zarr-copy"))

    return _rss_steps([("copy", copy)])


def rss_dflow_stream():
    root = os.environ["BENCH_DIR"]

    def copy():
        import dflow as tf

        t = tf.io.read_zarr(os.path.join(root, "rss", "model", "layer0", "w"))
        with tf.Session() as sess:
            sess.run(tf.io.write_zarr(t, root, "rss-dflow-copy"))
        shutil.rmtree(os.path.join(root, "rss-dflow-copy"))

    return _rss_steps([("copy", copy)])


# ---- c) read → x - mean(x, 0) → write -------------------------------------------------------------

def pipeline_dflow():
    import dflow as tf

    root, repeat = os.environ["BENCH_DIR"], env_value("BENCH_REPEAT")
    times = []
    for i in range(repeat):
        tf.reset_default_graph()
        t0 = time.perf_counter()
        x = tf.io.read_zarr(os.path.join(root, "pipe", "x"))
        w = tf.io.write_zarr(x - tf.reduce_mean(x, axis=0), os.path.join(root, "pipe"), f"dflow-{i}")
        with tf.Session() as sess:
            summary = sess.run(w)
        times.append(time.perf_counter() - t0)
    check = _check_pipeline(os.path.join(root, "pipe", f"dflow-{repeat - 1}"))
    for i in range(repeat):
        shutil.rmtree(os.path.join(root, "pipe", f"dflow-{i}"))
    return {"time": min(times), "bytes": summary["bytes"], **check}


def pipeline_dask():
    import dask.array as da

    root, repeat = os.environ["BENCH_DIR"], env_value("BENCH_REPEAT")
    times = []
    for i in range(repeat):
        t0 = time.perf_counter()
        x = da.from_zarr(os.path.join(root, "pipe", "x"))
        (x - x.mean(axis=0)).to_zarr(os.path.join(root, "pipe", f"dask-{i}"), overwrite=True)
        times.append(time.perf_counter() - t0)
    check = _check_pipeline(os.path.join(root, "pipe", f"dask-{repeat - 1}"))
    for i in range(repeat):
        shutil.rmtree(os.path.join(root, "pipe", f"dask-{i}"))
    return {"time": min(times), "bytes": int(x.nbytes), **check}


def _check_pipeline(path):
    """Column means of the output (≈ 0) and the first value vs numpy, reading one chunk at a time."""
    import numpy as np
    import zarr

    root = os.environ["BENCH_DIR"]
    x = zarr.open_array(os.path.join(root, "pipe", "x"), mode="r")
    y = zarr.open_array(path, mode="r")
    step = x.chunks[0]
    sums = np.zeros(x.shape[1])
    ysums = np.zeros(x.shape[1])
    for s in range(0, x.shape[0], step):
        sums += x[s:s + step].sum(0, dtype=np.float64)
        ysums += y[s:s + step].sum(0, dtype=np.float64)
    mean = sums / x.shape[0]
    err = float(abs(y[0] - (x[0] - mean)).max())
    return {"max_abs_col_mean": float(abs(ysums / x.shape[0]).max()), "err_row0": err,
            "out_chunks": list(y.chunks)}


def _make_pipeline_data(root, mb):
    """x: float32 (rows, COLS), random normal, chunks of PIPE_CHUNK_ROWS rows, written chunk by chunk."""
    import numpy as np
    import zarr

    rows = mb * MB // (COLS * 4)
    z = zarr.create_array(os.path.join(root, "pipe", "x"), shape=(rows, COLS), dtype="float32",
                          chunks=(min(rows, PIPE_CHUNK_ROWS), COLS), overwrite=True)
    rng = np.random.default_rng(2)
    for s in range(0, rows, PIPE_CHUNK_ROWS):
        n = min(PIPE_CHUNK_ROWS, rows - s)
        z[s:s + n] = rng.standard_normal((n, COLS), dtype=np.float32) + np.float32(3.0)


CASES = {
    "save:dflow": save_restore_dflow, "save:zarr": save_restore_zarr,
    "rss:save": rss_save, "rss:restore": rss_restore, "rss:zarr-copy": rss_zarr_copy,
    "rss:dflow-stream": rss_dflow_stream,
    "pipe:dflow": pipeline_dflow, "pipe:dask": pipeline_dask,
}


# ---- parent ---------------------------------------------------------------------------------------

def _run(name):
    r = run_case(__file__, name, timeout=3600)
    if "error" in r:
        print(f"  {name}: FAILED {r['error']}", file=sys.stderr)
    return r


def _target(report, what, ok):
    report(f"  target {what}: " + ("not measured" if ok is None else "met" if ok else "MISSED"))


def _throughput(r, key):
    return r["bytes"] / r[key] / 1e6 if key in r else None


def bench_save_restore(report, mb):
    results = {"dflow Saver": _run("save:dflow"), "zarr-python direct": _run("save:zarr")}
    report(f"a) save + restore {N_VARS} float32 variables, {mb} MiB together (random values; best of "
           f"{os.environ['BENCH_REPEAT']})")
    rows = []
    for label, r in results.items():
        rows.append([label, fmt_time(r.get("save")), f"{_throughput(r, 'save') or 0:.0f} MB/s",
                     fmt_time(r.get("restore")), f"{_throughput(r, 'restore') or 0:.0f} MB/s",
                     f"{r.get('disk', 0) / MB:.0f}", f"{r.get('peak_rss_mb', 0):.0f}", r.get("error", "")])
    report(table(["peer", "save", "save MB/s", "restore", "restore MB/s", "on disk MiB", "peak RSS MiB", ""],
                 rows))
    d, z = results["dflow Saver"], results["zarr-python direct"]
    for what in ("save", "restore"):
        ratio = z[what] / d[what] if what in d and what in z else None
        _target(report, f"dflow {what} throughput ≥ {TARGET_RATIO}× zarr-python's (got {fmt_ratio(z.get(what), d.get(what))})",
                None if ratio is None else ratio >= TARGET_RATIO)


def bench_rss(report, rss_mb):
    save, restore = _run("rss:save"), _run("rss:restore")
    copy, stream = _run("rss:zarr-copy"), _run("rss:dflow-stream")
    report(f"\nb) RSS with one float32 variable of {rss_mb} MiB (stored on disk by a Session with memory_budget={BUDGET!r}), in MiB; "
           "'peak during' is the step's own peak (VmHWM reset before it)")

    def row(label, r, step):
        return [label, f"{r.get('rss_after_' + step, 0):.0f}", f"{r.get('peak_' + step, 0):.0f}"]

    rows = [
        ["interpreter (before importing dflow)", f"{save.get('rss_start', 0):.0f}", "-"],
        row(f"dflow: initialize it in a Session(memory_budget={BUDGET!r})", save, "variable"),
        row("dflow: Saver.save", save, "save"),
        row("dflow: graph built, variable uninitialized (fresh process)", restore, "graph"),
        row("dflow: Saver.restore", restore, "restore"),
        row("zarr-python: chunk-by-chunk copy of the saved array", copy, "copy"),
        row("dflow: read_zarr → write_zarr of the saved array", stream, "copy"),
    ]
    report(table(["step", "RSS after", "peak during"], rows))
    for what, r, step in (("saving", save, "save"), ("restoring", restore, "restore")):
        peak = r.get("peak_" + step)
        _target(report, f"peak RSS while {what} ≤ {RSS_TARGET_MB} MiB ({rss_mb} MiB variable; got "
                f"{peak or 0:.0f} MiB)", None if peak is None else peak <= RSS_TARGET_MB)
    if rss_mb < 4096:
        report("  (the issue asks this of a 4 GiB variable: run with --rss-mb 4096)")


def bench_pipeline(report, mb):
    d, k = _run("pipe:dflow"), _run("pipe:dask")
    report(f"\nc) read → x - mean(x, 0) → write, float32 {mb} MiB, Zarr chunks of {PIPE_CHUNK_ROWS} rows × "
           f"{COLS} (best of {os.environ['BENCH_REPEAT']})")
    rows = []
    for label, r in (("dflow read_zarr → write_zarr", d), ("dask.array from_zarr → to_zarr", k)):
        rows.append([label, fmt_time(r.get("time")), f"{_throughput(r, 'time') or 0:.0f} MB/s",
                     fmt_ratio(r.get("time"), d.get("time")), f"{r.get('peak_rss_mb', 0):.0f}",
                     f"{r.get('max_abs_col_mean', float('nan')):.1e}", f"{r.get('err_row0', float('nan')):.1e}",
                     r.get("error", "")])
    report(table(["peer", "time", "MB/s", "÷ dflow", "peak RSS MiB", "max |column mean|", "row 0 error", ""],
                 rows))
    ratio = k["time"] / d["time"] if "time" in d and "time" in k else None
    _target(report, f"dflow throughput ≥ {TARGET_RATIO}× dask.array's (got {fmt_ratio(k.get('time'), d.get('time'))})",
            None if ratio is None else ratio >= TARGET_RATIO)


def main(argv):
    if "--case" in argv:
        case_main(CASES, argv)
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mb", type=int, default=256, help="MiB of variables (a) and of pipeline data (c)")
    p.add_argument("--rss-mb", type=int, default=256, help="MiB of the one variable of (b)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dir", default=None, help="where the data goes (default: a temporary folder, removed)")
    p.add_argument("--only", default="abc", help="which benchmarks: any of a, b, c")
    p.add_argument("--record", action="store_true")
    args = p.parse_args(argv)
    root = args.dir or tempfile.mkdtemp(prefix="dflow-bench-io-")
    os.makedirs(root, exist_ok=True)
    os.environ.update(BENCH_DIR=root, BENCH_MB=str(args.mb), BENCH_RSS_MB=str(args.rss_mb),
                      BENCH_REPEAT=str(args.repeat))
    report = Report()
    report(machine_line())
    try:
        if "a" in args.only:
            bench_save_restore(report, args.mb)
        if "b" in args.only:
            bench_rss(report, args.rss_mb)
        if "c" in args.only:
            _make_pipeline_data(root, args.mb)
            bench_pipeline(report, args.mb)
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
        else:
            for sub in ("rss", "pipe", "dflow", "zarr"):
                shutil.rmtree(os.path.join(root, sub), ignore_errors=True)
    if args.record:
        record_run("bench_io (issue #5: checkpoints and Zarr pipelines)", "bench_io.py", argv, report.text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
