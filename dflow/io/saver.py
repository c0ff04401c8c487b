"""`tf.train.Saver`: saves and restores variables, in dflow's Zarr format or TensorFlow's V2.

Crash safety (a SIGKILL at any moment of `save` leaves `latest_checkpoint` pointing at a complete
checkpoint): the group is written under an owned temporary name and put in place by swapping a
symbolic link (storage/files.py `link_in`); then the `checkpoint` index file (TF1's text format)
is written to a temporary file and `os.replace`d; only then are checkpoints beyond `max_to_keep`
deleted. A save never replaces what is not a checkpoint (FailedPreconditionError), and sweeps the
temporaries killed savers left in its directory. Restores read through checkpoint.py's sources.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time

import numpy as np
import zarr

from ..errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from ..graph.graph import get_default_graph
from ..state.variables import Variable, global_variables
from ..storage import files
from ..storage.chunks import chunk_io, row_chunks
from ..storage.values import StoredValue
from . import tf_checkpoint as tfc
from .checkpoint import (
    FORMAT,
    FORMAT_VERSION,
    c_order_bytes,
    checkpoint_found,
    dflow_version,
    is_complete,
    open_checkpoint,
    row_blocks,
    stream_pieces,
)
from .checkpoint_index import update_checkpoint_state

__all__ = ["Saver"]


# meta_graph.py (above this module: its import_meta_graph makes a Saver) installs its
# export_meta_graph here when it is imported, for Saver.save(write_meta_graph=True)
_META_GRAPH_WRITER = []


def set_meta_graph_writer(fn):
    _META_GRAPH_WRITER[:] = [fn]



class NotACheckpointError(NotFoundError, ValueError):
    """`Saver.restore` of a path holding no checkpoint (ValueError, as TF1)."""

FORMATS = ("dflow", "tensorflow")


class Saver:
    """Saves and restores variables (TF1's `tf.train.Saver`).

    `format`: "dflow" (default) writes Zarr checkpoints (streamed, crash-safe); "tensorflow" writes
    TensorFlow's V2 checkpoints (`PREFIX.index` + data shards) that TensorFlow restores; with
    `sharded=True` one data shard per distinct variable device, as TensorFlow shards (one shard
    when no variable names a device). `restore` reads either format, found from the files."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False, saver_def=None,
                 builder=None, defer_build=False, allow_empty=False, write_version=2, pad_step_number=False,
                 save_relative_paths=True, filename=None, format="dflow"):  # noqa: A002 - the argument's name
        if format not in FORMATS:
            raise ValueError(f"Saver: format must be one of {FORMATS}, got {format!r}")
        self._format = format
        self._sharded = sharded
        self._var_list = var_list
        self._max_to_keep = max_to_keep
        self._keep_every_s = keep_checkpoint_every_n_hours * 3600.0
        self._next_keep = time.time() + self._keep_every_s
        self._name = name or "save"
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._last = []  # [(prefix, timestamp)]
        self._graph = get_default_graph()
        self._built = None  # {checkpoint name: Variable}, fixed by build()
        if not defer_build:
            self.build()

    def build(self):
        """Fixes the variables this Saver saves and restores: with no `var_list`, the global
        variables that exist now (TF1: a variable made after the Saver is not in its checkpoints).
        Called by the constructor, or later with `defer_build=True` (by the first save/restore if
        no one calls it)."""
        self._built = self._collect()

    def _vars(self):
        """{checkpoint name: Variable}."""
        if self._built is None:
            self.build()
        return self._built

    def _collect(self):
        vl = self._var_list
        if vl is None:
            with self._graph.as_default():
                vl = global_variables()
        if isinstance(vl, dict):
            out = dict(vl)
        else:
            out = {}
            for v in vl:
                if not isinstance(v, Variable):
                    raise TypeError(f"Saver: var_list entries must be Variables, got {v!r}")
                if v.op.name in out:
                    raise ValueError(f"At least two variables have the same name: {v.op.name}")
                out[v.op.name] = v
        if not out and not self._allow_empty:
            raise ValueError("No variables to save")
        return out

    @property
    def last_checkpoints(self):
        return [p for p, _ in self._last]

    def set_last_checkpoints(self, last_checkpoints):
        self._last = [(p, time.time()) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        self._last = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths):
        """Adopts the existing checkpoints among `checkpoint_paths` (e.g. after a restart)."""
        self._last = [(p, os.path.getmtime(files.published(p) if is_complete(p) else p + ".index")) for p in checkpoint_paths
                      if checkpoint_found(p)]

    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Writes a checkpoint; returns its prefix (`save_path-STEP` with a global step)."""
        save_path = os.fspath(save_path)
        if os.path.basename(save_path) in ("", ".", ".."):  # TF1's error; a directory is not a prefix
            raise ValueError(f"Saver.save: no path specified: {save_path!r} names a directory, not a "
                             "checkpoint prefix (e.g. 'dir/model')")
        if global_step is not None:
            step = global_step if isinstance(global_step, (int, np.integer)) else int(sess.run(global_step))
            prefix = f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
        else:
            step, prefix = None, save_path
        save_dir = os.path.dirname(os.path.abspath(prefix))
        files.ensure_dir(save_dir, "Saver.save")
        variables = self._vars()
        values = {}
        for name, v in variables.items():
            try:
                values[name] = sess.variables.saved_value(v.op.name)
            except FailedPreconditionError:
                raise FailedPreconditionError(None, v.op, f"Saver: variable {v.name!r} is uninitialized; "
                                              "nothing was written") from None
        files.sweep(save_dir)  # temporaries of savers that were killed
        target = os.path.abspath(prefix)  # the one path checked and replaced
        if self._format == "tensorflow":
            self._save_tensorflow(target, prefix, values, variables)
        else:
            self._save_dflow(target, prefix, values, variables, step)
        now = time.time()
        self._last = [(p, t) for p, t in self._last if p != prefix] + [(prefix, now)]
        to_delete = []
        if self._max_to_keep and self._max_to_keep > 0:
            while len(self._last) > self._max_to_keep:
                p, t = self._last.pop(0)
                if t > self._next_keep:  # kept for good: one every keep_checkpoint_every_n_hours
                    self._next_keep += self._keep_every_s
                    continue
                to_delete.append(p)
        if write_state:
            update_checkpoint_state(save_dir, prefix, [p for p, _ in self._last], latest_filename,
                                    save_relative_paths=self._save_relative_paths)
        for p in to_delete:  # only after the index stops naming them
            _remove_checkpoint(p, meta_graph_suffix)
        if write_meta_graph and _META_GRAPH_WRITER:
            try:
                _META_GRAPH_WRITER[0](f"{os.path.abspath(prefix)}.{meta_graph_suffix}", graph=self._graph, saver=self)
            except InvalidArgumentError as e:  # e.g. a py_func: the checkpoint itself is complete
                import warnings

                warnings.warn(f"Saver.save: checkpoint {prefix!r} written, but its meta graph was not: {e}",
                              stacklevel=2)
        return prefix

    def _save_dflow(self, target, prefix, values, variables, step):
        _check_prefix(target)
        tmp = files.temp_path(target, "tmp")
        try:
            self._write_group(tmp, values, variables, step)
            _check_prefix(target)  # again: something may have appeared there meanwhile
            files.link_in(tmp, target)
        except BaseException as e:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(e, OSError):
                raise files.os_error(e, f"Saver.save to {prefix!r}") from None
            raise
        _remove_tf_files(target)  # a TensorFlow checkpoint saved before at this prefix is replaced

    def _save_tensorflow(self, target, prefix, values, variables):
        """Writes a TensorFlow V2 checkpoint at `target` (tf_checkpoint.write_tf_checkpoint:
        temporaries renamed, the index last), then drops what an earlier save left at this prefix."""
        index = target + ".index"
        if files.node_kind(index) not in ("missing", "file"):
            raise FailedPreconditionError(None, None, f"Saver.save: {index!r} is not a file; a Saver replaces only "
                                          "its own checkpoints. Nothing was written.")
        if files.node_kind(target) != "missing":
            _check_prefix(target)  # a dflow checkpoint at the prefix is replaced, anything else refused
        before = tfc.checkpoint_files(target)
        shards = None
        if self._sharded:
            by_device = {}
            for name in sorted(values):
                by_device.setdefault(variables[name].device or "", []).append(name)
            shards = [by_device[d] for d in sorted(by_device)]
        try:
            written = tfc.write_tf_checkpoint(target, values, shards=shards)
        except OSError as e:
            raise files.os_error(e, f"Saver.save to {prefix!r}") from None
        for path in before:  # an earlier save's shards of another count
            if path not in written:
                files.remove(path)
        _remove_dflow_checkpoint(target)  # a dflow checkpoint saved before at this prefix is replaced

    def _write_group(self, path, values, variables, step):
        g = zarr.open_group(path, mode="w")
        table = {}
        names = set(values)
        for i, (name, value) in enumerate(sorted(values.items())):
            stored = isinstance(value, StoredValue)
            if not stored:
                value = np.asarray(value)
            # variables are stored at their own path ("scope/b" in group "scope"), unless a name is
            # also another variable's scope (an array cannot also be a group)
            clash = name.startswith(".") or any(n.startswith(name + "/") for n in names)
            array_name = f"_v{i}" if clash else name
            parent, _, leaf = array_name.rpartition("/")
            holder = g.require_group(parent) if parent else g
            shape, dtype = tuple(value.shape), np.dtype(value.dtype)
            chunk_shape = value.cio.chunks if stored else row_chunks(shape, dtype.itemsize)
            arr = holder.create_array(leaf, shape=shape, dtype=dtype, chunks=chunk_shape or "auto")
            table[name] = {"array": array_name, "dtype": str(dtype), "shape": list(shape),
                           "checksum": _write_value(arr, value, chunk_shape)}  # of the bytes written
        g.attrs.update({"format": FORMAT, "format_version": FORMAT_VERSION, "dflow_version": dflow_version(),
                        "global_step": step, "time": time.time(), "variables": table, "complete": True})

    def restore(self, sess, save_path):
        """Loads every variable of the Saver from `save_path`; all or nothing.

        NotFoundError for a missing checkpoint or variable, InvalidArgumentError for a shape or
        dtype mismatch, DataLossError for a checksum mismatch."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        try:
            src = open_checkpoint(save_path)
        except NotFoundError as e:  # TF1's Saver.restore raises ValueError here
            raise NotACheckpointError(None, None, f"The passed save_path is not a valid checkpoint: {save_path} "
                                      f"({e})") from None
        try:
            self._restore_from(sess, src)
        finally:
            src.close()

    def _restore_from(self, sess, src):
        variables = self._vars()
        for name, v in variables.items():  # every check before any read
            if name not in src:
                raise NotFoundError(None, v.op, f"Key {name} not found in checkpoint {src.path!r} (variable "
                                    f"{v.name!r})")
            shape = list(src.shape(name))
            if shape != v.shape.as_list():
                raise InvalidArgumentError(None, v.op, f"Restoring {v.name!r} from {src.path!r}: checkpoint has shape "
                                           f"{shape}, the variable {v.shape.as_list()}")
            if src.dtype_name(name) != v.dtype.base_dtype.name:
                raise InvalidArgumentError(None, v.op, f"Restoring {v.name!r} from {src.path!r}: checkpoint has dtype "
                                           f"{src.dtype_name(name)}, the variable {v.dtype.name}")
        loaded = {}
        try:
            for name, v in variables.items():
                shape, dtype = tuple(src.shape(name)), src.dtype(name)
                stream = dtype.kind != "O" and sess.variables.stores(shape, dtype)
                into = sess.variables.new_stored(v.op.name, shape, dtype) if stream else None
                try:
                    loaded[v.op.name] = src.read(name, into=into)
                except BaseException:
                    if into is not None:
                        into.discard()
                    raise
        except BaseException:
            for value in loaded.values():
                if isinstance(value, StoredValue):
                    value.discard()
            raise
        for var_name, value in loaded.items():
            sess.load_variable(var_name, value, owned=True)  # read just now: kept, not copied

    def as_saver_def(self):
        return {"max_to_keep": self._max_to_keep, "name": self._name,
                "keep_checkpoint_every_n_hours": self._keep_every_s / 3600.0}

    def to_proto(self, export_scope=None):
        return self.as_saver_def()


def _write_value(arr, value, chunk_shape):
    """Writes a value (numpy, or a StoredValue read chunk by chunk) into the new array `arr` laid
    out in `chunk_shape` (rows); returns the sha256 of its C-order bytes, hashed as they go."""
    h = hashlib.sha256()
    shape = tuple(arr.shape)
    if not shape or 0 in shape:
        block = value.to_host() if isinstance(value, StoredValue) else value
        arr[...] = block
        h.update(c_order_bytes(block))
        return "sha256:" + h.hexdigest()
    cio = chunk_io(arr)

    def produce(block):
        idx, slc = block
        piece = value.cio.read(idx) if isinstance(value, StoredValue) else value[slc]
        if cio is not None:
            cio.write(idx, piece)
        else:
            arr[slc] = piece
        return piece

    stream_pieces(row_blocks(shape, chunk_shape), produce, lambda _, piece: h.update(c_order_bytes(piece)))
    return "sha256:" + h.hexdigest()


def _check_prefix(prefix):
    """Refuses (FailedPreconditionError, nothing written) a prefix naming something other than a
    checkpoint: a Saver replaces only its own checkpoints."""
    kind = files.node_kind(prefix)
    if kind == "missing" or kind == "link" and files.link_data(prefix) is not None or \
            kind == "group" and _has_format(prefix):
        return
    what = {"link": "a symbolic link not made by a Saver", "file": "a file"}.get(kind, f"a {kind} that is not a "
                                                                                       "checkpoint")
    raise FailedPreconditionError(None, None, f"Saver.save: {prefix!r} is {what}; a Saver replaces only its own "
                                  "checkpoints. Nothing was written.")


def _has_format(path):
    try:
        return zarr.open_group(path, mode="r").attrs.get("format") == FORMAT
    except Exception:  # noqa: BLE001 - not a group of ours
        return False


def _remove_tf_files(prefix):
    """Deletes the TensorFlow checkpoint at `prefix`: the index (first: a reader never sees an index
    without its data) and the data shards it names, nothing else."""
    paths = tfc.checkpoint_files(prefix)
    for path in paths[-1:] + paths[:-1]:
        if files.node_kind(path) == "file":
            os.remove(path)


def _remove_dflow_checkpoint(prefix):
    """Deletes the dflow checkpoint at `prefix` (its link and data directory, or its group); False
    when something else is there (left alone)."""
    kind = files.node_kind(prefix)
    if kind == "link":
        data = files.link_data(prefix)
        if data is None:  # not a link a Saver made: its target is not ours to delete
            return False
        trash = files.temp_path(data, "trash")  # renamed first: a kill before the rmtree leaves a temporary
        os.rename(data, trash)  # that a sweep removes, never an unlinked data directory it would link again
        os.unlink(prefix)
        shutil.rmtree(trash, ignore_errors=True)
    elif kind == "group" and _has_format(prefix):
        shutil.rmtree(prefix, ignore_errors=True)
    elif kind != "missing":
        return False
    return True


def _remove_checkpoint(prefix, meta_graph_suffix="meta"):
    """Deletes a checkpoint of either format and its meta graph files."""
    _remove_tf_files(prefix)
    if not _remove_dflow_checkpoint(prefix):
        return
    meta = f"{prefix}.{meta_graph_suffix}"
    if os.path.isfile(meta) and not os.path.islink(meta):
        os.remove(meta)
    if files.node_kind(meta + ".consts") == "group":  # the meta graph's constants, never another directory
        shutil.rmtree(meta + ".consts", ignore_errors=True)
