"""The issue-31 benchmark: tf.keras `fit` in dflow against tf.keras in TensorFlow (TF_PYTHON).

    python benchmarks/bench_keras.py [--epochs 3] [--zarr-mb 512] [--keep-blas-env] [--record]
                                                                # TF_PYTHON=... adds TF

a) `fit` on numpy arrays, per epoch (the median of `--epochs` epochs after a warm-up epoch):
   an MLP (784-128 relu-10 softmax, Adam, sparse categorical cross-entropy, 60,000 samples,
   batch 128) and a small CNN (conv 3×3×16 relu, max-pool 2, conv 3×3×32 relu, max-pool 2,
   dense 10 softmax; 10,000 28×28×1 images, batch 128). dflow's path is the user's: the default
   Session (`keras.backend.get_session()`), TF's is tf.keras (tf_keras in TF1 graph mode).
   Target: dflow ≥ 0.7× TF's samples/s.
b) `fit` over Zarr arrays (`--zarr-mb` of float32 features, chunks of 8,192 rows, the MLP, batch
   256, one epoch): dflow's `model.fit(zarr_x, zarr_y)` (it reads a chunk of rows at a time) against
   tf.keras's `fit_generator` over a hand-written generator slicing the same Zarr arrays batch by
   batch (what a Keras user writes for data that does not fit). Target: ≥ 1.5× the generator's
   samples/s; peak RSS of each.

Every case runs in its own interpreter (benchmarks/harness.py); module-level imports are standard
library only so TF's interpreter can load this file.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from harness import Report, case_main, fmt_ratio, machine_line, record_run, run_case, table  # noqa: E402
from harness import tf_python as find_tf_python  # noqa: E402

FIT_TARGET, ZARR_TARGET = 0.7, 1.5
ZARR_CHUNK, ZARR_BATCH = 8192, 256


def _import(kind):
    """(the TF1-style module, keras) of dflow or of TensorFlow."""
    if kind == "tf":
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()
        return tf, tf.keras
    import dflow as tf

    return tf, tf.keras


def _mlp(keras):
    return keras.Sequential([keras.layers.Dense(128, activation="relu", input_shape=(784,)),
                             keras.layers.Dense(10, activation="softmax")])


def _cnn(keras):
    return keras.Sequential([
        keras.layers.Conv2D(16, 3, activation="relu", input_shape=(28, 28, 1)),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(10, activation="softmax"),
    ])


def _data(n, shape, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng.random((n,) + shape, dtype=np.float32), rng.integers(0, 10, n)


def _fit_case(kind, build, n, shape):
    import statistics
    import time

    tf, keras = _import(kind)
    x, y = _data(n, shape)
    model = build(keras)
    model.compile("adam", "sparse_categorical_crossentropy")
    model.fit(x[:1280], y[:1280], batch_size=128, epochs=1, verbose=0)  # warm-up: graph, session, plans
    epochs = int(os.environ["BENCH_EPOCHS"])
    times = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        model.fit(x, y, batch_size=128, epochs=1, verbose=0)
        times.append(time.perf_counter() - t0)
    return {"epoch_s": statistics.median(times), "samples": n}


def _zarr_arrays():
    import zarr

    path = os.environ["BENCH_ZARR"]
    return zarr.open(path + "/x", mode="r"), zarr.open(path + "/y", mode="r")


def _zarr_case(kind):
    import time

    tf, keras = _import(kind)
    x, y = _zarr_arrays()
    model = _mlp(keras)
    model.compile("adam", "sparse_categorical_crossentropy")
    n = x.shape[0]
    t0 = time.perf_counter()
    if kind == "tf":
        def batches():  # the hand-written generator a Keras user writes over Zarr
            while True:
                for i in range(0, n, ZARR_BATCH):
                    yield x[i:i + ZARR_BATCH], y[i:i + ZARR_BATCH]
        model.fit_generator(batches(), steps_per_epoch=-(-n // ZARR_BATCH), epochs=1, verbose=0)
    else:
        model.fit(x, y, batch_size=ZARR_BATCH, epochs=1, shuffle=False, verbose=0)
    return {"epoch_s": time.perf_counter() - t0, "samples": n}


CASES = {
    "mlp_dflow": lambda: _fit_case("dflow", _mlp, 60000, (784,)),
    "mlp_tf": lambda: _fit_case("tf", _mlp, 60000, (784,)),
    "cnn_dflow": lambda: _fit_case("dflow", _cnn, 10000, (28, 28, 1)),
    "cnn_tf": lambda: _fit_case("tf", _cnn, 10000, (28, 28, 1)),
    "zarr_dflow": lambda: _zarr_case("dflow"),
    "zarr_tf": lambda: _zarr_case("tf"),
}


def _write_zarr(path, mb):
    import numpy as np
    import zarr

    rows = (mb << 20) // (784 * 4) // ZARR_CHUNK * ZARR_CHUNK
    x = zarr.open(path + "/x", mode="w", shape=(rows, 784), chunks=(ZARR_CHUNK, 784), dtype="f4")
    y = zarr.open(path + "/y", mode="w", shape=(rows,), chunks=(ZARR_CHUNK,), dtype="i8")
    rng = np.random.default_rng(0)
    for start in range(0, rows, ZARR_CHUNK):
        x[start:start + ZARR_CHUNK] = rng.random((ZARR_CHUNK, 784), dtype=np.float32)
        y[start:start + ZARR_CHUNK] = rng.integers(0, 10, ZARR_CHUNK)
    return rows


def main(argv):
    epochs = int(argv[argv.index("--epochs") + 1]) if "--epochs" in argv else 3
    zarr_mb = int(argv[argv.index("--zarr-mb") + 1]) if "--zarr-mb" in argv else 512
    os.environ["BENCH_EPOCHS"] = str(epochs)
    # as bench_interop: an OPENBLAS_CORETYPE older than the CPU (set on some machines here) runs
    # numpy's Haswell kernels; TF's oneDNN ignores it. Unset for every peer unless --keep-blas-env.
    dropped = [] if "--keep-blas-env" in argv else [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
                                                    if os.environ.pop(v, None) is not None]
    tf_py = find_tf_python()
    script = Path(__file__).resolve()
    report = Report()
    report(f"tf.keras fit: dflow vs tf.keras (TF via {tf_py or 'nobody: set TF_PYTHON'}); {machine_line()}")
    rows = []
    for model in ("mlp", "cnn"):
        mine = run_case(script, f"{model}_dflow")
        theirs = run_case(script, f"{model}_tf", python=tf_py) if tf_py else {"error": "no TF_PYTHON"}
        rate = lambda r: r["samples"] / r["epoch_s"] if "epoch_s" in r else None  # noqa: E731
        rows.append([model.upper() + " on numpy", f"{rate(mine):,.0f}" if rate(mine) else mine.get("error"),
                     f"{rate(theirs):,.0f}" if rate(theirs) else theirs.get("error"),
                     fmt_ratio(rate(mine), rate(theirs)), f"≥ {FIT_TARGET}×",
                     f"{mine.get('peak_rss_mb', 0):.0f} / {theirs.get('peak_rss_mb', 0):.0f}"])
    tmp = tempfile.mkdtemp(prefix="bench_keras_")
    try:
        os.environ["BENCH_ZARR"] = tmp
        n = _write_zarr(tmp, zarr_mb)
        mine = run_case(script, "zarr_dflow")
        theirs = run_case(script, "zarr_tf", python=tf_py) if tf_py else {"error": "no TF_PYTHON"}
        rate = lambda r: r["samples"] / r["epoch_s"] if "epoch_s" in r else None  # noqa: E731
        rows.append([f"MLP over {zarr_mb} MB of Zarr ({n:,} rows)",
                     f"{rate(mine):,.0f}" if rate(mine) else mine.get("error"),
                     f"{rate(theirs):,.0f} (generator)" if rate(theirs) else theirs.get("error"),
                     fmt_ratio(rate(mine), rate(theirs)), f"≥ {ZARR_TARGET}×",
                     f"{mine.get('peak_rss_mb', 0):.0f} / {theirs.get('peak_rss_mb', 0):.0f}"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(table(["fit", "dflow samples/s", "TF samples/s", "dflow / TF", "target", "peak RSS MiB dflow / TF"],
                 rows))
    report(f"(median of {epochs} epochs after a warm-up; batch 128 on numpy, {ZARR_BATCH} over Zarr"
           + (f"; unset for every peer: {', '.join(dropped)})" if dropped else ")"))
    if "--record" in argv:
        record_run("tf.keras fit (issue 31)", "bench_keras.py", argv[1:], report.text)


if __name__ == "__main__":
    if "--case" in sys.argv:
        case_main(CASES, sys.argv)
    else:
        main(sys.argv)
