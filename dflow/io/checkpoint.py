"""Checkpoints, the reading side: `latest_checkpoint`, `list_variables`, `load_variable`,
`CheckpointReader`, `init_from_checkpoint` (TF1's `tf.train` checkpoint API); `Saver` (saver.py)
writes and restores through the same format helpers.

Format: one Zarr v3 group per checkpoint (`<dir>/model-3`), one array per variable (named by the
variable's op name, chunked), group attributes with the dflow version, global step, time, and per
array its name, dtype, shape and sha256 checksum. Any Zarr client can read it.

TensorFlow's own V2 checkpoints (`PREFIX.index` + `PREFIX.data-?????-of-?????`, tf_checkpoint.py)
are the second format: every reader here finds the format from the files (a complete Zarr group at
the prefix is dflow's, a `PREFIX.index` file TensorFlow's), and `Saver(format="tensorflow")`
writes them. A `_Source` is one open checkpoint of either format, read through the same methods.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np
import zarr

from ..errors import DataLossError, InvalidArgumentError, NotFoundError
from ..graph.dtypes import as_dtype
from ..kernels.common import constant
from ..kernels.state_ops import assign
from ..state.variables import global_variables
from ..storage import files
from ..storage.chunks import chunk_io
from ..storage.values import block_indices, block_slices
from ..version import __version__
from . import tf_checkpoint as tfc
from .checkpoint_index import (
    CheckpointState,
    generate_checkpoint_state_proto,
    get_checkpoint_state,
    update_checkpoint_state,
)
from .zarr_io import read_zarr

__all__ = ["latest_checkpoint", "get_checkpoint_state", "checkpoint_exists", "list_variables",
           "load_variable", "load_checkpoint", "NewCheckpointReader", "init_from_checkpoint", "CheckpointState",
           "update_checkpoint_state", "generate_checkpoint_state_proto"]

FORMAT = "dflow.checkpoint"
FORMAT_VERSION = 1
_CHUNK_BYTES = 64 << 20


def dflow_version():
    return __version__


def stream_pieces(items, produce, consume):
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


def row_blocks(shape, chunk_shape):
    """(block index, slices) of a row-chunked layout in C order."""
    if not shape:
        return [((), ())]
    rows = chunk_shape[0]
    rest = tuple(slice(0, int(d)) for d in shape[1:])
    return [((i,) + (0,) * (len(shape) - 1), (slice(i * rows, min(int(shape[0]), (i + 1) * rows)),) + rest)
            for i in range(-(-int(shape[0]) // rows))]


def is_complete(prefix):
    try:
        g = zarr.open_group(files.published(prefix), mode="r")
    except Exception:  # noqa: BLE001 - any failure to open means "not a checkpoint"
        return False
    return g.attrs.get("format") == FORMAT and g.attrs.get("complete") is True


def checkpoint_found(prefix):
    """Whether a complete checkpoint of either format is at `prefix`."""
    return is_complete(prefix) or tfc.is_tf_checkpoint(prefix)


def checkpoint_exists(checkpoint_prefix):
    """True if a complete checkpoint (dflow's or TensorFlow's V2) is at `checkpoint_prefix`."""
    return checkpoint_found(os.fspath(checkpoint_prefix))


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest complete checkpoint named by the index, or None.

    TensorFlow writes absolute paths into the index; when the directory was moved or copied from
    another machine, the checkpoint of the same name in `checkpoint_dir` is the one meant."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if not state or not state.model_checkpoint_path:
        return None
    path = state.model_checkpoint_path
    if checkpoint_found(path):
        return path
    here = os.path.join(os.fspath(checkpoint_dir), os.path.basename(path))
    return here if checkpoint_found(here) else None


# ---- reading ------------------------------------------------------------------------------------


def open_checkpoint(ckpt):
    """The checkpoint at `ckpt` (a prefix, or a directory: its latest) as a `_Source`.

    NotFoundError when there is none (naming TensorFlow's V1 format when that is what is there)."""
    ckpt = os.fspath(ckpt)
    if os.path.isdir(ckpt) and not os.path.exists(os.path.join(ckpt, "zarr.json")):
        latest = latest_checkpoint(ckpt)
        if latest is None:
            raise NotFoundError(None, None, f"No checkpoint found in directory {ckpt!r}")
        ckpt = latest
    if is_complete(ckpt):
        return _ZarrSource(ckpt, zarr.open_group(files.published(ckpt), mode="r"))
    if tfc.is_tf_checkpoint(ckpt):
        return _TFSource(ckpt)
    v1 = tfc.tf_v1_checkpoint(ckpt)
    if v1 is not None:
        raise NotFoundError(None, None, f"{v1!r} is a checkpoint in TensorFlow's V1 format (a single table of "
                            "saved slices), which dflow does not read; re-save it with TensorFlow as V2 "
                            "(tf.train.Saver(write_version=tf.train.SaverDef.V2)), which dflow reads")
    damaged = files.damaged_zarr_metadata(files.published(ckpt)) if files.node_kind(ckpt) != "missing" else None
    if damaged is not None:  # a checkpoint whose table of contents is damaged: data loss, not absence
        raise damaged
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
    src = open_checkpoint(ckpt_dir_or_file)
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
                for idx, slc in row_blocks(shape, into.cio.chunks):
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

            stream_pieces(row_blocks(shape, chunk_shape), produce, lambda _, piece: h.update(c_order_bytes(piece)))
    except DataLossError:
        raise
    except Exception as e:  # noqa: BLE001 - zstd, blosc, json... any failure to decode is data loss
        raise DataLossError(None, None, f"Cannot read variable {name!r} from the checkpoint: "
                            f"{type(e).__name__}: {e}") from e
    if verify and "sha256:" + h.hexdigest() != entry["checksum"]:
        raise DataLossError(None, None, f"Checksum mismatch for variable {name!r} in checkpoint: the data is "
                            "corrupted")
    return into if into is not None else out


def c_order_bytes(block):
    """A block's C-order bytes as a buffer (no copy when it is contiguous)."""
    block = np.ascontiguousarray(block)
    return memoryview(block.reshape(-1).view(np.uint8)) if block.size else b""


def load_variable(ckpt_dir_or_file, name):
    """The value of variable `name` in a checkpoint, as a numpy array (checksum verified)."""
    src = open_checkpoint(ckpt_dir_or_file)
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
        self._src = open_checkpoint(ckpt)
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
    src = open_checkpoint(ckpt_dir_or_file)
    try:
        _init_from(src, assignment_map)
    finally:
        src.close()


def _init_from(src, assignment_map):
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
