"""`tf.keras.layers`: Keras's layers as TF 1.15 names them."""

from ..engine.base_layer import InputSpec, Layer
from ..engine.input_layer import Input, InputLayer
from .core import *  # noqa: F403
from .core import __all__ as _core

__all__ = ["Layer", "InputSpec", "Input", "InputLayer"] + _core
from .convolutional import *  # noqa: F403,E402
from .convolutional import __all__ as _convolutional  # noqa: E402

__all__ += _convolutional
from .advanced_activations import *  # noqa: F403,E402
from .advanced_activations import __all__ as _advanced_activations  # noqa: E402
from .merge import *  # noqa: F403,E402
from .merge import __all__ as _merge  # noqa: E402
from .normalization import *  # noqa: F403,E402
from .normalization import __all__ as _normalization  # noqa: E402
from .pooling import *  # noqa: F403,E402
from .pooling import __all__ as _pooling  # noqa: E402

__all__ += _advanced_activations + _merge + _normalization + _pooling
