"""TFRecord files: TF1's `tf.python_io` (`TFRecordWriter`, `tf_record_iterator`, `TFRecordOptions`,
`TFRecordCompressionType`) and the record stream `tf.data.TFRecordDataset` reads (data/tfrecord.py).

A TFRecord file is a sequence of records, each `uint64 length | uint32 masked crc32c(length) |
data | uint32 masked crc32c(data)` (little-endian), the whole file optionally compressed as one
GZIP or ZLIB stream. The checksums come from the C `crc32c` extension the `tfrecord` package uses
(~4 GB/s); tensorboard's record reader and writer frame records the same way but checksum in pure
Python (~3 MB/s) and read no compressed files, and the `tfrecord` package's reader checks no
checksums and reads no ZLIB, so the framing (four fields) is written here, over file objects from
`gzip` and `zlib`. Records are streamed: a reader holds one record and its read
buffer. Errors are TF1's: a missing file is NotFoundError, a bad checksum or a record cut short
DataLossError naming the file and offset; a file that ends inside a record header ends the stream
(as TF 2.21's reader).
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import zlib

import crc32c  # the C CRC-32C the `tfrecord` package depends on (and checksums with)

from ..errors import DataLossError, FailedPreconditionError, InvalidArgumentError, NotFoundError

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]

_HEADER = struct.Struct("<Q")
_CRC = struct.Struct("<I")


def _masked_crc(data):
    """The little-endian masked CRC-32C of `data` (TFRecord's checksum; the `tfrecord` package's
    `TFRecordWriter.masked_crc`, which spends most of a call in numpy scalar conversions)."""
    crc = crc32c.crc32c(data)
    return _CRC.pack((((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF)

DEFAULT_BUFFER = 256 * 1024  # TF's default read buffer of TFRecordDataset


class TFRecordCompressionType:
    """The compression of a TFRecord file (TF1's enum values)."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_BY_ENUM = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
            TFRecordCompressionType.GZIP: "GZIP"}


def compression_name(compression_type, what="compression_type"):
    """"" / "ZLIB" / "GZIP" from None, a string, a TFRecordCompressionType value or TFRecordOptions;
    ValueError for another."""
    if isinstance(compression_type, TFRecordOptions):
        compression_type = compression_type.compression_type
    if compression_type is None:
        return ""
    if isinstance(compression_type, bytes):
        compression_type = compression_type.decode()
    if isinstance(compression_type, int) and not isinstance(compression_type, bool) and compression_type in _BY_ENUM:
        return _BY_ENUM[compression_type]
    if isinstance(compression_type, str) and compression_type.upper() in ("", "ZLIB", "GZIP"):
        return compression_type.upper()
    raise ValueError(f"{what} must be None, '', 'ZLIB' or 'GZIP' (or a TFRecordCompressionType), "
                     f"got {compression_type!r}")


class TFRecordOptions:
    """Options of a TFRecord writer or iterator (TF1's). Only `compression_type` and
    `compression_level` change what dflow writes; the other zlib tuning knobs are accepted and kept."""

    compression_type_map = dict(_BY_ENUM)

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        self.compression_type = compression_name(compression_type)
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """"" / "ZLIB" / "GZIP" for TFRecordOptions, a string, an enum value or None."""
        return compression_name(options, "options")

    def __repr__(self):
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


# ---- compressed streams --------------------------------------------------------------------------
class _ZlibReader(io.RawIOBase):
    """A readable file object over a ZLIB-compressed file (TF's ZLIB: one zlib stream)."""

    def __init__(self, raw, chunk):
        self._raw, self._chunk = raw, chunk
        self._z = zlib.decompressobj()
        self._pending = b""
        self._started = False  # an empty file is an empty stream

    def readable(self):
        return True

    def readinto(self, b):
        while not self._pending:
            if self._z.eof:
                return 0
            data = self._z.unconsumed_tail or self._raw.read(self._chunk)
            if not data:
                if self._started:
                    raise EOFError("the ZLIB stream ended before its end marker")
                return 0
            self._started = True
            try:
                self._pending = self._z.decompress(data, self._chunk)
            except zlib.error as e:
                raise OSError(f"not a ZLIB stream: {e}") from None
        n = min(len(b), len(self._pending))
        b[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self):
        self._raw.close()
        super().close()


class _ZlibWriter(io.RawIOBase):
    """A writable file object compressing into a ZLIB file."""

    def __init__(self, raw, level):
        self._raw = raw
        self._z = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION if level is None else int(level))

    def writable(self):
        return True

    def write(self, b):
        self._raw.write(self._z.compress(b))
        return len(b)

    def flush(self):
        if self._z is not None:
            self._raw.write(self._z.flush(zlib.Z_SYNC_FLUSH))
            self._raw.flush()

    def close(self):
        if self._z is not None:
            self._raw.write(self._z.flush())
            self._z = None
            self._raw.close()
        super().close()


def open_read(path, compression, buffer_size):
    """(path as str, a readable binary file object over the file's uncompressed bytes) for "",
    "GZIP" or "ZLIB"; TF1's errors for a file that cannot be opened (TFRecord and text files)."""
    path = os.fspath(path.decode() if isinstance(path, bytes) else path)
    try:
        raw = open(path, "rb", buffering=buffer_size or DEFAULT_BUFFER)
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise FailedPreconditionError(None, None, f"{path}; Is a directory") from None
    except PermissionError:
        raise InvalidArgumentError(None, None, f"{path}; Permission denied") from None
    if compression == "GZIP":
        return path, gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "ZLIB":
        return path, io.BufferedReader(_ZlibReader(raw, buffer_size or DEFAULT_BUFFER))
    return path, raw


def read_records(path, compression_type=None, buffer_size=None):
    """The records of one TFRecord file, as bytes, streamed (a generator; the file is closed when it
    ends or is closed). NotFoundError for a missing file, DataLossError for a corrupted one."""
    compression = compression_name(compression_type)
    path, f = open_read(path, compression, buffer_size)
    offset = 0
    try:
        while True:
            try:
                header = f.read(12)
            except (OSError, EOFError, zlib.error) as e:
                raise DataLossError(None, None, f"{path}: corrupted {compression} stream near record offset "
                                    f"{offset}: {e}") from None
            if len(header) < 12:
                return  # end of file (a partial header too, as TF 2.21)
            if _masked_crc(header[:8]) != header[8:]:
                raise DataLossError(None, None, f"corrupted record at {offset} (Is this even a TFRecord file?) "
                                    f"in {path}")
            (length,) = _HEADER.unpack_from(header)
            try:
                body = f.read(length + 4)
            except (OSError, EOFError, zlib.error) as e:
                raise DataLossError(None, None, f"{path}: corrupted {compression} stream in the record at "
                                    f"{offset}: {e}") from None
            if len(body) < length + 4:
                raise DataLossError(None, None, f"truncated record at {offset} in {path}")
            data = body[:length]
            if _masked_crc(data) != body[length:]:
                raise DataLossError(None, None, f"corrupted record at {offset} in {path}")
            offset += 16 + length
            yield data
    finally:
        f.close()


def tf_record_iterator(path, options=None):
    """The records of the TFRecord file `path` as bytes (TF1's `tf.python_io.tf_record_iterator`);
    `options`: TFRecordOptions, a compression name or a TFRecordCompressionType value."""
    return read_records(path, compression_name(options, "options"))


class TFRecordWriter:
    """Writes records (bytes; str is encoded as UTF-8) to a TFRecord file (TF1's
    `tf.python_io.TFRecordWriter(path, options=None)`); a context manager. `options`:
    TFRecordOptions, "", "ZLIB", "GZIP" or a TFRecordCompressionType value."""

    def __init__(self, path, options=None):
        self._options = options if isinstance(options, TFRecordOptions) else TFRecordOptions(options)
        compression = self._options.compression_type
        level = self._options.compression_level
        path = os.fspath(path.decode() if isinstance(path, bytes) else path)
        try:
            raw = open(path, "wb")
        except FileNotFoundError:
            raise NotFoundError(None, None, f"{path}; No such file or directory") from None
        if compression == "GZIP":
            self._file = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9 if level in (None, -1) else int(level))
            self._raw = raw  # GzipFile does not close a file object it was given
        elif compression == "ZLIB":
            self._file, self._raw = _ZlibWriter(raw, level), None
        else:
            self._file, self._raw = raw, None
        self.path = path

    def write(self, record):
        """Appends one record (bytes or str)."""
        if self._file is None:
            raise FailedPreconditionError(None, None, "Writer is closed.")
        if isinstance(record, str):
            record = record.encode("utf-8")
        elif isinstance(record, (bytearray, memoryview)):
            record = bytes(record)
        elif not isinstance(record, bytes):
            raise TypeError(f"TFRecordWriter.write: a record must be bytes or str, got {type(record).__name__}")
        header = _HEADER.pack(len(record))
        self._file.write(header + _masked_crc(header) + record + _masked_crc(record))

    def flush(self):
        if self._file is None:
            raise FailedPreconditionError(None, None, "Writer is closed.")
        self._file.flush()

    def close(self):
        """Flushes and closes the file (a second close does nothing)."""
        if self._file is not None:
            self._file.close()
            if self._raw is not None:
                self._raw.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
