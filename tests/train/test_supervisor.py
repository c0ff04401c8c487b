"""tf.train.Supervisor and basic_train_loop: TF1's pre-MonitoredSession training loop.

Figures: w starts at 1.0 and each step of gradient descent (rate 0.1) on (w - 3)^2 maps w to
3 - 0.8 (3 - w), so after n steps w = 3 - 2 * 0.8^n (TF 2.21's compat.v1 Supervisor printed
2.34464 after 5 steps and 2.785252 after 10, the second 5 in a restarted program).
"""

from __future__ import annotations

import os
import threading

import pytest

import dflow as tf
from dflow import errors
from dflow.eager import eager_mode
from dflow.summary import summary_iterator


def _w_after(n):
    return 3.0 - 2.0 * 0.8 ** n


def _model():
    global_step = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0, name="w")
    loss = tf.square(w - 3.0)
    tf.summary.scalar("loss", loss)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    return global_step, w, train_op


def _events(logdir):
    out = []
    for name in sorted(os.listdir(logdir)):
        if name.startswith("events.out.tfevents"):
            out.extend(summary_iterator(os.path.join(logdir, name)))
    return out


def _tutorial_program(logdir, steps):
    """A TF1 tutorial's loop: Supervisor, managed_session, should_stop, a final explicit save (no
    timed checkpoints: the timer's first save, at once, could finish after the explicit one and
    point `checkpoint` at it, in TF1 too)."""
    tf.reset_default_graph()
    global_step, w, train_op = _model()
    sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=600)
    with sv.managed_session() as sess:
        print("start at step", sess.run(global_step))
        while not sv.should_stop():
            sess.run(train_op)
            step = sess.run(global_step)
            if step % steps == 0:
                sv.request_stop()
        print("w = %.6f at step %d" % (sess.run(w), step))
        sv.saver.save(sess, sv.save_path, global_step=global_step)


@pytest.mark.program
def test_a_tutorial_program_restarted_continues_from_its_checkpoint(tmp_path, capsys):
    logdir = str(tmp_path / "train")
    _tutorial_program(logdir, 5)
    _tutorial_program(logdir, 5)
    out = capsys.readouterr().out.splitlines()
    assert out == ["start at step 0", "w = %.6f at step 5" % _w_after(5),
                   "start at step 5", "w = %.6f at step 10" % _w_after(10)]
    assert "%.6f" % _w_after(10) == "2.785252"  # TF's figure
    assert tf.train.latest_checkpoint(logdir).endswith("model.ckpt-10")
    files = os.listdir(logdir)
    assert "graph.pbtxt" in files
    logs = [e.session_log.status for e in _events(logdir) if e.HasField("session_log")]
    start, stop = tf.summary.SessionLog.START, tf.summary.SessionLog.STOP
    assert logs.count(start) == 2 and logs.count(stop) == 2 and logs[-1] == stop


def test_defaults_come_from_and_go_to_the_collections_and_the_graph_is_finalized(tmp_path):
    global_step, w, train_op = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path))
    g = tf.get_default_graph()
    assert g.finalized
    assert sv.global_step is g.get_collection(tf.GraphKeys.GLOBAL_STEP)[0]
    assert sv.saver is g.get_collection(tf.GraphKeys.SAVERS)[0]
    assert sv.init_op is g.get_collection(tf.GraphKeys.INIT_OP)[0]
    assert sv.ready_op is g.get_collection(tf.GraphKeys.READY_OP)[0]
    assert sv.summary_op is g.get_collection(tf.GraphKeys.SUMMARY_OP)[0]
    assert sv.save_path == os.path.join(str(tmp_path), "model.ckpt")
    assert sv.is_chief and sv.save_model_secs == 600 and sv.save_summaries_secs == 120
    assert isinstance(sv.coord, tf.train.Coordinator)
    assert isinstance(sv.session_manager, tf.train.SessionManager)
    assert isinstance(sv.summary_writer, tf.summary.FileWriter)
    sv.stop()


def test_a_graph_without_variables_or_global_step_has_no_saver_and_no_step(tmp_path):
    x = tf.constant(2.0) * 3.0
    sv = tf.train.Supervisor(logdir=str(tmp_path))
    assert sv.saver is None and sv.global_step is None and sv.summary_op is None
    with sv.managed_session() as sess:
        assert sess.run(x) == 6.0


def test_a_float_variable_named_global_step_is_not_the_step(tmp_path):
    tf.Variable(0.0, name="global_step")
    sv = tf.train.Supervisor(logdir=str(tmp_path))
    assert sv.global_step is None


def test_the_services_write_summaries_steps_per_second_and_checkpoints_on_their_timers(tmp_path):
    global_step, w, train_op = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=0.05, save_model_secs=0.05)
    with sv.managed_session() as sess:
        for _ in range(3):
            sess.run(train_op)
        for _ in range(1000):  # the timers fire every 0.05 s: wait (10 s at most) for a save after step 3
            latest = tf.train.latest_checkpoint(str(tmp_path))
            if latest and latest.endswith("model.ckpt-3"):
                break
            threading.Event().wait(0.01)
    events = _events(str(tmp_path))
    tags = {v.tag for e in events if e.HasField("summary") for v in e.summary.value}
    assert {"loss", "global_step/sec"} <= tags
    assert any(e.HasField("graph_def") for e in events) and any(e.HasField("meta_graph_def") for e in events)
    checkpoints = [e for e in events if e.HasField("session_log")
                   and e.session_log.status == tf.summary.SessionLog.CHECKPOINT]
    assert checkpoints and checkpoints[0].session_log.checkpoint_path == sv.save_path
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-3")


def test_managed_session_reraises_the_blocks_error_and_swallows_out_of_range(tmp_path):
    global_step, w, train_op = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0)
    with pytest.raises(ValueError, match="boom"):
        with sv.managed_session() as sess:
            raise ValueError("boom")
    with sv.managed_session() as sess:  # a new session after the failure: clear_stop
        sess.run(train_op)
        raise errors.OutOfRangeError(None, None, "input done")
    with pytest.raises(RuntimeError, match="closed"):
        sess.run(train_op)


def test_a_queue_input_program_ends_at_the_end_of_its_epochs(tmp_path):
    data = tf.train.range_input_producer(10, num_epochs=2, shuffle=False)
    total = tf.Variable(0, name="total")
    add = tf.assign_add(total, data.dequeue())
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0, save_summaries_secs=0)
    n = 0
    with sv.managed_session() as sess:
        while not sv.should_stop():
            sess.run(add)
            n += 1
    assert n == 20
    with sv.managed_session() as sess:  # restored from no checkpoint (save_model_secs=0): fresh
        assert sess.run(total) == 0


def test_prepare_or_wait_for_session_stop_and_the_camel_case_names(tmp_path):
    global_step, w, train_op = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0, save_summaries_secs=0)
    assert sv.PrepareSession == sv.prepare_or_wait_for_session and sv.ShouldStop == sv.should_stop
    sess = sv.prepare_or_wait_for_session(start_standard_services=False)
    sess.run(train_op)
    sv.summary_computed(sess, sess.run(sv.summary_op))
    sv.stop()
    sess.close()
    summaries = [e for e in _events(str(tmp_path)) if e.HasField("summary")]
    assert summaries and summaries[-1].step == 1  # at the global step's value


def test_loop_calls_its_target_at_once_and_then_on_its_timer(tmp_path):
    sv = tf.train.Supervisor(logdir=str(tmp_path), summary_writer=None)
    calls = []
    looper = sv.loop(60, calls.append, args=("tick",))
    for _ in range(200):
        if calls:
            break
        threading.Event().wait(0.01)
    sv.stop(threads=[looper])
    assert calls == ["tick"] and not looper.is_alive()


def test_basic_train_loop_runs_steps_until_the_supervisor_stops_and_retries_an_abort(tmp_path):
    global_step, w, train_op = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0, save_summaries_secs=0)
    seen = []

    def step(sess, limit):
        if len(seen) == 2 and "aborted" not in seen:
            seen.append("aborted")
            raise errors.AbortedError(None, None, "a worker was lost")
        seen.append(int(sess.run(global_step)))
        sess.run(train_op)
        if len(seen) >= limit:
            sv.request_stop()

    tf.train.basic_train_loop(sv, step, args=(5,))
    assert seen == [0, 1, "aborted", 0, 1]  # the retry starts a new, freshly initialized session


def test_the_errors_tf1_gives(tmp_path):
    _model()
    sv = tf.train.Supervisor(logdir=None)
    assert sv.summary_writer is None and sv.save_path is None
    with sv.managed_session() as sess:
        with pytest.raises(RuntimeError, match="requires a summary writer"):
            sv.summary_computed(sess, b"")
    tf.reset_default_graph()
    tf.Variable(1.0, name="v")
    with pytest.raises(ValueError, match="all Variables must have their device set: v"):
        tf.train.Supervisor(is_chief=False)
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        tf.Variable(1.0, name="v")
    worker = tf.train.Supervisor(is_chief=False, logdir=str(tmp_path))
    with pytest.raises(RuntimeError, match="Only chief"):
        worker.start_standard_services(None)
    with pytest.raises(errors.FailedPreconditionError, match="not initialized"):
        worker.prepare_or_wait_for_session()
    with eager_mode(), pytest.raises(RuntimeError, match="incompatible with eager execution"):
        tf.train.Supervisor()
