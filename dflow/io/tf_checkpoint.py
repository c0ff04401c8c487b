"""TensorFlow's own V2 checkpoints (tensor bundles), read and written without TensorFlow.

A checkpoint `PREFIX` is `PREFIX.index`, a sorted table (sstable.py) mapping "" to a
`BundleHeaderProto` (number of data shards, endianness, version) and each tensor name to a
`BundleEntryProto` (dtype, shape, shard, offset, size, masked CRC-32C of the bytes), and the data
shards `PREFIX.data-0000i-of-0000N` holding the tensors' little-endian C-order bytes
(tensorflow/core/util/tensor_bundle/tensor_bundle.cc). Strings are stored as the varint64 lengths,
a masked CRC of the lengths (as uint32 each), then the bytes. A partitioned variable's entry lists
its `slices`; each slice is a tensor of its own under the key `EncodeTensorNameSlice(name, slice)`
(saved_tensor_slice_util.cc, OrderedCode), keys that begin with a zero byte.

Reading verifies every checksum and streams: a tensor is read into its destination in bounded
pieces (`readinto`), the CRC updated as they come, so a value larger than memory goes to disk
(`read_slabs`) without a second copy. Errors: DataLossError naming the file and tensor for damage,
NotFoundError for a missing checkpoint or tensor, UnimplementedError for what TensorFlow writes but
dflow does not read (V1 checkpoints, variants, big-endian bundles).

Public functions (for other modules): `is_tf_checkpoint(prefix)`, `tf_v1_checkpoint(path)`,
`read_tf_checkpoint(prefix) -> TFCheckpointReader` (`.keys()`, `.shape(n)`, `.dtype(n)`,
`.read(n, out=None)`, `.read_slabs(n, rows)`), `write_tf_checkpoint(prefix, {name: value})`.
"""

from __future__ import annotations

import glob
import os
import struct
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from google.protobuf.message import DecodeError

from ..errors import DataLossError, InvalidArgumentError, NotFoundError, UnimplementedError
from ..proto import BundleEntryProto, BundleHeaderProto
from ..storage import files
from ..storage.values import StoredValue, block_indices, block_slices
from .sstable import (
    build_table,
    crc32c,
    get_varint,
    is_table,
    mask_crc,
    put_varint,
    read_table,
    unmask_crc,
)

__all__ = ["is_tf_checkpoint", "tf_v1_checkpoint", "read_tf_checkpoint", "write_tf_checkpoint", "TFCheckpointReader",
           "data_filename", "checkpoint_files", "encode_tensor_name_slice"]

# TensorFlow's DataType enum (types.proto) -> (name, numpy dtype of the stored bytes)
_DTYPES = {1: ("float32", "<f4"), 2: ("float64", "<f8"), 3: ("int32", "<i4"), 4: ("uint8", "u1"),
           5: ("int16", "<i2"), 6: ("int8", "i1"), 7: ("string", None), 8: ("complex64", "<c8"),
           9: ("int64", "<i8"), 10: ("bool", "?"), 11: ("qint8", "i1"), 12: ("quint8", "u1"),
           13: ("qint32", "<i4"), 14: ("bfloat16", "<u2"), 15: ("qint16", "<i2"), 16: ("quint16", "<u2"),
           17: ("uint16", "<u2"), 18: ("complex128", "<c16"), 19: ("float16", "<f2"), 22: ("uint32", "<u4"),
           23: ("uint64", "<u8")}
_ENUM = {np.dtype(v): k for k, (name, v) in _DTYPES.items()
         if v is not None and name in ("float32", "float64", "int32", "uint8", "int16", "int8", "complex64", "int64",
                                       "bool", "uint16", "complex128", "float16", "uint32", "uint64")}
_STRING = 7
_BFLOAT16 = 14
PIECE_BYTES = 64 << 20  # bytes read (and checksummed) per step


def data_filename(prefix, shard, num_shards):
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def is_tf_checkpoint(prefix):
    """Whether `prefix` names a TensorFlow V2 checkpoint (its `PREFIX.index` file exists)."""
    return os.path.isfile(f"{os.fspath(prefix)}.index")


def tf_v1_checkpoint(path):
    """The V1 checkpoint file(s) at `path` (a single `.ckpt` table, or `path-?????-of-?????`
    shards), or None. dflow does not read V1 checkpoints; callers name the format in their error."""
    path = os.fspath(path)
    candidates = [path] if os.path.isfile(path) else sorted(glob.glob(glob.escape(path) + "-?????-of-?????"))
    for c in candidates:
        try:
            with open(c, "rb") as f:
                f.seek(0, os.SEEK_END)
                if f.tell() < 48:
                    continue
                f.seek(-48, os.SEEK_END)
                if is_table(f.read(48)):
                    return c
        except OSError:
            continue
    return None


def checkpoint_files(prefix):
    """The files of the V2 checkpoint at `prefix`: its data shards (as its index names them) and
    the index; [] when there is no readable index."""
    try:
        with open(f"{prefix}.index", "rb") as f:
            items = read_table(f.read(), f"{prefix}.index")
        n = BundleHeaderProto.FromString(items[0][1]).num_shards if items and items[0][0] == b"" else 0
    except (OSError, DataLossError, DecodeError):
        return []
    return [data_filename(prefix, i, n) for i in range(n)] + [f"{prefix}.index"]


# ---- OrderedCode keys of partitioned variables' slices ------------------------------------------

_HEADER_BITS = [(0, 0), (0x80, 0), (0xC0, 0), (0xE0, 0), (0xF0, 0), (0xF8, 0), (0xFC, 0), (0xFE, 0), (0xFF, 0),
                (0xFF, 0x80), (0xFF, 0xC0)]


def _num_increasing(value):
    body = value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
    return bytes([len(body)]) + body


def _signed_num_increasing(value):
    x = ~value if value < 0 else value
    if x < 64:
        return bytes([(0x80 ^ value) & 0xFF])
    length = x.bit_length() // 7 + 1  # TF's kBitsToLength: 7 bits of payload a byte, a sign bit
    buf = bytearray((b"\xff\xff" if value < 0 else b"\0\0") + (value & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "big"))
    begin = 10 - length
    buf[begin] ^= _HEADER_BITS[length][0]
    buf[begin + 1] ^= _HEADER_BITS[length][1]
    return bytes(buf[begin:])


def _string(s):
    """OrderedCode's string: 0x00 -> 00 ff, 0xff -> ff 00, then the separator 00 01."""
    out = bytearray()
    for b in s:
        if b == 0:
            out += b"\x00\xff"
        elif b == 0xFF:
            out += b"\xff\x00"
        else:
            out.append(b)
    return bytes(out) + b"\x00\x01"


def encode_tensor_name_slice(name, extents):
    """The table key of one slice of tensor `name` (TF's EncodeTensorNameSlice): `extents`
    [(start, length)] per dimension, length -1 for a whole dimension."""
    key = _num_increasing(0) + _string(name.encode()) + _num_increasing(len(extents))
    for start, length in extents:
        key += _signed_num_increasing(start) + _signed_num_increasing(length)
    return key


def _extents(slice_proto):
    return [(e.start, e.length if e.HasField("length") else -1) for e in slice_proto.extent]


# ---- reading ------------------------------------------------------------------------------------


def read_tf_checkpoint(prefix):
    return TFCheckpointReader(prefix)


class TFCheckpointReader:
    """Reads a TensorFlow V2 checkpoint: its table of tensors, and each tensor's value verified.

    Use as a context manager (or call `close`) to close the data shards it opened."""

    def __init__(self, prefix):
        self._files = {}
        self.prefix = os.fspath(prefix)
        self.index_path = f"{self.prefix}.index"
        try:
            with open(self.index_path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise NotFoundError(None, None, f"No TensorFlow checkpoint index {self.index_path!r}") from None
        except OSError as e:
            raise NotFoundError(None, None, f"Cannot read TensorFlow checkpoint index {self.index_path!r}: "
                                f"{e.strerror}") from None
        items = read_table(data, self.index_path)
        if not items or items[0][0] != b"":
            raise DataLossError(None, None, f"TensorFlow checkpoint index {self.index_path}: no header entry: the "
                                "file is damaged or not a checkpoint index")
        header = self._parse(BundleHeaderProto, items[0][1], "the header")
        if header.endianness != BundleHeaderProto.LITTLE:
            raise UnimplementedError(None, None, f"TensorFlow checkpoint {self.prefix}: a big-endian bundle; dflow "
                                     "reads little-endian ones")
        self.num_shards = header.num_shards
        self._entries, self._slices = {}, {}
        for key, value in items[1:]:
            if key.startswith(b"\x00"):
                self._slices[key] = self._parse(BundleEntryProto, value, f"slice entry {key!r}")
            else:
                name = key.decode("utf-8", "surrogateescape")
                self._entries[name] = self._parse(BundleEntryProto, value, f"entry {name!r}")

    def _parse(self, cls, value, what):
        try:
            return cls.FromString(value)
        except DecodeError:
            raise DataLossError(None, None, f"TensorFlow checkpoint index {self.index_path}: {what} is not a valid "
                                f"{cls.__name__}: the file is damaged") from None

    def close(self):
        for f in self._files.values():
            f.close()
        self._files.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    # table --------------------------------------------------------------------------------------

    def keys(self):
        """The tensors' names, sorted (slices of partitioned variables are not names of their own)."""
        return sorted(self._entries)

    def has_tensor(self, name):
        return name in self._entries

    def _entry(self, name):
        try:
            return self._entries[name]
        except KeyError:
            raise NotFoundError(None, None, f"Key {name} not found in checkpoint {self.prefix}") from None

    def shape(self, name):
        return tuple(int(d.size) for d in self._entry(name).shape.dim)

    def dtype_name(self, name):
        """TensorFlow's name of the tensor's dtype ('float32', 'bfloat16', 'string', ...)."""
        enum = self._entry(name).dtype
        if enum not in _DTYPES:
            return f"DataType {enum}"
        return _DTYPES[enum][0]

    def dtype(self, name):
        """The numpy dtype `read` returns: object for strings, float32 for bfloat16 (widened exactly)."""
        enum = self._check_dtype(name, self._entry(name))
        return np.dtype(object) if enum == _STRING else np.dtype(np.float32) if enum == _BFLOAT16 else \
            np.dtype(_DTYPES[enum][1]).newbyteorder("=")

    def _check_dtype(self, name, entry):
        if entry.dtype not in _DTYPES:
            what = {20: "resource", 21: "variant"}.get(entry.dtype, f"DataType enum {entry.dtype}")
            raise UnimplementedError(None, None, f"Tensor {name!r} in checkpoint {self.prefix} has dtype {what}, "
                                     "which dflow does not read")
        return entry.dtype

    def checksum(self, name):
        """"crc32c:<hex>" of the stored bytes (unmasked), one per slice ("+"-joined) when partitioned."""
        entry = self._entry(name)
        parts = [self._slice_entry(name, _extents(sp)) for sp in entry.slices] if entry.slices else [entry]
        return "crc32c:" + "+".join(f"{unmask_crc(e.crc32c):08x}" for e in parts)

    def nbytes(self, name):
        return int(np.prod(self.shape(name), dtype=np.int64)) * self.dtype(name).itemsize

    # values -------------------------------------------------------------------------------------

    def read(self, name, out=None):
        """The tensor's value (numpy; strings as an object array of bytes), checksums verified;
        read straight into `out` (C-contiguous, of its shape and dtype) when given."""
        entry = self._entry(name)
        enum = self._check_dtype(name, entry)
        shape = self.shape(name)
        if enum == _STRING:
            value = self._assemble(name, entry, shape, np.dtype(object), self._read_strings)
            if out is not None:
                out[...] = value
                return out
            return value
        if out is None:
            out = np.empty(shape, dtype=self.dtype(name))
        if enum == _BFLOAT16:
            raw = self._assemble(name, entry, shape, np.dtype("<u2"), self._read_plain)
            out[...] = (raw.astype(np.uint32) << 16).view(np.float32)
            return out
        segments = self._row_segments(name, entry, shape)
        if segments is None:
            out[...] = self._assemble(name, entry, shape, np.dtype(_DTYPES[enum][1]), self._read_plain)
            return out
        if not out.flags.c_contiguous:
            raise ValueError("TFCheckpointReader.read: `out` must be C-contiguous")
        stream = _SegmentStream(self, name, segments)
        stream.readinto(memoryview(out.reshape(-1).view(np.uint8)) if out.size else memoryview(b""))
        stream.finish()
        return out

    def read_slabs(self, name, rows):
        """The tensor's value as consecutive slabs of up to `rows` rows (axis 0), each read from
        the file as it is asked for: one slab in memory. The checksum of each stored piece is
        verified when its last byte has been read (DataLossError then, after earlier slabs were
        yielded: a caller streaming into a destination discards it on that error)."""
        entry = self._entry(name)
        enum = self._check_dtype(name, entry)
        shape = self.shape(name)
        segments = None if enum in (_STRING, _BFLOAT16) or not shape else self._row_segments(name, entry, shape)
        if segments is None:
            value = self.read(name)
            for a in range(0, max(1, shape[0]) if shape else 1, max(1, rows)):
                yield value[a:a + rows] if shape else value
            return
        stream = _SegmentStream(self, name, segments)
        dtype = self.dtype(name)
        for a in range(0, shape[0], max(1, rows)):
            slab = np.empty((min(rows, shape[0] - a),) + shape[1:], dtype=dtype)
            if slab.size:
                stream.readinto(memoryview(slab.reshape(-1).view(np.uint8)))
            yield slab
        stream.finish()

    def _row_segments(self, name, entry, shape):
        """The stored pieces whose bytes, concatenated, are the tensor's C-order bytes: the
        entry itself, or a partitioned variable's slices when they cut axis 0 only; else None."""
        if not entry.slices:
            return [(name, entry, self._expected_size(name, entry, shape))]
        parts = []
        for sp in entry.slices:
            ext = _extents(sp)
            if any(length != -1 and (start, length) != (0, dim) for (start, length), dim in zip(ext[1:], shape[1:])):
                return None
            parts.append((ext[0][0] if ext and ext[0][1] != -1 else 0, ext))
        parts.sort(key=lambda p: p[0])
        segments, row = [], 0
        for start, ext in parts:
            length = shape[0] if ext[0][1] == -1 else ext[0][1]
            if start != row:
                return None
            sub = self._slice_entry(name, ext)
            sub_shape = (length,) + tuple(shape[1:])
            segments.append((name, sub, self._expected_size(name, sub, sub_shape)))
            row += length
        return segments if row == (shape[0] if shape else 1) else None

    def _slice_entry(self, name, ext):
        key = encode_tensor_name_slice(name, ext)
        if key not in self._slices:
            raise DataLossError(None, None, f"TensorFlow checkpoint {self.index_path}: slice {ext} of partitioned "
                                f"tensor {name!r} has no entry: the file is damaged")
        return self._slices[key]

    def _expected_size(self, name, entry, shape):
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(_DTYPES[entry.dtype][1]).itemsize
        if entry.size != nbytes:
            raise DataLossError(None, None, f"TensorFlow checkpoint {self.index_path}: tensor {name!r} has {entry.size} "
                                f"bytes in its entry, its shape {list(shape)} and dtype {_DTYPES[entry.dtype][0]} "
                                f"need {nbytes}")
        return nbytes

    def _assemble(self, name, entry, shape, dtype, read_one):
        """The whole value (in memory) from the entry or from each of its slices."""
        if not entry.slices:
            return read_one(name, entry, shape, dtype)
        out = np.empty(shape, dtype=dtype)
        for sp in entry.slices:
            ext = _extents(sp)
            region = tuple(slice(0, d) if length == -1 else slice(start, start + length)
                           for (start, length), d in zip(ext, shape))
            sub_shape = tuple(r.stop - r.start for r in region)
            out[region] = read_one(name, self._slice_entry(name, ext), sub_shape, dtype)
        return out

    def _read_plain(self, name, entry, shape, dtype):
        out = np.empty(shape, dtype=dtype)
        stream = _SegmentStream(self, name, [(name, entry, self._expected_size(name, entry, shape))])
        if out.size:
            stream.readinto(memoryview(out.reshape(-1).view(np.uint8)))
        stream.finish()
        return out.astype(dtype.newbyteorder("="), copy=False)

    def _read_strings(self, name, entry, shape, dtype):
        n = int(np.prod(shape, dtype=np.int64))
        path = data_filename(self.prefix, entry.shard_id, self.num_shards)
        data = self._read_bytes(name, entry, path) if entry.size else b""
        out = np.empty(n, dtype=object)
        if not entry.size:
            out[...] = b""
            return out.reshape(shape)
        pos, lengths, crc = 0, [], 0
        try:
            for _ in range(n):
                length, pos = get_varint(data, pos)
                lengths.append(length)
                crc = crc32c(struct.pack("<I", length) if length <= 0xFFFFFFFF else struct.pack("<Q", length), crc)
            (stored,) = struct.unpack_from("<I", data, pos)
        except (ValueError, struct.error):
            raise self._damaged(name, path, "its string lengths run past its bytes") from None
        if unmask_crc(stored) != crc:
            raise self._damaged(name, path, "checksum mismatch in its string lengths")
        crc = crc32c(data[pos:pos + 4], crc)
        pos += 4
        if pos + sum(lengths) != len(data):
            raise self._damaged(name, path, f"its strings need {pos + sum(lengths)} bytes, its entry says {len(data)}")
        for i, length in enumerate(lengths):
            out[i] = data[pos:pos + length]
            pos += length
        crc = crc32c(data[pos - sum(lengths):], crc)
        if unmask_crc(entry.crc32c) != crc:
            raise self._damaged(name, path, "checksum mismatch")
        return out.reshape(shape)

    def _read_bytes(self, name, entry, path):
        buf = bytearray(entry.size)
        f = self._file(name, path)
        f.seek(entry.offset)
        if _fill(f, memoryview(buf)) != entry.size:
            raise self._damaged(name, path, f"the file ends before its {entry.size} bytes at offset {entry.offset}: "
                                "it is truncated")
        return bytes(buf)

    def _file(self, name, path):
        f = self._files.get(path)
        if f is None:
            try:
                f = self._files[path] = open(path, "rb", buffering=0)
            except FileNotFoundError:
                raise DataLossError(None, None, f"TensorFlow checkpoint {self.prefix}: data file {path} of tensor "
                                    f"{name!r} is missing") from None
            except OSError as e:
                raise DataLossError(None, None, f"TensorFlow checkpoint {self.prefix}: cannot read data file {path} "
                                    f"of tensor {name!r}: {e.strerror}") from None
        return f

    def _damaged(self, name, path, what):
        return DataLossError(None, None, f"TensorFlow checkpoint data file {path}, tensor {name!r}: {what}: the file is "
                             "damaged")


_READERS = []  # one small pool per process, made on first use
_READERS_LOCK = threading.Lock()
READ_THREADS = 4


def _pread(fd, view, offset):
    """Reads view's bytes from `fd` at `offset` (os.preadv until full or the file ends); the count."""
    got = 0
    while got < len(view):
        n = os.preadv(fd, [view[got:]], offset + got)
        if not n:
            break
        got += n
    return got


def _pread_parallel(fd, view, offset):
    """`_pread` of a large view as PIECE_BYTES pieces on a few threads: the kernel then copies
    (and faults in the destination pages) on several cores; one thread's read of a cached 1 GB
    file varied 10x from run to run here, four threads' did not. The bytes read, in order."""
    if len(view) <= 2 * PIECE_BYTES:
        return _pread(fd, view, offset)
    with _READERS_LOCK:
        if not _READERS:
            _READERS.append(ThreadPoolExecutor(READ_THREADS, thread_name_prefix="dflow-ckpt-read"))
    starts = range(0, len(view), PIECE_BYTES)
    counts = list(_READERS[0].map(lambda s: _pread(fd, view[s:s + PIECE_BYTES], offset + s), starts))
    total = 0
    for s, n in zip(starts, counts):  # bytes up to the first short piece (a truncated file)
        total += n
        if n < min(PIECE_BYTES, len(view) - s):
            break
    return total


def _fill(f, view):
    """Reads into `view` until it is full or the file ends; the bytes read."""
    got = 0
    while got < len(view):
        n = f.readinto(view[got:])
        if not n:
            break
        got += n
    return got


class _SegmentStream:
    """The bytes of stored pieces [(name, entry, size)] read in order into the buffers given,
    each piece's CRC updated as they come and verified at its end."""

    def __init__(self, reader, name, segments):
        self.reader, self.name = reader, name
        self.segments = [s for s in segments if s[2]]
        self.i, self.pos, self.crc = 0, 0, 0

    def readinto(self, view):
        done = 0
        while done < len(view):
            if self.i >= len(self.segments):
                raise InvalidArgumentError(None, None, f"reading {self.name!r}: more bytes asked than stored")
            _, entry, size = self.segments[self.i]
            path = data_filename(self.reader.prefix, entry.shard_id, self.reader.num_shards)
            f = self.reader._file(self.name, path)
            take = min(size - self.pos, len(view) - done)
            piece = view[done:done + take]
            if _pread_parallel(f.fileno(), piece, entry.offset + self.pos) != take:
                raise self.reader._damaged(self.name, path, f"the file ends before the {size} bytes at offset "
                                           f"{entry.offset}: it is truncated")
            for start in range(0, take, PIECE_BYTES):  # the CRC in order, after the parallel read
                self.crc = crc32c(piece[start:start + PIECE_BYTES], self.crc)
            done += take
            self.pos += take
            if self.pos == size:
                if unmask_crc(entry.crc32c) != self.crc:
                    raise self.reader._damaged(self.name, path, "checksum mismatch")
                self.i, self.pos, self.crc = self.i + 1, 0, 0

    def finish(self):
        if self.i != len(self.segments):
            raise InvalidArgumentError(None, None, f"reading {self.name!r}: fewer bytes asked than stored")


# ---- writing ------------------------------------------------------------------------------------


def _c_order_pieces(value):
    """A value's C-order bytes as consecutive buffers: a numpy array in bounded pieces, a
    StoredValue chunk row by chunk row (never whole)."""
    if isinstance(value, StoredValue):
        chunks = value.chunks
        if not value.shape:
            yield _bytes(value.to_host())
            return
        if all(len(c) == 1 for c in chunks[1:]):  # chunks cut axis 0 only: blocks in order are C order
            for idx in block_indices(chunks):
                yield _bytes(value.cio.read(idx))
            return
        rows = list(zip(*[(i, s) for i, s in zip(block_indices(chunks), block_slices(chunks))]))
        by_row = {}
        for idx, slc in zip(*rows):
            by_row.setdefault(idx[0], []).append((idx, slc))
        for r in sorted(by_row):
            blocks = by_row[r]
            slab = np.empty((blocks[0][1][0].stop - blocks[0][1][0].start,) + value.shape[1:], dtype=value.dtype)
            for idx, slc in blocks:
                slab[(slice(None),) + slc[1:]] = value.cio.read(idx)
            yield _bytes(slab)
        return
    flat = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
    for a in range(0, len(flat), PIECE_BYTES):
        yield memoryview(flat[a:a + PIECE_BYTES])


def _bytes(block):
    block = np.ascontiguousarray(block)
    return memoryview(block.reshape(-1).view(np.uint8)) if block.size else b""


def _string_bytes(value):
    """(pieces to write, CRC) of a string tensor in TensorFlow's layout."""
    items = [s.encode() if isinstance(s, str) else bytes(s) for s in np.asarray(value, dtype=object).reshape(-1)]
    lengths, crc = bytearray(), 0
    for s in items:
        put_varint(lengths, len(s))
        crc = crc32c(struct.pack("<I", len(s)) if len(s) <= 0xFFFFFFFF else struct.pack("<Q", len(s)), crc)
    length_crc = struct.pack("<I", mask_crc(crc))
    crc = crc32c(length_crc, crc)
    for s in items:
        crc = crc32c(s, crc)
    return [bytes(lengths), length_crc] + items, crc  # the CRC covers the lengths as uint32, not varints


def _enum_of(name, value):
    dtype = np.dtype(value.dtype)
    if dtype.kind in "OSU":
        return _STRING
    try:
        return _ENUM[dtype.newbyteorder("<") if dtype.byteorder == "=" else dtype]
    except KeyError:
        raise InvalidArgumentError(None, None, f"write_tf_checkpoint: tensor {name!r} has dtype {dtype}, which "
                                   "TensorFlow checkpoints do not hold") from None


def write_tf_checkpoint(prefix, values, shards=None, block_size=256 << 10):
    """Writes `values` {name: numpy array, or StoredValue streamed chunk by chunk} as a TensorFlow
    V2 checkpoint at `prefix`; returns the files written (data shards, then the index).

    `shards`: lists of names, one data file each (default: one file). Atomic: every file is written
    under an owned temporary name, then the data files are renamed, the index last, so a reader
    never sees an index naming missing data. TensorFlow's layout: no alignment padding, an
    uncompressed index table."""
    prefix = os.fspath(prefix)
    names = sorted(values, key=lambda n: n.encode())
    shards = [sorted(s) for s in shards] if shards else [names]
    if sorted(n for s in shards for n in s) != sorted(names):
        raise ValueError("write_tf_checkpoint: `shards` must hold every name exactly once")
    entries, temps, finals = {}, [], []
    try:
        for shard_id, shard in enumerate(shards):
            final = data_filename(prefix, shard_id, len(shards))
            tmp = files.temp_path(final, "tmp")
            temps.append(tmp)
            finals.append(final)
            with open(tmp, "wb") as f:
                offset = 0
                for name in shard:
                    value = values[name]
                    if not isinstance(value, StoredValue):
                        value = np.asarray(value)
                    enum = _enum_of(name, value)
                    if enum == _STRING:
                        pieces, crc = _string_bytes(value)
                    else:
                        pieces, crc = _c_order_pieces(value), None
                    size = 0
                    for piece in pieces:
                        f.write(piece)
                        if enum != _STRING:
                            crc = crc32c(piece, crc or 0)
                        size += len(piece)
                    crc = crc or 0
                    entry = BundleEntryProto(dtype=enum, shard_id=shard_id, offset=offset, size=size,
                                             crc32c=mask_crc(crc))
                    for d in value.shape:
                        entry.shape.dim.add(size=int(d))
                    entries[name] = entry
                    offset += size
                f.flush()
                os.fsync(f.fileno())
        header = BundleHeaderProto(num_shards=len(shards), endianness=BundleHeaderProto.LITTLE)
        header.version.producer = 1
        items = [(b"", header.SerializeToString())]
        items += [(n.encode(), entries[n].SerializeToString()) for n in names]
        index = f"{prefix}.index"
        tmp = files.temp_path(index, "tmp")
        temps.append(tmp)
        finals.append(index)
        with open(tmp, "wb") as f:
            f.write(build_table(items, block_size=block_size))
            f.flush()
            os.fsync(f.fileno())
        for t, final in zip(temps, finals):  # the index last
            os.replace(t, final)
    except BaseException:
        for t in temps:
            files.remove(t)
        raise
    return finals

