"""Data parallelism: TF1's `make_parallel` towers, and spreading a batch over a cluster's workers.

TF1 code splits a batch into towers, builds the model once per device (sharing variables through
`variable_scope(reuse=i > 0)`) and concatenates the results:

    logits = dflow.parallel.make_parallel(model, num_gpus=2, x=x)       # towers on GPU:0, GPU:1

Here the towers are ordinary subgraphs placed with `dflow.device`: on GPUs when there are, on
the CPU otherwise (so the same program runs on a laptop). On a distributed cluster, `data_parallel`
makes one tower per worker; each tower reads one shard of the batch, so the scheduler runs the
shards side by side on different workers (GPU towers carry the {"GPU": 1} resource and go to GPU
workers).
"""

from __future__ import annotations

import contextlib

from .devices import DeviceSpec, gpu_count
from .graph.graph import device
from .kernels.array_ops import shape
from .kernels.manip_ops import concat, split
from .kernels.math_ops import floordiv, minimum, multiply
from .state.scope import get_variable_scope, variable_scope

__all__ = ["make_parallel", "parallel_towers", "tower_devices", "data_parallel", "num_workers",
           "shard_sizes"]


def tower_devices(num_towers, device_type=None):
    """Device strings for `num_towers` towers: "/device:GPU:i" on the GPUs this process sees
    (round robin), or "/device:CPU:0" for every tower when there are none (or `device_type="CPU"`).
    """
    if num_towers < 1:
        raise ValueError(f"need at least one tower, got {num_towers}")
    gpus = gpu_count() if device_type in (None, "GPU", "gpu") else 0
    if device_type in ("GPU", "gpu") and not gpus:
        gpus = num_towers  # asked for GPUs explicitly: place there (soft placement may move them)
    if not gpus:
        return ["/device:CPU:0"] * num_towers
    return [DeviceSpec(device_type="GPU", device_index=i % gpus).to_string() for i in range(num_towers)]


def parallel_towers(fn, devices, axis=0, **kwargs):
    """`fn(**shard_kwargs)` built once per device on equal shards of each kwarg along `axis`,
    variables shared (`variable_scope(reuse=i > 0)`), outputs concatenated along `axis`.

    `fn` returns a tensor or a list/tuple of them (concatenated one by one). The split is TF1's
    `split(value, n)`: the batch must divide evenly (InvalidArgumentError at run time otherwise).
    """
    n = len(devices)
    splits = {k: split(v, n, axis=axis) if n > 1 else [v] for k, v in kwargs.items()}
    outs = []
    for i, dev in enumerate(devices):
        with device(dev), variable_scope(get_variable_scope(), reuse=i > 0):
            outs.append(fn(**{k: v[i] for k, v in splits.items()}))
    if n == 1:
        return outs[0]
    if isinstance(outs[0], (list, tuple)):
        return type(outs[0])(concat([o[j] for o in outs], axis=axis) for j in range(len(outs[0])))
    return concat(outs, axis=axis)


def make_parallel(fn, num_gpus, **kwargs):
    """TF1's `make_parallel(fn, num_gpus, **kwargs)`: split each kwarg into `num_gpus` towers
    along the batch axis, build `fn` per tower under `variable_scope(reuse=i > 0)`, concatenate.

    Towers go to "/device:GPU:i" where GPUs exist and to the CPU where they do not.
    """
    return parallel_towers(fn, tower_devices(num_gpus), **kwargs)


def num_workers(target=None):
    """The number of workers a session (or `distributed.Client`) computes on: the cluster's
    worker count for a distributed session, 1 otherwise."""
    client = getattr(getattr(target, "_executor", None), "client", None) if target is not None else None
    if client is None and target is not None and hasattr(target, "scheduler_info"):
        client = target
    if client is None:
        return 1
    return max(1, len(client.scheduler_info().get("workers", {})))


def shard_sizes(batch_size, num_shards):
    """Sizes of `num_shards` contiguous shards of `batch_size` rows, as equal as possible (the
    first ones one larger): use them as a placeholder's row `chunks` so that each shard is its own
    chunk, and so its own task."""
    if num_shards < 1:
        raise ValueError(f"need at least one shard, got {num_shards}")
    q, r = divmod(int(batch_size), int(num_shards))
    return [q + 1] * r + [q] * (num_shards - r)


def data_parallel(fn, inputs, num_shards=None, session=None, device_type=None):
    """`fn(**inputs)` as one tower per worker of `session`'s cluster (or `num_shards` towers).

    `inputs`: a dict of tensors sharing a leading batch axis. Each tower gets contiguous rows of
    each input (shard sizes differ by at most one row, so any batch size works), variables are
    shared, and the outputs are concatenated along axis 0. `device_type="GPU"` places every tower
    on its worker's GPU ("/device:GPU:0": on a cluster, the {"GPU": 1} resource sends it to a GPU
    worker); by default towers are not placed. Feeding the batch chunked by `shard_sizes` makes
    each tower's shard one chunk, so the towers run on different workers.
    """
    n = int(num_shards or num_workers(session))
    if not inputs:
        raise ValueError("data_parallel needs at least one input")
    # unplaced towers keep the caller's device scope (device(None) would clear it)
    place = (lambda: device("/device:GPU:0")) if device_type in ("GPU", "gpu") else contextlib.nullcontext
    if n == 1:
        with place():
            return fn(**inputs)
    first = next(iter(inputs.values()))
    rows = shape(first)[0]
    outs = []
    for i in range(n):
        # row range of shard i: [i*b + min(i, r), (i+1)*b + min(i+1, r)) with b, r = divmod(rows, n)
        b, r = floordiv(rows, n), rows - multiply(floordiv(rows, n), n)
        start = multiply(b, i) + minimum(r, i)
        stop = multiply(b, i + 1) + minimum(r, i + 1)
        shard = {k: v[start:stop] for k, v in inputs.items()}
        with place(), variable_scope(get_variable_scope(), reuse=i > 0):
            outs.append(fn(**shard))
    if isinstance(outs[0], (list, tuple)):
        return type(outs[0])(concat([o[j] for o in outs], axis=0) for j in range(len(outs[0])))
    return concat(outs, axis=0)
