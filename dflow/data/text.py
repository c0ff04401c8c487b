"""`tf.data.TextLineDataset` and `tf.data.FixedLengthRecordDataset`: the lines, or the fixed-size
records, of files as scalar `string` elements (bytes), streamed through the file's read buffer
(`buffer_size`), never the whole file: an epoch over a large CSV holds one buffer and one line.

Both are TFRecordDataset's file reader (tfrecord.py) with another record format: the same file
names (a list, a string tensor, a Dataset of names), `compression_type` ("", "GZIP", "ZLIB") and
`num_parallel_reads`. A line is TF's: the bytes up to "\\n", without it and without a "\\r" before
it; the last line of a file needs no "\\n". Errors are TF1's: a missing file NotFoundError, a
corrupted compressed stream DataLossError naming the file, an uncompressed fixed-length file whose
body is not a whole number of records InvalidArgumentError before its first record.
"""

from __future__ import annotations

import os
import zlib

import numpy as np

from ..errors import DataLossError, InvalidArgumentError
from ..io.tfrecord import open_read
from .dataset import Dataset
from .tfrecord import TFRecordNode


def _stream(path, compression, reads):
    """`reads` (a generator over the open file object) with a broken compressed stream as TF's
    DataLossError naming the file."""
    try:
        yield from reads
    except (OSError, EOFError, zlib.error) as e:
        raise DataLossError(None, None, f"{path}: corrupted {compression} stream: {e}") from None


_BLOCK_BYTES = 1 << 20  # lines read at a time for a consumer that takes blocks (batch, shuffle)
_TEXT_BYTES = 4 << 20  # lines read at a time for a consumer that takes their text (csv_batches.py)


class TextBlock:
    """Whole lines of a file as read: `data` (bytes; every line ends with "\\n" but perhaps the
    file's last), `count` lines. `lines()`: them as an object array of bytes without their line
    ends (TF's lines); `text()`: them joined by "\\n" (the data without its last line end)."""

    __slots__ = ("data", "count", "_lines")

    def __init__(self, data):
        self.data = data
        self.count = int(np.count_nonzero(np.frombuffer(data, np.uint8) == 10)) + (not data.endswith(b"\n"))
        self._lines = None

    def text(self):
        return self.data[:-1] if self.data.endswith(b"\n") else self.data

    def lines(self):
        if self._lines is None:
            lines = self.text().split(b"\n")
            if b"\r" in self.data:  # a "\r" before a "\n" ends the line too
                ended = len(lines) if self.data.endswith(b"\n") else len(lines) - 1
                lines = [ln[:-1] if k < ended and ln.endswith(b"\r") else ln for k, ln in enumerate(lines)]
            block = np.empty(len(lines), dtype=object)
            block[:] = lines
            self._lines = block
        return self._lines

    def after(self, k):
        """The block without its first `k` lines (0 < k < count)."""
        at = -1
        for _ in range(k):
            at = self.data.index(b"\n", at + 1)
        return TextBlock(self.data[at + 1:])


_READ_BYTES = 1 << 18  # one read: a broken compressed stream loses at most this much before its error


def text_blocks(f, size):
    """The lines of the open file `f` as TextBlocks of about `size` bytes (or up to the end of a
    longer line). A read that fails (a broken compressed stream) raises after the whole lines read
    before it, as TF's line reader does."""
    pieces, held = [], 0
    while True:
        try:
            data = f.read(min(size, _READ_BYTES))
        except BaseException:
            whole = b"".join(pieces)
            cut = whole.rfind(b"\n") + 1
            if cut:
                yield TextBlock(whole[:cut])
            raise
        if data:
            pieces.append(data)
            held += len(data)
            if held < size or b"\n" not in data:  # (a long line: joined once its end comes)
                continue
        whole = b"".join(pieces)
        cut = whole.rfind(b"\n") + 1 if data else len(whole)
        if cut:
            yield TextBlock(whole[:cut])
        if not data:
            return
        pieces = [whole[cut:]] if cut < len(whole) else []
        held = len(whole) - cut


class TextLineNode(TFRecordNode):
    what = "TextLineDataset"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # one file at a time reads in blocks of lines (about 1 MB: bounded memory); several
        # files read in parallel interleave line by line (TF's order)
        self.row_blocks = self.text_blocks = self.parallel == 1

    def _read(self, name):
        path, f = open_read(name, self.compression, self.buffer_size)
        with f:
            yield from _stream(path, self.compression, self._lines(f))

    @staticmethod
    def _lines(f):
        for line in f:  # the file's buffered line iterator: one line held at a time
            if line.endswith(b"\n"):
                line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            yield line

    def iterate_blocks(self, ctx):
        for block in self._text_blocks(ctx, _BLOCK_BYTES):
            yield (block.lines(),)

    def iterate_text_blocks(self, ctx):
        yield from self._text_blocks(ctx, _TEXT_BYTES)

    def _text_blocks(self, ctx, size):
        for name in self._files(ctx):
            path, f = open_read(name, self.compression, self.buffer_size)
            with f:
                yield from _stream(path, self.compression, text_blocks(f, size))


class FixedLengthRecordNode(TFRecordNode):
    what = "FixedLengthRecordDataset"

    def __init__(self, filenames, record_bytes, header_bytes, footer_bytes, buffer_size, compression_type,
                 num_parallel_reads):
        super().__init__(filenames, compression_type, buffer_size, num_parallel_reads)
        self.record_bytes = int(record_bytes)
        self.header_bytes = int(header_bytes or 0)
        self.footer_bytes = int(footer_bytes or 0)
        if self.record_bytes <= 0:
            raise InvalidArgumentError(None, None, f"FixedLengthRecordDataset: record_bytes must be positive, got "
                                       f"{record_bytes}")
        if self.header_bytes < 0 or self.footer_bytes < 0:
            raise InvalidArgumentError(None, None, f"FixedLengthRecordDataset: header_bytes and footer_bytes must "
                                       f"be >= 0, got {header_bytes} and {footer_bytes}")

    def _read(self, name):
        path, f = open_read(name, self.compression, self.buffer_size)
        with f:
            if not self.compression:
                body = os.fstat(f.fileno()).st_size - self.header_bytes - self.footer_bytes
                if body % self.record_bytes:  # TF1 checks an uncompressed file's size before reading
                    raise InvalidArgumentError(
                        None, None, f"Excluding the header ({self.header_bytes} bytes) and footer "
                        f"({self.footer_bytes} bytes), input file \"{path}\" has body length {body} bytes, which is "
                        f"not an exact multiple of the record length ({self.record_bytes} bytes).")
            yield from _stream(path, self.compression, self._records_of(f, path))

    def _records_of(self, f, path):
        n, tail = self.record_bytes, self.footer_bytes
        head = f.read(self.header_bytes)
        if len(head) < self.header_bytes:
            return  # a file shorter than its header holds no records
        # a record is yielded once the next `footer_bytes` bytes are known to follow it
        pending = f.read(n + tail)
        while len(pending) == n + tail:
            yield pending[:n]
            more = f.read(n)
            pending = pending[n:] + more
        if len(pending) > tail:
            raise DataLossError(None, None, f"{path}: {len(pending) - tail} bytes at the end of the body are less than "
                                f"a record ({n} bytes)")


class TextLineDataset(Dataset):
    """The lines of text files (TF1's `tf.data.TextLineDataset(filenames, compression_type=None,
    buffer_size=None, num_parallel_reads=None)`): scalar `tf.string` elements without their line
    ends, file after file. `filenames`: a str or list of str, a string tensor of rank <= 1, or a
    Dataset of scalar strings. `compression_type`: None/"", "ZLIB" or "GZIP"; `buffer_size`: the
    read buffer in bytes. NotFoundError for a missing file, DataLossError for a corrupted stream."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        super().__init__(TextLineNode(filenames, compression_type, buffer_size, num_parallel_reads))


class FixedLengthRecordDataset(Dataset):
    """The records of `record_bytes` bytes of binary files, after `header_bytes` and before
    `footer_bytes` (TF1's `tf.data.FixedLengthRecordDataset(filenames, record_bytes, header_bytes=None,
    footer_bytes=None, buffer_size=None, compression_type=None, num_parallel_reads=None)`), as scalar
    `tf.string` elements. InvalidArgumentError for an uncompressed file whose body is not a whole
    number of records; DataLossError for a compressed one that ends inside a record."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None, buffer_size=None,
                 compression_type=None, num_parallel_reads=None, name=None):
        super().__init__(FixedLengthRecordNode(filenames, record_bytes, header_bytes, footer_bytes, buffer_size,
                                               compression_type, num_parallel_reads))
