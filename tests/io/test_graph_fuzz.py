"""Fuzzed graph documents: a malformed or hostile GraphDef / MetaGraphDef gives DataLossError or
InvalidArgumentError (or imports cleanly), never another exception, and never runs code."""

from __future__ import annotations

import copy
import json
import os

import numpy as np
import pytest

import dflow as tf
from dflow.errors import DataLossError, InvalidArgumentError
from dflow.graph.serialize import GraphDef
from dflow.io.graph_io import import_graph_def
from dflow.io.meta_graph import MetaGraphDef, export_meta_graph, import_meta_graph

ALLOWED = (DataLossError, InvalidArgumentError)
HOSTILE_STRINGS = ["__import__('os').system('touch /tmp/dflow-pwned')", "${jndi:x}", "../../etc/passwd",
                   "\x00", "^", ":", "a:b:c", "x:99999999999", "$unbound_inputs_x", "", " " * 3, "é" * 5]


def _graph_doc():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
        y = tf.matmul(x, w, transpose_b=False)
        r = tf.reshape(y, [-1])
        s = tf.reduce_sum(r, axis=0, keepdims=True, name="s")
        c = tf.cast(tf.shape(x), tf.float32)
        parts = tf.split(tf.ones([4, 2]), 2, axis=0)
        t = tf.tensordot(parts[0], tf.ones([2, 2]), axes=1)
        z = tf.strided_slice(tf.ones([5, 4]), [1, 0], [4, 4], [2, 1])
        tf.identity(s + tf.reduce_sum(c) + tf.reduce_sum(t) + tf.reduce_sum(z), name="out")
        tf.concat([tf.constant([1, 2], tf.int64), tf.constant([3], tf.int64)], 0, name="cc")
    return g


def _docs():
    g = _graph_doc()
    gdoc = json.loads(g.as_graph_def().SerializeToString())
    with g.as_default():
        tf.add_to_collection("things", 3)
        tf.add_to_collection("things", "word")
        tf.add_to_collection("outs", g.get_tensor_by_name("out:0"))
        mdoc = json.loads(export_meta_graph(graph=g).SerializeToString())
    return gdoc, mdoc


def _load(data, meta):
    """Parses and imports `data` into a fresh graph; returns normally or raises."""
    with tf.Graph().as_default():
        if meta:
            m = MetaGraphDef()
            m.ParseFromString(data)
            import_meta_graph(m)
        else:
            gd = GraphDef()
            gd.ParseFromString(data)
            import_graph_def(gd)


def _check(data, meta, what):
    try:
        _load(data, meta)
    except ALLOWED:
        pass
    except Exception as e:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{what}: {type(e).__name__}: {e}")


def _paths(doc, prefix=()):
    """Every (path, value) in a JSON document."""
    yield prefix, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


def _set(doc, path, value):
    doc = copy.deepcopy(doc)
    if not path:
        return value
    d = doc
    for p in path[:-1]:
        d = d[p]
    if value is _DELETE:
        del d[path[-1]]
    else:
        d[path[-1]] = value
    return doc


_DELETE = object()


def _replacements(rng, old):
    big = [2**62, 2**63, 10**30, -1]
    pool = [None, True, 0, -1, 1.5, float("nan"), "", [], {}, [[[]]], {"tensor": 1}, {"list": None},
            {"object": {"type": "zarr.Array", "fields": {"store": "/nonexistent", "path": ""}}},
            {"object": {"type": "builtins.eval", "fields": {"source": "1+1"}}},
            {"tensor": {"dtype": "float32", "shape": [10**9, 10**9], "data": ""}},
            {"tensor": {"dtype": "object", "shape": [1], "data": "AAAA"}},
            {"shape": [2**62, 2**62]}, {"shape": big}, {"dtype": "pickle"}, {"slice": [1, "a", None]},
            {"dict": {"__class__": {"tuple": []}}}, {"const_ref": {"group": "..", "array": "c0", "dtype": "float32",
                                                                  "shape": [1], "checksum": "sha256:" + "0" * 64}},
            rng.choice(HOSTILE_STRINGS), list(range(40)), {"ellipsis": False}]
    if isinstance(old, str):
        pool += ["Bogus", "VariableV2", "Const", "Placeholder", old + "x", old[:-1]]
    if isinstance(old, int) and not isinstance(old, bool):
        pool += [old + 1, old - 1, 2**31, -(2**31)]
    if isinstance(old, list):
        pool += [old[::-1], old + old, old[:-1]]
    return pool[int(rng.integers(len(pool)))]


def test_structural_mutations():
    rng = np.random.default_rng(0)
    for meta, doc in zip((False, True), _docs()):
        paths = list(_paths(doc))
        for i in range(150):
            path, old = paths[int(rng.integers(len(paths)))]
            value = _DELETE if (path and rng.random() < 0.2) else _replacements(rng, old)
            mutated = _set(doc, path, value)
            data = json.dumps(mutated, allow_nan=True).encode()
            _check(data, meta, f"case {i}: {path} -> {value!r:.80}")


def test_byte_mutations_and_truncations():
    rng = np.random.default_rng(1)
    for meta, doc in zip((False, True), _docs()):
        data = json.dumps(doc).encode()
        for i in range(60):
            b = bytearray(data)
            for _ in range(int(rng.integers(1, 4))):
                b[int(rng.integers(len(b)))] = int(rng.integers(256))
            _check(bytes(b), meta, f"flip {i}")
        for i in range(30):
            _check(data[:int(rng.integers(len(data)))], meta, f"truncate {i}")


def test_node_level_attacks():
    gdoc, _ = _docs()
    nodes = gdoc["node"]
    cases = [
        {**gdoc, "node": nodes + [nodes[0]]},  # duplicate node
        {**gdoc, "node": nodes[::-1]},  # reversed order: still importable
        {**gdoc, "node": [dict(n, input=n["input"] + ["out:0"]) for n in nodes]},  # cycles
        {**gdoc, "node": [dict(n, op="Bogus") for n in nodes]},
        {**gdoc, "node": [dict(n, attr={}) for n in nodes]},  # attrs missing
        {**gdoc, "node": [dict(n, output_dtypes=["int8"] * 9) for n in nodes]},
        {**gdoc, "node": [dict(n, output_shapes=[[7, 7, 7]]) for n in nodes]},
        {**gdoc, "node": [dict(n, input=["x:5"]) for n in nodes]},
        {**gdoc, "version": 99},
        {**gdoc, "format": "something else"},
        {**gdoc, "node": [dict(n, attr={k: {"tuple": [v]} for k, v in n["attr"].items()}) for n in nodes]},
        {**gdoc, "node": [dict(n, attr={k: {"list": [v, v]} for k, v in n["attr"].items()}) for n in nodes]},
        {**gdoc, "node": [dict(n, attr={k: 12345 for k in n["attr"]}) for n in nodes]},
        {**gdoc, "node": [dict(n, attr={k: "__import__('os').system('true')" for k in n["attr"]}) for n in nodes]},
    ]
    for i, c in enumerate(cases):
        _check(json.dumps(c).encode(), False, f"attack {i}")
    raw = json.dumps(gdoc)
    for i, data in enumerate([raw.replace('"op":', '"op":"Const","op":', 1),  # duplicate key
                              "[" * 100000 + "]" * 100000, '{"format": NaN}', "\ud800", b"\xff\xfe", b"",
                              raw.replace("float32", "float128")]):
        _check(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data, False, f"raw {i}")
    assert not os.path.exists("/tmp/dflow-pwned")


def test_valid_documents_still_import():
    """The fuzz baseline: unmutated documents import and run."""
    gdoc, mdoc = _docs()
    with tf.Graph().as_default() as g:
        gd = GraphDef()
        gd.ParseFromString(json.dumps(gdoc))
        import_graph_def(gd, name="")
        m = MetaGraphDef()
        m.ParseFromString(json.dumps(mdoc))
        import_meta_graph(m, import_scope="again")
        with tf.Session() as s:
            s.run([tf.global_variables_initializer(), "w/Assign"])  # import_graph_def makes no Variable
            a = s.run("out:0", {"x:0": np.ones((2, 3), np.float32)})
            b = s.run("again/out:0", {"again/x:0": np.ones((2, 3), np.float32)})
        np.testing.assert_array_equal(a, b)
        assert tf.get_collection("things") == [3, "word"]
        assert tf.get_collection("outs")[0] is g.get_tensor_by_name("again/out:0")
