"""`tf.contrib.summary` eagerly (the eager seed's snippet, as written) and in graphs, its event
files read back by dflow's reader and by TensorBoard's own event accumulator."""

from __future__ import annotations

import glob

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator

import dflow as tf
import dflow.contrib.eager as tfe


def _events(logdir):
    out = []
    for f in sorted(glob.glob(str(logdir) + "/events.out.tfevents.*")):
        for e in tf.train.summary_iterator(f):
            for v in e.summary.value:
                out.append((e.step, v.tag, v))
    return out


def _tensorboard_scalars(logdir, tag):
    acc = event_accumulator.EventAccumulator(str(logdir))
    acc.Reload()
    return [(s.step, s.value) for s in acc.Scalars(tag)]


def test_the_eager_seed_snippet_records_every_n_global_steps(tmp_path):
    logdir = str(tmp_path)
    with tfe.eager_mode():
        tf.train.get_or_create_global_step()
        writer = tf.contrib.summary.create_summary_file_writer(logdir)
        for i in range(250):
            loss = tf.constant(float(i) / 10)
            with writer.as_default():
                with tf.contrib.summary.record_summaries_every_n_global_steps(100):
                    tf.contrib.summary.scalar('loss', loss)
            tf.train.get_global_step().assign_add(1)
        writer.flush()
        assert tf.contrib.summary.all_summary_ops() is None  # TF 1.x: None when executing eagerly
    assert [(s, t, v.simple_value) for s, t, v in _events(logdir)] == [(0, "loss", 0.0), (100, "loss", 10.0),
                                                                          (200, "loss", 20.0)]
    got = _tensorboard_scalars(logdir, "loss")
    assert [s for s, _ in got] == [0, 100, 200]
    np.testing.assert_allclose([v for _, v in got], [0.0, 10.0, 20.0])


def test_eager_conditions_and_no_writer(tmp_path):
    with tfe.eager_mode():
        assert tf.contrib.summary.scalar("x", 1.0) is False  # no default writer: nothing recorded
        writer = tf.contrib.summary.create_file_writer(str(tmp_path))
        with writer.as_default():
            assert tf.contrib.summary.scalar("x", 1.0, step=1) is False  # no condition: not recorded (TF 1.x)
            with tf.contrib.summary.always_record_summaries():
                assert tf.contrib.summary.should_record_summaries() is True
                assert tf.contrib.summary.scalar("x", 2.0, step=2) is True
                tf.contrib.summary.histogram("h", np.arange(10.0), step=2)
                tf.contrib.summary.image("img", np.zeros([2, 4, 4, 3], np.float32), max_images=1, step=2)
                with tf.contrib.summary.never_record_summaries():
                    assert tf.contrib.summary.scalar("x", 3.0, step=3) is False
        writer.close()
    ev = _events(tmp_path)
    assert [(s, t) for s, t, _ in ev] == [(2, "x"), (2, "h"), (2, "img/image")]  # one image: no /0, as TF1
    assert ev[1][2].histo.num == 10 and ev[2][2].image.width == 4


def test_graph_mode_ops_write_when_run(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None])
        writer = tf.contrib.summary.create_file_writer(logdir, flush_millis=10)
        with writer.as_default(), tf.contrib.summary.record_summaries_every_n_global_steps(2):
            s1 = tf.contrib.summary.scalar("loss", tf.reduce_mean(x))
            tf.contrib.summary.histogram("values", x)
        with writer.as_default(), tf.contrib.summary.always_record_summaries():
            tf.contrib.summary.scalar("always", tf.reduce_max(x), family="stats")
        assert s1.dtype == tf.bool and len(tf.contrib.summary.all_summary_ops()) == 3
        inc = tf.assign_add(step, 1)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with writer.as_default():  # the graph goes through the default writer, as in TF 1.x
                tf.contrib.summary.initialize(graph=tf.get_default_graph(), session=sess)
            for i in range(4):
                sess.run(tf.contrib.summary.all_summary_ops(), {x: [i, i + 1.0]})
                sess.run(inc)
            sess.run(tf.contrib.summary.flush(writer))
    ev = [(s, t, v.simple_value) for s, t, v in _events(logdir) if t != "values"]
    assert sorted(ev) == sorted([(0, "loss", 0.5), (2, "loss", 2.5)] +
                                [(i, "stats/stats/always", i + 1.0) for i in range(4)])
    assert sorted(s for s, t, _ in _events(logdir) if t == "values") == [0, 2]
    assert [s for s, _ in _tensorboard_scalars(logdir, "loss")] == [0, 2]
    acc = event_accumulator.EventAccumulator(logdir)
    acc.Reload()
    assert acc.Graph() is not None  # initialize(graph=...) wrote the graph


def test_summary_ops_without_a_writer_are_false():
    with tf.Graph().as_default():
        op = tf.contrib.summary.scalar("x", 1.0)
        with tf.Session() as sess:
            assert sess.run(op) == False  # noqa: E712 - a numpy bool
    with pytest.raises(RuntimeError, match="only supported in graph mode"), tfe.eager_mode():
            tf.contrib.summary.summary_writer_initializer_op()
