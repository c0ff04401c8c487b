"""Batch inference of models TensorFlow wrote, over Zarr data larger than the budget (issue #27).

    TF_PYTHON=/path/to/python python benchmarks/bench_interop.py [--gb 2] [--record]
    TF_PYTHON=... python benchmarks/bench_interop.py --quick        # 0.1 GB of data, 64 MB checkpoint

TensorFlow (the `TF_PYTHON` interpreter, TF1 graph mode) builds (a) an MLP (256 -> 512 -> 512 -> 10,
relu, softmax) and (b) a small CNN (28x28x1: conv 5x5x16 + relu + maxpool, conv 5x5x32 + relu +
maxpool, dense 10, softmax) with random weights and freezes each to a `.pb`. Each model's input is
a Zarr array of `--gb` GB (float32, random) on disk; every peer writes the model's output to a Zarr
array and the outputs are compared.

Peers, each in its own interpreter (benchmarks/harness.py):
- dflow: `tf.import_graph_def(frozen .pb, input_map={"x:0": tf.io.read_zarr(X)})` then
  `tf.io.write_zarr(output)` in one `Session.run`, with `memory_budget` 512 MB, on the threaded
  scheduler and on a 2-worker LocalCluster (loopback, one thread and a 3 GB limit a worker: a worker
  that imports TensorFlow is ~0.6 GB before any data);
- Dask+TF (what users do today): `dask.array.from_zarr(X).map_blocks(f).to_zarr(...)`, f running
  the frozen graph in a TensorFlow Session kept per thread/process; threads and the same cluster;
- TF alone: a Python loop reading the Zarr chunk by chunk, `sess.run` per chunk, writing each
  chunk's output.

Targets: identical predictions (max |diff| printed); dflow's throughput ≥ 1.0× Dask+TF's on the
MLP and ≥ 0.8× on the CNN; dflow's peak RSS ≤ 0.5× Dask+TF's (on a cluster: the largest
worker's). Also: restoring a 1 GB TensorFlow checkpoint (`--ckpt-mb`) with `Saver.restore`,
dflow ≤ 1.5× TF's own restore.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from harness import (  # noqa: E402 - after the path
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

MB = 1 << 20
MODELS = {"mlp": (256,), "cnn": (28, 28, 1)}
CHUNK_ROWS = {"mlp": 16384, "cnn": 4096}  # 16 MB and 12.25 MB chunks
BUDGET = "512MB"
MLP_TARGET, CNN_TARGET, RSS_TARGET, RESTORE_TARGET = 1.0, 0.8, 0.5, 1.5


def _dir():
    return os.environ["BENCH_DIR"]


def _rows(model):
    row_bytes = 4 * int(__import__("math").prod(MODELS[model]))
    return int(float(os.environ["BENCH_GB"]) * 1e9) // row_bytes // CHUNK_ROWS[model] * CHUNK_ROWS[model]


# ---- setup -----------------------------------------------------------------------------------


def case_tf_make():
    """TensorFlow writes the frozen models and the large checkpoint."""
    os.environ["TF_USE_LEGACY_KERAS"] = "1"  # tf.layers comes from tf_keras
    import numpy as np
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    d = _dir()
    for model in MODELS:
        with tf.Graph().as_default() as g:
            tf.set_random_seed(1)
            x = tf.placeholder(tf.float32, (None,) + MODELS[model], name="x")
            if model == "mlp":
                h = tf.layers.dense(x, 512, tf.nn.relu)
                h = tf.layers.dense(h, 512, tf.nn.relu)
            else:
                h = tf.layers.conv2d(x, 16, 5, padding="same", activation=tf.nn.relu)
                h = tf.layers.max_pooling2d(h, 2, 2)
                h = tf.layers.conv2d(h, 32, 5, padding="same", activation=tf.nn.relu)
                h = tf.layers.max_pooling2d(h, 2, 2)
                h = tf.layers.flatten(h)
            tf.nn.softmax(tf.layers.dense(h, 10), name="y")
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                frozen = tf.graph_util.convert_variables_to_constants(s, g.as_graph_def(), ["y"])
        with open(os.path.join(d, f"{model}.pb"), "wb") as f:
            f.write(frozen.SerializeToString())
    mb = int(os.environ["BENCH_CKPT_MB"])
    with tf.Graph().as_default():
        rows = mb * MB // (1024 * 4)
        v = tf.get_variable("embedding", [rows, 1024], tf.float32, tf.random_normal_initializer())
        saver = tf.train.Saver([v])
        with tf.Session() as s:
            s.run(v.initializer)
            saver.save(s, os.path.join(d, "big", "model"), write_meta_graph=False)
            checksum = float(np.sum(s.run(v)[::97]))
    return {"checksum": checksum}


def case_data():
    """The inputs: one random float32 Zarr array per model, written chunk by chunk."""
    import numpy as np
    import zarr

    rng = np.random.default_rng(0)
    for model, shape in MODELS.items():
        rows, chunk = _rows(model), CHUNK_ROWS[model]
        z = zarr.create_array(os.path.join(_dir(), f"{model}_x.zarr"), shape=(rows,) + shape,
                              chunks=(chunk,) + shape, dtype="float32")
        for i in range(0, rows, chunk):
            z[i:i + chunk] = rng.random((chunk,) + shape, dtype=np.float32)
    return {}


# ---- peers -----------------------------------------------------------------------------------


def _cluster():
    from distributed import Client, LocalCluster

    # 3 GB a worker: a worker that imports TensorFlow holds ~0.6 GB before any data, and the nanny
    # kills a worker over its limit (dflow's own budget is the Session's memory_budget)
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="3GB", host="127.0.0.1",
                           dashboard_address=None, processes=True)
    return cluster, Client(cluster)


def _worker_peak_mb(client):
    from harness import peak_rss_mb

    return max(client.run(peak_rss_mb).values())


def _dflow(model, where):
    import time

    import dflow as tf

    d = _dir()
    out = os.path.join(d, f"out_{model}_dflow_{where}.zarr")
    shutil.rmtree(out, ignore_errors=True)
    gd = tf.GraphDef()
    with open(os.path.join(d, f"{model}.pb"), "rb") as f:
        gd.ParseFromString(f.read())
    cluster = client = None
    if where == "cluster":
        cluster, client = _cluster()
    t0 = time.perf_counter()
    x = tf.io.read_zarr(os.path.join(d, f"{model}_x.zarr"))
    y, = tf.import_graph_def(gd, input_map={"x:0": x}, return_elements=["y:0"], name="")
    write = tf.io.write_zarr(y, out)
    with tf.Session(scheduler=client or "threads", memory_budget=BUDGET) as sess:
        sess.run(write)
    seconds = time.perf_counter() - t0
    figures = {"seconds": seconds, "out": out}
    if client is not None:
        figures["worker_peak_mb"] = _worker_peak_mb(client)
        client.close()
        cluster.close()
    return figures


def _tf_graph(model):
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    gd = tf.GraphDef()
    with open(os.path.join(_dir(), f"{model}.pb"), "rb") as f:
        gd.ParseFromString(f.read())
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(gd, name="")
    return tf, g


_SESSIONS = {}


def _predict_block(block, model):
    """Dask+TF's chunk function: the frozen graph in one TF Session per thread of the process."""
    import threading

    key = (model, threading.get_ident())
    if key not in _SESSIONS:
        tf, g = _tf_graph(model)
        _SESSIONS[key] = tf.Session(graph=g, config=tf.ConfigProto(intra_op_parallelism_threads=1,
                                                                   inter_op_parallelism_threads=1))
    return _SESSIONS[key].run("y:0", {"x:0": block})


def _tfdask(model, where):
    import time

    import dask
    import dask.array as da
    import numpy as np

    d = _dir()
    out = os.path.join(d, f"out_{model}_tfdask_{where}.zarr")
    shutil.rmtree(out, ignore_errors=True)
    cluster = client = None
    if where == "cluster":
        cluster, client = _cluster()
    t0 = time.perf_counter()
    x = da.from_zarr(os.path.join(d, f"{model}_x.zarr"))
    drop = list(range(2, x.ndim))  # the CNN's image axes; the output is [rows, 10]
    # meta given: dask would otherwise call the function on an empty block here (a TF Session in
    # this process, then pickled with the function for the cluster's workers)
    y = x.map_blocks(lambda b: _predict_block(b, model), chunks=(x.chunks[0], (10,)), drop_axis=drop or None,
                     dtype="float32", meta=np.empty((0, 10), np.float32))
    if client is None:
        with dask.config.set(scheduler="threads"):
            y.to_zarr(out)
    else:
        y.to_zarr(out)
    seconds = time.perf_counter() - t0
    figures = {"seconds": seconds, "out": out}
    if client is not None:
        figures["worker_peak_mb"] = _worker_peak_mb(client)
        client.close()
        cluster.close()
    return figures


def _tf_loop(model):
    import time

    import numpy as np
    import zarr

    d = _dir()
    out = os.path.join(d, f"out_{model}_tf_loop.zarr")
    shutil.rmtree(out, ignore_errors=True)
    tf, g = _tf_graph(model)
    t0 = time.perf_counter()
    x = zarr.open_array(os.path.join(d, f"{model}_x.zarr"), mode="r")
    y = zarr.create_array(out, shape=(x.shape[0], 10), chunks=(x.chunks[0], 10), dtype="float32")
    with tf.Session(graph=g) as sess:
        for i in range(0, x.shape[0], x.chunks[0]):
            y[i:i + x.chunks[0]] = sess.run("y:0", {"x:0": np.asarray(x[i:i + x.chunks[0]])})
    return {"seconds": time.perf_counter() - t0, "out": out}


def _restore(tf):
    """Seconds of `Saver.restore` of the large checkpoint in library `tf` (dflow or TF1), and a
    checksum of the restored value taken in the graph (fetching it would copy it)."""
    import time

    prefix = os.path.join(_dir(), "big", "model")
    shape = dict(tf.train.list_variables(prefix))["embedding"]
    v = tf.get_variable("embedding", shape, tf.float32)
    saver = tf.train.Saver([v])
    checksum_op = tf.reduce_sum(v[::97])
    with tf.Session() as s:
        t0 = time.perf_counter()
        saver.restore(s, prefix)
        seconds = time.perf_counter() - t0
        checksum = float(s.run(checksum_op))
    return {"seconds": seconds, "checksum": checksum}


def _restore_dflow():
    import dflow

    return _restore(dflow)


def _restore_tf():
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    return _restore(tf)


def case_compare():
    """Max |difference| of every peer's output from the TF loop's, read chunk by chunk."""
    import numpy as np
    import zarr

    d = _dir()
    out = {}
    for model in MODELS:
        ref_path = os.path.join(d, f"out_{model}_tf_loop.zarr")
        if not os.path.exists(ref_path):
            continue
        ref = zarr.open_array(ref_path, mode="r")
        for name in sorted(os.listdir(d)):
            if not name.startswith(f"out_{model}_") or name.endswith("tf_loop.zarr"):
                continue
            other = zarr.open_array(os.path.join(d, name), mode="r")
            diff = 0.0
            if other.shape != ref.shape:
                diff = float("inf")
            else:
                for i in range(0, ref.shape[0], ref.chunks[0]):
                    a, b = np.asarray(ref[i:i + ref.chunks[0]]), np.asarray(other[i:i + ref.chunks[0]])
                    diff = max(diff, float(np.max(np.abs(a - b))))
            out[name] = diff
    return {"max_abs_diff": out}


CASES = {"tf-make": case_tf_make, "data": case_data, "compare": case_compare,
         "restore-dflow": _restore_dflow, "restore-tf": _restore_tf}
for _m in MODELS:
    for _w in ("threads", "cluster"):
        CASES[f"dflow-{_m}-{_w}"] = lambda m=_m, w=_w: _dflow(m, w)
        CASES[f"tfdask-{_m}-{_w}"] = lambda m=_m, w=_w: _tfdask(m, w)
    CASES[f"tf-{_m}"] = lambda m=_m: _tf_loop(m)


def _peak(r):
    return r.get("worker_peak_mb", r.get("peak_rss_mb"))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=2.0, help="GB of input data per model")
    parser.add_argument("--ckpt-mb", type=int, default=1024, help="MB of the TensorFlow checkpoint to restore")
    parser.add_argument("--quick", action="store_true", help="0.1 GB per model, a 64 MB checkpoint")
    parser.add_argument("--dir", default=None, help="where the data goes (default: a temporary folder)")
    parser.add_argument("--record", action="store_true", help="append the output to benchmarks/RESULTS.md")
    parser.add_argument("--restore-only", action="store_true", help="only the checkpoint restore comparison")
    parser.add_argument("--keep-blas-env", action="store_true",
                        help="keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE if the environment sets them")
    args = parser.parse_args(argv)
    if args.quick:
        args.gb, args.ckpt_mb = 0.1, 64
    if args.restore_only:
        args.gb = 0.001  # the models are still made (the same child writes the checkpoint)
    # Some machines here set OPENBLAS_CORETYPE (an old OpenBLAS's workaround) to a core older than
    # the CPU: numpy's OpenBLAS then runs its Haswell kernels (2.5x slower sgemm on an MLP chunk
    # measured here); TensorFlow's oneDNN ignores it. Unset for every peer unless asked to keep it.
    dropped = [] if args.keep_blas_env else [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
                                             if os.environ.pop(v, None) is not None]
    tf_py = find_tf_python()
    report = Report()
    if not tf_py:
        report("bench_interop needs TensorFlow to write the models: set TF_PYTHON")
        return
    d = args.dir or tempfile.mkdtemp(prefix="dflow-bench-interop-")
    os.makedirs(os.path.join(d, "big"), exist_ok=True)
    os.environ.update(BENCH_DIR=d, BENCH_GB=str(args.gb), BENCH_CKPT_MB=str(args.ckpt_mb))
    try:
        report(f"batch inference of frozen TF models over {args.gb:g} GB of Zarr each; {machine_line()}")
        if dropped:
            report(f"unset for every peer: {', '.join(dropped)} (numpy's OpenBLAS picks its kernel for this CPU)")
        made = run_case(__file__, "tf-make", python=tf_py, timeout=1800)
        if "error" in made:
            report(f"could not make TensorFlow's models: {made['error']}")
            return
        if not args.restore_only:
            data = run_case(__file__, "data", timeout=1800)
            if "error" in data:
                report(f"could not make the data: {data['error']}")
                return
            results = {}
            for model in MODELS:
                for peer, where in (("dflow", "threads"), ("tfdask", "threads"), ("dflow", "cluster"),
                                    ("tfdask", "cluster")):
                    py = tf_py if peer == "tfdask" else None
                    results[(model, peer, where)] = run_case(__file__, f"{peer}-{model}-{where}", python=py, timeout=3600)
                results[(model, "tf", "loop")] = run_case(__file__, f"tf-{model}", python=tf_py, timeout=3600)
            diffs = run_case(__file__, "compare").get("max_abs_diff", {})
            rows = []
            for (model, peer, where), r in results.items():
                label = {"dflow": "dflow", "tfdask": "Dask+TF", "tf": "TF alone"}[peer]
                if "error" in r:
                    rows.append([model, label, where, r["error"][:80], "", "", ""])
                    continue
                rows_n = _rows(model)
                diff = diffs.get(os.path.basename(r["out"]), 0.0 if peer == "tf" else None)
                rows.append([model, label, where, fmt_time(r["seconds"]), f"{rows_n / r['seconds']:,.0f}",
                             f"{_peak(r):.0f}", "-" if diff is None else f"{diff:.1e}"])
            report(table(["model", "peer", "where", "time", "rows/s", "peak RSS MiB", "max |diff| vs TF"], rows))
            for model, target in (("mlp", MLP_TARGET), ("cnn", CNN_TARGET)):
                for where in ("threads", "cluster"):
                    d_, t_ = results[(model, "dflow", where)], results[(model, "tfdask", where)]
                    if "error" in d_ or "error" in t_:
                        continue
                    speed = t_["seconds"] / d_["seconds"]
                    rss = _peak(d_) / _peak(t_)
                    report(f"{model} on {where}: dflow throughput {speed:.2f}× Dask+TF's (target ≥ {target:g}×: "
                           f"{'met' if speed >= target else 'missed'}); peak RSS {rss:.2f}× (target ≤ {RSS_TARGET:g}×: "
                           f"{'met' if rss <= RSS_TARGET else 'missed'})")
        # the checkpoint's files read once first, so that both restores find them in the page cache
        for name in os.listdir(os.path.join(d, "big")):
            with open(os.path.join(d, "big", name), "rb") as f:
                while f.read(64 << 20):
                    pass
        # alternating rounds, the median of each: on this VM one read of a cached 1 GB file took
        # 0.09 s or 1.9 s from one process to the next
        rounds = {"dflow": [], "tf": []}
        for _ in range(3):
            rounds["dflow"].append(run_case(__file__, "restore-dflow"))
            rounds["tf"].append(run_case(__file__, "restore-tf", python=tf_py))
        failed = [r["error"] for rs in rounds.values() for r in rs if "error" in r]
        if failed:
            report(f"restore failed: {failed[0]}")
        else:
            rd, rt = (sorted(rs, key=lambda r: r["seconds"])[1] for rs in rounds.values())
            ratio = rd["seconds"] / rt["seconds"]
            same = all(abs(a["checksum"] - b["checksum"]) <= 1e-3 * abs(b["checksum"])
                       for a, b in zip(rounds["dflow"], rounds["tf"]))
            report(f"restore of a {args.ckpt_mb} MB TensorFlow checkpoint (median of 3 alternating rounds): dflow "
                   f"{fmt_time(rd['seconds'])}, TF {fmt_time(rt['seconds'])}: {fmt_ratio(rd['seconds'], rt['seconds'])} "
                   f"(target ≤ {RESTORE_TARGET:g}×: {'met' if ratio <= RESTORE_TARGET else 'missed'}); rounds dflow "
                   + ", ".join(fmt_time(r["seconds"]) for r in rounds["dflow"]) + "; TF "
                   + ", ".join(fmt_time(r["seconds"]) for r in rounds["tf"])
                   + f"; values {'equal' if same else 'DIFFER'}; peak RSS dflow {rd['peak_rss_mb']:.0f} MiB, "
                   f"TF {rt['peak_rss_mb']:.0f} MiB")
        if args.record:
            record_run("bench_interop", "bench_interop.py", argv, report.text)
    finally:
        if not args.dir:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    if "--case" in sys.argv:
        case_main(CASES, sys.argv)
    else:
        main(sys.argv[1:])
