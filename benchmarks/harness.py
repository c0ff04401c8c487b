"""A small benchmark harness: repeated timing, one subprocess per case, ratio tables, RESULTS.md.

Standard library only, so a benchmark script can run its peers under another interpreter (a
TensorFlow environment named by TF_PYTHON) that has none of dflow's dependencies.

A benchmark script defines cases (functions returning a dict of figures), calls `case_main` when
run as `script.py --case NAME` (the child), and `run_case(script, NAME)` from the parent, which
runs each case in a fresh interpreter: no warm caches or thread pools leak between peers, and the
child's peak RSS is that case's alone (plus the interpreter and its imports).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
_MARK = "BENCH-RESULT "


# ---- timing ----------------------------------------------------------------------------------
def time_calls(fn, *, repeat=7, number=None, min_repeat_s=0.2):
    """Seconds per call of `fn()`: {"median", "min", "number", "repeat"} over `repeat` batches.

    Each batch runs `fn` `number` times; with `number=None` it is chosen so that one batch takes
    at least `min_repeat_s`. The median batch is the headline figure; min shows the noise floor.
    """
    if number is None:
        number = 1
        while True:
            t = _batch(fn, number)
            if t >= min_repeat_s or number >= 1 << 20:
                break
            number = max(number * 2, int(number * min_repeat_s / max(t, 1e-9) * 1.2))
    per_call = [_batch(fn, number) / number for _ in range(repeat)]
    return {"median": statistics.median(per_call), "min": min(per_call), "number": number,
            "repeat": repeat}


def _batch(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return time.perf_counter() - t0


def timed(fn):
    """(seconds, result) of one call of `fn()`."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def peak_rss_mb():
    """This process's peak resident set size in MiB (Linux reports ru_maxrss in KiB)."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / (1 << 20) if sys.platform == "darwin" else kb / 1024


# ---- one case per subprocess -----------------------------------------------------------------
def case_main(cases, argv):
    """Child side: runs `cases[argv[argv.index('--case') + 1]]()` and prints its figures as JSON."""
    name = argv[argv.index("--case") + 1]
    figures = dict(cases[name]())
    figures["peak_rss_mb"] = peak_rss_mb()
    print(_MARK + json.dumps(figures), flush=True)


def run_case(script, name, *, python=None, timeout=900):
    """Parent side: runs case `name` of `script` under `python` (default: this interpreter).

    Returns the case's figures, or {"error": message} when the child fails or prints none.
    """
    cmd = [python or sys.executable, str(script), "--case", name]
    env = dict(os.environ, PYTHONWARNINGS="ignore", TF_CPP_MIN_LOG_LEVEL="3")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_MARK):
            return json.loads(line[len(_MARK):])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return {"error": f"exit {proc.returncode}: " + " | ".join(tail)}


# ---- reporting -------------------------------------------------------------------------------
def fmt_time(seconds):
    """A duration with a unit that keeps 3 significant digits readable (µs, ms, s)."""
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(a, b):
    """a / b as 'N.NN×', or '-' when either is missing."""
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.2f}×"


def table(header, rows):
    """A Markdown table (also readable as plain text) with columns padded to their widest cell."""
    cells = [list(map(str, header))] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"
    sep = "| " + " | ".join("-" * w for w in widths) + " |"
    return "\n".join([line(cells[0]), sep] + [line(r) for r in cells[1:]])


class Report:
    """Collects printed lines so the same text can be appended to RESULTS.md."""

    def __init__(self):
        self.lines = []

    def __call__(self, text=""):
        print(text, flush=True)
        self.lines.append(str(text))

    @property
    def text(self):
        return "\n".join(self.lines)


def machine_line():
    """One line describing where the figures were taken."""
    load = ", load average %.1f %.1f %.1f" % os.getloadavg() if hasattr(os, "getloadavg") else ""
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs{load}, "
            f"Python {platform.python_version()}")


def record(title, command, text, path=RESULTS):
    """Appends a dated section with `command` and its output `text` to RESULTS.md."""
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    section = (f"\n## {title} — {stamp}\n\nCommand:\n\n```\n{command}\n```\n\n"
               f"Output:\n\n```\n{text.rstrip()}\n```\n")
    path = Path(path)
    if not path.exists():
        path.write_text("# Benchmark results\n\nEach section is appended by `make bench` "
                        "(benchmarks/harness.py `record`).\n")
    with path.open("a") as f:
        f.write(section)


def record_run(title, script, argv, text):
    """`record`s `text` under `title` with the command that produced it (`make bench`, or this
    script with its arguments; TF_PYTHON in front when set) and says where."""
    import os
    import shlex

    if os.environ.get("MAKELEVEL"):
        cmd = "make bench"
    else:
        cmd = f"python benchmarks/{script} " + " ".join(shlex.quote(a) for a in argv)
    if os.environ.get("TF_PYTHON"):
        cmd = f"TF_PYTHON={os.environ['TF_PYTHON']} {cmd}"
    record(title, cmd.strip(), text, RESULTS)
    print(f"\nrecorded in {RESULTS}")


def env_value(name, cast=int):
    """A case's parameter, passed to its interpreter in the environment."""
    import os

    return cast(os.environ[name])


def rss_mb():
    """This process's resident set size now, in MiB (Linux VmRSS; 0 elsewhere)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def tf_python():
    """The interpreter for the TF1 peer: $TF_PYTHON, else this one if it has tensorflow, else None."""
    import importlib.util
    import os
    import sys

    env = os.environ.get("TF_PYTHON", "").strip()
    if env:
        return env
    return sys.executable if importlib.util.find_spec("tensorflow") else None
