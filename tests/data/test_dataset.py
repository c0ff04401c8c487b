"""Each Dataset transformation against a Python reference over small data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf
from dflow.data.node import IterContext


def elements(ds, sess=None):
    """Every element of `ds` through a one-shot iterator, as nested numpy values."""
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


def flat(values):
    return [int(v) for v in values]


def test_range_and_from_tensor_slices():
    assert flat(elements(tf.data.Dataset.range(5))) == [0, 1, 2, 3, 4]
    assert flat(elements(tf.data.Dataset.range(2, 9, 3))) == [2, 5, 8]
    assert flat(elements(tf.data.Dataset.range(5, 0, -2))) == [5, 3, 1]
    n = tf.placeholder(tf.int64, [])
    it = tf.data.Dataset.range(n).make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as s:
        s.run(it.initializer, {n: 3})
        assert [int(s.run(nxt)) for _ in range(3)] == [0, 1, 2]
    ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3], {"b": np.arange(6.0).reshape(3, 2)}))
    assert ds.output_types == (tf.int32, {"b": tf.float64})
    assert ds.output_shapes[1]["b"].as_list() == [2]
    got = elements(ds)
    assert [int(a) for a, _ in got] == [1, 2, 3]
    np.testing.assert_array_equal(np.stack([d["b"] for _, d in got]), np.arange(6.0).reshape(3, 2))
    assert tf.data.Dataset.range(3).output_types == tf.int64


def test_from_tensors_and_bad_slices():
    got = elements(tf.data.Dataset.from_tensors(([1, 2], 3.0)))
    assert len(got) == 1
    np.testing.assert_array_equal(got[0][0], [1, 2])
    with pytest.raises(ValueError, match="different first dimensions"):
        tf.data.Dataset.from_tensor_slices(([1, 2], [1, 2, 3]))


def test_from_generator_checks_types_and_shapes():
    def gen(n):
        for i in range(int(n)):
            yield i, [i] * i

    ds = tf.data.Dataset.from_generator(gen, (tf.int64, tf.float32), (tf.TensorShape([]), tf.TensorShape([None])),
                                        args=(3,))
    got = elements(ds)
    assert [int(a) for a, _ in got] == [0, 1, 2]
    assert [b.tolist() for _, b in got] == [[], [1.0], [2.0, 2.0]]
    assert got[1][1].dtype == np.float32
    bad = tf.data.Dataset.from_generator(lambda: iter([[1, 2]]), tf.int32, tf.TensorShape([3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        elements(bad)


def test_zip_and_concatenate():
    a, b = tf.data.Dataset.range(4), tf.data.Dataset.range(10, 13)
    got = elements(tf.data.Dataset.zip((a, b)))
    assert [(int(x), int(y)) for x, y in got] == [(0, 10), (1, 11), (2, 12)]
    got = elements(tf.data.Dataset.zip({"x": a, "y": (b, a)}))
    assert [(int(d["x"]), int(d["y"][0]), int(d["y"][1])) for d in got] == [(0, 10, 0), (1, 11, 1), (2, 12, 2)]
    assert flat(elements(a.concatenate(b))) == [0, 1, 2, 3, 10, 11, 12]
    with pytest.raises(TypeError, match="different types"):
        a.concatenate(tf.data.Dataset.from_tensor_slices([1.0]))


def test_map_filter_and_captured_tensors():
    scale = tf.constant(3, tf.int64)
    ds = tf.data.Dataset.range(6).map(lambda x: (x * scale, tf.cast(x, tf.float32) / 2.0))
    got = elements(ds)
    assert [int(a) for a, _ in got] == [0, 3, 6, 9, 12, 15]
    assert [float(b) for _, b in got] == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    ev = tf.data.Dataset.range(10).filter(lambda x: tf.equal(x % 2, 0))
    assert flat(elements(ev)) == [0, 2, 4, 6, 8]
    with pytest.raises(ValueError, match="scalar bool"):
        tf.data.Dataset.range(3).filter(lambda x: x)
    # tuple elements are passed as positional arguments, dicts as one
    pairs = tf.data.Dataset.from_tensor_slices(([1, 2], [10, 20])).map(lambda a, b: a + b)
    assert flat(elements(pairs)) == [11, 22]
    d = tf.data.Dataset.from_tensor_slices({"a": [1, 2]}).map(lambda e: e["a"] * 2)
    assert flat(elements(d)) == [2, 4]
    swapped = tf.data.Dataset.from_tensor_slices(([1, 2], [3.0, 4.0])).map(lambda a, b: (b, a))  # identity outputs
    assert [(float(b), int(a)) for b, a in elements(swapped)] == [(3.0, 1), (4.0, 2)]


def test_parallel_map_keeps_order():
    ds = tf.data.Dataset.range(50).map(lambda x: x * x, num_parallel_calls=4)
    assert flat(elements(ds)) == [i * i for i in range(50)]
    ds = tf.data.Dataset.range(20).map(lambda x: x + 1, num_parallel_calls=tf.data.experimental.AUTOTUNE)
    assert flat(elements(ds)) == list(range(1, 21))


def test_flat_map_and_interleave_orders():
    rep = tf.data.Dataset.range(1, 4).flat_map(lambda x: tf.data.Dataset.from_tensors(x).repeat(x))
    assert flat(elements(rep)) == [1, 2, 2, 3, 3, 3]
    # expected sequences from TensorFlow 2.20 (tf.compat.v1, graph mode)
    a = tf.data.Dataset.range(1, 6).interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(x),
                                                cycle_length=2, block_length=2)
    assert flat(elements(a)) == [1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 4, 4, 5, 5, 5]
    b = tf.data.Dataset.range(1, 6).interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(6 - x),
                                                cycle_length=3, block_length=1)
    assert flat(elements(b)) == [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 1, 4, 5, 4]


@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 12), size=st.integers(1, 5), drop=st.booleans())
def test_batch_remainders(n, size, drop):
    got = elements(tf.data.Dataset.range(n).batch(size, drop_remainder=drop))
    want = [list(range(i, min(i + size, n))) for i in range(0, n, size)]
    if drop:
        want = [w for w in want if len(w) == size]
    assert [g.tolist() for g in got] == want


def test_batch_shapes_and_unbatch():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(12).reshape(6, 2))
    assert ds.batch(4).output_shapes.as_list() == [None, 2]
    assert ds.batch(4, drop_remainder=True).output_shapes.as_list() == [4, 2]
    un = ds.batch(4).unbatch()
    assert un.output_shapes.as_list() == [2]
    np.testing.assert_array_equal(np.stack(elements(un)), np.arange(12).reshape(6, 2))
    ragged = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x)).batch(2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="different shapes"):
        elements(ragged)


def test_padded_batch():
    # expected values from TensorFlow 2.20 (tf.compat.v1, graph mode)
    ds = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x))
    got = elements(ds.padded_batch(2, padded_shapes=[None], padding_values=tf.constant(-1, tf.int64)))
    assert [g.tolist() for g in got] == [[[1, -1], [2, 2]], [[3, 3, 3]]]
    got = elements(ds.padded_batch(2, padded_shapes=[4]))
    assert [g.tolist() for g in got] == [[[1, 0, 0, 0], [2, 2, 0, 0]], [[3, 3, 3, 0]]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="larger than the padded shape"):
        elements(ds.padded_batch(3, padded_shapes=[2]))


def reference_shuffle(items, size, draws):
    """TF's buffer algorithm driven by uniform draws in [0, 1)."""
    buf, out, j = [], [], 0
    for e in items:
        if len(buf) < size:
            buf.append(e)
            continue
        i = int(draws[j] * size)
        j += 1
        out.append(buf[i])
        buf[i] = e
    while buf:
        i = int(draws[j] * len(buf))
        j += 1
        buf[i], buf[-1] = buf[-1], buf[i]
        out.append(buf.pop())
    return out


def test_shuffle_buffer_algorithm_and_seeds():
    items = list(range(30))
    ds = tf.data.Dataset.range(30).shuffle(7, seed=5)
    got = flat(elements(ds))
    assert sorted(got) == items and got != items
    node = ds._node
    draws = node.generator(IterContext({}, 0)).random(64)
    assert got == reference_shuffle(items, 7, draws)
    assert flat(elements(tf.data.Dataset.range(30).shuffle(7, seed=5))) == got  # same seed, same order
    assert flat(elements(tf.data.Dataset.range(30).shuffle(7, seed=6))) != got
    # a buffer of 1 keeps the order; elements never move more than buffer_size - 1 earlier
    assert flat(elements(tf.data.Dataset.range(10).shuffle(1, seed=1))) == list(range(10))
    for pos, v in enumerate(got):
        assert v <= pos + 6


def test_shuffle_graph_seed():
    tf.set_random_seed(7)
    a = flat(elements(tf.data.Dataset.range(20).shuffle(20)))
    tf.reset_default_graph()
    tf.set_random_seed(7)
    b = flat(elements(tf.data.Dataset.range(20).shuffle(20)))
    assert a == b and sorted(a) == list(range(20))


def test_reshuffle_each_iteration():
    epochs = flat(elements(tf.data.Dataset.range(10).shuffle(10, seed=3).repeat(3)))
    e = [epochs[i:i + 10] for i in (0, 10, 20)]
    assert all(sorted(x) == list(range(10)) for x in e)
    assert e[0] != e[1] or e[1] != e[2]
    fixed = flat(elements(tf.data.Dataset.range(10).shuffle(10, seed=3, reshuffle_each_iteration=False).repeat(3)))
    assert fixed[:10] == fixed[10:20] == fixed[20:] == e[0]


def test_repeat_take_skip_shard():
    assert flat(elements(tf.data.Dataset.range(3).repeat(2))) == [0, 1, 2, 0, 1, 2]
    assert flat(elements(tf.data.Dataset.range(3).repeat().take(7))) == [0, 1, 2, 0, 1, 2, 0]
    assert flat(elements(tf.data.Dataset.range(5).take(-1))) == [0, 1, 2, 3, 4]
    assert flat(elements(tf.data.Dataset.range(5).take(0))) == []
    assert flat(elements(tf.data.Dataset.range(5).skip(3))) == [3, 4]
    assert flat(elements(tf.data.Dataset.range(5).skip(-1))) == []
    assert flat(elements(tf.data.Dataset.range(10).shard(3, 1))) == [1, 4, 7]
    with pytest.raises(tf.errors.InvalidArgumentError, match="shard"):
        tf.data.Dataset.range(10).shard(3, 3)
    assert flat(elements(tf.data.Dataset.range(0).repeat())) == []


def test_cache_memory_and_file(tmp_path):
    calls = []

    def gen():
        calls.append(1)
        yield from range(4)

    ds = tf.data.Dataset.from_generator(gen, tf.int64, tf.TensorShape([])).cache().repeat(3)
    assert flat(elements(ds)) == [0, 1, 2, 3] * 3
    assert len(calls) == 1
    calls.clear()
    fds = tf.data.Dataset.from_generator(gen, tf.int64, tf.TensorShape([])).cache(str(tmp_path / "c"))
    assert flat(elements(fds)) == [0, 1, 2, 3]
    assert flat(elements(fds)) == [0, 1, 2, 3]  # a second iterator reads the completed file
    assert len(calls) == 1


def test_prefetch_and_apply():
    ds = tf.data.Dataset.range(100).map(lambda x: x + 1).prefetch(3)
    assert flat(elements(ds)) == list(range(1, 101))
    ds = tf.data.Dataset.range(10).apply(lambda d: d.batch(4)).prefetch(tf.data.experimental.AUTOTUNE)
    assert [g.tolist() for g in elements(ds)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]

    def boom():
        yield 1
        raise RuntimeError("broken source")

    bad = tf.data.Dataset.from_generator(boom, tf.int64, tf.TensorShape([])).prefetch(2)
    nxt = bad.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert s.run(nxt) == 1
        with pytest.raises(tf.errors.InvalidArgumentError, match="broken source"):
            s.run(nxt)


def test_output_classes():
    ds = tf.data.Dataset.from_tensor_slices(([1], {"a": [2.0]}))
    assert ds.output_classes == (tf.Tensor, {"a": tf.Tensor})
    assert tf.data.get_output_types(ds) == (tf.int32, {"a": tf.float32})


@pytest.mark.parametrize("buffer_size", [1, 2, 7, 40, 100])
def test_block_shuffle_is_one_order_whoever_consumes_it(buffer_size):
    """Over row-block sources (tensor slices, Zarr, dask) shuffle and batch run vectorized; the
    order is the pipeline's, the same whether rows or batches are read."""
    data = np.arange(60)
    rows = flat(elements(tf.data.Dataset.from_tensor_slices(data).shuffle(buffer_size, seed=8)))
    batches = elements(tf.data.Dataset.from_tensor_slices(data).shuffle(buffer_size, seed=8).batch(9))
    assert [len(b) for b in batches] == [9] * 6 + [6]
    assert [int(v) for b in batches for v in b] == rows
    assert sorted(rows) == list(range(60))
    if buffer_size == 1:
        assert rows == list(range(60))
    else:
        assert rows != list(range(60))
    for pos, v in enumerate(rows):  # no row comes out before its input position minus the buffer
        assert v <= pos + buffer_size


def test_closing_the_session_stops_pipeline_threads():
    import threading
    import time

    def live():
        return [t for t in threading.enumerate() if t.name.startswith("dflow-data")]

    before = len(live())
    nxt = tf.data.Dataset.range(10**6).map(lambda x: x + 1, num_parallel_calls=2).prefetch(4) \
        .make_one_shot_iterator().get_next()
    sess = tf.Session()
    assert sess.run(nxt) == 1
    assert len(live()) > before
    sess.close()
    for _ in range(100):
        if len(live()) == before:
            break
        time.sleep(0.05)
    assert len(live()) == before


def test_map_reads_a_variable_snapshot_and_ignores_outer_control_dependencies():
    v = tf.Variable(3.0)
    with tf.control_dependencies([tf.assign_add(v, 100.0)]):  # must not run per element
        ds = tf.data.Dataset.from_tensor_slices([1.0, 2.0]).map(lambda x: x * v)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert [float(sess.run(nxt)), float(sess.run(nxt))] == [3.0, 6.0]
        assert float(sess.run(v)) == 3.0


@pytest.mark.parametrize("values", [["ab", "cde", "f"], [b"ab", b"cde", b"f"],
                                    np.array([b"ab", b"cde", b"f"], dtype=object), np.array(["ab", "cde", "f"])])
def test_string_slices_come_out_as_bytes(values):
    nxt = tf.data.Dataset.from_tensor_slices(values).make_one_shot_iterator().get_next()
    batched = tf.data.Dataset.from_tensor_slices(values).batch(2).make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert [s.run(nxt) for _ in range(3)] == [b"ab", b"cde", b"f"]
        first = s.run(batched)
        assert first.dtype == object and list(first) == [b"ab", b"cde"]


def test_map_takes_tf13_num_threads_and_output_buffer_size():
    """The seed's `dataset.map(parse, num_threads=8)` (TF 1.3's arguments: num_threads is
    num_parallel_calls, output_buffer_size a prefetch after the map)."""
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(10).cache().map(lambda x: x * 2, num_threads=8).batch(4)
        assert [list(b) for b in elements(ds)] == [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]
        ds = tf.data.Dataset.range(5).map(lambda x: x + 1, num_threads=2, output_buffer_size=3)
        assert elements(ds) == [1, 2, 3, 4, 5]
        with pytest.raises(ValueError, match="not both"):
            tf.data.Dataset.range(5).map(lambda x: x, num_parallel_calls=2, num_threads=2)
