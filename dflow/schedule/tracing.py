"""`RunTrace`: what one traced or deadlined `Session.run` records (per-op or per-task timings) and
enforces (its deadline), handed to plans in the `RunContext` and turned into TF1's `StepStats`
at the end (see dflow/run_options.py for what each path measures)."""

from __future__ import annotations

import re
import threading
import time

from ..errors import DeadlineExceededError
from ..run_options import DeviceStepStats, NodeExecStats

_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
_RUN_SUFFIX = re.compile(r"-(?:[0-9a-f]{8}-)?r\d+$")  # the per-run suffix the distributed executor gives each key


def _now_us():
    return time.time_ns() // 1000


class RunTrace:
    """Timings of one run (when `trace`) and its deadline (`timeout_ms` > 0)."""

    def __init__(self, trace=False, timeout_ms=0):
        self.trace = bool(trace)
        self.deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms else None
        self.timeout_ms = timeout_ms
        self.records = []  # (device, NodeExecStats), in the order the nodes finished
        self._lock = threading.Lock()

    # ---- deadline ------------------------------------------------------------------------------
    def check_deadline(self, where=""):
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise DeadlineExceededError(None, None, f"Timed out: the run exceeded RunOptions.timeout_in_ms="
                                        f"{self.timeout_ms}{where}; nothing was committed")

    # ---- timings -------------------------------------------------------------------------------
    def record(self, device, name, start_us, end_us, label="", thread_id=0):
        with self._lock:
            self.records.append((device, NodeExecStats(name, start_us, max(0, end_us - start_us), label, thread_id)))

    def op(self, name, label=""):
        """A context timing one in-process op (or fused chain) and checking the deadline first."""
        return _OpTimer(self, name, label)

    def dask_callbacks(self, scheduler):
        """dask.local callbacks (for `get_async(callbacks=...)`: (start, start_state, pretask,
        posttask, finish) tuples) timing each task from its dispatch to a worker to its result, and
        refusing to dispatch past the deadline."""
        started = {}
        device = f"{_DEVICE} (dask {scheduler})"

        def pretask(key, dsk, state):
            self.check_deadline(f" (before dispatching task {key!r})")
            if self.trace:
                started[key] = _now_us()

        def posttask(key, result, dsk, state, worker_id):
            if self.trace and key in started:
                self.record(device, _key_name(key), started.pop(key), _now_us(), label=str(key), thread_id=worker_id)

        return [(None, None, pretask, posttask, None)]

    def add_task_stream(self, records):
        """Task timings from a distributed cluster (`distributed.get_task_stream`'s data)."""
        for r in records:
            for ss in r.get("startstops", ()):
                if ss.get("action") == "compute":
                    self.record(f"{_DEVICE} (dask worker {r.get('worker', '?')})",
                                _RUN_SUFFIX.sub("", _key_name(r.get("key"))),
                                int(ss["start"] * 1e6), int(ss["stop"] * 1e6), label=str(r.get("key")),
                                thread_id=r.get("thread", 0))

    def step_stats_into(self, run_metadata):
        """Fills `run_metadata.step_stats` (one DeviceStepStats per device, nodes in start order)."""
        by_device = {}
        for device, node in sorted(self.records, key=lambda r: r[1].all_start_micros):
            by_device.setdefault(device, []).append(node)
        run_metadata.step_stats.dev_stats = [DeviceStepStats(d, nodes) for d, nodes in by_device.items()]


class _OpTimer:
    __slots__ = ("trace", "name", "label", "start")

    def __init__(self, trace, name, label):
        self.trace, self.name, self.label = trace, name, label

    def __enter__(self):
        self.trace.check_deadline(f" (before op {self.name!r})")
        self.start = _now_us()

    def __exit__(self, *exc):
        if self.trace.trace and exc[0] is None:
            self.trace.record(_DEVICE, self.name, self.start, _now_us(), self.label, threading.get_ident())


def _key_name(key):
    name = key[0] if isinstance(key, tuple) else key
    return str(name)
