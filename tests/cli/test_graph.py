"""`dflow graph`: DOT text (and, where Graphviz's dot program exists, pictures) of saved graphs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dflow as tf
from dflow.cli import main
from dflow.cli.graph import graph_def_of, to_dot

ROOT = Path(__file__).resolve().parents[2]


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.variable_scope("dense"):
        w = tf.get_variable("w", [3, 2])
        y = tf.matmul(x, w, name="mm")
    with tf.control_dependencies([y]):
        done = tf.no_op(name="done")
    return x, y, done


def test_graph_file_meta_graph_and_saved_model_give_the_same_ops(tmp_path):
    with tf.Graph().as_default() as g:
        x, y, _ = _model()
        path = tf.train.write_graph(g, str(tmp_path), "g.json")
        tf.train.export_meta_graph(str(tmp_path / "m.meta"))
        names = {op.name for op in g.get_operations()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(sess, str(tmp_path / "sm"), {"x": x}, {"y": y})
    for p in (path, tmp_path / "m.meta"):
        assert {n.name for n in graph_def_of(p).node} == names
    assert names <= {n.name for n in graph_def_of(tmp_path / "sm").node}
    src = to_dot(graph_def_of(path)).source
    assert "subgraph cluster_dense {" in src  # the scope is a box
    assert 'label="mm\\nMatMul"' in src
    assert 'x -> "dense/mm" [label="[?,3]"]' in src  # a tensor edge with its static shape
    assert '"dense/mm" -> done [color=gray40 style=dashed]' in src  # a control input


def test_cli_writes_dot_and_explains_a_missing_dot_program(tmp_path):
    with tf.Graph().as_default() as g:
        _model()
        path = tf.train.write_graph(g, str(tmp_path), "g.json")
    out = tmp_path / "g.dot"
    proc = subprocess.run([sys.executable, "-m", "dflow.cli", "graph", path, "--format", "dot", "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().startswith("digraph dflow {") and "MatMul" in out.read_text()
    svg = tmp_path / "g.svg"
    code = main(["graph", path, "--format", "svg", "-o", str(svg)])
    if shutil.which("dot") is None:
        assert code == 1 and not svg.exists()
    else:
        assert code == 0 and b"<svg" in svg.read_bytes()


def test_cli_refuses_a_missing_or_corrupt_file(tmp_path, capsys):
    assert main(["graph", str(tmp_path / "nope.json"), "--format", "dot"]) == 1
    assert "NotFoundError" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["graph", str(bad), "--format", "dot"]) == 1
    assert "DataLossError" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["dot"])
def test_cli_to_stdout(tmp_path, fmt, capfd):
    with tf.Graph().as_default() as g:
        _model()
        path = tf.train.write_graph(g, str(tmp_path), "g.json")
    assert main(["graph", path, "--format", fmt]) == 0
    assert capfd.readouterr().out.startswith("digraph dflow {")
