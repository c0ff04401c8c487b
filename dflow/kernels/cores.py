"""The cores of this process: intra-op splits of large kernels, BLAS's threads, pipeline threads.

One place decides who computes on which core, so that numpy's BLAS, dflow's kernel splits and
tf.data's background threads never fight over the same ones:

- **Intra-op splits.** TF1 runs one op's kernel on several threads
  (`ConfigProto.intra_op_parallelism_threads`, 0: one per core). dflow does the same for its own
  large kernels on the in-process path (`schedule.plan.EagerPlan` sets `intra_op_threads(n)`): a
  convolution, its filter gradient or a pool over a batch is cut into one part of the batch per
  thread (`intra_op_parts`, `run_parts`), each part the serial kernel (im2col, matmul, fused
  epilogue) on its own core with BLAS at one thread. Splitting the kernel rather than relying on
  BLAS's threads parallelizes the copies around the matmul too, and leaves no BLAS thread spinning
  between the many small matmuls of a slabbed convolution. Elsewhere (Dask tasks, whose scheduler
  keeps every core busy; cupy; small work; the parts themselves) a kernel runs whole.
- **Pipeline threads** (`busy_thread()`, entered by tf.data's prefetch and chunk read-ahead threads
  while they run): each takes a core from BLAS and from intra-op splits. OpenBLAS splits even a
  small matmul over every core and each call waits, spinning, until all its threads got one; with a
  core busy decompressing chunks a small logistic step took many times its time (bench_data).
- **Dask task threads** (`task_threads(n)`, entered by the threads scheduler around a run on a
  pool of n threads): n kernels run at once, so each BLAS call gets the cores left by pipeline
  threads divided by n (at least 1). With BLAS at its own count beside them, 2 tasks on 2 cores
  each called a 2-thread BLAS and a CNN's Dask run took 1.5x its time at one BLAS thread. A
  scheduler's worker processes set their BLAS in the same way (`share_process_cores`).
- **BLAS** (numpy's, found and set by threadpoolctl): its thread count is 1 while an in-process
  run or a split kernel runs (a matmul large enough to gain is split by dflow, by rows of the
  product), the cores left by pipeline threads and Dask task threads while any run (at least 1),
  and its own count otherwise (user code between runs).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np
from array_api_compat import is_numpy_namespace

_THREADS = contextvars.ContextVar("dflow_intra_op_threads", default=1)
_MIN_PART_FLOPS = 32e6  # a part does at least this much work (what a hand-off to a thread costs)

_lock = threading.Lock()  # guards the counts below and BLAS's thread count
_split_lock = threading.Lock()  # one split kernel at a time
_busy = 0  # pipeline threads running now
_splitting = 0  # split kernels running now (0 or 1)
_runs = 0  # in-process runs going on now (their kernels split themselves; BLAS stays at one thread)
_tasks = 0  # Dask task threads of this process's scheduler runs going on now
_saved = None  # BLAS's own thread counts while dflow holds them at others
_current = None  # the counts dflow set last (None: BLAS's own)
_blas = []  # [threadpoolctl controller of numpy's BLAS libraries], looked up once
_pool = None
_memory_kept = False  # keep_kernel_memory ran for in-process runs (once per process)


@functools.lru_cache(maxsize=1)
def cpu_count():
    """Cores this process may run on (its affinity mask, e.g. under taskset; read once)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


# ---- BLAS ----------------------------------------------------------------------------------------


def _blas_libs():
    if not _blas:
        from threadpoolctl import ThreadpoolController

        _blas.append(ThreadpoolController().select(user_api="blas").lib_controllers)
    return _blas[0]


def blas_threads():
    """BLAS's thread count now (None when numpy's BLAS is not found): for tests and benchmarks."""
    libs = _blas_libs()
    return int(libs[0].get_num_threads()) if libs else None


def _apply():
    """Sets BLAS's thread count from the counts (under _lock); a count already set is not set again."""
    global _saved, _current
    libs = _blas_libs()
    if not libs:
        return
    if _splitting or _runs or _busy or _tasks:
        if _saved is None:
            _saved = [lib.get_num_threads() for lib in libs]
        share = max(1, (cpu_count() - _busy) // max(1, _tasks))
        want = [1 if (_splitting or _runs) else min(own, share) for own in _saved]
        if want != _current:
            for lib, n in zip(libs, want):
                lib.set_num_threads(n)
            _current = want
    elif _saved is not None:
        for lib, own in zip(libs, _saved):
            lib.set_num_threads(own)
        _saved = _current = None


@contextlib.contextmanager
def busy_thread(n=1):
    """Counts `n` pipeline threads as taking a core each for the duration (enter where they start)."""
    global _busy
    with _lock:
        _busy += n
        _apply()
    try:
        yield
    finally:
        with _lock:
            _busy -= n
            _apply()


@contextlib.contextmanager
def task_threads(n):
    """Counts `n` Dask task threads as running kernels at once for the duration (a threads
    scheduler's run): BLAS then gets a share of the cores per task."""
    global _tasks
    with _lock:
        _tasks += n
        _apply()
    try:
        yield
    finally:
        with _lock:
            _tasks -= n
            _apply()


def share_process_cores(n):
    """In one of `n` worker processes of a scheduler on this machine: BLAS at this process's share of
    the cores (a process pool's initializer; a distributed nanny sets one thread by itself)."""
    libs = _blas_libs()
    for lib in libs:
        lib.set_num_threads(max(1, min(lib.get_num_threads(), cpu_count() // max(1, n))))


@contextlib.contextmanager
def _splitting_kernel():
    global _splitting
    with _split_lock:
        with _lock:
            _splitting += 1
            _apply()
        try:
            yield
        finally:
            with _lock:
                _splitting -= 1
                _apply()


# ---- the allocator of a Dask worker ----------------------------------------------------------------

# glibc mallopt parameters, and the values a worker gets (see `keep_kernel_memory`)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_BYTES, _TRIM_BYTES = 16 << 20, 32 << 20


def keep_kernel_memory(in_process=False):
    """Arrays under 16 MiB come from the heap and up to 32 MiB of freed heap is kept, so the
    kernels' slab buffers and temporaries are reused instead of mapped and faulted in afresh.

    In a process started with MALLOC_TRIM_THRESHOLD_ set (a distributed nanny sets 64 KiB, to give
    memory back to the OS), glibc's own adaptive thresholds are off and every array of 128 KiB and
    more was a new mapping: a CNN's Dask tasks ran 6x slower. In-process runs (`in_process`, set
    once by the first `intra_op_threads`) gain too: with glibc's adaptive thresholds the heap's top
    is still trimmed between steps, and a small CNN's Keras training step faulted its activations
    in afresh each time (bench_keras: its CNN step, benchmarks/RESULTS.md).
    Larger arrays are still mapped and given back when freed. True if the allocator was set
    (glibc only; never when MALLOC_MMAP_THRESHOLD_ is set: the user's choice stands)."""
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    if not in_process and "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_BYTES)) and bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_BYTES))


# ---- intra-op splits -----------------------------------------------------------------------------


class intra_op_threads:  # noqa: N801 - used as a function, like contextlib's managers
    """An in-process run: its kernels may split over `n` threads (0 or None: one per core), and
    BLAS runs one thread per call meanwhile (a matmul large enough to gain splits itself, as a
    convolution does), so no BLAS thread spins between the run's many small calls, which on a busy
    machine made each wait for a time slice (an LSTM step's matmuls many times
    slower beside other work: bench_rnn). `n` = 1: every kernel on the calling thread."""

    __slots__ = ("n", "token")

    def __init__(self, n):
        self.n = cpu_count() if not n else max(1, int(n))

    def __enter__(self):
        global _runs, _memory_kept
        self.token = _THREADS.set(self.n)
        with _lock:
            _runs += 1
            _apply()
            if not _memory_kept:
                _memory_kept = True
                keep_kernel_memory(in_process="MALLOC_TRIM_THRESHOLD_" not in os.environ)

    def __exit__(self, *exc):
        global _runs
        with _lock:
            _runs -= 1
            _apply()
        _THREADS.reset(self.token)


def blas_held():
    """Whether BLAS runs one thread now (an in-process run or a split kernel is going on, or its
    count is 1: Dask task threads took the cores, a worker process's share): a BLAS call then costs
    no wait for other threads, so kernels may cut their work into small calls."""
    if _runs or _splitting:
        return True
    libs = _blas_libs()
    return bool(libs) and all(lib.get_num_threads() == 1 for lib in libs)


def may_split(flops):
    """Whether a kernel of `flops` could split here (a cheap test before `intra_op_parts`)."""
    return flops >= 2 * _MIN_PART_FLOPS and _THREADS.get() > 1


def intra_op_parts(xp, n, flops):
    """Slices of a batch axis of `n` items, one per thread, for a kernel doing `flops` of work on
    `xp` arrays: one slice (the whole axis) outside `intra_op_threads`, for a namespace other than
    numpy, for work too small to gain from a split, or when pipeline threads hold the other cores."""
    threads = _THREADS.get()
    if threads > 1 and not is_numpy_namespace(xp):
        threads = 1
    if _busy:
        threads = min(threads, cpu_count() - _busy)
    threads = int(min(threads, n, max(1, flops // _MIN_PART_FLOPS)))
    if threads <= 1:
        return [slice(0, n)]
    bounds = np.linspace(0, n, threads + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def run_parts(fn, parts):
    """[fn(part) for part in parts], the parts on the intra-op threads (in order; the first runs
    here). Each part runs in a copy of the caller's context (numpy's error state included) with
    intra-op threads set to 1, and BLAS at one thread; a part's error is raised after all ended."""
    if len(parts) <= 1:
        return [fn(p) for p in parts]

    def one(part):
        _THREADS.set(1)
        return fn(part)

    with _splitting_kernel():
        futures = [_get_pool().submit(contextvars.copy_context().run, one, p) for p in parts[1:]]
        try:
            first = contextvars.copy_context().run(one, parts[0])
        finally:
            wait(futures)
        return [first] + [f.result() for f in futures]


def _get_pool():
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=max(1, cpu_count() - 1), thread_name_prefix="dflow-intra-op")
        return _pool
