"""Keras's enqueuers: batches of a `Sequence` (in order, optionally shuffled per epoch) or of a
generator, produced ahead by worker threads into a bounded queue (`start`/`get`/`stop`).

`use_multiprocessing=True` is accepted and runs threads as well (dflow's batches are numpy and
dask work already parallelizes; processes would copy the Sequence for no gain)."""

from __future__ import annotations

import queue
import random
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["SequenceEnqueuer", "OrderedEnqueuer", "GeneratorEnqueuer"]


class SequenceEnqueuer:
    """Base class: `start(workers, max_queue_size)` launches the producers, `get()` is a generator
    of their outputs, `stop(timeout)` ends them."""

    def __init__(self, sequence, use_multiprocessing=False):
        self.sequence = sequence
        self.use_multiprocessing = use_multiprocessing
        self.workers = 0
        self.queue = None
        self.stop_signal = None
        self.run_thread = None

    def is_running(self):
        return self.stop_signal is not None and not self.stop_signal.is_set()

    def start(self, workers=1, max_queue_size=10):
        self.workers = max(1, int(workers))
        self.queue = queue.Queue(max_queue_size)
        self.stop_signal = threading.Event()
        self.run_thread = threading.Thread(target=self._run, daemon=True)
        self.run_thread.start()

    def _put(self, item):
        """Blocks until there is room, unless stopped (then False)."""
        while not self.stop_signal.is_set():
            try:
                self.queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def stop(self, timeout=None):
        """Signals the producers to stop and waits up to `timeout` seconds for them."""
        if self.stop_signal is None:
            return
        self.stop_signal.set()
        with self.queue.mutex:
            self.queue.queue.clear()
            self.queue.unfinished_tasks = 0
            self.queue.not_full.notify_all()
        if self.run_thread is not None:
            self.run_thread.join(timeout)
        self.run_thread = None

    def _run(self):
        raise NotImplementedError

    def get(self):
        raise NotImplementedError


_DONE = object()


class OrderedEnqueuer(SequenceEnqueuer):
    """Batches of a `keras.utils.Sequence` in index order (shuffled each epoch when `shuffle`),
    epoch after epoch, calling `on_epoch_end` between epochs."""

    def __init__(self, sequence, use_multiprocessing=False, shuffle=False):
        super().__init__(sequence, use_multiprocessing)
        self.shuffle = shuffle

    def _run(self):
        with ThreadPoolExecutor(self.workers) as pool:
            while not self.stop_signal.is_set():
                order = list(range(len(self.sequence)))
                if self.shuffle:
                    random.shuffle(order)
                for i in order:
                    if not self._put(pool.submit(self.sequence.__getitem__, i)):
                        return
                # the epoch's batches are all computed before on_epoch_end may change the data
                with self.queue.all_tasks_done:
                    while self.queue.unfinished_tasks and not self.stop_signal.is_set():
                        self.queue.all_tasks_done.wait(0.05)
                if self.stop_signal.is_set():
                    return
                self.sequence.on_epoch_end()

    def get(self):
        """Yields the batches forever (until `stop`); a worker's exception is raised here."""
        while self.is_running():
            try:
                future = self.queue.get(timeout=0.05)
            except queue.Empty:
                continue
            try:
                item = future.result()
            finally:
                self.queue.task_done()
            if item is not None:
                yield item


class GeneratorEnqueuer(SequenceEnqueuer):
    """Items of a Python generator, pulled by `workers` threads (one at a time, under a lock);
    `get()` ends when the generator is exhausted."""

    def __init__(self, sequence, use_multiprocessing=False, random_seed=None):
        super().__init__(sequence, use_multiprocessing)
        self.random_seed = random_seed
        self._lock = threading.Lock()

    def _pull(self):
        while not self.stop_signal.is_set():
            try:
                with self._lock:
                    item = next(self.sequence)
            except StopIteration:
                self._put(_DONE)
                return
            except Exception as e:  # noqa: BLE001 - handed to the consumer, raised in get()
                self._put(_Failure(e))
                return
            if not self._put(item):
                return

    def _run(self):
        if self.random_seed is not None:
            random.seed(self.random_seed)
        threads = [threading.Thread(target=self._pull, daemon=True) for _ in range(self.workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def get(self):
        finished = 0
        while self.is_running():
            try:
                item = self.queue.get(timeout=0.05)
            except queue.Empty:
                continue
            self.queue.task_done()
            if item is _DONE:
                finished += 1
                if finished >= self.workers:
                    self.stop_signal.set()
                    return
                continue
            if isinstance(item, _Failure):
                self.stop()
                raise item.error
            yield item


class _Failure:
    def __init__(self, error):
        self.error = error
