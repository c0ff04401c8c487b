"""`tf.saved_model`: simple_save / SavedModelBuilder → loader.load in a new graph gives the same
answers; signatures; TF1's errors; py_func refused; tampered files are DataLossError, never code."""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest

import dflow as tf
from dflow.errors import DataLossError, FailedPreconditionError, InvalidArgumentError

sm = tf.saved_model


def _leftovers(parent):
    """Staging directories left beside an export directory."""
    return [n for n in os.listdir(parent) if "dflow-tmp" in n]


def _model(rng):
    """x → relu(x @ W + b) * scale with a large constant `scale` (kept in the constants group)."""
    W0 = rng.standard_normal((4, 3)).astype(np.float32)
    b0 = rng.standard_normal(3).astype(np.float32)
    scale0 = rng.uniform(0.5, 2.0, (1500, 3)).astype(np.float32)  # > LARGE_CONST_ELEMENTS
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    W = tf.Variable(W0, name="W")
    b = tf.Variable(b0, name="b")
    y = tf.nn.relu(tf.matmul(x, W) + b) * tf.reduce_sum(tf.constant(scale0, name="scale"), axis=0)
    return x, y, lambda xv: np.maximum(xv @ W0 + b0, 0) * scale0.sum(0)


@pytest.mark.program
def test_simple_save_then_load_in_a_new_graph(tmp_path):
    rng = np.random.default_rng(0)
    export_dir = str(tmp_path / "export" / "1")
    with tf.Graph().as_default():
        x, y, reference = _model(rng)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            xv = rng.standard_normal((5, 4)).astype(np.float32)
            before = sess.run(y, {x: xv})
            sm.simple_save(sess, export_dir, inputs={"x": x}, outputs={"y": y})
    np.testing.assert_allclose(before, reference(xv), rtol=1e-5, atol=1e-5)
    assert sorted(os.listdir(export_dir)) == ["saved_model.json", "saved_model.json.consts", "variables"]
    assert sm.loader.maybe_saved_model_directory(export_dir) and not _leftovers(tmp_path / "export")

    with tf.Graph().as_default() as g, tf.Session() as sess:
        meta = sm.loader.load(sess, [sm.tag_constants.SERVING], export_dir)
        sig = meta.signature_def[sm.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        assert sig.method_name == sm.signature_constants.PREDICT_METHOD_NAME
        assert sm.signature_def_utils.is_valid_signature(sig)
        assert sig.inputs["x"].name == "x:0" and sig.inputs["x"].dtype == tf.float32
        assert sig.inputs["x"].tensor_shape.as_list() == [None, 4]
        assert list(meta.meta_info_def.tags) == ["serve"]
        after = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: xv})
        np.testing.assert_allclose(after, before, rtol=1e-6)
        x2 = sm.utils.get_tensor_from_tensor_info(sig.inputs["x"])
        assert x2.graph is g and x2.name == "x:0"


def test_builder_two_tag_sets_and_main_op(tmp_path):
    rng = np.random.default_rng(1)
    export_dir = str(tmp_path / "m")
    W0 = rng.standard_normal((3, 2))
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float64, [None, 3], name="x")
        W = tf.Variable(W0, name="W")
        counter = tf.Variable(0, name="counter")
        y = tf.matmul(x, W, name="y")
        loss = tf.reduce_sum(tf.square(y), name="loss")
        reset = tf.assign(counter, 7, name="reset").op
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(counter, 3))
        builder = sm.builder.SavedModelBuilder(export_dir)
        with pytest.raises(AssertionError, match="has not been saved yet"):
            builder.add_meta_graph(["serve"])
        train_sig = sm.signature_def_utils.predict_signature_def({"x": x}, {"loss": loss})
        builder.add_meta_graph_and_variables(sess, [sm.tag_constants.TRAINING, sm.tag_constants.GPU],
                                             signature_def_map={"train": train_sig})
        with pytest.raises(AssertionError, match="has already been saved"):
            builder.add_meta_graph_and_variables(sess, ["other"])
        serve_sig = sm.signature_def_utils.build_signature_def({"x": sm.utils.build_tensor_info(x)},
                                                               {"y": sm.utils.build_tensor_info(y)},
                                                               sm.signature_constants.PREDICT_METHOD_NAME)
        builder.add_meta_graph([sm.tag_constants.SERVING], signature_def_map={"predict": serve_sig}, main_op=reset)
        assert not os.path.exists(export_dir)  # nothing is published before save()
        path = builder.save()
    assert path == os.fsencode(os.path.join(export_dir, "saved_model.json"))
    xv = rng.standard_normal((4, 3))

    with tf.Graph().as_default(), tf.Session() as sess:  # tags match as a set, in any order
        meta = sm.loader.load(sess, ["gpu", "train"], export_dir)
        assert list(meta.signature_def) == ["train"]
        sig = meta.signature_def["train"]
        np.testing.assert_allclose(sess.run(sig.outputs["loss"].name, {sig.inputs["x"].name: xv}),
                                   np.sum((xv @ W0) ** 2), rtol=1e-12)
        assert sess.run("counter:0") == 3  # restored; no main op in this meta graph
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = sm.loader.load(sess, ["serve"], export_dir, import_scope="imported")
        assert list(meta.signature_def) == ["predict"]
        sig = meta.signature_def["predict"]
        y2 = sm.utils.get_tensor_from_tensor_info(sig.outputs["y"], import_scope="imported")
        x2 = sm.utils.get_tensor_from_tensor_info(sig.inputs["x"], import_scope="imported")
        np.testing.assert_allclose(sess.run(y2, {x2: xv}), xv @ W0, rtol=1e-12)
        assert sess.run("imported/counter:0") == 7  # the main op ran after the restore
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(RuntimeError, match=r"MetaGraphDef associated with tags 'serve', 'gpu' could not be "
                           r"found in SavedModel, with available tags '\[\{'(gpu|train)', '(gpu|train)'\}, "
                           r"\{'serve'\}\]'"):
            sm.loader.load(sess, ["serve", "gpu"], export_dir)
        assert tf.get_default_graph().get_operations() == []


def test_existing_export_dir_and_missing_saved_model(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    (tmp_path / "empty").mkdir()
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [2], name="x")
        message = (f"Export directory {tmp_path / 'full'} already exists, and isn't empty. Please choose a "
                   "different export directory, or delete all the contents of the specified directory.")
        with pytest.raises(AssertionError) as e:
            sm.simple_save(sess, str(tmp_path / "full"), {"x": x}, {"y": x * 2})
        assert str(e.value) == message
        sm.simple_save(sess, str(tmp_path / "empty"), {"x": x}, {"y": x * 2})  # an empty one is fine
        with pytest.raises(AssertionError, match="already exists, and isn't empty"):
            sm.builder.SavedModelBuilder(str(tmp_path / "empty"))
        with pytest.raises(OSError, match="SavedModel file does not exist at"):
            sm.loader.load(sess, ["serve"], str(tmp_path / "nothing"))
    assert not sm.loader.maybe_saved_model_directory(str(tmp_path / "full"))
    (tmp_path / "full" / "saved_model.pb").write_bytes(b"\x08\x01")  # TensorFlow's own format
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(RuntimeError, match="could not be found in SavedModel"):  # read, but holds no graph
            sm.loader.load(sess, ["serve"], str(tmp_path / "full"))
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = sm.loader.load(sess, ["serve"], str(tmp_path / "empty"))
        sig = meta.signature_def["serving_default"]  # a graph without variables
        np.testing.assert_array_equal(sess.run(sig.outputs["y"].name, {"x:0": [1.0, 2.0]}), [2.0, 4.0])


def test_py_func_is_refused_and_nothing_is_written(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [3], name="x")
        y = tf.py_func(lambda a: a * 2, [x], tf.float32, name="double")
        with pytest.raises(InvalidArgumentError, match="'double' \\(PyFunc\\).*Python callable"):
            sm.simple_save(sess, str(tmp_path / "m"), {"x": x}, {"y": y})
    assert os.listdir(tmp_path) == []  # neither the export directory nor a staging directory


def test_failed_save_leaves_nothing(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [3], name="x")
        v = tf.Variable(np.ones(3, np.float32), name="v")  # never initialized
        with pytest.raises(FailedPreconditionError, match="uninitialized"):
            sm.simple_save(sess, str(tmp_path / "m"), {"x": x}, {"y": x * v})
        assert os.listdir(tmp_path) == []
        builder = sm.builder.SavedModelBuilder(str(tmp_path / "m"))
        with pytest.raises(FailedPreconditionError, match="uninitialized"):
            builder.add_meta_graph_and_variables(sess, ["serve"])
        assert os.listdir(tmp_path) == []  # while the builder lives, too
        sess.run(v.initializer)
        builder.add_meta_graph_and_variables(sess, ["serve"])  # it can be used again
        assert _leftovers(tmp_path) and not os.path.exists(tmp_path / "m")
        builder.save()
    assert os.listdir(tmp_path) == ["m"]


@pytest.fixture
def saved(tmp_path):
    export_dir = tmp_path / "m"
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable(np.arange(2000, dtype=np.float32).reshape(2, 1000), name="w")
        sess.run(w.initializer)
        sm.simple_save(sess, str(export_dir), {"x": x}, {"y": tf.matmul(x, w)})
    return export_dir


def _load(export_dir):
    with tf.Graph().as_default(), tf.Session() as sess:
        return sm.loader.load(sess, ["serve"], str(export_dir))


class _Boom:
    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def test_tampered_document_is_data_loss_never_code(saved, tmp_path):
    doc = saved / "saved_model.json"
    original = doc.read_bytes()
    boom = _Boom()
    boom.marker = str(tmp_path / "code-ran")
    doc.write_bytes(pickle.dumps(boom))  # what a pickle-based loader would execute
    with pytest.raises(DataLossError):
        _load(saved)
    assert not os.path.exists(boom.marker)
    bad = json.loads(original)
    bad["meta_graphs"][0]["signature_def"]["serving_default"]["inputs"]["x"]["name"] = {"__class__": "os.system"}
    doc.write_text(json.dumps(bad))
    with pytest.raises(DataLossError, match="malformed TensorInfo"):
        _load(saved)
    bad = json.loads(original)
    bad["meta_graphs"][0]["collection_def"]["saved_model_main_op"] = [{"python": "__import__('os')"}]
    doc.write_text(json.dumps(bad))
    with pytest.raises(DataLossError, match="bad item"):
        _load(saved)
    doc.write_bytes(original)
    _load(saved)  # the untouched document loads


def _variable_array(export_dir, name):
    return os.path.join(os.path.realpath(export_dir / "variables" / "variables"), name)


def test_tampered_variables_are_data_loss(saved):
    array = _variable_array(saved, "w")
    chunks = sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(array, "c")) for f in fs)
    data = bytearray(open(chunks[0], "rb").read())
    original = bytes(data)
    data[-1] ^= 0xFF
    open(chunks[0], "wb").write(data)
    with pytest.raises(DataLossError):
        _load(saved)
    open(chunks[0], "wb").write(original)
    meta_path = os.path.join(array, "zarr.json")
    meta = json.load(open(meta_path))
    meta["codecs"].append({"name": "numcodecs.pickle"})  # a codec outside the allow-list
    json.dump(meta, open(meta_path, "w"))
    with pytest.raises(DataLossError, match="variable 'w'"):
        _load(saved)


def test_signature_def_utils_as_tf1():
    su = sm.signature_def_utils
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        examples = tf.placeholder(tf.string, name="examples")
        classes, scores = tf.constant(["a", "b"]), tf.constant([[0.1, 0.9]])
        with pytest.raises(ValueError, match="Prediction `inputs` cannot be None or empty."):
            su.predict_signature_def({}, {"y": x})
        with pytest.raises(ValueError, match="Prediction `outputs` cannot be None or empty."):
            su.predict_signature_def({"x": x}, None)
        c = su.classification_signature_def(examples, classes, scores)
        assert c.method_name == "tensorflow/serving/classify" and sorted(c.outputs) == ["classes", "scores"]
        assert c.inputs["inputs"].name == "examples:0" and su.is_valid_signature(c)
        with pytest.raises(ValueError, match="Classification input must be a single string Tensor"):
            su.classification_signature_def(x, classes, scores)
        with pytest.raises(ValueError, match="cannot both be None"):
            su.classification_signature_def(examples, None, None)
        r = su.regression_signature_def(examples, scores)
        assert r.method_name == "tensorflow/serving/regress" and list(r.outputs) == ["outputs"]
        assert su.is_valid_signature(r)
        with pytest.raises(ValueError, match="Regression output must be a float Tensor"):
            su.regression_signature_def(examples, classes)
        assert not su.is_valid_signature(su.build_signature_def({}, {}, "m"))
        assert not su.is_valid_signature(su.build_signature_def({"x": sm.utils.build_tensor_info(x)}, {},
                                                                sm.PREDICT_METHOD_NAME))
        assert not su.is_valid_signature(None)
        with pytest.raises(TypeError, match="needs a graph Tensor"):
            sm.utils.build_tensor_info(3)
    with tf.Graph().as_default():
        with pytest.raises(KeyError, match="The name 'x:0' refers to a Tensor which does not exist"):
            sm.utils.get_tensor_from_tensor_info(c.inputs["inputs"].__class__("x:0", tf.float32, [3]))
    assert (sm.SERVING, sm.TRAINING, sm.GPU, sm.TPU) == ("serve", "train", "gpu", "tpu")
    assert tf.compat.v1.saved_model.loader.load is sm.load and sm.Builder is sm.builder.SavedModelBuilder
    assert (sm.PREDICT_INPUTS, sm.PREDICT_OUTPUTS, sm.DEFAULT_SERVING_SIGNATURE_DEF_KEY) == \
        ("inputs", "outputs", "serving_default")


def _vocab_model(tmp_path, vocab):
    """A SavedModel (dflow's format) whose table reads `vocab`, given as an asset."""
    export = tmp_path / "vocab_model"
    with tf.Graph().as_default():
        x = tf.placeholder(tf.string, [None], name="x")
        ids = tf.contrib.lookup.index_table_from_file(str(vocab)).lookup(x)
        with tf.Session() as sess:
            b = tf.saved_model.builder.SavedModelBuilder(str(export))
            b.add_meta_graph_and_variables(
                sess, ["serve"], {"serving_default": tf.saved_model.predict_signature_def({"x": x}, {"ids": ids})},
                assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS), main_op=tf.tables_initializer())
            b.save()
    return export


def test_assets_are_copied_and_the_loaded_graph_reads_the_copies(tmp_path):
    vocab = tmp_path / "words.txt"
    vocab.write_text("a\nb\nc\n")
    export = _vocab_model(tmp_path, vocab)
    assert (export / "assets" / "words.txt").read_text() == "a\nb\nc\n"
    doc = json.loads((export / "saved_model.json").read_text())
    assert doc["meta_graphs"][0]["meta_info_def"]["asset_file_def"] == [
        {"tensor": "string_to_index/text_file_id_table_init/asset_filepath:0", "filename": "words.txt"}]
    vocab.unlink()  # the loaded model must not need the original file
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(export))
        sig = meta.signature_def["serving_default"]
        assert sess.run(sig.outputs["ids"].name, {sig.inputs["x"].name: ["c", "a", "z"]}).tolist() == [2, 0, -1]
        sess.run(tf.tables_initializer())  # a later initialization reads the copy too
        assert sess.run(tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS)) == [
            os.fsencode(str(export / "assets" / "words.txt"))]


def test_missing_or_tampered_assets(tmp_path):
    from dflow.errors import NotFoundError

    vocab = tmp_path / "words.txt"
    vocab.write_text("a\nb\n")
    with tf.Graph().as_default(), tf.Session() as sess:
        b = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "x"))
        with pytest.raises(NotFoundError, match="nope.txt"):
            b.add_meta_graph_and_variables(sess, ["serve"], assets_collection=[tf.constant(str(tmp_path / "nope.txt"))])
    export = _vocab_model(tmp_path, vocab)
    (export / "assets" / "words.txt").unlink()
    with tf.Graph().as_default(), tf.Session() as sess, pytest.raises(NotFoundError, match="words.txt"):
        tf.saved_model.loader.load(sess, ["serve"], str(export))
    path = export / "saved_model.json"
    doc = json.loads(path.read_text())
    doc["meta_graphs"][0]["meta_info_def"]["asset_file_def"][0]["filename"] = "../../etc/passwd"
    path.write_text(json.dumps(doc))
    with tf.Graph().as_default(), tf.Session() as sess, pytest.raises(DataLossError, match="bad asset entry"):
        tf.saved_model.loader.load(sess, ["serve"], str(export))
