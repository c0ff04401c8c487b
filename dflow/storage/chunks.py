"""Whole-chunk reads and writes of local Zarr arrays, straight between chunk files and numpy buffers.

zarr-python reads a chunk by loading the compressed file into memory, decoding it into a buffer of
its own and copying that into the result: about three chunk-sizes held per chunk read, and the
copy costs as much as the decode. For the arrays dflow reads and writes most (local stores, zarr
v3 `bytes` + `zstd` or no compression, zarr v2 with a Zstd compressor, C order, no filters, no
sharding), this module streams the chunk file through a zstd decompressor into the output buffer:
one chunk held, no copies. Writes stream the encoded bytes to the chunk file the same way. The
files are the ones zarr-python reads and writes (same keys, same codec, the array's own level).

Anything else (other codecs, sharding, remote stores) returns None from `chunk_io` and the caller
goes through zarr-python.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np

from ..dask_compat import task
from ..errors import DataLossError, FailedPreconditionError, NotFoundError
from .files import os_error

_READ_SIZE = 1 << 20  # bytes read from a chunk file per step while decompressing


@dataclass(frozen=True)
class ChunkIO:
    """How to read and write whole chunks of one local Zarr array (picklable: plain fields)."""

    root: str  # the array's directory
    keys: tuple  # (prefix, separator): chunk (i, j) lives at root/prefix + sep.join(i, j)
    shape: tuple
    chunks: tuple
    dtype: np.dtype
    fill_value: object
    level: int | None  # zstd level; None = uncompressed
    checksum: bool = False  # zstd frames carry a content checksum

    def path(self, coords):
        prefix, sep = self.keys
        key = prefix + sep.join(str(int(c)) for c in coords) if coords else prefix.rstrip(sep) or "0"
        return os.path.join(self.root, key)

    def block_shape(self, coords):
        return tuple(min(c, s - i * c) for i, c, s in zip(coords, self.chunks, self.shape))

    def _check_still_there(self, chunk_file):
        """A missing chunk file is the fill value only while the array is there: with its metadata
        gone too (deleted or moved while a run or a Dataset read it), NotFoundError naming it,
        never chunks of fill value read as data."""
        if not any(os.path.exists(os.path.join(self.root, m)) for m in ("zarr.json", ".zarray")):
            raise NotFoundError(None, None, f"Zarr array {self.root!r} is gone (deleted or moved while it was being "
                                f"read): its chunk {os.path.basename(chunk_file)!r} and its metadata are missing")

    def check_unchanged(self):
        """Before a chunk is read: the array's metadata file still gives the shape, dtype and chunks
        this ChunkIO reads with (those of the zarr.Array the graph opened). An array replaced by
        another (rewritten in place with another shape, dtype or chunking) is a
        FailedPreconditionError naming it, never chunks read with the old layout or files past
        the new shape read as fill value. A missing metadata file is NotFoundError. (A stat per
        chunk; the file is parsed again only when its stat changed.)"""
        _check_layout(self.root, (self.shape, self.dtype, self.chunks))

    def read(self, coords, out=None):
        """Chunk `coords` as an array of its (edge-clipped) shape; decoded into `out` when given."""
        self.check_unchanged()
        shape = self.block_shape(coords)
        full = tuple(self.chunks)
        fn = self.path(coords)
        try:
            f = open(fn, "rb")
        except FileNotFoundError:  # never written: the fill value, as zarr reads it
            self._check_still_there(fn)
            target = out if out is not None else np.empty(shape, dtype=self.dtype)
            target[...] = self.fill_value
            return target
        buf = out if out is not None and shape == full else np.empty(full, dtype=self.dtype)
        with f:
            view = memoryview(buf.reshape(-1).view(np.uint8))
            if self.level is None:
                n = _fill(f, view)
                extra = f.read(1)
            else:
                import zstandard

                reader = zstandard.ZstdDecompressor().stream_reader(f, read_size=_READ_SIZE)
                try:
                    n = _fill(reader, view)
                    extra = reader.read(1)
                except zstandard.ZstdError as e:
                    raise DataLossError(None, None, f"Zarr chunk file {fn} is not valid zstd data "
                                        f"({e}): the file is damaged.") from None
        if n != len(view) or extra:
            raise DataLossError(None, None, f"Zarr chunk file {fn} decodes to {'more' if extra else n} bytes; "
                                f"a chunk of shape {full} and dtype {self.dtype} has {len(view)}: the file is "
                                "damaged or was written with other settings.")
        if shape != full:
            buf = buf[tuple(slice(0, s) for s in shape)]
            if out is not None:
                out[...] = buf
                return out
            return np.ascontiguousarray(buf)
        return buf

    def read_slabs(self, coords, rows):
        """Chunk `coords` as consecutive arrays of up to `rows` rows (leading axis), each decoded
        from the chunk file as it is asked for: one slab in memory, not the chunk. Only for
        chunks spanning their trailing dimensions whole (rows are contiguous in the file);
        DataLossError as `read` for a damaged file."""
        shape = self.block_shape(coords)
        if tuple(shape[1:]) != tuple(self.chunks[1:]):
            raise ValueError(f"read_slabs: chunk {coords} of {self.root} is cut in a trailing dimension")
        rows = max(1, int(rows))
        self.check_unchanged()
        fn = self.path(coords)
        try:
            f = open(fn, "rb")
        except FileNotFoundError:  # never written: the fill value, as zarr reads it
            self._check_still_there(fn)
            for a in range(0, shape[0], rows):
                yield np.full((min(rows, shape[0] - a),) + shape[1:], self.fill_value, dtype=self.dtype)
            return
        row_bytes = int(np.prod(shape[1:], dtype=np.int64)) * self.dtype.itemsize
        expected = self.chunks[0] * row_bytes
        with f:
            if self.level is None:
                stream = f
            else:
                import zstandard

                stream = zstandard.ZstdDecompressor().stream_reader(f, read_size=_READ_SIZE)
            got = 0
            try:
                for a in range(0, shape[0], rows):
                    slab = np.empty((min(rows, shape[0] - a),) + shape[1:], dtype=self.dtype)
                    view = memoryview(slab.reshape(-1).view(np.uint8))
                    n = _fill(stream, view)
                    got += n
                    if n != len(view):
                        break
                    yield slab
                else:  # an edge chunk's padding, then the end of the data
                    pad = np.empty(min(expected - got, 1 << 20), dtype=np.uint8)
                    while got < expected:
                        n = _fill(stream, memoryview(pad)[:min(len(pad), expected - got)])
                        got += n
                        if not n:
                            break
                    if got == expected and stream.read(1):
                        got += 1
            except Exception as e:
                if type(e).__name__ == "ZstdError":
                    raise DataLossError(None, None, f"Zarr chunk file {fn} is not valid zstd data "
                                        f"({e}): the file is damaged.") from None
                raise
        if got != expected:
            raise DataLossError(None, None, f"Zarr chunk file {fn} decodes to {'more' if got > expected else got} "
                                f"bytes; a chunk of shape {tuple(self.chunks)} and dtype {self.dtype} has "
                                f"{expected}: the file is damaged or was written with other settings.")

    def write_slabs(self, coords, slabs, block_shape):
        """Writes chunk `coords` (of edge-clipped `block_shape`) from an iterator of consecutive
        row slabs, each streamed through the encoder as it comes: the caller never holds the whole
        chunk. Returns the bytes of data written."""
        full = tuple(self.chunks)
        if tuple(block_shape[1:]) != full[1:]:  # clipped in a trailing dim: rows are not contiguous
            parts = [np.asarray(s, dtype=self.dtype) for s in slabs]
            block = np.concatenate(parts) if len(parts) > 1 else parts[0]
            self.write(coords, block)
            return block.nbytes
        fn = self.path(coords)
        row_bytes = int(np.prod(full[1:], dtype=np.int64)) * self.dtype.itemsize
        total, rows = full[0] * row_bytes, 0
        with _writing(fn) as f:
            if self.level is None:
                w = f
            else:
                import zstandard

                w = zstandard.ZstdCompressor(level=self.level, write_checksum=self.checksum).stream_writer(
                    f, size=total, closefd=False)
            for s in slabs:
                s = np.ascontiguousarray(s, dtype=self.dtype)
                rows += s.shape[0]
                w.write(memoryview(s.reshape(-1).view(np.uint8)))
            if rows != block_shape[0]:
                raise ValueError(f"write_slabs: got {rows} rows for a block of {block_shape[0]}")
            if rows < full[0]:  # an edge chunk along axis 0: padded with the fill value, as zarr does
                w.write(memoryview(np.full((full[0] - rows,) + full[1:], self.fill_value,
                                           dtype=self.dtype).reshape(-1).view(np.uint8)))
            if w is not f:
                w.close()
        return rows * row_bytes

    def write(self, coords, block):
        """Writes a whole chunk (an edge chunk is padded with the fill value, as zarr stores it)."""
        full = tuple(self.chunks)
        block = np.asarray(block, dtype=self.dtype)
        if block.shape != full:
            padded = np.full(full, self.fill_value, dtype=self.dtype)
            padded[tuple(slice(0, s) for s in block.shape)] = block
            block = padded
        block = np.ascontiguousarray(block)
        fn = self.path(coords)
        data = memoryview(block.reshape(-1).view(np.uint8))
        with _writing(fn) as f:
            if self.level is None:
                f.write(data)
            else:
                import zstandard

                # closed by hand, not by `with`: a failed write (a full disk) must surface as its
                # OSError, not as the ZstdError ("Src size is incorrect") closing the frame raises
                w = zstandard.ZstdCompressor(level=self.level, write_checksum=self.checksum).stream_writer(
                    f, size=len(data), closefd=False)
                for start in range(0, len(data), 8 * _READ_SIZE):
                    w.write(data[start:start + 8 * _READ_SIZE])
                w.close()


class _writing:
    """`open(fn, "wb")` (its directory made first) whose OSError (a full disk, a read-only
    directory) is the dflow error naming the chunk file: ResourceExhaustedError 'No space left on
    device', PermissionDeniedError, ... (storage/files.py `os_error`)."""

    def __init__(self, fn):
        self.fn = fn

    def __enter__(self):
        try:
            os.makedirs(os.path.dirname(self.fn), exist_ok=True)
            self.f = open(self.fn, "wb")
        except OSError as e:
            raise os_error(e, f"writing the Zarr chunk file {self.fn!r}") from None
        return self.f

    def __exit__(self, kind, exc, tb):
        try:
            self.f.close()
        except OSError as e:
            if exc is None:
                raise os_error(e, f"writing the Zarr chunk file {self.fn!r}") from None
        if isinstance(exc, OSError):
            raise os_error(exc, f"writing the Zarr chunk file {self.fn!r}") from None
        return False


def _fill(stream, view):
    n = 0
    while n < len(view):
        k = stream.readinto(view[n:])
        if not k:
            break
        n += k
    return n


def chunk_io(arr):
    """A ChunkIO for a zarr.Array when its chunks can be streamed directly (see the module doc), else None."""
    try:
        import zstandard  # noqa: F401 - the fast path needs it
    except ImportError:
        return None
    store = getattr(arr, "store", None)
    if type(store).__name__ != "LocalStore" or sys.byteorder != "little":
        return None
    dtype = np.dtype(arr.dtype)
    if dtype.kind not in "biuf" or not dtype.isnative:
        return None
    meta = arr.metadata
    root = os.path.join(os.fspath(store.root), *[p for p in (arr.path or "").split("/") if p])
    try:
        if meta.zarr_format == 3:
            level, checksum = _v3_codecs(meta.codecs, dtype)
            enc = meta.chunk_key_encoding
            name = type(enc).__name__
            sep = enc.separator
            prefix = "c" + sep if name == "DefaultChunkKeyEncoding" else ""
            if name not in ("DefaultChunkKeyEncoding", "V2ChunkKeyEncoding"):
                return None
        elif meta.zarr_format == 2:
            if meta.filters or meta.order != "C":
                return None
            level, checksum = _v2_compressor(meta.compressor)
            sep, prefix = meta.dimension_separator, ""
        else:
            return None
    except _Unsupported:
        return None
    fill = meta.fill_value if meta.fill_value is not None else 0
    return ChunkIO(root, (prefix, sep), tuple(int(s) for s in arr.shape), tuple(int(c) for c in arr.chunks),
                   dtype, np.asarray(fill, dtype=dtype).item(), level, checksum)


def _check_layout(root, then):
    """Raises unless the array's metadata file at `root` still gives the layout `then` (shape,
    dtype, chunks): NotFoundError when the metadata is gone, FailedPreconditionError naming the
    array when it was replaced by another layout."""
    now = _current_layout(root)
    if now is None:
        raise NotFoundError(None, None, f"Zarr array {root!r} is gone (deleted or moved while it was being "
                            "read): its metadata is missing")
    if now != then and now != ("?", "?", "?"):
        (shape, dtype, chunks), (shape0, dtype0, chunks0) = now, then
        raise FailedPreconditionError(
            None, None, f"Zarr array {root!r} changed since the graph read it: shape {shape0} "
            f"{dtype0} in chunks {chunks0} then, shape {shape} {dtype} in chunks {chunks} now; "
            "build the graph again (read_zarr) to read the new array.")


@dataclass(frozen=True)
class LayoutGuard:
    """For a local Zarr array read through zarr-python (codecs or chunkings `chunk_io` does not
    stream): the layout its zarr.Array was opened with, checked against the metadata file before
    each read, so that an array deleted or replaced after the graph opened it is an error naming
    it, never missing chunks read as fill values or new chunks read with the old layout."""

    root: str
    then: tuple  # (shape, dtype, chunks) as the metadata file gave them when the array was opened

    def check(self):
        _check_layout(self.root, self.then)


def layout_guard(arr):
    """The LayoutGuard of a zarr.Array in a local store; None for other stores (nothing to stat)."""
    store = getattr(arr, "store", None)
    if type(store).__name__ != "LocalStore":
        return None
    root = os.path.join(os.fspath(store.root), *[p for p in (arr.path or "").split("/") if p])
    try:  # the metadata's chunk grid: the shards of a sharded array
        grid = getattr(arr, "shards", None) or arr.chunks
        then = (tuple(int(s) for s in arr.shape), np.dtype(arr.dtype), tuple(int(c) for c in grid))
    except TypeError:  # a dtype numpy does not know (strings of zarr v3): not checked
        return None
    return LayoutGuard(root, then)


class GuardedArray:
    """A zarr.Array whose every read checks its LayoutGuard first (what dask reads chunks of)."""

    def __init__(self, arr, guard):
        self.arr, self.guard = arr, guard
        self.shape, self.dtype, self.ndim = arr.shape, arr.dtype, arr.ndim

    def __getitem__(self, index):
        self.guard.check()
        return self.arr[index]


def zarr_python_dask(arr, chunks=None, name=None):
    """`da.from_zarr(arr, chunks)` whose chunk reads check that the array is still the one the
    graph opened (a local store; `LayoutGuard`)."""
    import dask.array as da

    guard = layout_guard(arr)
    if guard is None:
        return da.from_zarr(arr, chunks=chunks, name=name)
    return da.from_array(GuardedArray(arr, guard), chunks=chunks or arr.chunks, name=name, asarray=True,
                         meta=np.empty((0,) * arr.ndim, dtype=arr.dtype))


_layouts = {}  # metadata file -> (its stat, the layout it gave)


def _current_layout(root):
    """(shape, dtype, chunks) the array's metadata file gives now; ("?", "?", "?") when it cannot be
    parsed (checked no further: the chunk reads report what they find); None when it is missing."""
    for m in ("zarr.json", ".zarray"):
        path = os.path.join(root, m)
        try:
            st = os.stat(path)
        except OSError:
            continue
        stat = (st.st_mtime_ns, st.st_size, st.st_ino)
        known = _layouts.get(path)
        if known is not None and known[0] == stat:
            return known[1]
        layout = _layout(path)
        _layouts[path] = (stat, layout)
        return layout
    return None


def _layout(meta_file):
    """(shape, dtype, chunks) a Zarr metadata file (v3 zarr.json, v2 .zarray) gives."""
    import json

    try:
        with open(meta_file, "rb") as f:
            meta = json.load(f)
        if "data_type" in meta:  # v3
            dtype, chunks = np.dtype(meta["data_type"]), meta["chunk_grid"]["configuration"]["chunk_shape"]
        else:
            dtype, chunks = np.dtype(meta["dtype"]), meta["chunks"]
        return tuple(int(s) for s in meta["shape"]), dtype, tuple(int(c) for c in chunks)
    except (OSError, ValueError, KeyError, TypeError):
        return ("?", "?", "?")


class _Unsupported(Exception):
    pass


def _v3_codecs(codecs, dtype):
    names = [type(c).__name__ for c in codecs]
    if not names or names[0] != "BytesCodec":
        raise _Unsupported
    endian = getattr(codecs[0].endian, "value", codecs[0].endian)
    if endian not in (None, "little"):
        raise _Unsupported
    if names[1:] == []:
        return None, False
    if names[1:] == ["ZstdCodec"]:
        return int(codecs[1].level), bool(codecs[1].checksum)
    raise _Unsupported


def _v2_compressor(compressor):
    if compressor is None:
        return None, False
    if type(compressor).__name__ == "Zstd":
        return int(compressor.level), bool(getattr(compressor, "checksum", False))
    raise _Unsupported


def block_sizes(cio):
    """The array's Zarr chunks as dask chunks (per dimension, the sizes of its blocks)."""
    return dask_chunks(cio.shape, cio.chunks)


def read_all(arr):
    """The whole zarr.Array as a numpy array, each chunk decoded straight into its place when possible."""
    import itertools

    cio = chunk_io(arr)
    if cio is None or not arr.ndim or 0 in arr.shape:
        guard = layout_guard(arr)
        if guard is not None:
            guard.check()
        return np.asarray(arr[...])
    out = np.empty(cio.shape, dtype=cio.dtype)
    for coords in itertools.product(*[range(len(b)) for b in block_sizes(cio)]):
        where = tuple(slice(i * c, i * c + b) for i, c, b in zip(coords, cio.chunks, cio.block_shape(coords)))
        target = out[where]
        if target.flags.c_contiguous:
            cio.read(coords, out=target)
        else:
            target[...] = cio.read(coords)
    return out


ROW_CHUNK_BYTES = 16 << 20


def row_chunks(shape, itemsize, target=ROW_CHUNK_BYTES):
    """A Zarr chunk shape cutting only axis 0, about `target` bytes a chunk (C order = chunk order,
    so a checksum of the C-order bytes streams chunk by chunk)."""
    if not shape:
        return ()
    row = itemsize * int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else itemsize
    rows = max(1, min(int(shape[0]), target // max(1, row)))
    return (rows,) + tuple(int(s) for s in shape[1:])


def dask_chunks(shape, chunk_shape):
    """The dask chunks of a regular Zarr chunk grid."""
    return tuple(tuple(min(c, s - i * c) for i in range(-(-s // c))) if s else (0,)
                 for s, c in zip(shape, chunk_shape))


def create_local(path, shape, dtype, chunks, compressed=True):
    """A new local Zarr v3 array (zstd, or raw bytes); its ChunkIO."""
    import zarr

    z = zarr.create_array(path, shape=tuple(shape), dtype=np.dtype(dtype), chunks=tuple(chunks) or None,
                          compressors="auto" if compressed else None, overwrite=True)
    return chunk_io(z)


def dask_array(arr, name=None):
    """A dask array reading a zarr.Array chunk by chunk: streamed chunk files when `chunk_io`
    applies (one task per Zarr chunk), else `da.from_zarr`. Returns (array, streamed)."""
    import itertools

    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    cio = chunk_io(arr)
    if name is None:
        name = "zarr-read-" + tokenize(getattr(cio, "root", None) or id(arr), tuple(arr.shape), str(arr.dtype),
                                       tuple(arr.chunks))
    if cio is None or not arr.ndim or 0 in arr.shape:
        return zarr_python_dask(arr, name=name), False
    sizes = block_sizes(cio)
    layer = {}
    for coords in itertools.product(*[range(len(b)) for b in sizes]):
        key = (name,) + coords
        layer[key] = task(key, cio.read, coords)
    return da.Array(HighLevelGraph.from_collections(name, layer, dependencies=()), name, sizes,
                    dtype=cio.dtype, meta=np.empty((0,) * len(sizes), dtype=cio.dtype)), True
