"""Graph files: GraphDef round trips, import_graph_def, write_graph, meta graphs (restart a
training job from files alone), freezing (graph_util), and the refusals (callables, unsafe Zarr)."""

from __future__ import annotations

import json
import os
import pathlib
import warnings

import numpy as np
import pytest
import zarr

import dflow as tf
from dflow import graph_util
from dflow.errors import DataLossError, FailedPreconditionError, InvalidArgumentError
from dflow.graph.registry import register_op
from dflow.graph.serialize import GraphDef, NodeDef
from dflow.graph.shape import TensorShape
from dflow.io.graph_io import import_graph_def, read_graph_def, write_graph
from dflow.io.meta_graph import MetaGraphDef, export_meta_graph, import_meta_graph
from tests.conftest import run_modes


def _reimport(graph, path=None):
    """`graph` → bytes (or the file `path`) → GraphDef → a new graph; returns the new graph."""
    if path is None:
        gd = GraphDef()
        gd.ParseFromString(graph.as_graph_def().SerializeToString())
    else:
        gd = read_graph_def(write_graph(graph, os.path.dirname(path), os.path.basename(path),
                                        large_constant_elements=8))
    g2 = tf.Graph()
    with g2.as_default():
        import_graph_def(gd, name="")
    return g2


def _same_answer(graph, fetches, feeds, path=None):
    """Runs `fetches` (names) in `graph` and in its re-imported copy; asserts equal, returns it."""
    want = run_modes([graph.get_tensor_by_name(f) for f in fetches],
                     {graph.get_tensor_by_name(k): v for k, v in feeds.items()}, graph=graph)
    g2 = _reimport(graph, path)
    got = run_modes([g2.get_tensor_by_name(f) for f in fetches],
                    {g2.get_tensor_by_name(k): v for k, v in feeds.items()}, graph=g2)
    for a, b in zip(want, got):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    return got


# ---- round trips -------------------------------------------------------------------------------


def test_elementwise_reduction_matmul_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((4, 3)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.constant(rng.standard_normal((3, 5)).astype(np.float32))
        e = tf.where(x > 0, tf.exp(x) * 2.0, -x, name="e")
        tf.reduce_sum(e, axis=1, keepdims=True, name="rs")
        tf.reduce_mean(tf.square(x), name="rm")
        tf.matmul(x, w, name="mm")
        tf.matmul(w, x, transpose_a=True, transpose_b=True, name="mmt")
        tf.cast(tf.argmax(x, axis=1), tf.float64, name="am")
    got = _same_answer(g, ["e:0", "rs:0", "rm:0", "mm:0", "mmt:0", "am:0"], {"x:0": xv}, str(tmp_path / "g"))
    np.testing.assert_allclose(got[0], np.where(xv > 0, np.exp(xv) * 2, -xv), rtol=1e-6)
    np.testing.assert_allclose(got[3], xv @ g.get_tensor_by_name("Const:0").op.get_attr("value"), rtol=1e-5)


def test_shapes_slices_multi_output_round_trip():
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((6, 4)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        tf.reshape(x, tf.stack([-1, tf.shape(x)[0]]), name="dyn")  # a shape only known when run
        tf.identity(x[1:5:2, ..., tf.newaxis], name="sl")
        a, b = tf.split(x, 2, axis=1)
        tf.concat([b, a], axis=1, name="cat")
        tf.tensordot(x, tf.ones([4, 2]), axes=[[1], [0]], name="td")
        tf.identity(tf.einsum("ij,ij->i", x, x), name="es")
        tf.transpose(tf.one_hot(tf.constant([0, 2]), 3), name="oh")
    got = _same_answer(g, ["dyn:0", "sl:0", "cat:0", "td:0", "es:0", "oh:0"], {"x:0": xv})
    np.testing.assert_array_equal(got[0], xv.reshape(-1, 6))
    np.testing.assert_array_equal(got[1], xv[1:5:2, ..., None])
    np.testing.assert_array_equal(got[2], np.concatenate([xv[:, 2:], xv[:, :2]], axis=1))
    g2 = _reimport(g)
    assert g2.get_tensor_by_name("dyn:0").shape.as_list() == g.get_tensor_by_name("dyn:0").shape.as_list()
    assert g2.get_tensor_by_name("x:0").shape.as_list() == [None, 4]


def test_node_defs_record_types_shapes_devices_and_control_inputs():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0, name="a")
        with tf.device("/cpu:0"), tf.control_dependencies([a]):
            b = tf.placeholder(tf.int64, [2, None], name="b")
        b.set_shape([2, 3])
    gd = GraphDef()
    gd.ParseFromString(g.as_graph_def().SerializeToString())
    node = [n for n in gd.node if n.name == "b"][0]
    assert node["op"] == "Placeholder" and node.input == ["^a"] and "cpu:0" in node.device.lower()
    assert node.output_shapes == [[2, 3]] and node.output_dtypes == ["int64"]
    assert node.attr["dtype"] == tf.int64 and node.attr["shape"].as_list() == [2, None]
    g2 = _reimport(g)
    b2 = g2.get_tensor_by_name("b:0")
    assert b2.shape.as_list() == [2, 3] and [c.name for c in b2.op.control_inputs] == ["a"]
    assert "cpu:0" in b2.device.lower()


def test_attr_values_round_trip_exactly():
    from dflow.graph.serialize import decode_attr, encode_attr

    values = [None, True, 3, -2.5, float("nan"), float("-inf"), "s", [1, (2, 3)], (), {"k": [tf.float32]},
              tf.complex64, TensorShape(None), TensorShape([None, 2]), slice(1, None, -1), Ellipsis, b"\x00\x01",
              1 + 2j, np.float16(1.5), np.int64(-7), np.array([[1, 2]], np.uint16), np.zeros((0, 3), np.bool_),
              np.array(["a", "bc"], dtype=object), np.array(np.pi, np.float64)]
    doc = json.loads(json.dumps([encode_attr(v) for v in values], allow_nan=False))
    for v, d in zip(values, doc):
        back = decode_attr(d)
        assert type(back) is type(v) or isinstance(v, np.ndarray)
        if isinstance(v, np.ndarray):
            assert back.dtype == v.dtype and back.shape == v.shape and not back.flags.writeable
            np.testing.assert_array_equal(back, v)
        elif isinstance(v, float) and np.isnan(v):
            assert np.isnan(back)
        elif isinstance(v, TensorShape):
            assert back.as_list() == v.as_list() if v.ndims is not None else back.ndims is None
        else:
            assert back == v


def test_session_graph_def_and_as_graph_def():
    x = tf.constant([1, 2], name="x")
    tf.identity(x, name="y")
    with tf.Session() as s:
        names = [n["name"] for n in s.graph_def.node]
    assert names == ["x", "y"]
    assert len(tf.get_default_graph().as_graph_def()) == 2


# ---- import_graph_def ----------------------------------------------------------------------------


def _small_graph_def():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        y = tf.constant([1.0, 2.0], name="y")
        tf.add(x, y, name="op_to_store")
    return g.as_graph_def()


def test_import_names_input_map_and_return_elements():
    gd = _small_graph_def()
    with tf.Graph().as_default() as g:
        t, op = import_graph_def(gd, return_elements=["op_to_store:0", "x"])
        assert t.name == "import/op_to_store:0" and op.name == "import/x" and op.type == "Placeholder"
        (t1,) = import_graph_def(gd, return_elements=["op_to_store:0"])
        assert t1.name == "import_1/op_to_store:0"
        with tf.name_scope("outer"):
            (t2,) = import_graph_def(gd, return_elements=["op_to_store:0"], name="m")
        assert t2.name == "outer/m/op_to_store:0"
        (t3,) = import_graph_def(gd, return_elements=["op_to_store:0"], name="")
        (t4,) = import_graph_def(gd, return_elements=["op_to_store:0"], name="")
        assert (t3.name, t4.name) == ("op_to_store:0", "op_to_store_1:0")
        c = tf.constant([10.0, 20.0])
        (t5,) = import_graph_def(gd, input_map={"x": c}, return_elements=["op_to_store:0"], name="mapped")
        assert t5.op.inputs[0] is c
        assert import_graph_def(gd) is None
        with pytest.raises(InvalidArgumentError, match="passed int32 from 'ints:0', incompatible"):
            import_graph_def(gd, input_map={"x:0": tf.constant([1, 2], name="ints")})
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(t5), [11.0, 22.0])
            np.testing.assert_array_equal(s.run(t3, {"x:0": [1.0, 1.0]}), [2.0, 3.0])
    assert len(g.get_operations()) > 12


@pytest.mark.parametrize("kwargs, match", [
    (dict(input_map={"nope:0": None}), "not a Tensor|not found"),
    (dict(return_elements=["nope"]), "not found in graph def"),
    (dict(return_elements=["x:5"]), "which has 1 output"),
])
def test_import_argument_errors_are_value_errors(kwargs, match):
    gd = _small_graph_def()
    with tf.Graph().as_default():
        if "input_map" in kwargs:
            kwargs = dict(input_map={"nope:0": tf.constant([1.0, 2.0])})
        with pytest.raises(ValueError, match=match) as e:
            import_graph_def(gd, **kwargs)
        assert isinstance(e.value, InvalidArgumentError)
    with pytest.raises(TypeError):
        import_graph_def("not a graph def")


def _broken(gd, **changes):
    out = GraphDef()
    out.CopyFrom(gd)
    node = out.node[-1]
    for k, v in changes.items():
        setattr(node, k, v)
    return out


@pytest.mark.parametrize("changes, match", [
    (dict(op="Bogus"), "Op type not registered 'Bogus'"),
    (dict(input=["nothere:0", "y:0"]), "Unknown input node"),
    (dict(input=["op_to_store:0", "y:0"]), "cycle"),
    (dict(input=["x:0", "y:3"]), "has 1 output"),
    (dict(output_dtypes=["int32"]), "dtype float32, the document says int32"),
    (dict(output_shapes=[[3]]), "incompatible"),
    (dict(op="MatMul"), "cannot create op 'MatMul'"),
    (dict(name="x"), "Duplicate node name"),
])
def test_invalid_graph_defs_leave_the_graph_unchanged(changes, match):
    gd = _broken(_small_graph_def(), **changes)
    with tf.Graph().as_default() as g:
        c = tf.constant(1.0, name="c")
        before = [o.name for o in g.get_operations()]
        with pytest.raises(InvalidArgumentError, match=match):
            import_graph_def(gd, input_map={"x:0": tf.constant([1.0, 2.0], name="k")})
        assert [o.name for o in g.get_operations()] == before + ["k"]
        assert [o.name for o in c.consumers()] == []
        (t,) = import_graph_def(_small_graph_def(), return_elements=["op_to_store:0"])
        assert t.name == "import/op_to_store:0"  # the failed import did not take the name


def test_attrs_naming_ops_follow_the_import_prefix():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0, name="v")
        tf.is_variable_initialized(v)
        tf.report_uninitialized_variables(name="report")
    with tf.Graph().as_default():
        ok, names = import_graph_def(g.as_graph_def(), return_elements=["IsVariableInitialized:0", "report:0"],
                                     name="p")
        with tf.Session() as s:
            assert not s.run(ok) and list(s.run(names)) == ["p/v"]
            s.run("p/v/Assign")
            assert s.run(ok) and list(s.run(names)) == []


def test_graph_def_editing_like_protobuf():
    gd = _small_graph_def()
    copy = GraphDef()
    for n in gd.node:
        new = copy.node.add()
        new.CopyFrom(n)
        new.device = ""
    copy.node.append(NodeDef(name="twice", op="Mul", input=["op_to_store:0", "op_to_store:0"]))
    copy.node[0].attr["shape"] = TensorShape([2])
    assert gd.node[0].attr["shape"] is not copy.node[0].attr["shape"]
    assert GraphDef.FromString(copy.SerializeToString()).node[-1].name == "twice"
    with tf.Graph().as_default():
        (t,) = import_graph_def(copy, return_elements=["twice:0"], name="")
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(t, {"x:0": [1.0, 0.0]}), [4.0, 4.0])


# ---- freezing and graph_util -----------------------------------------------------------------------


def test_tf1_freeze_example():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        y = tf.Variable([1.0, 2.0], name="y")
        tf.add(x, y, name="op_to_store")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(y.assign([5.0, 6.0]))
            frozen = graph_util.convert_variables_to_constants(sess, sess.graph_def, ["op_to_store"])
    assert [(n.name, n.op) for n in frozen.node] == [("x", "Placeholder"), ("y", "Const"), ("op_to_store", "Add")]
    data = frozen.SerializeToString()
    gd = GraphDef()
    gd.ParseFromString(data)
    with tf.Graph().as_default() as g2:
        import_graph_def(gd, name="")
        z = g2.get_tensor_by_name("op_to_store:0")
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(z, {"x:0": [1.0, 1.0]}), [6.0, 7.0])


def test_freeze_lists_errors_and_extract_sub_graph():
    g = tf.Graph()
    with g.as_default():
        a = tf.Variable(2.0, name="a")
        b = tf.Variable(3.0, name="b")
        out = tf.multiply(a, b, name="out")
        upd = tf.assign_add(a, 1.0, name="upd")
        tf.identity(out, name="unused")
        tf.identity(tf.stop_gradient(tf.identity(out, name="id1")), name="id2")
        s = tf.Session()
        with pytest.raises(FailedPreconditionError):
            graph_util.convert_variables_to_constants(s, g.as_graph_def(), ["out"])
        s.run(tf.global_variables_initializer())
        gd = g.as_graph_def()
        part = graph_util.convert_variables_to_constants(s, gd, ["out"], variable_names_blacklist=["b"])
        assert {n.name: n.op for n in part.node} == {"a": "Const", "b": "VariableV2", "out": "Mul"}
        part = graph_util.convert_variables_to_constants(s, gd, ["out"], variable_names_whitelist=["b"])
        assert {n.name: n.op for n in part.node}["a"] == "VariableV2"
        with pytest.raises(InvalidArgumentError, match="written by 'upd'"):
            graph_util.convert_variables_to_constants(s, gd, ["upd"])
        assert upd is not None
    sub = graph_util.extract_sub_graph(gd, ["out"])
    assert [n.name for n in sub.node] == ["a", "b", "out"]  # variables are read through their handles
    with pytest.raises(AssertionError, match="nothere is not in graph"):
        graph_util.extract_sub_graph(gd, ["nothere"])
    with pytest.raises(TypeError):
        graph_util.extract_sub_graph(gd, "out")
    pruned = graph_util.remove_training_nodes(graph_util.extract_sub_graph(gd, ["id2"]), protected_nodes=["id2"])
    names = {n.name: n for n in pruned.node}
    assert "id1" not in names and "StopGradient" not in names and names["id2"].input == ["out:0"]
    assert graph_util.tensor_shape_from_node_def_name(g, "out").as_list() == []


# ---- files -------------------------------------------------------------------------------------------


def test_write_graph_keeps_large_constants_beside_the_json(tmp_path):
    big = np.arange(3000, dtype=np.float64).reshape(30, 100)
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(big, name="big")
        tf.add(tf.reduce_sum(c * 2.0), tf.constant(1.0, tf.float64), name="out")
    path = write_graph(g, str(tmp_path / "logs"), "graph.pbtxt")
    assert path == str(tmp_path / "logs" / "graph.pbtxt")
    text = pathlib.Path(path).read_text()
    assert len(text) < 5000 and "const_ref" in text  # the big array is not inline
    assert zarr.open_group(path + ".consts", mode="r")["c0"].shape == (30, 100)
    gd = read_graph_def(path)
    np.testing.assert_array_equal([n for n in gd.node if n.name == "big"][0].attr["value"], big)
    with tf.Graph().as_default() as g2:
        import_graph_def(gd, name="")
        with tf.Session() as s:
            assert s.run("out:0") == big.sum() * 2 + 1
    assert len(g.as_graph_def().SerializeToString()) > big.nbytes  # in memory: inline
    # an unsaved GraphDef that still names its external arrays cannot be imported without the file
    unresolved = GraphDef.FromString(text)
    with tf.Graph().as_default(), pytest.raises(InvalidArgumentError, match="read_graph_def"):
        import_graph_def(unresolved)
    # corrupting the stored constant is detected
    arr = zarr.open_array(path + ".consts/c0", mode="r+")
    arr[0, 0] = -1.0
    with pytest.raises(DataLossError, match="checksum"):
        read_graph_def(path)
    # rewriting without large constants removes the stale group
    write_graph(tf.Graph(), str(tmp_path / "logs"), "graph.pbtxt")
    assert not os.path.exists(path + ".consts")
    assert g2 is not None


def test_unserializable_ops_refuse_clearly(tmp_path):
    register_op("TestHoldsCallable", lambda inputs, attrs: (inputs[0].shape, inputs[0].dtype),
                eager=lambda xp, x, fn: fn(x), replace=True)
    x = tf.constant([1.0])
    tf.get_default_graph().create_op("TestHoldsCallable", [x], {"fn": lambda v: v}, name="holds_fn")
    gd = tf.get_default_graph().as_graph_def()  # in memory it is fine
    with pytest.raises(InvalidArgumentError, match="'holds_fn'.*callable"):
        gd.SerializeToString()
    with pytest.raises(InvalidArgumentError, match="'holds_fn'"):
        write_graph(gd, str(tmp_path), "g.json")
    with pytest.raises(InvalidArgumentError, match="'holds_fn'"):
        export_meta_graph(str(tmp_path / "m.meta"))
    assert not os.path.exists(tmp_path / "g.json")
    py_ops = pytest.importorskip("dflow.kernels.py_ops")
    with tf.Graph().as_default() as g:
        py_ops.py_func(lambda v: v * 2, [tf.constant([1.0])], tf.float32, name="pf")
        with pytest.raises(InvalidArgumentError, match="node 'pf' \\(PyFunc\\) attr 'func' holds a Python callable"):
            g.as_graph_def().SerializeToString()


def test_zarr_source_and_sink_round_trip(tmp_path):
    src = zarr.create_array(str(tmp_path / "in"), shape=(6, 2), dtype="f8", chunks=(3, 2))
    src[...] = np.arange(12.0).reshape(6, 2)
    g = tf.Graph()
    with g.as_default():
        r = tf.io.read_zarr(str(tmp_path / "in"), name="src")
        tf.io.write_zarr(r * 2.0, str(tmp_path), "out", name="sink")
    path = write_graph(g, str(tmp_path), "g.json")
    with tf.Graph().as_default() as g2:
        import_graph_def(read_graph_def(path), name="")
        with tf.Session(scheduler="sync") as s:
            np.testing.assert_array_equal(s.run("src:0"), src[...])
            s.run("sink:0")
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "out"), mode="r")[...], src[...] * 2)
    # an array in memory has no path a file could name
    with tf.Graph().as_default() as g3:
        tf.io.read_zarr(zarr.create_array(zarr.storage.MemoryStore(), shape=(2,), dtype="i4"))
        with pytest.raises(InvalidArgumentError, match="MemoryStore"):
            g3.as_graph_def().SerializeToString()
    assert g2 is not None


@pytest.mark.filterwarnings("ignore::UserWarning")  # zarr warns that numcodecs codecs are not in v3
def test_zarr_arrays_with_codecs_outside_the_allow_list_are_refused(tmp_path):
    import numcodecs

    from dflow.io.graph_io import open_zarr_safely

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(str(tmp_path / "v2"), shape=(4,), dtype="f8", zarr_format=2,
                          filters=[numcodecs.Delta(dtype="f8")], compressors=None)
        zarr.create_array(str(tmp_path / "v3"), shape=(4,), dtype="f8",
                          filters=[zarr.codecs.numcodecs.Delta(dtype="f8")])
    good = zarr.create_array(str(tmp_path / "good"), shape=(4,), dtype="f8")
    with pytest.raises(InvalidArgumentError, match="filters are not allowed"):
        open_zarr_safely(str(tmp_path / "v2"), "test")
    g = tf.Graph()
    with g.as_default():
        tf.io.read_zarr(good, name="src")
    text = g.as_graph_def().SerializeToString().decode().replace(str(tmp_path / "good"), str(tmp_path / "v3"))
    with tf.Graph().as_default(), pytest.raises(InvalidArgumentError, match="codec Delta is not allowed"):
        import_graph_def(GraphDef.FromString(text))


# ---- meta graphs ---------------------------------------------------------------------------------------


def _training_graph(seed=0):
    rng = np.random.default_rng(seed)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        with tf.variable_scope("model"):
            w = tf.Variable(rng.standard_normal((3, 1)).astype(np.float32), name="w")
            b = tf.Variable(np.zeros(1, np.float32), name="b")
            table = tf.Variable(np.linspace(0, 1, 2048).astype(np.float32), name="table", trainable=False)
        gs = tf.train.get_or_create_global_step()
        pred = tf.matmul(x, w) + b + tf.reduce_mean(table) * 0.0
        loss = tf.reduce_mean(tf.square(pred - y), name="loss")
        tf.add_to_collection(tf.GraphKeys.LOSSES, loss)
        opt = tf.train.MomentumOptimizer(0.05, 0.9)
        # the global step is incremented by its own op (see the report on Optimizer op names)
        train = tf.group(opt.minimize(loss), tf.assign_add(gs, 1), name="train")
        tf.add_to_collection(tf.GraphKeys.TRAIN_OP, train)
        tf.add_to_collection("hparams", 0.05)
    return g


def test_meta_graph_restart_continues_training(tmp_path):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((16, 3)).astype(np.float32)
    Y = X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3
    g = _training_graph()
    with g.as_default():
        saver = tf.train.Saver()
        s = tf.Session()
        s.run(tf.global_variables_initializer())
        feed = {"x:0": X, "y:0": Y}
        for _ in range(3):
            s.run("train", feed)
        prefix = saver.save(s, str(tmp_path / "model"), global_step=tf.train.get_global_step())
        want = [s.run(["loss:0", "train"], feed)[0] for _ in range(4)]
        want_w = s.run("model/w:0")
    assert os.path.exists(prefix + ".meta") and os.path.exists(prefix + ".meta.consts")
    with tf.Graph().as_default() as g2:
        restorer = import_meta_graph(prefix + ".meta")
        s2 = tf.Session()
        restorer.restore(s2, prefix)
        assert s2.run(tf.train.get_global_step()) == 3
        assert sorted(v.op.name for v in tf.trainable_variables()) == ["model/b", "model/w"]
        assert len(tf.global_variables()) == 6  # w, b, table, global step, two momentum slots
        train = tf.get_collection(tf.GraphKeys.TRAIN_OP)[0]
        loss = tf.get_collection(tf.GraphKeys.LOSSES)[0]
        assert tf.get_collection("hparams") == [0.05] and loss.name == "loss:0"
        got = [s2.run([loss, train], {"x:0": X, "y:0": Y})[0] for _ in range(4)]
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(s2.run("model/w:0"), want_w)
        # the rebuilt variables behave as built ones: initializers, assign, is_variable_initialized
        fresh = tf.Session()
        assert not fresh.run(tf.is_variable_initialized(tf.global_variables()[0]))
        fresh.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(fresh.run(tf.global_variables()[0]), g.get_operation_by_name(
            "model/w/initial_value").get_attr("value"))
    assert g2 is not None


def test_cond_and_while_graphs_round_trip(tmp_path):
    """A Cond's branches and a While's body live in attrs naming tensors (tensor_ref): the graph
    file keeps them, and the re-imported graph answers as the original on every mode."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        p = tf.placeholder(tf.bool, [], name="p")
        c = tf.cond(p, lambda: tf.reduce_sum(x * 2.0, axis=1), lambda: tf.reduce_sum(x, axis=1) + 1.0)
        _, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 1.5 + x), [tf.constant(0), x],
                               maximum_iterations=5)
        tf.identity(c[:, None] + acc, name="y")
    xv = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    for pv in (True, False):
        _same_answer(g, ["y:0"], {"x:0": xv, "p:0": np.array(pv)})
        _same_answer(g, ["y:0"], {"x:0": xv, "p:0": np.array(pv)}, path=str(tmp_path / "g.json"))
    doc = json.loads(g.as_graph_def().SerializeToString())
    cond = next(n for n in doc["node"] if n["op"] == "Cond")
    assert cond["attr"]["true_outputs"] == {"tuple": [{"tensor_ref": "cond/cond_true/Sum:0"}]}


def test_batch_norm_with_a_training_placeholder_gets_its_meta_graph(tmp_path):
    """tf.layers.batch_normalization(training=placeholder) builds a Cond: Saver.save writes the
    .meta without a warning, and the imported meta graph trains on from the checkpoint."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((8, 3)).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        training = tf.placeholder_with_default(False, [], name="training")
        h = tf.layers.batch_normalization(x, training=training)
        loss = tf.reduce_mean(tf.square(tf.layers.dense(h, 1)), name="loss")
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(train, {x: X, training: True})
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                prefix = saver.save(s, str(tmp_path / "bn"))
            want = [s.run(["loss:0", "train"], {"x:0": X, "training:0": True})[0] for _ in range(2)]
            want.append(s.run("loss:0", {"x:0": X}))
    assert os.path.exists(prefix + ".meta")
    with tf.Graph().as_default():
        restorer = import_meta_graph(prefix + ".meta")
        with tf.Session() as s2:
            restorer.restore(s2, prefix)
            got = [s2.run(["loss:0", "train"], {"x:0": X, "training:0": True})[0] for _ in range(2)]
            got.append(s2.run("loss:0", {"x:0": X}))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_meta_graph_scopes_devices_and_collections(tmp_path):
    g = _training_graph()
    with g.as_default(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tf.add_to_collection("objects", object())
        meta = export_meta_graph(str(tmp_path / "m.meta"), clear_devices=True, saver=tf.train.Saver(max_to_keep=2))
    assert any("objects" in str(w.message) for w in caught) and "objects" not in meta.collection_def
    assert meta.saver_def["max_to_keep"] == 2 and "model/w" in meta.saver_def["var_list"].values()
    assert "VariableV2" in meta.meta_info_def["stripped_op_list"]
    with tf.Graph().as_default() as g2:
        s1 = import_meta_graph(str(tmp_path / "m.meta"), import_scope="a")
        import_meta_graph(meta, import_scope="a")  # a second import is made unique
        assert {v.op.name for v in tf.trainable_variables()} == {"a/model/w", "a/model/b", "a_1/model/w",
                                                                 "a_1/model/b"}
        assert sorted(s1._vars()) == sorted(meta.saver_def["var_list"]) and s1._max_to_keep == 2
        assert all(v.op.name.startswith("a/") for v in s1._vars().values())
        assert import_meta_graph(export_meta_graph(graph=tf.Graph())) is None
    assert g2 is not None


def test_export_scope_and_unbound_inputs():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        with tf.variable_scope("model"):
            w = tf.Variable(np.eye(2, dtype=np.float32) * 3, name="w")
            tf.matmul(x, w, name="y")
        sub = export_meta_graph(export_scope="model")
    assert sorted(n.name for n in sub.graph_def.node) == ["w", "w/Assign", "w/initial_value", "w/read", "y"]
    assert [n.input for n in sub.graph_def.node if n.name == "y"] == [["$unbound_inputs_x:0", "w:0"]]
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError, match="Unknown input node"):
            import_meta_graph(sub, import_scope="m2")
        feed = tf.placeholder(tf.float32, [None, 2], name="feed")
        import_meta_graph(sub, import_scope="m2", input_map={"x:0": feed})
        assert [v.op.name for v in tf.global_variables()] == ["m2/w"]
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(s.run("m2/y:0", {feed: [[1.0, 2.0]]}), [[3.0, 6.0]])


def test_meta_graph_files_are_plain_json(tmp_path):
    g = _training_graph()
    with g.as_default():
        export_meta_graph(str(tmp_path / "m.meta"))
    doc = json.loads((tmp_path / "m.meta").read_text())
    assert doc["format"] == "dflow.MetaGraphDef" and doc["version"] == 1
    assert {"variable": {"handle": "model/w", "initializer": "model/w/Assign", "snapshot": "model/w/read:0",
                         "initial_value": "model/w/initial_value:0", "trainable": True}} in \
        doc["collection_def"]["trainable_variables"]
    m = MetaGraphDef()
    m.ParseFromString((tmp_path / "m.meta").read_bytes())
    with tf.Graph().as_default(), pytest.raises(InvalidArgumentError, match="lives in the Zarr group"):
        import_meta_graph(m)  # parsed bytes alone do not have the external table
    with pytest.raises(tf.errors.NotFoundError):
        import_meta_graph(str(tmp_path / "missing.meta"))


def test_no_pickle_eval_or_exec_in_graph_io():
    root = pathlib.Path(tf.__file__).parent
    for rel in ["graph/serialize.py", "io/graph_io.py", "io/meta_graph.py", "graph_util.py"]:
        src = (root / rel).read_text()
        for word in ["import pickle", "pickle.", "eval(", "exec(", "__import__", "marshal", "importlib"]:
            assert word not in src, f"{rel} contains {word!r}"
