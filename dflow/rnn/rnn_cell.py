"""`tf.nn.rnn_cell`: TF1's cell classes (bound as `dflow.nn.rnn_cell` by the public namespace)."""

from __future__ import annotations

from ..tf1_names import missing_attribute as _missing_attribute
from .cell import LSTMStateTuple, RNNCell
from .cells import BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell
from .wrappers import DeviceWrapper, DropoutWrapper, MultiRNNCell, ResidualWrapper

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell", "DropoutWrapper",
           "ResidualWrapper", "DeviceWrapper", "LSTMStateTuple"]

__getattr__ = _missing_attribute("dflow.nn.rnn_cell")  # a TF1 name dflow lacks says so
