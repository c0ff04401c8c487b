"""`dflow predict` end to end: a small MLP saved by dflow (SavedModel, frozen graph, .meta +
checkpoint) run over a Zarr array, a Zarr group, a .npy file and a TFRecord file, in subprocesses
(`python -m dflow.cli predict ...`), compared with numpy and with running the graph on the whole
array in this process; bad input gives one line, a non-zero status and no OUT.zarr."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import zarr

import dflow as tf
from dflow.cli import main

from .test_run import dflow_cli

ROWS, FEATURES = 1000, 4
RS = np.random.RandomState(0)
W1, B1 = RS.randn(FEATURES, 8).astype(np.float32), RS.randn(8).astype(np.float32)
W2, B2 = RS.randn(8, 3).astype(np.float32), RS.randn(3).astype(np.float32)
X = RS.randn(ROWS, FEATURES).astype(np.float32)


def numpy_mlp(x):
    logits = np.maximum(x @ W1 + B1, 0) @ W2 + B2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return logits, e / e.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("predict")
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, FEATURES], name="x")
        hidden = tf.nn.relu(tf.matmul(x, tf.Variable(W1, name="w1")) + B1)
        logits = tf.add(tf.matmul(hidden, tf.Variable(W2, name="w2")), B2, name="logits")
        probs = tf.nn.softmax(logits, name="probs")
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(sess, str(d / "mlp"), {"x": x}, {"logits": logits, "probs": probs})
            frozen = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["logits", "probs"])
            tf.train.write_graph(frozen, str(d), "frozen.pb", as_text=False)
            tf.train.Saver().save(sess, str(d / "ckpt" / "model"))
    g2 = tf.Graph()  # two inputs: the Zarr group holds one array per input key
    with g2.as_default():
        a = tf.placeholder(tf.float32, [None, FEATURES], name="a")
        b = tf.placeholder(tf.float32, [None, 3], name="b")
        out = tf.matmul(a, tf.constant(W1[:, :3])) * b
        with tf.Session(graph=g2) as sess:
            tf.saved_model.simple_save(sess, str(d / "two"), {"a": a, "b": b}, {"out": out})
    z = zarr.create_array(str(d / "x.zarr"), shape=X.shape, chunks=(128, FEATURES), dtype="f4")
    z[:] = X
    group = zarr.open_group(str(d / "ab.zarr"), mode="w")
    group.create_array("a", shape=X.shape, chunks=(250, FEATURES), dtype="f4")[:] = X
    group.create_array("b", shape=(ROWS, 3), chunks=(250, 3), dtype="f4")[:] = X[:, :3] + 1
    np.save(d / "x.npy", X)
    np.save(d / "wide.npy", np.ones((10, FEATURES + 1), np.float32))
    for name, rows in (("x.tfrecord", X), ("wide.tfrecord", np.ones((5, FEATURES + 1), np.float32))):
        with tf.python_io.TFRecordWriter(str(d / name)) as w:
            for row in rows:
                feature = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=row))}
                w.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    return d


def predict(*args, cwd):
    return dflow_cli("predict", *map(str, args), "--no-progress", cwd=cwd, timeout=300)


def read(path):
    group = zarr.open_group(str(path), mode="r")
    return {k: v[:] for k, v in group.arrays()}, {k: v.chunks for k, v in group.arrays()}


def test_saved_model_over_zarr_equals_the_whole_array_run(files):
    out = predict(files / "mlp", "--input", files / "x.zarr", "--output", files / "p.zarr", cwd=files)
    assert out.returncode == 0, out.stderr
    assert "wrote 1000 rows" in out.stderr
    values, chunks = read(files / "p.zarr")
    logits, probs = numpy_mlp(X)
    np.testing.assert_allclose(values["logits"], logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values["probs"], probs, rtol=1e-5, atol=1e-6)
    assert chunks == {"logits": (128, 3), "probs": (128, 3)}  # chunked as the input: a batch per chunk
    g = tf.Graph()  # what a Python script running the loaded graph on the whole array computes
    with g.as_default(), tf.Session(graph=g) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(files / "mlp"))
        sig = meta.signature_def["serving_default"]
        whole = sess.run(g.get_tensor_by_name(sig.outputs["probs"].name),
                         {g.get_tensor_by_name(sig.inputs["x"].name): X})
    np.testing.assert_array_equal(values["probs"], whole)


def test_npy_and_tfrecord_inputs(files):
    logits, probs = numpy_mlp(X)
    for data, out_name, batch in (("x.npy", "n.zarr", 100), ("x.tfrecord", "t.zarr", 300)):
        out = predict(files / "mlp", "--input", files / data, "--output", files / out_name, "--batch-size", batch,
                      "--signature", "serving_default", "--outputs", "probs", cwd=files)
        assert out.returncode == 0, out.stderr
        values, chunks = read(files / out_name)
        assert list(values) == ["probs"] and chunks["probs"] == (batch, 3)
        np.testing.assert_allclose(values["probs"], probs, rtol=1e-5, atol=1e-6)


def test_frozen_graph_meta_graph_and_a_zarr_group(files):
    out = predict(files / "frozen.pb", "--input", files / "x.zarr", "--output", files / "f.zarr", "--inputs", "x:0",
                  "--outputs", "logits,probs:0", "--scheduler", "sync", cwd=files)
    assert out.returncode == 0, out.stderr
    values, _ = read(files / "f.zarr")
    logits, probs = numpy_mlp(X)
    np.testing.assert_allclose(values["logits"], logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values["probs"], probs, rtol=1e-5, atol=1e-6)
    out = predict(files / "ckpt" / "model.meta", "--input", files / "x.zarr", "--output", files / "m.zarr",
                  "--inputs", "x", "--outputs", "logits", "--memory-budget", "64MB", cwd=files)
    assert out.returncode == 0, out.stderr
    np.testing.assert_allclose(read(files / "m.zarr")[0]["logits"], logits, rtol=1e-5, atol=1e-5)
    assert main(["predict", str(files / "two"), "--input", str(files / "ab.zarr"), "--output",
                 str(files / "ab_out.zarr"), "--no-progress"]) == 0
    np.testing.assert_allclose(read(files / "ab_out.zarr")[0]["out"], (X @ W1[:, :3]) * (X[:, :3] + 1), rtol=1e-5)


@pytest.mark.parametrize("args, error", [
    (["missing_model", "--input", "x.zarr"], "NotFoundError: missing_model: no such model"),
    (["mlp", "--input", "x.zarr", "--outputs", "nope"], "NotFoundError: no output 'nope' in the signature"),
    (["mlp", "--input", "x.zarr", "--signature", "train"], "NotFoundError: the SavedModel"),
    (["frozen.pb", "--input", "x.zarr", "--inputs", "y:0", "--outputs", "probs"],
     "NotFoundError: the model has no input tensor 'y:0' (its placeholders: x)"),
    (["frozen.pb", "--input", "x.zarr"], "InvalidArgumentError: this model has no signature"),
    (["two", "--input", "x.zarr"], "InvalidArgumentError: the model has 2 inputs"),
    (["two", "--input", "x.npy"], "InvalidArgumentError: the model has 2 inputs"),
    (["mlp", "--input", "wide.npy"], "InvalidArgumentError: wide.npy does not fit the model: Cannot feed value of "
                                     "shape (10, 5)"),
    (["mlp", "--input", "wide.tfrecord"], "InvalidArgumentError: ParseExample"),
    (["mlp", "--input", "nothing.tfrecord"], "NotFoundError: nothing.tfrecord: no such file"),
    (["mlp", "--input", "x.zarr", "--memory-budget", "1KB"], "ResourceExhaustedError"),
])
def test_bad_input_is_one_line_and_writes_nothing(files, args, error, capsys):
    cwd = os.getcwd()
    os.chdir(files)
    try:
        status = main(["predict", *args, "--output", "bad.zarr", "--no-progress"])
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith("dflow predict: ") and err.count("\n") == 1 and error in err, err
    assert not [p for p in os.listdir(files) if "bad.zarr" in p]  # no OUT.zarr, no temporary


def test_an_existing_output_is_kept_unless_overwrite(files, capsys):
    out = files / "keep.zarr"
    zarr.open_group(str(out), mode="w").create_array("old", shape=(1,), dtype="f4")
    args = ["predict", str(files / "mlp"), "--input", str(files / "x.zarr"), "--output", str(out), "--no-progress"]
    assert main(args) == 1
    assert "FailedPreconditionError" in capsys.readouterr().err and list(read(out)[0]) == ["old"]
    assert main(args + ["--overwrite"]) == 0
    assert sorted(read(out)[0]) == ["logits", "probs"]
    assert not [p for p in os.listdir(files) if p.startswith(".keep.zarr")]
    (files / "a_file").write_text("x")
    assert main(args[:-3] + ["--output", str(files / "a_file"), "--overwrite", "--no-progress"]) == 1
    assert (files / "a_file").read_text() == "x"


TF_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf_graphs"


@pytest.mark.parametrize("model, args", [
    ("mlp_saved_model", []),  # TensorFlow's SavedModel: saved_model.pb + a V2 checkpoint
    ("cnn.pb", ["--inputs", "x:0", "--outputs", "probs:0"]),  # TensorFlow's frozen graph
    ("mlp_ckpt/model.ckpt-3.meta", ["--inputs", "x:0", "--outputs", "probs:0"]),  # TF's .meta + checkpoint
])
def test_models_tensorflow_wrote(tmp_path, model, args):
    """Files TensorFlow 2.21 wrote (tools/make_tf_graph_fixtures.py) give TensorFlow's predictions."""
    stem = model.split("/")[0].split(".")[0]
    want = np.load(TF_FIXTURES / f"{stem}.npz")
    x = np.concatenate([want["in_x_0"]] * 40)
    np.save(tmp_path / "x.npy", x)
    out = predict(TF_FIXTURES / model, "--input", tmp_path / "x.npy", "--output", tmp_path / "p.zarr",
                  "--batch-size", 16, *args, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    values, _ = read(tmp_path / "p.zarr")
    np.testing.assert_allclose(values["probs"], np.concatenate([want["out_0"]] * 40), rtol=1e-5, atol=1e-6)
