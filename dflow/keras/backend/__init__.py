"""`tf.keras.backend` as TF 1.x shipped it: the session Keras runs in, the learning phase, layer
name counters, and the backend's tensor functions over dflow's ops.

Graph mode: `get_session()` is the default session when one is entered (`with sess.as_default()`)
or `set_session`'s, else one Keras makes for the default graph; either way the variables Keras
made and never initialized are initialized there first (TF1's `_initialize_variables`), so a
Keras model works inside a user's Session program and on its own. The learning phase is a
`placeholder_with_default(False)` named `keras_learning_phase`, fed 1 while `fit` trains, unless
`set_learning_phase` fixed it to a Python 0 or 1.
"""

from .nn_functions import *  # noqa: F403
from .nn_functions import __all__ as _nn
from .session import *  # noqa: F403
from .session import __all__ as _session
from .session import (  # noqa: F401 - what the engine reads beside the public names
    _phase_placeholder,
    _set_weights_checked,
    keras_history,
    keras_mask,
    set_keras_history,
    set_keras_mask,
    symbolic_graph,
)
from .tensor_functions import *  # noqa: F403
from .tensor_functions import __all__ as _tensor

__all__ = _session + _tensor + _nn
