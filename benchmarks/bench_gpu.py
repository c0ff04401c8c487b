"""The issue-32 benchmark: dflow on an NVIDIA GPU (cupy chunks) against the device's copy bandwidth,
hand-written cupy, JAX and PyTorch on the same GPU, and dflow on the CPU.

    python benchmarks/bench_gpu.py [--gb 4] [--ops 1000] [--cpu-gb 0.0625] [--matmul 8192]
        [--lenet-batch 128] [--ooc-gb 4] [--ooc-budget-gb 1] [--ooc-chunk-rows 25000] [--repeat 3]
        [--quick] [--only chain,peers,ooc] [--case-timeout 240] [--record] [--results PATH]

a) chain: `--ops` elementwise ops (×0.999, +0.001, abs, min 1e6, in turn) over a `--gb` GB float32
   vector. Peers: the device's copy (`cupy` copy of the same array: bytes read + written per
   second), the chain op by op in cupy, dflow eager under `tf.device("/gpu:0")`, dflow graph mode
   (chain built under `tf.device("/gpu:0")`, fed a cupy array). Throughput counts each op as one
   read and one write of the array (ops × 2 × bytes / time). Target: dflow ≥ 70 % of the copy.
b) an n×n float32 matmul (`--matmul`) and the LeNet training step of bench_layers.py (batch
   `--lenet-batch`, same weights and batch) in cupy / PyTorch / JAX (jit) and dflow (eager on the
   GPU; graph mode on the GPU). fp32 throughout: PyTorch with TF32 off, JAX at precision 'highest'.
   Target: dflow ≥ 0.5× the faster of JAX and PyTorch.
c) out of core: benchmarks/workload.py (standardize X → Zarr Z, then 3 gradient steps on Z) over a
   `--ooc-gb` GB Zarr dataset, the GPU's memory capped at `--ooc-budget-gb` (cupy's pool limit in
   that process; also the Session's memory_budget). Terms: I/O (the reads the workload makes — X
   twice, Z three times — and one write of Z, timed with zarr alone) and GPU compute (the
   workload's kernels on chunks already on the GPU, times the chunk count). Peers: cupy by hand
   (chunks host → GPU, no overlap), dflow graph mode under `tf.device("/gpu:0")`. Target: dflow's
   total ≤ 1.3 × (I/O + GPU compute).
d) dflow on the CPU (default Session, numpy) on the same workloads: the chain on `--cpu-gb` GB
   (1000 passes over 4 GB would take minutes), compared by throughput; matmul, LeNet and the
   out-of-core workload at the same sizes.

dflow's graph mode does not yet move data to the GPU at placement boundaries (docs/ARCHITECTURE.md,
Devices): a graph-mode case first checks whether cupy allocated anything while dflow ran (cupy's
memory pool); when it did not, the case says the work ran on the host and gives no GPU figure.

Every case runs in its own interpreter (benchmarks/harness.py); module-level imports are standard
library only. Without a GPU (cupy seeing no device) the script prints one line and exits 0;
`--quick` then runs the CPU cases on small sizes and the GPU cases' code on numpy as a self-test
(labelled so: no GPU figure), which is how the script is tested on machines without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]
from harness import (  # noqa: E402 - after the path
    RESULTS,
    Report,
    case_main,
    fmt_ratio,
    fmt_time,
    machine_line,
    record,
    run_case,
    table,
)

CHAIN_TARGET = 0.7  # dflow's chain throughput ≥ 70 % of the copy bandwidth
PEER_TARGET = 0.5  # dflow ≥ 0.5× the faster of JAX and PyTorch
OOC_TARGET = 1.3  # dflow's out-of-core total ≤ 1.3 × (I/O + GPU compute)
LR = 0.01
SELFTEST = "BENCH_GPU_SELFTEST"  # set in a case's environment: "cupy" is numpy (no GPU figure)


def _env(name, cast=float):
    return cast(os.environ[name])


def _repeat():
    return int(os.environ.get("BENCH_GPU_REPEAT", "3"))


# ---- the GPU namespace (cupy, or numpy standing in for it in the self-test) --------------------
class _Pool:
    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0

    def free_all_blocks(self):
        pass

    def set_limit(self, size=0):
        pass


class _Stream:
    def synchronize(self):
        pass


class _NumpyAsCupy:
    """numpy with the few cupy calls the cases make: the self-test's stand-in for cupy."""

    def __init__(self):
        import numpy

        self._np = numpy
        self.cuda = type("cuda", (), {"Device": lambda *a: _Stream(),
                                      "get_current_stream": staticmethod(lambda: _Stream())})

    def __getattr__(self, name):
        return getattr(self._np, name)

    def asnumpy(self, a):
        return self._np.asarray(a)

    def get_default_memory_pool(self):
        return _Pool()


def gpu_xp():
    """cupy (or numpy in the self-test)."""
    if os.environ.get(SELFTEST):
        return _NumpyAsCupy()
    import cupy

    return cupy


def sync(cp):
    cp.cuda.Device().synchronize()


def no_sync():
    """The host's work is done when the call returns (numpy; JAX after block_until_ready)."""


def timed_runs(fn, synchronize, repeat=None):
    """Seconds per call of `fn()` (median, min over `repeat` calls after one warm-up), each call
    ended by `synchronize()` (the device's, or `no_sync`)."""
    fn()
    synchronize()
    times = []
    for _ in range(repeat or _repeat()):
        t0 = time.perf_counter()
        fn()
        synchronize()
        times.append(time.perf_counter() - t0)
    return {"per_call": statistics.median(times), "min": min(times)}


def device_sync(cp):
    return lambda: sync(cp)


def _module(value):
    """The top package of a value's class ("cupy", "numpy"): where an array lives."""
    return type(value).__module__.split(".")[0]


def _gpu_tensor(tf, cp, a):
    """An eager tensor of the cupy array `a` on the GPU (`tf.identity` under tf.device moves it)."""
    try:
        t = tf.convert_to_tensor(a)
    except Exception:  # noqa: BLE001 - a namespace convert_to_tensor does not take: via the host
        t = tf.convert_to_tensor(cp.asnumpy(a))
    return tf.identity(t)


def gpu_bytes_during(cp, fn):
    """(fn's result, bytes cupy's pool grew by while `fn` ran): 0 means nothing went to the GPU."""
    pool = cp.get_default_memory_pool()
    before = pool.total_bytes()
    out = fn()
    sync(cp)
    return out, pool.total_bytes() - before


def graph_session(tf):
    """The Session of the graph-mode GPU cases: strict placement on a GPU machine; in the self-test
    (no GPU) soft placement, so the case's code runs on the CPU."""
    if os.environ.get(SELFTEST):
        return tf.Session(config=tf.ConfigProto(allow_soft_placement=True))
    return tf.Session()


NOT_PLACED = ("dflow graph mode ran this on the host: cupy allocated nothing while it ran under "
              "tf.device('/gpu:0') (host↔device transfers at placement boundaries are not wired into "
              "the lowering yet), so there is no GPU figure")


# ---- the environment -----------------------------------------------------------------------------
def env_probe():
    """What this machine offers: cupy's devices, PyTorch's and JAX's versions and devices."""
    out = {"gpus": 0}
    try:
        import cupy

        n = int(cupy.cuda.runtime.getDeviceCount())
        out.update(gpus=n, cupy=cupy.__version__)
        if n:
            props = cupy.cuda.runtime.getDeviceProperties(0)
            out["device"] = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
            out["gpu_mem_gb"] = cupy.cuda.Device(0).mem_info[1] / 1e9
    except Exception as e:  # noqa: BLE001 - no cupy / driver / device: reported, not raised
        out["cupy_error"] = f"{type(e).__name__}: {e}"[:200]
    try:
        import torch

        out["torch"] = torch.__version__
        out["torch_cuda"] = bool(torch.cuda.is_available())
    except Exception as e:  # noqa: BLE001
        out["torch_error"] = f"{type(e).__name__}: {e}"[:200]
    try:
        import jax

        out["jax"] = jax.__version__
        out["jax_devices"] = [str(d) for d in jax.devices()]
    except Exception as e:  # noqa: BLE001
        out["jax_error"] = f"{type(e).__name__}: {e}"[:200]
    return out


# ---- a) the elementwise chain ------------------------------------------------------------------
def chain(y, ops, minimum, absolute):
    """`ops` elementwise ops on `y`, in turn ×0.999, +0.001, abs, min(·, 1e6); `minimum` and
    `absolute` are the namespace's functions (numpy, cupy, dflow)."""
    for i in range(ops):
        k = i % 4
        if k == 0:
            y = y * 0.999
        elif k == 1:
            y = y + 0.001
        elif k == 2:
            y = absolute(y)
        else:
            y = minimum(y, 1e6)
    return y


def _chain_input(cp, n):
    return cp.random.default_rng(0).random(n, dtype=cp.float32) - cp.float32(0.5)


def _chain_check(cp, x, out, ops):
    """Largest |out − numpy's chain| over the first 4096 elements."""
    import numpy as np

    head = cp.asnumpy(x[:4096])
    want = chain(head, ops, np.minimum, np.abs)
    return float(np.max(np.abs(cp.asnumpy(out[:4096]) - want)))


def _chain_figures(t, nbytes, ops, check):
    return {"per_call": t["per_call"], "min": t["min"], "bytes": nbytes, "ops": ops,
            "gbps": ops * 2 * nbytes / t["per_call"] / 1e9, "max_err": check}


def cupy_copy():
    cp = gpu_xp()
    n = int(_env("BENCH_GPU_GB") * 1e9) // 4
    x = _chain_input(cp, n)
    dst = cp.empty_like(x)
    t = timed_runs(lambda: cp.copyto(dst, x), device_sync(cp), repeat=max(_repeat(), 5))
    return {"per_call": t["per_call"], "min": t["min"], "bytes": x.nbytes,
            "gbps": 2 * x.nbytes / t["per_call"] / 1e9}


def cupy_chain():
    cp = gpu_xp()
    n, ops = int(_env("BENCH_GPU_GB") * 1e9) // 4, _env("BENCH_GPU_OPS", int)
    x = _chain_input(cp, n)
    box = {}
    t = timed_runs(lambda: box.update(out=chain(x, ops, cp.minimum, cp.abs)), device_sync(cp))
    return _chain_figures(t, x.nbytes, ops, _chain_check(cp, x, box["out"], ops))


def dflow_eager_gpu_chain():
    import dflow as tf

    tf.enable_eager_execution()
    cp = gpu_xp()
    n, ops = int(_env("BENCH_GPU_GB") * 1e9) // 4, _env("BENCH_GPU_OPS", int)
    x = _chain_input(cp, n)
    with tf.device("/gpu:0"):
        xt = _gpu_tensor(tf, cp, x)
        box = {}
        _, grew = gpu_bytes_during(cp, lambda: box.update(out=chain(xt, ops, tf.minimum, tf.abs)))
        t = timed_runs(lambda: box.update(out=chain(xt, ops, tf.minimum, tf.abs)), device_sync(cp))
    out = box["out"]._v
    return dict(_chain_figures(t, x.nbytes, ops, _chain_check(cp, x, out, ops)), on_gpu=_module(out),
                gpu_bytes=grew)


def dflow_graph_gpu_chain():
    import dflow as tf

    cp = gpu_xp()
    n, ops = int(_env("BENCH_GPU_GB") * 1e9) // 4, _env("BENCH_GPU_OPS", int)
    with tf.device("/gpu:0"):
        ph = tf.placeholder(tf.float32, [None], name="x")
        y = chain(ph, ops, tf.minimum, tf.abs)
    sess = graph_session(tf)
    small = _chain_input(cp, 1 << 20)
    _, grew = gpu_bytes_during(cp, lambda: sess.run(y, {ph: small}))
    if grew <= 0:
        return {"skipped": NOT_PLACED}
    x = _chain_input(cp, n)
    box = {}
    t = timed_runs(lambda: box.update(out=sess.run(y, {ph: x})), device_sync(cp))
    return dict(_chain_figures(t, x.nbytes, ops, _chain_check(cp, x, cp.asarray(box["out"]), ops)),
                on_gpu=_module(box["out"]), gpu_bytes=grew)


def dflow_cpu_chain():
    import numpy as np

    import dflow as tf

    n, ops = int(_env("BENCH_GPU_CPU_GB") * 1e9) // 4, _env("BENCH_GPU_OPS", int)
    ph = tf.placeholder(tf.float32, [None], name="x")
    y = chain(ph, ops, tf.minimum, tf.abs)
    sess = tf.Session()
    x = np.random.default_rng(0).random(n, dtype=np.float32) - np.float32(0.5)
    box = {}
    t = timed_runs(lambda: box.update(out=sess.run(y, {ph: x})), no_sync, repeat=2)
    return _chain_figures(t, x.nbytes, ops, _chain_check(_NumpyAsCupy(), x, box["out"], ops))


# ---- b) matmul --------------------------------------------------------------------------------
def _matmul_inputs(xp, n):
    rng = xp.random.default_rng(0)
    return rng.random((n, n), dtype=xp.float32), rng.random((n, n), dtype=xp.float32)


def _matmul_figures(t, n, check=None):
    return {"per_call": t["per_call"], "min": t["min"], "tflops": 2 * n ** 3 / t["per_call"] / 1e12,
            "checksum": check}


def _checksum(a):
    """A cheap comparable figure of a matmul result: the mean of its first row."""
    import numpy as np

    return float(np.mean(np.asarray(a[0], dtype=np.float64)))


def cupy_matmul():
    cp = gpu_xp()
    n = _env("BENCH_GPU_MATMUL", int)
    a, b = _matmul_inputs(cp, n)
    box = {}
    t = timed_runs(lambda: box.update(c=a @ b), device_sync(cp), repeat=max(_repeat(), 5))
    return _matmul_figures(t, n, _checksum(cp.asnumpy(box["c"][:1])))


def torch_matmul():
    import numpy as np
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    n = _env("BENCH_GPU_MATMUL", int)
    a, b = (torch.from_numpy(v).cuda() for v in _matmul_inputs(np, n))
    box = {}
    t = timed_runs(lambda: box.update(c=a @ b), torch.cuda.synchronize, repeat=max(_repeat(), 5))
    return _matmul_figures(t, n, _checksum(box["c"][:1].cpu().numpy()))


def _jax():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax

    jax.config.update("jax_default_matmul_precision", "highest")
    return jax


def jax_matmul():
    import numpy as np

    jax = _jax()
    n = _env("BENCH_GPU_MATMUL", int)
    a, b = (jax.device_put(v) for v in _matmul_inputs(np, n))
    mm = jax.jit(lambda a, b: a @ b)
    box = {}
    t = timed_runs(lambda: box.update(c=mm(a, b).block_until_ready()), no_sync, repeat=max(_repeat(), 5))
    return dict(_matmul_figures(t, n, _checksum(np.asarray(box["c"][:1]))), on_gpu=f"jax {jax.default_backend()}")


def dflow_eager_gpu_matmul():
    import dflow as tf

    tf.enable_eager_execution()
    cp = gpu_xp()
    n = _env("BENCH_GPU_MATMUL", int)
    a, b = _matmul_inputs(cp, n)
    with tf.device("/gpu:0"):
        at, bt = _gpu_tensor(tf, cp, a), _gpu_tensor(tf, cp, b)
        box = {}
        t = timed_runs(lambda: box.update(c=tf.matmul(at, bt)), device_sync(cp), repeat=max(_repeat(), 5))
    c = box["c"]._v
    return dict(_matmul_figures(t, n, _checksum(cp.asnumpy(c[:1]))), on_gpu=_module(c))


def dflow_graph_gpu_matmul():
    import dflow as tf

    cp = gpu_xp()
    n = _env("BENCH_GPU_MATMUL", int)
    with tf.device("/gpu:0"):
        pa, pb = tf.placeholder(tf.float32, [None, None]), tf.placeholder(tf.float32, [None, None])
        c = tf.matmul(pa, pb)
    sess = graph_session(tf)
    sa, sb = _matmul_inputs(cp, 256)
    _, grew = gpu_bytes_during(cp, lambda: sess.run(c, {pa: sa, pb: sb}))
    if grew <= 0:
        return {"skipped": NOT_PLACED}
    a, b = _matmul_inputs(cp, n)
    box = {}
    t = timed_runs(lambda: box.update(c=sess.run(c, {pa: a, pb: b})), device_sync(cp), repeat=max(_repeat(), 5))
    return dict(_matmul_figures(t, n, _checksum(cp.asnumpy(cp.asarray(box["c"][:1])))), on_gpu=_module(box["c"]))


def dflow_cpu_matmul():
    import numpy as np

    import dflow as tf

    n = _env("BENCH_GPU_MATMUL", int)
    pa, pb = tf.placeholder(tf.float32, [None, None]), tf.placeholder(tf.float32, [None, None])
    c = tf.matmul(pa, pb)
    sess = tf.Session()
    a, b = _matmul_inputs(np, n)
    box = {}
    t = timed_runs(lambda: box.update(c=sess.run(c, {pa: a, pb: b})), no_sync, repeat=2)
    return _matmul_figures(t, n, _checksum(box["c"][:1]))


# ---- b) the LeNet training step -------------------------------------------------------------------
def _lenet_batch():
    import bench_layers

    return bench_layers.batch(_env("BENCH_GPU_LENET", int))


def _lenet_figures(t, loss0):
    return {"per_step": t["per_call"], "min": t["min"], "images_s": _env("BENCH_GPU_LENET", int) / t["per_call"],
            "loss0": loss0}


def _dflow_loss(tf, v, x, y):
    """bench_layers.build's loss on dflow values (graph tensors or eager tensors)."""
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, v["W1"], [1, 1, 1, 1], "SAME"), v["b1"]))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, v["W2"], [1, 1, 1, 1], "SAME"), v["b2"]))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 7 * 7 * 64]), v["W3"]) + v["b3"])
    logits = tf.matmul(h, v["W4"]) + v["b4"]
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))


def dflow_eager_gpu_lenet():
    import bench_layers

    import dflow as tf

    tf.enable_eager_execution()
    cp = gpu_xp()
    xv, yv = _lenet_batch()
    with tf.device("/gpu:0"):
        v = {k: tf.Variable(val, name=k) for k, val in bench_layers.weights().items()}
        x, y = tf.identity(tf.constant(xv)), tf.identity(tf.constant(yv))
        loss0 = float(_dflow_loss(tf, v, x, y))
        opt = tf.train.GradientDescentOptimizer(LR)
        t = timed_runs(lambda: opt.minimize(lambda: _dflow_loss(tf, v, x, y), var_list=list(v.values())),
                       device_sync(cp))
        where = _module(getattr(v["W1"].read_value(), "_v", None))
    return dict(_lenet_figures(t, loss0), on_gpu=where)


def dflow_graph_gpu_lenet():
    import bench_layers

    import dflow as tf

    cp = gpu_xp()
    xv, yv = _lenet_batch()
    with tf.device("/gpu:0"):
        x, y, _, loss, train = bench_layers._graph(tf)
    sess = graph_session(tf)
    sess.run(tf.global_variables_initializer())
    loss0, grew = gpu_bytes_during(cp, lambda: float(sess.run(loss, {x: xv, y: yv})))
    if grew <= 0:
        return {"skipped": NOT_PLACED}
    t = timed_runs(lambda: sess.run(train, {x: xv, y: yv}), device_sync(cp))
    return _lenet_figures(t, loss0)


def dflow_cpu_lenet():
    import bench_layers

    import dflow as tf

    xv, yv = _lenet_batch()
    x, y, _, loss, train = bench_layers._graph(tf)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    loss0 = float(sess.run(loss, {x: xv, y: yv}))
    t = timed_runs(lambda: sess.run(train, {x: xv, y: yv}), no_sync)
    return _lenet_figures(t, loss0)


def torch_lenet():
    import bench_layers
    import torch
    import torch.nn.functional as F

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"
    w = {k: torch.from_numpy(val).to(dev) for k, val in bench_layers.weights().items()}
    w["W1"], w["W2"] = (w[k].permute(3, 2, 0, 1).contiguous() for k in ("W1", "W2"))  # HWIO → OIHW
    for p in w.values():
        p.requires_grad_(True)
    xv, yv = _lenet_batch()
    x = torch.from_numpy(xv).to(dev).permute(0, 3, 1, 2).contiguous()
    y = torch.from_numpy(yv).to(dev)

    def loss_fn():
        h = F.max_pool2d(F.relu(F.conv2d(x, w["W1"], w["b1"], padding=2)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, w["W2"], w["b2"], padding=2)), 2)
        h = h.permute(0, 2, 3, 1).reshape(len(x), -1)  # TF's NHWC flattening order
        h = F.relu(h @ w["W3"] + w["b3"])
        return F.cross_entropy(h @ w["W4"] + w["b4"], y)

    def step():
        loss = loss_fn()
        grads = torch.autograd.grad(loss, list(w.values()))
        with torch.no_grad():
            for p, g in zip(w.values(), grads):
                p -= LR * g

    loss0 = float(loss_fn())
    return _lenet_figures(timed_runs(step, torch.cuda.synchronize), loss0)


def jax_lenet():
    import bench_layers
    import numpy as np

    jax = _jax()
    import jax.numpy as jnp
    from jax import lax

    w = {k: jax.device_put(val) for k, val in bench_layers.weights().items()}
    xv, yv = _lenet_batch()
    x, y = jax.device_put(xv), jax.device_put(yv.astype(np.int32))

    def loss_fn(w, x, y):
        def conv(h, k, b):
            return jax.nn.relu(lax.conv_general_dilated(h, k, (1, 1), "SAME",
                                                        dimension_numbers=("NHWC", "HWIO", "NHWC")) + b)

        def pool(h):
            return lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")

        h = pool(conv(x, w["W1"], w["b1"]))
        h = pool(conv(h, w["W2"], w["b2"]))
        h = jax.nn.relu(h.reshape(x.shape[0], -1) @ w["W3"] + w["b3"])
        logits = h @ w["W4"] + w["b4"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

    @jax.jit
    def step(w, x, y):
        g = jax.grad(loss_fn)(w, x, y)
        return {k: w[k] - LR * g[k] for k in w}

    loss0 = float(loss_fn(w, x, y))
    box = {"w": w}

    def run():
        box["w"] = step(box["w"], x, y)
        jax.block_until_ready(box["w"])

    return dict(_lenet_figures(timed_runs(run, no_sync), loss0), on_gpu=f"jax {jax.default_backend()}")


# ---- c) out of core -------------------------------------------------------------------------------
def _ooc_dir():
    return os.environ["BENCH_GPU_OOC_DIR"]


def io_ooc():
    """The I/O term: one read of X (timed) × 5 passes (X twice, Z three times) + y, and one write
    of an array shaped, chunked and compressed as Z (X's chunks written back)."""
    import zarr

    d = _ooc_dir()
    X = zarr.open_array(os.path.join(d, "X.zarr"), mode="r")
    rows = X.chunks[0]
    t0 = time.perf_counter()
    chunks = []
    for i in range(0, X.shape[0], rows):
        chunks.append((i, X[i:i + rows]))
        if len(chunks) > 2:  # keep a few in memory, as the streaming peers do
            chunks.pop(0)
    read_x = time.perf_counter() - t0
    t0 = time.perf_counter()
    zarr.open_array(os.path.join(d, "y.zarr"), mode="r")[...]
    read_y = time.perf_counter() - t0
    out = tempfile.mkdtemp(prefix="io-", dir=d)
    try:
        Z = zarr.create_array(os.path.join(out, "Z.zarr"), shape=X.shape, chunks=X.chunks, dtype=X.dtype,
                              compressors=X.compressors, overwrite=True)
        t0 = time.perf_counter()
        for i in range(0, X.shape[0], rows):
            Z[i:i + rows] = X[i:i + rows]
        write_z = time.perf_counter() - t0 - read_x  # the loop read X once more
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {"read_s": 5 * read_x + 3 * read_y, "write_s": max(write_z, 0.0), "read_x_s": read_x,
            "chunks": -(-X.shape[0] // rows), "rows": rows}


def _cupy_ooc(cp, X, Y, write_z):
    """Standardize by hand on the GPU, chunk by chunk (host → device, no overlap): two passes over
    X, Z written through `write_z(row, values)`; returns (mean, std)."""
    n, d = X.shape
    rows = X.chunks[0]
    s = cp.zeros(d, cp.float64)
    ss = cp.zeros(d, cp.float64)
    for i in range(0, n, rows):
        c = cp.asarray(X[i:i + rows])
        s += c.sum(axis=0, dtype=cp.float64)
        ss += (c.astype(cp.float64) ** 2).sum(axis=0)
    mean = (s / n).astype(cp.float32)
    std = cp.sqrt(ss / n - (s / n) ** 2).astype(cp.float32)
    for i in range(0, n, rows):
        write_z(i, cp.asnumpy((cp.asarray(X[i:i + rows]) - mean) / std))
    return mean, std


def _gd_steps(cp, read_z, Y, n, d, rows):
    """The 3 gradient steps on Z read chunk by chunk through `read_z(row)`; the per-step losses."""
    w = cp.zeros((d, 1), cp.float32)
    b = cp.zeros((1,), cp.float32)
    losses = []
    for _ in range(3):
        gw, gb, loss = cp.zeros_like(w), cp.zeros_like(b), 0.0
        for i in range(0, n, rows):
            z, y = cp.asarray(read_z(i)), cp.asarray(Y[i:i + rows])
            logits = z @ w + b
            loss += float((cp.maximum(logits, 0) - logits * y + cp.log1p(cp.exp(-abs(logits)))).sum())
            err = (1 / (1 + cp.exp(-logits)) - y) / cp.float32(n)
            gw += z.T @ err
            gb += err.sum(axis=0)
        losses.append(loss / n)
        w, b = w - cp.float32(0.5) * gw, b - cp.float32(0.5) * gb
    return losses


def cupy_ooc():
    """Hand-written cupy streaming over the Zarr data under the pool limit, and the GPU compute
    term: the same kernels on one chunk already on the GPU, times the chunk count."""
    import zarr

    cp = gpu_xp()
    d = _ooc_dir()
    cp.get_default_memory_pool().set_limit(size=int(_env("BENCH_GPU_OOC_BUDGET_GB") * 1e9))
    X = zarr.open_array(os.path.join(d, "X.zarr"), mode="r")
    Y = zarr.open_array(os.path.join(d, "y.zarr"), mode="r")
    n, dim = X.shape
    rows = X.chunks[0]
    out = tempfile.mkdtemp(prefix="cupy-", dir=d)
    try:
        Z = zarr.create_array(os.path.join(out, "Z.zarr"), shape=X.shape, chunks=X.chunks, dtype=X.dtype,
                              compressors=X.compressors, overwrite=True)
        t0 = time.perf_counter()
        _cupy_ooc(cp, X, Y, lambda i, v: Z.__setitem__(slice(i, i + len(v)), v))
        t1 = time.perf_counter()
        losses = _gd_steps(cp, lambda i: Z[i:i + rows], Y, n, dim, rows)
        sync(cp)
        t2 = time.perf_counter()
    finally:
        shutil.rmtree(out, ignore_errors=True)
    # GPU compute alone: one chunk resident, the per-chunk kernels of every pass
    c, yc = cp.asarray(X[0:rows]), cp.asarray(Y[0:rows])
    mean, std = c.mean(axis=0), c.std(axis=0)
    w, b = cp.zeros((dim, 1), cp.float32), cp.zeros((1,), cp.float32)

    def per_chunk():
        c.sum(axis=0, dtype=cp.float64)
        (c.astype(cp.float64) ** 2).sum(axis=0)
        z = (c - mean) / std
        for _ in range(3):
            logits = z @ w + b
            (cp.maximum(logits, 0) - logits * yc + cp.log1p(cp.exp(-abs(logits)))).sum()
            err = (1 / (1 + cp.exp(-logits)) - yc) / cp.float32(n)
            z.T @ err
            err.sum(axis=0)

    t = timed_runs(per_chunk, device_sync(cp))
    chunks = -(-n // rows)
    return {"standardize_s": t1 - t0, "train_s": t2 - t1, "time_s": t2 - t0, "losses": losses,
            "compute_s": t["per_call"] * chunks, "chunks": chunks}


def dflow_gpu_ooc():
    import workload

    cp = gpu_xp()
    budget = int(_env("BENCH_GPU_OOC_BUDGET_GB") * 1e9)
    cp.get_default_memory_pool().set_limit(size=budget)
    d = _ooc_dir()
    out = tempfile.mkdtemp(prefix="dflow-gpu-", dir=d)
    try:
        soft = "/gpu:0" if not os.environ.get(SELFTEST) else None  # the self-test runs it unplaced
        f, grew = gpu_bytes_during(cp, lambda: workload.run_dflow(d, out, memory_budget=budget, device=soft))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    f["time_s"] = f["standardize_s"] + f["train_s"]
    f.pop("dflow", None)
    if grew <= 0:
        return {"skipped": NOT_PLACED, "host_time_s": f["time_s"]}
    return dict(f, gpu_bytes=grew)


def dflow_cpu_ooc():
    import workload

    d = _ooc_dir()
    out = tempfile.mkdtemp(prefix="dflow-cpu-", dir=d)
    try:
        f = workload.run_dflow(d, out)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    f["time_s"] = f["standardize_s"] + f["train_s"]
    f.pop("dflow", None)
    return f


CASES = {
    "env:probe": env_probe,
    "cupy:copy": cupy_copy, "cupy:chain": cupy_chain, "dflow-eager-gpu:chain": dflow_eager_gpu_chain,
    "dflow-graph-gpu:chain": dflow_graph_gpu_chain, "dflow-cpu:chain": dflow_cpu_chain,
    "cupy:matmul": cupy_matmul, "torch:matmul": torch_matmul, "jax:matmul": jax_matmul,
    "dflow-eager-gpu:matmul": dflow_eager_gpu_matmul, "dflow-graph-gpu:matmul": dflow_graph_gpu_matmul,
    "dflow-cpu:matmul": dflow_cpu_matmul,
    "torch:lenet": torch_lenet, "jax:lenet": jax_lenet, "dflow-eager-gpu:lenet": dflow_eager_gpu_lenet,
    "dflow-graph-gpu:lenet": dflow_graph_gpu_lenet, "dflow-cpu:lenet": dflow_cpu_lenet,
    "io:ooc": io_ooc, "cupy:ooc": cupy_ooc, "dflow-gpu:ooc": dflow_gpu_ooc, "dflow-cpu:ooc": dflow_cpu_ooc,
}
GPU_PEERS = ("cupy", "torch", "jax", "dflow-eager-gpu", "dflow-graph-gpu", "dflow-gpu")
PEER_PACKAGE = {"torch": "torch", "jax": "jax"}


# ---- the parent ------------------------------------------------------------------------------------
class Runner:
    """Runs cases in their own interpreters. Without a GPU, a GPU case runs on numpy as a
    self-test (`selftest`; cupy's few calls stood in for) or, for PyTorch and JAX, is skipped; a
    peer whose package cannot be imported is skipped with the import error."""

    def __init__(self, probe, selftest, timeout):
        self.probe, self.selftest, self.timeout, self.results = probe, selftest, timeout, {}

    def skip_reason(self, peer):
        pkg = PEER_PACKAGE.get(peer)
        if pkg and f"{pkg}_error" in self.probe:
            return f"{pkg} cannot be imported ({self.probe[pkg + '_error']})"
        if peer in GPU_PEERS and not self.probe.get("gpus") and (pkg or not self.selftest):
            return "no GPU"
        return None

    def __call__(self, name):
        peer = name.split(":")[0]
        why = self.skip_reason(peer)
        if why:
            self.results[name] = {"skipped": why}
            return self.results[name]
        selftest = peer in GPU_PEERS and not self.probe.get("gpus")
        old = os.environ.pop(SELFTEST, None)
        if selftest:
            os.environ[SELFTEST] = "1"
        t0 = time.perf_counter()
        try:
            r = run_case(__file__, name, timeout=self.timeout)
        finally:
            os.environ.pop(SELFTEST, None)
            if old is not None:
                os.environ[SELFTEST] = old
        r["wall_s"] = time.perf_counter() - t0
        if selftest:
            r["selftest"] = True
        if "error" in r:
            print(f"  {name}: FAILED {r['error']}", file=sys.stderr, flush=True)
        print(f"  ran {name} in {r['wall_s']:.1f} s", file=sys.stderr, flush=True)
        self.results[name] = r
        return r


def _note(r):
    if "skipped" in r:
        return "skipped: " + r["skipped"]
    if "error" in r:  # the exception's last line is enough in a table; stderr had the rest
        return "FAILED: " + r["error"].split(" | ")[-1][:300]
    bits = []
    if r.get("selftest"):
        bits.append("self-test on numpy, not a GPU figure")
    if "on_gpu" in r:
        bits.append(f"result held by {r['on_gpu']}")
    return "; ".join(bits)


def _ratio_line(report, what, got, target, above=True):
    if got is None:
        report(f"  target {what}: not measured")
        return
    ok = got >= target if above else got <= target
    report(f"  target {what} (got {got:.2f}×): {'met' if ok else 'MISSED'}")


def section_chain(run, report, args):
    names = ["cupy:copy", "cupy:chain", "dflow-eager-gpu:chain", "dflow-graph-gpu:chain", "dflow-cpu:chain"]
    res = {n: run(n) for n in names}
    copy = res["cupy:copy"].get("gbps")
    report(f"\na) {args.ops} elementwise ops over a {args.gb:g} GB float32 vector (CPU: {args.cpu_gb:g} GB); "
           "throughput = ops × 2 × bytes / time")
    rows = []
    for n in names:
        r = res[n]
        rows.append([n, fmt_time(r.get("per_call")), f"{r['gbps']:.0f}" if "gbps" in r else "-",
                     fmt_ratio(r.get("gbps"), copy), f"{r['max_err']:.1e}" if r.get("max_err") is not None else "-",
                     _note(r)])
    report(table(["peer", "per run (median)", "GB/s", "÷ copy", "max |err| vs numpy", "note"], rows))
    for n in ("dflow-eager-gpu:chain", "dflow-graph-gpu:chain"):
        r = res[n]
        if "gbps" in r and copy and not r.get("selftest"):
            _ratio_line(report, f"{n} ≥ {CHAIN_TARGET:.0%} of the copy bandwidth", r["gbps"] / copy, CHAIN_TARGET)
    return res


def section_peers(run, report, args):
    out = {}
    for what, unit, key, scale in (("matmul", "TFLOP/s", "tflops", 1.0), ("lenet", "images/s", "images_s", 1.0)):
        names = [f"{p}:{what}" for p in ("cupy", "torch", "jax", "dflow-eager-gpu", "dflow-graph-gpu", "dflow-cpu")]
        names = [n for n in names if n.split(":")[0] != "cupy" or what == "matmul"]
        res = {n: run(n) for n in names}
        out.update(res)
        title = (f"{args.matmul}×{args.matmul} float32 matmul" if what == "matmul"
                 else f"LeNet training step (bench_layers.py), batch {args.lenet_batch}")
        report(f"\nb) {title}")
        fast = max([res[n][key] for n in (f"torch:{what}", f"jax:{what}") if key in res[n] and
                    not res[n].get("selftest")], default=None)
        rows = []
        for n in names:
            r = res[n]
            extra = (f"{r['checksum']:.4f}" if r.get("checksum") is not None else "-") if what == "matmul" else \
                (f"{r['loss0']:.5f}" if "loss0" in r else "-")
            rows.append([n, fmt_time(r.get("per_call", r.get("per_step"))),
                         f"{r[key] * scale:,.1f}" if key in r else "-", fmt_ratio(r.get(key), fast), extra, _note(r)])
        report(table(["peer", "per call (median)", unit, "÷ faster of JAX/PyTorch",
                      "checksum" if what == "matmul" else "loss before step", "note"], rows))
        for n in (f"dflow-eager-gpu:{what}", f"dflow-graph-gpu:{what}"):
            r = res[n]
            if key in r and fast and not r.get("selftest"):
                _ratio_line(report, f"{n} ≥ {PEER_TARGET}× the faster of JAX and PyTorch", r[key] / fast, PEER_TARGET)
    return out


def section_ooc(run, report, args):
    directory = tempfile.mkdtemp(prefix="dflow-bench-gpu-")
    try:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "benchmarks.workload", "--engine", "dflow", "--gb", str(args.ooc_gb),
                        "--dir", directory, "--chunk-rows", str(args.ooc_chunk_rows), "--generate-only"],
                       cwd=ROOT, check=True)
        made = time.perf_counter() - t0
        os.environ["BENCH_GPU_OOC_DIR"] = directory
        res = {n: run(n) for n in ("io:ooc", "cupy:ooc", "dflow-gpu:ooc", "dflow-cpu:ooc")}
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    io, cu = res["io:ooc"], res["cupy:ooc"]
    report(f"\nc) out of core: workload.py (standardize → Zarr, 3 gradient steps) on {args.ooc_gb:g} GB of Zarr "
           f"(written in {made:.0f} s), GPU memory capped at {args.ooc_budget_gb:g} GB (cupy pool limit)")
    bound = None
    if "read_s" in io and "compute_s" in cu:
        bound = io["read_s"] + io["write_s"] + cu["compute_s"]
        report(f"  I/O: read {fmt_time(io['read_s'])} (one read of X {fmt_time(io['read_x_s'])} × 5 passes, "
               f"{io['chunks']} chunks of {io['rows']:,} rows) + write of Z {fmt_time(io['write_s'])}; "
               f"GPU compute {fmt_time(cu['compute_s'])} ({cu['chunks']} chunks, kernels on a resident chunk)"
               + (" [self-test on numpy]" if cu.get("selftest") else ""))
        report(f"  bound: I/O + GPU compute = {fmt_time(bound)}")
    rows = []
    for n in ("cupy:ooc", "dflow-gpu:ooc", "dflow-cpu:ooc"):
        r = res[n]
        losses = " ".join(f"{v:.4f}" for v in r.get("losses", []))
        rows.append([n, fmt_time(r.get("time_s")), fmt_time(r.get("standardize_s")), fmt_time(r.get("train_s")),
                     fmt_ratio(r.get("time_s"), bound), losses, _note(r)])
    report(table(["peer", "total", "standardize", "train", "÷ (I/O + GPU compute)", "loss per step", "note"], rows))
    g = res["dflow-gpu:ooc"]
    if "time_s" in g and bound and not g.get("selftest"):
        _ratio_line(report, f"dflow-gpu:ooc total ≤ {OOC_TARGET}× (I/O + GPU compute)", g["time_s"] / bound,
                    OOC_TARGET, above=False)
    if "host_time_s" in g:
        report(f"  dflow-gpu:ooc ran on the host in {fmt_time(g['host_time_s'])} (not a GPU figure)")
    return res


def section_cpu_vs_gpu(results, report):
    report("\nd) dflow on the CPU vs on the GPU (GPU ÷ CPU throughput; eager for the chain, matmul and LeNet, "
           "graph mode out of core)")
    rows = []
    for what, key, unit in (("chain", "gbps", "GB/s"), ("matmul", "tflops", "TFLOP/s"), ("lenet", "images_s", "images/s")):
        c, g = results.get(f"dflow-cpu:{what}", {}), results.get(f"dflow-eager-gpu:{what}", {})
        rows.append([what, unit, f"{c[key]:,.2f}" if key in c else "-", f"{g[key]:,.2f}" if key in g else "-",
                     fmt_ratio(g.get(key), c.get(key)), _note(g)])
    c, g = results.get("dflow-cpu:ooc", {}), results.get("dflow-gpu:ooc", {})
    rows.append(["out of core", "total time", fmt_time(c.get("time_s")), fmt_time(g.get("time_s")),
                 fmt_ratio(c.get("time_s"), g.get("time_s")), _note(g)])  # time: CPU ÷ GPU
    report(table(["workload", "figure", "dflow CPU", "dflow GPU", "GPU ÷ CPU", "note"], rows))


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gb", type=float, default=4.0, help="chain: GB of float32 on the GPU (default 4)")
    p.add_argument("--ops", type=int, default=1000, help="chain: elementwise ops (default 1000)")
    p.add_argument("--cpu-gb", type=float, default=0.0625, help="chain on the CPU: GB (default 0.0625)")
    p.add_argument("--matmul", type=int, default=8192, help="matmul size n (default 8192)")
    p.add_argument("--lenet-batch", type=int, default=128, help="LeNet batch (default 128)")
    p.add_argument("--ooc-gb", type=float, default=4.0, help="out of core: GB of Zarr data (default 4)")
    p.add_argument("--ooc-budget-gb", type=float, default=1.0, help="out of core: GPU memory cap (default 1)")
    p.add_argument("--ooc-chunk-rows", type=int, default=25_000, help="out of core: rows per Zarr chunk "
                   "(default 25,000: 100 MB chunks of 1000 float32 columns)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per case after a warm-up (default 3)")
    p.add_argument("--case-timeout", type=float, default=240, help="seconds per case (default 240)")
    p.add_argument("--quick", action="store_true", help="small sizes; without a GPU: CPU cases and a numpy "
                   "self-test of the GPU cases")
    p.add_argument("--only", default=None, help="comma-separated sections: chain,peers,ooc (default all)")
    p.add_argument("--record", action="store_true", help="append the output to benchmarks/RESULTS.md")
    p.add_argument("--results", default=None, help="with --record: append to this file instead")
    args = p.parse_args(argv)
    if args.quick:
        args.gb, args.ops, args.cpu_gb, args.matmul = min(args.gb, 0.0625), min(args.ops, 100), 0.004, 512
        args.lenet_batch, args.ooc_gb, args.ooc_budget_gb, args.repeat = 32, 0.02, 0.016, 2
        args.ooc_chunk_rows = 1000
    return args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse(argv)
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX next to cupy and PyTorch
    os.environ.update(BENCH_GPU_GB=str(args.gb), BENCH_GPU_OPS=str(args.ops), BENCH_GPU_CPU_GB=str(args.cpu_gb),
                      BENCH_GPU_MATMUL=str(args.matmul), BENCH_GPU_LENET=str(args.lenet_batch),
                      BENCH_GPU_OOC_BUDGET_GB=str(args.ooc_budget_gb), BENCH_GPU_REPEAT=str(args.repeat))
    probe = run_case(__file__, "env:probe", timeout=120)
    if not probe.get("gpus") and not args.quick:
        print(f"bench_gpu: no GPU here ({probe.get('cupy_error', 'cupy sees no device')}); nothing to measure "
              "(--quick runs the CPU cases and a self-test of the GPU cases)")
        return 0
    report = Report()
    report(machine_line())
    report("GPU: " + (f"{probe['device']} ({probe['gpu_mem_gb']:.0f} GB), cupy {probe['cupy']}" if probe.get("gpus")
                      else f"none ({probe.get('cupy_error', 'cupy sees no device')}); GPU cases self-tested on numpy"))
    report(f"PyTorch: {probe.get('torch', probe.get('torch_error'))}"
           + (f" (CUDA {'available' if probe.get('torch_cuda') else 'not available'})" if "torch" in probe else "")
           + f"; JAX: {probe.get('jax', probe.get('jax_error'))}"
           + (f" {probe['jax_devices']}" if "jax_devices" in probe else ""))
    run = Runner(probe, selftest=not probe.get("gpus"), timeout=args.case_timeout)
    sections = set((args.only or "chain,peers,ooc").split(","))
    results = {}
    t0 = time.perf_counter()
    if "chain" in sections:
        results.update(section_chain(run, report, args))
    if "peers" in sections:
        results.update(section_peers(run, report, args))
    if "ooc" in sections:
        results.update(section_ooc(run, report, args))
    section_cpu_vs_gpu(results, report)
    report(f"\n(whole run {time.perf_counter() - t0:.0f} s)")
    if args.record:
        import shlex

        path = Path(args.results) if args.results else RESULTS
        record("bench_gpu (issue #32: dflow on the GPU vs copy bandwidth, cupy, JAX, PyTorch)",
               "python benchmarks/bench_gpu.py " + " ".join(shlex.quote(a) for a in argv), report.text, path)
        print(f"\nrecorded in {path}")
    print("BENCH-JSON " + json.dumps({"probe": probe, "results": results}, default=str))
    return 0


if __name__ == "__main__":
    if "--case" in sys.argv:
        case_main(CASES, sys.argv)
    else:
        sys.exit(main())
