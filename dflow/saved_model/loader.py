"""TF1's `tf.saved_model.loader`: a SavedModel's meta graph imported into a session's graph and its
variables restored, without running any code from the files (dflow/io/saved_model.py)."""

from __future__ import annotations

import os

import numpy as np

from ..errors import DataLossError
from ..graph.serialize import GraphDef
from ..io import saved_model as files
from ..io.meta_graph import MetaGraphDef, import_meta_graph
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
    name = files.TF_FILENAME if getattr(saved_model, "tensorflow", False) else files.FILENAME
    raise RuntimeError(f"MetaGraphDef associated with tags {str(list(tags)).strip('[]')} could not be found in "
                       f"SavedModel, with available tags '{available}'. The SavedModel's tag sets are listed in "
                       f"{os.path.join(os.fspath(export_dir), name)}.")


def _with_assets(meta, export_dir):
    """`meta` with its asset constants (TF1's ASSET_FILEPATHS, e.g. a vocabulary file's path) set
    to the copies in `export_dir`/assets, so the tables initialize from them (TF1 feeds those
    tensors to the main op; here every later run of the initializers reads the copies too)."""
    assets = dict(files.asset_files(export_dir, meta))
    if not assets:
        return meta
    by_node = {name.split(":")[0]: path for name, path in assets.items()}
    nodes = []
    for node in meta.graph_def.node:
        if node.name in by_node:
            if node.op != "Const":
                raise DataLossError(None, None, f"SavedModel {export_dir}: asset tensor {node.name!r} is a "
                                    f"{node.op}, not a string constant")
            node = node.copy()
            node.attr["value"] = np.array(os.fsencode(os.path.abspath(by_node[node.name])), dtype=object)
        nodes.append(node)
    missing = sorted(set(by_node) - {n.name for n in nodes})
    if missing:
        raise DataLossError(None, None, f"SavedModel {export_dir}: asset tensors {missing} are not in the graph")
    out = MetaGraphDef(GraphDef(nodes, meta.graph_def.versions), meta.meta_info_def, meta.saver_def,
                       meta.collection_def, meta.signature_def)
    return out


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Imports the meta graph saved under exactly the tag set `tags` into `sess.graph`, restores its
    variables and runs its main op (or legacy init op), its assets (files in `assets/`, such as
    vocabulary files) in place of the files it was saved from; returns the MetaGraphDef (its
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
        saver = import_meta_graph(_with_assets(meta, export_dir), import_scope=import_scope, **saver_kwargs)
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
