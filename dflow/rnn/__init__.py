"""Recurrent networks: TF1's cells (`tf.nn.rnn_cell`, `tf.contrib.rnn`) and drivers
(`tf.nn.static_rnn`, `dynamic_rnn`, ...).

Cells are `dflow.layers.Layer`s (their variables and scopes are the layers' machinery), and the
layers use `dflow.nn`; so this package sits beside them, above `dflow.nn`, and the public
namespace (dflow/__init__.py) binds `rnn_cell` and the drivers into `dflow.nn`, as TF assembles
`tf.nn` from its modules. Rooms: `cell.py` (the protocol, LSTMStateTuple, zero states),
`cells.py` (the four cells), `wrappers.py` (MultiRNNCell and the wrappers), `step.py` (sequence
lengths, batch/time), `static.py`, `dynamic.py` (the drivers), `nest.py` (state structures).
"""

from __future__ import annotations

from . import rnn_cell
from .dynamic import bidirectional_dynamic_rnn, dynamic_rnn, raw_rnn
from .static import static_bidirectional_rnn, static_rnn

__all__ = ["rnn_cell", "static_rnn", "static_bidirectional_rnn", "dynamic_rnn", "bidirectional_dynamic_rnn",
           "raw_rnn"]
