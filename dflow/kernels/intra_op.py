"""Intra-op parallelism: a large kernel split over the batch axis and run on this process's cores.

TF1 runs one op's kernel on several threads (`ConfigProto.intra_op_parallelism_threads`, 0: one
per core). dflow does the same for its own large kernels on the in-process path (a plan run by the
default Session in this process, `schedule.plan.EagerPlan`): a convolution or a pool over a batch
is cut into one part of the batch per thread, and each part runs the serial kernel (its im2col,
its matmul with one BLAS thread, its fused epilogue) on its own core. Splitting the kernel rather
than relying on BLAS's threads parallelizes the copies around the matmul too (im2col, bias and
relu, pools), and leaves no BLAS thread spinning between the many small matmuls of a slabbed
convolution.

Anywhere else (Dask tasks, whose scheduler already keeps every core busy; cupy arrays; small
inputs) `intra_op_parts` gives one part and the kernel runs as before. The count comes from a
context variable that the in-process runner sets (`intra_op_threads(n)`); worker threads see 1, so
a kernel never splits twice. While parts run, the BLAS libraries numpy uses (threadpoolctl) are
held at one thread each; the previous count is restored after.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np
from array_api_compat import is_numpy_namespace

_THREADS = contextvars.ContextVar("dflow_intra_op_threads", default=1)
_MIN_PART_FLOPS = 32e6  # a part does at least this much work (a thread hand-off costs ~20 µs)

_pool = None
_pool_lock = threading.Lock()
_blas_lock = threading.Lock()  # one split kernel at a time changes BLAS's thread count
_controller = None


def default_threads():
    """One thread per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def intra_op_threads(n):
    """Kernels run in this context may split over `n` threads (0 or None: one per core)."""
    token = _THREADS.set(default_threads() if not n else max(1, int(n)))
    try:
        yield
    finally:
        _THREADS.reset(token)


def intra_op_parts(xp, n, flops):
    """Slices of a batch axis of `n` items, one per thread, for a kernel doing `flops` of work on
    `xp` arrays: one slice (the whole axis) outside `intra_op_threads`, for cupy, or for work too
    small to gain from a split."""
    threads = _THREADS.get()
    if threads > 1 and not is_numpy_namespace(xp):
        threads = 1
    threads = int(min(threads, n, max(1, flops // _MIN_PART_FLOPS)))
    if threads <= 1:
        return [slice(0, n)]
    bounds = np.linspace(0, n, threads + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def run_parts(fn, parts):
    """[fn(part) for part in parts], the parts on the intra-op threads (in order); one part runs
    here. Each part runs in a copy of the caller's context (numpy's error state included) with
    intra-op threads set to 1."""
    if len(parts) <= 1:
        return [fn(p) for p in parts]
    pool = _get_pool()

    def one(part):
        _THREADS.set(1)
        return fn(part)

    with _blas_lock, _one_blas_thread():
        futures = [pool.submit(contextvars.copy_context().run, one, p) for p in parts[1:]]
        try:
            first = contextvars.copy_context().run(one, parts[0])
        finally:
            wait(futures)
        return [first] + [f.result() for f in futures]


def _get_pool():
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=max(1, default_threads() - 1), thread_name_prefix="dflow-intra-op")
        return _pool


@contextlib.contextmanager
def _one_blas_thread():
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    with _controller.limit(limits=1, user_api="blas"):
        yield
