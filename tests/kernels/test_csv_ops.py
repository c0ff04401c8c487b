"""decode_csv (tf.decode_csv / tf.io.decode_csv): values, defaults, quotes, na_value, select_cols
and TF1's error messages; in process and through Dask, eagerly, in Dataset.map; and a whole TF1
program reading a CSV file into a linear model.

Expected values and messages are TF's, from tensorflow 2.21.0 `tensorflow.compat.v1` (graph mode)
on the same records, hard-coded.
"""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from tests.conftest import run_modes


def _run(fetches):
    with tf.Session() as s:
        return s.run(fetches)


def test_values_defaults_and_quotes_as_tf():
    cols = tf.decode_csv(["1,2.5,a,7", ",,,"], [[0], [0.0], ["z"], tf.constant([1], tf.int64)])
    assert [c.dtype for c in cols] == [tf.int32, tf.float32, tf.string, tf.int64]
    assert [c.shape.as_list() for c in cols] == [[2]] * 4
    assert cols[0].op.type == "DecodeCSV" and cols[0].name == "DecodeCSV:0"
    a, b, c, d = _run(cols)
    np.testing.assert_array_equal(a, [1, 0])
    np.testing.assert_array_equal(b, np.float32([2.5, 0]))
    assert c.tolist() == [b"a", b"z"] and d.dtype == np.int64 and d.tolist() == [7, 1]
    # TF: [1], [2.5], [b'a,b'], [7]: a quoted field holds the delimiter; "" is a quote
    out = _run(tf.decode_csv(['1,2.5,"a,b",7', '2,0,"q""r",1'], [[0], [0.0], ["z"], [1]]))
    assert out[2].tolist() == [b"a,b", b'q"r']
    # use_quote_delim=False keeps quotes as characters
    assert _run(tf.decode_csv(['1,"2",3'], [[0], [""], [0]], use_quote_delim=False))[1].tolist() == [b'"2"']
    # na_value and field_delim; a trailing delimiter ends an empty last field
    assert [v.tolist() for v in _run(tf.decode_csv(["1;NA;3"], [[0], [5], [0]], field_delim=";", na_value="NA"))] \
        == [[1], [5], [3]]
    assert [v.tolist() for v in _run(tf.decode_csv(["1,2,"], [[0], [0], [0]]))] == [[1], [2], [0]]
    # select_cols
    assert [v.tolist() for v in _run(tf.decode_csv(["1,2,3,4"], [[0], [0]], select_cols=[1, 3]))] == [[2], [4]]
    assert [v.tolist() for v in _run(tf.decode_csv(["1,2,x"], [[0.0], [0]], select_cols=[0, 1]))] == [[1.0], [2]]
    # numbers with spaces, inf and nan, as TF's strtod
    inf, nan, neg = _run(tf.decode_csv(["inf,nan,-3"], [[0.0], [0.0], [0.0]]))
    assert inf[0] == np.inf and np.isnan(nan[0]) and neg[0] == -3
    x, y = _run(tf.decode_csv(["1e3, 2 "], [[0.0], tf.constant(0.0, tf.float64)]))
    assert x.tolist() == [1000.0] and y.dtype == np.float64 and y.tolist() == [2.0]


def test_shapes_follow_the_records():
    a, b = _run(tf.decode_csv("3,4", [[0], [0.0]]))
    assert a.shape == () and a == 3 and b == 4.0
    a, b = _run(tf.decode_csv([["3,4"], ["5,6"]], [[0], [0.0]]))
    assert a.shape == (2, 1) and a.tolist() == [[3], [5]]
    cols = tf.decode_csv(tf.placeholder(tf.string, [None, 3]), [[0], [0.0]])
    assert [c.shape.as_list() for c in cols] == [[None, 3], [None, 3]]


@pytest.mark.parametrize("records, defaults, kwargs, message", [
    (["1,2"], [[0], [0], [0]], {}, r"^Expect 3 fields but have 2 in record 0"),
    (["1,2", "3"], [[0], [0]], {}, r"^Expect 2 fields but have 1 in record 1"),
    ([""], [[0], [0]], {}, r"^Expect 2 fields but have 0 in record 0"),
    (["1,2,3"], [[""], [0]], {}, r"^Expect 2 fields but have 3 in record 0"),
    (["1,2"], [[0.0], [0]], {"select_cols": [0, 2]}, r"^Expect 2 fields but have 1 in record 0"),
    (["1,2", ",3"], [[], [0]], {}, r"^Field 0 is required but missing in record 1!"),
    (['1,"a"b"'], [[0], [""]], {}, r"^Quote inside a string has to be escaped by another quote"),
    (['"ab,2'], [[""], [0]], {}, r"^Quoted field has to end with quote followed by delim or end"),
    (['ab"c,2'], [[""], [0]], {}, r"^Unquoted fields cannot have quotes/CRLFs inside"),
    (["x,2"], [[0], [0]], {}, r"^Field 0 in record 0 is not a valid int32: x"),
    (["1.5,2"], [[0], [0]], {}, r"^Field 0 in record 0 is not a valid int32: 1.5"),
    (["99999999999,2"], [[0], [0]], {}, r"^Field 0 in record 0 is not a valid int32: 99999999999"),
    (["1,0x1F"], [[0.0], [0]], {}, r"^Field 1 in record 0 is not a valid int32: 0x1F"),
    (["a,b"], [[0.0], [0.0]], {}, r"^Field 0 in record 0 is not a valid float: a"),
    (["1,b"], [[0.0], np.zeros([1], np.float64)], {}, r"^Field 1 in record 0 is not a valid double: b"),
    (["1,2"], [[0], [0.0]], {"field_delim": "ab"}, r"^field_delim should be only 1 char"),
])
def test_bad_records_fail_with_tf1_messages(records, defaults, kwargs, message):
    cols = tf.decode_csv(records, defaults, **kwargs)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message) as info:
        _run(cols)
    assert "DecodeCSV" in str(info.value)


def test_build_time_errors_as_tf1():
    with pytest.raises(ValueError, match="select_cols is not strictly increasing."):
        tf.decode_csv(["1,2"], [[0], [0]], select_cols=[1, 0])
    with pytest.raises(ValueError, match="Length of select_cols and record_defaults do not match."):
        tf.decode_csv(["1,2"], [[0], [0], [0]], select_cols=[0, 1])
    with pytest.raises(TypeError, match="DataType bool not in list of allowed values: float32, float64, int32, "
                                        "int64, string"):
        tf.decode_csv(["1,2"], [[0], [True]])


def test_dask_modes_agree_chunk_by_chunk():
    rows = [f"{i},{i * 0.5},w{i}" for i in range(9)] + ['9,"4.5","w,9"']
    p = tf.placeholder(tf.string, [10])
    cols = tf.decode_csv(p, [[0], [0.0], ["?"]])
    a, b, c = run_modes(cols, {p: rows}, chunks=3)
    np.testing.assert_array_equal(a, np.arange(10))
    np.testing.assert_allclose(b, np.arange(10) * 0.5)
    assert c.tolist()[-1] == b"w,9"
    bad = rows[:7] + ["x,1,2"] + rows[8:]
    for mode in ("sync", "threads"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Field 0 in record 7 is not a valid int32: x"):
            run_modes(cols, {p: bad}, modes=[mode], chunks=3)


def test_eager():
    with tfe.eager_mode():
        a, b = tf.decode_csv(["1,x", "2,y"], [[0], [""]])
        assert a.numpy().tolist() == [1, 2] and b.numpy().tolist() == [b"x", b"y"]


@pytest.mark.program
def test_csv_file_to_a_linear_model(tmp_path, session_kwargs):
    """TF1's CSV input pipeline: TextLineDataset.skip(1).map(decode_csv).batch, trained in a Session
    loop; the fit reaches the true weights."""
    rng = np.random.RandomState(0)
    x = rng.rand(240, 2).astype(np.float32)
    y = x @ np.float32([2.0, -3.0]) + 0.5
    path = tmp_path / "train.csv"
    path.write_text("x1,x2,y\n" + "".join(f"{a:.6f},{b:.6f},{t:.6f}\n" for (a, b), t in zip(x, y)))

    def parse(line):
        x1, x2, label = tf.decode_csv(line, record_defaults=[[0.0], [0.0], [0.0]])
        return tf.stack([x1, x2]), label

    dataset = tf.data.TextLineDataset(str(path)).skip(1).map(parse).shuffle(64, seed=1).repeat().batch(24)
    features, labels = dataset.make_one_shot_iterator().get_next()
    w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    pred = tf.squeeze(tf.matmul(features, w) + b, 1)
    loss = tf.reduce_mean(tf.square(pred - labels))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session(**session_kwargs) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(300):
            _, final = sess.run([train, loss])
        wv, bv = sess.run([w, b])
    assert final < 1e-3
    np.testing.assert_allclose(wv.ravel(), [2.0, -3.0], atol=0.05)
    np.testing.assert_allclose(bv, [0.5], atol=0.05)


@pytest.mark.program
def test_csv_batches_decoded_after_batch(tmp_path, session_kwargs):
    """decode_csv on a batch of lines (map after batch), the faster TF1 idiom."""
    path = tmp_path / "d.csv"
    path.write_text("a,b\n" + "".join(f"{i},{i * 2}\n" for i in range(10)))
    ds = tf.data.TextLineDataset(str(path)).skip(1).batch(4).map(lambda l: tuple(tf.decode_csv(l, [[0], [0]])))
    a, b = ds.make_one_shot_iterator().get_next()
    total = tf.reduce_sum(a + b)
    out = []
    with tf.Session(**session_kwargs) as sess:
        while True:
            try:
                out.append(int(sess.run(total)))
            except tf.errors.OutOfRangeError:
                break
    assert out == [18, 66, 51]


def test_all_numeric_records_parse_in_one_pass_with_the_same_answers_and_errors():
    """Records of numbers only take numpy's one-pass scanner; the answers and TF1's errors are the
    field-by-field path's (an integer column written "1.0" or "1e3", an empty field, spaces)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 3))
    ids = rng.integers(-1000, 1000, 50)
    records = np.array([b"%r,%r,%r,%d" % (*map(float, r), i) for r, i in zip(x, ids)], dtype=object)
    rec = tf.placeholder(tf.string, [None])
    cols = tf.decode_csv(rec, [[0.0], [0.0], [0.0], [0]])
    with tf.Session() as s:
        got = s.run(cols, {rec: records})
        np.testing.assert_array_equal(np.stack(got[:3], 1), x.astype(np.float32))
        np.testing.assert_array_equal(got[3], ids.astype(np.int32))
        assert s.run(cols, {rec: np.array([b"1,2,3,4", b"5,,7,8"], object)})[1].tolist() == [2.0, 0.0]
        assert s.run(cols, {rec: np.array([b" 1,2 ,3,4"], object)})[0].tolist() == [1.0]
        for bad, message in ((b"1,2,3,1.0", "not a valid int32: 1.0"), (b"1,2,3,1e3", "not a valid int32: 1e3"),
                             (b"1,2,3", "Expect 4 fields but have 3 in record 1")):
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                s.run(cols, {rec: np.array([b"1,2,3,4", bad], object)})


def test_the_one_pass_parser_keeps_tf1s_values_and_refusals():
    """The one-pass parser (pandas' tokenizer) gives strtod's doubles and int64s past 2**53, and
    leaves to the field-by-field path what TF1 refuses or reads its own way."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(40) * 10.0 ** rng.integers(-30, 30, 40)
    big = [2**62 + 1, -(2**63), 2**63 - 1]
    records = np.array([b"%.17g|%d" % (v, big[k % 3]) for k, v in enumerate(x)], dtype=object)
    rec = tf.placeholder(tf.string, [None])
    cols = tf.decode_csv(rec, [[0.0], [0]], field_delim="|")
    cols = [tf.decode_csv(rec, [tf.constant([0.0], tf.float64), tf.constant([0], tf.int64)], field_delim="|"), cols]
    with tf.Session() as s:
        f64, i64 = s.run(cols[0], {rec: records})
        np.testing.assert_array_equal(f64, [float(b"%.17g" % v) for v in x])
        assert i64.tolist() == [big[k % 3] for k in range(40)]
        with pytest.raises(tf.errors.InvalidArgumentError, match="not a valid int32"):
            s.run(cols[1], {rec: records})  # past int32
        got = s.run(cols[0], {rec: np.array([b"nan|1", b"-inf|2", b"1e3|3"], object)})
        assert np.isnan(got[0][0]) and got[0][1] == -np.inf and got[0][2] == 1000.0
        for bad, message in ((b"1_0.5|1", "not a valid double: 1_0.5"), (b"1.5|1_000", "not a valid int64: 1_000"),
                             (b"1.5|2|3", "Expect 2 fields but have 3 in record 1"), (b"1.5|0x10", "int64: 0x10")):
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                s.run(cols[0], {rec: np.array([b"1|2", bad], object)})
