"""`TextLineDataset(...).batch(B).map(decode_csv ...)` decoded a text block at a time
(dflow/data/csv_batches.py): the elements and errors are the unfused pipeline's, the same
pipeline over the same lines from `from_tensor_slices` (never fused), whatever the block and
batch boundaries."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import dflow as tf
from dflow.data import csv_batches, text
from dflow.kernels import csv_ops


def _run(dataset):
    """The elements, an error as ("error", type, message), until the end."""
    nxt = tf.data.make_one_shot_iterator(dataset).get_next()
    out = []
    with tf.Session() as sess:
        while True:
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                return out
            except tf.errors.OpError as e:
                out.append(("error", type(e).__name__, e.message.splitlines()[0]))  # (not the node's name)


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, tuple) and x and isinstance(x[0], str):
            assert x == y
            continue
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)
            assert np.asarray(u).dtype == np.asarray(v).dtype


DEFAULTS = [[0.0], [0.0], [0.0], [0]]


def _parse(lines):
    cols = tf.decode_csv(lines, record_defaults=DEFAULTS)
    return tf.stack(cols[:3], axis=1), cols[3] * 2


def _lines(path):
    """TF's lines of the file."""
    data = open(path, "rb").read()
    lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in data.split(b"\n")]
    return lines[:-1] if data.endswith(b"\n") else lines


@pytest.fixture
def counted(monkeypatch):
    """Small text blocks (batches straddle them) and a count of the one-pass parses that worked."""
    monkeypatch.setattr(text, "_TEXT_BYTES", 300)
    calls = []

    def decode_text(*args, **kwargs):
        out = csv_ops.decode_text(*args, **kwargs)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(csv_batches, "decode_text", decode_text)
    return calls


def _csv(path, rows, bad=None):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, 3))
    y = rng.integers(0, 3, rows)
    lines = ["a,b,c,label"] + [f"{a:.6f},{b:.6f},{c:.6f},{k}" for (a, b, c), k in zip(x, y)]
    for i, line in (bad or {}).items():
        lines[i] = line
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("batch,drop", [(7, False), (64, False), (7, True), (1000, False)])
def test_batches_equal_the_unfused_pipelines(tmp_path, counted, batch, drop):
    path = _csv(tmp_path / "d.csv", 200)
    fused = tf.data.TextLineDataset(path).skip(1).batch(batch, drop_remainder=drop).map(_parse)
    plain = tf.data.Dataset.from_tensor_slices(_lines(path)).skip(1).batch(batch, drop_remainder=drop).map(_parse)
    got = _run(fused)
    _same(got, _run(plain))
    assert counted and all(counted)  # every block parsed in one pass
    assert got[0][0].dtype == np.float32 and got[0][1].dtype == np.int32


def test_repeat_skip_and_several_files(tmp_path, counted):
    """(b's header line: an error for its batch, in each epoch.)"""
    a, b = _csv(tmp_path / "a.csv", 50), _csv(tmp_path / "b.csv", 31)
    fused = tf.data.TextLineDataset([a, b]).skip(3).repeat(2).batch(16).map(_parse)
    plain = tf.data.Dataset.from_tensor_slices(_lines(a) + _lines(b)).skip(3).repeat(2).batch(16).map(_parse)
    got = _run(fused)
    _same(got, _run(plain))
    assert sum(1 for e in got if isinstance(e[0], str)) == 2 and any(counted)


@pytest.mark.parametrize("bad", ["0.1,x,0.3,1", "0.1,0.2,0.3", "0.1,,0.3,1", "0.1,0.2,0.3,1.0", '"0.1",0.2,0.3,1',
                                 "0.1,0.2,0.3,1,5", "", "0.1,0.2,0.3,99999999999", "0.1, 0.2,0.3,1",
                                 "0.1,0.2,0.3,1\r"])
def test_a_line_the_one_pass_parser_refuses_is_decoded_as_unfused(tmp_path, counted, bad):
    """Its batch is made from its lines through decode_csv (the value, or the error naming the
    record in the batch, for that batch only); the other batches as before."""
    path = _csv(tmp_path / "d.csv", 120, bad={57: bad})
    fused = tf.data.TextLineDataset(path).skip(1).batch(10).map(_parse)
    plain = tf.data.Dataset.from_tensor_slices(_lines(path)).skip(1).batch(10).map(_parse)
    got = _run(fused)
    _same(got, _run(plain))
    assert not all(counted) and any(counted)


def test_the_first_error_of_a_bad_batch_in_tf1_words(tmp_path, counted):
    path = _csv(tmp_path / "d.csv", 40, bad={13: "0.1,x,0.3,1"})
    got = _run(tf.data.TextLineDataset(path).skip(1).batch(10).map(_parse))
    assert len(got) == 4 and got[1][0] == "error"
    assert got[1][1] == "InvalidArgumentError" and "Field 1 in record 2 is not a valid float: x" in got[1][2]


def test_missing_values_quotes_and_strings_are_not_taken(tmp_path, counted):
    """Defaults, na_value, select_cols and string columns keep decode_csv's own paths."""
    path = tmp_path / "q.csv"
    path.write_bytes(b'1,"a b",,x\n2,"c""d",3,NA\n' * 20)
    defaults = [[0], [""], [-1.0], ["z"]]

    def parse(lines):
        return tuple(tf.decode_csv(lines, defaults, na_value="NA"))

    fused = tf.data.TextLineDataset(str(path)).batch(6).map(parse)
    plain = tf.data.Dataset.from_tensor_slices(_lines(str(path))).batch(6).map(parse)
    _same(_run(fused), _run(plain))
    assert not any(counted)


def test_a_function_that_also_uses_the_lines_is_not_fused(tmp_path, counted):
    path = _csv(tmp_path / "d.csv", 30)

    def parse(lines):
        return _parse(lines) + (tf.strings.length(lines),)

    fused = tf.data.TextLineDataset(path).skip(1).batch(8).map(parse)
    plain = tf.data.Dataset.from_tensor_slices(_lines(path)).skip(1).batch(8).map(parse)
    _same(_run(fused), _run(plain))
    assert not counted


def test_text_blocks_are_the_files_lines(tmp_path, monkeypatch):
    """TextBlock.lines over blocks of a few bytes: TF's lines ("\\r\\n" and "\\n" end a line, a
    lone "\\r" stays, the last line needs no end), counted right, skip inside a block."""
    data = b"a\r\nb\rc\n\n\r\nd\r"
    (tmp_path / "t.txt").write_bytes(data)
    want = [b"a", b"b\rc", b"", b"", b"d\r"]
    for size in (1, 2, 3, 5, 100):
        with open(tmp_path / "t.txt", "rb") as f:
            blocks = list(text.text_blocks(f, size))
        assert b"".join(b.data for b in blocks) == data
        assert [ln for b in blocks for ln in b.lines()] == want
        assert sum(b.count for b in blocks) == len(want)
    block = text.TextBlock(data)
    assert list(block.after(2).lines()) == want[2:] and block.after(2).count == 3


COLUMNS = ["a", "b", "c", "label"]


def _parse_line(line):
    """TF1's estimator input function: a dict of the columns and the label."""
    features = dict(zip(COLUMNS, tf.decode_csv(line, record_defaults=DEFAULTS)))
    return features, features.pop("label")


def _rows(got):
    """Elements with their dicts as (key, value) lists (comparable)."""
    return [e if isinstance(e[0], str) else tuple(sorted(e[0].items())) + (("label", e[1]),) for e in got]


def _same_rows(a, b):
    a, b = _rows(a), _rows(b)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x[0], str):
            assert x == y
            continue
        for (k, u), (j, v) in zip(x, y):
            assert k == j
            np.testing.assert_array_equal(u, v)
            assert u.dtype == v.dtype


@pytest.mark.parametrize("batch,drop", [(7, False), (64, True), (1000, False)])
def test_map_then_batch_equals_the_unfused_pipeline(tmp_path, counted, batch, drop):
    path = _csv(tmp_path / "d.csv", 200)
    fused = tf.data.TextLineDataset(path).skip(1).map(_parse_line).batch(batch, drop_remainder=drop)
    plain = tf.data.Dataset.from_tensor_slices(_lines(path)).skip(1).map(_parse_line).batch(batch, drop_remainder=drop)
    got = _run(fused)
    _same_rows(got, _run(plain))
    assert counted and all(counted)
    assert got[0][0]["a"].dtype == np.float32 and got[0][1].dtype == np.int32


@pytest.mark.parametrize("bad", ["0.1,x,0.3,1", "0.1,0.2,0.3", "0.1,,0.3,1", '"0.1",0.2,0.3,1', "",
                                 "0.1,0.2,0.3,1\r"])
def test_map_then_batch_a_bad_line_fails_its_batch_and_the_next_batch_starts_after_it(tmp_path, counted, bad):
    """TF1: the error of the line's element for the batch being gathered (its rows dropped),
    the next batch from the line after; lines decode_csv takes otherwise (quotes, defaults) as
    their values."""
    path = _csv(tmp_path / "d.csv", 120, bad={57: bad, 90: bad})
    fused = tf.data.TextLineDataset(path).skip(1).map(_parse_line).batch(10)
    plain = tf.data.Dataset.from_tensor_slices(_lines(path)).skip(1).map(_parse_line).batch(10)
    got = _run(fused)
    _same_rows(got, _run(plain))
    assert not all(counted) and any(counted)


def test_map_then_batch_strings_quotes_and_missing_values(tmp_path, counted):
    path = tmp_path / "q.csv"
    path.write_bytes(b'1,"a b",,x\n2,"c""d",3,NA\n' * 20 + b"3,x,1,2,5\n" + b'4,"",,y\n' * 7)
    defaults = [[0], [""], [-1.0], ["z"]]

    def parse(line):
        cols = tf.decode_csv(line, defaults, na_value="NA")
        return {"n": cols[0], "s": cols[1], "f": cols[2]}, cols[3]

    fused = tf.data.TextLineDataset(str(path)).map(parse).batch(6)
    plain = tf.data.Dataset.from_tensor_slices(_lines(str(path))).map(parse).batch(6)
    got = _run(fused)
    _same_rows(got, _run(plain))
    assert any(isinstance(e[0], str) for e in got) and not any(counted)


def test_map_then_batch_with_more_than_decoding_is_not_fused(tmp_path, counted):
    path = _csv(tmp_path / "d.csv", 30)

    def parse(line):
        features, label = _parse_line(line)
        return features, label + 1

    fused = tf.data.TextLineDataset(path).skip(1).map(parse).batch(8)
    plain = tf.data.Dataset.from_tensor_slices(_lines(path)).skip(1).map(parse).batch(8)
    _same_rows(_run(fused), _run(plain))
    assert not counted


@pytest.mark.parametrize("bad", [None, "0.1,x,0.3,1", '"0.1",0.2,0.3,1'])
def test_map_then_shuffle_repeat_and_batch(tmp_path, counted, bad):
    """TF1's estimator input (map, shuffle, repeat, batch): the mapped lines are decoded a block
    at a time, then go one by one through the stages after the map, as unfused."""
    path = _csv(tmp_path / "d.csv", 150, bad={40: bad} if bad else None)

    def pipeline(lines):
        return lines.skip(1).map(_parse_line).shuffle(50, seed=3).repeat(2).batch(16)

    got = _run(pipeline(tf.data.TextLineDataset(path)))
    _same_rows(got, _run(pipeline(tf.data.Dataset.from_tensor_slices(_lines(path)))))
    assert counted and all(counted) == (bad is None)
    elements = _run(tf.data.TextLineDataset(path).skip(1).map(_parse_line))
    _same_rows(elements, _run(tf.data.Dataset.from_tensor_slices(_lines(path)).skip(1).map(_parse_line)))


def test_a_long_line_and_a_broken_compressed_stream(tmp_path, monkeypatch):
    """A line longer than a block ends its block; a broken GZIP stream gives the whole
    lines before the break (reads of _READ_BYTES), then TF1's DataLossError naming the file."""
    monkeypatch.setattr(text, "_READ_BYTES", 64)
    long = b"9" * 1000
    (tmp_path / "l.txt").write_bytes(b"1\n" + long + b"\n2")
    with open(tmp_path / "l.txt", "rb") as f:
        assert [list(b.lines()) for b in text.text_blocks(f, 100)] == [[b"1", long], [b"2"]]
    data = b"".join(b"%d.5,%d\n" % (i, i) for i in range(20000))
    z = gzip.compress(data)
    (tmp_path / "t.gz").write_bytes(z[:len(z) // 2])
    for order in ("batch-map", "map-batch"):
        ds = tf.data.TextLineDataset(str(tmp_path / "t.gz"), compression_type="GZIP")

        def parse(lines):
            return tuple(tf.decode_csv(lines, [[0.0], [0]]))

        ds = ds.batch(100).map(parse) if order == "batch-map" else ds.map(parse).batch(100)
        got = _run(ds)
        assert got[-1][:2] == ("error", "DataLossError") and "t.gz: corrupted GZIP stream" in got[-1][2]
        assert len(got) > 20 and all(len(b[1]) == 100 for b in got[:-1])
        np.testing.assert_array_equal(np.concatenate([b[1] for b in got[:-1]]), np.arange(100 * (len(got) - 1)))
