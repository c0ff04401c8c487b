"""`python -m dflow.demo`: standardize a Zarr array out of core, then train logistic regression on it.

The workload of issue 6 at `--gb` GB (default 1): X is an n×d float32 Zarr array (d = 1000, row
chunks of 25,000 rows), y its n 0/1 labels, both written to a temporary folder. Then, as TF1
programs with `import dflow as tf` on the threaded scheduler:
1. Z = (X − mean(X, 0)) / std(X, 0), streamed to Zarr with `tf.io.write_zarr`;
2. 3 full-batch gradient-descent steps (learning rate 0.5) of logistic regression on Z read back,
   with `tf.train.GradientDescentOptimizer(0.5).minimize(mean sigmoid cross-entropy)`.
It prints a progress bar, the loss per step, the time, the peak RSS and the memory budget, writes
a PNG plot of the loss per step (when matplotlib is installed) and TensorBoard summaries of the
training (loss, a histogram of w, the graph) to `--out`/logs, and checks w, b and the losses
against numpy (float64) streamed over the same chunks. Exits 1 when the check fails, 2 when the
memory budget is too small for one task (ResourceExhaustedError, before anything runs).
"""

from __future__ import annotations

import argparse
import inspect
import multiprocessing
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

import dflow as tf
from dflow.errors import ResourceExhaustedError

STEPS = 3
LEARNING_RATE = 0.5
W_TOL = 1e-3  # dflow's float32 w against the float64 reference (the tolerance)
LOSS_TOL = 1e-4


# ---- data ------------------------------------------------------------------------------------
def write_dataset(folder, n, d=1000, chunk_rows=25_000, seed=0, workers=2):
    """Writes `folder`/X.zarr (n×d float32, column j ~ Normal(mean_j, std_j), means in [-5, 5],
    stds in [0.5, 3]) and `folder`/y.zarr (n×1 float32 labels of a noisy linear rule on the
    standardized columns), in row chunks of `chunk_rows`. Returns (X path, y path).

    Each chunk is drawn from its own generator seeded by (seed, chunk index), so the data does not
    depend on `workers` (threads writing chunks at once).
    """
    from concurrent.futures import ThreadPoolExecutor

    import zarr

    folder = Path(folder)
    chunk_rows = max(1, min(chunk_rows, n))
    x = zarr.create_array(str(folder / "X.zarr"), shape=(n, d), chunks=(chunk_rows, d), dtype="float32",
                          overwrite=True)
    y = zarr.create_array(str(folder / "y.zarr"), shape=(n, 1), chunks=(chunk_rows, 1), dtype="float32",
                          overwrite=True)
    means = np.linspace(-5.0, 5.0, d).astype(np.float32)
    stds = np.linspace(0.5, 3.0, d).astype(np.float32)
    w_true = (np.random.default_rng(seed).standard_normal((d, 1)) * 2 / np.sqrt(d)).astype(np.float32)

    def write_chunk(i):
        rng = np.random.default_rng([seed, i])
        start, stop = i * chunk_rows, min(n, (i + 1) * chunk_rows)
        z = rng.standard_normal((stop - start, d), dtype=np.float32)
        score = z @ w_true + 0.5 * rng.standard_normal((stop - start, 1), dtype=np.float32)
        y[start:stop] = (score > 0).astype(np.float32)
        z *= stds
        z += means
        x[start:stop] = z

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(write_chunk, range(-(-n // chunk_rows))))
    return str(folder / "X.zarr"), str(folder / "y.zarr")


def rows_for(gb, d=1000):
    """Rows n of an n×d float32 array of `gb` GB (10^9 bytes)."""
    return max(2, int(round(gb * 1e9 / (4 * d))))


# ---- the dflow programs ----------------------------------------------------------------------
def session_kwargs(memory_budget):
    """Session arguments: the threaded scheduler and `memory_budget` (when this dflow has it)."""
    kw = {"scheduler": "threads"}
    if memory_budget is not None and "memory_budget" in inspect.signature(tf.Session).parameters:
        kw["memory_budget"] = memory_budget
    return kw


def standardize(x_path, z_path, session_kw, progress=False, on_plan=None):
    """Writes Z = (X − mean(X, 0)) / std(X, 0) to `z_path`; returns the seconds it took.

    `on_plan(text)`, if given, receives `Session.explain` of the write before it runs.
    """
    with tf.Graph().as_default():
        X = tf.io.read_zarr(x_path)
        mean = tf.reduce_mean(X, 0)
        std = tf.sqrt(tf.reduce_mean(tf.square(X - mean), 0))
        write = tf.io.write_zarr((X - mean) / std, z_path, overwrite=True)
        with tf.Session(**session_kw) as sess:
            if on_plan is not None and hasattr(sess, "explain"):
                on_plan(sess.explain(write))
            t0 = time.perf_counter()
            with _task_bar("standardize", progress, _tasks(sess, write)):
                sess.run(write)
            return time.perf_counter() - t0


def train(z_path, y_path, session_kw, steps=STEPS, lr=LEARNING_RATE, progress=False, on_step=None, logdir=None):
    """Full-batch gradient descent of logistic regression on Z (from w = 0, b = 0); with `logdir`,
    the loss and a histogram of w at each step, and the graph, go to TensorBoard event files there.

    Returns (losses, w, b, seconds): losses[k] is the loss before step k's update (TF1's
    `sess.run([train, loss])`), w the d×1 float32 weights after the last step.
    """
    with tf.Graph().as_default():
        Z = tf.io.read_zarr(z_path)
        y = tf.io.read_zarr(y_path)
        w = tf.Variable(tf.zeros([Z.shape[1], 1]), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        logits = tf.matmul(Z, w) + b
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
        train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss)
        fetches = [train_op, loss]
        if logdir is not None:
            tf.summary.scalar("loss", loss)
            tf.summary.histogram("weights", w)
            fetches.append(tf.summary.merge_all())
        losses = []
        with tf.Session(**session_kw) as sess:
            writer = tf.summary.FileWriter(str(logdir), sess.graph) if logdir is not None else None
            sess.run(tf.global_variables_initializer())
            t0 = time.perf_counter()
            with _task_bar("train", progress, steps * _tasks(sess, fetches)) as bar:
                for k in range(steps):
                    values = sess.run(fetches)
                    value = values[1]
                    if writer is not None:
                        writer.add_summary(values[2], k)
                    losses.append(float(value))
                    if on_step is not None:
                        on_step(k, float(value), time.perf_counter() - t0, bar)
            seconds = time.perf_counter() - t0
            if writer is not None:
                writer.close()
            w_value, b_value = sess.run([w, b])
    return losses, w_value, b_value, seconds


# ---- the check -------------------------------------------------------------------------------
def numpy_reference(x_path, y_path, steps=STEPS, lr=LEARNING_RATE, workers=2):
    """The same workload in float64 numpy, streamed chunk by chunk and each chunk in float64 slices
    of 2,048 rows (Z is recomputed, never stored), the chunks of each pass on `workers` threads
    (numpy and the Zarr decoder release the GIL): the process's peak stays dflow's, not the check's.

    Returns (losses, w, b) as `train` does.
    """
    from concurrent.futures import ThreadPoolExecutor

    import zarr

    X = zarr.open_array(x_path, mode="r")
    Y = zarr.open_array(y_path, mode="r")
    n, d = X.shape
    step = X.chunks[0]
    blocks = [(s, min(n, s + step)) for s in range(0, n, step)]

    rows = 2048  # float64 copies a slice of a chunk at a time: the check holds no more than dflow does

    def slices(block):
        x = X[block[0]:block[1]]  # one read of the chunk (float32), then float64 slices of it
        y = Y[block[0]:block[1]]
        for i in range(0, len(x), rows):
            yield x[i:i + rows].astype(np.float64), y[i:i + rows].astype(np.float64)

    def sums(block):
        s1, s2 = 0.0, 0.0
        for x, _ in slices(block):
            s1, s2 = s1 + x.sum(axis=0), s2 + np.square(x).sum(axis=0)
        return s1, s2

    def grads(block, mean, std, w, b):
        total, gw, gb = 0.0, 0.0, 0.0
        for x, yy in slices(block):
            z = (x - mean) / std
            logits = z @ w + b
            total += float(np.sum(np.maximum(logits, 0) - logits * yy + np.log1p(np.exp(-np.abs(logits)))))
            err = 1 / (1 + np.exp(-logits)) - yy
            gw, gb = gw + z.T @ err, gb + float(err.sum())
        return total, gw, gb

    with ThreadPoolExecutor(workers) as pool:
        parts = list(pool.map(sums, blocks))
        s1, s2 = sum(p[0] for p in parts), sum(p[1] for p in parts)
        mean = s1 / n
        std = np.sqrt(np.maximum(s2 / n - mean * mean, 0.0))
        w, b = np.zeros((d, 1)), 0.0
        losses = []
        for _ in range(steps):
            parts = list(pool.map(lambda blk: grads(blk, mean, std, w, b), blocks))  # noqa: B023 - used at once
            total = sum(p[0] for p in parts)
            gw, gb = sum(p[1] for p in parts), sum(p[2] for p in parts)
            losses.append(total / n)
            w, b = w - lr * gw / n, b - lr * gb / n
    return losses, w, b


def plot_losses(losses, path, reference=None):
    """Writes a PNG of the loss per step to `path`; returns the path, or None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(5, 3.5))
    steps = range(1, len(losses) + 1)
    ax.plot(steps, losses, "o-", label="dflow")
    if reference is not None:
        ax.plot(steps, reference, "x--", label="numpy (float64)")
    ax.set_xlabel("gradient-descent step")
    ax.set_ylabel("mean sigmoid cross-entropy")
    ax.set_xticks(list(steps))
    ax.set_title("logistic regression on standardized Z")
    ax.legend()
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# ---- running ---------------------------------------------------------------------------------
def run(gb=1.0, d=1000, chunk_rows=25_000, memory_budget="1GB", workdir=None, out_dir=None, progress=True,
        check=True):
    """Runs the demo; returns True when the numpy check passes (or is skipped)."""
    session_kw = session_kwargs(memory_budget)
    out_dir = Path(out_dir) if out_dir is not None else Path(tempfile.gettempdir()) / "dflow-demo"
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        n = rows_for(gb, d)
        t0 = time.perf_counter()
        # generated in a child process, so that this one's peak RSS is dflow's alone
        gen = multiprocessing.get_context("spawn").Process(target=write_dataset, args=(tmp, n, d, chunk_rows))
        gen.start()
        gen.join()
        if gen.exitcode != 0:
            raise RuntimeError(f"generating the data failed (exit {gen.exitcode})")
        x_path, y_path = str(Path(tmp) / "X.zarr"), str(Path(tmp) / "y.zarr")
        z_path = str(Path(tmp) / "Z.zarr")
        rows = min(chunk_rows, n)
        print(f"wrote {x_path}: {n:,} × {d} float32 = {n * d * 4 / 1e9:.2f} GB in {-(-n // rows)} row chunks "
              f"of {rows:,} rows, and y.zarr ({time.perf_counter() - t0:.1f} s)")
        budget = session_kw.get("memory_budget")
        print(f"Session(scheduler='threads', memory_budget={budget!r})" if budget is not None else
              "Session(scheduler='threads'); memory budget: none")

        print("1. standardize: Z = (X - reduce_mean(X, 0)) / sqrt(reduce_mean(square(X - mean), 0)) "
              "-> io.write_zarr")
        t_std = standardize(x_path, z_path, session_kw, progress, on_plan=lambda text: print(_indent(text)))
        print(f"   standardized in {t_std:.1f} s")

        print(f"2. train: {STEPS} steps of GradientDescentOptimizer({LEARNING_RATE}).minimize(mean sigmoid "
              "cross-entropy) on Z read back")

        def on_step(k, value, elapsed, bar):
            (bar.write if bar is not None else print)(f"   step {k + 1}/{STEPS}: loss {value:.6f}  "
                                                      f"({elapsed:.1f} s)")

        logdir = out_dir / "logs" / time.strftime("run-%Y%m%d-%H%M%S")  # one TensorBoard run per demo
        losses, w, b, t_train = train(z_path, y_path, session_kw, progress=progress, on_step=on_step,
                                      logdir=logdir)
        total = t_std + t_train
        rss = peak_rss_mb()
        print(f"time: {total:.1f} s ({t_std:.1f} s standardize + {t_train:.1f} s train)")
        print(f"peak RSS: {rss:.0f} MiB for {n * d * 4 / 2**20:.0f} MiB of data; memory budget: "
              + (f"{budget}" if budget is not None else "none"))

        reference, ok = None, True
        if check:
            t0 = time.perf_counter()
            # in a child process too, as the data's generation: this process's peak RSS stays dflow's
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
                reference, w_ref, b_ref = pool.submit(numpy_reference, x_path, y_path).result()
            err_w = float(max(np.max(np.abs(w.ravel() - w_ref.ravel())), abs(float(b[0]) - b_ref)))
            err_loss = float(np.max(np.abs(np.array(losses) - np.array(reference))))
            ok = err_w <= W_TOL and err_loss <= LOSS_TOL
            print(f"check against numpy (float64, streamed, in a child process; {time.perf_counter() - t0:.1f} s): max |w - w_numpy| "
                  f"{err_w:.1e} (≤ {W_TOL:g}), max loss diff {err_loss:.1e} (≤ {LOSS_TOL:g}): "
                  f"{'OK' if ok else 'MISMATCH'}")
        png = plot_losses(losses, out_dir / "loss.png", reference)
        print(f"plot: {png}" if png else "plot: skipped (matplotlib is not installed: pip install matplotlib)")
        print(f"summaries (loss, histogram of w, the graph) in {logdir}: tensorboard --logdir {logdir.parent}")
        return ok


def _tasks(sess, fetches):
    """The Dask tasks one run of `fetches` executes (None for a dflow without the count)."""
    return sess.count_tasks(fetches) if hasattr(sess, "count_tasks") else None


def _task_bar(desc, enabled, total=None):
    """A tqdm bar of the Dask tasks of every scheduler call (stage) inside the block. `total` (the
    plans' task count over all the block's runs) sizes it up front, so the bar only moves forward;
    a stage with more tasks than counted grows it."""
    if not enabled:
        return _Nothing()
    from dask.callbacks import Callback
    from tqdm import tqdm

    class TaskBar(Callback):
        def __enter__(self):
            self.bar = tqdm(desc=f"   {desc}", total=total or 0, unit="task", file=sys.stdout, leave=True)
            return super().__enter__()

        def __exit__(self, exc_type, *exc):
            if exc_type is None and self.bar.total and self.bar.n < self.bar.total:
                self.bar.update(self.bar.total - self.bar.n)  # tasks culled at run time: the block is done
            self.bar.close()
            return super().__exit__(exc_type, *exc)

        def write(self, text):
            self.bar.write(text, file=sys.stdout)

        def _start_state(self, dsk, state):
            pending = len(state["ready"]) + len(state["waiting"])
            if self.bar.n + pending > self.bar.total and not total:
                self.bar.total = self.bar.n + pending
                self.bar.refresh()

        def _posttask(self, key, result, dsk, state, worker_id):
            if self.bar.n >= self.bar.total:
                self.bar.total = self.bar.n + 1
            self.bar.update(1)

    return TaskBar()


def _indent(text, prefix="   "):
    return "\n".join(prefix + line for line in text.splitlines())


class _Nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def peak_rss_mb():
    """This process's peak resident set size in MiB (Linux reports ru_maxrss in KiB)."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / (1 << 20) if sys.platform == "darwin" else kb / 1024


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m dflow.demo", description=__doc__.splitlines()[0])
    p.add_argument("--gb", type=float, default=None, help="size of X in GB (default 1)")
    p.add_argument("--mb", type=float, default=None, help=argparse.SUPPRESS)  # older spelling of the size
    p.add_argument("--d", type=int, default=1000, help="columns (default 1000)")
    p.add_argument("--chunk-rows", type=int, default=25_000, help="rows per chunk (default 25,000)")
    p.add_argument("--memory-budget", default="1GB", help="Session(memory_budget=...), 'none' for no budget "
                   "(default 1GB)")
    p.add_argument("--dir", default=None, help="where to make the temporary data folder (default: system temp)")
    p.add_argument("--out", default=None, help="folder for loss.png (default: <system temp>/dflow-demo)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="a progress bar of the Dask tasks (default: when stdout is a terminal)")
    p.add_argument("--no-check", action="store_true", help="skip the numpy check")
    args = p.parse_args(argv)
    gb = args.gb if args.gb is not None else (args.mb / 1000 if args.mb is not None else 1.0)
    budget = None if str(args.memory_budget).lower() == "none" else args.memory_budget
    try:
        progress = sys.stdout.isatty() if args.progress is None else args.progress
        ok = run(gb, args.d, args.chunk_rows, budget, args.dir, args.out, progress=progress,
                 check=not args.no_check)
    except ResourceExhaustedError as e:  # the plan cannot fit the budget: dflow refused before running
        print(f"refused: {e.message}")
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
