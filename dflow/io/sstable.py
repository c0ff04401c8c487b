"""TensorFlow's sorted string table (LevelDB's table format), the `.index` file of its checkpoints.

Layout (tensorflow/core/lib/io/format.cc, block_builder.cc, table_builder.cc):
- data blocks of sorted entries `varint32 shared | varint32 unshared | varint32 value_len |
  key[shared:] | value`, the key prefix-compressed against the previous one except at restart
  points (every `restart_interval` entries), then the restart offsets (fixed32 each) and their
  count (fixed32);
- after each block a 1-byte compression type (0: none) and a masked CRC-32C (fixed32) of the
  block's bytes and that type byte;
- a metaindex block (empty: TensorFlow writes no filters), an index block holding, per data block,
  a key >= its last key mapped to its BlockHandle (varint64 offset, varint64 size);
- a 48-byte footer: the metaindex and index BlockHandles, zero padding to 40 bytes, and the magic
  number 0xdb4775248b80fb57 (fixed64).

`read_table` verifies every block's checksum; any damage is a DataLossError naming the file.
"""

from __future__ import annotations

import struct

import crc32c as _crc32c

from ..errors import DataLossError

__all__ = ["MAGIC", "mask_crc", "unmask_crc", "crc32c", "read_table", "build_table", "is_table"]

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
_MASK_DELTA = 0xA282EAD8
_NO_COMPRESSION = 0


def crc32c(data, value=0):
    """CRC-32C of `data` (any buffer), continuing from `value`."""
    return _crc32c.crc32c(data, value)


def mask_crc(crc):
    """TensorFlow's (and LevelDB's) masked CRC, stored in files that may hold CRCs themselves."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmask_crc(masked):
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def put_varint(out, value):
    """Appends `value` (unsigned) as a little-endian base-128 varint to bytearray `out`."""
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def get_varint(buf, pos):
    """(value, position after it) of the varint at `buf[pos]`; ValueError past the end."""
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


# ---- reading ------------------------------------------------------------------------------------


def is_table(data):
    """Whether `data` (bytes) ends with the table magic number."""
    return len(data) >= FOOTER_SIZE and struct.unpack_from("<Q", data, len(data) - 8)[0] == MAGIC


def _block(data, handle, path, what):
    """The contents of the block at `handle` (offset, size), its checksum verified."""
    offset, size = handle
    end = offset + size
    if offset < 0 or end + 5 > len(data):
        raise DataLossError(None, None, f"TensorFlow table {path}: the {what} at bytes {offset}..{end} lies past the "
                            f"end of the file ({len(data)} bytes): the file is truncated")
    kind = data[end]
    stored = struct.unpack_from("<I", data, end + 1)[0]
    if crc32c(memoryview(data)[offset:end + 1]) != unmask_crc(stored):
        raise DataLossError(None, None, f"TensorFlow table {path}: checksum mismatch in the {what} at byte "
                            f"{offset}: the file is damaged")
    if kind != _NO_COMPRESSION:
        raise DataLossError(None, None, f"TensorFlow table {path}: the {what} at byte {offset} is compressed "
                            f"(type {kind}); dflow reads uncompressed tables only, as TensorFlow writes checkpoints")
    return bytes(data[offset:end])


def _entries(block, path, what):
    """[(key, value)] of one block."""
    if len(block) < 4:
        raise DataLossError(None, None, f"TensorFlow table {path}: the {what} is too short")
    restarts = struct.unpack_from("<I", block, len(block) - 4)[0]
    limit = len(block) - 4 * (restarts + 1)
    if limit < 0:
        raise DataLossError(None, None, f"TensorFlow table {path}: the {what} claims {restarts} restart points")
    out, key, pos = [], b"", 0
    try:
        while pos < limit:
            shared, pos = get_varint(block, pos)
            unshared, pos = get_varint(block, pos)
            vlen, pos = get_varint(block, pos)
            if shared > len(key) or pos + unshared + vlen > limit:
                raise ValueError("entry past the block")
            key = key[:shared] + block[pos:pos + unshared]
            pos += unshared
            out.append((key, block[pos:pos + vlen]))
            pos += vlen
    except ValueError as e:
        raise DataLossError(None, None, f"TensorFlow table {path}: bad entry in the {what} ({e})") from None
    return out


def _handle(buf, pos=0):
    offset, pos = get_varint(buf, pos)
    size, pos = get_varint(buf, pos)
    return (offset, size), pos


def read_table(data, path):
    """[(key, value)] of a whole table held in `data` (bytes), in key order, every block verified.

    DataLossError naming `path` for a truncated or damaged table."""
    if len(data) < FOOTER_SIZE:
        raise DataLossError(None, None, f"TensorFlow table {path} has {len(data)} bytes, less than its "
                            f"{FOOTER_SIZE}-byte footer: the file is truncated")
    if not is_table(data):
        raise DataLossError(None, None, f"TensorFlow table {path}: no table magic number at its end: the file is "
                            "truncated or is not a TensorFlow checkpoint index")
    footer = data[len(data) - FOOTER_SIZE:]
    try:
        _, pos = _handle(footer)
        index, _ = _handle(footer, pos)
    except ValueError:
        raise DataLossError(None, None, f"TensorFlow table {path}: unreadable footer") from None
    out = []
    for n, (_, value) in enumerate(_entries(_block(data, index, path, "index block"), path, "index block")):
        try:
            handle, _ = _handle(value)
        except ValueError:
            raise DataLossError(None, None, f"TensorFlow table {path}: bad block handle in the index") from None
        what = f"data block {n}"
        out.extend(_entries(_block(data, handle, path, what), path, what))
    if any(a[0] >= b[0] for a, b in zip(out, out[1:])):
        raise DataLossError(None, None, f"TensorFlow table {path}: keys out of order: the file is damaged")
    return out


# ---- writing ------------------------------------------------------------------------------------


class _BlockBuilder:
    def __init__(self, restart_interval):
        self.interval = restart_interval
        self.buf = bytearray()
        self.restarts = [0]
        self.count = 0
        self.last = b""

    def add(self, key, value):
        shared = 0
        if self.count < self.interval:
            limit = min(len(key), len(self.last))
            while shared < limit and key[shared] == self.last[shared]:
                shared += 1
        else:
            self.restarts.append(len(self.buf))
            self.count = 0
        put_varint(self.buf, shared)
        put_varint(self.buf, len(key) - shared)
        put_varint(self.buf, len(value))
        self.buf += key[shared:]
        self.buf += value
        self.last = key
        self.count += 1

    def size(self):
        return len(self.buf) + 4 * len(self.restarts) + 4

    def finish(self):
        return bytes(self.buf) + struct.pack(f"<{len(self.restarts)}I", *self.restarts) + \
            struct.pack("<I", len(self.restarts))


def build_table(items, block_size=256 << 10, restart_interval=16):
    """The bytes of a table of `items` [(key bytes, value bytes)], which must be sorted by key
    (bytewise) without duplicates. TensorFlow's defaults: 256 KiB blocks, a restart every 16 keys."""
    out = bytearray()
    index = _BlockBuilder(1)

    def flush(block):
        contents = block.finish()
        handle = bytearray()
        put_varint(handle, len(out))
        put_varint(handle, len(contents))
        out.extend(contents)
        trailer = bytes([_NO_COMPRESSION])
        out.extend(trailer + struct.pack("<I", mask_crc(crc32c(trailer, crc32c(contents)))))
        return bytes(handle)

    block = _BlockBuilder(restart_interval)
    previous = None
    for key, value in items:
        if previous is not None and key <= previous:
            raise ValueError(f"build_table: keys not sorted or repeated at {key!r}")
        previous = key
        block.add(key, value)
        if block.size() >= block_size:
            index.add(key, flush(block))  # the block's last key separates it from the next
            block = _BlockBuilder(restart_interval)
    if block.count or not index.count:
        index.add(previous if previous is not None else b"", flush(block))
    meta = flush(_BlockBuilder(restart_interval))
    idx = flush(index)
    footer = (meta + idx).ljust(FOOTER_SIZE - 8, b"\0") + struct.pack("<Q", MAGIC)
    return bytes(out) + footer
