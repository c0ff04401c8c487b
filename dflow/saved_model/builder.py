"""TF1's `tf.saved_model.builder.SavedModelBuilder`: one set of variables, several meta graphs
(one per tag set), written as a dflow SavedModel directory (dflow/io/saved_model.py).

Everything is staged in a hidden directory beside `export_dir` and renamed into place by
`save()`: until then (and when a step fails) `export_dir` is untouched; a builder dropped without
`save()` removes its staging directory. Each meta graph is serialized when it is added, so a
graph that cannot be saved (a py_func holds Python code) is refused there, naming the op.

Assets (`assets_collection`: the string constants naming files, e.g. a vocabulary file's
`asset_filepath`, TF1's ASSET_FILEPATHS collection) are copied into `assets/` in both formats;
the loader points those constants at the copies.

`format="tensorflow"` writes TensorFlow's SavedModel instead (`saved_model.pb`, a V2 checkpoint in
`variables/`, `assets/`), which TensorFlow's loader, `saved_model_cli` and TF Serving read; each
graph is converted when it is added, so an op with no TensorFlow form is refused there too.
"""

from __future__ import annotations

import os
import shutil
import warnings
import weakref

import numpy as np

from ..errors import InvalidArgumentError, NotFoundError
from ..graph import serialize
from ..graph.graph import get_default_graph
from ..graph.keys import GraphKeys
from ..graph.ops import Operation, Tensor
from ..io import saved_model as files
from ..io.meta_graph import export_meta_graph
from ..io.saver import Saver
from ..io.signature import SignatureDef
from ..io.tf_meta_graph import meta_graph_to_tf
from . import constants

__all__ = ["SavedModelBuilder"]


def _check_export_dir(export_dir):
    if os.path.exists(export_dir) and (not os.path.isdir(export_dir) or os.listdir(export_dir)):
        raise AssertionError(f"Export directory {export_dir} already exists, and isn't empty. Please choose a "
                             "different export directory, or delete all the contents of the specified directory.")


class SavedModelBuilder:
    """Builds a SavedModel: `add_meta_graph_and_variables` once, `add_meta_graph` for more tag sets,
    then `save()`. AssertionError when `export_dir` exists and is not empty (as TF1)."""

    def __init__(self, export_dir, format="dflow"):  # noqa: A002 - the argument's name
        if format not in ("dflow", "tensorflow"):
            raise ValueError(f"SavedModelBuilder: format must be 'dflow' or 'tensorflow', got {format!r}")
        self._format = format
        self._assets = []  # per meta graph: [(tensor name, file name in assets/)]
        self._export_dir = os.fspath(export_dir)
        _check_export_dir(self._export_dir)
        self._meta_graphs = []
        self._staging = None
        self._cleanup = None
        self._has_saved_variables = False
        self._saved = False

    def _stage(self):
        if self._staging is None:
            self._staging = files.staging_dir(self._export_dir)
            self._cleanup = weakref.finalize(self, files.discard, self._staging)
        return self._staging

    def _meta_graph(self, graph, tags, signature_def_map, assets_collection, main_op, clear_devices,
                    strip_default_attrs, saver):
        if self._saved:
            raise AssertionError("SavedModelBuilder.save() was already called (or failed); start a new builder")
        if isinstance(tags, str):
            raise TypeError(f"tags must be a list of strings, got the string {tags!r}")
        tags = list(tags or [])
        if not all(isinstance(t, str) for t in tags):
            raise TypeError(f"tags must be a list of strings, got {tags!r}")
        signatures = dict(signature_def_map or {})
        for key, sig in signatures.items():
            if not isinstance(key, str) or not isinstance(sig, SignatureDef):
                raise TypeError(f"signature_def_map must map strings to SignatureDefs (signature_def_utils), got "
                                f"{key!r}: {type(sig).__name__}")
        meta = export_meta_graph(graph=graph, saver=saver, clear_devices=clear_devices,
                                 strip_default_attrs=strip_default_attrs)
        meta.meta_info_def["tags"] = tags
        meta.signature_def = signatures
        if main_op is not None:
            op = main_op.op if isinstance(main_op, Tensor) else main_op
            if not isinstance(op, Operation) or op.graph is not graph:
                raise TypeError(f"main_op must be an Operation of the saved graph, got {main_op!r}")
            meta.collection_def[constants.MAIN_OP_KEY] = [{"operation": op.name}]
        assets = self._stage_assets(graph, assets_collection)
        if assets:
            meta.collection_def[GraphKeys.ASSET_FILEPATHS] = [{"tensor": t} for t, _ in assets]
        if self._format == "tensorflow":
            meta_graph_to_tf(meta)  # InvalidArgumentError naming an op with no TensorFlow form
            return meta, assets
        if assets:  # dflow's form of TF's asset_file_def; the loader points the tensors at assets/
            meta.meta_info_def[files.ASSET_FILE_DEF] = [{"tensor": t, "filename": f} for t, f in assets]
        serialize._dumps(meta.to_json())  # InvalidArgumentError naming an op that holds Python code
        return meta, []

    def _stage_assets(self, graph, assets_collection):
        """Copies the files named by the string constants of `assets_collection` into the staged
        `assets/`; [(tensor name, file name)]."""
        out = []
        for t in list(assets_collection or []):
            if not isinstance(t, Tensor) or t.graph is not graph or t.op.type != "Const" or \
                    t.dtype.name != "string" or t.shape.ndims != 0:
                raise TypeError(f"assets_collection must hold scalar string constants of the saved graph (the "
                                f"files' paths), got {t!r}")
            value = np.asarray(t.op.get_attr("value")).item()
            path = value.decode("utf-8") if isinstance(value, bytes) else str(value)
            if not os.path.isfile(path):
                raise NotFoundError(None, t.op, f"SavedModelBuilder: asset file {path!r} (tensor {t.name!r}) does "
                                    "not exist")
            name = os.path.basename(path)
            target = os.path.join(self._stage(), constants.ASSETS_DIRECTORY, name)
            if os.path.exists(target) and not _same_file(path, target):
                raise InvalidArgumentError(None, t.op, f"SavedModelBuilder: two asset files are named {name!r}")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(path, target)
            out.append((t.name, name))
        return out

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None, assets_collection=None,
                                     legacy_init_op=None, clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None):
        """Adds the session's graph under `tags` and saves its global variables (or `saver`'s)."""
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already been saved. Please "
                                 "invoke `add_meta_graph()` instead.")
        graph = sess.graph
        if saver is None:
            with graph.as_default():
                saver = Saver(allow_empty=True, format=self._format)
        elif getattr(saver, "_format", "dflow") != self._format:
            raise ValueError(f"SavedModelBuilder(format={self._format!r}): the saver writes format "
                             f"{saver._format!r}; make it with tf.train.Saver(..., format={self._format!r})")
        meta, assets = self._meta_graph(graph, tags, signature_def_map, assets_collection,
                                main_op if main_op is not None else legacy_init_op, clear_devices,
                                strip_default_attrs, saver)
        staging = self._stage()
        try:
            saver.save(sess, os.path.join(staging, files.VARIABLES_PREFIX), write_meta_graph=False,
                       write_state=False)
        except BaseException:
            self._cleanup()  # the staging directory goes; the builder may be used again
            self._staging = None
            raise
        self._meta_graphs.append(meta)
        self._assets.append(assets)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None, legacy_init_op=None,
                       clear_devices=False, main_op=None, strip_default_attrs=False, saver=None):
        """Adds the default graph under `tags`, restoring the variables saved before."""
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been saved yet. Please "
                                 "invoke `add_meta_graph_and_variables()` first.")
        graph = get_default_graph()
        if saver is None:
            saver = Saver(allow_empty=True, format=self._format)
        meta, assets = self._meta_graph(graph, tags, signature_def_map, assets_collection,
                                        main_op if main_op is not None else legacy_init_op, clear_devices,
                                        strip_default_attrs, saver)
        self._meta_graphs.append(meta)
        self._assets.append(assets)

    def save(self, as_text=False):
        """Writes the SavedModel to `export_dir` in one rename; returns the path of its document
        (bytes, as TF1). `as_text`: TensorFlow's format writes `saved_model.pbtxt`; dflow's document
        is always JSON text."""
        if self._saved:
            raise AssertionError("SavedModelBuilder.save() was already called (or failed); start a new builder")
        _check_export_dir(self._export_dir)
        staging = self._stage()
        try:
            if self._format == "tensorflow":
                with warnings.catch_warnings():  # what is left out was said when each graph was added
                    warnings.simplefilter("ignore")
                    path = files.write_tf_saved_model(staging, self._meta_graphs, as_text, self._assets)
                name = os.path.basename(path)
            else:
                files.write_saved_model(staging, files.SavedModel(self._meta_graphs))
                name = files.FILENAME
            files.publish(staging, self._export_dir)
        except BaseException:
            self._cleanup()
            self._saved = True  # its staged variables are gone
            raise
        self._cleanup.detach()
        self._saved = True
        return os.fsencode(os.path.join(self._export_dir, name))


def _same_file(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()
