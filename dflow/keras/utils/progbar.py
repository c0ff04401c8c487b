"""Keras's progress bar (`fit(verbose=1)`): `  4/10 [===========>..................] - ETA: 0s - loss: 4.8078`.

On a terminal (or in IPython) each update rewrites the line with `\\r`; otherwise only the final
line of each run (current >= target) is printed, so logs do not fill with partial bars.
"""

from __future__ import annotations

import sys
import time

import numpy as np

__all__ = ["Progbar"]


class Progbar:
    """A progress bar over `target` steps (None: unknown); `values` are averaged over the steps
    they were given for, except those named in `stateful_metrics` (shown as given)."""

    def __init__(self, target, width=30, verbose=1, interval=0.05, stateful_metrics=None, unit_name="step"):
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stateful_metrics = set(stateful_metrics) if stateful_metrics else set()
        self._dynamic_display = (hasattr(sys.stdout, "isatty") and sys.stdout.isatty()) or "ipykernel" in sys.modules
        self._total_width = 0
        self._seen_so_far = 0
        self._values = {}
        self._values_order = []
        self._start = time.time()
        self._last_update = 0

    def update(self, current, values=None):
        """Moves the bar to step `current`; `values` is a list of (name, value)."""
        for name, value in values or []:
            if name not in self._values_order:
                self._values_order.append(name)
            if name in self.stateful_metrics:
                self._values[name] = value
            else:
                steps = current - self._seen_so_far
                total, count = self._values.get(name, [0.0, 0])
                self._values[name] = [total + value * steps, count + steps]
        self._seen_so_far = current
        now = time.time()
        finished = self.target is not None and current >= self.target
        if self.verbose == 1:
            if not finished and (now - self._last_update < self.interval or not self._dynamic_display):
                return
            self._write_bar(current, now, finished)
        elif self.verbose == 2 and finished:
            info = self._counter(current) + f" - {now - self._start:.0f}s" + self._metrics(values_only=True) + "\n"
            sys.stdout.write(info)
            sys.stdout.flush()
        self._last_update = now

    def add(self, n, values=None):
        self.update(self._seen_so_far + n, values)

    # ---- formatting -------------------------------------------------------------------------------------
    def _counter(self, current):
        digits = int(np.log10(self.target)) + 1 if self.target else 1
        return f"{current:{digits}d}/{self.target}"

    def _write_bar(self, current, now, finished):
        previous_width = self._total_width
        if self._dynamic_display:
            sys.stdout.write("\b" * previous_width + "\r")
        if self.target is not None:
            bar = self._counter(current) + " ["
            progress_width = int(self.width * float(current) / self.target) if self.target else self.width
            if progress_width > 0:
                bar += "=" * (progress_width - 1) + (">" if current < self.target else "=")
            bar += "." * (self.width - progress_width) + "]"
        else:
            bar = f"{current:7d}/Unknown"
        self._total_width = len(bar)
        per_unit = (now - self._start) / current if current else 0
        if self.target is not None and not finished:
            eta = per_unit * (self.target - current)
            if eta > 3600:
                eta_format = f"{int(eta // 3600)}:{int((eta % 3600) // 60):02d}:{int(eta % 60):02d}"
            elif eta > 60:
                eta_format = f"{int(eta // 60)}:{int(eta % 60):02d}"
            else:
                eta_format = f"{int(eta)}s"
            info = f" - ETA: {eta_format}"
        else:
            info = f" - {now - self._start:.0f}s"
            if per_unit >= 1 or per_unit == 0:
                info += f" {per_unit:.0f}s/{self.unit_name}"
            elif per_unit >= 1e-3:
                info += f" {per_unit * 1e3:.0f}ms/{self.unit_name}"
            else:
                info += f" {per_unit * 1e6:.0f}us/{self.unit_name}"
        info += self._metrics()
        self._total_width += len(info)
        if previous_width > self._total_width and self._dynamic_display:
            info += " " * (previous_width - self._total_width)
        if finished:
            info += "\n"
        sys.stdout.write(bar + info)
        sys.stdout.flush()

    def _metrics(self, values_only=False):
        out = ""
        for name in self._values_order:
            value = self._values[name]
            out += f" - {name}:"
            if isinstance(value, list):
                avg = np.mean(value[0] / max(1, value[1]))
                out += f" {avg:.4f}" if abs(avg) > 1e-3 else f" {avg:.4e}"
            else:
                out += f" {value}"
        return out
