#!/usr/bin/env bash
# The one script a GPU machine runs (issue 32): installs the carried wheels, prints the
# environment, runs the GPU tests, then the GPU benchmark, and writes every log into OUTDIR.
#
#   tools/gpu_check.sh [--dry] OUTDIR
#
# On the GPU machine (no network; Python 3.12 with cupy, JAX, PyTorch): the wheels of .whl/
# (made here by tools/gpu_wheels.sh, carried with the checkout) are installed with
# `pip --no-index --no-deps --target` into $GPU_CHECK_SITE (default /tmp/dflow-gpu-site); dflow
# itself is imported from this checkout (PYTHONPATH, no build). Then
#   pytest -m gpu tests/gpu (at most $GPU_CHECK_PYTEST_S seconds, default 180; 300 s per test)
#   benchmarks/bench_gpu.py --record $GPU_CHECK_BENCH_ARGS (at most $GPU_CHECK_BENCH_S, default 250)
# in under 8 minutes. Exits with pytest's status when the tests fail (also when tests/gpu is
# missing or collects nothing), else the benchmark's; the benchmark always runs, and the logs
# are always written.
#
# --dry: the same steps on a machine without a GPU (how the script itself is tested): the wheel
# install is skipped when the packages already import, the GPU tests skip, the benchmark runs
# `--quick` (CPU cases, GPU cases self-tested on numpy) and records into OUTDIR only.
#
# OUTDIR receives at most 7 files (the device tool brings back 8): summary.log, env.log,
# install.log, pytest.log, junit.xml, bench.log, RESULTS_section.md (the section the benchmark
# appended to benchmarks/RESULTS.md, to paste into the main checkout's copy).
set -u -o pipefail

dry=0
if [ "${1:-}" = "--dry" ]; then dry=1; shift; fi
if [ $# -ne 1 ]; then echo "usage: tools/gpu_check.sh [--dry] OUTDIR" >&2; exit 2; fi
mkdir -p "$1" || exit 2
out="$(cd "$1" && pwd)"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 2
py="${PYTHON:-python3}"
site="${GPU_CHECK_SITE:-/tmp/dflow-gpu-site}"
pytest_s="${GPU_CHECK_PYTEST_S:-180}"
bench_s="${GPU_CHECK_BENCH_S:-250}"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
start=$SECONDS

say() { echo "[gpu_check +$((SECONDS - start))s] $*" | tee -a "$out/summary.log"; }
: >"$out/summary.log"
say "checkout $root ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout')), dry=$dry, OUTDIR $out"

# ---- 1. the wheels -----------------------------------------------------------------------------
deps="import dask, dask.array, distributed, zarr, numcodecs, zstandard, array_api_compat, crc32c, graphviz, tfrecord, array_api_strict"
shopt -s nullglob
wheels=(.whl/*.whl)
if [ "$dry" = 1 ] && "$py" -c "$deps" 2>/dev/null; then
    say "wheels: dependencies already import here; install skipped" | tee "$out/install.log" >/dev/null
elif [ ${#wheels[@]} -gt 0 ]; then
    if "$py" -m pip install --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
            "${wheels[@]}" >"$out/install.log" 2>&1; then
        say "wheels: installed ${#wheels[@]} from .whl into $site"
    else
        say "wheels: pip install FAILED (install.log); going on with what is there"
    fi
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
else
    say "wheels: none in .whl (run tools/gpu_wheels.sh where pip reaches the registry, carry .whl)" \
        | tee "$out/install.log" >/dev/null
fi
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
if "$py" -c "$deps; import dflow" >>"$out/install.log" 2>&1; then
    say "imports: dflow and its dependencies import"
else
    say "imports: FAILED (the end of install.log says which)"
fi

# ---- 2. the environment ------------------------------------------------------------------------
{
    echo "== nvidia-smi"; nvidia-smi 2>&1 || echo "(no nvidia-smi)"
    echo "== python"; "$py" - <<'EOF' 2>&1
import importlib, sys
print(sys.version.replace("\n", " "), sys.executable)
for name in ("numpy", "cupy", "jax", "torch", "dask", "distributed", "zarr", "numcodecs", "array_api_compat", "dflow"):
    try:
        m = importlib.import_module(name)
        print(f"{name} {getattr(m, '__version__', '?')} from {getattr(m, '__file__', '?')}")
    except Exception as e:  # noqa: BLE001 - reported
        print(f"{name}: {type(e).__name__}: {e}")
try:
    import cupy
    n = cupy.cuda.runtime.getDeviceCount()
    print("cupy devices:", n, [cupy.cuda.runtime.getDeviceProperties(i)["name"] for i in range(n)],
          "runtime", cupy.cuda.runtime.runtimeGetVersion(), "driver", cupy.cuda.runtime.driverGetVersion())
except Exception as e:  # noqa: BLE001
    print("cupy devices: none:", type(e).__name__, e)
try:
    import torch
    print("torch cuda:", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
except Exception as e:  # noqa: BLE001
    print("torch:", type(e).__name__, e)
try:
    import jax
    print("jax devices:", jax.devices())
except Exception as e:  # noqa: BLE001
    print("jax:", type(e).__name__, e)
import dflow
print("dflow GPUs:", dflow.config.list_physical_devices("GPU"))
EOF
    echo "== pip list"; "$py" -m pip list 2>/dev/null
} >"$out/env.log" 2>&1
say "environment: env.log ($(grep -m1 '^cupy devices' "$out/env.log" || echo 'cupy devices: ?'))"

# ---- 3. the GPU tests --------------------------------------------------------------------------
if [ -d tests/gpu ]; then
    timeout -k 10 "$pytest_s" "$py" -m pytest -m gpu tests/gpu -q -p no:cacheprovider --timeout 300 -rfEs \
        --junitxml "$out/junit.xml" >"$out/pytest.log" 2>&1
    test_rc=$?
    [ "$test_rc" -eq 124 ] && echo "gpu_check: pytest stopped after ${pytest_s} s" >>"$out/pytest.log"
    say "pytest -m gpu tests/gpu: exit $test_rc; $(grep -E '(passed|failed|skipped|error|no tests ran)' "$out/pytest.log" | tail -1)"
else
    echo "tests/gpu does not exist in this checkout" >"$out/pytest.log"
    test_rc=4
    say "pytest: tests/gpu does not exist"
fi
if [ "$dry" = 1 ] && { [ "$test_rc" -eq 5 ] || [ "$test_rc" -eq 4 ]; }; then
    test_rc=0  # without a GPU, no tests (or no folder yet) is not a failure of the script
fi

# ---- 4. the benchmark --------------------------------------------------------------------------
results=benchmarks/RESULTS.md
if [ "$dry" = 1 ]; then
    : >"$out/RESULTS_section.md"
    set -- --quick --record --results "$out/RESULTS_section.md"
else
    before=$(stat -c %s "$results" 2>/dev/null || echo 0)
    set -- --record
fi
# shellcheck disable=SC2086 - GPU_CHECK_BENCH_ARGS is a list of flags
timeout -k 10 "$bench_s" "$py" benchmarks/bench_gpu.py "$@" ${GPU_CHECK_BENCH_ARGS:-} >"$out/bench.log" 2>&1
bench_rc=$?
[ "$bench_rc" -eq 124 ] && echo "gpu_check: bench_gpu.py stopped after ${bench_s} s" >>"$out/bench.log"
if [ "$dry" = 0 ]; then
    tail -c +"$((before + 1))" "$results" >"$out/RESULTS_section.md" 2>/dev/null
fi
say "bench_gpu.py: exit $bench_rc; $(grep -c 'target .*: met' "$out/bench.log") targets met, $(grep -c 'MISSED' "$out/bench.log") missed, $(grep -c 'FAILED' "$out/bench.log") FAILED lines; section in RESULTS_section.md ($(wc -c <"$out/RESULTS_section.md") bytes)"

rc=$test_rc
[ "$rc" -eq 0 ] && rc=$bench_rc
say "done in $((SECONDS - start)) s: exit $rc"
exit "$rc"
