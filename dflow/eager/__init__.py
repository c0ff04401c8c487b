"""Eager execution (TF1's `tf.contrib.eager`, `tfe`): ops that run at once on the same op registry
as graph mode, gradient tapes over the same gradient rules, and functions traced into graphs.

Graph mode stays the default; `enable_eager_execution()` (at program start) or the `eager_mode()`
context switches. See docs/ARCHITECTURE.md, "Eager execution".
"""

from .context import (
    EagerGraph,
    eager_mode,
    enable_eager_execution,
    executing_eagerly,
    graph_mode,
    num_gpus,
)
from .tensor import EagerTensor

__all__ = ["EagerGraph", "EagerTensor", "eager_mode", "enable_eager_execution", "executing_eagerly", "graph_mode",
           "num_gpus"]
