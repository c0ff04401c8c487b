"""TF1's `tf.saved_model` in dflow's own safe format: the graph as JSON, the variables as a Zarr
checkpoint, and loading runs no code (dflow/io/saved_model.py describes the files).

    tf.saved_model.simple_save(sess, "export/1", inputs={"x": x}, outputs={"y": y})
    meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], "export/1")
    sig = meta.signature_def["serving_default"]
    sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: batch})

TensorFlow cannot read these directories; `format="tensorflow"` writes TensorFlow's own instead
(saved_model.pb, a V2 checkpoint, assets), and dflow reads those too.
"""

from ..io.signature import SignatureDef, TensorInfo
from . import (
    builder,
    constants,
    loader,
    main_op,
    signature_constants,
    signature_def_utils,
    tag_constants,
    utils,
)
from .builder import SavedModelBuilder
from .constants import (
    ASSETS_DIRECTORY,
    ASSETS_KEY,
    DEBUG_DIRECTORY,
    DEBUG_INFO_FILENAME_PB,
    LEGACY_INIT_OP_KEY,
    MAIN_OP_KEY,
    SAVED_MODEL_FILENAME_PB,
    SAVED_MODEL_FILENAME_PBTXT,
    SAVED_MODEL_SCHEMA_VERSION,
    VARIABLES_DIRECTORY,
    VARIABLES_FILENAME,
)
from .loader import contains_saved_model, load, maybe_saved_model_directory
from .signature_constants import (
    CLASSIFY_INPUTS,
    CLASSIFY_METHOD_NAME,
    CLASSIFY_OUTPUT_CLASSES,
    CLASSIFY_OUTPUT_SCORES,
    DEFAULT_SERVING_SIGNATURE_DEF_KEY,
    PREDICT_INPUTS,
    PREDICT_METHOD_NAME,
    PREDICT_OUTPUTS,
    REGRESS_INPUTS,
    REGRESS_METHOD_NAME,
    REGRESS_OUTPUTS,
)
from .signature_def_utils import (
    build_signature_def,
    classification_signature_def,
    is_valid_signature,
    predict_signature_def,
    regression_signature_def,
)
from .simple_save import simple_save
from .tag_constants import GPU, SERVING, TPU, TRAINING
from .utils import build_tensor_info, get_tensor_from_tensor_info

Builder = SavedModelBuilder

__all__ = [
    "builder", "constants", "loader", "main_op", "signature_constants", "signature_def_utils", "tag_constants",
    "utils", "SavedModelBuilder", "Builder", "load", "simple_save", "contains_saved_model",
    "maybe_saved_model_directory", "build_signature_def", "classification_signature_def", "is_valid_signature",
    "predict_signature_def", "regression_signature_def", "build_tensor_info", "get_tensor_from_tensor_info",
    "SignatureDef", "TensorInfo", "ASSETS_DIRECTORY", "ASSETS_KEY", "DEBUG_DIRECTORY", "DEBUG_INFO_FILENAME_PB",
    "LEGACY_INIT_OP_KEY", "MAIN_OP_KEY", "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT",
    "SAVED_MODEL_SCHEMA_VERSION", "VARIABLES_DIRECTORY", "VARIABLES_FILENAME", "CLASSIFY_INPUTS",
    "CLASSIFY_METHOD_NAME", "CLASSIFY_OUTPUT_CLASSES", "CLASSIFY_OUTPUT_SCORES", "DEFAULT_SERVING_SIGNATURE_DEF_KEY",
    "PREDICT_INPUTS", "PREDICT_METHOD_NAME", "PREDICT_OUTPUTS", "REGRESS_INPUTS", "REGRESS_METHOD_NAME",
    "REGRESS_OUTPUTS", "GPU", "SERVING", "TPU", "TRAINING",
]

from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)
