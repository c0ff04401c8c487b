"""TF1 control flow as TensorFlow writes it (Switch/Merge/Enter/Exit/NextIteration/LoopCond)
lowered to dflow's Cond and While (dflow/io/tf_control_flow.py), compared with TensorFlow's own
outputs stored beside each fixture (tools/make_tf_control_flow_fixtures.py wrote them)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from tensorboard.compat.proto import graph_pb2

import dflow as tf
from dflow.errors import DataLossError, InvalidArgumentError
from dflow.graph import dtypes
from dflow.graph.serialize import GraphDef, NodeDef, TensorRef
from dflow.graph.shape import TensorShape
from dflow.io.tf_control_flow import lower_control_flow

FIXTURES = pathlib.Path(__file__).parent.parent / "fixtures" / "tf_control_flow"
CASES = ["cond", "nested_cond", "cond_in_while", "while_max_iterations", "while_cumprod", "nested_while", "batch_norm",
         "fused_batch_norm", "dynamic_rnn"]

def load(case):
    """(GraphDef of dflow NodeDefs, runs: [(feeds {name: value}, outputs {name: value}, grads)])."""
    gd = tf.GraphDef()
    gd.ParseFromString((FIXTURES / f"{case}.pb").read_bytes())  # TF's protobuf: dflow/io/tf_graph.py
    data = np.load(FIXTURES / f"{case}.npz")
    runs = {}
    for key in data.files:
        kind, _, rest = key.partition("|")
        what = kind.rstrip("0123456789")
        run = runs.setdefault(int(kind[len(what):]), ({}, {}, {}))
        run[("in", "out", "grad").index(what)][rest] = data[key]
    return gd, [runs[k] for k in sorted(runs)]


def _import_into(graph, gd):
    with graph.as_default():
        tf.import_graph_def(gd, name="")


SESSIONS = {"default": {}, "dask": {"scheduler": "sync", "small_plan_bytes": 0}}


@pytest.mark.parametrize("mode", list(SESSIONS))
@pytest.mark.parametrize("case", CASES)
def test_imported_control_flow_matches_tensorflow(case, mode):
    gd, runs = load(case)
    assert not any(n.op in ("Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond") for n in gd.node)
    g = tf.Graph()
    _import_into(g, gd)
    with g.as_default(), tf.Session(graph=g, **SESSIONS[mode]) as sess:
        for feeds, outs, _ in runs:
            names = sorted(outs)
            got = sess.run(names, feeds)
            for n, v in zip(names, got):
                np.testing.assert_allclose(v, outs[n], rtol=1e-5, atol=1e-5, err_msg=f"{case}: {n} with {feeds}")


def test_cond_becomes_one_dflow_cond_with_captures():
    gd, _ = load("cond")
    conds = [n for n in gd.node if n.op == "Cond"]
    assert len(conds) == 1
    (c,) = conds
    assert c.input[0] == "cond/pred_id:0" and "x:0" in c.input[1:] and c.attr["n_captures"] == len(c.input) - 1
    assert [r.name for r in c.attr["true_outputs"]] == ["cond/add:0", "cond/Sum:0"]
    assert [r.name for r in c.attr["false_outputs"]] == ["cond/sub:0", "cond/Const_1:0"]
    out = next(n for n in gd.node if n.name == "out")
    assert out.input == ["cond:0"]


def test_while_becomes_dflow_while_with_loop_var_placeholders():
    gd, _ = load("while_max_iterations")
    (w,) = [n for n in gd.node if n.op == "While"]
    n = w.attr["n_loop_vars"]
    assert n == 4  # TF's iteration counter for maximum_iterations, then i, a, b
    phs = {r.name.rpartition(":")[0] for r in w.attr["loop_vars"]}
    assert all(any(p.name == ph and p.op == "Placeholder" for p in gd.node) for ph in phs)
    assert w.attr["maximum_iterations"] is None and isinstance(w.attr["cond_next"], TensorRef)
    assert any(nd.name.startswith("while/cond_next/") for nd in gd.node)


def test_dynamic_rnn_flows_are_variant_loop_vars():
    gd, _ = load("dynamic_rnn")
    (w,) = [n for n in gd.node if n.op == "While"]
    flows = [s for s in w.attr["out_specs"] if s[1] == dtypes.variant]
    assert len(flows) == 1
    reads = [n for n in gd.node if n.op == "TensorArrayReadV3"]
    assert reads and reads[0].attr["element_shape"] == TensorShape([2, 3])


@pytest.mark.parametrize("case", ["cond", "nested_cond"])
def test_gradients_through_an_imported_cond(case):
    gd, runs = load(case)
    g = tf.Graph()
    _import_into(g, gd)
    with g.as_default():
        x, out = g.get_tensor_by_name("x:0"), g.get_tensor_by_name("out:0")
        (dx,) = tf.gradients(out, [x])
        with tf.Session() as sess:
            for feeds, _, grads in runs:
                np.testing.assert_allclose(sess.run(dx, feeds), grads["out:0|x:0"], rtol=1e-5, atol=1e-5)


def test_serialized_tensor_refs_round_trip():
    gd, runs = load("cond_in_while")
    again = GraphDef.FromString(gd.SerializeToString())
    g = tf.Graph()
    _import_into(g, again)
    feeds, outs, _ = runs[0]
    with g.as_default(), tf.Session() as sess:
        np.testing.assert_allclose(sess.run("out:0", feeds), outs["out:0"], rtol=1e-5)


def test_a_graph_without_control_flow_comes_back_unchanged():
    g = graph_pb2.GraphDef()
    n = g.node.add(name="x", op="Placeholder")
    assert lower_control_flow(g.node) == [n]


def test_malformed_control_flow_is_refused_naming_the_node():
    g = graph_pb2.GraphDef()
    g.ParseFromString((FIXTURES / "cond.pb").read_bytes())
    bad = list(g.node)
    for n in bad:
        if n.name == "cond/Merge":
            n.input[:] = ["cond/sub", "x"]  # one input from outside both branches
    with pytest.raises(InvalidArgumentError, match="cond/Merge"):
        lower_control_flow(bad)
    g.node.add(name="dangling", op="Exit", input=["x"])
    with pytest.raises(InvalidArgumentError, match="dangling"):
        lower_control_flow(g.node)


GRAPH_FIXTURES = FIXTURES.parent / "tf_graphs"  # the TF GraphDef importer's fixtures (tools/make_tf_graph_fixtures.py)


@pytest.mark.parametrize("mode", list(SESSIONS))
@pytest.mark.parametrize("graph, run", [("cond.pb", "cond_true"), ("cond.pb", "cond_false"),
                                        ("while_rnn.pb", "while_rnn"), ("dynamic_lstm.pb", "dynamic_lstm"),
                                        ("dynamic_lstm.pbtxt", "dynamic_lstm")])
def test_importer_fixtures_with_control_flow_match_tensorflow(graph, run, mode):
    path = GRAPH_FIXTURES / graph
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    gd = tf.GraphDef()
    gd.ParseFromString(path.read_bytes())
    data = np.load(GRAPH_FIXTURES / f"{run}.npz")
    feeds = {k: data["in_" + k.replace(":", "_").replace("/", "__")] for k in data["feeds"]}
    fetches = list(data["fetches"])
    g = tf.Graph()
    _import_into(g, gd)
    with g.as_default(), tf.Session(graph=g, **SESSIONS[mode]) as sess:
        for i, v in enumerate(sess.run(fetches, feeds)):
            np.testing.assert_allclose(v, data[f"out_{i}"], rtol=1e-5, atol=1e-5)


def test_bad_tensor_refs_are_refused():
    doc = GraphDef([NodeDef(name="c", op="Const", input=[], attr={"value": np.float32(1.0)})]).to_json()
    doc["node"][0]["attr"]["ref"] = {"tensor_ref": "^c"}  # a control input is no tensor
    with pytest.raises(DataLossError, match="tensor_ref"):
        GraphDef.FromString(json.dumps(doc))
    gd, _ = load("cond")
    (c,) = [n for n in gd.node if n.op == "Cond"]
    c.attr["true_outputs"] = (TensorRef("nowhere:0"), c.attr["true_outputs"][1])
    g = tf.Graph()
    with pytest.raises(InvalidArgumentError, match="nowhere"):
        _import_into(g, gd)
    assert g.get_operations() == []  # nothing half-imported


@pytest.mark.parametrize("name, index", [("while_rnn", (0, 1, 2)), ("dynamic_lstm", (1, 2, 1))])
def test_gradients_through_imported_loops_match_finite_differences(name, index):
    """An imported tf.while_loop (and dynamic_rnn's TensorArray loop) is an ordinary dflow While:
    tf.gradients goes through it; checked against central differences in float64 arithmetic."""
    graphs = pathlib.Path(__file__).parent.parent / "fixtures" / "tf_graphs"
    data = np.load(graphs / f"{name}.npz")
    feed_name, fetch = str(data["feeds"][0]), str(data["fetches"][0])
    x0 = data["in_" + feed_name.replace(":", "_")]
    with tf.Graph().as_default() as g:
        gd = tf.GraphDef()
        gd.ParseFromString((graphs / f"{name}.pb").read_bytes())
        tf.import_graph_def(gd, name="")
        x, y = g.get_tensor_by_name(feed_name), g.get_tensor_by_name(fetch)
        grad, = tf.gradients(tf.reduce_sum(y), x)
        with tf.Session() as s:
            out, gv = s.run([y, grad], {x: x0})
            np.testing.assert_allclose(out, data["out_0"], rtol=1e-5, atol=1e-6)
            eps = 1e-2
            plus, minus = x0.astype(np.float64), x0.astype(np.float64)
            plus[index] += eps
            minus[index] -= eps
            f = [s.run(y, {x: v.astype(np.float32)}).astype(np.float64).sum() for v in (plus, minus)]
    np.testing.assert_allclose(gv[index], (f[0] - f[1]) / (2 * eps), rtol=2e-2, atol=1e-4)
