"""GPUs for eager tensors (`.gpu()`): cupy when it is installed and sees a device."""

from __future__ import annotations

import functools

from ..errors import InvalidArgumentError

__all__ = ["num_gpus", "gpu_namespace"]


@functools.cache
def num_gpus():
    """How many GPUs cupy sees (0 without cupy or a GPU)."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - no cupy, no driver: no GPU
        return 0


def gpu_namespace(index=0):
    """cupy, when GPU `index` exists; InvalidArgumentError otherwise."""
    n = num_gpus()
    if index >= n:
        raise InvalidArgumentError(None, None, f"Could not satisfy explicit device specification "
                                   f"'/job:localhost/replica:0/task:0/device:GPU:{index}': {n} GPUs are visible "
                                   "(cupy and a CUDA device are needed)")
    import cupy

    return cupy
