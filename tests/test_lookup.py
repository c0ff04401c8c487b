"""Lookup tables (dflow/lookup.py, kernels/lookup_ops.py, kernels/fingerprint.py): session state
filled by initializers, hash buckets for unknown keys, against TensorFlow's figures."""

import numpy as np
import pytest

import dflow as tf
from dflow.kernels.fingerprint import (
    CROSS_HASH_KEY,
    fingerprint64,
    fingerprint_cat64,
    hash_bucket_fast,
)
from tests.conftest import LOCAL_MODES, make_session

# TF 2.21: tf.strings.to_hash_bucket_fast(STRINGS, 2**63 - 1) (Fingerprint64 mod 2**63-1); every
# length class of farmhashna::Hash64 (0-16, 17-32, 33-64, > 64 with and without a partial block)
STRINGS = [b"", b"a", b"ab", b"abc", b"abcd", b"hello", b"hello world!", b"x" * 16, b"y" * 17,
           b"the quick brown fox jumps", b"z" * 32, b"w" * 33, b"0123456789" * 6, b"q" * 64, b"r" * 65,
           b"abcdefghij" * 13, b"s" * 200]
TF_BUCKETS = [1936946117179621456, 3694432073954588132, 3066228220894225695, 2640714258260161385,
              1897425971756105985, 3786372426573024489, 4577883861590986596, 3320895591121647644,
              426471879119003573, 6000648049570618899, 5529242935250131553, 1065610773926128235,
              7268253708571388706, 7839288502534202488, 8125297036318867178, 4657222448606449991,
              2741658912855391397]


def run_with_tables(fetches, modes=LOCAL_MODES):
    """Runs tables_initializer then `fetches` in a fresh session of each mode; the modes agree."""
    results = []
    for m in modes:
        with make_session(m, chunks=2) as s:
            s.run(tf.tables_initializer())
            results.append(s.run(fetches))
    for r in results[1:]:
        for a, b in zip(np.atleast_1d(results[0]) if not isinstance(results[0], list) else results[0],
                        np.atleast_1d(r) if not isinstance(r, list) else r):
            np.testing.assert_array_equal(a, b)
    return results[0]


def test_fingerprint64_matches_tensorflow():
    assert [fingerprint64(s) % (2 ** 63 - 1) for s in STRINGS] == TF_BUCKETS


def test_hash_bucket_fast_matches_tensorflow():
    # TF: tf.strings.to_hash_bucket_fast(["a","b","c","hello","world"], 10)
    assert hash_bucket_fast([b"a", b"b", b"c", b"hello", b"world"], 10).tolist() == [9, 2, 2, 6, 8]
    out = tf.string_to_hash_bucket_fast(tf.constant(["a", "b", "c", "hello", "world"]), 10)
    with tf.Session() as s:
        assert s.run(out).tolist() == [9, 2, 2, 6, 8]


def test_fingerprint_cat64_matches_sparse_cross_hashed():
    # TF: tf.sparse.cross_hashed([[["a"],["b"]] (string), [[1],[2]] (int64)], num_buckets=0 / 100)
    got = [fingerprint_cat64(fingerprint_cat64(CROSS_HASH_KEY, fingerprint64(s)), i) for s, i in [(b"a", 1), (b"b", 2)]]
    assert [g % (2 ** 63 - 1) for g in got] == [2928842892298887678, 85918459618309357]
    assert [g % 100 for g in got] == [85, 57]


def test_static_hash_table_needs_initializer():
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b", "c"],
                                                                          tf.constant([0, 1, 2], tf.int64)), -1)
    out = table.lookup(tf.constant(["a", "x", "c"]))
    assert out.op.type == "LookupTableFindV2" and out.shape.as_list() == [3] and out.dtype == tf.int64
    assert table.resource_handle.op.type == "HashTableV2"
    assert tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS) == [table.initializer]
    with tf.Session() as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="Table not initialized"):
            s.run(out)
        s.run(tf.tables_initializer())
        np.testing.assert_array_equal(s.run(out), [0, -1, 2])
        assert s.run(table.size()) == 3
        s.run(tf.tables_initializer())  # the same contents again: allowed, as TF1
    with tf.Session() as s:  # tables are per session
        with pytest.raises(tf.errors.FailedPreconditionError, match="Table not initialized"):
            s.run(out)
    np.testing.assert_array_equal(run_with_tables(out), [0, -1, 2])


def test_lookup_inside_a_computation_on_every_mode():
    table = tf.contrib.lookup.HashTable(tf.contrib.lookup.KeyValueTensorInitializer([1, 2, 3], [1.5, 2.5, 3.5],
                                                                                    tf.int64, tf.float32), 0.0)
    x = tf.placeholder(tf.int64, [None])
    y = tf.reduce_sum(table.lookup(x * 1) * 2.0)
    for m in LOCAL_MODES:
        with make_session(m, chunks=2) as s:
            s.run(tf.tables_initializer())
            assert s.run(y, {x: [1, 3, 7, 3]}) == pytest.approx(2 * (1.5 + 3.5 + 0 + 3.5))


def test_initialized_twice_with_other_data_fails():
    keys = tf.placeholder(tf.string, [None])
    table = tf.contrib.lookup.HashTable(tf.contrib.lookup.KeyValueTensorInitializer(keys, tf.constant([0, 1],
                                                                                                      tf.int64)), -1)
    with tf.Session() as s:
        s.run(table.initializer, {keys: ["a", "b"]})
        with pytest.raises(tf.errors.FailedPreconditionError, match="already initialized with different data"):
            s.run(table.initializer, {keys: ["a", "c"]})


def test_bad_initializers():
    with pytest.raises(TypeError, match="Signature mismatch"):
        tf.contrib.lookup.HashTable(tf.contrib.lookup.KeyValueTensorInitializer(["a"], [1]), -1).lookup(
            tf.constant([1, 2]))
    vals = tf.placeholder(tf.int64, [None])
    table = tf.contrib.lookup.HashTable(tf.contrib.lookup.KeyValueTensorInitializer(["a", "b"], vals), -1)
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="matching size"):
            s.run(table.initializer, {vals: [1, 2, 3]})
        # a failed initializer leaves the table uninitialized
        with pytest.raises(tf.errors.FailedPreconditionError, match="Table not initialized"):
            s.run(table.size())
    dup = tf.contrib.lookup.index_table_from_tensor(["a", "b", "a"])
    with tf.Session() as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="different value for same key"):
            s.run(dup.initializer)


def test_index_table_from_tensor_with_oov_buckets():
    # TF: hash buckets of "hello" and "world" in 10 buckets are 6 and 8 (above), after 2 ids
    ids = tf.contrib.lookup.index_table_from_tensor(["a", "b"], num_oov_buckets=10)
    out = ids.lookup(tf.constant([["a", "hello"], ["world", "b"]]))
    np.testing.assert_array_equal(run_with_tables([out, ids.size()])[0], [[0, 8], [10, 1]])
    assert run_with_tables(ids.size()) == 12
    plain = tf.contrib.lookup.index_table_from_tensor(tf.constant(["x", "y"]), default_value=-7)
    np.testing.assert_array_equal(run_with_tables(plain.lookup(tf.constant(["y", "q"]))), [1, -7])
    with pytest.raises(ValueError, match="both num_oov_buckets and default_value"):
        tf.contrib.lookup.index_table_from_tensor(["a"], num_oov_buckets=1, default_value=3)


def test_integer_vocabulary_hashes_the_decimal_string():
    ids = tf.contrib.lookup.index_table_from_tensor([10, 20], num_oov_buckets=5, dtype=tf.int64)
    out = run_with_tables(ids.lookup(tf.constant([20, 7, 10], tf.int64)))
    assert out.tolist() == [1, 2 + int(hash_bucket_fast([b"7"], 5)[0]), 0]


def test_static_vocabulary_table():
    init = tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([0, 1], tf.int64))
    table = tf.lookup.StaticVocabularyTable(init, num_oov_buckets=10)
    np.testing.assert_array_equal(run_with_tables(table.lookup(tf.constant(["b", "hello"]))), [1, 8])
    with pytest.raises(ValueError, match="oov_buckets must be > 0"):
        tf.lookup.StaticVocabularyTable(init, 0)


@pytest.fixture
def vocab(tmp_path):
    p = tmp_path / "vocab.txt"
    p.write_bytes(b"emerson\t10\nlake\t20\npalmer\t30\n")
    return str(p)


def test_text_file_initializers(vocab):
    L = tf.contrib.lookup
    ids = L.index_table_from_file(vocab, num_oov_buckets=1, delimiter=" ")  # whole lines are keys
    by_col = L.HashTable(L.TextFileInitializer(vocab, tf.string, 0, tf.int64, 1, delimiter="\t"), -1)
    names = L.index_to_string_table_from_file(vocab, vocab_size=2)
    first = L.HashTable(L.TextFileIdTableInitializer(vocab, key_column_index=0), -1)
    outs = [ids.lookup(tf.constant(["lake\t20", "x"])), by_col.lookup(tf.constant(["palmer", "lake", "x"])),
            names.lookup(tf.constant([1, 2], tf.int64)), first.lookup(tf.constant(["emerson"]))]
    a, b, c, d = run_with_tables(outs)
    assert a.tolist() == [1, 3] and b.tolist() == [30, 20, -1]
    assert c.tolist() == [b"lake\t20", b"UNK"] and d.tolist() == [0]
    assert [t.name for t in tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS)][:1] == \
        ["string_to_index/text_file_id_table_init/asset_filepath:0"]


def test_index_to_string_table_from_tensor():
    t = tf.contrib.lookup.index_to_string_table_from_tensor(["a", "b"], default_value="?")
    assert run_with_tables(t.lookup(tf.constant([1, 5, 0], tf.int64))).tolist() == [b"b", b"?", b"a"]


def test_text_file_errors(vocab, tmp_path):
    L = tf.contrib.lookup
    missing = L.index_table_from_file(str(tmp_path / "nope.txt"))
    short = L.index_table_from_file(vocab, vocab_size=5)
    bad_col = L.HashTable(L.TextFileInitializer(vocab, tf.string, 2, tf.int64, 1), -1)
    bad_int = L.HashTable(L.TextFileInitializer(vocab, tf.string, 1, tf.int64, 0), -1)
    with tf.Session() as s:
        with pytest.raises(tf.errors.NotFoundError, match="nope.txt"):
            s.run(missing.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid vocab_size in .*vocab.txt: expected: 5 got: 3"):
            s.run(short.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid number of columns in .*vocab.txt line 0"):
            s.run(bad_col.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Field emerson in line 0 is not a valid int64"):
            s.run(bad_int.initializer)
    with pytest.raises(ValueError, match="Signature mismatch"):
        L.TextFileInitializer(vocab, tf.string, 0, tf.string, L.TextFileIndex.LINE_NUMBER)


def test_mutable_hash_table():
    m = tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1)
    ins = m.insert(["x", "y"], tf.constant([5, 6], tf.int64))
    with tf.Session() as s:
        assert s.run(m.size()) == 0
        s.run(ins)
        assert s.run(m.lookup(tf.constant(["y", "z"]))).tolist() == [6, -1]
        s.run(m.remove(tf.constant(["x"])))
        k, v = s.run(m.export())
        assert k.tolist() == [b"y"] and v.tolist() == [6]
    vec = tf.contrib.lookup.MutableHashTable(tf.int64, tf.float32, [0.0, 0.0])
    with tf.Session() as s:
        s.run(vec.insert(tf.constant([3], tf.int64), tf.constant([[1.0, 2.0]])))
        np.testing.assert_array_equal(s.run(vec.lookup(tf.constant([3, 4], tf.int64))), [[1, 2], [0, 0]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="expected values of shape"):
            s.run(vec.insert(tf.constant([3], tf.int64), tf.constant([1.0, 2.0])))


def test_mutable_dense_hash_table_refuses_its_empty_key():
    m = tf.contrib.lookup.MutableDenseHashTable(tf.int64, tf.int64, -1, empty_key=0)
    with tf.Session() as s:
        s.run(m.insert(tf.constant([1, 2], tf.int64), tf.constant([7, 8], tf.int64)))
        assert s.run(m.lookup(tf.constant([2, 5], tf.int64))).tolist() == [8, -1]
        with pytest.raises(tf.errors.InvalidArgumentError, match="empty_key"):
            s.run(m.insert(tf.constant([0], tf.int64), tf.constant([1], tf.int64)))
        assert s.run(m.size()) == 2  # the failed insert changed nothing
