"""`dflow.contrib`: the parts of TF1's `tf.contrib` that TF1 programs use most:
`contrib.layers`, `contrib.slim`, `contrib.data` (tf.data.experimental's transformations),
`contrib.framework`, `contrib.losses`, `contrib.metrics`, `contrib.rnn`
(the recurrent cells of `tf.nn.rnn_cell` and the static drivers), `contrib.eager` (TF1.5's eager
execution API, over dflow/eager).

`contrib.seq2seq` (decoders, helpers, attention, sequence_loss), `contrib.opt` (AdamW, MomentumW, LazyAdam, MovingAverageOptimizer), `contrib.stateless` (the stateless random ops), `contrib.summary`, `contrib.learn` (Experiment, learn_runner, RunConfig) and `contrib.training.HParams` too.
Any other contrib module (`tf.contrib.keras`, `tf.contrib.crf`, ...) is not provided: reaching it
as an attribute raises an AttributeError, importing it (`import dflow.contrib.crf`) an ImportError,
both saying that dflow does not provide it and pointing to docs/tf1_coverage.md.
"""

from __future__ import annotations

import importlib.abc
import sys

from ..tf1_names import missing_message
from . import (
    data,
    eager,
    framework,
    graph_editor,
    layers,
    learn,
    lookup,
    losses,
    metrics,
    opt,
    rnn,
    seq2seq,
    slim,
    stateless,
    summary,
    training,
)

__all__ = ["data", "eager", "framework", "graph_editor", "layers", "learn", "lookup", "losses", "metrics", "opt", "rnn", "seq2seq",
           "slim", "summary", "training", "stateless"]


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise AttributeError(missing_message(__name__, name))


class _MissingContribModule(importlib.abc.MetaPathFinder):
    """Turns `import dflow.contrib.<missing>` into an ImportError that says dflow lacks it (this
    finder runs last, after the real modules were looked for)."""

    def find_spec(self, fullname, path, target=None):
        prefix = __name__ + "."
        if not fullname.startswith(prefix):
            return None
        child = fullname[len(prefix):].partition(".")[0]
        if child in __all__:  # a real module's missing submodule: the ordinary error
            return None
        try:
            __getattr__(child)
        except AttributeError as e:
            raise ImportError(str(e), name=fullname) from None
        return None


if not any(isinstance(f, _MissingContribModule) for f in sys.meta_path):
    sys.meta_path.append(_MissingContribModule())
