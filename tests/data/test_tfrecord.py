"""`tf.data.TFRecordDataset` and `tf.io.parse_example`/`parse_single_example` (FixedLenFeature,
VarLenFeature): random Examples written, read back through pipelines and parsed, against the
Python values written; the file orders and errors of TF 2.21 (compat.v1) hard-coded."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf


def example(**features):
    """A serialized tf.train.Example: float values -> FloatList, ints -> Int64List, bytes -> BytesList."""
    f = {}
    for k, v in features.items():
        v = list(np.atleast_1d(v))
        if v and isinstance(v[0], (float, np.floating)):
            f[k] = tf.train.Feature(float_list=tf.train.FloatList(value=v))
        elif v and isinstance(v[0], (int, np.integer)):
            f[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=v))
        else:
            f[k] = tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


def random_rows(seed, n):
    """n rows of (x: 3 float32, k: 0-4 int64 values, s: bytes), as written and as expected back."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(3).astype(np.float32), rng.integers(-2**40, 2**40, int(rng.integers(0, 5))),
             rng.bytes(int(rng.integers(0, 9)))) for _ in range(n)]


def write(path, rows, compression=""):
    with tf.io.TFRecordWriter(str(path), compression) as w:
        for x, k, s in rows:
            w.write(example(x=[float(v) for v in x], k=[int(v) for v in k], s=[s]) if len(k) else
                    example(x=[float(v) for v in x], s=[s]))
    return str(path)


FEATURES = {"x": tf.FixedLenFeature([3], tf.float32), "k": tf.VarLenFeature(tf.int64),
            "s": tf.FixedLenFeature([], tf.string, default_value="")}


def drain(nxt, sess):
    out = []
    while True:
        try:
            out.append(sess.run(nxt))
        except tf.errors.OutOfRangeError:
            return out


# ---- the dataset -------------------------------------------------------------------------------------
@pytest.fixture
def record_files(tmp_path):
    """Four files of 1, 3, 2 and 4 records "<file>.<record>" (as written with TF for the orders below)."""
    names = []
    for i, n in enumerate([1, 3, 2, 4]):
        with tf.io.TFRecordWriter(str(tmp_path / f"f{i}.tfr")) as w:
            for j in range(n):
                w.write(f"{i}.{j}")
        names.append(str(tmp_path / f"f{i}.tfr"))
    return names


def records(ds):
    with tf.Session() as sess:
        return [r.decode() for r in drain(ds.make_one_shot_iterator().get_next(), sess)]


def test_records_in_file_order_as_scalar_strings(record_files):
    ds = tf.data.TFRecordDataset(record_files)
    assert ds.output_types == tf.string and ds.output_shapes.as_list() == []
    assert records(ds) == ["0.0", "1.0", "1.1", "1.2", "2.0", "2.1", "3.0", "3.1", "3.2", "3.3"]
    assert records(tf.data.TFRecordDataset(record_files[1])) == ["1.0", "1.1", "1.2"]


def test_num_parallel_reads_interleaves_as_tf(record_files):
    # TF 2.21: TFRecordDataset(files, num_parallel_reads=2 / 3)
    assert records(tf.data.TFRecordDataset(record_files, num_parallel_reads=2)) == [
        "0.0", "1.0", "1.1", "2.0", "1.2", "2.1", "3.0", "3.1", "3.2", "3.3"]
    assert records(tf.data.TFRecordDataset(record_files, num_parallel_reads=3)) == [
        "0.0", "1.0", "2.0", "1.1", "2.1", "3.0", "1.2", "3.1", "3.2", "3.3"]


def test_file_names_from_a_dataset_and_through_interleave(record_files):
    pattern = record_files[0].replace("f0.tfr", "f*.tfr")
    names = tf.data.Dataset.list_files(pattern, shuffle=False)
    assert records(tf.data.TFRecordDataset(names)) == records(tf.data.TFRecordDataset(record_files))
    # the TF1 idiom: one dataset per file name, interleaved (TF's interleave order, cycle 2)
    ds = names.interleave(tf.data.TFRecordDataset, cycle_length=2)
    assert records(ds) == ["0.0", "1.0", "1.1", "2.0", "1.2", "2.1", "3.0", "3.1", "3.2", "3.3"]
    assert sorted(records(tf.data.Dataset.list_files(pattern, seed=3).flat_map(tf.data.TFRecordDataset))) == \
        sorted(records(tf.data.TFRecordDataset(record_files)))


def test_file_names_fed_to_the_initializer(record_files):
    p = tf.placeholder(tf.string, [None])
    it = tf.data.TFRecordDataset(p).batch(4).make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {p: record_files[2:]})
        assert [list(b) for b in drain(nxt, sess)] == [[b"2.0", b"2.1", b"3.0", b"3.1"], [b"3.2", b"3.3"]]
        sess.run(it.initializer, {p: record_files[:1]})
        assert [list(b) for b in drain(nxt, sess)] == [[b"0.0"]]


def test_dataset_errors(tmp_path, record_files):
    with pytest.raises(TypeError, match="must contain `tf.string` elements. Got `tf.int32`"):
        tf.data.TFRecordDataset(tf.constant([1]))
    with pytest.raises(ValueError, match="compression_type"):
        tf.data.TFRecordDataset(record_files, compression_type="BZ2")
    nxt = tf.data.TFRecordDataset([record_files[0], str(tmp_path / "gone.tfr")]).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(nxt) == b"0.0"
        with pytest.raises(tf.errors.NotFoundError, match="gone.tfr; No such file or directory"):
            sess.run(nxt)
    (tmp_path / "bad.tfr").write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00abcdhello1234")
    nxt = tf.data.TFRecordDataset(str(tmp_path / "bad.tfr")).make_one_shot_iterator().get_next()
    with tf.Session() as sess, pytest.raises(tf.errors.DataLossError, match="corrupted record at 0"):
        sess.run(nxt)


# ---- write -> read -> parse: whole programs on every path ----------------------------------------------
@pytest.mark.program
@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_parse_single_example_in_map_then_batch(tmp_path, compression):
    rows = random_rows(1, 11)
    path = write(tmp_path / "r.tfr", rows, compression)
    ds = tf.data.TFRecordDataset([path], compression_type=compression)
    ds = ds.map(lambda r: (lambda p: (p["x"], p["s"]))(tf.parse_single_example(r, FEATURES)), num_parallel_calls=2)
    x, s = ds.batch(4).make_one_shot_iterator().get_next()
    assert x.shape.as_list() == [None, 3] and s.dtype == tf.string
    with tf.Session() as sess:
        got = drain((x, s), sess)
    assert [len(b[0]) for b in got] == [4, 4, 3]
    np.testing.assert_array_equal(np.concatenate([b[0] for b in got]), np.stack([r[0] for r in rows]))
    assert [v for b in got for v in b[1]] == [r[2] for r in rows]


@pytest.mark.program
def test_parse_example_of_batches_with_sparse_features(tmp_path):
    rows = random_rows(2, 7)
    path = write(tmp_path / "r.tfr", rows)
    serialized = tf.data.TFRecordDataset(path).batch(5).make_one_shot_iterator().get_next()
    parsed = tf.parse_example(serialized, FEATURES)
    dense_k = tf.sparse.to_dense(parsed["k"], default_value=-1)
    assert isinstance(parsed["k"], tf.SparseTensor) and parsed["x"].shape.as_list() == [None, 3]
    with tf.Session() as sess:
        batches = drain((parsed, dense_k), sess)
    for (out, dk), chunk in zip(batches, [rows[:5], rows[5:]]):
        np.testing.assert_array_equal(out["x"], np.stack([r[0] for r in chunk]))
        assert list(out["s"]) == [r[2] for r in chunk]
        sp = out["k"]
        assert isinstance(sp, tf.SparseTensorValue)
        width = max(len(r[1]) for r in chunk)
        np.testing.assert_array_equal(sp.dense_shape, [len(chunk), width])
        np.testing.assert_array_equal(sp.indices, [[b, j] for b, r in enumerate(chunk) for j in range(len(r[1]))]
                                      if sum(len(r[1]) for r in chunk) else np.zeros((0, 2)))
        np.testing.assert_array_equal(sp.values, np.concatenate([r[1] for r in chunk]).astype(np.int64))
        want = np.full((len(chunk), width), -1, np.int64)
        for b, r in enumerate(chunk):
            want[b, :len(r[1])] = r[1]
        np.testing.assert_array_equal(dk, want)


def test_parse_example_of_no_records(mode, sess_factory):
    s = tf.placeholder(tf.string, [None])
    out = sess_factory(mode).run(tf.parse_example(s, FEATURES), {s: np.zeros(0, object)})
    # TF 2.21: dense (0, 3); sparse indices (0, 2), dense_shape [0, 0]
    assert out["x"].shape == (0, 3) and out["x"].dtype == np.float32 and out["s"].shape == (0,)
    assert out["k"].indices.shape == (0, 2) and out["k"].dense_shape.tolist() == [0, 0]


def test_parse_single_example_sparse_and_defaults(mode, sess_factory):
    s = tf.placeholder(tf.string, [])
    feats = {"k": tf.VarLenFeature(tf.string), "d": tf.FixedLenFeature([2, 2], tf.int64, default_value=[[1, 2], [3, 4]])}
    out = tf.parse_single_example(s, feats)
    assert out["d"].shape.as_list() == [2, 2] and out["k"].indices.shape.as_list() == [None, 1]
    sess = sess_factory(mode)
    got = sess.run(out, {s: example(k=[b"a", b"bc"])})
    np.testing.assert_array_equal(got["d"], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(got["k"].indices, [[0], [1]])
    assert list(got["k"].values) == [b"a", b"bc"] and list(got["k"].dense_shape) == [2]
    got = sess.run(out, {s: example(d=[5, 6, 7, 8])})
    np.testing.assert_array_equal(got["d"], [[5, 6], [7, 8]])
    assert got["k"].indices.shape == (0, 1) and list(got["k"].dense_shape) == [0]


# ---- errors: TF 2.21 (compat.v1) messages ---------------------------------------------------------------
ERROR_FEATURES = {"a": tf.FixedLenFeature([2], tf.float32), "b": tf.VarLenFeature(tf.int64),
                  "c": tf.FixedLenFeature([], tf.string, default_value="zz")}


@pytest.mark.parametrize("records,message", [
    ([example(a=[1., 2.]), example(b=[1])], "Name: <unknown>, Feature: a (data type: float) is required but could "
                                            "not be found."),
    ([example(a=[1, 2])], "Name: <unknown>, Key: a, Index: 0.  Data types don't match. Data type: int64 but "
                          "expected type: float"),
    ([example(a=[1., 2.]), example(a=[1., 2., 3.])], "Name: <unknown>, Key: a, Index: 1.  Number of float values != "
                                                     "expected.  Values size: 3 but output shape: [2]"),
    ([example(a=[1., 2.], b=[1.5])], "Name: <unknown>, Key: b, Index: 0.  Data types don't match. Expected type: "
                                     "int64, Actual type: float"),
    ([b"not a proto at all"], "Could not parse example input, value: 'not a proto at all'"),
])
def test_parse_errors_are_tf1s(mode, sess_factory, records, message):
    s = tf.placeholder(tf.string, [None])
    out = tf.parse_example(s, ERROR_FEATURES)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        sess_factory(mode).run(out, {s: records})
    assert message in str(e.value) and "ParseExample" in str(e.value)


def test_parse_errors_name_examples_and_single_records(mode, sess_factory):
    s = tf.placeholder(tf.string, [None])
    out = tf.parse_example(s, ERROR_FEATURES, example_names=tf.constant(["first", "second"]))
    sess = sess_factory(mode)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Name: second, Feature: a"):
        sess.run(out, {s: [example(a=[1., 2.]), example(b=[1])]})
    s1 = tf.placeholder(tf.string, [])
    single = tf.parse_single_example(s1, ERROR_FEATURES)
    # TF 2.21's parse_single_example: no "Name:" / "Index:" parts
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Feature: a \(data type: float\) is required"):
        sess.run(single, {s1: example(b=[5])})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: a.  Data types don't match. Data type: int64 but "
                                                             "expected type: float"):
        sess.run(single, {s1: example(a=[1, 2])})


def test_parse_errors_when_the_graph_is_built():
    s = tf.placeholder(tf.string, [None])
    # TF 2.21's messages
    with pytest.raises(TypeError, match="'dense_defaults' has DataType int32 not in list of allowed values"):
        tf.parse_example(s, {"a": tf.FixedLenFeature([2], tf.int32)})
    with pytest.raises(TypeError, match="'sparse_types' has DataType float64 not in list of allowed values"):
        tf.io.parse_example(s, {"a": tf.io.VarLenFeature(tf.float64)})
    with pytest.raises(ValueError, match="First dimension of shape for feature a unknown"):
        tf.parse_example(s, {"a": tf.FixedLenFeature([None], tf.float32)})
    with pytest.raises(ValueError, match="Missing shape for feature a"):
        tf.parse_example(s, {"a": tf.FixedLenFeature(None, tf.float32)})
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 3 elements to shape"):
        tf.parse_example(s, {"a": tf.FixedLenFeature([2], tf.float32, default_value=[1., 2., 3.])})
    with pytest.raises(ValueError, match="Argument `features` cannot be None or falsy"):
        tf.parse_example(s, {})
    with pytest.raises(ValueError, match="Input serialized must be a scalar"):
        tf.parse_single_example(s, {"a": tf.VarLenFeature(tf.float32)})
    with pytest.raises(ValueError, match="Shape must be at most rank 1 but is rank 2"):
        tf.parse_example(tf.placeholder(tf.string, [None, None]), FEATURES)
    with pytest.raises(TypeError, match="has type float32 that does not match expected type of string"):
        tf.parse_example(tf.constant([1.0]), FEATURES)


# ---- SparseTensor elements ------------------------------------------------------------------------------
@pytest.mark.program
def test_var_len_features_through_map_and_batch(tmp_path):
    rows = random_rows(3, 9)
    path = write(tmp_path / "r.tfr", rows)
    ds = tf.data.TFRecordDataset(path).map(lambda r: tf.parse_single_example(r, FEATURES))
    assert ds.output_classes["k"] is tf.SparseTensor and ds.output_types["k"] == tf.int64
    assert ds.output_shapes["k"].as_list() == [None]
    batched = ds.batch(4)
    assert batched.output_shapes["k"].as_list() == [None, None]
    element = batched.make_one_shot_iterator().get_next()
    assert isinstance(element["k"], tf.SparseTensor)
    dense = tf.sparse.to_dense(element["k"], default_value=-7)
    with tf.Session() as sess:
        got = drain((element, dense), sess)
    assert [len(b[0]["x"]) for b in got] == [4, 4, 1]
    for (out, dk), chunk in zip(got, [rows[0:4], rows[4:8], rows[8:]]):
        sp = out["k"]  # TF's batch of sparse tensors: (row, position) indices, [rows, longest] shape
        width = max(len(r[1]) for r in chunk)
        np.testing.assert_array_equal(sp.dense_shape, [len(chunk), width])
        assert sp.indices.tolist() == [[b, j] for b, r in enumerate(chunk) for j in range(len(r[1]))]
        np.testing.assert_array_equal(sp.values, np.concatenate([r[1] for r in chunk]).astype(np.int64))
        want = np.full((len(chunk), width), -7, np.int64)
        for b, r in enumerate(chunk):
            want[b, :len(r[1])] = r[1]
        np.testing.assert_array_equal(dk, want)


def test_sparse_elements_as_map_arguments_and_refused_stages():
    recs = [example(k=[1, 2]), example(k=[0]), example(x=[1.0])]  # example(k=[0]) ends in a NUL byte
    assert recs[1].endswith(b"\x00")
    ds = tf.data.Dataset.from_tensor_slices(recs).map(lambda r: tf.parse_single_example(
        r, {"k": tf.VarLenFeature(tf.int64)}))
    dense = ds.batch(3).map(lambda d: tf.sparse.to_dense(d["k"]))
    with tf.Session() as sess:
        (got,) = drain(dense.make_one_shot_iterator().get_next(), sess)
    np.testing.assert_array_equal(got, [[1, 2], [0, 0], [0, 0]])
    with pytest.raises(TypeError, match="SparseTensor"):
        ds.padded_batch(2)
    with pytest.raises(TypeError, match="SparseTensor"):
        ds.batch(2).unbatch()
    with pytest.raises(TypeError, match="slicing a SparseTensor"):
        tf.data.Dataset.from_tensor_slices(tf.SparseTensor([[0]], [1.0], [2]))


def test_records_ending_in_nul_bytes_survive_feeds_and_pipelines():
    recs = [b"a\x00", b"\x00\x00", b"b"]
    p = tf.placeholder(tf.string, [None])
    with tf.Session() as sess:
        assert list(sess.run(p, {p: recs})) == recs
        assert list(sess.run(tf.constant(recs))) == recs
        ds = tf.data.Dataset.from_tensor_slices(recs).map(lambda r: r)
        assert drain(ds.make_one_shot_iterator().get_next(), sess) == recs


def test_a_parsing_graph_round_trips_through_a_meta_graph(tmp_path):
    s = tf.placeholder(tf.string, [None], name="records")
    parsed = tf.parse_example(s, FEATURES)
    tf.identity(tf.sparse.to_dense(parsed["k"]), name="k_dense")
    tf.constant([b"\x00\xff", b"b"], name="raw")  # string constants hold bytes, any bytes
    tf.train.export_meta_graph(str(tmp_path / "m.meta"))
    tf.reset_default_graph()
    tf.train.import_meta_graph(str(tmp_path / "m.meta"))
    g = tf.get_default_graph()
    rows = random_rows(4, 3)
    records = [example(x=[float(v) for v in x], k=[int(v) for v in k], s=[b]) if len(k) else
               example(x=[float(v) for v in x], s=[b]) for x, k, b in rows]
    with tf.Session() as sess:
        k_dense, raw = sess.run(["k_dense:0", "raw:0"], {g.get_tensor_by_name("records:0"): records})
    assert list(raw) == [b"\x00\xff", b"b"]
    assert k_dense.shape == (3, max(len(r[1]) for r in rows))
    for b, r in enumerate(rows):
        np.testing.assert_array_equal(k_dense[b, :len(r[1])], r[1])


@pytest.mark.parametrize("mode", ["eager", "sync", "threads", "processes"])
def test_dense_parsing_runs_chunk_by_chunk(sess_factory, mode):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((9, 2)).astype(np.float32)
    y = rng.integers(-50, 50, 9)
    records = [example(x=[float(v) for v in xr], y=[int(yr)]) if i % 3 else example(x=[float(v) for v in xr])
               for i, (xr, yr) in enumerate(zip(x, y))]
    s = tf.placeholder(tf.string, [None])
    out = tf.parse_example(s, {"x": tf.FixedLenFeature([2], tf.float32),
                                "y": tf.FixedLenFeature([], tf.int64, default_value=-1)})
    sess = sess_factory(mode, chunks=2)  # five chunks of records on the dask modes
    got = sess.run(out, {s: records})
    np.testing.assert_array_equal(got["x"], x)
    np.testing.assert_array_equal(got["y"], np.where(np.arange(9) % 3 == 0, -1, y))
    records[7] = example(x=[1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: x, Index: 7.  Number of float values"):
        sess.run(out, {s: records})


@pytest.mark.program
def test_training_from_tfrecords_matches_numpy_sgd(tmp_path):
    """A TF1 training loop fed by TFRecordDataset -> map(parse_single_example) -> batch, against
    the same minibatch SGD in numpy."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((40, 3)).astype(np.float32)
    y = (x @ np.float32([1.0, -2.0, 0.5]) > 0).astype(np.float32)
    path = str(tmp_path / "train.tfrecord")
    with tf.python_io.TFRecordWriter(path, "ZLIB") as w:
        for xr, yr in zip(x, y):
            w.write(example(x=[float(v) for v in xr], y=[float(yr)]))
    feats = {"x": tf.FixedLenFeature([3], tf.float32), "y": tf.FixedLenFeature([], tf.float32)}
    ds = tf.data.TFRecordDataset([path], compression_type="ZLIB").map(
        lambda r: (lambda p: (p["x"], p["y"]))(tf.parse_single_example(r, feats))).batch(8).repeat(2)
    xb, yb = ds.make_one_shot_iterator().get_next()
    w_ = tf.Variable(tf.zeros([3, 1]))
    logits = tf.squeeze(tf.matmul(xb, w_), 1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=yb, logits=logits))
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        steps = 0
        while True:
            try:
                sess.run(step)
                steps += 1
            except tf.errors.OutOfRangeError:
                break
        got = sess.run(w_)
    want = np.zeros((3, 1), np.float64)
    for _epoch in range(2):
        for k in range(0, 40, 8):
            xk, yk = x[k:k + 8].astype(np.float64), y[k:k + 8].astype(np.float64)
            p = 1 / (1 + np.exp(-(xk @ want)[:, 0]))
            want -= 0.5 * (xk.T @ (p - yk))[:, None] / len(yk)
    assert steps == 10
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_pass_through_stages_of_a_tfrecord_dataset(record_files):
    ds = tf.data.TFRecordDataset(record_files)
    got = records(ds.skip(1).take(6).shard(2, 0).repeat(2).prefetch(1).shuffle(1))
    assert got == ["1.0", "1.2", "2.1"] * 2
