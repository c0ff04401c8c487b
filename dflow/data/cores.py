"""The cores an input pipeline's background threads take, and BLAS kept off them.

While a pipeline's reading thread (chunked.py's read-ahead) or prefetch thread runs, the BLAS
numpy calls into (the matmuls of a Session's in-process runs) is limited to the cores left, at
least one; when the last such thread ends, BLAS gets back its own count.

Why: OpenBLAS (numpy's wheels) splits even a small matmul over every core, and each call waits
until all its threads got a core; with one core busy decompressing chunks a 1024×1000 logistic
regression step took ~30 ms instead of ~1 ms, and the waiting threads spin, taking CPU from the
reader (benchmarks/bench_data.py: 2.4 CPU-seconds of 4.4 per epoch). TF1 keeps tf.data's threads
beside its intra-op pool; dflow shares the cores out instead.

Only OpenBLAS, as numpy's wheels ship it (scipy-openblas) or as a system library loaded into the
process, is controlled (found among the loaded libraries, as threadpoolctl does); under any other
BLAS this module does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
            "openblas_set_num_threads")

_lock = threading.Lock()
_busy = 0  # pipeline threads running now
_saved = None  # BLAS's own thread count, while limited
_blas = []  # [(get, set)] once looked up; [None] when there is no OpenBLAS


def cpu_count():
    """Cores this process may run on (its affinity mask, e.g. under taskset)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _openblas():
    """(get_num_threads, set_num_threads) of the OpenBLAS numpy uses, or None."""
    if not _blas:
        import numpy  # noqa: F401 - numpy's BLAS must be loaded to be found

        found = None
        try:
            with open("/proc/self/maps") as f:
                paths = {line.split(None, 5)[-1].strip() for line in f if "openblas" in line.lower()}
        except OSError:
            paths = set()
        for path in sorted(p for p in paths if p.startswith("/")):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for name in _SETTERS:
                setter = getattr(lib, name, None)
                getter = getattr(lib, name.replace("_set_", "_get_"), None)
                if setter is not None and getter is not None:
                    setter.argtypes, setter.restype, getter.restype = [ctypes.c_int], None, ctypes.c_int
                    found = (getter, setter)
                    break
            if found:
                break
        _blas.append(found)
    return _blas[0]


def _apply():
    global _saved
    blas = _openblas()
    if blas is None:
        return
    get, set_ = blas
    if _busy:
        if _saved is None:
            _saved = int(get())
        limit = max(1, min(_saved, cpu_count() - _busy))
        if int(get()) != limit:
            set_(limit)
    elif _saved is not None:
        set_(_saved)
        _saved = None


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


def blas_threads():
    """BLAS's thread count now (None without OpenBLAS): for tests and benchmarks."""
    blas = _openblas()
    return None if blas is None else int(blas[0]())
