"""FileWriter: event files read back by TensorBoard's own reader (`EventAccumulator`): scalars and
their steps, histograms, images, the graph, run metadata; a TF1 tutorial-style program on every
path (in process and forced through Dask)."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import dflow as tf


def _accumulator(logdir):
    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0, "histograms": 0, "images": 0, "tensors": 0})
    acc.Reload()
    return acc


@pytest.mark.program
def test_tutorial_program(tmp_path):
    rs = np.random.RandomState(0)
    xs = rs.rand(32, 3).astype(np.float32)
    ys = xs @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.25
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.name_scope("model"):
        w = tf.Variable(tf.zeros([3, 1]), name="weights")
        b = tf.Variable(0.0, name="bias")
        pred = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.square(pred - y))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("weights", w)
    tf.summary.image("input", tf.reshape(x[:2], [2, 1, 3, 1]), max_outputs=2)
    merged = tf.summary.merge_all()
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        writer = tf.summary.FileWriter(str(tmp_path), sess.graph)
        for i in range(6):
            s, lv, _ = sess.run([merged, loss, train], {x: xs, y: ys})
            writer.add_summary(s, i)
            losses.append(lv)
        weights = sess.run(w)
        writer.close()
    assert len(glob.glob(str(tmp_path / "events.out.tfevents.*"))) == 1
    acc = _accumulator(tmp_path)
    tags = acc.Tags()
    assert tags["scalars"] == ["loss"] and tags["histograms"] == ["weights"] and tags["graph"] and tags["meta_graph"]
    assert tags["images"] == ["input/image/0", "input/image/1"]
    events = acc.Scalars("loss")
    assert [e.step for e in events] == list(range(6))
    np.testing.assert_allclose([e.value for e in events], losses, rtol=1e-6)
    assert losses[-1] < losses[0]
    hist = acc.Histograms("weights")
    assert [h.step for h in hist] == list(range(6))
    assert hist[0].histogram_value.num == 3 and hist[0].histogram_value.max == 0.0  # before the first step
    assert hist[-1].histogram_value.num == 3 and hist[-1].histogram_value.max <= weights.max() + 1
    img = acc.Images("input/image/1")[0]
    assert (img.width, img.height, img.step) == (3, 1, 0)
    graph = acc.Graph()
    ops = tf.get_default_graph().get_operations()
    assert len(graph.node) == len(ops) == len(acc.MetaGraph().graph_def.node)
    nodes = {n.name: n for n in graph.node}
    assert nodes["model/weights"].op == "VariableV2"
    mat = next(n for n in graph.node if n.op == "MatMul" and n.name.startswith("model/"))
    assert mat.input[0] == "x" and mat.input[1].startswith("model/weights")  # output 0: the bare op name
    shape = mat.attr["_output_shapes"].list.shape[0]
    assert [d.size for d in shape.dim] == [-1, 1]


def test_graph_control_inputs_and_attrs(tmp_path):
    a = tf.placeholder(tf.float32, [2, 3], name="a")
    with tf.control_dependencies([a.op]):
        tf.identity(tf.constant(np.arange(6, dtype=np.int32).reshape(2, 3)), name="c")
    _, s2 = tf.unstack(a, axis=0, name="un")
    _ = tf.add(s2, 1.0, name="second")
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_graph(tf.get_default_graph())
    nodes = {n.name: n for n in _accumulator(tmp_path).Graph().node}
    assert "^a" in nodes["c"].input
    assert list(nodes["second"].input)[0] == "un:1"
    assert nodes["a"].attr["dtype"].type == 1  # DT_FLOAT
    const = nodes[nodes["c"].input[0]]
    assert const.op == "Const" and np.frombuffer(const.attr["value"].tensor.tensor_content, "<i4").tolist() == \
        list(range(6))
    assert [d.size for d in nodes["a"].attr["_output_shapes"].list.shape[0].dim] == [2, 3]


def test_writer_events_run_metadata_and_session_log(tmp_path):
    x = tf.placeholder(tf.float32, [None])
    y = tf.reduce_sum(x * 2.0)
    writer = tf.summary.FileWriter(str(tmp_path), filename_suffix=".v1")
    assert writer.get_logdir() == str(tmp_path)
    md = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(y, {x: np.ones(4)}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    writer.add_run_metadata(md, "step1", global_step=1)
    with pytest.raises(ValueError, match="already used"):
        writer.add_run_metadata(md, "step1")
    writer.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 0)
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="acc", simple_value=0.75)]), global_step=3)
    writer.add_event(tf.summary.Event(step=4, summary=tf.Summary(value=[tf.Summary.Value(tag="acc",
                                                                                        simple_value=0.5)])))
    writer.flush()
    acc = _accumulator(tmp_path)
    assert [(e.step, e.value) for e in acc.Scalars("acc")] == [(3, 0.75), (4, 0.5)]
    stats = acc.RunMetadata("step1").step_stats
    assert sum(len(d.node_stats) for d in stats.dev_stats) >= 1
    writer.close()
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="acc", simple_value=9.0)]), 5)  # dropped
    assert len(_accumulator(tmp_path).Scalars("acc")) == 2
    writer.reopen()
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="acc", simple_value=0.25)]), 6)
    writer.close()
    # events.out.tfevents.<time>.<host>[.<n>]<suffix>: in the order they were made (first event's time)
    files = sorted(glob.glob(str(tmp_path / "events.out.tfevents.*")),
                   key=lambda f: next(tf.train.summary_iterator(f)).wall_time)
    assert len(files) == 2 and all(f.endswith(".v1") for f in files)
    events = [e for f in files for e in tf.train.summary_iterator(f)]
    assert events[0].file_version == "brain.Event:2"
    assert [e.session_log.status for e in events if e.HasField("session_log")] == [tf.SessionLog.START]
    assert [(e.step, e.summary.value[0].simple_value) for e in events if e.HasField("summary")] == \
        [(3, 0.75), (4, 0.5), (6, 0.25)]


def test_metadata_is_kept_for_a_tags_first_value_only(tmp_path):
    t = tf.summary.text("note", tf.placeholder(tf.string, []))
    with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path)) as writer:
        for i, word in enumerate(["one", "two"]):
            writer.add_summary(sess.run(t, {t.op.inputs[1]: word}), i)
    events = [e for f in glob.glob(str(tmp_path / "events*")) for e in tf.train.summary_iterator(f)
              if e.HasField("summary")]
    assert [e.summary.value[0].HasField("metadata") for e in events] == [True, False]
    tensors = _accumulator(tmp_path).Tensors("note")
    assert [v.tensor_proto.string_val[0] for v in tensors] == [b"one", b"two"]


def test_bad_inputs(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path / "logs"))
    assert os.path.isdir(tmp_path / "logs")
    with pytest.raises(TypeError, match="Summary proto"):
        writer.add_summary(3.0)
    with pytest.raises(TypeError, match="Graph"):
        writer.add_graph("not a graph")
    with pytest.raises(ValueError, match="not both"):
        writer.add_graph(tf.get_default_graph(), graph_def=tf.get_default_graph().as_graph_def())
    writer.close()


def test_file_writer_cache(tmp_path):
    a = tf.summary.FileWriterCache.get(str(tmp_path))
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is a
    tf.summary.FileWriterCache.clear()
    b = tf.summary.FileWriterCache.get(str(tmp_path))
    assert b is not a
    tf.summary.FileWriterCache.clear()
    assert _accumulator(tmp_path).Tags()["graph"]


def test_a_writer_never_closed_is_flushed_at_exit(tmp_path):
    import subprocess
    import sys

    code = ("import dflow as tf\n"
            f"w = tf.summary.FileWriter({str(tmp_path)!r}, flush_secs=3600)\n"
            "for i in range(3):\n"
            "    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag='x', simple_value=i)]), i)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, timeout=120)
    assert [e.step for e in _accumulator(tmp_path).Scalars("x")] == [0, 1, 2]
