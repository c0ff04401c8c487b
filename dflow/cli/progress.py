"""`dflow run`'s progress bar: a tqdm bar per scheduler call that runs longer than a moment.

A dask callback (registered for the run) sees every call of the sync, threads and processes
schedulers, whichever Session makes it: the bar counts the call's tasks and appears only after
`delay` seconds, so the many short runs of a training loop print nothing. On a cluster the Dask
dashboard (its link is printed) shows progress instead.
"""

from __future__ import annotations

import sys
import threading

from dask.callbacks import Callback

__all__ = ["TaskProgress"]


class TaskProgress(Callback):
    """tqdm bars (on `file`, stderr by default) of the tasks of each local scheduler call."""

    def __init__(self, delay=2.0, file=None):
        super().__init__()
        self._delay = delay
        self._file = file
        self._bars = {}  # id(scheduler state) -> bar: calls from several threads each get theirs
        self._lock = threading.Lock()

    def _start_state(self, dsk, state):
        from tqdm import tqdm

        total = sum(len(state[k]) for k in ("ready", "waiting", "running", "finished"))
        bar = tqdm(total=total, delay=self._delay, file=self._file or sys.stderr, unit="task", leave=False,
                   desc="dflow", dynamic_ncols=True)
        with self._lock:
            self._bars[id(state)] = bar

    def _posttask(self, key, result, dsk, state, worker_id):
        bar = self._bars.get(id(state))
        if bar is not None:
            bar.update(1)

    def _finish(self, dsk, state, errored):
        with self._lock:
            bar = self._bars.pop(id(state), None)
        if bar is not None:
            bar.close()
