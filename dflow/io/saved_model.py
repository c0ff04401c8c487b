"""SavedModel directories in dflow's own safe format (the files behind `tf.saved_model`).

    EXPORT_DIR/saved_model.json          {"format": "dflow.SavedModel", "meta_graphs": [MetaGraphDef...]}
    EXPORT_DIR/saved_model.json.consts/  large constants of those graphs (Zarr, checksummed)
    EXPORT_DIR/variables/variables       a dflow checkpoint (Zarr, one checksummed array per variable)

TF1 writes `saved_model.pb` (a protobuf) and TF's checkpoint files; dflow writes JSON and Zarr.
dflow also reads TensorFlow's `saved_model.pb` (converted by dflow/io/tf_meta_graph.py; its
variables are restored from TF's checkpoint by Saver.restore). Loading runs no code: the document is the JSON of
dflow/io/meta_graph.py (validated field by field, DataLossError otherwise); the checkpoint's arrays
are opened only with allow-listed codecs and numeric dtypes and their checksums verified.

`write_tf_saved_model` writes TensorFlow's form instead (`SavedModelBuilder(format="tensorflow")`):
`saved_model.pb` (or `.pbtxt`), the `SavedModel` message of dflow/proto.py holding TensorFlow
MetaGraphDefs (dflow/io/tf_meta_graph.py: graph, save/restore subgraph and SaverDef, collections,
signatures, tags, asset_file_def), beside a V2 checkpoint `variables/variables.index` + `.data-*`
and the copied `assets/`.

A directory is staged under a hidden temporary name beside EXPORT_DIR and renamed into place
whole (`publish`), so a failed or interrupted save leaves no half-written EXPORT_DIR.
"""

from __future__ import annotations

import os
import shutil
import uuid

import zarr
from google.protobuf import text_format

from .. import proto as proto_messages
from ..errors import DataLossError, NotFoundError
from ..graph import serialize
from ..storage import files
from .graph_io import LARGE_CONST_ELEMENTS, _read_document, _write_document, open_zarr_safely
from .meta_graph import MetaGraphDef
from .tf_graph import parse_proto_bytes
from .tf_meta_graph import meta_graph_fields_from_tf, meta_graph_to_tf

__all__ = ["SavedModel", "read_saved_model", "asset_files", "ASSET_FILE_DEF", "write_saved_model", "write_tf_saved_model", "staging_dir", "publish",
           "check_variables", "FILENAME", "VARIABLES_PREFIX"]

FORMAT = "dflow.SavedModel"
FILENAME = "saved_model.json"
TF_FILENAME, TF_TEXT_FILENAME = "saved_model.pb", "saved_model.pbtxt"
VARIABLES_PREFIX = os.path.join("variables", "variables")
SCHEMA_VERSION = 1
ASSETS_DIRECTORY = "assets"
ASSET_FILE_DEF = "asset_file_def"  # meta_info_def key: [{"tensor": name, "filename": name in assets/}]


class SavedModel:
    """The meta graphs of a SavedModel directory (TF1's `SavedModel` proto): `meta_graphs`, a list of
    MetaGraphDef, each with its `meta_info_def["tags"]`, and `saved_model_schema_version`."""

    def __init__(self, meta_graphs=None, saved_model_schema_version=SCHEMA_VERSION, tensorflow=False):
        self.meta_graphs = list(meta_graphs or [])
        self.saved_model_schema_version = saved_model_schema_version
        self.tensorflow = tensorflow  # read from TensorFlow's saved_model.pb

    def graph_defs(self):
        return [m.graph_def for m in self.meta_graphs]

    def to_json(self, external=None):
        return {"format": FORMAT, "version": serialize.VERSION,
                "saved_model_schema_version": self.saved_model_schema_version,
                "meta_graphs": [m.to_json(external) for m in self.meta_graphs]}

    @classmethod
    def from_json(cls, doc):
        serialize._check_header(doc, FORMAT, {"format", "version", "saved_model_schema_version", "meta_graphs"},
                                "SavedModel")
        metas = doc.get("meta_graphs")
        if type(metas) is not list or doc.get("saved_model_schema_version") != SCHEMA_VERSION:
            raise DataLossError(None, None, "SavedModel: meta_graphs must be a list and the schema version "
                                f"{SCHEMA_VERSION}")
        out = []
        for m in metas:
            meta = MetaGraphDef.from_json(m)
            tags = meta.meta_info_def.get("tags")
            if type(tags) is not list or not all(isinstance(t, str) for t in tags):
                raise DataLossError(None, None, "SavedModel: a meta graph's tags must be a list of strings")
            out.append(meta)
        return cls(out)

    def SerializeToString(self, deterministic=None):  # noqa: N802 - TF1 name
        return serialize._dumps(self.to_json())

    def ParseFromString(self, data):  # noqa: N802 - TF1 name
        other = SavedModel.from_json(serialize._loads(data, "SavedModel"))
        self.meta_graphs, self.saved_model_schema_version = other.meta_graphs, other.saved_model_schema_version
        return len(data)


def read_saved_model(export_dir):
    """The SavedModel in `export_dir`: dflow's `saved_model.json` (constants loaded and verified) or
    TensorFlow's `saved_model.pb` / `saved_model.pbtxt`. OSError when there is none (TF1's IOError),
    DataLossError (naming the file) when the document is malformed."""
    path = os.path.join(os.fspath(export_dir), FILENAME)
    if os.path.isfile(path):
        return _read_document(path, SavedModel)
    for name in (TF_FILENAME, TF_TEXT_FILENAME):
        tf_path = os.path.join(os.fspath(export_dir), name)
        if os.path.isfile(tf_path):
            with open(tf_path, "rb") as f:
                data = f.read()
            try:
                proto = parse_proto_bytes(data, proto_messages.SavedModel, f"SavedModel {tf_path}")
                return SavedModel([MetaGraphDef(**meta_graph_fields_from_tf(m)) for m in proto.meta_graphs],
                                  tensorflow=True)
            except DataLossError as e:
                raise DataLossError(None, None, e.message if tf_path in e.message else f"{tf_path}: {e.message}") \
                    from None
    raise OSError(f"SavedModel file does not exist at: {path} (nor TensorFlow's {TF_FILENAME})")


def asset_files(export_dir, meta):
    """[(tensor name, path of the file in `export_dir`/assets)] of a loaded meta graph's assets
    (TF's asset_file_def). DataLossError for an entry that is malformed or names a file outside
    assets/, NotFoundError for a file that is missing."""
    entries = meta.meta_info_def.get(ASSET_FILE_DEF) or []
    root = os.path.join(os.fspath(export_dir), ASSETS_DIRECTORY)
    out = []
    for e in entries if type(entries) is list else [entries]:
        tensor = e.get("tensor") if type(e) is dict else None
        name = e.get("filename") if type(e) is dict else None
        if not isinstance(tensor, str) or not isinstance(name, str) or not name or name in (".", "..") or \
                os.path.basename(name) != name or "/" in name or "\\" in name:
            raise DataLossError(None, None, f"SavedModel {export_dir}: bad asset entry {str(e)[:200]!r} (a tensor "
                                "name and a file name in assets/ expected)")
        path = os.path.join(root, name)
        if not os.path.isfile(path):
            raise NotFoundError(None, None, f"SavedModel {export_dir}: asset file {path!r} (tensor {tensor!r}) does "
                                "not exist")
        out.append((tensor, path))
    return out


def write_saved_model(directory, saved_model):
    """Writes the document (and its constants group) into `directory`, a staging directory."""
    _write_document(os.path.join(directory, FILENAME), saved_model.to_json, LARGE_CONST_ELEMENTS)


def write_tf_saved_model(directory, meta_graphs, as_text=False, assets=None):
    """Writes TensorFlow's `saved_model.pb` (`saved_model.pbtxt` with `as_text`) of dflow
    MetaGraphDefs into `directory` (a staging directory); `assets`: one [(tensor, file name)] list
    per meta graph. Returns the file's path."""
    proto = proto_messages.SavedModel(saved_model_schema_version=SCHEMA_VERSION)
    for i, meta in enumerate(meta_graphs):
        proto.meta_graphs.add().CopyFrom(meta_graph_to_tf(meta, assets[i] if assets else None))
    path = os.path.join(directory, TF_TEXT_FILENAME if as_text else TF_FILENAME)
    data = text_format.MessageToString(proto).encode("utf-8") if as_text else proto.SerializeToString(
        deterministic=True)
    files.write_file(path, data, f"Writing the SavedModel file {path!r}")
    return path


def staging_dir(export_dir):
    """A new empty hidden directory beside `export_dir` (same file system, so `publish` is a rename)."""
    export_dir = os.path.abspath(os.fspath(export_dir))
    parent = os.path.dirname(export_dir)
    os.makedirs(parent, exist_ok=True)
    path = os.path.join(parent, f".{os.path.basename(export_dir)}.dflow-tmp-{uuid.uuid4().hex}")
    os.mkdir(path)
    return path


def publish(staging, export_dir):
    """Renames the staged directory to `export_dir` (which may exist only as an empty directory)."""
    export_dir = os.fspath(export_dir)
    if os.path.isdir(export_dir) and not os.path.islink(export_dir):
        os.rmdir(export_dir)  # OSError if something was written there meanwhile: nothing is replaced
    os.rename(staging, export_dir)


def discard(staging):
    shutil.rmtree(staging, ignore_errors=True)


def check_variables(export_dir):
    """Checks the variables checkpoint of a SavedModel before it is restored: every array lies inside
    the checkpoint and is opened with allow-listed codecs and a numeric dtype only (a Zarr filter
    such as pickle would run code when decoded). Returns the checkpoint prefix, or None when the
    directory has no checkpoint. DataLossError for a tampered or foreign checkpoint."""
    prefix = os.path.join(os.fspath(export_dir), VARIABLES_PREFIX)
    if not os.path.exists(prefix):
        # TensorFlow's variables/variables.index + .data-*: its reader verifies their checksums
        return prefix if os.path.isfile(prefix + ".index") else None
    root = os.path.realpath(prefix)
    if os.path.dirname(root) != os.path.realpath(os.path.join(os.fspath(export_dir), "variables")):
        raise DataLossError(None, None, f"SavedModel variables {prefix!r} point outside the SavedModel directory")
    try:
        table = zarr.open_group(prefix, mode="r").attrs.get("variables")
    except Exception as e:  # noqa: BLE001 - any failure to open is a malformed checkpoint
        raise DataLossError(None, None, f"SavedModel variables at {prefix!r} are not a readable checkpoint "
                            f"({type(e).__name__})") from None
    if type(table) is not dict:
        raise DataLossError(None, None, f"SavedModel variables at {prefix!r} lack their variable table")
    for name, entry in table.items():
        array = entry.get("array") if type(entry) is dict else None
        path = os.path.realpath(os.path.join(root, array)) if isinstance(array, str) else None
        if path is None or not path.startswith(root + os.sep):
            raise DataLossError(None, None, f"SavedModel variable {name!r}: bad array location {array!r}")
        try:
            open_zarr_safely(path, f"SavedModel variable {name!r}")
        except Exception as e:  # noqa: BLE001 - NotFoundError / InvalidArgumentError: tampered data
            raise DataLossError(None, None, f"{e}") from None
    return prefix
