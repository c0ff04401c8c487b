"""Placement: which device each op of a plan runs on, checked against the devices there are.

The compiler calls `check_placement` once per plan. An op keeps the device it was placed on
(`with dflow.device(...)`, canonical TF1 form) when the executor has it. An op placed on a GPU
that is missing (no cupy, no GPU, an index past the last GPU, or hidden by
`ConfigProto(device_count={"GPU": 0})`) runs on the CPU when `allow_soft_placement` is set, logged
through the `dflow.placement` logger; otherwise the plan is refused with InvalidArgumentError
naming the op and the device, as TF1's placer does. Unplaced ops get "" (the host, numpy chunks).
`ConfigProto(log_device_placement=True)` prints each op's placement on stderr as TF1 does
("add: (Add): /job:localhost/replica:0/task:0/device:CPU:0"), once per plan.

The rest is what lowering needs at placement boundaries: `needs_transfer`, `to_device`/`to_host`
(per-chunk copies between numpy and cupy, the only places data crosses), and `gpu_resources`,
`annotate`, `with_resources` (the `{"GPU": 1}` annotation that sends a GPU task to the GPU workers
of a distributed cluster).
"""

from __future__ import annotations

import contextlib
import logging
import sys

import numpy as np

from ..dask_compat import HighLevelGraph, MaterializedLayer
from ..devices import DeviceSpec, canonical_device
from ..errors import InvalidArgumentError

logger = logging.getLogger("dflow.placement")

_HOST = "/job:localhost/replica:0/task:0/device:CPU:0"


def check_placement(ops, config=None, executor_is_gpu_available=False):
    """{op: effective canonical device string} for `ops` ("" for an op placed nowhere).

    `config`: a `ConfigProto` (or None): `allow_soft_placement`, `log_device_placement`,
    `device_count` and `gpu_options.visible_device_list` are read. `executor_is_gpu_available`:
    a bool, a number of GPUs, or a callable returning either; True means "some GPUs, count unknown"
    (a distributed cluster: any index is accepted and the GPU workers decide).
    Raises InvalidArgumentError naming the first op placed on a missing device (without soft
    placement) or carrying a malformed device string.
    """
    soft = bool(getattr(config, "allow_soft_placement", False))
    log = bool(getattr(config, "log_device_placement", False))
    num_gpus = _gpu_count(executor_is_gpu_available, config)
    placed, lines = {}, []
    for op in ops:
        device = _canonical(op)
        effective = device
        if device:
            spec = DeviceSpec.from_string(device)
            if not _available(spec, num_gpus):
                if not soft:
                    raise InvalidArgumentError(None, op, _missing_message(op, device, num_gpus))
                effective = spec.replace(device_type="CPU", device_index=0).to_string()
                logger.info("soft placement: op %r (%s) was placed on %s, which is not available "
                            "(%s); it runs on %s", op.name, op.type, device, _available_text(num_gpus),
                            effective)
        placed[op] = effective
        if log:
            full = effective if effective.startswith("/job:") else (
                "/job:localhost/replica:0/task:0" + effective if effective else _HOST)
            lines.append(f"{op.name}: ({op.type}): {full}")
            logger.info("%s", lines[-1])
    if lines:  # TF1's placer prints these lines (and logs them) each time it places a graph to run
        print("\n".join(lines), file=sys.stderr, flush=True)
    return placed


def _canonical(op):
    try:
        return canonical_device(op.device)
    except ValueError as e:
        raise InvalidArgumentError(None, op, f"Op {op.name!r} has a malformed device {op.device!r}: {e}") from None


def _gpu_count(available, config):
    """The number of GPUs ops may use: an int, or None for "some, count unknown"."""
    if callable(available):
        available = available()
    if available is True:
        count = None
    elif not available:
        count = 0
    else:
        count = int(available)
    if config is not None and hasattr(config, "visible_gpus"):
        if count is None:
            limit = config.visible_gpus(1 << 30)
            return None if limit >= 1 << 30 else limit
        return config.visible_gpus(count)
    return count


def _available(spec, num_gpus):
    if spec.device_type in (None, "CPU"):
        return spec.device_index in (None, 0) or spec.device_type is None
    if spec.device_type == "GPU":
        if num_gpus is None:
            return True
        return num_gpus > 0 and (spec.device_index is None or spec.device_index < num_gpus)
    return False  # TPU, XLA_*: dflow has no kernels for them


def _available_text(num_gpus):
    if num_gpus is None:
        return "the executor has GPUs"
    gpus = [f"/device:GPU:{i}" for i in range(num_gpus)]
    return "available devices are [ " + ", ".join([_HOST] + gpus) + " ]"


def _missing_message(op, device, num_gpus):
    hint = ""
    if DeviceSpec.from_string(device).device_type == "GPU" and not num_gpus:
        hint = (" The requested device appears to be a GPU, but no GPU is available (install cupy: "
                "pip install dflow[gpu]).")
    return (f"Cannot assign a device for operation {op.name}: {{{{node {op.name}}}}} was explicitly "
            f"assigned to {device} but {_available_text(num_gpus)}. Make sure the device specification "
            f"refers to a valid device, or pass Session(config=ConfigProto(allow_soft_placement=True)).{hint}")


# ---- placement boundaries --------------------------------------------------------------------
def is_gpu(device):
    """True for an effective device string naming a GPU."""
    return bool(device) and DeviceSpec.from_string(device).device_type == "GPU"


def needs_transfer(src_device, dst_device):
    """True when a value made on `src_device` must be copied to be used on `dst_device`."""
    return is_gpu(src_device) != is_gpu(dst_device)


def gpu_resources(device):
    """The dask resource annotation for a task on `device`: {"GPU": 1} for a GPU, else None."""
    return {"GPU": 1} if is_gpu(device) else None


def annotate(device):
    """A context manager annotating the dask layers built inside with `gpu_resources(device)`, so
    a distributed scheduler runs them on workers started with `--resources GPU=1`."""
    resources = gpu_resources(device)
    if resources is None:
        return contextlib.nullcontext()
    import dask

    return dask.annotate(resources=resources)


def with_resources(dsk, gpu_keys):
    """`dsk` (a task dict) as a HighLevelGraph whose `gpu_keys` tasks carry {"GPU": 1}.

    A distributed scheduler reads resources from layer annotations; a flat dict has none. Pass
    the result to `Client.get` after the keys are final (renamed), so each GPU task runs only on
    a worker started with `--resources GPU=1`.
    """
    gpu = {k: v for k, v in dsk.items() if k in gpu_keys}
    host = {k: v for k, v in dsk.items() if k not in gpu_keys}
    layers = {"dflow-host": MaterializedLayer(host)}
    deps = {"dflow-host": set()}
    if gpu:
        layers["dflow-gpu"] = MaterializedLayer(gpu, annotations={"resources": {"GPU": 1}})
        deps["dflow-gpu"] = set()
    return HighLevelGraph(layers, deps)


def chunk_to_device(chunk):
    """A chunk copied to the current GPU (a cupy array); cupy chunks pass through."""
    import cupy

    return cupy.asarray(chunk)


def chunk_to_host(chunk):
    """A chunk copied to the host (a numpy array); numpy chunks pass through."""
    if isinstance(chunk, (np.ndarray, np.generic)):
        return chunk
    get = getattr(chunk, "get", None)
    if get is not None and type(chunk).__module__.startswith("cupy"):
        return get()
    return np.asarray(chunk)


def to_device(x):
    """The dask array `x` with each chunk copied to the GPU (cupy meta)."""
    import cupy

    return x.map_blocks(chunk_to_device, dtype=x.dtype, meta=cupy.empty((0,) * x.ndim, dtype=x.dtype))


def to_host(x):
    """The dask array `x` with each chunk copied to the host (numpy meta)."""
    return x.map_blocks(chunk_to_host, dtype=x.dtype, meta=np.empty((0,) * x.ndim, dtype=x.dtype))
