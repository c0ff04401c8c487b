"""An epoch over a CSV file larger than the memory budget: TextLineDataset + decode_csv + batch (#28).

    TF_PYTHON=/path/to/python python benchmarks/bench_csv.py [--gb 1] [--batch 4096] [--record]
    python benchmarks/bench_csv.py --quick          # 0.05 GB

A CSV file of `--gb` GB (a header line, then rows of 10 float features and an integer label,
written by numpy with 6 decimals) is read once by each peer, each batch of `--batch` rows fed to
the same small model (logits = x @ W + b, W 10x3; the sum of the mean softmax cross-entropy over
the batches is the check):
- dflow: `tf.data.TextLineDataset(path).skip(1).batch(B).map(decode_csv)` → `make_one_shot_iterator`
  → one `Session.run` of the model per batch, until OutOfRangeError;
- pandas: `pd.read_csv(path, chunksize=B)` → numpy for the same model;
- TF1 (`TF_PYTHON`): the same tf.data pipeline and model in TensorFlow's compat.v1 graph mode.

Targets: dflow's throughput ≥ 1.0× pandas' and ≥ 0.8× TF1's; dflow's peak RSS ≤ 512 MB. Each peer
runs in its own interpreter (benchmarks/harness.py); the peak RSS column is that child's.
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

FEATURES, CLASSES = 10, 3
PANDAS_TARGET, TF_TARGET, RSS_TARGET_MB = 1.0, 0.8, 512


def _path():
    return os.path.join(os.environ["BENCH_DIR"], "data.csv")


def _weights():
    import numpy as np

    rng = np.random.default_rng(1)
    return rng.standard_normal((FEATURES, CLASSES)).astype(np.float32), rng.standard_normal(CLASSES).astype(np.float32)


def case_data():
    """The CSV file, written block by block (bounded memory)."""
    import numpy as np

    target = int(float(os.environ["BENCH_GB"]) * 1e9)
    rng = np.random.default_rng(0)
    rows = 0
    with open(_path(), "w") as f:
        f.write(",".join([f"x{i}" for i in range(FEATURES)] + ["label"]) + "\n")
        while f.tell() < target:
            x = rng.standard_normal((20000, FEATURES))
            y = rng.integers(0, CLASSES, 20000)
            block = np.column_stack([x, y])
            np.savetxt(f, block, fmt=["%.6f"] * FEATURES + ["%d"], delimiter=",")
            rows += len(block)
    return {"rows": rows, "bytes": os.path.getsize(_path())}


def _model(tf, x, label):
    w, b = _weights()
    logits = tf.matmul(x, tf.constant(w)) + tf.constant(b)
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=label, logits=logits))


def _tf_epoch(tf):
    import time

    batch = int(os.environ["BENCH_BATCH"])
    defaults = [[0.0]] * FEATURES + [[0]]

    def parse(lines):
        cols = tf.decode_csv(lines, record_defaults=defaults)
        return tf.stack(cols[:FEATURES], axis=1), cols[FEATURES]

    ds = tf.data.TextLineDataset(_path()).skip(1).batch(batch).map(parse).prefetch(1)
    x, label = ds.make_one_shot_iterator().get_next()
    loss = _model(tf, x, label)
    total, steps = 0.0, 0
    with tf.Session() as sess:
        t0 = time.perf_counter()
        while True:
            try:
                total += float(sess.run(loss))
                steps += 1
            except tf.errors.OutOfRangeError:
                break
        seconds = time.perf_counter() - t0
    return {"seconds": seconds, "steps": steps, "loss_sum": total}


def case_dflow():
    import dflow as tf

    return _tf_epoch(tf)


def case_tf1():
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    return _tf_epoch(tf)


def case_pandas():
    import time

    import numpy as np
    import pandas as pd

    w, b = _weights()
    batch = int(os.environ["BENCH_BATCH"])
    total, steps = 0.0, 0
    t0 = time.perf_counter()
    for chunk in pd.read_csv(_path(), chunksize=batch, dtype={f"x{i}": np.float32 for i in range(FEATURES)}):
        x = chunk.iloc[:, :FEATURES].to_numpy(np.float32)
        y = chunk["label"].to_numpy()
        logits = x @ w + b
        m = logits.max(1, keepdims=True)
        lse = np.log(np.exp(logits - m).sum(1)) + m[:, 0]
        total += float(np.mean(lse - logits[np.arange(len(y)), y]))
        steps += 1
    return {"seconds": time.perf_counter() - t0, "steps": steps, "loss_sum": total}


CASES = {"data": case_data, "dflow": case_dflow, "tf1": case_tf1, "pandas": case_pandas}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--quick", action="store_true", help="0.05 GB")
    parser.add_argument("--dir", default=None)
    parser.add_argument("--record", action="store_true", help="append the output to benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    if args.quick:
        args.gb = 0.05
    d = args.dir or tempfile.mkdtemp(prefix="dflow-bench-csv-")
    os.environ.update(BENCH_DIR=d, BENCH_GB=str(args.gb), BENCH_BATCH=str(args.batch))
    report = Report()
    try:
        data = run_case(__file__, "data", timeout=3600)
        if "error" in data:
            report(f"could not write the CSV: {data['error']}")
            return
        report(f"an epoch over {data['bytes'] / 1e9:.2f} GB of CSV ({data['rows']:,} rows, {FEATURES} float features "
               f"and a label), batches of {args.batch}; {machine_line()}")
        tf_py = find_tf_python()
        results = {"dflow": run_case(__file__, "dflow", timeout=3600),
                   "pandas": run_case(__file__, "pandas", timeout=3600),
                   "TF1": run_case(__file__, "tf1", python=tf_py, timeout=3600) if tf_py else {"error": "no TF_PYTHON"}}
        rows = []
        for name, r in results.items():
            if "error" in r:
                rows.append([name, r["error"][:90], "", "", "", ""])
                continue
            rows.append([name, fmt_time(r["seconds"]), f"{data['bytes'] / 1e6 / r['seconds']:.1f}",
                         f"{data['rows'] / r['seconds']:,.0f}", f"{r['peak_rss_mb']:.0f}", f"{r['loss_sum']:.4f}"])
        report(table(["peer", "epoch", "MB/s", "rows/s", "peak RSS MiB", "sum of batch losses"], rows))
        d_ = results["dflow"]
        if "error" not in d_:
            for name, target in (("pandas", PANDAS_TARGET), ("TF1", TF_TARGET)):
                r = results[name]
                if "error" in r:
                    continue
                speed = r["seconds"] / d_["seconds"]
                report(f"dflow throughput / {name}'s: {speed:.2f}× (target ≥ {target:g}×: "
                       f"{'met' if speed >= target else 'missed'})")
            report(f"dflow peak RSS {d_['peak_rss_mb']:.0f} MiB (target ≤ {RSS_TARGET_MB} MB: "
                   f"{'met' if d_['peak_rss_mb'] <= RSS_TARGET_MB else 'missed'}); dflow / pandas time "
                   f"{fmt_ratio(d_['seconds'], results['pandas'].get('seconds'))}")
        if args.record:
            record_run("bench_csv", "bench_csv.py", argv, report.text)
    finally:
        if not args.dir:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    if "--case" in sys.argv:
        case_main(CASES, sys.argv)
    else:
        main(sys.argv[1:])
