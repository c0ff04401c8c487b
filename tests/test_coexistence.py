"""dflow beside TensorFlow in one process (issue 27): dflow never imports TensorFlow (summaries,
reading them back, `tf.train.Example`, TFRecords) and registers no protobuf symbol under
TensorFlow's names; with TensorFlow installed (`TF_PYTHON`, slow tests), `import dflow` and
`import tensorflow` in either order, then summaries, Examples, TFRecords and a Session of each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# what a TF1 user does with dflow alone; prints a JSON report of what was imported and registered
_DFLOW_ONLY = textwrap.dedent("""
    import glob, json, sys, tempfile
    import numpy as np
    import dflow as tf
    from google.protobuf import descriptor_pool, message

    d = tempfile.mkdtemp()
    x = tf.placeholder(tf.float32, [None], name="x")
    tf.summary.scalar("mean", tf.reduce_mean(x))
    tf.summary.histogram("values", x)
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(d, sess.graph)
        for i in range(3):
            writer.add_summary(sess.run(tf.summary.merge_all(), {x: np.arange(4.0) + i}), i)
        writer.close()
    steps = [e.step for f in glob.glob(d + "/events*") for e in tf.train.summary_iterator(f)
             if e.HasField("summary")]
    example = tf.train.Example(features=tf.train.Features(feature={
        "v": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0]))}))
    with tf.python_io.TFRecordWriter(d + "/r.tfrecord") as w:
        w.write(example.SerializeToString())
    back = [tf.train.Example.FromString(r) for r in tf.python_io.tf_record_iterator(d + "/r.tfrecord")]
    pool = descriptor_pool.Default()
    registered = []
    for name in ("tensorflow.Example", "tensorflow.BytesList", "tensorflow.Features", "tensorflow.Event",
                 "tensorflow.Summary", "tensorflow.GraphDef", "tensorflow.BundleEntryProto",
                 "tensorflow.SavedModel"):
        try:
            pool.FindFileContainingSymbol(name)
            registered.append(name)
        except KeyError:
            pass
    dflow_protos = set()
    for mod_name, mod in list(sys.modules.items()):
        if mod_name.split(".")[0] != "dflow":
            continue
        for value in list(vars(mod).values()):
            if isinstance(value, type) and issubclass(value, message.Message) and value is not message.Message:
                dflow_protos.add(value.DESCRIPTOR.full_name)
    print(json.dumps({
        "steps": steps, "example": list(back[0].features.feature["v"].float_list.value),
        "tensorflow_modules": sorted(m for m in sys.modules if m.split(".")[0] == "tensorflow"
                                     or "tensorflow_stub" in m),
        "registered": registered if "tensorflow" not in sys.modules else [],
        "tensorflow_named_protos": sorted(n for n in dflow_protos if n.startswith("tensorflow.")),
        "example_proto": tf.train.Example.DESCRIPTOR.full_name,
    }))
""")


def _run(python, code, timeout=600):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run([python, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-4000:]
    return out.stdout


def _check_dflow_alone(python):
    report = json.loads(_run(python, _DFLOW_ONLY).strip().splitlines()[-1])
    assert report["steps"] == [0, 1, 2] and report["example"] == [1.0, 2.0]
    # not TensorFlow, and not tensorboard's stand-in for it (what tensorboard loads when TF is absent)
    assert report["tensorflow_modules"] == []
    assert report["registered"] == [] and report["tensorflow_named_protos"] == []
    assert report["example_proto"] == "dflow.proto.Example"


def test_dflow_never_imports_tensorflow_nor_registers_its_names():
    _check_dflow_alone(sys.executable)


def _tf_python():
    python = os.environ.get("TF_PYTHON")
    if not python:
        pytest.skip("TF_PYTHON (an interpreter with TensorFlow) is not set")
    return python


@pytest.mark.slow
def test_dflow_never_imports_an_installed_tensorflow():
    _check_dflow_alone(_tf_python())


# both libraries in one process: each writes a summary, an Example, a TFRecord (read by the other)
# and runs a Session computing the same matmul
_BOTH = textwrap.dedent("""
    import glob, json, os, sys, tempfile
    import numpy as np
    {first}
    {second}
    tf1 = tensorflow.compat.v1
    tf1.disable_eager_execution()
    d = tempfile.mkdtemp()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4) / 7

    # summaries: a FileWriter of each library, each file read back by dflow's summary_iterator
    dx = dflow.placeholder(dflow.float32, [2, 3])
    dm = dflow.matmul(dx, dflow.constant(b))
    ds = dflow.summary.scalar("dflow_sum", dflow.reduce_sum(dm))
    with dflow.Session() as sess:
        dflow_product, dflow_summary = sess.run([dm, ds], {{dx: a}})
        with dflow.summary.FileWriter(os.path.join(d, "dflow_logs"), sess.graph) as w:
            w.add_summary(dflow_summary, 1)
    g = tf1.Graph()
    with g.as_default():
        tx = tf1.placeholder(tf1.float32, [2, 3])
        tm = tf1.matmul(tx, tf1.constant(b))
        ts = tf1.summary.scalar("tf_sum", tf1.reduce_sum(tm))
        with tf1.Session(graph=g) as sess:
            tf_product, tf_summary = sess.run([tm, ts], {{tx: a}})
            w = tf1.summary.FileWriter(os.path.join(d, "tf_logs"), g)
            w.add_summary(tf_summary, 2)
            w.close()
    tags = {{}}
    for name in ("dflow_logs", "tf_logs"):
        for f in glob.glob(os.path.join(d, name, "events*")):
            for e in dflow.train.summary_iterator(f):
                for v in e.summary.value:
                    tags[v.tag] = (e.step, v.simple_value)
    tf_tags = {{v.tag: e.step for f in glob.glob(os.path.join(d, "dflow_logs", "events*"))
               for e in tf1.train.summary_iterator(f) for v in e.summary.value}}

    # Examples: the same feature map in both libraries serializes to the same bytes
    def features(lib):
        return lib.train.Example(features=lib.train.Features(feature={{
            "x": lib.train.Feature(float_list=lib.train.FloatList(value=[1.5, -2.0])),
            "label": lib.train.Feature(int64_list=lib.train.Int64List(value=[7])),
            "name": lib.train.Feature(bytes_list=lib.train.BytesList(value=[b"row"]))}}))
    dflow_example, tf_example = features(dflow), features(tf1)
    same_bytes = dflow_example.SerializeToString(deterministic=True) == \\
        tf_example.SerializeToString(deterministic=True)

    # TFRecords: each library reads what the other wrote
    with dflow.python_io.TFRecordWriter(os.path.join(d, "dflow.tfrecord")) as w:
        w.write(dflow_example.SerializeToString())
    with tf1.python_io.TFRecordWriter(os.path.join(d, "tf.tfrecord")) as w:
        w.write(tf_example.SerializeToString())
    tf_reads = [tf1.train.Example.FromString(r).features.feature["x"].float_list.value[:]
                for r in tf1.io.tf_record_iterator(os.path.join(d, "dflow.tfrecord"))]
    dflow_reads = [dflow.train.Example.FromString(r).features.feature["label"].int64_list.value[:]
                   for r in dflow.python_io.tf_record_iterator(os.path.join(d, "tf.tfrecord"))]

    print(json.dumps({{
        "order": [m for m in ("dflow", "tensorflow") if m in sys.modules],
        "summaries": tags, "tf_reads_dflow_summary": tf_tags,
        "same_example_bytes": same_bytes,
        "tf_reads": [list(v) for v in tf_reads], "dflow_reads": [list(v) for v in dflow_reads],
        "products_equal": bool(np.allclose(dflow_product, tf_product)),
        "product_matches_numpy": bool(np.allclose(dflow_product, a @ b)),
        "example_protos": [dflow.train.Example.DESCRIPTOR.full_name, tf1.train.Example.DESCRIPTOR.full_name],
    }}))
""")


@pytest.mark.slow
@pytest.mark.parametrize("order", ["dflow_first", "tensorflow_first"])
def test_dflow_and_tensorflow_in_one_process(order):
    python = _tf_python()
    imports = ["import dflow", "import tensorflow"]
    if order == "tensorflow_first":
        imports.reverse()
    out = _run(python, _BOTH.format(first=imports[0], second=imports[1]))
    report = json.loads(out.strip().splitlines()[-1])
    total = float((np.arange(6.0).reshape(2, 3) @ (np.arange(12.0).reshape(3, 4) / 7)).sum())
    summaries = report["summaries"]
    assert sorted(summaries) == ["dflow_sum", "tf_sum"] and summaries["dflow_sum"][0] == 1
    assert summaries["tf_sum"][0] == 2
    np.testing.assert_allclose([summaries["dflow_sum"][1], summaries["tf_sum"][1]], [total, total], rtol=1e-5)
    assert report["tf_reads_dflow_summary"] == {"dflow_sum": 1}
    assert report["same_example_bytes"]
    assert report["tf_reads"] == [[1.5, -2.0]] and report["dflow_reads"] == [[7]]
    assert report["products_equal"] and report["product_matches_numpy"]
    assert report["example_protos"] == ["dflow.proto.Example", "tensorflow.Example"]
