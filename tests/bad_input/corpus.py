"""The bad-input corpus's table: each case is a small function making one user mistake.

`@case(error)` registers `fn(env) -> (act, names)`: `fn` builds what it needs (in `env.graph`, the
graph of the test's shared session, or a graph of its own), `act()` makes the mistake, and
`names` are the op/tensor names the error message must contain. `when="run"` cases run on every
scheduler (one shared Session per scheduler: a failed run must leave it usable); `when="build"`
cases fail while the graph is built, before any scheduler is involved, and run once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

CASES = []


@dataclass(frozen=True)
class Case:
    id: str
    fn: Callable
    error: type
    when: str  # "run" | "build"
    match: str | None


def case(error, when="run", match=None):
    def register(fn):
        CASES.append(Case(fn.__name__, fn, error, when, match))
        return fn
    return register


def tree(path):
    """What is on disk under `path`: relative name -> (size, mtime) of every file and directory."""
    out = {}
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            p = os.path.join(root, name)
            st = os.lstat(p)
            out[os.path.relpath(p, path)] = (st.st_size if name in files else None, st.st_mtime_ns)
    return out
