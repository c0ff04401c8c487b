"""Estimator.export_saved_model: the serving graph, TF1's signatures, the checkpoint's variables and
the vocabulary files as assets, loaded back with tf.saved_model.loader.load; the serving input
receivers and ExportOutputs and their errors."""

import os

import numpy as np
import pytest

import dflow as tf

RNG = np.random.RandomState(0)
COLORS = np.array(["red", "green", "blue"])[RNG.randint(0, 3, 48)]
AGES = RNG.rand(48).astype(np.float32)
LABELS = np.array(["no", "yes"])[((COLORS == "red") | (AGES > 0.7)).astype(int)]


def example(color, age):
    e = tf.train.Example()
    e.features.feature["color"].bytes_list.value.append(color.encode())
    e.features.feature["age"].float_list.value.append(float(age))
    return e.SerializeToString()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A DNNClassifier over a vocabulary-file column with string labels, trained a little."""
    d = tmp_path_factory.mktemp("export")
    vocab = d / "colors.txt"
    vocab.write_text("red\ngreen\nblue\n")
    color = tf.feature_column.categorical_column_with_vocabulary_file("color", str(vocab))
    columns = [tf.feature_column.indicator_column(color), tf.feature_column.numeric_column("age")]
    est = tf.estimator.DNNClassifier([4], columns, model_dir=str(d / "model"), label_vocabulary=["no", "yes"],
                                     config=tf.estimator.RunConfig(tf_random_seed=1))
    est.train(tf.estimator.inputs.numpy_input_fn({"color": COLORS, "age": AGES}, LABELS, batch_size=16,
                                                 num_epochs=2, shuffle=False))
    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn({"color": COLORS, "age": AGES}, batch_size=48,
                                                               shuffle=False)))
    spec = tf.feature_column.make_parse_example_spec(columns)
    return d, vocab, est, preds, spec


def test_export_loads_with_assets_and_gives_the_estimators_predictions(trained, tmp_path):
    d, vocab, est, preds, spec = trained
    extra = tmp_path / "notes.txt"
    extra.write_text("hello")
    path = est.export_savedmodel(str(tmp_path / "exports"), tf.estimator.export.build_parsing_serving_input_receiver_fn(
        spec), assets_extra={"docs/notes.txt": str(extra)})
    assert isinstance(path, bytes) and os.path.dirname(path) == os.fsencode(str(tmp_path / "exports"))
    assert os.path.basename(path).isdigit()
    export = path.decode()
    assert sorted(os.listdir(export)) == ["assets", "assets.extra", "saved_model.json", "variables"]
    assert (open(os.path.join(export, "assets", "colors.txt")).read() == "red\ngreen\nblue\n")
    assert open(os.path.join(export, "assets.extra", "docs", "notes.txt")).read() == "hello"
    moved = str(vocab) + ".moved"
    os.rename(vocab, moved)  # the table must read the copy in assets/
    try:
        with tf.Graph().as_default(), tf.Session() as sess:
            meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export)
            sigs = meta.signature_def
            # TF1's binary head: classify (also the default), regress and predict
            assert {k: s.method_name for k, s in sigs.items()} == {
                "serving_default": "tensorflow/serving/classify", "classification": "tensorflow/serving/classify",
                "regression": "tensorflow/serving/regress", "predict": "tensorflow/serving/predict"}
            assert sorted(sigs["serving_default"].outputs) == ["classes", "scores"]
            assert sorted(sigs["predict"].inputs) == ["examples"]
            assert sigs["predict"].inputs["examples"].name == "input_example_tensor:0"
            serialized = [example(c, a) for c, a in zip(COLORS, AGES)]
            predict = sigs["predict"]
            out = sess.run({k: v.name for k, v in predict.outputs.items()},
                           {predict.inputs["examples"].name: serialized})
            np.testing.assert_allclose(out["probabilities"], np.stack([p["probabilities"] for p in preds]),
                                       rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(out["classes"].ravel(), [p["classes"][0] for p in preds])
            cls = sigs["classification"]
            classes, scores = sess.run([cls.outputs["classes"].name, cls.outputs["scores"].name],
                                       {cls.inputs["inputs"].name: serialized[:3]})
            assert classes.tolist() == [[b"no", b"yes"]] * 3
            np.testing.assert_allclose(scores, out["probabilities"][:3], rtol=1e-6)
            reg = sigs["regression"]
            np.testing.assert_allclose(sess.run(reg.outputs["outputs"].name, {reg.inputs["inputs"].name: serialized}),
                                       out["logistic"], rtol=1e-6)
            assets = sess.run(tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS))
            assert [os.path.basename(a) for a in assets] == [b"colors.txt"]
            assert os.path.dirname(assets[0]) == os.fsencode(os.path.join(export, "assets"))
    finally:
        os.rename(moved, vocab)


def test_export_saved_model_alias_and_raw_receiver(trained, tmp_path):
    d, vocab, est, preds, spec = trained
    fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"color": tf.placeholder(tf.string, [None]), "age": tf.placeholder(tf.float32, [None])})
    path = est.export_saved_model(str(tmp_path), fn)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path.decode())
        # classify and regress need one string input: only the predict signature fits raw features
        assert sorted(meta.signature_def) == ["predict"]
        sig = meta.signature_def["predict"]
        assert sorted(sig.inputs) == ["age", "color"]
        probs = sess.run(sig.outputs["probabilities"].name, {sig.inputs["color"].name: COLORS[:5],
                                                             sig.inputs["age"].name: AGES[:5]})
        np.testing.assert_allclose(probs, np.stack([p["probabilities"] for p in preds[:5]]), rtol=1e-5, atol=1e-6)


def test_custom_model_fn_export_outputs(tmp_path):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [], initializer=tf.constant_initializer(2.0))
        y = features["x"] * w
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": y}, export_outputs={
                "out": tf.estimator.export.PredictOutput({"double": y})})
        loss = tf.reduce_mean(tf.square(y - labels))
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.assign_add(tf.train.get_global_step(), 1))

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "m"))
    with pytest.raises(ValueError, match="Couldn't find trained model"):
        est.export_saved_model(str(tmp_path / "e"), lambda: None)
    est.train(tf.estimator.inputs.numpy_input_fn({"x": np.ones(4, np.float32)}, np.ones(4, np.float32),
                                                 batch_size=4, shuffle=False), steps=1)

    def receiver():
        x = tf.placeholder(tf.float32, [None], name="x")
        return tf.estimator.export.ServingInputReceiver({"x": x}, x)

    path = est.export_saved_model(str(tmp_path / "e"), receiver).decode()
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        # one export output is also the default
        assert sorted(meta.signature_def) == ["out", "serving_default"]
        sig = meta.signature_def["serving_default"]
        assert list(sig.inputs) == ["input"]
        np.testing.assert_allclose(sess.run(sig.outputs["double"].name, {sig.inputs["input"].name: [1.0, 3.0]}),
                                   [2.0, 6.0])
    with pytest.raises(ValueError, match="ServingInputReceiver"):
        est.export_saved_model(str(tmp_path / "e"), lambda: {"x": 1})
    assert sorted(os.listdir(tmp_path / "e")) == [os.path.basename(path)]  # nothing half-written


def test_receivers_and_export_outputs_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        s = tf.placeholder(tf.string, [None])
        r = tf.estimator.export.ServingInputReceiver(x, s)
        assert list(r.features) == ["feature"] and list(r.receiver_tensors) == ["input"]
        with pytest.raises(ValueError, match="features must be defined"):
            tf.estimator.export.ServingInputReceiver(None, s)
        with pytest.raises(ValueError, match="keys must be strings"):
            tf.estimator.export.ServingInputReceiver({1: x}, s)
        with pytest.raises(ValueError, match="must be a Tensor or SparseTensor"):
            tf.estimator.export.ServingInputReceiver({"x": 3.0}, s)
        t = tf.estimator.export.TensorServingInputReceiver(x, s)
        assert t.features is x
        with pytest.raises(ValueError, match="scores must be a float32 Tensor"):
            tf.estimator.export.ClassificationOutput(scores=s)
        with pytest.raises(ValueError, match="classes must be a string Tensor"):
            tf.estimator.export.ClassificationOutput(classes=x)
        with pytest.raises(ValueError, match="At least one of scores and classes"):
            tf.estimator.export.ClassificationOutput()
        with pytest.raises(ValueError, match="Regression output value must be a float32 Tensor"):
            tf.estimator.export.RegressionOutput(s)
        with pytest.raises(ValueError, match="Prediction output key must be a string"):
            tf.estimator.export.PredictOutput({1: x})
        with pytest.raises(ValueError, match="Classification input must be a single string Tensor"):
            tf.estimator.export.ClassificationOutput(scores=x).as_signature_def({"a": x})
        assert tf.estimator.export.PredictOutput(x).outputs == {"output": x}
        out = tf.estimator.export.PredictOutput(x)
        with pytest.raises(ValueError, match="none of them is specified as the default"):
            tf.estimator.EstimatorSpec("infer", predictions=x, export_outputs={"a": out, "b": out})
        with pytest.raises(TypeError, match="export_outputs must be dict"):
            tf.estimator.EstimatorSpec("infer", predictions=x, export_outputs=[out])
        with pytest.raises(TypeError, match="ExportOutput objects"):
            tf.estimator.EstimatorSpec("infer", predictions=x, export_outputs={"a": x})
        spec = tf.estimator.EstimatorSpec("infer", predictions=x, export_outputs={"a": out})
        assert set(spec.export_outputs) == {"a", "serving_default"}
