"""`tf.keras.utils`: (de)serialization, numpy helpers, Sequence, get_file, Progbar, plot_model."""

from .data_utils import Sequence, get_file, validate_file
from .enqueuers import GeneratorEnqueuer, OrderedEnqueuer, SequenceEnqueuer
from .generic_utils import (
                            CustomObjectScope,
                            custom_object_scope,
                            deserialize_keras_object,
                            get_custom_objects,
                            serialize_keras_object,
)
from .io_utils import HDF5Matrix
from .layer_utils import convert_all_kernels_in_model, get_source_inputs
from .multi_gpu_utils import multi_gpu_model
from .np_utils import normalize, to_categorical
from .progbar import Progbar
from .vis_utils import model_to_dot, plot_model

__all__ = ["Sequence", "get_file", "validate_file", "CustomObjectScope", "custom_object_scope",
           "deserialize_keras_object", "get_custom_objects", "serialize_keras_object", "normalize",
           "to_categorical", "Progbar", "model_to_dot", "plot_model", "GeneratorEnqueuer", "OrderedEnqueuer",
           "SequenceEnqueuer", "HDF5Matrix", "convert_all_kernels_in_model", "get_source_inputs", "multi_gpu_model"]
