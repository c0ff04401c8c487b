"""TF1's `tf.saved_model.loader`: a SavedModel's meta graph imported into a session's graph and its
variables restored, without running any code from the files (dflow/io/saved_model.py)."""

from __future__ import annotations

import os

from ..io import saved_model as files
from ..io.meta_graph import import_meta_graph
from . import constants

__all__ = ["load", "maybe_saved_model_directory", "contains_saved_model"]


def maybe_saved_model_directory(export_dir):
    """Whether `export_dir` holds a dflow or TensorFlow SavedModel document (it is not read)."""
    return any(os.path.isfile(os.path.join(os.fspath(export_dir), name))
               for name in (files.FILENAME, files.TF_FILENAME, files.TF_TEXT_FILENAME))


contains_saved_model = maybe_saved_model_directory


def _find(saved_model, tags, export_dir):
    wanted = set(tags)
    for meta in saved_model.meta_graphs:
        if set(meta.meta_info_def["tags"]) == wanted:
            return meta
    available = [set(m.meta_info_def["tags"]) for m in saved_model.meta_graphs]
    raise RuntimeError(f"MetaGraphDef associated with tags {str(list(tags)).strip('[]')} could not be found in "
                       f"SavedModel, with available tags '{available}'. The SavedModel's tag sets are listed in "
                       f"{os.path.join(os.fspath(export_dir), files.FILENAME)}.")


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Imports the meta graph saved under exactly the tag set `tags` into `sess.graph`, restores its
    variables and runs its main op (or legacy init op); returns the MetaGraphDef (its
    `signature_def` names the tensors to feed and fetch, without `import_scope`).

    OSError when `export_dir` holds no SavedModel, RuntimeError when no meta graph has those tags,
    DataLossError for a malformed or tampered document or checkpoint (checksums are verified)."""
    if isinstance(tags, str):
        raise TypeError(f"tags must be a list of strings, got the string {tags!r}")
    saved_model = files.read_saved_model(export_dir)
    meta = _find(saved_model, tags, export_dir)
    prefix = files.check_variables(export_dir)
    graph = sess.graph
    with graph.as_default():
        saver = import_meta_graph(meta, import_scope=import_scope, **saver_kwargs)
    if saver is not None:
        if prefix is None:
            raise OSError(f"The SavedModel at {export_dir} has variables but no checkpoint at "
                          f"{os.path.join(os.fspath(export_dir), files.VARIABLES_PREFIX)}")
        saver.restore(sess, prefix)
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        items = meta.collection_def.get(key)
        if items:
            name = items[0].get("operation")
            if name is not None:
                scope = f"{import_scope.rstrip('/')}/" if import_scope else ""
                sess.run(graph.get_operation_by_name(scope + name))
            break
    return meta
