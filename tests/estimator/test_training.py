"""tf.estimator.train_and_evaluate (local mode), TrainSpec/EvalSpec and the exporters; DNNLinearCombined
estimators; and a census-style wide & deep program from in-memory data to a served SavedModel."""

import os

import numpy as np
import pytest

import dflow as tf

RNG = np.random.RandomState(2)
N = 120
X = RNG.randn(N).astype(np.float32)
Y = (3.0 * X + 1.0).astype(np.float32)


def input_fn(num_epochs=None):
    return tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=20, num_epochs=num_epochs, shuffle=False)


def serving_fn():
    x = tf.placeholder(tf.float32, [None], name="x")
    return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def test_train_and_evaluate_evaluates_after_checkpoints_and_exports(tmp_path):
    est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")], model_dir=str(tmp_path),
                                       config=tf.estimator.RunConfig(save_checkpoints_steps=10, tf_random_seed=1))
    latest = tf.estimator.LatestExporter("latest", serving_fn, exports_to_keep=1)
    final = tf.estimator.FinalExporter("final", serving_fn)
    train_spec = tf.estimator.TrainSpec(input_fn(), max_steps=20)
    eval_spec = tf.estimator.EvalSpec(input_fn(1), steps=None, exporters=[latest, final], throttle_secs=0)
    metrics, exports = tf.estimator.train_and_evaluate(est, train_spec, eval_spec)
    assert metrics["global_step"] == 20
    # one evaluation per checkpoint after the first (step 0): steps 10 and 20; the exporters ran at both,
    # the final one exporting at step 20 only
    events = [e for f in os.listdir(tmp_path / "eval") for e in tf.train.summary_iterator(str(tmp_path / "eval" / f))
              if e.HasField("summary")]
    assert sorted(e.step for e in events) == [10, 20]
    np.testing.assert_allclose(metrics["loss"], est.evaluate(input_fn(1))["loss"], rtol=1e-6)
    assert len(exports) == 2 and exports[1] is not None
    assert exports[0].decode().startswith(str(tmp_path / "export" / "latest"))
    assert exports[1].decode().startswith(str(tmp_path / "export" / "final"))
    assert len(os.listdir(tmp_path / "export" / "latest")) == 1  # exports_to_keep=1
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], exports[1].decode())
        sig = meta.signature_def["predict"]
        got = sess.run(sig.outputs["predictions"].name, {sig.inputs["x"].name: X[:4]})
    want = np.stack([p["predictions"] for p in est.predict(tf.estimator.inputs.numpy_input_fn(
        {"x": X[:4]}, shuffle=False))])
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_best_exporter_and_throttle(tmp_path):
    est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")], model_dir=str(tmp_path),
                                       config=tf.estimator.RunConfig(save_checkpoints_steps=5, tf_random_seed=1))
    best = tf.estimator.BestExporter(serving_input_receiver_fn=serving_fn, exports_to_keep=None)
    # a large throttle: an evaluation after the first checkpoint that counts (step 5), none at step 10,
    # a final one at step 15
    spec = tf.estimator.EvalSpec(input_fn(1), steps=None, exporters=best, throttle_secs=10000)
    metrics, exports = tf.estimator.train_and_evaluate(est, tf.estimator.TrainSpec(input_fn(), max_steps=15), spec)
    assert metrics["global_step"] == 15 and len(exports) == 1
    events = [e for f in os.listdir(tmp_path / "eval") for e in tf.train.summary_iterator(str(tmp_path / "eval" / f))
              if e.HasField("summary")]
    assert sorted(e.step for e in events) == [5, 15]
    # at step 5 TF1 reads the best so far from the event files, which already hold that evaluation: no
    # export; at step 15 the loss is smaller: exported
    assert exports[0] is not None and len(os.listdir(tmp_path / "export" / "best_exporter")) == 1
    with pytest.raises(ValueError, match="no loss is found"):
        tf.estimator.BestExporter(serving_input_receiver_fn=serving_fn)._compare_fn(
            best_eval_result={"a": 1}, current_eval_result={"loss": 1})


def test_specs_are_checked():
    with pytest.raises(TypeError, match="`input_fn` must be callable"):
        tf.estimator.TrainSpec(None)
    with pytest.raises(ValueError, match="Must specify max_steps > 0, given: 0"):
        tf.estimator.TrainSpec(input_fn(), max_steps=0)
    with pytest.raises(TypeError, match="SessionRunHook"):
        tf.estimator.TrainSpec(input_fn(), hooks=[1])
    with pytest.raises(ValueError, match="Must specify steps > 0"):
        tf.estimator.EvalSpec(input_fn(), steps=0)
    with pytest.raises(TypeError, match="`name` must be string"):
        tf.estimator.EvalSpec(input_fn(), name=3)
    with pytest.raises(ValueError, match="throttle_secs >= 0"):
        tf.estimator.EvalSpec(input_fn(), throttle_secs=-1)
    with pytest.raises(ValueError, match="start_delay_secs >= 0"):
        tf.estimator.EvalSpec(input_fn(), start_delay_secs=-1)
    with pytest.raises(TypeError, match="`exporters` must be an Exporter"):
        tf.estimator.EvalSpec(input_fn(), exporters=[3])
    e = tf.estimator.LatestExporter("a", serving_fn)
    with pytest.raises(ValueError, match="unique names"):
        tf.estimator.EvalSpec(input_fn(), exporters=[e, e])
    with pytest.raises(ValueError, match="exports_to_keep"):
        tf.estimator.LatestExporter("a", serving_fn, exports_to_keep=0)
    with pytest.raises(ValueError, match="current_eval_result"):
        tf.estimator.BestExporter(compare_fn=lambda best_eval_result: True)
    spec = tf.estimator.EvalSpec(input_fn())
    assert (spec.steps, spec.start_delay_secs, spec.throttle_secs, spec.exporters) == (100, 120, 600, ())
    with pytest.raises(TypeError, match="`train_spec` must have type"):
        tf.estimator.train_and_evaluate(tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")]),
                                        spec, spec)


def test_dnn_linear_combined_variables_and_training(tmp_path):
    cat = tf.feature_column.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
    num = tf.feature_column.numeric_column("x")
    est = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path), linear_feature_columns=[cat, num],
        dnn_feature_columns=[tf.feature_column.embedding_column(cat, 2), num], dnn_hidden_units=[3],
        config=tf.estimator.RunConfig(tf_random_seed=1))
    c = np.array(["a", "b", "c"])[RNG.randint(0, 3, N)]
    y = ((c == "a") ^ (X > 0)).astype(np.int64)
    est.train(tf.estimator.inputs.numpy_input_fn({"c": c, "x": X}, y, batch_size=20, num_epochs=None,
                                                 shuffle=False), steps=30)
    # TF 1.15's names (wide & deep with no partitioner: Adagrad slots in dnn/, Ftrl's two in linear/)
    dnn = ["dnn/hiddenlayer_0/bias", "dnn/hiddenlayer_0/kernel", "dnn/logits/bias", "dnn/logits/kernel",
           "dnn/input_from_feature_columns/input_layer/c_embedding/embedding_weights"]
    linear = ["linear/linear_model/bias_weights", "linear/linear_model/c/weights", "linear/linear_model/x/weights"]
    assert sorted(est.get_variable_names()) == sorted(
        dnn + [v + "/Adagrad" for v in dnn] + linear + [v + s for v in linear for s in ("/Ftrl", "/Ftrl_1")]
        + ["global_step"])
    assert est.get_variable_value("global_step") == 30  # one increment per step for the two optimizers
    results = est.evaluate(tf.estimator.inputs.numpy_input_fn({"c": c, "x": X}, y, batch_size=N, shuffle=False))
    assert results["accuracy"] > 0.8
    with pytest.raises(ValueError, match="Either linear_feature_columns or dnn_feature_columns"):
        tf.estimator.DNNLinearCombinedRegressor()
    reg = tf.estimator.DNNLinearCombinedRegressor(model_dir=str(tmp_path / "r"), linear_feature_columns=[num],
                                                  config=tf.estimator.RunConfig(tf_random_seed=1))
    reg.train(input_fn(), steps=5)
    assert set(reg.get_variable_names()) >= {"linear/linear_model/x/weights", "linear/linear_model/bias_weights"}
    assert not any(n.startswith("dnn/") for n in reg.get_variable_names())


@pytest.mark.program
def test_census_style_wide_and_deep_program(tmp_path):
    # in-memory census-like data
    rng = np.random.RandomState(7)
    n = 200
    data = {
        "education": np.array(["Bachelors", "HS-grad", "Masters", "Doctorate"])[rng.randint(0, 4, n)],
        "occupation": np.array(["Tech-support", "Sales", "Exec-managerial", "Craft-repair", "Other"])[
            rng.randint(0, 5, n)],
        "age": rng.randint(18, 70, n).astype(np.float32),
        "hours_per_week": rng.randint(10, 60, n).astype(np.float32),
    }
    income = ((np.isin(data["education"], ["Masters", "Doctorate"]) & (data["age"] > 30))
              | (data["hours_per_week"] > 50)).astype(np.int64)
    labels = np.array([">50K" if v else "<=50K" for v in income])

    education = tf.feature_column.categorical_column_with_vocabulary_list(
        "education", ["Bachelors", "HS-grad", "Masters", "Doctorate"])
    occupation = tf.feature_column.categorical_column_with_hash_bucket("occupation", hash_bucket_size=20)
    age = tf.feature_column.numeric_column("age")
    age_buckets = tf.feature_column.bucketized_column(age, boundaries=[25, 30, 40, 50, 60])
    hours = tf.feature_column.numeric_column("hours_per_week")
    wide_columns = [education, occupation, age_buckets,
                    tf.feature_column.crossed_column([education, age_buckets], hash_bucket_size=50)]
    deep_columns = [age, hours, tf.feature_column.indicator_column(education),
                    tf.feature_column.embedding_column(occupation, dimension=4)]

    model = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path / "census"), linear_feature_columns=wide_columns,
        dnn_feature_columns=deep_columns, dnn_hidden_units=[8, 4], label_vocabulary=["<=50K", ">50K"],
        config=tf.estimator.RunConfig(tf_random_seed=42, save_checkpoints_steps=20))

    def train_input_fn():
        return tf.estimator.inputs.numpy_input_fn(data, labels, batch_size=40, num_epochs=None, shuffle=True)()

    def eval_input_fn():
        return tf.estimator.inputs.numpy_input_fn(data, labels, batch_size=n, shuffle=False)()

    feature_spec = tf.feature_column.make_parse_example_spec(wide_columns + deep_columns)
    serving_fn = tf.estimator.export.build_parsing_serving_input_receiver_fn(feature_spec)
    train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=40)
    eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=0,
                                      exporters=tf.estimator.FinalExporter("census", serving_fn))
    metrics, exports = tf.estimator.train_and_evaluate(model, train_spec, eval_spec)
    assert metrics["global_step"] == 40 and metrics["accuracy"] > 0.6
    assert exports[0] is not None  # the final export

    export_dir = model.export_savedmodel(str(tmp_path / "serving"), serving_fn).decode()
    predictions = list(model.predict(lambda: tf.estimator.inputs.numpy_input_fn(
        data, batch_size=50, shuffle=False)()))

    def serialize(i):
        ex = tf.train.Example()
        f = ex.features.feature
        f["education"].bytes_list.value.append(data["education"][i].encode())
        f["occupation"].bytes_list.value.append(data["occupation"][i].encode())
        f["age"].float_list.value.append(float(data["age"][i]))
        f["hours_per_week"].float_list.value.append(float(data["hours_per_week"][i]))
        return ex.SerializeToString()

    examples = [serialize(i) for i in range(n)]
    with tf.Graph().as_default() as graph, tf.Session(graph=graph) as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
        predict = meta.signature_def["predict"]
        out = sess.run({k: predict.outputs[k].name for k in ("probabilities", "classes")},
                       {predict.inputs["examples"].name: examples})
        classify = meta.signature_def[tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        scores = sess.run(classify.outputs["scores"].name, {classify.inputs["inputs"].name: examples})
    want = np.stack([p["probabilities"] for p in predictions])
    np.testing.assert_allclose(out["probabilities"], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(scores, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out["classes"].ravel(), [p["classes"][0] for p in predictions])
