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
