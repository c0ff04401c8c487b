"""TF1's queue-based input pipeline: readers, input producers, batching, and whole TF1 programs
(CIFAR-style binary records, CSV lines) trained with MonitoredTrainingSession until the input
ends. Keys, names and messages are TensorFlow 2.21's tf.compat.v1 (run by hand on the same files)."""

import numpy as np
import pytest

import dflow as tf


def _drain(sess, fetches, limit=100):
    out = []
    with pytest.raises(tf.errors.OutOfRangeError) as info:
        for _ in range(limit):
            out.append(sess.run(fetches))
    return out, info.value


def _run(fetches, limit=100):
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=20000)) as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            return _drain(sess, fetches, limit)
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "a.csv").write_text("h1,h2\n1,2\n3,4\r\n5,6\n")
    (tmp_path / "b.csv").write_text("h1,h2\n7,8")
    (tmp_path / "r.bin").write_bytes(bytes(range(23)))
    return tmp_path


def test_producer_names_and_collections_as_tf1(files):
    q = tf.train.string_input_producer([str(files / "a.csv")], num_epochs=1, shuffle=False)
    assert q.name == "input_producer"
    assert [v.name for v in tf.local_variables()] == ["input_producer/limit_epochs/epochs:0"]
    (qr,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    assert (qr.name, [o.name for o in qr.enqueue_ops], qr.close_op.name, qr.cancel_op.name) == (
        "input_producer", ["input_producer/input_producer_EnqueueMany"], "input_producer/input_producer_Close",
        "input_producer/input_producer_Close_1")
    assert [s.name for s in tf.get_collection(tf.GraphKeys.SUMMARIES)] == ["input_producer/fraction_of_32_full:0"]
    k, v = tf.TextLineReader(skip_header_lines=1).read(q)
    assert (k.name, v.name) == ("ReaderReadV2:0", "ReaderReadV2:1")
    b = tf.train.batch([v, k], 2)
    assert [t.name for t in b] == ["batch:0", "batch:1"] and b[0].shape.as_list() == [2]


@pytest.mark.timeout(120)
def test_text_line_reader_keys_and_counts(files):
    q = tf.train.string_input_producer([str(files / "a.csv"), str(files / "b.csv")], num_epochs=1, shuffle=False)
    r = tf.TextLineReader(skip_header_lines=1)
    k, v = r.read(q)
    out, err = _run([k, v, r.num_records_produced(), r.num_work_units_completed()])
    # TF 2.21: keys "file:line" counting the header; "\r\n" and a last line without newline read as lines
    assert [(o[0].decode().rsplit("/", 1)[1], o[1], int(o[2])) for o in out] == [
        ("a.csv:2", b"1,2", 1), ("a.csv:3", b"3,4", 2), ("a.csv:4", b"5,6", 3), ("b.csv:2", b"7,8", 4)]
    assert "FIFOQueue '_0_input_producer' is closed and has insufficient elements (requested 1, current size 0)" \
        in str(err)


@pytest.mark.timeout(120)
def test_read_up_to_stays_in_one_file(files):
    q = tf.train.string_input_producer([str(files / "a.csv"), str(files / "b.csv")], num_epochs=1, shuffle=False)
    keys, values = tf.TextLineReader(skip_header_lines=1).read_up_to(q, 2)
    out, _ = _run(values)
    assert [list(o) for o in out] == [[b"1,2", b"3,4"], [b"5,6"], [b"7,8"]]  # TF 2.21


@pytest.mark.timeout(120)
def test_fixed_length_records_header_footer_hop(files):
    q = tf.train.string_input_producer([str(files / "r.bin")], num_epochs=1, shuffle=False)
    k, v = tf.FixedLengthRecordReader(record_bytes=5, header_bytes=2, footer_bytes=3).read(q)
    out, _ = _run([k, v])
    assert [o[1] for o in out] == [bytes(range(2, 7)), bytes(range(7, 12)), bytes(range(12, 17))]
    assert out[0][0].endswith(b"r.bin:0")
    tf.reset_default_graph()
    q = tf.train.string_input_producer([str(files / "r.bin")], num_epochs=1, shuffle=False)
    _, v = tf.FixedLengthRecordReader(record_bytes=5, hop_bytes=3).read(q)
    out, _ = _run(v)
    assert out == [bytes(range(s, s + 5)) for s in range(0, 19, 3)]  # TF 2.21: 7 records


@pytest.mark.timeout(120)
def test_whole_file_and_tfrecord_readers(files):
    path = str(files / "t.tfrecord")
    with tf.python_io.TFRecordWriter(path) as w:
        for rec in [b"x", b"yy", b"zzz"]:
            w.write(rec)
    q = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    k, v = tf.TFRecordReader().read(q)
    out, _ = _run([k, v])
    assert [o[1] for o in out] == [b"x", b"yy", b"zzz"]
    assert [o[0].rsplit(b":", 1)[1] for o in out] == [b"0", b"17", b"35"]  # byte offsets of the records
    tf.reset_default_graph()
    q = tf.train.string_input_producer([str(files / "a.csv"), str(files / "b.csv")], num_epochs=1, shuffle=False)
    k, v = tf.WholeFileReader().read(q)
    out, _ = _run(v)
    assert out == [b"h1,h2\n1,2\n3,4\r\n5,6\n", b"h1,h2\n7,8"]


@pytest.mark.timeout(120)
def test_missing_file_names_it(files):
    q = tf.train.string_input_producer([str(files / "nope.csv")], num_epochs=1, shuffle=False)
    _, v = tf.TextLineReader().read(q)
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=20000)) as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        with pytest.raises(tf.errors.NotFoundError, match="nope.csv"):
            sess.run(v)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)


@pytest.mark.timeout(120)
def test_epochs_shuffle_and_batches():
    q = tf.train.range_input_producer(10, num_epochs=2, shuffle=True, seed=3)
    b = tf.train.batch([q.dequeue()], 4, allow_smaller_final_batch=True)
    out, err = _run(b)
    got = np.concatenate([o[0] for o in out])
    assert [len(o[0]) for o in out] == [4, 4, 4, 4, 4]
    assert sorted(got) == sorted(list(range(10)) * 2)
    assert sorted(got[:10]) == list(range(10))  # one epoch after the other
    assert "FIFOQueue '_1_batch/fifo_queue' is closed and has insufficient elements (requested 4, current size 0)" \
        in str(err)


@pytest.mark.timeout(120)
def test_slice_input_producer_and_batch_without_smaller_final():
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    y = np.arange(5, dtype=np.int32)
    xs, ys = tf.train.slice_input_producer([x, y], num_epochs=1, shuffle=False)
    bx, by = tf.train.batch([xs, ys], 2)
    out, err = _run([bx, by])
    assert len(out) == 2  # the fifth row is left in the queue (TF1)
    np.testing.assert_array_equal(np.concatenate([o[0] for o in out]), x[:4])
    np.testing.assert_array_equal(np.concatenate([o[1] for o in out]), y[:4])
    assert "requested 2, current size 1" in str(err)


@pytest.mark.timeout(120)
def test_enqueue_many_dynamic_pad_dicts_and_maybe_batch():
    x = tf.constant(np.arange(12).reshape(6, 2))
    keep = tf.constant([True, False, True, True, False, True])
    b = tf.train.maybe_batch({"x": x, "i": tf.range(6)}, keep, 2, enqueue_many=True)
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=20000)) as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        out = [sess.run(b) for _ in range(3)]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    assert [list(o["i"]) for o in out] == [[0, 2], [3, 5], [0, 2]] and out[0]["x"].tolist() == [[0, 1], [4, 5]]
    tf.reset_default_graph()
    pq = tf.train.range_input_producer(4, num_epochs=1, shuffle=False)
    n = pq.dequeue()
    padded = tf.train.batch([tf.range(n)], 2, dynamic_pad=True, allow_smaller_final_batch=True)
    out, _ = _run(padded)
    assert [o[0].shape for o in out] == [(2, 1), (2, 3)]
    np.testing.assert_array_equal(out[0][0], [[0], [0]])
    np.testing.assert_array_equal(out[1][0], [[0, 1, 0], [0, 1, 2]])


@pytest.mark.timeout(120)
def test_shuffle_batch_and_joins():
    a = tf.train.range_input_producer(20, num_epochs=1, shuffle=False).dequeue()
    b = tf.train.shuffle_batch([a], 5, capacity=20, min_after_dequeue=5, seed=1, allow_smaller_final_batch=True)
    assert [s.name for s in tf.get_collection(tf.GraphKeys.SUMMARIES)][-1] == \
        "shuffle_batch/fraction_over_5_of_15_full:0"
    out, _ = _run(b)
    got = np.concatenate([o[0] for o in out])
    assert sorted(got) == list(range(20)) and list(got) != list(range(20))
    tf.reset_default_graph()
    lists = [[tf.train.range_input_producer(5, num_epochs=1, shuffle=False).dequeue() + 100 * k] for k in range(2)]
    out, _ = _run(tf.train.batch_join(lists, 2, allow_smaller_final_batch=True))
    got = np.concatenate([o[0] for o in out])
    assert sorted(got) == [0, 1, 2, 3, 4, 100, 101, 102, 103, 104]
    tf.reset_default_graph()
    lists = [[tf.train.range_input_producer(5, num_epochs=1, shuffle=False).dequeue() + 100 * k] for k in range(2)]
    out, _ = _run(tf.train.shuffle_batch_join(lists, 3, 10, 2, seed=2, allow_smaller_final_batch=True))
    assert sorted(np.concatenate([o[0] for o in out])) == [0, 1, 2, 3, 4, 100, 101, 102, 103, 104]


@pytest.mark.timeout(60)
def test_unstarted_runners_block_until_the_timeout():
    q = tf.train.string_input_producer(["a", "b"])
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=200)) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue())


@pytest.mark.program
@pytest.mark.timeout(300)
def test_cifar_style_program(tmp_path):
    """A CIFAR-10 binary-format program: records of 1 label byte + a 4x4x3 image, read by
    FixedLengthRecordReader from string_input_producer, shuffle_batch, a softmax model trained
    with MonitoredTrainingSession until the input's epochs end."""
    rng = np.random.default_rng(0)
    label_bytes, h, w, c = 1, 4, 4, 3
    image_bytes = h * w * c
    names, all_labels = [], []
    for f in range(2):
        labels = rng.integers(0, 2, 30).astype(np.uint8)
        images = (rng.integers(0, 60, (30, c, h, w)) + labels[:, None, None, None] * 120).astype(np.uint8)
        rec = np.concatenate([labels[:, None], images.reshape(30, -1)], axis=1)
        path = tmp_path / f"data_batch_{f}.bin"
        path.write_bytes(rec.tobytes())
        names.append(str(path))
        all_labels.append(labels)

    filename_queue = tf.train.string_input_producer(names, num_epochs=3, shuffle=True, seed=1)
    reader = tf.FixedLengthRecordReader(record_bytes=label_bytes + image_bytes)
    key, value = reader.read(filename_queue)
    record = tf.decode_raw(value, tf.uint8)
    label = tf.cast(tf.strided_slice(record, [0], [label_bytes]), tf.int32)
    depth_major = tf.reshape(tf.strided_slice(record, [label_bytes], [label_bytes + image_bytes]), [c, h, w])
    image = tf.cast(tf.transpose(depth_major, [1, 2, 0]), tf.float32) / 255.0
    label.set_shape([1])
    images, labels = tf.train.shuffle_batch([image, label], batch_size=10, num_threads=2, capacity=50,
                                            min_after_dequeue=20, seed=2)
    logits = tf.layers.dense(tf.reshape(images, [-1, h * w * c]), 2)
    loss = tf.losses.sparse_softmax_cross_entropy(tf.reshape(labels, [-1]), logits)
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=global_step)
    losses = []
    with tf.train.MonitoredTrainingSession(config=tf.ConfigProto(operation_timeout_in_ms=60000)) as sess:
        while not sess.should_stop():
            losses.append(sess.run([loss, train_op])[0])
    # 3 epochs of 60 records in batches of 10; the queue keeps nothing back once closed
    assert len(losses) == 18
    assert np.mean(losses[-3:]) < np.mean(losses[:3])


@pytest.mark.program
@pytest.mark.timeout(300)
def test_csv_program(tmp_path):
    path = tmp_path / "d.csv"
    rows = [(float(i), float(2 * i + 1)) for i in range(20)]
    path.write_text("x,y\n" + "".join(f"{x},{y}\n" for x, y in rows))
    q = tf.train.string_input_producer([str(path)], num_epochs=2, shuffle=False)
    _, line = tf.TextLineReader(skip_header_lines=1).read(q)
    x, y = tf.decode_csv(line, record_defaults=[[0.0], [0.0]])
    bx, by = tf.train.batch([x, y], 5)
    with tf.train.MonitoredTrainingSession(config=tf.ConfigProto(operation_timeout_in_ms=60000)) as sess:
        got = []
        while not sess.should_stop():
            got.append(sess.run([bx, by]))
    xs = np.concatenate([g[0] for g in got])
    np.testing.assert_array_equal(xs, [r[0] for r in rows] * 2)
