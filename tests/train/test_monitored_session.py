"""Monitored training: MonitoredTrainingSession and the hooks, as TF1 programs use them, on the
default session and forced through Dask on every local scheduler (`program` marker)."""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest

import dflow as tf

pytestmark = pytest.mark.program

RNG = np.random.RandomState(0)
X_DATA = RNG.rand(32, 3).astype(np.float32)
Y_DATA = X_DATA @ np.array([[1.0], [-2.0], [0.5]], np.float32)


def _model():
    x = tf.placeholder("float", [None, 3], name="x")
    y = tf.placeholder("float", [None, 1], name="y")
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y), name="mse")
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return x, y, w, loss, step, train


def _numpy_weights(steps, lr=0.1):
    w = np.zeros((3, 1), np.float64)
    for _ in range(steps):
        err = X_DATA @ w - Y_DATA
        w -= lr * 2 * X_DATA.T @ err / len(X_DATA)
    return w


class Recorder(tf.train.SessionRunHook):
    def __init__(self):
        self.calls = []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")
        assert isinstance(coord, tf.train.Coordinator)

    def before_run(self, run_context):
        self.calls.append("before_run")
        return tf.train.SessionRunArgs(tf.train.get_global_step())

    def after_run(self, run_context, run_values):
        self.calls.append(("after_run", int(run_values.results)))

    def end(self, session):
        self.calls.append("end")


def test_hooks_order_counts_and_stop_at_step(tmp_path):
    with tf.Graph().as_default():
        x, y, w, loss, step, train = _model()
        rec = Recorder()
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=[tf.train.StopAtStepHook(5), rec],
                                               save_checkpoint_steps=2) as sess:
            n = 0
            while not sess.should_stop():
                sess.run(train, feed_dict={x: X_DATA, y: Y_DATA})
                n += 1
        assert n == 5
        assert rec.calls == (["begin", "after_create_session"]
                             + [c for k in range(5) for c in ("before_run", ("after_run", k))] + ["end"])
        assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-5")
        np.testing.assert_allclose(tf.train.load_variable(str(tmp_path), "w"), _numpy_weights(5), rtol=1e-5)
        # steps 0 (creation), 2, 4 (save_steps) and 5 (end) were saved
        state = tf.train.get_checkpoint_state(str(tmp_path))
        assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == \
            [f"model.ckpt-{k}" for k in (0, 2, 4, 5)]
        assert not tf.get_default_graph().finalized  # unfinalized again on close


def test_resumes_from_the_latest_checkpoint(tmp_path):
    for last in (4, 9):
        with tf.Graph().as_default():
            x, y, w, loss, step, train = _model()
            with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_steps=100,
                                                   hooks=[tf.train.StopAtStepHook(last_step=last)]) as sess:
                first = sess.run(step)
                while not sess.should_stop():
                    sess.run(train, feed_dict={x: X_DATA, y: Y_DATA})
            assert first == (0 if last == 4 else 4)
    np.testing.assert_allclose(tf.train.load_variable(str(tmp_path), "w"), _numpy_weights(9), rtol=1e-5)
    assert tf.train.load_variable(str(tmp_path), "global_step") == 9


def test_end_is_skipped_on_error_and_out_of_range_ends_cleanly():
    with tf.Graph().as_default():
        it = tf.data.Dataset.range(3).make_one_shot_iterator()
        nxt = it.get_next()
        rec = Recorder()
        tf.train.get_or_create_global_step()
        seen = []
        with tf.train.MonitoredSession(hooks=[rec]) as sess:
            while not sess.should_stop():
                seen.append(int(sess.run(nxt)))
        assert seen == [0, 1, 2] and rec.calls[-1] == "end"
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        rec = Recorder()
        with pytest.raises(ValueError, match="boom"):
            with tf.train.MonitoredSession(hooks=[rec]):
                raise ValueError("boom")
        assert "end" not in rec.calls


def test_logging_nan_feed_and_final_ops_hooks(caplog):
    with tf.Graph().as_default():
        x, y, w, loss, step, train = _model()
        final = tf.train.FinalOpsHook(w)
        feed = tf.train.FeedFnHook(lambda: {x: X_DATA, y: Y_DATA})
        log = tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=2)
        with caplog.at_level(logging.INFO, logger="tensorflow"):
            with tf.train.SingularMonitoredSession(hooks=[tf.train.StopAtStepHook(4), feed, log, final]) as sess:
                assert isinstance(sess.raw_session(), tf.Session)
                while not sess.should_stop():
                    sess.run(train)
        logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("loss = ")]
        assert len(logged) == 2  # iterations 0 and 2
        np.testing.assert_allclose(final.final_ops_values, _numpy_weights(4), rtol=1e-5)
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        nan = tf.sqrt(-v)
        step = tf.train.get_or_create_global_step()
        inc = tf.assign_add(step, 1)
        with pytest.raises(tf.train.NanLossDuringTrainingError, match="NaN loss during training"):
            with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(nan)]) as sess:
                sess.run(inc)
        with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(nan, fail_on_nan_loss=False)]) as sess:
            sess.run(inc)
            assert sess.should_stop()


def test_summaries_and_step_counter_are_written(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with tf.Graph().as_default():
        x, y, w, loss, step, train = _model()
        tf.summary.scalar("loss", loss)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_summaries_steps=3,
                                               log_step_count_steps=2, save_checkpoint_secs=None,
                                               hooks=[tf.train.StopAtStepHook(7)]) as sess:
            losses = []
            while not sess.should_stop():
                losses.append(sess.run([train, loss], feed_dict={x: X_DATA, y: Y_DATA})[1])
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    events = acc.Scalars("loss")
    # as TF1: the summary runs with the updates of runs 0, 3 and 6 (the loss before each update)
    # and is written at the global step after that run
    assert [e.step for e in events] == [1, 4, 7]
    np.testing.assert_allclose([e.value for e in events], [losses[0], losses[3], losses[6]], rtol=1e-6)
    assert "global_step/sec" in acc.Tags()["scalars"]
    assert not list(tmp_path.glob("model.ckpt*"))  # checkpoints off


def test_recovers_from_unavailable_by_restoring_the_checkpoint(tmp_path):
    marker = tmp_path / "failed"  # on disk: the function may run in a worker process

    def flaky(v):
        if not marker.exists() and v >= 3:
            marker.write_text(str(int(v)))
            raise tf.errors.UnavailableError(None, None, "the workers holding 'w' were lost")
        return v

    with tf.Graph().as_default():
        x, y, w, loss, step, train = _model()
        check = tf.py_func(flaky, [step], tf.int64, stateful=True)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path / "ckpt"), save_checkpoint_steps=2,
                                               hooks=[tf.train.StopAtStepHook(last_step=6)]) as sess:
            while not sess.should_stop():
                sess.run([train, check], feed_dict={x: X_DATA, y: Y_DATA})
    assert marker.read_text() == "3"  # failed once at step 3, restored step 2's checkpoint, then went on
    np.testing.assert_allclose(tf.train.load_variable(str(tmp_path / "ckpt"), "w"), _numpy_weights(6), rtol=1e-5)


@pytest.mark.program(modes=["inprocess"])
def test_scaffold_defaults_and_errors():
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        scaffold = tf.train.Scaffold().finalize()
        assert scaffold.saver is tf.get_collection(tf.GraphKeys.SAVERS)[0]
        assert scaffold.summary_op is None and scaffold.init_op is not None
        assert tf.get_default_graph().finalized
    with tf.Graph().as_default():
        tf.add_to_collection(tf.GraphKeys.INIT_OP, tf.no_op())
        tf.add_to_collection(tf.GraphKeys.INIT_OP, tf.no_op())
        with pytest.raises(RuntimeError, match='More than one item in the collection "init_op"'):
            tf.train.Scaffold().finalize()
    with tf.Graph().as_default():
        with pytest.raises(RuntimeError, match="Global step should be created to use StopAtStepHook"):
            tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(1)])
    with pytest.raises(ValueError, match="One of num_steps or last_step must be specified"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="exactly one of every_secs and every_steps"):
        tf.train.SecondOrStepTimer()


@pytest.mark.program(modes=["inprocess"])
def test_coordinator_joins_and_reraises():
    import threading

    coord = tf.train.Coordinator()

    def worker(k):
        with coord.stop_on_exception():
            if k == 1:
                raise ValueError("worker 1 failed")
            coord.wait_for_stop(5)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    with pytest.raises(ValueError, match="worker 1 failed"):
        coord.join(threads, stop_grace_period_secs=5)
    assert coord.should_stop() and all(not t.is_alive() for t in threads)
    clean = tf.train.Coordinator()
    clean.request_stop(tf.errors.OutOfRangeError(None, None, "end"))
    clean.join([])  # OutOfRangeError is a clean stop
    assert tf.train.start_queue_runners() == []


@pytest.mark.program(modes=["inprocess"])
def test_a_non_chief_session_says_it_has_no_chief():
    """dflow's variables live in each session: a non-chief MonitoredTrainingSession, which
    initializes nothing, is refused at once (TF1 would wait for a chief up to max_wait_secs)."""
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        tf.train.get_or_create_global_step()
        with pytest.raises(tf.errors.FailedPreconditionError, match="is_chief=True"):
            tf.train.MonitoredTrainingSession(is_chief=False)
