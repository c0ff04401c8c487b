"""`tf.keras.layers`: Keras's layers as TF 1.15 names them."""

from ..engine.base_layer import InputSpec, Layer, deserialize_layer, serialize_layer
from ..engine.input_layer import Input, InputLayer
from .advanced_activations import *  # noqa: F403
from .advanced_activations import __all__ as _advanced_activations
from .convolutional import *  # noqa: F403
from .convolutional import __all__ as _convolutional
from .convolutional_recurrent import ConvLSTM2D
from .core import *  # noqa: F403
from .core import __all__ as _core
from .cudnn_recurrent import CuDNNGRU, CuDNNLSTM
from .dense_attention import AdditiveAttention, Attention
from .dense_features import DenseFeatures
from .embeddings import Embedding
from .local import LocallyConnected1D, LocallyConnected2D
from .masking import Masking
from .merge import *  # noqa: F403
from .merge import __all__ as _merge
from .normalization import *  # noqa: F403
from .normalization import __all__ as _normalization
from .pooling import *  # noqa: F403
from .pooling import __all__ as _pooling
from .recurrent import (
    GRU,
    LSTM,
    RNN,
    AbstractRNNCell,
    GRUCell,
    LSTMCell,
    SimpleRNN,
    SimpleRNNCell,
    StackedRNNCells,
)
from .wrappers import Bidirectional, TimeDistributed, Wrapper

__all__ = (["Layer", "InputSpec", "Input", "InputLayer", "Embedding", "Masking", "RNN", "SimpleRNNCell", "LSTMCell",
            "GRUCell", "StackedRNNCells", "SimpleRNN", "LSTM", "GRU", "Wrapper", "TimeDistributed", "Bidirectional"]
           + _core + _convolutional + _advanced_activations + _merge + _normalization + _pooling)

__all__ += ["ConvLSTM2D", "DenseFeatures", "LocallyConnected1D", "LocallyConnected2D", "AbstractRNNCell", "Attention", "AdditiveAttention", "CuDNNLSTM", "CuDNNGRU", "serialize", "deserialize"]


def serialize(layer):
    """`{"class_name": ..., "config": ...}` of a layer (Keras's `tf.keras.layers.serialize`)."""
    return serialize_layer(layer)


def deserialize(config, custom_objects=None):
    """The layer a `serialize` dict describes; ValueError naming an unknown class."""
    return deserialize_layer(config, custom_objects=custom_objects)
