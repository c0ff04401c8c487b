"""`multi_gpu_model`, as TF 1.15 checks it: ValueError for gpus < 2 or more GPUs than exist."""

from __future__ import annotations

import logging

from ...devices import gpu_count

__all__ = ["multi_gpu_model"]

_LOG = logging.getLogger("tensorflow")


def multi_gpu_model(model, gpus, cpu_merge=True, cpu_relocation=False):
    """`model` for `gpus` GPUs. dflow does not replicate a model per GPU (its batches already run
    as parallel Dask tasks); with enough GPUs the model itself is returned, unchanged in its
    outputs, as Keras's replicas-and-merge would compute."""
    target = list(gpus) if isinstance(gpus, (list, tuple)) else None
    count = len(target) if target is not None else gpus
    if count is None or count <= 1:
        raise ValueError(f"For multi-gpu usage to be effective, call `multi_gpu_model` with `gpus >= 2`. "
                         f"Received: `gpus={gpus}`")
    ids = target if target is not None else list(range(count))
    available = gpu_count()
    wanted = [f"/gpu:{i}" for i in ids]
    have = ["/cpu:0"] + [f"/gpu:{i}" for i in range(available)]
    if any(i >= available for i in ids):
        raise ValueError(f"To call `multi_gpu_model` with `gpus={gpus}`, we expect the following devices to be "
                         f"available: {wanted}. However this machine only has: {have}. Try reducing `gpus`.")
    _LOG.warning("multi_gpu_model: dflow runs %s as is on %d GPUs (no per-GPU replicas)", model.name, count)
    return model
