"""Graph files that say what cannot exist are refused as built graphs are (issue #14): a
3-node file filling [10**12, 10**12] loads (as TF1's import does) and its run is refused at plan
time; a Placeholder of that shape is refused on import; a stored constant no machine could hold
is refused before it is read."""

from __future__ import annotations

import json
import time

import numpy as np
import psutil
import pytest
import zarr

import dflow as tf
from dflow.errors import InvalidArgumentError, ResourceExhaustedError
from dflow.graph.serialize import GraphDef
from dflow.io.graph_io import import_graph_def, read_graph_def, write_graph


def _rss():
    return psutil.Process().memory_info().rss


@pytest.mark.timeout(30)
@pytest.mark.parametrize("scheduler", [None, "sync", "threads"])
def test_a_graph_file_filling_an_impossible_shape_is_refused_at_plan_time(tmp_path, scheduler):
    g = tf.Graph()
    with g.as_default():
        tf.fill(tf.constant([10**12, 10**12], tf.int64), tf.constant(0.0), name="huge")
    path = write_graph(g, str(tmp_path), "huge.json")
    assert len(json.loads(open(path).read())["node"]) == 3
    before, t0 = _rss(), time.perf_counter()
    with tf.Graph().as_default():
        import_graph_def(read_graph_def(path), name="")
        with tf.Session(scheduler=scheduler) as s, pytest.raises(
                InvalidArgumentError, match=r"Fill op 'huge': Shape \[1000000000000,1000000000000\] would have more "
                r"than 2\*\*63 - 1 elements"):
            s.run("huge:0")
    assert time.perf_counter() - t0 < 10 and _rss() - before < 200 << 20


def test_a_graph_file_with_an_impossible_placeholder_is_refused_on_import():
    gd = GraphDef.FromString(json.dumps({
        "format": "dflow.GraphDef", "version": 1, "versions": {"min_consumer": 1, "producer": 1},
        "node": [{"name": "p", "op": "Placeholder", "input": [], "device": "",
                  "attr": {"dtype": {"dtype": "float32"}, "shape": {"shape": [10**12, 10**12]}}}]}))
    with tf.Graph().as_default(), pytest.raises(ValueError, match=r"'p'.*more than 2\*\*63 - 1 entries"):
        import_graph_def(gd, name="")


@pytest.mark.timeout(30)
def test_a_stored_constant_no_machine_could_hold_is_refused_before_reading(tmp_path):
    g = tf.Graph()
    with g.as_default():
        tf.reduce_sum(tf.constant(np.ones((3, 4))), name="out")
    path = write_graph(g, str(tmp_path), "g.json", large_constant_elements=8)
    doc = json.loads(open(path).read())
    ref = doc["node"][0]["attr"]["value"]["const_ref"]
    huge = [10**6, 10**6]  # 8 TB of float64; a Zarr array with no chunks written reads as zeros
    ref["shape"] = huge
    doc["node"][0]["output_shapes"] = [huge]
    open(path, "w").write(json.dumps(doc))
    zarr.create_array(f"{path}.consts/{ref['array']}", shape=tuple(huge), chunks=(1000, 1000), dtype="float64",
                      overwrite=True)
    before = _rss()
    with pytest.raises(ResourceExhaustedError, match=r"node 'Const'.*shape \[1000000, 1000000\]"):
        read_graph_def(path)
    assert _rss() - before < 200 << 20
