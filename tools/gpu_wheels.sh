#!/usr/bin/env bash
# Downloads into .whl/ the wheels a GPU machine (no network; Python 3.12, cupy, JAX, PyTorch) lacks
# to run dflow and its tests: run it HERE, where pip reaches the registry, then carry .whl to the
# machine and run tools/gpu_check.sh there (README, "GPU checks"). Re-runnable: keeps the wheels
# already there, removes other versions. The resolution is tools/gpu_wheels.py (its doc says how).
#
#   tools/gpu_wheels.sh [--dest DIR] [--present FILE] [--dry-run]
#
# PYTHON: the interpreter whose installed versions are pinned (default: the checkout's .venv, else
# python3); it needs pip.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${PYTHON:-}"
if [ -z "$py" ]; then
    if [ -x "$root/.venv/bin/python" ]; then py="$root/.venv/bin/python"; else py=python3; fi
fi
exec "$py" "$root/tools/gpu_wheels.py" "$@"
