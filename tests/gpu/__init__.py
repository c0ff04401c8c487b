"""The GPU suite: dflow on cupy arrays, on a CUDA device.

Run on a GPU machine with `pytest -m gpu tests/gpu` (tools/gpu_check.sh does). Every test module
here marks its tests with `requires_gpu` (below): marked `gpu`, and skipped with one reason when
cupy is missing or no CUDA device answers, so the normal run collects them and skips them fast.
The op table the suite runs (`op_cases.py`) and its harness (`harness.py`) are also exercised
without a GPU: tests/gpu/test_op_table.py (the table against the registry, the harness on numpy
chunks) and tests/kernels/test_array_api_strict.py (every case's eager kernel on
array_api_strict's non-CPU device).
"""

from __future__ import annotations

import pytest


def gpu_skip_reason():
    """None when cupy imports and sees a CUDA device; else why the GPU tests are skipped."""
    try:
        import cupy
    except Exception as e:  # noqa: BLE001 - ImportError, or a cupy built for another CUDA
        return (f"cupy is not importable ({type(e).__name__}: {e}); the GPU tests run on a machine with "
                "cupy and a CUDA device: pytest -m gpu tests/gpu")
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as e:  # noqa: BLE001 - no driver, no device
        return f"no CUDA device answers (cupy.cuda.runtime.getDeviceCount(): {type(e).__name__}: {e})"
    return None if count > 0 else "no CUDA device answers (cupy.cuda.runtime.getDeviceCount() == 0)"


GPU_SKIP_REASON = gpu_skip_reason()
requires_gpu = [pytest.mark.gpu, pytest.mark.skipif(GPU_SKIP_REASON is not None, reason=GPU_SKIP_REASON or "")]
