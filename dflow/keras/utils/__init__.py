"""`tf.keras.utils`: (de)serialization, numpy helpers, Sequence, get_file, Progbar, plot_model."""

from .data_utils import Sequence, get_file, validate_file
from .generic_utils import (
                            CustomObjectScope,
                            custom_object_scope,
                            deserialize_keras_object,
                            get_custom_objects,
                            serialize_keras_object,
)
from .np_utils import normalize, to_categorical
from .progbar import Progbar
from .vis_utils import model_to_dot, plot_model

__all__ = ["Sequence", "get_file", "validate_file", "CustomObjectScope", "custom_object_scope",
           "deserialize_keras_object", "get_custom_objects", "serialize_keras_object", "normalize",
           "to_categorical", "Progbar", "model_to_dot", "plot_model"]
