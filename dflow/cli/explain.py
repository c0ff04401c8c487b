"""`dflow explain SCRIPT [ARGS...]`: runs the script as `dflow run` does, and prints the plan of
each distinct `Session.run` the first time it is run: what `Session.explain(fetches, feed_dict)`
reports (in process or on Dask, its stages, each task's projected memory, the projected peak and
the budget).

A run is distinct by the names of its fetches (in their structure) and of its fed tensors; the
plan is printed on stderr, before that run, so the script's stdout stays its own. The script
runs normally otherwise: explaining compiles the plan the run then uses. A plan that depends on
a value decided while the graph runs (a `tf.cond` or `tf.while_loop` on a computed value) cannot
be explained beforehand; the report says so and the run goes on.
"""

from __future__ import annotations

import contextlib
import sys

from ..errors import OpError
from ..graph.ops import Operation, Tensor
from ..schedule.session import Session

__all__ = ["explaining"]


def _names(x):
    """A hashable description of a fetch structure (or a feed key) by graph element names."""
    if isinstance(x, (Tensor, Operation)):
        return x.name
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    if isinstance(x, dict):
        return ("dict", tuple(sorted(((repr(k), _names(v)) for k, v in x.items()))))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_names(v) for v in x))
    name = getattr(x, "name", None)
    return name if isinstance(name, str) else (type(x).__name__, id(x))


@contextlib.contextmanager
def explaining(out=None):
    """Within it, every Session prints the plan of each distinct run the first time it is run."""
    out = out or sys.stderr
    original = Session.run
    seen = set()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        key = (id(self), _names(fetches), tuple(sorted(repr(_names(k)) for k in (feed_dict or {}))))
        if key not in seen:
            seen.add(key)
            try:
                report = self.explain(fetches, feed_dict)
            except (OpError, TypeError, ValueError) as e:
                report = f"(no plan to show: {type(e).__name__}: {e})"
            print(f"dflow explain: Session.run #{len(seen)}\n{report}", file=out, flush=True)
        return original(self, fetches, feed_dict, options, run_metadata)

    Session.run = run
    try:
        yield
    finally:
        Session.run = original
