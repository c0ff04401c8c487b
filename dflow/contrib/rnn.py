"""`tf.contrib.rnn`: the cells of `tf.nn.rnn_cell` and the static drivers, as TF 1.15 re-exports
them (`dflow.rnn` holds them)."""

from __future__ import annotations

from ..rnn.cell import LSTMStateTuple, RNNCell
from ..rnn.cells import BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell
from ..rnn.static import static_bidirectional_rnn, static_rnn
from ..rnn.wrappers import DeviceWrapper, DropoutWrapper, MultiRNNCell, ResidualWrapper
from ..tf1_names import missing_attribute

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell", "DropoutWrapper",
           "ResidualWrapper", "DeviceWrapper", "LSTMStateTuple", "static_rnn", "static_bidirectional_rnn"]

__getattr__ = missing_attribute(__name__)  # a TF1 name dflow lacks says so (docs/tf1_coverage.md)
