"""TensorFlow's graph files (GraphDef .pb/.pbtxt, .meta, saved_model.pb) into dflow graphs and back.

Fixtures and TF's outputs on them are made by tools/make_tf_graph_fixtures.py (TensorFlow needed
only there). The slow test has TensorFlow (env TF_PYTHON) import what dflow wrote.
"""

import os
import subprocess
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from tensorboard.compat.proto import graph_pb2

import dflow as tf
from dflow.errors import DataLossError, InvalidArgumentError
from dflow.io import tf_graph

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "tf_graphs"


def _fixture(name):
    z = np.load(FIX / f"{name}.npz")
    feeds = {f: z["in_" + f.replace(":", "_").replace("/", "__")] for f in z["feeds"]}
    return feeds, list(z["fetches"]), [z[f"out_{i}"] for i in range(len(z["fetches"]))]


def _run_imported(data, name, **kw):
    feeds, fetches, expected = _fixture(name)
    g = tf.Graph()
    with g.as_default():
        gd = tf.GraphDef()
        gd.ParseFromString(data)
        tf.import_graph_def(gd, name="", **kw)
        with tf.Session() as s:
            return s.run(fetches, feeds), expected


@pytest.mark.parametrize("ext", [".pb", ".pbtxt"])
@pytest.mark.parametrize("name", ["mlp", "cnn", "batch_norm", "batch_norm_training", "embedding"])
def test_frozen_graphs_match_tensorflow(name, ext):
    outs, expected = _run_imported((FIX / f"{name}{ext}").read_bytes(), name)
    for got, want in zip(outs, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_read_graph_def_reads_tensorflow_files():
    gd = tf.train.read_graph_def(str(FIX / "cnn.pb")) if hasattr(tf.train, "read_graph_def") else \
        tf.io.read_graph_def(str(FIX / "cnn.pb"))
    ops = {n.op for n in gd.node}
    assert {"Conv2D", "DepthwiseConv2dNative", "MaxPool", "AvgPool", "MatMul"} <= ops
    assert "BiasAdd" not in ops and "Softmax" not in ops  # expanded into dflow ops


def test_resource_variables_become_dflow_variables():
    feeds, fetches, expected = _fixture("resource_vars")
    g = tf.Graph()
    with g.as_default():
        gd = tf.GraphDef()
        gd.ParseFromString((FIX / "resource_vars.pbtxt").read_bytes())
        assert {"VariableV2", "Assign"} <= {n.op for n in gd.node}
        tf.import_graph_def(gd, name="")
        with tf.Session() as s:
            s.run("init")
            np.testing.assert_allclose(s.run(fetches, feeds)[0], expected[0], rtol=1e-6)


def test_import_graph_def_input_map_return_elements_and_name():
    feeds, _, expected = _fixture("mlp")
    x = feeds["x:0"]
    gd = tf.GraphDef()
    gd.ParseFromString((FIX / "mlp.pb").read_bytes())
    g = tf.Graph()
    with g.as_default():
        doubled = tf.placeholder(tf.float32, [None, 4], name="half") * 2.0
        probs, op = tf.import_graph_def(gd, input_map={"x:0": doubled}, return_elements=["probs:0", "probs"],
                                        name="model")
        assert probs.name == "model/probs:0" and op.name == "model/probs"
        with tf.Session() as s:
            np.testing.assert_allclose(s.run(probs, {"half:0": x / 2.0}), expected[0], rtol=1e-5, atol=1e-6)


def test_imported_mlp_can_be_differentiated_and_trained():
    feeds, _, _ = _fixture("mlp_ckpt")
    g = tf.Graph()
    with g.as_default(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tf.train.import_meta_graph(str(FIX / "mlp_ckpt" / "model.ckpt-3.meta"))
        loss = g.get_tensor_by_name("loss:0")
        assert len(tf.trainable_variables()) == 6
        grads = tf.gradients(loss, tf.trainable_variables())
        assert all(gr is not None for gr in grads)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            first = s.run(loss, feeds)
            for _ in range(20):
                s.run(train, feeds)
            assert s.run(loss, feeds) < first


def test_import_meta_graph_rebuilds_collections_and_saver():
    g = tf.Graph()
    with g.as_default(), pytest.warns(UserWarning, match="ApplyAdam"):
        saver = tf.train.import_meta_graph(str(FIX / "mlp_ckpt" / "model.ckpt-3.meta"))
    with g.as_default():
        names = {v.op.name for v in tf.global_variables()}
        assert {"dense1/kernel", "logits/bias", "global_step", "dense1/kernel/Adam"} <= names
        assert saver is not None
        feeds, _, expected = _fixture("mlp_ckpt")
        with tf.Session() as s:
            try:
                saver.restore(s, str(FIX / "mlp_ckpt" / "model.ckpt-3"))
            except Exception as e:  # noqa: BLE001
                pytest.skip(f"this dflow's Saver does not read TensorFlow checkpoints yet ({type(e).__name__})")
            np.testing.assert_allclose(s.run("probs:0", feeds), expected[0], rtol=1e-5, atol=1e-6)


def test_tensorflow_saved_model_loads():
    feeds, fetches, expected = _fixture("mlp_saved_model")
    g = tf.Graph()
    with g.as_default(), tf.Session() as s:
        try:
            meta = tf.saved_model.loader.load(s, ["serve"], str(FIX / "mlp_saved_model"))
        except Exception as e:  # noqa: BLE001
            if "checkpoint" not in str(e):
                raise
            pytest.skip(f"this dflow's Saver does not read TensorFlow checkpoints yet ({type(e).__name__})")
        sig = meta.signature_def["serving_default"]
        assert sig.inputs["x"].name == "x:0" and sig.outputs["probs"].name == "probs:0"
        np.testing.assert_allclose(s.run(sig.outputs["probs"].name, {sig.inputs["x"].name: feeds["x:0"]}),
                                   expected[0], rtol=1e-5, atol=1e-6)


def test_tensorflow_saved_model_graph_is_read():
    from dflow.io.saved_model import read_saved_model

    sm = read_saved_model(str(FIX / "mlp_saved_model"))
    assert sm.tensorflow and sm.meta_graphs[0].meta_info_def["tags"] == ["serve"]
    assert "serving_default" in sm.meta_graphs[0].signature_def


@pytest.mark.parametrize("cut", ["truncated", "garbage", "empty"])
def test_damaged_files_are_data_loss_naming_the_file(tmp_path, cut):
    data = (FIX / "mlp.pb").read_bytes()
    bad = {"truncated": data[:len(data) // 2 + 3], "garbage": bytes(range(7, 250)) * 3, "empty": b""}[cut]
    path = tmp_path / "model.pb"
    path.write_bytes(bad)
    with pytest.raises(DataLossError, match="model.pb"):
        tf.io.read_graph_def(str(path)) if hasattr(tf.io, "read_graph_def") else \
            tf.train.read_graph_def(str(path))
    meta = tmp_path / "model.meta"
    meta.write_bytes(bad)
    with pytest.raises(DataLossError, match="model.meta"):
        tf.train.import_meta_graph(str(meta))


def test_unknown_op_is_refused_on_import_naming_type_node_and_supported():
    proto = graph_pb2.GraphDef()
    proto.ParseFromString((FIX / "mlp.pb").read_bytes())
    weird = proto.node.add(name="strange", op="FooBarBaz")
    weird.input.append("probs")
    gd = tf.GraphDef()
    gd.ParseFromString(proto.SerializeToString())  # reading keeps it, marked
    g = tf.Graph()
    with g.as_default():
        with pytest.raises(InvalidArgumentError, match=r"FooBarBaz.*strange.*Conv2D"):
            tf.import_graph_def(gd, name="")
        assert g.get_operations() == []  # nothing half-imported


def test_control_flow_without_lowering_is_refused_naming_switch():
    try:
        import dflow.io.tf_control_flow  # noqa: F401
        pytest.skip("TF1 control flow is lowered by dflow/io/tf_control_flow.py")
    except ImportError:
        pass
    gd = tf.GraphDef()
    gd.ParseFromString((FIX / "cond.pb").read_bytes())
    with tf.Graph().as_default(), pytest.raises(InvalidArgumentError, match=r"'Switch'|'Merge'"):
        tf.import_graph_def(gd, name="")


def _small_model(rng):
    x = tf.placeholder(tf.float32, [None, 6, 6, 2], name="x")
    w = tf.constant(rng.randn(3, 3, 2, 3).astype(np.float32))
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), tf.constant([0.1, -0.2, 0.3])))
    h = tf.reshape(tf.nn.avg_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), [-1, 27])
    d = tf.matmul(h, tf.constant(rng.randn(27, 4).astype(np.float32)))
    y = tf.nn.softmax(tf.concat([d, tf.reduce_max(d, 1, keepdims=True)], 1), name="y")
    tf.identity(tf.gather(y, [1, 3], axis=1) + tf.cast(tf.shape(y)[0], tf.float32), name="y2")
    return x


@pytest.mark.parametrize("as_text", [False, True])
def test_written_tensorflow_graph_reads_back(tmp_path, as_text):
    rng = np.random.RandomState(1)
    xv = rng.randn(3, 6, 6, 2).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = _small_model(rng)
        with tf.Session() as s:
            want = s.run(["y:0", "y2:0"], {x: xv})
    path = tf.train.write_graph(g, str(tmp_path), "g.pbtxt" if as_text else "g.pb", as_text=as_text,
                                format="tensorflow")
    data = Path(path).read_bytes()
    assert not tf_graph.is_json(data)
    proto = graph_pb2.GraphDef()
    if as_text:
        from google.protobuf import text_format

        text_format.Parse(data.decode(), proto)
    else:
        proto.ParseFromString(data)
    assert "AddV2" in {n.op for n in proto.node}
    g2 = tf.Graph()
    with g2.as_default():
        gd = tf.GraphDef()
        gd.ParseFromString(data)
        tf.import_graph_def(gd, name="")
        with tf.Session() as s:
            got = s.run(["y:0", "y2:0"], {"x:0": xv})
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_cond_of_constants_is_written_and_a_loop_gradient_is_refused(tmp_path):
    # a cond whose branches are constants only: they hang on the branch pivots (control inputs)
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.bool, [], name="p")
        tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0), name="c")
        tf.train.write_graph(g, str(tmp_path), "c.pb", as_text=False, format="tensorflow")
    proto = graph_pb2.GraphDef.FromString((tmp_path / "c.pb").read_bytes())
    consts = [n for n in proto.node if n.op == "Const"]
    assert consts and all(any(i.startswith("^c/switch_") for i in n.input) for n in consts)
    back = tf.Graph()
    with back.as_default():
        gd = tf.GraphDef()
        gd.ParseFromString((tmp_path / "c.pb").read_bytes())
        tf.import_graph_def(gd, name="")
        with tf.Session() as s:
            assert [s.run("c:0", {"p:0": v}) for v in (True, False)] == [1.0, 2.0]
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        y = tf.while_loop(lambda v: tf.reduce_sum(v) < 10.0, lambda v: v * 2.0, [x])
        tf.gradients(y, x)
        with pytest.raises(InvalidArgumentError, match="WhileGrad.*gradient of a tf.while_loop"):
            tf.train.write_graph(g, str(tmp_path), "w.pb", format="tensorflow")
    assert not (tmp_path / "w.pb").exists()


@pytest.mark.slow
def test_tensorflow_imports_what_dflow_wrote(tmp_path):
    tf_python = os.environ.get("TF_PYTHON")
    if not tf_python:
        pytest.skip("set TF_PYTHON to a Python with TensorFlow")
    rng = np.random.RandomState(2)
    xv = rng.randn(2, 6, 6, 2).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = _small_model(rng)
        v = tf.Variable(np.ones((3,), np.float32), name="v")
        tf.identity(v * 2.0, name="v2")
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            want = s.run(["y:0", "y2:0"], {x: xv})
            frozen = tf.graph_util.convert_variables_to_constants(s, g.as_graph_def(), ["y", "y2"])
            saver = tf.train.Saver()
        tf.train.write_graph(frozen, str(tmp_path), "f.pb", as_text=False, format="tensorflow")
        tf.train.write_graph(frozen, str(tmp_path), "f.pbtxt", as_text=True, format="tensorflow")
        tf.train.export_meta_graph(str(tmp_path / "m.meta"), saver=saver, format="tensorflow")
    np.savez(tmp_path / "io.npz", x=xv, y=want[0], y2=want[1])
    script = textwrap.dedent(f"""
        import numpy as np, tensorflow.compat.v1 as tf
        from google.protobuf import text_format
        tf.disable_v2_behavior()
        d = {str(tmp_path)!r}
        z = np.load(d + "/io.npz")
        for f in ("f.pb", "f.pbtxt"):
            with tf.Graph().as_default():
                gd = tf.GraphDef()
                data = open(d + "/" + f, "rb").read()
                text_format.Parse(data.decode(), gd) if f.endswith("txt") else gd.ParseFromString(data)
                tf.import_graph_def(gd, name="")
                with tf.Session() as s:
                    a, b = s.run(["y:0", "y2:0"], {{"x:0": z["x"]}})
                    assert np.allclose(a, z["y"], atol=1e-5) and np.allclose(b, z["y2"], atol=1e-5), f
        with tf.Graph().as_default():
            tf.train.import_meta_graph(d + "/m.meta")
            assert {{v.op.name for v in tf.global_variables()}} == {{"v"}}
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                assert np.allclose(s.run("v2:0"), 2.0)
                assert np.allclose(s.run("y:0", {{"x:0": z["x"]}}), z["y"], atol=1e-5)
        print("TF-OK")
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([tf_python, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert "TF-OK" in r.stdout, r.stderr[-3000:]


@pytest.mark.parametrize("name", ["mlp", "cnn", "batch_norm_training"])
def test_imported_graphs_run_on_every_scheduler_and_out_of_core(name, tmp_path):
    """An imported TensorFlow graph is an ordinary dflow graph: the same answers in process, on
    sync / threads / processes and a LocalCluster, and fed from a Zarr array chunk by chunk."""
    import zarr

    from tests.conftest import ALL_MODES, run_modes

    feeds, fetches, expected = _fixture(name)
    g = tf.Graph()
    with g.as_default():
        gd = tf.GraphDef()
        gd.ParseFromString((FIX / f"{name}.pb").read_bytes())
        tf.import_graph_def(gd, name="")
    outs = run_modes([g.get_tensor_by_name(f) for f in fetches], {g.get_tensor_by_name(k): v for k, v in feeds.items()},
                     modes=ALL_MODES, graph=g)
    for got, want in zip(outs, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if name == "batch_norm_training":  # batch statistics: not row-wise, so not chunked by rows below
        return
    (feed, value), = feeds.items()
    rows = np.concatenate([value] * 50)
    z = zarr.create_array(str(tmp_path / "x.zarr"), shape=rows.shape, chunks=(len(value) * 4,) + rows.shape[1:],
                          dtype=rows.dtype)
    z[:] = rows
    with g.as_default(), tf.Session(memory_budget="64MB", small_plan_bytes=0) as s:
        got = s.run(fetches[0], {feed: z})
    np.testing.assert_allclose(got, np.concatenate([expected[0]] * 50), rtol=1e-5, atol=1e-5)


def test_a_py_func_node_is_refused_at_import_naming_it():
    """#29: a TensorFlow graph with a tf.py_func (tools/make_tf_py_func_fixture.py) is refused when
    imported, naming the node and why, not when it would run; nothing is half-imported."""
    gd = tf.GraphDef()
    gd.ParseFromString((FIX / "py_func.pb").read_bytes())
    g = tf.Graph()
    with g.as_default():
        with pytest.raises(InvalidArgumentError, match=r"'PyFunc' of node 'double_it'.*tf\.py_func") as info:
            tf.import_graph_def(gd, name="")
        assert g.get_operations() == []
    assert "graph file holds only the function's token" in str(info.value)
    assert "Conv2D" not in str(info.value)  # the reason, not the list of supported op types
