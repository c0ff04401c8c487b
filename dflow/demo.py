"""`python -m dflow.demo`: standardize a Zarr dataset chunk by chunk with a TF1-style graph.

Writes an n×d float32 Zarr v3 array (`--mb`, default 200 MB, row chunks) to a temporary folder,
builds one graph computing each column's mean and standard deviation and the standardized sum
(the sum over all entries of (X - mean) / std, which is 0 up to rounding), runs it on the threaded
Dask scheduler with a progress bar, and checks the figures against numpy streamed over the same
chunks. Exits 1 when the check fails.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

_COLUMNS_SHOWN = 5


def write_dataset(path, mb, cols, chunk_mb, seed=0):
    """Writes the demo array: column j ~ Normal(mean_j, std_j) with known means and stds.

    Returns (zarr array, true means, true stds). Rows are chunked so each chunk is ~`chunk_mb` MB.
    """
    import zarr

    rows = max(2, int(mb * 1e6) // (4 * cols))
    chunk_rows = max(1, min(rows, int(chunk_mb * 1e6) // (4 * cols)))
    arr = zarr.create_array(store=str(path), shape=(rows, cols), chunks=(chunk_rows, cols),
                            dtype="float32", overwrite=True)
    means = np.linspace(-5.0, 5.0, cols)
    stds = np.linspace(0.5, 3.0, cols)
    rng = np.random.default_rng(seed)
    for start in range(0, rows, chunk_rows):
        stop = min(rows, start + chunk_rows)
        block = rng.standard_normal((stop - start, cols), dtype=np.float32)
        arr[start:stop] = (block * stds + means).astype(np.float32)
    return arr, means, stds


def build_graph(cols):
    """The standardization graph: returns (X placeholder, mean, std, standardized sum).

    Statistics accumulate in float64 (the data is float32): the standardized sum cancels to 0, and
    float32 accumulation over ~10^8 entries would leave rounding noise larger than the answer.
    """
    import dflow as tf

    x = tf.placeholder(tf.float32, [None, cols], name="X")
    x64 = tf.cast(x, tf.float64)
    mean = tf.reduce_mean(x64, axis=0, name="mean")
    centered = x64 - mean
    std = tf.sqrt(tf.reduce_mean(tf.square(centered), axis=0), name="std")
    total = tf.reduce_sum(centered / std, name="standardized_sum")
    return x, mean, std, total


def numpy_check(arr):
    """The same three figures with numpy, streaming the Zarr chunks (two passes, float64)."""
    rows, cols = arr.shape
    step = arr.chunks[0]
    sums = np.zeros(cols)
    for start in range(0, rows, step):
        sums += np.sum(arr[start:start + step], axis=0, dtype=np.float64)
    mean = sums / rows
    sq = np.zeros(cols)
    centered_sums = np.zeros(cols)
    for start in range(0, rows, step):
        c = arr[start:start + step].astype(np.float64) - mean
        sq += np.sum(c * c, axis=0)
        centered_sums += np.sum(c, axis=0)
    std = np.sqrt(sq / rows)
    return mean, std, float(np.sum(centered_sums / std))


def _fmt(values):
    return "[" + ", ".join(f"{v:8.4f}" for v in values[:_COLUMNS_SHOWN]) + (", ...]" if len(values) >
                                                                           _COLUMNS_SHOWN else "]")


def run(mb=200.0, cols=100, chunk_mb=16.0, workdir=None, progress=True, check=True):
    """Runs the demo; returns True when the numpy check passes (or is skipped)."""
    import dask.diagnostics

    import dflow as tf

    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        path = Path(tmp) / "data.zarr"
        t0 = time.perf_counter()
        arr, true_means, true_stds = write_dataset(path, mb, cols, chunk_mb)
        rows = arr.shape[0]
        nbytes = rows * cols * 4
        n_chunks = -(-rows // arr.chunks[0])
        print(f"wrote {path}: {rows:,} × {cols} float32 = {nbytes / 1e6:.0f} MB in {n_chunks} row "
              f"chunks of {arr.chunks[0]:,} rows ({time.perf_counter() - t0:.1f} s)")

        x, mean, std, total = build_graph(cols)
        print("graph: mean = reduce_mean(X, 0); std = sqrt(reduce_mean(square(X - mean), 0)); "
              "standardized_sum = reduce_sum((X - mean) / std)")
        with tf.Session(scheduler="threads") as sess:
            t0 = time.perf_counter()
            bar = dask.diagnostics.ProgressBar(dt=0.2) if progress else _nothing()
            with bar:
                m, s, z = sess.run([mean, std, total], feed_dict={x: arr})
            elapsed = time.perf_counter() - t0
        print(f"mean (first {_COLUMNS_SHOWN} columns):      {_fmt(m)}  (generated with {_fmt(true_means)})")
        print(f"std  (first {_COLUMNS_SHOWN} columns):      {_fmt(s)}  (generated with {_fmt(true_stds)})")
        print(f"standardized sum: {z:.6g}  (0 up to rounding over {rows * cols:,} entries)")
        print(f"time: {elapsed:.2f} s on the threaded scheduler ({nbytes / 1e6 / elapsed:.0f} MB/s); "
              f"peak RSS {_peak_rss_mb():.0f} MiB")

        if not check:
            return True
        t0 = time.perf_counter()
        np_mean, np_std, np_z = numpy_check(arr)
        err_mean = float(np.max(np.abs(m - np_mean) / np.maximum(np.abs(np_mean), 1.0)))
        err_std = float(np.max(np.abs(s - np_std) / np_std))
        # Each of the n·d terms is O(1) and accumulates float64 rounding: allow 1e-9 per term.
        z_tol = 1e-9 * rows * cols
        ok = err_mean < 1e-9 and err_std < 1e-9 and abs(z - np_z) <= z_tol
        print(f"check against numpy over all {rows:,} rows ({time.perf_counter() - t0:.1f} s): "
              f"mean rel err {err_mean:.1e}, std rel err {err_std:.1e}, standardized sum numpy "
              f"{np_z:.6g} (|diff| ≤ {z_tol:.1g}): {'OK' if ok else 'MISMATCH'}")
        return ok


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m dflow.demo", description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=float, default=200.0, help="dataset size in MB (default 200)")
    p.add_argument("--cols", type=int, default=100, help="columns (default 100)")
    p.add_argument("--chunk-mb", type=float, default=16.0, help="MB per row chunk (default 16)")
    p.add_argument("--dir", default=None, help="where to make the temporary folder (default: system temp)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-check", action="store_true", help="skip the numpy check")
    args = p.parse_args(argv)
    ok = run(args.mb, args.cols, args.chunk_mb, args.dir, progress=not args.no_progress,
             check=not args.no_check)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
