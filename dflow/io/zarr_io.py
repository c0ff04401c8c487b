"""Zarr in and out of graphs: `read_zarr` (a lazy source) and `write_zarr` (a streaming sink).

A write streams each chunk into a temporary array as it is computed; only when the whole run has
succeeded does the array appear under its name. On local stores the temporary (named by the
session's process, so a later run sweeps it once that process is dead) goes in place with one
atomic exchange, together with every other output of the run or with none of them
(storage/files.py `publish`); a run never replaces anything but a Zarr array or group
(FailedPreconditionError, nothing touched). On other stores the array is written in place and an
attribute `dflow_complete` flips to true at the end; `read_zarr` refuses arrays where it is false.
A failed or killed run leaves nothing that looks whole.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np
import zarr

from ..dask_compat import normalize_chunks
from ..errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import get_default_graph
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape
from ..kernels.common import apply_op, convert_to_tensor
from ..storage import files
from ..storage.chunks import chunk_io, dask_array, read_all, zarr_python_dask

__all__ = ["read_zarr", "write_zarr"]

COMPLETE_ATTR = "dflow_complete"
RUN_ATTR = "dflow_run"  # on an array being written: the run writing it (removed when it is published)


@dataclass(frozen=True)
class Target:
    """Where an array lives: a local directory root + path, or a zarr store object + path."""

    root: object  # str (local directory) or a zarr Store
    path: str
    grouped: bool = True  # the path lives inside a Zarr group rooted at `root` (else a plain directory)

    @property
    def local(self):
        return isinstance(self.root, str)

    def describe(self):
        return f"{self.root}{'/' + self.path if self.path else ''}" if self.local else \
            f"{type(self.root).__name__}:{self.path or '/'}"

    def fs_path(self, path=None):
        path = self.path if path is None else path
        return os.path.join(self.root, path) if path else self.root

    def open(self, mode="r", path=None):
        path = self.path if path is None else path
        if self.local:
            return zarr.open_array(self.fs_path(path), mode=mode)
        return zarr.open_array(self.root, path=path, mode=mode)

    def exists(self):
        """True for a complete array (the remnant of a failed write does not count)."""
        try:
            return self.open("r").attrs.get(COMPLETE_ATTR, True) is not False
        except (FileNotFoundError, KeyError, ValueError, zarr.errors.NodeTypeValidationError):
            return False


def _target(store, path):
    """Normalizes (store, path) to a Target: a path string, a LocalStore, a Group, or a store."""
    path = (path or "").strip("/")
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    if isinstance(store, str):
        segments = [s for s in path.split("/") if s not in ("", ".")]
        if ".." in segments:  # zarr refuses ".." in a path inside a store: resolve it here, as a file path
            full = os.path.normpath(os.path.join(store, *segments))
            inside = os.path.relpath(full, store)
            if inside.split(os.sep)[0] == "..":  # outside the store: a plain directory path
                return _target(full, None)
            segments = inside.split(os.sep)
        path = "/".join(segments)
        if not path:  # the array is the directory itself: its parent is a plain directory
            parent, leaf = os.path.split(os.path.abspath(store))
            return Target(parent, leaf, grouped=False)
        return Target(store, path)
    if isinstance(store, zarr.Group):
        base = store.path.strip("/")
        return _target(store.store, f"{base}/{path}" if base and path else base or path)
    if isinstance(store, zarr.Array):
        raise InvalidArgumentError(None, None, "write_zarr needs a store and path, not an existing zarr.Array")
    root = getattr(store, "root", None)
    if type(store).__name__ == "LocalStore" and root is not None:
        return _target(os.fspath(root), path)
    return Target(store, path)


# ---- reading ---------------------------------------------------------------------------------


def _open_source(store, path):
    if isinstance(store, zarr.Array):
        arr = store
        where = f"zarr.Array {store.path or '/'}"
    else:
        t = _target(store, path)
        where = t.describe()
        if t.local:  # a killed writer's publication finished, or its old array put back (storage/files.py)
            files.recover(t.fs_path())
        try:
            arr = t.open("r")
        except Exception as e:  # zarr raises several types for a missing array
            damaged = files.damaged_zarr_metadata(t.fs_path()) if t.local else None
            if damaged is not None:
                raise damaged from None
            raise NotFoundError(None, None, f"read_zarr: no Zarr array at {where}: {type(e).__name__}: {e}") from None
    if arr.attrs.get(COMPLETE_ATTR, True) is False:
        raise NotFoundError(None, None, f"read_zarr: the Zarr array at {where} is incomplete (a write that did not "
                            "finish); it is refused.")
    return arr, where


def _source_infer(inputs, attrs):
    return TensorShape(attrs["shape"]), attrs["dtype"]


def _source_eager(xp, array, where, shape, dtype, chunks):
    return read_all(array)


def _source_lower(ctx, array, where, shape, dtype, chunks):
    if tuple(chunks) != tuple(array.chunks):
        ctx.set_scratch(2)
        return zarr_python_dask(array, chunks=chunks, name=ctx.name("-read"))
    out, streamed = dask_array(array, ctx.name("-read"))
    # a streamed chunk file is decoded into the task's output; zarr-python holds the compressed
    # bytes and a decoded copy besides it
    ctx.set_scratch(0 if streamed else 2)
    return out


register_op("ZarrSource", _source_infer, eager=_source_eager, lower=_source_lower, stateful=True,
            cheap_source=True)
not_differentiable("ZarrSource")


def read_zarr(store, path=None, name=None):
    """A tensor reading a Zarr array lazily, chunk by chunk (only the chunks the fetches touch).

    `store`: a directory path, a `zarr.Array`, a `zarr.Group` (+ `path`), or a Zarr store object.
    The static shape and dtype come from the array, the chunks follow its Zarr chunks.
    Raises NotFoundError naming store and path if there is no (complete) array there.
    """
    arr, where = _open_source(store, path)
    try:
        dtype = as_dtype(arr.dtype)
    except TypeError:
        raise InvalidArgumentError(None, None, f"read_zarr: {where} has unsupported dtype {arr.dtype}") from None
    return apply_op("ZarrSource", [], {"array": arr, "where": where, "shape": tuple(arr.shape), "dtype": dtype,
                                       "chunks": tuple(arr.chunks)},
                    name=name, default_name="read_zarr", graph=get_default_graph())


# ---- writing ---------------------------------------------------------------------------------


def _sink_infer(inputs, attrs):
    return TensorShape([]), dtypes.string


def _tmp_path(target, token, owner):
    """The run's temporary array beside the target: owned by the session's process (see
    storage/files.py), so the next run or `dflow.io.cleanup` removes it once that process is dead."""
    base = target.path.rsplit("/", 1)
    leaf = base[-1] if base[-1] else "array"
    parent = base[0] + "/" if len(base) == 2 else ""
    return f"{parent}.{leaf}.dflow-tmp-{owner}-{int(token) & (1 << 64) - 1:x}"


def _create_array(target, shape, dtype, chunks, token, owner):
    """Creates the run's temporary array (local) or the incomplete target (other stores).

    Run again for the same run, it leaves the array it made as it is: a cluster runs this task
    again when the worker holding its result died, and by then other workers may have written
    chunks into the array (creating it afresh would wipe them, and the run would publish chunks of
    fill value)."""
    path = _tmp_path(target, token, owner) if target.local else target.path
    run = f"{owner}-{int(token) & (1 << 64) - 1:x}"
    if _made_by_run(target, path, run, shape, dtype, chunks):
        return path
    if target.local:
        os.makedirs(target.root, exist_ok=True)
        _ensure_groups(target)
        z = zarr.create_array(target.fs_path(path), shape=shape, dtype=dtype, chunks=chunks, overwrite=True)
    else:
        z = zarr.create_array(target.root, name=path or None, shape=shape, dtype=dtype, chunks=chunks,
                              overwrite=True)
    # incomplete: a temporary array left by a killed run is refused by read_zarr
    z.attrs.update({COMPLETE_ATTR: False, RUN_ATTR: run})
    return path


def _made_by_run(target, path, run, shape, dtype, chunks):
    """Whether `path` holds the incomplete array that run `run` created with these parameters."""
    try:
        z = target.open("r", path=path)
    except Exception:  # noqa: BLE001 - nothing (readable) there: the run has not created it
        return False
    return (z.attrs.get(RUN_ATTR) == run and z.attrs.get(COMPLETE_ATTR, True) is False
            and tuple(z.shape) == tuple(shape) and np.dtype(z.dtype) == np.dtype(dtype)
            and tuple(z.chunks) == tuple(chunks))


def _ensure_groups(target):
    """Makes the target's root and parent directories Zarr groups. Two outputs of one run may do
    it at once (threads, processes): zarr's check-then-create then sees the other's group appear
    (ContainsGroupError), and simply trying again finds it."""
    parts = target.path.split("/")[:-1]
    if not target.grouped or not target.path:
        return
    for attempt in range(20):
        try:
            g = zarr.open_group(target.root, mode="a")
            for p in parts:
                g = g.require_group(p)
            return
        except (zarr.errors.ContainsGroupError, FileExistsError):
            if attempt == 19:
                raise
            time.sleep(0.005)


def _write_block(block, path, target=None, block_info=None):
    """Writes one dask block: exactly one Zarr chunk (the sink aligns its chunks to the array's)."""
    z = target.open("r+", path=str(path))
    cio = chunk_io(z)
    if cio is not None:
        cio.write(block_info[0]["chunk-location"], block)  # streamed through the encoder to the file
    else:
        z[tuple(slice(a, b) for a, b in block_info[0]["array-location"])] = block
    return np.full((1,) * block.ndim, block.nbytes, dtype=np.int64)


def _write_fused(*blocks, kernel, target, n_leaves, grid, block_info=None):
    """Writes one Zarr chunk computed by a fused elementwise kernel slab by slab (the task holds
    its inputs and one slab, not the whole chunk). `blocks`: the leaves' blocks, then the path."""
    import array_api_compat

    leaves, path = blocks[:n_leaves], blocks[n_leaves]
    coords = block_info[None]["chunk-location"]
    starts = [sum(c[:i]) for c, i in zip(grid, coords)]
    shape = tuple(c[i] for c, i in zip(grid, coords))
    bounds = [(a, a + n) for a, n in zip(starts, shape)]
    z = target.open("r+", path=str(path))
    cio = chunk_io(z)
    xp = array_api_compat.array_namespace(*[b for b in leaves if hasattr(b, "ndim")]) if leaves else np
    if cio is None or not isinstance(leaves[0], np.ndarray) and xp is not np:
        block = np.asarray(kernel.eager(xp, *leaves))
        block = np.broadcast_to(block, shape) if block.shape != shape else block
        z[tuple(slice(a, b) for a, b in bounds)] = block
        n = block.nbytes
    else:
        n = cio.write_slabs(coords, _full_slabs(kernel.iter_slabs(xp, leaves), shape), shape)
    return np.full((1,) * len(shape), n, dtype=np.int64)


def _full_slabs(slabs, shape):
    """Slabs broadcast to the block's trailing dims (a chain of broadcast inputs may yield fewer)."""
    for s in slabs:
        s = np.asarray(s)
        want = (s.shape[0] if s.ndim == len(shape) else shape[0],) + tuple(shape[1:])
        yield s if s.shape == want else np.broadcast_to(s, want)


def _sink_lower(ctx, x, target, chunks, overwrite, where):
    import dask.array as da

    fused = ctx.fused(x)  # an elementwise chain only this sink reads: computed slab by slab in the write
    x = fused[2] if fused is not None else ctx.as_dask(ctx.materialized(x))
    shape = tuple(int(d) for d in ctx.known_shape(x))
    zchunks = tuple(chunks) if chunks is not None else tuple(max(1, int(c[0])) for c in x.chunks) or ()
    if x.ndim:
        aligned = normalize_chunks(zchunks, shape)
        if x.chunks != aligned:
            fused = None
            x = x.rechunk(aligned)  # every dask chunk writes whole Zarr chunks: no write races
    dtype = x.dtype

    owner = files.owner_tag()  # the session's process: its temporaries are swept once it is dead

    def before(run):
        if target.local:
            files.sweep(os.path.dirname(target.fs_path()))  # killed runs' temporaries beside the target
            _check_local(target, overwrite, where)
        elif target.exists() and not overwrite:
            raise FailedPreconditionError(None, None, f"write_zarr: {where} already exists; pass overwrite=True "
                                          "to replace it.")

    def publication(run):
        tmp = _tmp_path(target, run.token, owner)
        if not target.local:
            return files.Publication(None, where, commit=lambda: _mark_complete(target.open("r+")))

        def prepare():  # again: something may have appeared at the name during the run
            _check_local(target, overwrite, where, during=True)
            _mark_complete(zarr.open_array(target.fs_path(tmp), mode="r+"))

        return files.Publication(target.fs_path(tmp), target.fs_path(), prepare)

    def failure(run):
        if target.local:
            files.discard(target.fs_path(_tmp_path(target, run.token, owner)))

    ctx.before_run(before)
    ctx.on_publish(publication)
    ctx.on_failure(failure)
    created = ctx.delayed(_create_array, target, shape, dtype, zchunks, ctx.run_token(), owner)
    if x.ndim == 0:
        total = ctx.delayed(_write_scalar, x, created, target, dtype=np.int64)
    elif fused is not None and _streamable(fused[1], x):
        kernel, leaves, _ = fused
        ctx.set_scratch(0)  # inputs and one slab: no chunk-sized result is held
        written = da.map_blocks(_write_fused, *leaves, created, kernel=kernel, target=target, n_leaves=len(leaves),
                                grid=x.chunks, meta=np.empty((0,) * x.ndim, np.int64),
                                dtype=np.int64, chunks=tuple((1,) * len(c) for c in x.chunks), name=ctx.name("-write"))
        total = written.sum()
    else:
        written = da.map_blocks(_write_block, x, created, target=target, dtype=np.int64,
                                meta=np.empty((0,) * x.ndim, np.int64),
                                chunks=tuple((1,) * len(c) for c in x.chunks), name=ctx.name("-write"))
        total = written.sum()
    summary = {"path": where, "shape": shape, "dtype": str(dtype)}
    return ctx.delayed(_summarize, total, summary)


def _streamable(leaves, x):
    """Whether the leaves' blocks line up with x's (each dim: the same chunks, or one block of
    size 1 broadcast), so a write task gets exactly the leaves' blocks of its chunk."""
    if not leaves:
        return False
    for leaf in leaves:
        if not isinstance(leaf, type(x)) or leaf.ndim > x.ndim:
            return False
        for lc, xc in zip(leaf.chunks[::-1], x.chunks[::-1]):
            if lc != xc and lc != (1,):
                return False
    return True


def _write_scalar(x, path, target):
    z = target.open("r+", path=str(path))
    z[...] = x
    return np.int64(np.asarray(x).nbytes)


def _summarize(total, summary):
    out = dict(summary)
    out["bytes"] = int(total)
    return np.array(out, dtype=object)


def _mark_complete(z):
    z.attrs[COMPLETE_ATTR] = True
    if RUN_ATTR in z.attrs:
        del z.attrs[RUN_ATTR]


_KINDS = {"file": "a file", "directory": "a directory that is not a Zarr array or group", "link": "a symbolic link",
          "array": "a Zarr array"}


def _check_local(target, overwrite, where, during=False):
    """Refuses, touching nothing, a local target that write_zarr may not replace: anything but a
    Zarr array or group (or an empty directory) at its name, an existing array or group without
    `overwrite`, a file or an array where the target's parent groups should be."""
    if target.grouped and target.path:
        parts = target.path.split("/")
        for i in range(len(parts)):
            holder = target.fs_path("/".join(parts[:i]))
            kind = files.node_kind(holder)
            if kind in ("file", "array"):
                raise FailedPreconditionError(None, None, f"write_zarr: {holder} is {_KINDS[kind]}, so {where} "
                                              "cannot be written inside it. Nothing was changed.")
    final = target.fs_path()
    above = os.path.dirname(os.path.abspath(final))
    while not os.path.lexists(above) and os.path.dirname(above) != above:
        above = os.path.dirname(above)
    if not os.path.isdir(above):
        raise FailedPreconditionError(None, None, f"write_zarr: {above} is a file, so {where} cannot be written "
                                      "under it. Nothing was changed.")
    kind = files.node_kind(final)
    if kind in ("missing", "empty"):
        return
    if kind in ("array", "group"):
        if overwrite or kind == "array" and not target.exists():  # the remnant of an old failed write
            return
        raise FailedPreconditionError(None, None, f"write_zarr: {where} "
                                      f"{'appeared during the run' if during else 'already exists'}; pass "
                                      "overwrite=True to replace it.")
    raise FailedPreconditionError(None, None, f"write_zarr: {final} is {_KINDS[kind]}; write_zarr replaces only "
                                  "a Zarr array or group (overwrite=True), never other files. Nothing was changed.")


register_op("ZarrSink", _sink_infer, eager=None, lower=_sink_lower, stateful=True, state="sink", takes_fused=True)
not_differentiable("ZarrSink")


def write_zarr(tensor, store, path=None, chunks=None, overwrite=False, name=None):
    """An op streaming `tensor` into a Zarr array chunk by chunk when run; fetching it gives a
    summary dict (path, shape, dtype, bytes).

    The array appears under its name only when the run succeeds. An existing target without
    `overwrite=True`: FailedPreconditionError when run.
    """
    tensor = convert_to_tensor(tensor)
    target = _target(store, path)
    if not target.local and not target.path:
        raise InvalidArgumentError(None, None, "write_zarr to a store object needs a `path` inside it")
    return apply_op("ZarrSink", [tensor], {"target": target, "chunks": None if chunks is None else tuple(chunks),
                                           "overwrite": bool(overwrite), "where": target.describe()},
                    name=name, default_name="write_zarr")
