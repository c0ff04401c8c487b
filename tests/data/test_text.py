"""TextLineDataset, FixedLengthRecordDataset, list_files + interleave over files, and the
`tf.data.experimental` / `tf.contrib.data` transformations.

Expected values are TF's, from tensorflow 2.21.0 `tensorflow.compat.v1` (graph mode) on the same
file bytes, hard-coded (the error wordings too).
"""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest

import dflow as tf


def _all(dataset, feed=None):
    it = tf.data.make_initializable_iterator(dataset) if feed else tf.data.make_one_shot_iterator(dataset)
    nxt = it.get_next()
    out = []
    with tf.Session() as sess:
        if feed:
            sess.run(it.initializer, feed)
        while True:
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                return out


@pytest.fixture
def files(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"h1,h2\r\n1,2\n\n3,4")
    (tmp_path / "e.txt").write_bytes(b"")
    with gzip.open(tmp_path / "a.gz", "wb") as f:
        f.write(b"x\ny\n")
    (tmp_path / "a.z").write_bytes(zlib.compress(b"p\nq"))
    (tmp_path / "r.bin").write_bytes(b"HH" + b"abcdefgh" + b"ijkl" + b"F")
    (tmp_path / "odd.bin").write_bytes(b"HH" + b"abcdefgh" + b"ijk" + b"F")
    return tmp_path


def test_text_lines_as_tf(files):
    # TF: [b'h1,h2', b'1,2', b'', b'3,4'] ("\r\n" and "\n" both end a line; the last needs none)
    ds = tf.data.TextLineDataset([str(files / "a.txt"), str(files / "e.txt")])
    assert ds.output_types == tf.string and ds.output_shapes.as_list() == []
    assert _all(ds) == [b"h1,h2", b"1,2", b"", b"3,4"]
    assert _all(tf.data.TextLineDataset(str(files / "a.gz"), compression_type="GZIP")) == [b"x", b"y"]
    assert _all(tf.data.TextLineDataset(str(files / "a.z"), compression_type="ZLIB", buffer_size=2)) == [b"p", b"q"]


def test_text_lines_skip_map_and_placeholder_names(files):
    names = tf.placeholder(tf.string, [None])
    ds = tf.data.TextLineDataset(names).skip(1).filter(lambda l: tf.strings.length(l) > 0)
    assert _all(ds, {names: [str(files / "a.txt")] * 2}) == [b"1,2", b"3,4", b"h1,h2", b"1,2", b"3,4"]


def test_text_errors(files):
    with pytest.raises(tf.errors.NotFoundError, match="nope.txt; No such file or directory"):
        _all(tf.data.TextLineDataset(str(files / "nope.txt")))
    with pytest.raises(tf.errors.DataLossError, match="a.txt"):  # TF: inflate() failed ... incorrect header check
        _all(tf.data.TextLineDataset(str(files / "a.txt"), compression_type="GZIP"))
    with pytest.raises(ValueError, match="compression_type"):
        tf.data.TextLineDataset("x", compression_type="BZ2")


def test_fixed_length_records(files):
    ds = tf.data.FixedLengthRecordDataset(str(files / "r.bin"), 4, header_bytes=2, footer_bytes=1)
    assert _all(ds) == [b"abcd", b"efgh", b"ijkl"]
    assert _all(tf.data.FixedLengthRecordDataset(str(files / "r.bin"), 15)) == [b"HHabcdefghijklF"]
    (files / "r.gz").write_bytes(gzip.compress((files / "r.bin").read_bytes()))
    ds = tf.data.FixedLengthRecordDataset(str(files / "r.gz"), 6, 2, 1, compression_type="GZIP", buffer_size=3)
    assert _all(ds) == [b"abcdef", b"ghijkl"]


def test_fixed_length_errors_as_tf(files):
    # TF's message, word for word
    with pytest.raises(tf.errors.InvalidArgumentError, match=r'Excluding the header \(2 bytes\) and footer \(1 bytes\), '
                       r'input file ".*odd.bin" has body length 11 bytes, which is not an exact multiple of the '
                       r"record length \(4 bytes\)\."):
        _all(tf.data.FixedLengthRecordDataset(str(files / "odd.bin"), 4, header_bytes=2, footer_bytes=1))
    (files / "odd.gz").write_bytes(gzip.compress((files / "odd.bin").read_bytes()))
    with pytest.raises(tf.errors.DataLossError, match="odd.gz"):
        _all(tf.data.FixedLengthRecordDataset(str(files / "odd.gz"), 4, 2, 1, compression_type="GZIP"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="record_bytes"):
        tf.data.FixedLengthRecordDataset("x", 0)


def _write_shards(tmp_path, n=3, rows=4):
    for k in range(n):
        (tmp_path / f"part-{k}.csv").write_text("".join(f"{k},{i}\n" for i in range(rows)))
    return str(tmp_path / "part-*.csv")


def test_list_files_interleave_lines(tmp_path):
    pattern = _write_shards(tmp_path)
    files = tf.data.Dataset.list_files(pattern, shuffle=False)
    ds = files.interleave(tf.data.TextLineDataset, cycle_length=2, block_length=2)
    # TF's interleave order: two files open, two lines from each in turn, the third file in the freed slot
    assert _all(ds) == [b"0,0", b"0,1", b"1,0", b"1,1", b"0,2", b"0,3", b"1,2", b"1,3", b"2,0", b"2,1", b"2,2",
                        b"2,3"]
    by_reader = tf.data.TextLineDataset(files, num_parallel_reads=3)
    assert _all(by_reader)[:3] == [b"0,0", b"1,0", b"2,0"]
    shuffled = sorted(_all(tf.data.Dataset.list_files(pattern, seed=4)))
    assert shuffled == sorted(str(tmp_path / f"part-{k}.csv").encode() for k in range(3))


def test_experimental_and_contrib_transformations(tmp_path):
    pattern = _write_shards(tmp_path, n=2, rows=3)
    files = tf.data.Dataset.list_files(pattern, shuffle=False)
    for parallel_interleave in (tf.data.experimental.parallel_interleave, tf.contrib.data.parallel_interleave):
        ds = files.apply(parallel_interleave(tf.data.TextLineDataset, cycle_length=2))
        assert _all(ds) == [b"0,0", b"1,0", b"0,1", b"1,1", b"0,2", b"1,2"]
    ds = tf.data.Dataset.range(5).apply(tf.data.experimental.map_and_batch(lambda x: x * 2, 2))
    assert [v.tolist() for v in _all(ds)] == [[0, 2], [4, 6], [8]]
    ds = tf.data.Dataset.range(5).apply(tf.contrib.data.map_and_batch(lambda x: x * 2, 2, drop_remainder=True))
    assert [v.tolist() for v in _all(ds)] == [[0, 2], [4, 6]]
    ds = tf.data.Dataset.range(5).apply(tf.contrib.data.batch_and_drop_remainder(2))
    assert [v.tolist() for v in _all(ds)] == [[0, 1], [2, 3]]
    ds = tf.data.Dataset.range(1, 4).map(lambda n: tf.fill([n], n)).apply(
        tf.contrib.data.padded_batch_and_drop_remainder(2, [3]))
    assert [v.tolist() for v in _all(ds)] == [[[1, 0, 0], [2, 2, 0]]]
    ds = tf.data.Dataset.range(4).apply(tf.contrib.data.shuffle_and_repeat(4, count=2, seed=1))
    out = [int(v) for v in _all(ds)]
    assert sorted(out[:4]) == [0, 1, 2, 3] and sorted(out[4:]) == [0, 1, 2, 3]
    ds = tf.data.Dataset.from_tensor_slices(np.array([[1, 2], [3, 4]])).apply(tf.data.experimental.unbatch())
    assert [int(v) for v in _all(ds)] == [1, 2, 3, 4]
    ds = tf.data.Dataset.range(3, 5).apply(tf.data.experimental.enumerate_dataset(1))
    assert [(int(i), int(v)) for i, v in _all(ds)] == [(1, 3), (2, 4)]
    with pytest.raises(ValueError, match="mutually exclusive"):
        tf.data.experimental.map_and_batch(abs, 2, num_parallel_batches=1, num_parallel_calls=1)


def test_an_epoch_over_a_large_text_file_streams(tmp_path):
    """Lines are read through the file's buffer: the reader never holds the whole file."""
    path = tmp_path / "big.csv"
    with open(path, "w") as f:
        for i in range(20000):
            f.write(f"{i},{i * 0.5},{'x' * 40}\n")
    node = tf.data.TextLineDataset(str(path), buffer_size=4096)._node
    lines = node._read(str(path))
    first = next(lines)
    assert first == b"0,0.0," + b"x" * 40
    assert node.held_bytes() == 4096
    assert sum(1 for _ in lines) == 19999


@pytest.mark.parametrize("skip", [0, 1, 3, 10])
def test_batches_read_lines_in_blocks_as_line_by_line(files, monkeypatch, skip):
    """batch (and skip before it) take the lines in blocks; the batches equal line-by-line
    reading's, across files, line ends and block boundaries (blocks of a few bytes here)."""
    from dflow.data import text

    monkeypatch.setattr(text, "_BLOCK_BYTES", 4)
    paths = [str(files / "a.txt"), str(files / "e.txt"), str(files / "a.txt")]
    lines = [b"h1,h2", b"1,2", b"", b"3,4"] * 2
    for compression, names in ((None, paths), ("GZIP", [str(files / "a.gz")])):
        ds = tf.data.TextLineDataset(names, compression_type=compression)
        assert ds._node.row_blocks
        want = (lines if compression is None else [b"x", b"y"])[skip:]
        got = [list(b) for b in _all(ds.skip(skip).batch(3))]
        assert got == [want[i:i + 3] for i in range(0, len(want), 3)]
