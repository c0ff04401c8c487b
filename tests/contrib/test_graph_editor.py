"""`tf.contrib.graph_editor`'s common calls: the seed's `get_tensors`, rerouting, connecting and
`graph_replace`, each checked by running the rewired graph against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf

ge = tf.contrib.graph_editor


def test_the_seeds_get_tensors_call(capsys):
    with tf.Graph().as_default():
        a = tf.constant(1)
        b = tf.constant(2)
        a = a + b
        tf.Session().run(a)
        print(tf.contrib.graph_editor.get_tensors(tf.get_default_graph()))
        ts = ge.get_tensors(tf.get_default_graph())
    assert [t.name for t in ts] == ["Const:0", "Const_1:0", "add:0"]
    # TF 1.x printed: [<tf.Tensor 'Const:0' shape=() dtype=int32>, <tf.Tensor 'Const_1:0' ...>, ...]
    out = capsys.readouterr().out
    assert out.startswith("[<tf.Tensor 'Const:0' shape=() dtype=int32>"), out


def test_reroute_ts_makes_consumers_read_another_tensor():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        a = tf.constant([1.0, 2.0, 3.0], name="a")
        b = tf.constant([10.0, 20.0, 30.0], name="b")
        y = tf.multiply(a, x, name="y")
        z = tf.add(y, a, name="z")
        with tf.Session() as sess:
            feed = {x: np.ones(3, np.float32)}
            np.testing.assert_allclose(sess.run(z, feed), [2, 4, 6])  # a plan is cached for this run
            changed = ge.reroute_ts([b], [a])
            assert {op.name for op in changed} == {"y", "z"} and a.consumers() == []
            assert [t.name for t in z.op.inputs] == ["y:0", "b:0"]
            np.testing.assert_allclose(sess.run(z, feed), [20, 40, 60])  # the same Session plans again
            ge.reroute_ts(a, b, can_modify=[z.op])  # only z reads `a` again
            np.testing.assert_allclose(sess.run(z, feed), [11, 22, 33])
            with pytest.raises(TypeError, match="int32"):
                ge.reroute_ts(tf.constant([1, 2, 3]), a)


def test_swap_connect_and_sgv():
    with tf.Graph().as_default():
        a = tf.constant(2.0, name="a")
        b = tf.constant(5.0, name="b")
        u = tf.identity(a, name="u")
        v = tf.identity(b, name="v")
        ge.swap_ts(a, b)
        with tf.Session() as sess:
            assert sess.run([u, v]) == [5.0, 2.0]
        view = ge.sgv(v.op)
        assert [t.name for t in view.inputs] == ["a:0"] and [t.name for t in view.outputs] == ["v:0"]
        c = tf.constant(7.0, name="c")
        ge.connect(ge.sgv(c.op), view)
        with tf.Session() as sess:
            assert sess.run(v) == 7.0


def test_graph_replace_copies_the_subgraph():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        w = tf.Variable([1.0, 2.0], name="w")
        h = tf.tanh(x * w, name="h")
        loss = tf.reduce_sum(tf.square(h), name="loss")
        x2 = tf.constant([0.5, -0.5], name="x2")
        new_loss = ge.graph_replace(loss, {x: x2})
        both = ge.graph_replace({"h": h, "loss": loss}, {x: x2}, dst_scope="copy")
        assert new_loss is not loss and loss.op.inputs[0].op.name == "Square"  # the original is untouched
        assert both["h"].op.name.startswith("copy/")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ref = np.sum(np.tanh(np.array([0.5, -0.5]) * [1.0, 2.0]) ** 2)
            np.testing.assert_allclose(sess.run(new_loss), ref, rtol=1e-6)
            np.testing.assert_allclose(sess.run(both["loss"]), ref, rtol=1e-6)
            np.testing.assert_allclose(sess.run(loss, {x: [1.0, 1.0]}), np.sum(np.tanh([1.0, 2.0]) ** 2), rtol=1e-6)
            # gradients flow through the copy to the shared variable
            g = tf.gradients(new_loss, w)[0]
            ref_g = 2 * np.tanh([0.5, -1.0]) * (1 - np.tanh([0.5, -1.0]) ** 2) * [0.5, -0.5]
            np.testing.assert_allclose(sess.run(g), ref_g, rtol=1e-5)
        assert ge.graph_replace(x2, {x: x2}) is x2  # a target that needs no key: itself
