"""tf.data benchmark of issue #15: one shuffled epoch of minibatch SGD over the out-of-core Zarr dataset.

    python benchmarks/bench_data.py [--gb 0.25] [--batch 1024] [--buffer 10000] [--dir DIR] [--record]
    TF_PYTHON=/tmp/tfenv/bin/python python benchmarks/bench_data.py --gb 4 --record   # the issue's size

The data is the out-of-core workload's (benchmarks/workload.py: X n×1000 float32 and y n×1
float32 in Zarr row chunks of 25,000 rows; 4 GB is n = 1,000,000). Each case runs in its own
interpreter; peak RSS is that child's.

- read: every chunk of X and y read once with dflow's own chunk reader (storage/chunks.py), nothing
  else: the throughput ceiling.
- dflow tf.data: `Dataset.from_zarr((X, y)).shuffle(buffer, seed).batch(batch).prefetch(2)`, a
  one-shot iterator feeding logistic regression (mean sigmoid cross-entropy) trained with
  `GradientDescentOptimizer(0.5)` until OutOfRangeError.
- hand loop: the same model, fed by `feed_dict` from a hand-written loop: chunks in a random order
  read with zarr-python, rows permuted within the chunk, numpy minibatches.
- TF1 from_generator: TF1's `tf.data.Dataset.from_generator` over the same zarr-python reads
  (needs TF_PYTHON with zarr installed; reported as missing otherwise).

Targets (issue #15): peak RSS ≤ 512 MB; dflow throughput ≥ 0.8× the read's; ≥ 1.5× the hand loop's.
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
    fmt_ratio,
    fmt_time,
    machine_line,
    record_run,
    run_case,
    table,
    tf_python,
)

RSS_TARGET_MB = 512
READ_RATIO = 0.8
HAND_RATIO = 1.5
LEARNING_RATE = 0.5


def _paths():
    root = Path(os.environ["BENCH_DIR"])
    return str(root / "X.zarr"), str(root / "y.zarr")


def _params():
    return int(os.environ["BENCH_BATCH"]), int(os.environ["BENCH_BUFFER"])


def _session_kwargs():
    """Session arguments of both dflow peers: the defaults, or `--small-plan-mb` (plans whose
    tensors are all below it run in process instead of through Dask: a 1024×1000 float32 batch is
    4 MiB, above the default 1 MiB)."""
    mb = os.environ.get("BENCH_SMALL_PLAN_MB", "")
    return {"small_plan_bytes": int(float(mb) * (1 << 20))} if mb else {}


def case_read():
    """Every chunk of X and y once, through dflow's chunk reader."""
    import itertools

    import zarr

    from dflow.storage.chunks import block_sizes, chunk_io

    total, t0 = 0, time.perf_counter()
    for path in _paths():
        z = zarr.open_array(path, mode="r")
        cio = chunk_io(z)
        for coords in itertools.product(*[range(len(b)) for b in block_sizes(cio)]):
            total += cio.read(coords).nbytes
    return {"time": time.perf_counter() - t0, "bytes": total}


def case_read_pipeline():
    """Every row of X and y once through the input pipeline's own reader (from_zarr, unshuffled,
    its read-ahead threads), iterated without a Session or any compute."""
    import dflow as tf
    from dflow.data.node import IterContext

    xp, yp = _paths()
    total, t0 = 0, time.perf_counter()
    for block in tf.data.Dataset.from_zarr((xp, yp))._node.iterate(IterContext({}, 0)):
        total += sum(b.nbytes for b in block)
    return {"time": time.perf_counter() - t0, "bytes": total}


def _model(tf, x, y, d):
    w = tf.Variable(tf.zeros([d, 1]), name="w")
    b = tf.Variable(tf.zeros([1]), name="b")
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=tf.matmul(x, w) + b))
    return tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss), loss


def case_dflow():
    import zarr

    import dflow as tf

    batch, buffer = _params()
    xp, yp = _paths()
    n, d = zarr.open_array(xp, mode="r").shape
    ds = tf.data.Dataset.from_zarr((xp, yp)).shuffle(buffer, seed=1).batch(batch).prefetch(2)
    x, y = ds.make_one_shot_iterator().get_next()
    train, loss = _model(tf, x, y, d)
    steps = 0
    with tf.Session(**_session_kwargs()) as sess:
        sess.run(tf.global_variables_initializer())
        t0 = time.perf_counter()
        while True:
            try:
                _, last = sess.run([train, loss])
            except tf.errors.OutOfRangeError:
                break
            steps += 1
        t = time.perf_counter() - t0
    return {"time": t, "bytes": n * (d + 1) * 4, "steps": steps, "loss": float(last)}


def case_hand():
    import numpy as np
    import zarr

    import dflow as tf

    batch, _ = _params()
    xp, yp = _paths()
    zx, zy = zarr.open_array(xp, mode="r"), zarr.open_array(yp, mode="r")
    n, d = zx.shape
    x = tf.placeholder(tf.float32, [None, d])
    y = tf.placeholder(tf.float32, [None, 1])
    train, loss = _model(tf, x, y, d)
    rng = np.random.default_rng(1)
    rows = zx.chunks[0]
    steps = 0
    with tf.Session(**_session_kwargs()) as sess:
        sess.run(tf.global_variables_initializer())
        t0 = time.perf_counter()
        for c in rng.permutation(-(-n // rows)):
            xs, ys = zx[c * rows:(c + 1) * rows], zy[c * rows:(c + 1) * rows]
            perm = rng.permutation(len(xs))
            xs, ys = xs[perm], ys[perm]
            for i in range(0, len(xs), batch):
                _, last = sess.run([train, loss], {x: xs[i:i + batch], y: ys[i:i + batch]})
                steps += 1
        t = time.perf_counter() - t0
    return {"time": t, "bytes": n * (d + 1) * 4, "steps": steps, "loss": float(last)}


def case_tf1():
    """TF1's from_generator over zarr-python chunk reads (run under TF_PYTHON)."""
    import numpy as np
    import tensorflow.compat.v1 as tf
    import zarr

    tf.disable_eager_execution()
    batch, buffer = _params()
    xp, yp = _paths()
    zx, zy = zarr.open_array(xp, mode="r"), zarr.open_array(yp, mode="r")
    n, d = zx.shape
    rows = zx.chunks[0]

    def rows_gen():
        for c in np.random.default_rng(1).permutation(-(-n // rows)):
            xs, ys = zx[c * rows:(c + 1) * rows], zy[c * rows:(c + 1) * rows]
            yield from zip(xs, ys)

    ds = tf.data.Dataset.from_generator(rows_gen, (tf.float32, tf.float32), ([d], [1]))
    ds = ds.shuffle(buffer, seed=1).batch(batch).prefetch(2)
    x, y = tf.data.make_one_shot_iterator(ds).get_next()
    train, loss = _model(tf, x, y, d)
    steps = 0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        t0 = time.perf_counter()
        while True:
            try:
                _, last = sess.run([train, loss])
            except tf.errors.OutOfRangeError:
                break
            steps += 1
        t = time.perf_counter() - t0
    return {"time": t, "bytes": n * (d + 1) * 4, "steps": steps, "loss": float(last)}


def case_generate():
    """Writes the data (in a child: the parent's peak RSS would be inherited by the cases)."""
    from workload import generate

    return generate(os.environ["BENCH_DIR"], float(os.environ["BENCH_GB"]))


CASES = {"generate": case_generate, "read": case_read, "read_pipeline": case_read_pipeline, "dflow": case_dflow, "hand": case_hand, "tf1": case_tf1}


def _run(name, python=None):
    r = run_case(__file__, name, python=python, timeout=3600)
    if "error" in r:
        print(f"  {name}: FAILED {r['error']}", file=sys.stderr)
    return r


def _mbps(r):
    return r["bytes"] / r["time"] / 1e6 if "time" in r else None


def main(argv):
    if "--case" in argv:
        case_main(CASES, argv)
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gb", type=float, default=0.25, help="GB of X (the issue: 4)")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--buffer", type=int, default=10_000, help="shuffle buffer, rows")
    p.add_argument("--dir", default=None, help="where the data goes (default: a temporary folder, removed)")
    p.add_argument("--small-plan-mb", default="", help="Session(small_plan_bytes=...) of both dflow peers, "
                   "in MiB (default: the Session's default)")
    p.add_argument("--record", action="store_true")
    args = p.parse_args(argv)
    root = args.dir or tempfile.mkdtemp(prefix="dflow-bench-data-")
    try:
        os.environ.update(BENCH_DIR=root, BENCH_GB=str(args.gb))
        meta = _run("generate")
        if "error" in meta:
            return 1
        os.environ.update(BENCH_BATCH=str(args.batch), BENCH_BUFFER=str(args.buffer),
                          BENCH_SMALL_PLAN_MB=str(args.small_plan_mb))
        report = Report()
        report(machine_line())
        results = {"read (dflow chunk reader)": _run("read"),
                   "read (the pipeline's reader, read-ahead threads)": _run("read_pipeline"),
                   "dflow tf.data": _run("dflow"),
                   "hand loop (zarr-python + feed_dict)": _run("hand")}
        tfpy = tf_python()
        results["TF1 from_generator"] = _run("tf1", python=tfpy) if tfpy else {"error": "no TF_PYTHON"}
        report(f"one shuffled epoch, X {meta['n']}×{meta['d']} float32 + y, Zarr chunks of {meta['chunk_rows']} rows; "
               f"batch {args.batch}, shuffle buffer {args.buffer} rows, logistic regression, SGD {LEARNING_RATE}; "
               f"dflow Sessions: {_session_kwargs() or 'defaults'}")
        d = results["dflow tf.data"]
        rows = []
        for label, r in results.items():
            rows.append([label, fmt_time(r.get("time")), f"{_mbps(r) or 0:.0f}",
                         fmt_ratio(r.get("time"), d.get("time")), r.get("steps", "-"), f"{r['loss']:.4f}" if "loss" in r else "-",
                         f"{r.get('peak_rss_mb', 0):.0f}", r.get("error", "")[:80]])
        report(table(["peer", "epoch", "MB/s", "time ÷ dflow", "steps", "last loss", "peak RSS MiB", ""], rows))
        # the faster of the two reads: the chunk reader on one thread, or the pipeline's own reader
        reads = [r for k, r in results.items() if k.startswith("read") and "time" in r]
        read = min(reads, key=lambda r: r["time"]) if reads else {}
        hand = results["hand loop (zarr-python + feed_dict)"]

        def target(what, ok):
            report(f"  target {what}: " + ("not measured" if ok is None else "met" if ok else "MISSED"))

        both = "time" in d
        target(f"dflow peak RSS ≤ {RSS_TARGET_MB} MiB (got {d.get('peak_rss_mb', 0):.0f})",
               d["peak_rss_mb"] <= RSS_TARGET_MB if both else None)
        target(f"dflow throughput ≥ {READ_RATIO}× the faster read's (got {fmt_ratio(read.get('time'), d.get('time'))})",
               read["time"] / d["time"] >= READ_RATIO if both and "time" in read else None)
        target(f"dflow throughput ≥ {HAND_RATIO}× the hand loop's (got {fmt_ratio(hand.get('time'), d.get('time'))})",
               hand["time"] / d["time"] >= HAND_RATIO if both and "time" in hand else None)
        if args.record:
            record_run("bench_data (issue #15: tf.data epoch over Zarr)", "bench_data.py", argv, report.text)
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
