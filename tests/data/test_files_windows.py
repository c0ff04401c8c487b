"""`Dataset.list_files` and `Dataset.window` against Python references over small data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf


def elements(ds, sess=None):
    nxt = ds.make_one_shot_iterator().get_next()
    out = []
    own = sess is None
    sess = sess or tf.Session()
    try:
        while True:
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                return out
    finally:
        if own:
            sess.close()


@pytest.fixture
def files(tmp_path):
    for name in ["b/1.txt", "a/2.txt", "a/1.txt", "b/0.csv", "c.txt"]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(name)
    return tmp_path


# ---- list_files ------------------------------------------------------------------------------------
def test_list_files_sorted_matches_of_several_patterns(files):
    ds = tf.data.Dataset.list_files([str(files / "b/*"), str(files / "a/*"), str(files / "a/1*")], shuffle=False)
    assert ds.output_types == tf.string and ds.output_shapes.as_list() == []
    # TF 2.20 (compat.v1): all matches sorted together, duplicates kept
    want = sorted([str(files / p) for p in ["b/1.txt", "b/0.csv", "a/2.txt", "a/1.txt", "a/1.txt"]])
    assert elements(ds) == [w.encode() for w in want]


def test_list_files_shuffles_by_default_with_seed_rules(files):
    pattern = str(files / "*" / "*")
    want = sorted(str(p).encode() for p in files.glob("*/*"))
    first = elements(tf.data.Dataset.list_files(pattern, seed=7))
    assert sorted(first) == want
    assert elements(tf.data.Dataset.list_files(pattern, seed=7)) == first  # same seed, same order
    epochs = elements(tf.data.Dataset.list_files(pattern, seed=7).repeat(6))
    assert all(sorted(epochs[k:k + 4]) == want for k in range(0, 24, 4))
    assert len({tuple(epochs[k:k + 4]) for k in range(0, 24, 4)}) > 1  # reshuffled each epoch


def test_list_files_from_a_fed_string_tensor(files):
    p = tf.placeholder(tf.string, [])
    it = tf.data.Dataset.list_files(p, shuffle=False).make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {p: str(files / "*.txt")})
        assert sess.run(nxt) == str(files / "c.txt").encode()
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)
        sess.run(it.initializer, {p: str(files / "a/*")})
        assert [sess.run(nxt), sess.run(nxt)] == [str(files / "a/1.txt").encode(), str(files / "a/2.txt").encode()]


def test_list_files_without_a_match_names_the_pattern(files):
    pattern = str(files / "nothing*")
    with pytest.raises(tf.errors.InvalidArgumentError, match="No files matched pattern: .*nothing"):
        elements(tf.data.Dataset.list_files(pattern))
    with pytest.raises(TypeError, match="string"):
        tf.data.Dataset.list_files(tf.constant(3))


# ---- window ----------------------------------------------------------------------------------------
def reference_windows(n, size, shift, stride, drop):
    out, start = [], 0
    while start < n:
        w = list(range(start, n, stride))[:size]
        if drop and len(w) < size:
            break
        out.append(w)
        start += shift
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 12), st.integers(1, 4), st.none() | st.integers(1, 5), st.integers(1, 3), st.booleans())
def test_window_matches_reference(n, size, shift, stride, drop):
    ds = tf.data.Dataset.range(n).window(size, shift=shift, stride=stride, drop_remainder=drop)
    got = elements(ds.flat_map(lambda w: w.batch(size)))
    want = reference_windows(n, size, size if shift is None else shift, stride, drop)
    assert [list(map(int, g)) for g in got] == want


def test_window_tf_figures():
    # TF 2.20 (compat.v1): range(10).window(3, shift=2, stride=2)
    ds = tf.data.Dataset.range(10).window(3, shift=2, stride=2)
    assert [g.tolist() for g in elements(ds.flat_map(lambda w: w.batch(3)))] == [[0, 2, 4], [2, 4, 6], [4, 6, 8],
                                                                              [6, 8], [8]]
    ds = tf.data.Dataset.range(10).window(3, shift=2, stride=2, drop_remainder=True)
    assert [g.tolist() for g in elements(ds.flat_map(lambda w: w.batch(3)))] == [[0, 2, 4], [2, 4, 6], [4, 6, 8]]
    ds = tf.data.Dataset.range(5).window(2).flat_map(lambda w: w.map(lambda v: v * 2).batch(5))
    assert [g.tolist() for g in elements(ds)] == [[0, 2], [4, 6], [8]]


def test_window_of_nested_elements_in_a_session():
    x = np.arange(7, dtype=np.int32)
    ds = tf.data.Dataset.from_tensor_slices(({"a": x}, x * 10)).window(3)
    assert ds.output_types == ({"a": tf.int32}, tf.int32)
    ds = ds.flat_map(lambda a, b: tf.data.Dataset.zip((a["a"].batch(3), b.batch(3))))
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        for lo in (0, 3, 6):
            got_a, got_b = sess.run(nxt)
            np.testing.assert_array_equal(got_a, x[lo:lo + 3])
            np.testing.assert_array_equal(got_b, x[lo:lo + 3] * 10)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)


def test_window_pass_through_stages_and_interleave():
    ds = tf.data.Dataset.range(5).window(2).take(2).repeat(2).flat_map(lambda w: w.batch(5))
    assert [g.tolist() for g in elements(ds)] == [[0, 1], [2, 3], [0, 1], [2, 3]]
    ds = tf.data.Dataset.range(6).window(2).interleave(lambda w: w, cycle_length=2)
    assert [int(v) for v in elements(ds)] == [0, 2, 1, 3, 4, 5]


def test_window_refuses_tensor_stages_and_bad_sizes():
    w = tf.data.Dataset.range(4).window(2)
    for use in (lambda: w.map(lambda v: v), lambda: w.batch(2), lambda: w.make_one_shot_iterator()):
        with pytest.raises(TypeError, match="window dataset"):
            use()
    with pytest.raises(tf.errors.InvalidArgumentError, match="size must be greater than zero"):
        tf.data.Dataset.range(4).window(0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="stride must be greater than zero"):
        tf.data.Dataset.range(4).window(2, stride=0)
