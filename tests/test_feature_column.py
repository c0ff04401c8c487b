"""tf.feature_column: numeric_column, input_layer and linear_model against numpy, with TF1's names."""

import numpy as np
import pytest

import dflow as tf


def test_input_layer_sorted_normalized_and_flattened():
    rng = np.random.RandomState(0)
    b, a = rng.randn(4, 2, 3).astype(np.float32), rng.randint(0, 9, size=4).astype(np.int64)
    with tf.Graph().as_default():
        cols = [tf.feature_column.numeric_column("b", shape=(2, 3), normalizer_fn=lambda t: t * 2.0),
                tf.feature_column.numeric_column("a", dtype=tf.int64)]
        out = tf.feature_column.input_layer({"b": tf.constant(b), "a": tf.constant(a)}, cols)
        assert out.dtype == tf.float32 and out.shape.as_list() == [4, 7]
        with tf.Session() as sess:
            got = sess.run(out)
    # columns in name order (TF1): a, then b flattened per example
    np.testing.assert_allclose(got, np.concatenate([a[:, None].astype(np.float32), 2 * b.reshape(4, 6)], 1))


def test_linear_model_names_and_values():
    rng = np.random.RandomState(1)
    a, b = rng.randn(5).astype(np.float32), rng.randn(5, 2).astype(np.float32)
    with tf.Graph().as_default():
        cols = [tf.feature_column.numeric_column("b", shape=2), tf.feature_column.numeric_column("a")]
        out = tf.feature_column.linear_model({"a": a, "b": b}, cols, units=3)
        names = [v.op.name for v in tf.global_variables()]
        assert names == ["linear_model/a/weights", "linear_model/b/weights", "linear_model/bias_weights"]
        assert [v.op.name for v in tf.model_variables()] == names
        wa, wb, bias = tf.global_variables()
        assert wa.shape.as_list() == [1, 3] and wb.shape.as_list() == [2, 3] and bias.shape.as_list() == [3]
        values = [rng.randn(1, 3), rng.randn(2, 3), rng.randn(3)]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(out), np.zeros((5, 3)))  # zero-initialized, as TF1
            for v, x in zip((wa, wb, bias), values):
                v.load(x.astype(np.float32), sess)
            got = sess.run(out)
    np.testing.assert_allclose(got, a[:, None] @ values[0] + b @ values[1] + values[2], rtol=1e-5, atol=1e-6)


def test_numeric_column_checks():
    c = tf.feature_column.numeric_column("x", default_value=3.0)
    assert (c.key, c.shape, c.default_value, c.dtype) == ("x", (1,), (3.0,), tf.float32)
    with pytest.raises(ValueError, match="key must be a string"):
        tf.feature_column.numeric_column(1)
    with pytest.raises(ValueError, match="shape dimensions must be greater than 0"):
        tf.feature_column.numeric_column("x", shape=(0,))
    with pytest.raises(ValueError, match="dtype must be convertible to float"):
        tf.feature_column.numeric_column("x", dtype=tf.string)
    with pytest.raises(TypeError, match="normalizer_fn must be a callable"):
        tf.feature_column.numeric_column("x", normalizer_fn=3)
    with pytest.raises(ValueError, match="shape of default_value must be equal"):
        tf.feature_column.numeric_column("x", shape=(2,), default_value=[1.0, 2.0, 3.0])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="'x' of numeric_column is not in features"):
            tf.feature_column.input_layer({"y": tf.constant([1.0])}, [c])
        with pytest.raises(ValueError, match="Duplicate feature column"):
            tf.feature_column.input_layer({"x": tf.constant([1.0])}, [c, c])


# ---- categorical columns (TF figures: TF 2.21's tf.compat.v1.feature_column on the same features,
# embedding initializer ones, printed from Session.run) ----------------------------------------------

def _census_like():
    fc = tf.feature_column
    feats = {"color": tf.constant([["red"], ["blue"], ["pink"], [""]]),
             "n": tf.constant([[1.0], [5.0], [12.0], [30.0]]), "h": tf.constant(["a", "b", "c", "hello"])}
    color = fc.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"], num_oov_buckets=2)
    b = fc.bucketized_column(fc.numeric_column("n"), [2.0, 10.0, 20.0])
    h = fc.categorical_column_with_hash_bucket("h", 10)
    x = fc.crossed_column(["h", b], 100)
    return feats, color, b, h, x


def test_categorical_columns_match_tensorflow():
    fc = tf.feature_column
    feats, color, b, h, x = _census_like()
    net = fc.input_layer(feats, [fc.indicator_column(color), b,
                                 fc.embedding_column(h, 3, initializer=tf.ones_initializer()), fc.indicator_column(x)])
    lin = fc.linear_model(feats, [color, b, h, x])
    assert [v.name for v in tf.global_variables()] == [
        "input_layer/h_embedding/embedding_weights:0", "linear_model/color/weights:0", "linear_model/h/weights:0",
        "linear_model/h_X_n_bucketized/weights:0", "linear_model/n_bucketized/weights:0",
        "linear_model/bias_weights:0"]
    assert net.shape.as_list() == [4, 5 + 100 + 3 + 4]
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        out, lo = s.run([net, lin])
    # "pink" is out of vocabulary: Fingerprint64("pink") % 2 = 0 -> id 3; "" is missing
    assert out[:, :5].tolist() == [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 0]]
    assert np.nonzero(out[:, 5:105])[1].tolist() == [95, 57, 82, 10]  # TF's crossed ids
    assert out[:, 105:].tolist() == [[1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 0, 1, 0, 0], [1, 1, 1, 0, 0, 1, 0],
                                     [1, 1, 1, 0, 0, 0, 1]]
    assert lo.tolist() == [[0.0]] * 4


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_embedding_combiners_and_weights(combiner):
    fc = tf.feature_column
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    ids = fc.categorical_column_with_identity("ids", 4)
    w = fc.weighted_categorical_column(ids, "w")
    emb = fc.embedding_column(w, 3, combiner=combiner, initializer=tf.constant_initializer(table))
    feats = {"ids": tf.constant([[0, 2], [3, -1], [-1, -1]], tf.int64), "w": tf.constant([[1.0, 2.0], [3.0, 0.0],
                                                                                        [0.0, 0.0]])}
    net = fc.input_layer(feats, [emb])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got = s.run(net)
    rows = [(np.array([0, 2]), np.array([1.0, 2.0])), (np.array([3]), np.array([3.0])), (np.array([], int), np.array([]))]
    for r, (i, wt) in enumerate(rows):
        total = (table[i] * wt[:, None]).sum(0)
        den = {"sum": 1.0, "mean": wt.sum() or 1.0, "sqrtn": np.sqrt((wt ** 2).sum()) or 1.0}[combiner]
        np.testing.assert_allclose(got[r], total / den, rtol=1e-6)


def test_linear_model_over_categorical_columns_trains():
    fc = tf.feature_column
    feats, color, b, h, x = _census_like()
    cols = {}
    lin = fc.linear_model(feats, [color, b], cols_to_vars=cols)
    wc = cols[color][0]
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        s.run(wc.assign(np.arange(5, dtype=np.float32).reshape(5, 1)))
        s.run(cols[b][0].assign(np.full((4, 1), 10, np.float32)))
        np.testing.assert_allclose(s.run(lin)[:, 0], [0 + 10, 2 + 10, 3 + 10, 0 + 10])


def test_categorical_column_errors():
    fc = tf.feature_column
    with pytest.raises(ValueError, match="Duplicate keys"):
        fc.categorical_column_with_vocabulary_list("a", ["x", "x"])
    with pytest.raises(ValueError, match="both num_oov_buckets and default_value"):
        fc.categorical_column_with_vocabulary_list("a", ["x"], num_oov_buckets=1, default_value=0)
    with pytest.raises(ValueError, match="boundaries must be a sorted list"):
        fc.bucketized_column(fc.numeric_column("n"), [3.0, 1.0])
    with pytest.raises(ValueError, match="hash_bucket is not supported for crossing"):
        fc.crossed_column([fc.categorical_column_with_hash_bucket("h", 3), "b"], 10)
    with pytest.raises(ValueError, match="wrap a categorical column with an embedding_column"):
        fc.input_layer({"a": tf.constant(["x"])}, [fc.categorical_column_with_hash_bucket("a", 3)])
    spec = fc.make_parse_example_spec([fc.categorical_column_with_hash_bucket("a", 3),
                                       fc.bucketized_column(fc.numeric_column("n"), [1.0])])
    assert spec == {"a": tf.VarLenFeature(tf.string), "n": tf.FixedLenFeature((1,), tf.float32)}


def test_vocabulary_file_column(tmp_path):
    fc = tf.feature_column
    p = tmp_path / "v.txt"
    p.write_text("a\nb\nc\n")
    col = fc.categorical_column_with_vocabulary_file("k", str(p), num_oov_buckets=1)
    assert col.num_buckets == 4
    net = fc.input_layer({"k": tf.constant(["c", "zz"])}, [fc.indicator_column(col)])
    with tf.Session() as s:
        s.run(tf.tables_initializer())
        assert s.run(net).tolist() == [[0, 0, 1, 0], [0, 0, 0, 1]]


def test_shared_embedding_columns_share_one_variable():
    # TF 1.15 (tf.compat.v1 in TF 2.21): names ['b_id_shared_embedding', 'a_id_shared_embedding'],
    # collection 'a_id_b_id_shared_embedding', one variable
    # 'input_layer/a_id_b_id_shared_embedding/embedding_weights:0', output shape (2, 6)
    with tf.Graph().as_default():
        b = tf.feature_column.categorical_column_with_identity("b_id", 5)
        a = tf.feature_column.categorical_column_with_identity("a_id", 5)
        cols = tf.feature_column.shared_embedding_columns([b, a], 3)
        assert [c.name for c in cols] == ["b_id_shared_embedding", "a_id_shared_embedding"]
        assert cols[0].shared_embedding_collection_name == "a_id_b_id_shared_embedding"
        feats = {"a_id": tf.constant([[1], [2]], tf.int64), "b_id": tf.constant([[3], [4]], tf.int64)}
        out = tf.feature_column.input_layer(feats, cols)
        assert [v.name for v in tf.global_variables()] == ["input_layer/a_id_b_id_shared_embedding/embedding_weights:0"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, w = sess.run([out, tf.global_variables()[0]])
        np.testing.assert_allclose(got, np.concatenate([w[[1, 2]], w[[3, 4]]], 1))  # a's columns, then b's
        with pytest.raises(ValueError, match="same number of buckets"):
            tf.feature_column.shared_embedding_columns([a, tf.feature_column.categorical_column_with_identity("c", 6)], 3)
        with pytest.raises(ValueError, match="same type"):
            tf.feature_column.shared_embedding_columns(
                [a, tf.feature_column.categorical_column_with_hash_bucket("h", 5)], 3)
        with pytest.raises(ValueError, match="Invalid dimension"):
            tf.feature_column.shared_embedding_columns([a, b], 0)
        with pytest.raises(ValueError, match="_CategoricalColumn"):
            tf.feature_column.shared_embedding_columns([a, tf.feature_column.numeric_column("x")], 2)
