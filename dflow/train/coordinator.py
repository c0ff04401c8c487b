"""`tf.train.Coordinator` and `start_queue_runners`: stopping a set of threads together.

`start_queue_runners` starts the threads of the QUEUE_RUNNERS collection's queue runners
(train/queue_runner.py: TF1's input producers and batching add them) and returns them, as TF1.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time

from ..errors import OutOfRangeError
from ..graph.graph import get_default_graph
from ..graph.keys import GraphKeys

__all__ = ["Coordinator", "start_queue_runners", "LooperThread"]


class Coordinator:
    """Threads check `should_stop()`, any of them calls `request_stop(ex)`, the main thread
    `join`s them and gets the first exception re-raised (TF1's semantics). Exceptions of
    `clean_stop_exception_types` (OutOfRangeError by default) stop cleanly, without being raised."""

    def __init__(self, clean_stop_exception_types=None):
        self._clean = tuple(clean_stop_exception_types) if clean_stop_exception_types is not None \
            else (OutOfRangeError,)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info = None
        self._registered = set()
        self._joined = False

    def _filter(self, ex):
        if isinstance(ex, tuple):
            return None if issubclass(ex[0], self._clean) else ex
        if isinstance(ex, self._clean):
            return None
        return (type(ex), ex, ex.__traceback__) if ex is not None else None

    def request_stop(self, ex=None):
        """Asks every thread to stop; `ex` (an exception or exc_info) is kept to re-raise at `join`,
        the first one only."""
        with self._lock:
            ex = self._filter(ex) if ex is not None else None
            if self._joined:
                if ex is not None and self._exc_info is None:  # a stop after join: raise at once
                    raise ex[1].with_traceback(ex[2])
                return
            if ex is not None and self._exc_info is None:
                self._exc_info = ex
            self._stop_event.set()

    def clear_stop(self):
        """Forgets the stop request and the kept exception (for a new set of threads)."""
        with self._lock:
            self._joined = False
            self._exc_info = None
            self._stop_event.clear()

    def should_stop(self):
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """`with coord.stop_on_exception():` a body that raises requests the stop with its exception."""
        try:
            yield
        except Exception:  # noqa: BLE001 - handed to the coordinator, raised at join
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """Blocks until a stop is requested (or `timeout` seconds); returns whether it was."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._registered.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for the threads (and the registered ones) to end after a stop request; re-raises
        the kept exception. Threads still alive `stop_grace_period_secs` after the request:
        RuntimeError naming them (unless `ignore_live_threads`)."""
        with self._lock:
            threads = set(threads or []) | self._registered
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered = set()
            exc = self._exc_info
        if exc is not None:
            raise exc[1].with_traceback(exc[2])
        if alive and not ignore_live_threads:
            raise RuntimeError("Coordinator stopped with threads still running: " + " ".join(alive))

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        """Raises the kept exception, if any."""
        with self._lock:
            exc = self._exc_info
        if exc is not None:
            raise exc[1].with_traceback(exc[2])


class LooperThread(threading.Thread):
    """Runs `target(*args)` at once and then every `timer_interval_secs` (or in a tight loop when
    None) until the coordinator stops (TF1's `tf.train.LooperThread`)."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__(daemon=True)
        self._coord = coord
        self._interval = timer_interval_secs
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        t = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        t.start()
        return t

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._interval is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_t = time.monotonic()  # TF1: the first call at once, then every interval
                while not self._coord.wait_for_stop(max(0.0, next_t - time.monotonic())):
                    next_t += self._interval
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        pass

    def stop_loop(self):
        pass

    def run_loop(self):
        if self._target:
            self._target(*self._args, **self._kwargs)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection=GraphKeys.QUEUE_RUNNERS):
    """Starts the threads of the queue runners in `collection` (TF1) and returns them; `tf.data`
    pipelines need none."""
    graph = sess.graph if sess is not None else get_default_graph()
    threads = []
    for qr in graph.get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
