"""`tf.keras.layers`: Keras's layers as TF 1.15 names them."""

from ..engine.base_layer import InputSpec, Layer
from ..engine.input_layer import Input, InputLayer
from .core import *  # noqa: F403
from .core import __all__ as _core
from .embeddings import Embedding
from .masking import Masking
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, SimpleRNN, SimpleRNNCell, StackedRNNCells
from .wrappers import Bidirectional, TimeDistributed, Wrapper

__all__ = ["Layer", "InputSpec", "Input", "InputLayer"] + _core
__all__ += ["Embedding", "Masking"]
__all__ += ["RNN", "SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells", "SimpleRNN", "LSTM", "GRU"]
__all__ += ["Wrapper", "TimeDistributed", "Bidirectional"]
