"""tf.graph_util.must_run_on_cpu (dflow/graph_util.py): TF1's placement rule."""

import pytest

import dflow as tf


def test_must_run_on_cpu():
    with tf.Graph().as_default() as g:
        s = tf.constant("a")
        i = tf.constant(1)
        f = tf.constant(1.0)
        c = tf.cast(i, tf.float32)
        c2 = tf.cast(f, tf.int32)
        v = tf.Variable(1.0)
    must = tf.graph_util.must_run_on_cpu
    assert must(s.op) and must(i.op) and not must(f.op)
    assert must(c.op) and not must(c2.op)
    assert v.op.type == "VariableV2" and not must(v.op) and must(v.op, pin_variables_on_cpu=True)
    nodes = {n.name: n for n in g.as_graph_def().node}
    assert must(nodes[s.op.name]) and not must(nodes[f.op.name])
    with pytest.raises(TypeError):
        must("Const")
