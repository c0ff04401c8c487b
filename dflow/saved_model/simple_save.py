"""TF1's `tf.saved_model.simple_save`: one serving meta graph with a predict signature."""

from __future__ import annotations

from . import signature_constants, tag_constants
from .builder import SavedModelBuilder
from .signature_def_utils import predict_signature_def

__all__ = ["simple_save"]


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None, format="dflow"):  # noqa: A002
    """Saves the session's graph and variables to `export_dir` under the tag "serve" with one
    signature, "serving_default", predicting {key: Tensor} `outputs` from `inputs`.

    AssertionError when `export_dir` exists and is not empty; InvalidArgumentError naming an op
    the format cannot hold (a py_func); nothing is written then. `format="tensorflow"` writes
    TensorFlow's SavedModel (saved_model.pb + a V2 checkpoint) for TF's own tools."""
    signature_def_map = {signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: predict_signature_def(inputs, outputs)}
    builder = SavedModelBuilder(export_dir, format=format)
    builder.add_meta_graph_and_variables(session, tags=[tag_constants.SERVING], signature_def_map=signature_def_map,
                                         main_op=legacy_init_op, clear_devices=True)
    builder.save()
