"""Issue 29, "larger than the machine": the issue-6 workload at 1 to 32 GB against its I/O floor.

    python benchmarks/bench_scale.py [--gb 1 2 4 8 32] [--dir DIR] [--budget 1GB] [--plot PNG]
                                     [--profile] [--record]

The workload is benchmarks/workload.py's (standardize an n×1000 float32 Zarr array X to Zarr, then
3 full-batch gradient steps of logistic regression on Z read back), run by dflow on the threaded
scheduler at `Session(memory_budget=BUDGET)` (default 1GB), each size in its own interpreter; its
peak RSS is that child's ru_maxrss as the OS reports it to the parent (os.wait4).

Data: for each size, X.zarr and y.zarr are written under `--dir` (default: a temporary folder,
removed at the end; a given `--dir` is kept and its data reused) by a child process, chunk by chunk
(dflow.demo.write_dataset), never whole in memory; in the default temporary folder each size's data
is removed once measured. Sizes the free disk cannot hold (X and Z compressed: about 1.8× the size,
plus 1 GB) are skipped and said so.

The I/O floor of each size, measured in its own child the same way for every size: the passes over
the data the workload cannot avoid, as plain streaming reads of the chunk files through a zstd
decoder (writes through its encoder, at the array's level), on a thread pool of os.cpu_count()
threads: X read twice (its moments, then standardized into Z), Z written once and read 3 times (one
pass a gradient step); y is a thousandth of X and left out. The page cache is not
dropped (that needs root): sizes that fit in RAM are read mostly from memory by both the floor and
the workload; a size above the machine's RAM (32 GB on a 24 GiB machine) reads from disk.

Targets (issue 29, at the largest size ≥ 32 GB): peak RSS ≤ 1.1× the 4 GB run's, time ≤ 1.2× the
I/O floor. `--plot` (default docs/img/bench_scale.png) draws time and peak RSS against size;
`--profile` runs each workload again under cProfile (all threads, via threading.setprofile) and
prints where its time goes; `--record` appends the output to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(Path(__file__).resolve().parent), str(ROOT)]  # this checkout's dflow
from bench_workload import _failure, available_bytes  # noqa: E402 - after the path
from harness import Report, fmt_ratio, machine_line, record_run, table  # noqa: E402

SIZES = (1, 2, 4, 8, 32)
BUDGET = "1GB"
BIG_GB, REF_GB = 32, 4
RSS_TARGET, TIME_TARGET = 1.1, 1.2
DISK_RATIO = 0.9  # on-disk size of a zstd-compressed random float32 array over its raw size (0.88)
X_READS, Z_READS = 2, 3  # the workload's unavoidable passes: moments + standardize; one per step
_MARK = "BENCH-SCALE "


# ---- children --------------------------------------------------------------------------------
def run_child(cmd, timeout):
    """Runs `cmd` in a child (cwd: the repository); returns (its JSON line or None, peak RSS MiB,
    error). The RSS is the child's own ru_maxrss (os.wait4), not that of all children."""
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, env=env)
        fired = threading.Event()
        timer = threading.Timer(timeout, lambda: (fired.set(), proc.kill()))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        code = os.waitstatus_to_exitcode(status)
        rss = usage.ru_maxrss / 1024
        if fired.is_set():
            return None, rss, f"timed out after {timeout:g} s"
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if code == 0:
        for line in reversed(stdout.splitlines()):
            if line.startswith(_MARK):
                return json.loads(line[len(_MARK):]), rss, None
            if line.startswith("{"):
                return json.loads(line), rss, None
    return None, rss, _failure(code, stderr or stdout)


def io_floor(data_dir, threads=None):
    """Child side: the workload's unavoidable passes over the chunk files (module docstring), each
    file streamed through a zstd decoder into one chunk buffer (an encoder for the writes), on a
    thread pool: no scheduler, no kernels, no Zarr library. Returns the seconds of each pass and in all."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    import zstandard

    x_dir = Path(data_dir) / "X.zarr"
    meta = json.loads((x_dir / "zarr.json").read_text())
    codecs = [c["name"] for c in meta["codecs"]]
    if codecs != ["bytes", "zstd"] or meta["chunk_key_encoding"]["name"] != "default":
        raise SystemExit(f"the I/O floor reads zarr v3 bytes+zstd arrays (as generated here), not {codecs}")
    level = meta["codecs"][1]["configuration"]["level"]
    rows, d = meta["chunk_grid"]["configuration"]["chunk_shape"]
    n_chunks = -(-meta["shape"][0] // rows)
    sep = meta["chunk_key_encoding"]["configuration"]["separator"]
    chunk_bytes = rows * d * 4
    local = threading.local()

    def buffer():
        if not hasattr(local, "buf"):
            local.buf = np.empty(chunk_bytes, np.uint8)
        return local.buf

    def read(root):
        def one(i):
            view, n = memoryview(buffer()), 0
            with open(root / "c" / f"{i}{sep}0", "rb") as f:
                reader = zstandard.ZstdDecompressor().stream_reader(f, read_size=1 << 20)
                while n < chunk_bytes and (k := reader.readinto(view[n:])):
                    n += k
            return n
        return one

    out = Path(tempfile.mkdtemp(prefix="floor-", dir=data_dir))
    z_dir = out / "Z"
    (z_dir / "c").mkdir(parents=True)

    def copy(i):  # read X's chunk, write it as Z's
        read(x_dir)(i)
        (z_dir / "c" / f"{i}{sep}0").parent.mkdir(parents=True, exist_ok=True)
        with open(z_dir / "c" / f"{i}{sep}0", "wb") as f, \
                zstandard.ZstdCompressor(level=level).stream_writer(f, size=chunk_bytes, closefd=False) as w:
            w.write(memoryview(buffer()))

    figures = {}
    try:
        passes = [("read X", read(x_dir)), ("read X, write Z", copy)] + [("read Z", read(z_dir))] * Z_READS
        with ThreadPoolExecutor(threads or os.cpu_count()) as pool:
            t_all = time.perf_counter()
            for name, fn in passes:
                t0 = time.perf_counter()
                list(pool.map(fn, range(n_chunks)))
                figures.setdefault(name, []).append(round(time.perf_counter() - t0, 3))
            figures["floor_s"] = time.perf_counter() - t_all
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return figures


def profiled_workload(data_dir, budget, top=25):
    """Child side: the dflow workload under cProfile in every thread; prints the top functions by
    cumulative and by own time, merged over threads."""
    import cProfile
    import io
    import pstats

    import workload

    profiles, lock = [], threading.Lock()

    def start(*_):  # the first event of each new thread: give it its own profiler
        prof = cProfile.Profile()
        with lock:
            profiles.append(prof)
        sys.setprofile(None)  # this thread's hook only: threads started later get theirs
        prof.enable()

    threading.setprofile(start)
    main = cProfile.Profile()
    out_dir = tempfile.mkdtemp(prefix="out-profile-", dir=data_dir)
    try:
        main.enable()
        t0 = time.perf_counter()
        figures = workload.run_dflow(data_dir, out_dir, memory_budget=budget)
        total = time.perf_counter() - t0
        main.disable()
    finally:
        threading.setprofile(None)
        shutil.rmtree(out_dir, ignore_errors=True)
    for p in profiles:
        p.disable()
    stats = pstats.Stats(main)
    for p in profiles:
        with contextlib.suppress(TypeError):  # a thread that made no call
            stats.add(p)
    text = io.StringIO()
    stats.stream = text
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    print(text.getvalue(), file=sys.stderr)
    return {"time_s": total, "standardize_s": figures["standardize_s"], "train_s": figures["train_s"],
            "profile": text.getvalue()}


def child_main(argv):
    """`--floor DIR` or `--profile-child DIR BUDGET`: one child's work; prints its figures."""
    if argv[0] == "--floor":
        figures = io_floor(argv[1])
    else:
        figures = profiled_workload(argv[1], argv[2])
    print(_MARK + json.dumps(figures), flush=True)
    return 0


# ---- parent ----------------------------------------------------------------------------------
def workload_cmd(gb, data_dir, args, *extra):
    return [sys.executable, "-m", "benchmarks.workload", "--engine", "dflow", "--gb", str(gb), "--dir", str(data_dir),
            "--d", str(args.d), "--chunk-rows", str(args.chunk_rows), *extra]


def plot(rows, path, budget):
    """Time (workload, I/O floor) and peak RSS against size, two panels, log-log."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [r for r in rows if r["figures"]]
    floors = [r for r in rows if r["floor"]]
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    ax_t.plot([r["gb"] for r in done], [r["figures"]["time_s"] for r in done], "o-",
              label=f"dflow workload (memory_budget={budget})")
    ax_t.plot([r["gb"] for r in floors], [r["floor"]["floor_s"] for r in floors], "s--", label="I/O floor")
    ax_t.set(xscale="log", yscale="log", xlabel="X (GB)", ylabel="seconds", title="time")
    ax_m.plot([r["gb"] for r in done], [r["rss"] for r in done], "o-", label="dflow workload")
    ax_m.plot([r["gb"] for r in floors], [r["floor_rss"] for r in floors], "s--", label="I/O floor")
    ax_m.set(xscale="log", xlabel="X (GB)", ylabel="peak RSS (MiB)", title="peak RSS", ylim=(0, None))
    from matplotlib.ticker import LogLocator, NullFormatter, NullLocator, ScalarFormatter

    ax_t.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax_t.yaxis.set_major_formatter(ScalarFormatter())
    ax_t.yaxis.set_minor_formatter(NullFormatter())
    ram_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    for ax in (ax_t, ax_m):
        ax.set_xticks([r["gb"] for r in rows], [f"{r['gb']:g}" for r in rows])
        ax.xaxis.set_minor_locator(NullLocator())
        if max(r["gb"] for r in rows) > ram_gb:
            ax.axvline(ram_gb, color="grey", ls=":", label=f"RAM ({ram_gb:.0f} GB)")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best")
    fig.suptitle("standardize + 3 GD steps of logistic regression, n×1000 float32 Zarr "
                 f"({machine_line().split(',')[1].strip()})", fontsize=10)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def targets(rows, report):
    by = {r["gb"]: r for r in rows}
    big = max((g for g in by if g >= BIG_GB), default=None)
    met = lambda ok: "met" if ok else "MISSED"
    if big is None or not by[big]["figures"]:
        report(f"  targets at ≥ {BIG_GB} GB: not measured (no completed run of {BIG_GB} GB or more)")
        return
    r = by[big]
    ref = by.get(REF_GB)
    if ref and ref["figures"]:
        ok = r["rss"] <= RSS_TARGET * ref["rss"]
        report(f"  target {big:g} GB: peak RSS ≤ {RSS_TARGET}× the {REF_GB} GB run's ({r['rss']:.0f} ÷ "
               f"{ref['rss']:.0f} MiB = {r['rss'] / ref['rss']:.2f}×): {met(ok)}")
    else:
        report(f"  target {big:g} GB: peak RSS ≤ {RSS_TARGET}× the {REF_GB} GB run's: not measured (no {REF_GB} GB run)")
    if r["floor"]:
        t, f = r["figures"]["time_s"], r["floor"]["floor_s"]
        report(f"  target {big:g} GB: time ≤ {TIME_TARGET}× the I/O floor ({t:.1f} ÷ {f:.1f} s = {t / f:.2f}×): "
               f"{met(t <= TIME_TARGET * f)}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("--floor", "--profile-child"):
        return child_main(argv)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gb", type=float, nargs="+", default=list(SIZES), help="sizes of X in GB (default 1 2 4 8 32)")
    p.add_argument("--dir", default=None, help="data folder, kept for reuse (default: a temporary one, removed)")
    p.add_argument("--budget", default=BUDGET, help=f"Session(memory_budget=...) (default {BUDGET})")
    p.add_argument("--d", type=int, default=1000, help="columns (default 1000)")
    p.add_argument("--chunk-rows", type=int, default=25_000, help="rows per chunk (default 25,000)")
    p.add_argument("--plot", default=str(ROOT / "docs" / "img" / "bench_scale.png"), help="the PNG written ('' : none)")
    p.add_argument("--profile", action="store_true", help="also run each size under cProfile and print the top")
    p.add_argument("--timeout", type=float, default=4 * 3600, help="seconds per child (default 4 h)")
    p.add_argument("--record", action="store_true", help="append the output to benchmarks/RESULTS.md")
    args = p.parse_args(argv)

    own_dir = args.dir is None
    root = Path(tempfile.mkdtemp(prefix="dflow-bench-scale-") if own_dir else args.dir)
    root.mkdir(parents=True, exist_ok=True)
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    report = Report()
    report(machine_line() + f", {ram / 2**30:.1f} GiB RAM ({available_bytes() / 2**30:.1f} available)")
    report(f"workload: X n×{args.d} float32 Zarr (row chunks of {args.chunk_rows:,}); Z = (X − mean) / std written "
           f"to Zarr; 3 full-batch GD steps on Z read back; dflow, threads, Session(memory_budget={args.budget!r})")
    report(f"I/O floor: chunk files streamed through zstd, {os.cpu_count()} threads: X read {X_READS}× (the second pass writing Z), "
           f"Z read {Z_READS}×; page cache not dropped (sizes above RAM read from disk)")
    rows = []
    try:
        for gb in sorted(args.gb):
            data_dir = root / f"gb{gb:g}"
            free = shutil.disk_usage(root).free
            # zstd keeps random floats at ~0.88 of their size: X (unless there) and one Z at a time
            need = (DISK_RATIO * (1 if (data_dir / "workload.json").exists() else 2) * gb + 1) * 1e9
            if free < need:
                report(f"{gb:g} GB: skipped, {free / 1e9:.1f} GB free on {root} (need ~{need / 1e9:.0f} GB)")
                continue
            t0 = time.perf_counter()
            subprocess.run(workload_cmd(gb, data_dir, args, "--generate-only"), cwd=ROOT, check=True)
            made = time.perf_counter() - t0
            floor, floor_rss, floor_err = run_child([sys.executable, __file__, "--floor", str(data_dir)], args.timeout)
            figures, rss, err = run_child(workload_cmd(gb, data_dir, args, "--memory-budget", args.budget),
                                          args.timeout)
            row = {"gb": gb, "figures": figures, "rss": rss, "error": err, "floor": floor, "floor_rss": floor_rss,
                   "floor_error": floor_err, "above_ram": gb * 1e9 > ram, "made_s": made}
            rows.append(row)
            print(f"  {gb:g} GB done: {json.dumps({k: v for k, v in row.items() if k != 'figures'})}", flush=True)
            if args.profile:
                prof, _, perr = run_child([sys.executable, __file__, "--profile-child", str(data_dir), args.budget],
                                          args.timeout)
                report(f"\nprofile, {gb:g} GB ({'%.1f s' % prof['time_s'] if prof else perr}):")
                if prof:
                    report(prof["profile"])
            if own_dir:  # a temporary folder: each size's data goes once measured (the next needs the disk)
                shutil.rmtree(data_dir, ignore_errors=True)
        report("")
        report(table(["X", "rows", "data ready", "time", "standardize", "3 steps", "I/O floor", "÷ floor",
                      "peak RSS MiB", f"÷ {REF_GB} GB run", "floor peak RSS MiB", "from", "error"],
                     _table_rows(rows)))
        targets(rows, report)
        if args.plot and rows:
            try:
                plot(rows, args.plot, args.budget)
                report(f"  plot: {os.path.relpath(args.plot, ROOT)}")
            except ImportError:
                report("  plot: not drawn, matplotlib is not installed (pip install -e '.[demo]')")
    finally:
        if own_dir:
            shutil.rmtree(root, ignore_errors=True)
    if args.record:
        record_run("bench_scale (issue #29: larger than the machine, against the I/O floor)", "bench_scale.py",
                   argv, report.text)
    return 0


def _table_rows(rows):
    ref = next((r for r in rows if r["gb"] == REF_GB and r["figures"]), None)
    out = []
    for r in rows:
        f, fl = r["figures"], r["floor"]
        n = f and f.get("n")
        out.append([f"{r['gb']:g} GB", f"{n:,}" if n else "-", f"{r['made_s']:.0f} s",
                    f"{f['time_s']:.1f} s" if f else "-", f"{f['standardize_s']:.1f} s" if f else "-",
                    f"{f['train_s']:.1f} s" if f else "-", f"{fl['floor_s']:.1f} s" if fl else "-",
                    fmt_ratio(f and f["time_s"], fl and fl["floor_s"]), f"{r['rss']:.0f}" if f else "-",
                    fmt_ratio(r["rss"], ref and ref["rss"]) if f else "-", f"{r['floor_rss']:.0f}" if fl else "-",
                    "disk" if r["above_ram"] else "page cache (fits in RAM)",
                    "; ".join(e for e in (r["error"], r["floor_error"] and "floor: " + r["floor_error"]) if e)])
    return out


if __name__ == "__main__":
    sys.exit(main())
