"""Checkpoints: `Saver`, `latest_checkpoint` and friends (TF1's `tf.train` checkpoint API).

Format: one Zarr v3 group per checkpoint (`<dir>/model-3`), one array per variable (named by the
variable's op name, chunked), group attributes with the dflow version, global step, time, and per
array its name, dtype, shape and sha256 checksum. Any Zarr client can read it.

Crash safety (a SIGKILL at any moment of `save` leaves `latest_checkpoint` pointing at a complete
checkpoint): the group is written under an owned temporary name and put in place by swapping a
symbolic link (storage/files.py `link_in`); then the `checkpoint` index file (TF1's text format)
is written to a temporary file and `os.replace`d; only then are checkpoints beyond `max_to_keep`
deleted. A save never replaces what is not a checkpoint (FailedPreconditionError), and sweeps the
temporaries killed savers left in its directory.

TensorFlow's own V2 checkpoints (`PREFIX.index` + `PREFIX.data-?????-of-?????`, tf_checkpoint.py)
are the second format: every reader here finds the format from the files (a complete Zarr group at
the prefix is dflow's, a `PREFIX.index` file TensorFlow's), and `Saver(format="tensorflow")`
writes them. A `_Source` is one open checkpoint of either format, read through the same methods.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time

import numpy as np
import zarr

from ..errors import DataLossError, FailedPreconditionError, InvalidArgumentError, NotFoundError
from ..graph.dtypes import as_dtype
from ..graph.graph import get_default_graph
from ..storage import files
from ..storage.chunks import chunk_io, row_chunks
from ..storage.values import StoredValue, block_indices, block_slices
from . import tf_checkpoint as tfc
from .checkpoint_index import (
    CheckpointState,
    generate_checkpoint_state_proto,
    get_checkpoint_state,
    update_checkpoint_state,
)

__all__ = ["Saver", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists", "list_variables",
           "load_variable", "load_checkpoint", "NewCheckpointReader", "init_from_checkpoint", "CheckpointState",
           "update_checkpoint_state", "generate_checkpoint_state_proto"]

FORMAT = "dflow.checkpoint"
FORMAT_VERSION = 1
_CHUNK_BYTES = 64 << 20


def _version():
    from ..version import __version__

    return __version__


def _stream(items, produce, consume):
    """produce(item) on a thread pool, a few items ahead; consume(item, result) here, in order.

    Chunk IO (zstd, file reads and writes) releases the GIL, so the pool's threads encode or
    decode while this thread hashes; at most 2 × threads chunks are in flight (bounded memory)."""
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    workers = max(1, os.cpu_count() or 1)
    items = iter(items)
    with ThreadPoolExecutor(workers) as pool:
        window = deque()
        try:
            for item in items:
                window.append((item, pool.submit(produce, item)))
                if len(window) >= 2 * workers:
                    it, fut = window.popleft()
                    consume(it, fut.result())
            while window:
                it, fut = window.popleft()
                consume(it, fut.result())
        except BaseException:
            for _, fut in window:
                fut.cancel()
            raise


def _row_blocks(shape, chunk_shape):
    """(block index, slices) of a row-chunked layout in C order."""
    if not shape:
        return [((), ())]
    rows = chunk_shape[0]
    rest = tuple(slice(0, int(d)) for d in shape[1:])
    return [((i,) + (0,) * (len(shape) - 1), (slice(i * rows, min(int(shape[0]), (i + 1) * rows)),) + rest)
            for i in range(-(-int(shape[0]) // rows))]


def _is_complete(prefix):
    try:
        g = zarr.open_group(files.published(prefix), mode="r")
    except Exception:  # noqa: BLE001 - any failure to open means "not a checkpoint"
        return False
    return g.attrs.get("format") == FORMAT and g.attrs.get("complete") is True


def _exists(prefix):
    """Whether a complete checkpoint of either format is at `prefix`."""
    return _is_complete(prefix) or tfc.is_tf_checkpoint(prefix)


def checkpoint_exists(checkpoint_prefix):
    """True if a complete checkpoint (dflow's or TensorFlow's V2) is at `checkpoint_prefix`."""
    return _exists(os.fspath(checkpoint_prefix))


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest complete checkpoint named by the index, or None.

    TensorFlow writes absolute paths into the index; when the directory was moved or copied from
    another machine, the checkpoint of the same name in `checkpoint_dir` is the one meant."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if not state or not state.model_checkpoint_path:
        return None
    path = state.model_checkpoint_path
    if _exists(path):
        return path
    here = os.path.join(os.fspath(checkpoint_dir), os.path.basename(path))
    return here if _exists(here) else None


# ---- reading ------------------------------------------------------------------------------------


def _open_checkpoint(ckpt):
    """The checkpoint at `ckpt` (a prefix, or a directory: its latest) as a `_Source`.

    NotFoundError when there is none (naming TensorFlow's V1 format when that is what is there)."""
    ckpt = os.fspath(ckpt)
    if os.path.isdir(ckpt) and not os.path.exists(os.path.join(ckpt, "zarr.json")):
        latest = latest_checkpoint(ckpt)
        if latest is None:
            raise NotFoundError(None, None, f"No checkpoint found in directory {ckpt!r}")
        ckpt = latest
    if _is_complete(ckpt):
        return _ZarrSource(ckpt, zarr.open_group(files.published(ckpt), mode="r"))
    if tfc.is_tf_checkpoint(ckpt):
        return _TFSource(ckpt)
    v1 = tfc.tf_v1_checkpoint(ckpt)
    if v1 is not None:
        raise NotFoundError(None, None, f"{v1!r} is a checkpoint in TensorFlow's V1 format (a single table of "
                            "saved slices), which dflow does not read; re-save it with TensorFlow as V2 "
                            "(tf.train.Saver(write_version=tf.train.SaverDef.V2)), which dflow reads")
    raise NotFoundError(None, None, f"No complete checkpoint at {ckpt!r}")


class _ZarrSource:
    """A dflow (Zarr) checkpoint open for reading."""

    format = "dflow"

    def __init__(self, path, group):
        self.path, self.group = path, group
        self.entries = _entries(group)

    def names(self):
        return sorted(self.entries)

    def __contains__(self, name):
        return name in self.entries

    def shape(self, name):
        return tuple(self.entries[name]["shape"])

    def dtype(self, name):
        return np.dtype(self.entries[name]["dtype"])

    def dtype_name(self, name):
        return as_dtype(self.entries[name]["dtype"]).name

    def checksum(self, name):
        return self.entries[name]["checksum"]

    def read(self, name, into=None):
        return _read_array(self.group, name, self.entries[name], into=into)

    def tensor(self, name):
        """A graph tensor reading the value lazily (init_from_checkpoint)."""
        from .zarr_io import read_zarr

        return read_zarr(os.path.join(self.path, self.entries[name]["array"]))

    def close(self):
        pass


class _TFSource:
    """A TensorFlow V2 checkpoint open for reading (tf_checkpoint.TFCheckpointReader)."""

    format = "tensorflow"

    def __init__(self, prefix):
        self.path = prefix
        self.reader = tfc.read_tf_checkpoint(prefix)

    def names(self):
        return self.reader.keys()

    def __contains__(self, name):
        return self.reader.has_tensor(name)

    def shape(self, name):
        return self.reader.shape(name)

    def dtype(self, name):
        return self.reader.dtype(name)

    def dtype_name(self, name):
        return self.reader.dtype_name(name)

    def checksum(self, name):
        return self.reader.checksum(name)

    def read(self, name, into=None):
        """The value (numpy), or streamed into the StoredValue `into` one chunk row at a time."""
        if into is None:
            return self.reader.read(name)
        chunks = into.chunks
        by_row = {}
        for idx, slc in zip(block_indices(chunks), block_slices(chunks)):
            by_row.setdefault(idx[0], []).append((idx, slc))
        slabs = self.reader.read_slabs(name, into.cio.chunks[0])
        for r in sorted(by_row):
            slab = next(slabs)
            for idx, slc in by_row[r]:
                into.cio.write(idx, slab[(slice(None),) + tuple(slc[1:])])
        for _ in slabs:  # the end of the stream: its last checksum is verified there
            pass
        return into

    def tensor(self, name):
        from ..kernels.common import constant

        return constant(self.reader.read(name))

    def close(self):
        self.reader.close()


def _entries(group):
    """The checkpoint's variable table, each entry checked: {name: {array, dtype, shape, checksum}}.
    Tampered or damaged metadata is DataLossError naming the variable, never a TypeError/KeyError."""
    entries = group.attrs.get("variables")
    if not isinstance(entries, dict):
        raise DataLossError(None, None, "Checkpoint attributes lack the variable table")
    for name, e in entries.items():
        problem = None
        if not isinstance(e, dict) or not {"array", "dtype", "shape", "checksum"} <= set(e):
            problem = "lacks its array, dtype, shape or checksum"
        elif not isinstance(e["array"], str) or not e["array"] or not isinstance(e["checksum"], str) or \
                e["array"].startswith("/") or any(part in ("", ".", "..") for part in e["array"].split("/")):
            problem = "has a malformed array name or checksum"
        elif not isinstance(e["shape"], list) or not all(type(d) is int and d >= 0 for d in e["shape"]):
            problem = f"has a malformed shape {e['shape']!r}"
        else:
            try:
                ok = isinstance(e["dtype"], str) and as_dtype(e["dtype"]) is not None
            except (TypeError, ValueError):
                ok = False
            if not ok:
                problem = f"has a malformed dtype {e['dtype']!r}"
        if problem:
            raise DataLossError(None, None, f"Checkpoint entry of variable {name!r} {problem}: the checkpoint's "
                                "metadata is damaged")
    return entries


def list_variables(ckpt_dir_or_file):
    """[(name, shape)] of the variables in a checkpoint (or the latest in a directory)."""
    src = _open_checkpoint(ckpt_dir_or_file)
    try:
        return [(name, list(src.shape(name))) for name in src.names()]
    finally:
        src.close()


def _read_array(group, name, entry, verify=True, into=None):
    """The variable's value, read once chunk by chunk and hashed as it comes; the checksum verified.

    `into`: a StoredValue to stream the value into (never resident here) instead of a numpy array.
    A missing or undecodable chunk is corruption too: DataLossError, never a codec's own error."""
    try:
        arr = group[entry["array"]]
    except KeyError:
        raise DataLossError(None, None, f"Checkpoint lacks the array of variable {name!r}") from None
    shape = tuple(int(d) for d in arr.shape)
    if list(shape) != list(entry["shape"]):
        raise DataLossError(None, None, f"Checkpoint array of variable {name!r} has shape {list(shape)}, its "
                            f"table says {entry['shape']}")
    h = hashlib.sha256()
    cio = chunk_io(arr)
    chunk_shape = into.cio.chunks if into is not None else tuple(int(c) for c in arr.chunks)
    rows_only = shape and tuple(chunk_shape[1:]) == shape[1:]
    same = cio is not None and rows_only and tuple(cio.chunks) == tuple(chunk_shape)
    out = None if into is not None else np.empty(shape, dtype=arr.dtype)
    try:
        if not rows_only:  # not a dflow layout: whole, through zarr-python
            value = np.asarray(arr[...])
            h.update(np.ascontiguousarray(value).tobytes())
            if into is not None:
                for idx, slc in _row_blocks(shape, into.cio.chunks):
                    into.cio.write(idx, value[slc])
            out = value
        else:
            def produce(block):
                idx, slc = block
                target = out[slc] if out is not None else None
                piece = cio.read(idx, out=target) if same else np.asarray(arr[slc])
                if into is not None:
                    into.cio.write(idx, piece)
                elif not same:
                    target[...] = piece
                return piece

            _stream(_row_blocks(shape, chunk_shape), produce, lambda _, piece: h.update(_bytes(piece)))
    except DataLossError:
        raise
    except Exception as e:  # noqa: BLE001 - zstd, blosc, json... any failure to decode is data loss
        raise DataLossError(None, None, f"Cannot read variable {name!r} from the checkpoint: "
                            f"{type(e).__name__}: {e}") from e
    if verify and "sha256:" + h.hexdigest() != entry["checksum"]:
        raise DataLossError(None, None, f"Checksum mismatch for variable {name!r} in checkpoint: the data is "
                            "corrupted")
    return into if into is not None else out


def _bytes(block):
    """A block's C-order bytes as a buffer (no copy when it is contiguous)."""
    block = np.ascontiguousarray(block)
    return memoryview(block.reshape(-1).view(np.uint8)) if block.size else b""


def load_variable(ckpt_dir_or_file, name):
    """The value of variable `name` in a checkpoint, as a numpy array (checksum verified)."""
    src = _open_checkpoint(ckpt_dir_or_file)
    try:
        if name not in src:
            raise NotFoundError(None, None, f"Key {name} not found in checkpoint {src.path!r}")
        return src.read(name)
    finally:
        src.close()


class CheckpointReader:
    """Read access to one checkpoint, dflow's or TensorFlow's (TF1's `tf.train.load_checkpoint`,
    `tf.train.NewCheckpointReader`)."""

    def __init__(self, ckpt):
        self._src = _open_checkpoint(ckpt)
        self.path = self._src.path
        self.format = self._src.format  # "dflow" or "tensorflow"

    def has_tensor(self, name):
        return name in self._src

    def get_tensor(self, name):
        if name not in self._src:
            raise NotFoundError(None, None, f"Key {name} not found in checkpoint {self.path!r}")
        return self._src.read(name)

    def get_variable_to_shape_map(self):
        return {n: list(self._src.shape(n)) for n in self._src.names()}

    def get_variable_to_dtype_map(self):
        """{name: DType}; a bfloat16 tensor (no numpy type) maps to float32, as get_tensor returns it."""
        return {n: as_dtype(self._src.dtype(n)) for n in self._src.names()}

    def get_variable_to_dtype_name_map(self):
        """dflow's own: {name: dtype name as stored} ('bfloat16' where the map above says float32)."""
        return {n: self._src.dtype_name(n) for n in self._src.names()}

    def get_variable_to_checksum_map(self):
        """dflow's own: {name: checksum as stored} ("sha256:<hex>" in dflow's format, "crc32c:<hex>"
        in TensorFlow's); get_tensor verifies a value against it."""
        return {n: self._src.checksum(n) for n in self._src.names()}

    def close(self):
        self._src.close()


def load_checkpoint(ckpt_dir_or_file):
    return CheckpointReader(ckpt_dir_or_file)


def NewCheckpointReader(filepattern):  # noqa: N802 - TF1's public name
    """TF1's `tf.train.NewCheckpointReader`: a CheckpointReader of the checkpoint at `filepattern`."""
    return CheckpointReader(filepattern)


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Makes the named variables' initializers load their values from a checkpoint (TF1).

    `assignment_map`: {checkpoint name or scope "old/": variable, variable name or scope "new/"}.
    A TensorFlow checkpoint's values are read (verified) when this is called, into the initializers.
    """
    src = _open_checkpoint(ckpt_dir_or_file)
    try:
        _init_from(src, assignment_map)
    finally:
        src.close()


def _init_from(src, assignment_map):
    from ..kernels.state_ops import assign
    from ..state.variables import global_variables

    names = src.names()
    by_name = {v.op.name: v for v in global_variables()}
    pairs = []
    for old, dst in assignment_map.items():
        if isinstance(dst, str) and old.endswith("/") and dst.endswith("/"):
            for name in names:
                if name.startswith(old) and dst + name[len(old):] in by_name:
                    pairs.append((name, by_name[dst + name[len(old):]]))
        elif old.endswith("/") and dst == "/":
            pairs.extend((n, by_name[n]) for n in names if n.startswith(old) and n in by_name)
        else:
            var = by_name.get(dst) if isinstance(dst, str) else dst
            if var is None:
                raise ValueError(f"init_from_checkpoint: no variable {dst!r} in the graph")
            if old not in src:
                raise NotFoundError(None, None, f"Key {old} not found in checkpoint {src.path!r}")
            pairs.append((old, var))
    for name, var in pairs:
        shape = list(src.shape(name))
        if shape != var.shape.as_list():
            raise InvalidArgumentError(None, var.op, f"init_from_checkpoint: {name!r} has shape {shape} in the "
                                       f"checkpoint, variable {var.name!r} has {var.shape}")
        if src.dtype_name(name) != var.dtype.base_dtype.name:
            raise InvalidArgumentError(None, var.op, f"init_from_checkpoint: {name!r} has dtype "
                                       f"{src.dtype_name(name)} in the checkpoint, variable {var.name!r} has "
                                       f"{var.dtype.base_dtype.name}")
        with var.graph.as_default():
            value = src.tensor(name)
            var._initializer_op = assign(var._handle, value, name=var.op.name + "/init_from_checkpoint").op


# ---- Saver --------------------------------------------------------------------------------------


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
        from ..state.variables import Variable, global_variables

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
        self._last = [(p, os.path.getmtime(files.published(p) if _is_complete(p) else p + ".index")) for p in checkpoint_paths
                      if _exists(p)]

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
        g.attrs.update({"format": FORMAT, "format_version": FORMAT_VERSION, "dflow_version": _version(),
                        "global_step": step, "time": time.time(), "variables": table, "complete": True})

    def restore(self, sess, save_path):
        """Loads every variable of the Saver from `save_path`; all or nothing.

        NotFoundError for a missing checkpoint or variable, InvalidArgumentError for a shape or
        dtype mismatch, DataLossError for a checksum mismatch."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        try:
            src = _open_checkpoint(save_path)
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
        h.update(_bytes(block))
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

    _stream(_row_blocks(shape, chunk_shape), produce, lambda _, piece: h.update(_bytes(piece)))
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
