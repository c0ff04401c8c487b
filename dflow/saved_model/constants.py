"""TF1's `tf.saved_model.constants`, with TF1's values.

dflow's own files differ: the graphs are in `saved_model.json` (SAVED_MODEL_FILENAME_JSON), not
`saved_model.pb`; the variables are a dflow checkpoint (Zarr) at `variables/variables`."""

from ..io.saved_model import FILENAME as SAVED_MODEL_FILENAME_JSON

__all__ = ["ASSETS_DIRECTORY", "ASSETS_KEY", "DEBUG_DIRECTORY", "DEBUG_INFO_FILENAME_PB", "LEGACY_INIT_OP_KEY",
           "MAIN_OP_KEY", "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT", "SAVED_MODEL_SCHEMA_VERSION",
           "VARIABLES_DIRECTORY", "VARIABLES_FILENAME", "SAVED_MODEL_FILENAME_JSON"]

ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
LEGACY_INIT_OP_KEY = "legacy_init_op"
MAIN_OP_KEY = "saved_model_main_op"
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
SAVED_MODEL_SCHEMA_VERSION = 1
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
