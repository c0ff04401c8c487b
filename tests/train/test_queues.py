"""TF1's queues (tf.FIFOQueue, RandomShuffleQueue, PaddingFIFOQueue, PriorityQueue), QueueRunner
and Coordinator: names, values and errors as TF1 (figures from TensorFlow 2.21's tf.compat.v1,
run by hand: see each comment), on the in-process path and on Dask schedulers."""

import threading
import time

import numpy as np
import pytest

import dflow as tf

SCHEDULERS = [dict(small_plan_bytes=1 << 30), dict(scheduler="sync"), dict(scheduler="threads")]


def _session(kw, timeout_ms=5000):
    return tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=timeout_ms), **kw)


def test_fifo_names_and_shapes_as_tf1():
    # TF 2.21 tf.compat.v1: op names, types and static shapes of a FIFOQueue(3, [int32], [[2]])'s ops
    q = tf.FIFOQueue(3, [tf.int32], shapes=[[2]])
    assert q.name == "fifo_queue" and q.dtypes == [tf.int32] and q.shapes == [tf.TensorShape([2])]
    assert q.names is None
    ops = [q.enqueue([[1, 2]]), q.enqueue_many([[[3, 4]]]), q.close(), q.close(cancel_pending_enqueues=True)]
    assert [(o.name, o.type) for o in ops] == [
        ("fifo_queue_enqueue", "QueueEnqueueV2"), ("fifo_queue_EnqueueMany", "QueueEnqueueManyV2"),
        ("fifo_queue_Close", "QueueCloseV2"), ("fifo_queue_Close_1", "QueueCloseV2")]
    ts = [q.dequeue(), q.dequeue_many(2), q.dequeue_up_to(3), q.size(), q.is_closed()]
    assert [(t.name, t.op.type, t.shape.as_list()) for t in ts] == [
        ("fifo_queue_Dequeue:0", "QueueDequeueV2", [2]), ("fifo_queue_DequeueMany:0", "QueueDequeueManyV2", [2, 2]),
        ("fifo_queue_DequeueUpTo:0", "QueueDequeueUpToV2", [None, 2]), ("fifo_queue_Size:0", "QueueSizeV2", []),
        ("fifo_queue_Is_Closed:0", "QueueIsClosedV2", [])]
    with tf.name_scope("batch"):
        q2 = tf.FIFOQueue(3, tf.float32)
        assert q2.name == "batch/fifo_queue"
        assert q2.dequeue_many(32).name == "batch/fifo_queue_DequeueMany:0"
    assert tf.RandomShuffleQueue(10, 2, tf.int32).name == "random_shuffle_queue"
    assert tf.PaddingFIFOQueue(10, [tf.int32], shapes=[[None]]).name == "padding_fifo_queue"
    assert tf.PriorityQueue(10, [tf.string], shapes=[[]]).name == "priority_queue"


def test_build_time_errors_as_tf1():
    q = tf.FIFOQueue(3, [tf.int32], shapes=[[2]])
    with pytest.raises(ValueError, match=r"\(3,\) and \(2,\) are incompatible|incompatible"):
        q.enqueue([[1, 2, 3]])
    with pytest.raises(TypeError):
        q.enqueue([[1.5, 2]])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kw", SCHEDULERS, ids=["eager", "sync", "threads"])
def test_fifo_semantics_and_errors(kw):
    q = tf.FIFOQueue(3, [tf.int32], shapes=[[2]])
    e, em = q.enqueue([[1, 2]]), q.enqueue_many([[[3, 4], [5, 6]]])
    d, du = q.dequeue(), q.dequeue_up_to(3)
    with _session(kw, timeout_ms=300) as sess:
        sess.run(e)
        sess.run(em)
        assert sess.run([q.size(), q.is_closed()]) == [3, False]
        np.testing.assert_array_equal(sess.run(du), [[1, 2], [3, 4], [5, 6]])
        # TF1: a blocked dequeue past operation_timeout_in_ms
        with pytest.raises(tf.errors.DeadlineExceededError, match="Timed out waiting for notification"):
            sess.run(d)
        sess.run(q.close())
        assert sess.run(q.is_closed())
        with pytest.raises(tf.errors.CancelledError, match=r"FIFOQueue '_0_fifo_queue' is closed\."):
            sess.run(e)
        with pytest.raises(tf.errors.OutOfRangeError, match=r"FIFOQueue '_0_fifo_queue' is closed and has "
                           r"insufficient elements \(requested 1, current size 0\)"):
            sess.run(d)
    q3 = tf.FIFOQueue(3, [tf.int32])
    with _session(kw) as sess:
        sess.run(q3.enqueue([[1, 2]]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="require the components to have specified shapes"):
            sess.run(q3.dequeue_many(1))
        np.testing.assert_array_equal(sess.run(q3.dequeue()), [1, 2])
    q4 = tf.FIFOQueue(3, [tf.int32], shapes=[[2]])
    x = tf.placeholder(tf.int32, [None])
    with _session(kw) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Shape mismatch in tuple component 0\. "
                           r"Expected \[2\], got \[3\]"):
            sess.run(q4.enqueue([x]), {x: [1, 2, 3]})


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kw", SCHEDULERS, ids=["eager", "sync", "threads"])
def test_queue_kinds_as_tf1(kw):
    pq = tf.PriorityQueue(10, [tf.string], shapes=[[]])
    pd = tf.PaddingFIFOQueue(10, [tf.int32], shapes=[[None]])
    rq = tf.RandomShuffleQueue(10, 2, tf.int32, shapes=[[]], seed=3)
    with _session(kw) as sess:
        # TF 2.21: priorities in ascending order, the strings with them
        sess.run(pq.enqueue_many([[3, 1, 2, 5], [b"c", b"a", b"b", b"e"]]))
        p, s = sess.run(pq.dequeue_many(4))
        np.testing.assert_array_equal(p, [1, 2, 3, 5])
        assert list(s) == [b"a", b"b", b"c", b"e"]
        # TF 2.21: [[1 2 3] [4 0 0]]
        sess.run(pd.enqueue([[1, 2, 3]]))
        sess.run(pd.enqueue([[4]]))
        np.testing.assert_array_equal(sess.run(pd.dequeue_many(2)), [[1, 2, 3], [4, 0, 0]])
        sess.run(rq.enqueue_many([list(range(5))]))
        assert sess.run(rq.size()) == 5
        # min_after_dequeue: 5 - 2 elements may leave while the queue is open
        got = list(sess.run(rq.dequeue_many(3)))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(rq.dequeue(), options=tf.RunOptions(timeout_in_ms=200))
        sess.run(rq.close())
        got += list(sess.run(rq.dequeue_up_to(10)))
        assert sorted(got) == list(range(5))
        with pytest.raises(tf.errors.OutOfRangeError, match="RandomShuffleQueue"):
            sess.run(rq.dequeue_up_to(10))


def test_random_shuffle_seeded_repeats_and_shuffles():
    tf.set_random_seed(7)
    rq = tf.RandomShuffleQueue(100, 0, tf.int32, shapes=[[]], seed=1)
    enq, deq = rq.enqueue_many([list(range(50))]), rq.dequeue_many(50)
    runs = []
    for _ in range(2):
        with tf.Session() as sess:
            sess.run(enq)
            runs.append(sess.run(deq))
    np.testing.assert_array_equal(runs[0], runs[1])
    assert sorted(runs[0]) == list(range(50)) and list(runs[0]) != list(range(50))


def test_names_dicts_and_from_list():
    q = tf.FIFOQueue(5, [tf.int32, tf.float32], shapes=[[], []], names=["a", "b"])
    enq = q.enqueue({"a": 1, "b": 2.5})
    out = q.dequeue()
    assert sorted(out) == ["a", "b"]
    qs = [tf.FIFOQueue(5, tf.int32, shapes=[[]]) for _ in range(2)]
    i = tf.placeholder(tf.int32, [])
    sel = tf.QueueBase.from_list(i, qs)
    with tf.Session() as sess:
        sess.run(enq)
        assert sess.run(out) == {"a": 1, "b": 2.5}
        sess.run(sel.enqueue(7), {i: 1})
        assert sess.run([qs[0].size(), qs[1].size()]) == [0, 1]
        assert sess.run(sel.dequeue(), {i: 1}) == 7
    with pytest.raises(TypeError, match="different component types"):
        tf.QueueBase.from_list(0, [qs[0], tf.FIFOQueue(5, tf.float32, shapes=[[]])])


@pytest.mark.timeout(60)
def test_failed_run_gives_dequeued_elements_back():
    q = tf.FIFOQueue(5, tf.float32, shapes=[[]])
    bad = tf.check_numerics(q.dequeue() / 0.0, "boom")
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1.0, 2.0]]))
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(bad)
        assert sess.run(q.size()) == 2
        assert sess.run(q.dequeue()) == 1.0


@pytest.mark.timeout(60)
def test_blocked_enqueue_waits_for_room_and_cancel_pending_enqueues():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    enq = q.enqueue(1)
    with tf.Session() as sess:
        sess.run(enq)
        errors = []

        def blocked():
            try:
                sess.run(enq)
            except tf.errors.OpError as e:
                errors.append(e)

        t = threading.Thread(target=blocked)
        t.start()
        time.sleep(0.3)
        assert t.is_alive()  # full: waits
        sess.run(q.close(cancel_pending_enqueues=True))
        t.join(10)
        assert not t.is_alive() and isinstance(errors[0], tf.errors.CancelledError)


@pytest.mark.timeout(60)
def test_closing_the_session_wakes_a_blocked_dequeue():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    sess = tf.Session()
    errors = []
    t = threading.Thread(target=lambda: _catch(errors, lambda: sess.run(q.dequeue())))
    t.start()
    time.sleep(0.3)
    sess.close()
    t.join(10)
    assert not t.is_alive() and isinstance(errors[0], tf.errors.CancelledError)


def _catch(errors, fn):
    try:
        fn()
    except tf.errors.OpError as e:
        errors.append(e)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kw", SCHEDULERS, ids=["eager", "sync", "threads"])
def test_queue_runner_with_coordinator(kw):
    counter = tf.Variable(0, dtype=tf.int64, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
    q = tf.FIFOQueue(4, tf.int64, shapes=[[]])
    enq = q.enqueue(counter.count_up_to(10))
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [enq, enq]))
    out = q.dequeue()
    with _session(kw) as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert len(threads) == 3  # two enqueue threads and the one that cancels on stop
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.append(int(sess.run(out)))
        assert sorted(got) == list(range(10))
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)


def test_count_up_to():
    v = tf.Variable(0, dtype=tf.int64, trainable=False, name="epochs")
    c = v.count_up_to(2)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="epochs"):
            sess.run(c)
        sess.run(v.initializer)
        assert [sess.run(c), sess.run(c), sess.run(v)] == [0, 1, 2]
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):  # TF1's message
            sess.run(c)
