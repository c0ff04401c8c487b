"""The issue-6 benchmark: standardize + 3 steps of logistic regression on a Zarr array (workload.py).

    python benchmarks/bench_workload.py [--gb 0.5 2 4] [--engines dflow,dflow@512MB,dask,cubed,numpy]
                                        [--dir DIR] [--cap-gb G] [--record]

For each size, the data is generated once (in its own process) under `--dir` (default: a
temporary folder removed at the end; a given `--dir` is kept, so later runs reuse the data), then
each engine runs in its own interpreter (`python -m benchmarks.workload`); its peak RSS is the
child's ru_maxrss as the OS reports it to the parent (os.wait4). Cubed runs when installed; numpy
when X fits in memory 2.5 times over. `dflow@BUDGET` is dflow with `Session(memory_budget=BUDGET)`
(plain `dflow`: no budget). The table gives ratios to hand-written dask.array and each engine's
largest |w − w_dask|.

`--cap-gb G` adds the "larger than the memory limit" run: each engine again on the largest size,
in a child whose address space is capped at G GB (RLIMIT_AS, set before the interpreter starts).
Thread stacks and allocator arenas count as address space, so a cap of 1 GB or less breaks even a
plain dask read: cap at about half the dataset. Targets (issue 6, on the largest size ≥ 4 GB):
dflow time ≤ dask.array's, dflow peak RSS ≤ 512 MB and ≤ 1.2× its peak on the next smaller size,
w equal to dask.array's to 1e-3.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(Path(__file__).resolve().parent)]
from harness import Report, fmt_ratio, machine_line, record_run, table  # noqa: E402 - after the path

ENGINES = ("dflow", "dask", "cubed", "numpy")
TIME_TARGET = 0.8  # issue #12: the reshaped core keeps dflow at most 0.8× dask.array's time
RSS_TARGET_MB = 450  # issue #12: under 450 MB, so issue #6's 512 MB holds with margin
FLAT_TARGET = 1.2
W_TOL = 1e-3


def child(args_list, *, cap_bytes=None, timeout=3600):
    """Runs `python -m benchmarks.workload ARGS` and returns (figures or None, peak RSS MiB, error)."""
    cmd = [sys.executable, "-m", "benchmarks.workload", *args_list]
    env = dict(os.environ, PYTHONWARNINGS="ignore")

    def limit():  # in the child, before exec: the cap covers the interpreter's whole life
        if cap_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, env=env, preexec_fn=limit)
        fired = threading.Event()
        timer = threading.Timer(timeout, lambda: (fired.set(), proc.kill()))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)  # the child's own rusage, not all children's
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if fired.is_set():
            return None, usage.ru_maxrss / 1024, f"timed out after {timeout:g} s"
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    rss = usage.ru_maxrss / 1024
    if proc.returncode == 0:
        for line in reversed(stdout.splitlines()):
            if line.startswith("{"):
                return json.loads(line), rss, None
    return None, rss, _failure(proc.returncode, stderr or stdout)


def _failure(code, text):
    """A short description of how a child died: the exception's last line, or the signal."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    kinds = ("MemoryError", "ResourceExhaustedError", "Killed", "bad_alloc", "Cannot allocate memory")
    for ln in reversed(lines):
        if any(k in ln for k in kinds):
            return f"exit {code}: {ln.strip()[:160]}"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit {code}: {lines[-1].strip()[:160] if lines else '(no output)'}"


def available_bytes():
    """Memory the OS could give a new process now (MemAvailable), or total memory as a fallback."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def engines_for(requested, gb):
    """The requested engines that can run here: Cubed if importable, numpy if X fits 2.5 times."""
    out, skipped = [], []
    for e in requested:
        if e.partition("@")[0] not in ENGINES:
            raise SystemExit(f"unknown engine {e!r}: choose from {', '.join(ENGINES)} (dflow@BUDGET too)")
        if e == "cubed" and importlib.util.find_spec("cubed") is None:
            skipped.append("cubed (not installed: pip install cubed)")
        elif e == "numpy" and 2.5 * gb * 1e9 > available_bytes():
            skipped.append(f"numpy (X = {gb:g} GB does not fit in memory 2.5 times)")
        else:
            out.append(e)
    return out, skipped


def workload_args(engine, gb, data_dir, args):
    """The workload command line of `engine` ("dflow@512MB": dflow with that memory budget)."""
    name, _, budget = engine.partition("@")
    a = ["--engine", name, "--gb", str(gb), "--dir", str(data_dir), "--d", str(args.d),
         "--chunk-rows", str(args.chunk_rows), "--allowed-mem", args.allowed_mem]
    if budget:
        a += ["--memory-budget", budget]
    return a


def size_table(results, report):
    """Prints one size's table: times, peak RSS and ratios to dask.array, w difference to dask."""
    ref = results.get("dask", {}).get("figures")
    rows = []
    for engine, r in results.items():
        f = r["figures"]
        if f is None:
            rows.append([_label(engine), "-", "-", "-", "-", f"{r['rss']:.0f}", "-", "-", "-", "-", r["error"]])
            continue
        rows.append([
            _label(engine), f"{f['time_s']:.2f} s", f"{f['standardize_s']:.2f} s", f"{f['train_s']:.2f} s",
            fmt_ratio(f["time_s"], ref and ref["time_s"]), f"{r['rss']:.0f}", f"{f['standardize_rss_mb']:.0f}",
            fmt_ratio(r["rss"], results["dask"]["rss"] if ref else None),
            f"{w_diff(f, ref):.1e}" if ref else "-",
            " ".join(f"{v:.4f}" for v in f["losses"]), ""])
    report(table(["engine", "time", "standardize", "train", "÷ dask", "peak RSS MiB", "of which standardize", "÷ dask",
                  "max |w − w_dask|", "loss per step", "error"], rows))
    for engine, r in results.items():
        f = r["figures"]
        if f and "dflow" in f:
            info = f["dflow"]
            plans = "; ".join(f"{phase}: " + ", ".join(f"{p['kind']} {p['n_tasks']} tasks {p['stages']} stages"
                                                        for p in info.get(f"{phase}_plans", []))
                              for phase in ("standardize", "train"))
            report(f"  {engine}: Session({', '.join(f'{k}={v!r}' for k, v in info['session'].items())}); "
                   f"plans: {plans}")


def w_diff(f, ref):
    return max(abs(a - b) for a, b in zip(f["w"] + [f["b"]], ref["w"] + [ref["b"]]))


def _label(engine):
    name, _, budget = engine.partition("@")
    label = {"dask": "dask.array (threads)", "cubed": "cubed (threads)", "dflow": "dflow (threads)"}.get(name, name)
    return f"{label[:-1]}, budget {budget})" if budget else label


def targets(by_size, report):
    """The issue's targets for each dflow variant on the largest size (flat: against the next one)."""
    sizes = sorted(by_size)
    big = sizes[-1]
    met = lambda ok: "met" if ok else "MISSED"
    for engine, r in by_size[big].items():
        if not engine.startswith("dflow"):
            continue
        f, ref = r["figures"], by_size[big].get("dask", {}).get("figures")
        if f is None:
            report(f"  targets: {engine} did not complete at {big:g} GB: {r['error']}")
            continue
        rss = r["rss"]
        if ref is not None:
            report(f"  target {big:g} GB: {engine} time ≤ {TIME_TARGET}× dask.array's ({engine} ÷ dask = "
                   f"{f['time_s'] / ref['time_s']:.2f}×): {met(f['time_s'] <= TIME_TARGET * ref['time_s'])}")
            d = w_diff(f, ref)
            report(f"  target {big:g} GB: {engine} w equal to dask.array's to {W_TOL:g} (max diff {d:.1e}): "
                   f"{met(d <= W_TOL)}")
        report(f"  target {big:g} GB: {engine} peak RSS ≤ {RSS_TARGET_MB} MB (got {rss:.0f} MiB = "
               f"{rss * 1.048576:.0f} MB): {met(rss * 1.048576 <= RSS_TARGET_MB)}")
        smaller = by_size[sizes[-2]].get(engine, {}) if len(sizes) > 1 else {}
        if smaller.get("figures"):
            report(f"  target flat: {engine} peak RSS {big:g} GB ÷ {sizes[-2]:g} GB ≤ {FLAT_TARGET} "
                   f"(got {rss / smaller['rss']:.2f}×): {met(rss <= FLAT_TARGET * smaller['rss'])}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gb", type=float, nargs="+", default=[0.5], help="sizes of X in GB (default 0.5)")
    p.add_argument("--engines", default="dflow,dask,cubed,numpy", help="comma-separated (default: all)")
    p.add_argument("--dir", default=None, help="data folder, kept for reuse (default: a temporary one, removed)")
    p.add_argument("--d", type=int, default=1000, help="columns (default 1000)")
    p.add_argument("--chunk-rows", type=int, default=25_000, help="rows per chunk (default 25,000)")
    p.add_argument("--allowed-mem", default="2GB", help="cubed: Spec(allowed_mem=...) (default 2GB)")
    p.add_argument("--cap-gb", type=float, default=None,
                   help="also run every engine on the largest size with its address space capped at this")
    p.add_argument("--timeout", type=float, default=3600, help="seconds per engine run (default 3600)")
    p.add_argument("--record", action="store_true", help="append the output to benchmarks/RESULTS.md")
    args = p.parse_args(argv)
    requested = [e.strip() for e in args.engines.split(",") if e.strip()]

    own_dir = args.dir is None
    root = Path(tempfile.mkdtemp(prefix="dflow-bench-workload-") if own_dir else args.dir)
    root.mkdir(parents=True, exist_ok=True)
    report = Report()
    report(machine_line())
    report(f"workload: X n×{args.d} float32 Zarr (row chunks of {args.chunk_rows:,}); Z = (X − mean) / std "
           f"written to Zarr; 3 full-batch GD steps (lr 0.5) of logistic regression on Z read back")
    by_size = {}
    try:
        for gb in sorted(args.gb):
            data_dir = root / f"gb{gb:g}"
            free = shutil.disk_usage(root).free
            if free < 2.3 * gb * 1e9 and not (data_dir / "workload.json").exists():
                report(f"{gb:g} GB: skipped, {free / 1e9:.1f} GB free on {root} (need ~{2.3 * gb:.1f} GB)")
                continue
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "benchmarks.workload", "--generate-only",
                            *workload_args("dflow", gb, data_dir, args)], cwd=ROOT, check=True)
            meta = json.loads((data_dir / "workload.json").read_text())
            engines, skipped = engines_for(requested, gb)
            report(f"\n{gb:g} GB: n = {meta['n']:,} rows (data ready in {time.perf_counter() - t0:.0f} s)"
                   + (f"; skipped: {', '.join(skipped)}" if skipped else ""))
            results = {}
            for engine in engines:
                figures, rss, error = child(workload_args(engine, gb, data_dir, args), timeout=args.timeout)
                results[engine] = {"figures": figures, "rss": rss, "error": error}
            by_size[gb] = results
            size_table(results, report)
        if by_size:
            targets(by_size, report)
        if args.cap_gb is not None and by_size:
            gb = max(by_size)
            data_dir = root / f"gb{gb:g}"
            report(f"\nlarger than the memory limit: {gb:g} GB of data, each engine's address space capped at "
                   f"{args.cap_gb:g} GB (RLIMIT_AS)")
            rows = []
            for engine in engines_for(requested, 0)[0]:
                figures, rss, error = child(workload_args(engine, gb, data_dir, args),
                                            cap_bytes=int(args.cap_gb * 1e9), timeout=args.timeout)
                ref = by_size[gb].get("dask", {}).get("figures")
                rows.append([_label(engine), "completed" if figures else "failed",
                             f"{figures['time_s']:.2f} s" if figures else "-", f"{rss:.0f}",
                             f"{w_diff(figures, ref):.1e}" if figures and ref else "-", error or ""])
            report(table(["engine", "outcome", "time", "peak RSS MiB", "max |w − w_dask|", "error"], rows))
    finally:
        if own_dir:
            shutil.rmtree(root, ignore_errors=True)
    if args.record:
        record_run("bench_workload (issue #6: standardize + logistic regression, out of core)", "bench_workload.py",
                   argv if argv is not None else sys.argv[1:], report.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
