"""dflow writing TensorFlow's files: control flow in GraphDefs, the save/restore subgraph of .meta
files, SavedModels (saved_model.pb + a V2 checkpoint). Normal tests: dflow writes, dflow reads
back, same answers. Slow tests (env TF_PYTHON): TensorFlow 2.21 loads and runs what dflow wrote.
"""

import json
import os
import subprocess
import textwrap
import warnings

import numpy as np
import pytest
from tensorboard.compat.proto import graph_pb2, meta_graph_pb2

import dflow as tf
from dflow import proto
from dflow.errors import InvalidArgumentError, NotFoundError
from tests.conftest import run_tf

X = np.array([[1, 2, 3], [-4, 5, -6]], np.float32)
FETCHES = ["y:0", "z:0", "i:0", "s:0", "k:0"]


def _control_flow_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        p = tf.placeholder(tf.bool, [], name="p")
        w = tf.constant(np.arange(3, dtype=np.float32), name="w")
        # captured tensors (x, w) and a constant made inside a branch
        y = tf.cond(p, lambda: x * 2.0 + w, lambda: x + tf.constant(1.0))
        # a nested cond, an outer tensor returned as it is
        z = tf.cond(p, lambda: tf.cond(tf.reduce_sum(x) > 0, lambda: x - 1.0, lambda: w * x), lambda: x)
        # several loop vars, maximum_iterations, a captured tensor
        i, s, k = tf.while_loop(lambda i, s, k: i < 5, lambda i, s, k: (i + 1, s * 2.0 + w, k + tf.reduce_sum(s)),
                                [tf.constant(0), x, tf.constant(0.0)], maximum_iterations=3)
        for t, n in ((y, "y"), (z, "z"), (i, "i"), (s, "s"), (k, "k")):
            tf.identity(t, name=n)
    return g


def _run(g, feeds_by_p):
    with g.as_default(), tf.Session() as sess:
        return [sess.run(FETCHES, {"x:0": X, "p:0": p}) for p in feeds_by_p]


def _read_tf_graph(data):
    g = tf.Graph()
    with g.as_default():
        gd = tf.GraphDef()
        gd.ParseFromString(data)
        tf.import_graph_def(gd, name="")
    return g


@pytest.mark.parametrize("as_text", [False, True])
def test_cond_and_while_round_trip_through_tensorflow_graph_def(tmp_path, as_text):
    g = _control_flow_graph()
    want = _run(g, (True, False))
    name = "cf.pbtxt" if as_text else "cf.pb"
    tf.train.write_graph(g, str(tmp_path), name, as_text=as_text, format="tensorflow")
    data = (tmp_path / name).read_bytes()
    ops = {n.op for n in graph_pb2.GraphDef.FromString(data).node} if not as_text else set()
    if not as_text:
        assert {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"} <= ops
        assert not ops & {"Cond", "While"}
    back = _read_tf_graph(data)
    assert {"Cond", "While"} <= {o.type for o in back.get_operations()}
    got = _run(back, (True, False))
    for a, b in zip(got, want):
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v)


def _bn_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        tr = tf.placeholder(tf.bool, [], name="training")
        h = tf.layers.dense(x, 3, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(0.1))
        y = tf.layers.batch_normalization(h, training=tr)
        tf.identity(y, name="out")
    return g


XB = np.arange(12, dtype=np.float32).reshape(3, 4)


def _bn_steps(sess, g):
    """A training step (moving averages updated) then an inference run."""
    with g.as_default():
        ups = g.get_collection(tf.GraphKeys.UPDATE_OPS)
        train_out = sess.run(["out:0"] + [u.name if hasattr(u, "name") else u for u in ups],
                             {"x:0": XB, "training:0": True})[0]
    return train_out, sess.run("out:0", {"x:0": XB, "training:0": False})


def test_batch_norm_with_training_placeholder_meta_and_checkpoint_round_trip(tmp_path):
    g = _bn_graph()
    with g.as_default(), tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _bn_steps(sess, g)
        want = sess.run("out:0", {"x:0": XB, "training:0": False})
        prefix = tf.train.Saver(format="tensorflow").save(sess, str(tmp_path / "model"), global_step=3)
    assert os.path.isfile(prefix + ".index") and os.path.isfile(prefix + ".meta")
    meta = meta_graph_pb2.MetaGraphDef.FromString(open(prefix + ".meta", "rb").read())
    assert meta.saver_def.restore_op_name == "save/restore_all"
    assert meta.saver_def.filename_tensor_name == "save/Const:0"
    names = {n.name: n.op for n in meta.graph_def.node}
    assert names["save/SaveV2"] == "SaveV2" and names["save/RestoreV2"] == "RestoreV2"
    g2 = tf.Graph()
    with g2.as_default(), tf.Session() as sess, warnings.catch_warnings():
        warnings.simplefilter("error")  # the save/restore subgraph is dropped quietly
        saver = tf.train.import_meta_graph(prefix + ".meta")
        assert not [o.name for o in g2.get_operations() if o.name.startswith("save/")]
        saver.restore(sess, prefix)
        np.testing.assert_allclose(sess.run("out:0", {"x:0": XB, "training:0": False}), want, rtol=1e-6)
        # the conds of batch norm came back: a training step still updates the moving averages
        np.testing.assert_allclose(sess.run("out:0", {"x:0": XB, "training:0": True}).mean(0), 0, atol=1e-5)


def test_while_gradient_and_tensor_arrays_are_named_when_refused(tmp_path):
    g = tf.Graph()
    with g.as_default():
        seq = tf.placeholder(tf.float32, [2, 5, 3], name="seq")
        out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(4), seq, dtype=tf.float32)
    with pytest.raises(InvalidArgumentError, match="TensorArray.*no TensorFlow form"):
        tf.train.write_graph(g, str(tmp_path), "rnn.pb", format="tensorflow")
    assert not os.listdir(tmp_path)


def _mlp(train_steps=20):
    rng = np.random.RandomState(0)
    xs = rng.randn(64, 4).astype(np.float32)
    ys = (xs.sum(1) > 0).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        h = tf.layers.dense(x, 8, activation=tf.nn.relu)
        logits = tf.layers.dense(h, 2)
        probs = tf.nn.softmax(logits, name="probs")
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    sess = tf.Session(graph=g)
    with g.as_default():
        sess.run(tf.global_variables_initializer())
    for _ in range(train_steps):
        sess.run(train, {x: xs, y: ys})
    return g, sess, x, probs, xs[:5]


def test_simple_save_tensorflow_format_round_trip(tmp_path):
    g, sess, x, probs, xs = _mlp()
    want = sess.run(probs, {x: xs})
    export = tmp_path / "export"
    with g.as_default(), pytest.warns(UserWarning, match="training graph"):
        tf.saved_model.simple_save(sess, str(export), {"x": x}, {"probs": probs}, format="tensorflow")
    assert sorted(os.listdir(export)) == ["saved_model.pb", "variables"]
    assert sorted(os.listdir(export / "variables")) == ["variables.data-00000-of-00001", "variables.index"]
    sm = proto.SavedModel.FromString((export / "saved_model.pb").read_bytes())
    (meta,) = sm.meta_graphs
    assert list(meta.meta_info_def.tags) == ["serve"]
    assert meta.signature_def["serving_default"].outputs["probs"].name == "probs:0"
    assert meta.saver_def.version == 2
    assert not [d for d in os.listdir(tmp_path) if d.startswith(".")]  # no staging directory left
    with tf.Graph().as_default(), tf.Session() as s2:
        m = tf.saved_model.loader.load(s2, ["serve"], str(export))
        sig = m.signature_def["serving_default"]
        np.testing.assert_allclose(s2.run(sig.outputs["probs"].name, {sig.inputs["x"].name: xs}), want, rtol=1e-6)


def test_builder_tensorflow_format_several_meta_graphs_as_text_and_assets(tmp_path):
    g, sess, x, probs, xs = _mlp(0)
    want = sess.run(probs, {x: xs})
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    export = tmp_path / "export"
    b = tf.saved_model.builder.SavedModelBuilder(str(export), format="tensorflow")
    with g.as_default(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        asset = tf.constant(str(vocab), name="vocab_path")
        b.add_meta_graph_and_variables(sess, ["serve"], assets_collection=[asset], signature_def_map={
            "serving_default": tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"probs": probs})})
        b.add_meta_graph(["eval"])
    assert not export.exists()  # nothing until save()
    path = b.save(as_text=True)
    assert path == os.fsencode(str(export / "saved_model.pbtxt"))
    assert (export / "assets" / "vocab.txt").read_text() == "a\nb\n"
    text = (export / "saved_model.pbtxt").read_text()
    assert 'filename: "vocab.txt"' in text and "asset_filepaths" in text
    for tags in (["serve"], ["eval"]):
        with tf.Graph().as_default(), tf.Session() as s2:
            tf.saved_model.loader.load(s2, tags, str(export))
            np.testing.assert_allclose(s2.run("probs:0", {"x:0": xs}), want, rtol=1e-6)


def test_builder_tensorflow_format_refusals(tmp_path):
    g, sess, x, probs, xs = _mlp(0)
    with g.as_default():
        b = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "a"), format="tensorflow")
        with pytest.raises(NotFoundError, match="missing.txt"):
            b.add_meta_graph_and_variables(sess, ["serve"], assets_collection=[tf.constant("/nope/missing.txt")])
        with pytest.raises(ValueError, match="format"):
            b.add_meta_graph_and_variables(sess, ["serve"], saver=tf.train.Saver())
        with pytest.raises(ValueError, match="format must be"):
            tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "b"), format="onnx")
        # a signature needing a dflow-only op is refused, naming it
        dot = tf.tensordot(probs, tf.ones([2, 3]), 1)  # dflow's Tensordot op has no TensorFlow form
        sig = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"dot": dot})
        b2 = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "c"), format="tensorflow")
        with pytest.raises(InvalidArgumentError, match="signature 'serving_default'.*Tensordot"), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b2.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"serving_default": sig})
    assert not (tmp_path / "a").exists() and not (tmp_path / "c").exists()


# ---- TensorFlow reads what dflow wrote (slow, TF_PYTHON) -----------------------------------------

def _tf(tf_python, body):
    code = "import json, numpy as np, tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n" + \
        textwrap.dedent(body)
    return run_tf(tf_python, code)


@pytest.mark.slow
def test_tensorflow_runs_exported_cond_and_while(tmp_path, tf_python):
    g = _control_flow_graph()
    want = _run(g, (True, False))
    tf.train.write_graph(g, str(tmp_path), "cf.pb", as_text=False, format="tensorflow")
    out = _tf(tf_python, f"""
        gd = tf.GraphDef(); gd.ParseFromString(open({str(tmp_path / 'cf.pb')!r}, "rb").read())
        x = np.array({X.tolist()!r}, np.float32)
        with tf.Graph().as_default() as g:
            tf.import_graph_def(gd, name="")
            with tf.Session() as s:
                print(json.dumps([[np.asarray(v).tolist() for v in s.run({FETCHES!r}, {{"x:0": x, "p:0": p}})]
                                  for p in (True, False)]))
    """)
    got = json.loads(out.strip().splitlines()[-1])
    for a, b in zip(got, want):
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-6)


@pytest.mark.slow
def test_tensorflow_restores_saver_tensorflow_meta_and_checkpoint(tmp_path, tf_python):
    g = _bn_graph()
    with g.as_default(), tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _bn_steps(sess, g)
        want_infer = sess.run("out:0", {"x:0": XB, "training:0": False})
        tf.train.Saver(format="tensorflow").save(sess, str(tmp_path / "model"), global_step=1)
        want_train, want_after = _bn_steps(sess, g)
    out = _tf(tf_python, f"""
        x = np.array({XB.tolist()!r}, np.float32)
        with tf.Session() as s:
            saver = tf.train.import_meta_graph({str(tmp_path / 'model-1.meta')!r})
            saver.restore(s, tf.train.latest_checkpoint({str(tmp_path)!r}))
            infer = s.run("out:0", {{"x:0": x, "training:0": False}})
            ups = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
            train = s.run(["out:0"] + ups, {{"x:0": x, "training:0": True}})[0]
            after = s.run("out:0", {{"x:0": x, "training:0": False}})
            print(json.dumps([infer.tolist(), train.tolist(), after.tolist()]))
    """)
    infer, train, after = json.loads(out.strip().splitlines()[-1])
    np.testing.assert_allclose(infer, want_infer, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(train, want_train, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(after, want_after, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_tensorflow_loads_trained_mlp_saved_model_and_cli_lists_it(tmp_path, tf_python):
    g, sess, x, probs, xs = _mlp()
    want = sess.run(probs, {x: xs})
    export = tmp_path / "export"
    with g.as_default(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tf.saved_model.simple_save(sess, str(export), {"x": x}, {"probs": probs}, format="tensorflow")
    out = _tf(tf_python, f"""
        with tf.Session() as s:
            meta = tf.saved_model.loader.load(s, ["serve"], {str(export)!r})
            sig = meta.signature_def["serving_default"]
            y = s.run(sig.outputs["probs"].name, {{sig.inputs["x"].name: np.array({xs.tolist()!r}, np.float32)}})
            print(json.dumps(y.tolist()))
    """)
    np.testing.assert_allclose(json.loads(out.strip().splitlines()[-1]), want, rtol=1e-5, atol=1e-7)
    cli = os.path.join(os.path.dirname(tf_python), "saved_model_cli")
    if not os.path.exists(cli):
        pytest.skip("saved_model_cli is not beside TF_PYTHON")
    proc = subprocess.run([cli, "show", "--dir", str(export), "--all"], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "signature_def['serving_default']" in proc.stdout
    assert "inputs['x'] tensor_info" in proc.stdout and "name: probs:0" in proc.stdout
    assert "tensorflow/serving/predict" in proc.stdout


def test_tf1_output_names_survive_export_and_import(tmp_path):
    """dflow's `cond/Merge_1` / `while/Exit_2` Identities become TF's Merge and Exit nodes under
    those names (as TF1 itself writes them), and importing a TF1 graph keeps them fetchable."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        a, b = tf.cond(x > 0, lambda: (x * 2.0, x + 1.0), lambda: (x, x))
        tf.while_loop(lambda i, u, v: i < 3, lambda i, u, v: (i + 1, u * 2.0, v + a), [0, x, b])
    tf.train.write_graph(g, str(tmp_path), "cf.pb", as_text=False, format="tensorflow")
    nodes = {n.name: n for n in graph_pb2.GraphDef.FromString((tmp_path / "cf.pb").read_bytes()).node}
    assert nodes["cond/Merge"].op == nodes["cond/Merge_1"].op == "Merge"
    assert [nodes[f"while/Exit{s}"].op for s in ("", "_1", "_2")] == ["Exit"] * 3
    assert nodes["cond"].op == nodes["while"].op == "IdentityN"
    back = _read_tf_graph((tmp_path / "cf.pb").read_bytes())
    with back.as_default(), tf.Session() as sess:
        got = sess.run(["cond/Merge:0", "cond/Merge_1:0", "while/Exit:0", "while/Exit_1:0", "while/Exit_2:0"],
                       {"x:0": 1.5})
    assert got == [3.0, 2.5, 3, 12.0, 2.5 + 3 * 3.0]


@pytest.mark.slow
def test_tensorflow_fetches_tf1_output_names_of_exported_control_flow(tmp_path, tf_python):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        a, b = tf.cond(x > 0, lambda: (x * 2.0, x + 1.0), lambda: (x, x))
        tf.while_loop(lambda i, u, v: i < 3, lambda i, u, v: (i + 1, u * 2.0, v + a), [0, x, b])
    tf.train.write_graph(g, str(tmp_path), "cf.pb", as_text=False, format="tensorflow")
    out = _tf(tf_python, f"""
        gd = tf.GraphDef(); gd.ParseFromString(open({str(tmp_path / 'cf.pb')!r}, "rb").read())
        with tf.Graph().as_default() as g:
            tf.import_graph_def(gd, name="")
            with tf.Session() as s:
                print(json.dumps([float(v) for v in s.run(["cond/Merge_1:0", "while/Exit_2:0"], {{"x:0": 1.5}})]))
    """)
    assert json.loads(out.strip().splitlines()[-1]) == [2.5, 11.5]
