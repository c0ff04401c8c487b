"""Checkpoints: `Saver`, `latest_checkpoint` and friends (TF1's `tf.train` checkpoint API).

Format: one Zarr v3 group per checkpoint (`<dir>/model-3`), one array per variable (named by the
variable's op name, chunked), group attributes with the dflow version, global step, time, and per
array its name, dtype, shape and sha256 checksum. Any Zarr client can read it.

Crash safety (a SIGKILL at any moment of `save` leaves `latest_checkpoint` pointing at a complete
checkpoint): the group is written under a temporary name and renamed into place; then the
`checkpoint` index file (TF1's text format) is written to a temporary file and `os.replace`d;
only then are checkpoints beyond `max_to_keep` deleted.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
import uuid

import numpy as np
import zarr

from ..errors import DataLossError, FailedPreconditionError, InvalidArgumentError, NotFoundError
from ..graph.graph import get_default_graph

__all__ = ["Saver", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists", "list_variables",
           "load_variable", "load_checkpoint", "init_from_checkpoint", "CheckpointState",
           "update_checkpoint_state", "generate_checkpoint_state_proto"]

FORMAT = "dflow.checkpoint"
FORMAT_VERSION = 1
_CHUNK_BYTES = 64 << 20


def _version():
    from .. import __version__

    return __version__


def _checksum(arr):
    """sha256 of the array's C-order bytes, computed in bounded pieces along axis 0."""
    h = hashlib.sha256()
    if arr.ndim == 0 or arr.size == 0:
        h.update(np.ascontiguousarray(np.asarray(arr[...])).tobytes())
        return "sha256:" + h.hexdigest()
    row_bytes = max(1, arr.dtype.itemsize * int(np.prod(arr.shape[1:])))
    step = max(1, _CHUNK_BYTES // row_bytes)
    for start in range(0, arr.shape[0], step):
        h.update(np.ascontiguousarray(np.asarray(arr[start:start + step])).tobytes())
    return "sha256:" + h.hexdigest()


def _chunks_for(shape, itemsize):
    if not shape:
        return ()
    row = itemsize * int(np.prod(shape[1:])) if len(shape) > 1 else itemsize
    rows = max(1, min(shape[0], (16 << 20) // max(1, row)))
    return (rows,) + tuple(shape[1:])


# ---- the index file (TF1's text format) ------------------------------------------------------


class CheckpointState:
    """The contents of a `checkpoint` index file."""

    def __init__(self, model_checkpoint_path, all_model_checkpoint_paths=None, all_model_checkpoint_timestamps=None,
                 last_preserved_timestamp=None):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths or [])
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps or [])
        self.last_preserved_timestamp = last_preserved_timestamp

    def __repr__(self):
        return f"CheckpointState(model_checkpoint_path={self.model_checkpoint_path!r}, " \
               f"all_model_checkpoint_paths={self.all_model_checkpoint_paths!r})"


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None, last_preserved_timestamp=None):
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    return CheckpointState(model_checkpoint_path, paths, all_model_checkpoint_timestamps, last_preserved_timestamp)


def _index_path(save_dir, latest_filename=None):
    return os.path.join(save_dir, latest_filename or "checkpoint")


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None, save_relative_paths=True):
    """Writes the index file atomically (temporary file + os.replace)."""
    state = generate_checkpoint_state_proto(save_dir, model_checkpoint_path, all_model_checkpoint_paths,
                                            all_model_checkpoint_timestamps, last_preserved_timestamp)

    def rel(p):
        return os.path.relpath(p, save_dir) if save_relative_paths and os.path.isabs(p) else p

    lines = [f'model_checkpoint_path: "{rel(state.model_checkpoint_path)}"']
    lines += [f'all_model_checkpoint_paths: "{rel(p)}"' for p in state.all_model_checkpoint_paths]
    lines += [f"all_model_checkpoint_timestamps: {t}" for t in state.all_model_checkpoint_timestamps]
    if last_preserved_timestamp is not None:
        lines.append(f"last_preserved_timestamp: {last_preserved_timestamp}")
    path = _index_path(save_dir, latest_filename)
    tmp = f"{path}.tmp-{uuid.uuid4().hex}"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


_LINE = re.compile(r'^(\w+):\s*"?(.*?)"?\s*$')


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of `checkpoint_dir` (paths made absolute), or None if there is no index."""
    path = _index_path(checkpoint_dir, latest_filename)
    if not os.path.exists(path):
        return None
    model, paths, stamps, preserved = None, [], [], None
    try:
        with open(path) as f:
            for line in f:
                m = _LINE.match(line.strip())
                if not m:
                    continue
                key, value = m.groups()
                if key == "model_checkpoint_path":
                    model = value
                elif key == "all_model_checkpoint_paths":
                    paths.append(value)
                elif key == "all_model_checkpoint_timestamps":
                    stamps.append(float(value))
                elif key == "last_preserved_timestamp":
                    preserved = float(value)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise DataLossError(None, None, f"Unreadable checkpoint index {path!r}: {e}") from None
    if model is None:
        return None

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)

    return CheckpointState(absolute(model), [absolute(p) for p in paths], stamps, preserved)


def _is_complete(prefix):
    try:
        g = zarr.open_group(prefix, mode="r")
    except Exception:  # noqa: BLE001 - any failure to open means "not a checkpoint"
        return False
    return g.attrs.get("format") == FORMAT and g.attrs.get("complete") is True


def checkpoint_exists(checkpoint_prefix):
    """True if a complete checkpoint is at `checkpoint_prefix`."""
    return _is_complete(os.fspath(checkpoint_prefix))


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest complete checkpoint named by the index, or None."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and state.model_checkpoint_path and _is_complete(state.model_checkpoint_path):
        return state.model_checkpoint_path
    return None


# ---- reading ------------------------------------------------------------------------------------


def _open_checkpoint(ckpt):
    ckpt = os.fspath(ckpt)
    if os.path.isdir(ckpt) and not os.path.exists(os.path.join(ckpt, "zarr.json")):
        latest = latest_checkpoint(ckpt)
        if latest is None:
            raise NotFoundError(None, None, f"No checkpoint found in directory {ckpt!r}")
        ckpt = latest
    if not _is_complete(ckpt):
        raise NotFoundError(None, None, f"No complete checkpoint at {ckpt!r}")
    return ckpt, zarr.open_group(ckpt, mode="r")


def _entries(group):
    entries = group.attrs.get("variables")
    if not isinstance(entries, dict):
        raise DataLossError(None, None, "Checkpoint attributes lack the variable table")
    return entries


def list_variables(ckpt_dir_or_file):
    """[(name, shape)] of the variables in a checkpoint (or the latest in a directory)."""
    _, g = _open_checkpoint(ckpt_dir_or_file)
    return sorted((name, list(e["shape"])) for name, e in _entries(g).items())


def _read_array(group, name, entry, verify=True):
    """The variable's value as a numpy array, read once; its checksum verified in memory.

    A missing or undecodable chunk is corruption too: DataLossError, never a codec's own error."""
    try:
        arr = group[entry["array"]]
        value = np.asarray(arr[...])
    except KeyError:
        raise DataLossError(None, None, f"Checkpoint lacks the array of variable {name!r}") from None
    except Exception as e:  # noqa: BLE001 - zstd, blosc, json... any failure to decode is data loss
        raise DataLossError(None, None, f"Cannot read variable {name!r} from the checkpoint: "
                            f"{type(e).__name__}: {e}") from e
    if verify and _checksum(value) != entry["checksum"]:
        raise DataLossError(None, None, f"Checksum mismatch for variable {name!r} in checkpoint: the data is "
                            "corrupted")
    return value


def load_variable(ckpt_dir_or_file, name):
    """The value of variable `name` in a checkpoint, as a numpy array (checksum verified)."""
    _, g = _open_checkpoint(ckpt_dir_or_file)
    entries = _entries(g)
    if name not in entries:
        raise NotFoundError(None, None, f"Key {name} not found in checkpoint")
    return _read_array(g, name, entries[name])


class CheckpointReader:
    """Read access to one checkpoint (TF1's `tf.train.load_checkpoint`)."""

    def __init__(self, ckpt):
        self.path, self._g = _open_checkpoint(ckpt)
        self._entries = _entries(self._g)

    def has_tensor(self, name):
        return name in self._entries

    def get_tensor(self, name):
        if name not in self._entries:
            raise NotFoundError(None, None, f"Key {name} not found in checkpoint")
        return _read_array(self._g, name, self._entries[name])

    def get_variable_to_shape_map(self):
        return {n: list(e["shape"]) for n, e in self._entries.items()}

    def get_variable_to_dtype_map(self):
        from ..graph.dtypes import as_dtype

        return {n: as_dtype(e["dtype"]) for n, e in self._entries.items()}


def load_checkpoint(ckpt_dir_or_file):
    return CheckpointReader(ckpt_dir_or_file)


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Makes the named variables' initializers load their values from a checkpoint (TF1).

    `assignment_map`: {checkpoint name or scope "old/": variable, variable name or scope "new/"}.
    """
    from ..kernels.state_ops import assign
    from ..state.variables import global_variables
    from .zarr_io import read_zarr

    path, g = _open_checkpoint(ckpt_dir_or_file)
    entries = _entries(g)
    by_name = {v.op.name: v for v in global_variables()}
    pairs = []
    for src, dst in assignment_map.items():
        if isinstance(dst, str) and src.endswith("/") and dst.endswith("/"):
            for name in entries:
                if name.startswith(src) and dst + name[len(src):] in by_name:
                    pairs.append((name, by_name[dst + name[len(src):]]))
        elif src.endswith("/") and dst == "/":
            pairs.extend((n, by_name[n]) for n in entries if n.startswith(src) and n in by_name)
        else:
            var = by_name.get(dst) if isinstance(dst, str) else dst
            if var is None:
                raise ValueError(f"init_from_checkpoint: no variable {dst!r} in the graph")
            if src not in entries:
                raise NotFoundError(None, None, f"Key {src} not found in checkpoint {path!r}")
            pairs.append((src, var))
    for name, var in pairs:
        e = entries[name]
        if list(e["shape"]) != var.shape.as_list():
            raise InvalidArgumentError(None, var.op, f"init_from_checkpoint: {name!r} has shape {e['shape']} in the "
                                       f"checkpoint, variable {var.name!r} has {var.shape}")
        with var.graph.as_default():
            value = read_zarr(os.path.join(path, e["array"]))
            var._initializer_op = assign(var._handle, value, name=var.op.name + "/init_from_checkpoint").op


# ---- Saver --------------------------------------------------------------------------------------


class Saver:
    """Saves and restores variables as Zarr checkpoints (TF1's `tf.train.Saver`)."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False, saver_def=None,
                 builder=None, defer_build=False, allow_empty=False, write_version=2, pad_step_number=False,
                 save_relative_paths=True, filename=None):
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
        if not defer_build:
            self._vars()

    def _vars(self):
        """{checkpoint name: Variable}."""
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
        self._last = [(p, os.path.getmtime(p)) for p in checkpoint_paths if _is_complete(p)]

    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Writes a checkpoint; returns its prefix (`save_path-STEP` with a global step)."""
        save_path = os.fspath(save_path)
        if global_step is not None:
            step = global_step if isinstance(global_step, (int, np.integer)) else int(sess.run(global_step))
            prefix = f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
        else:
            step, prefix = None, save_path
        save_dir = os.path.dirname(os.path.abspath(prefix))
        os.makedirs(save_dir, exist_ok=True)
        variables = self._vars()
        values = {}
        for name, v in variables.items():
            try:
                values[name] = sess._host_value(v.op.name)
            except FailedPreconditionError:
                raise FailedPreconditionError(None, v.op, f"Saver: variable {v.name!r} is uninitialized; "
                                              "nothing was written") from None
        tmp = f"{prefix}.dflow-tmp-{uuid.uuid4().hex}"
        try:
            self._write_group(tmp, values, variables, step)
            _publish(tmp, prefix)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
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
        if write_meta_graph:
            from .graph_io import export_meta_graph

            try:
                export_meta_graph(f"{prefix}.{meta_graph_suffix}", graph=self._graph, saver=self)
            except InvalidArgumentError as e:  # e.g. a py_func: the checkpoint itself is complete
                import warnings

                warnings.warn(f"Saver.save: checkpoint {prefix!r} written, but its meta graph was not: {e}",
                              stacklevel=2)
        return prefix

    def _write_group(self, path, values, variables, step):
        g = zarr.open_group(path, mode="w")
        table = {}
        names = set(values)
        for i, (name, value) in enumerate(sorted(values.items())):
            value = np.asarray(value)
            # variables are stored at their own path ("scope/b" in group "scope"), unless a name is
            # also another variable's scope (an array cannot also be a group)
            clash = name.startswith(".") or any(n.startswith(name + "/") for n in names)
            array_name = f"_v{i}" if clash else name
            parent, _, leaf = array_name.rpartition("/")
            holder = g.require_group(parent) if parent else g
            arr = holder.create_array(leaf, shape=value.shape, dtype=value.dtype,
                                      chunks=_chunks_for(value.shape, value.dtype.itemsize) or "auto")
            arr[...] = value
            table[name] = {"array": array_name, "dtype": str(value.dtype), "shape": list(value.shape),
                           "checksum": _checksum(value)}  # of the bytes written, computed in memory
        g.attrs.update({"format": FORMAT, "format_version": FORMAT_VERSION, "dflow_version": _version(),
                        "global_step": step, "time": time.time(), "variables": table, "complete": True})

    def restore(self, sess, save_path):
        """Loads every variable of the Saver from `save_path`; all or nothing.

        NotFoundError for a missing checkpoint or variable, InvalidArgumentError for a shape or
        dtype mismatch, DataLossError for a checksum mismatch."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        path, g = _open_checkpoint(save_path)
        entries = _entries(g)
        loaded = {}
        for name, v in self._vars().items():
            if name not in entries:
                raise NotFoundError(None, v.op, f"Key {name} not found in checkpoint {path!r} (variable "
                                    f"{v.name!r})")
            e = entries[name]
            if list(e["shape"]) != v.shape.as_list():
                raise InvalidArgumentError(None, v.op, f"Restoring {v.name!r}: checkpoint has shape {e['shape']}, "
                                           f"the variable {v.shape.as_list()}")
            if np.dtype(e["dtype"]) != v.dtype.np_dtype:
                raise InvalidArgumentError(None, v.op, f"Restoring {v.name!r}: checkpoint has dtype {e['dtype']}, "
                                           f"the variable {v.dtype.name}")
            loaded[v.op.name] = _read_array(g, name, e)
        for var_name, value in loaded.items():
            sess._load_variable(var_name, value)

    def as_saver_def(self):
        return {"max_to_keep": self._max_to_keep, "name": self._name,
                "keep_checkpoint_every_n_hours": self._keep_every_s / 3600.0}

    def to_proto(self, export_scope=None):
        return self.as_saver_def()


def _publish(src, prefix):
    """Makes the directory `src` the checkpoint at `prefix`, atomically even when `prefix` exists.

    The data lives in `prefix.dflow-<id>`; `prefix` is a symbolic link to it, replaced in one
    `os.replace`, so a reader (and `latest_checkpoint`) sees the old checkpoint or the new one,
    never none, whenever the saving process is killed."""
    final = f"{prefix}.dflow-{uuid.uuid4().hex}"
    os.rename(src, final)
    old = os.path.realpath(prefix) if os.path.islink(prefix) else None
    if os.path.isdir(prefix) and not os.path.islink(prefix):  # a checkpoint not made by this scheme
        trash = f"{prefix}.dflow-old-{uuid.uuid4().hex}"
        os.rename(prefix, trash)
        old = trash
    link = f"{prefix}.dflow-link-{uuid.uuid4().hex}"
    os.symlink(os.path.basename(final), link)
    os.replace(link, prefix)
    if old and os.path.exists(old):
        shutil.rmtree(old, ignore_errors=True)


def _remove_checkpoint(prefix, meta_graph_suffix="meta"):
    """Deletes a checkpoint: its data directory, its link and its meta graph files."""
    if os.path.islink(prefix):
        target = os.path.realpath(prefix)
        os.unlink(prefix)
        shutil.rmtree(target, ignore_errors=True)
    else:
        shutil.rmtree(prefix, ignore_errors=True)
    meta = f"{prefix}.{meta_graph_suffix}"
    if os.path.exists(meta):
        os.remove(meta)
    shutil.rmtree(meta + ".consts", ignore_errors=True)
