"""tf.estimator.Estimator with a custom model_fn: train → evaluate → predict against numpy, resumed
across train calls, summaries under model_dir/eval, and TF1's errors."""

import numpy as np
import pytest

import dflow as tf
from dflow.summary import summary_iterator

RNG = np.random.RandomState(0)
X = RNG.randn(40, 3).astype(np.float32)
W_TRUE = np.array([[1.0], [-2.0], [0.5]], np.float32)
Y = (X @ W_TRUE + 0.3).astype(np.float32)
LR = 0.1


def model_fn(features, labels, mode, params):
    """Linear regression by gradient descent, mean squared error."""
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    pred = tf.matmul(features["x"], w) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred, "twice": 2.0 * pred})
    loss = tf.reduce_mean(tf.square(pred - labels))
    train_op = tf.train.GradientDescentOptimizer(params["lr"]).minimize(loss, global_step=tf.train.get_global_step())
    metrics = {"mae": tf.metrics.mean_absolute_error(labels, pred)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def numpy_gd(steps, batches):
    """The same training in numpy: (w, b) after `steps` steps over the cycled batches."""
    w, b = np.zeros((3, 1)), np.zeros(1)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        err = x @ w + b - y
        w = w - LR * 2 * x.T @ err / len(x)
        b = b - LR * 2 * err.sum(0) / len(x)
    return w, b


BATCHES = [(X[i:i + 10].astype(np.float64), Y[i:i + 10].astype(np.float64)) for i in range(0, 40, 10)]


def train_input(epochs=None):
    return tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=10, num_epochs=epochs, shuffle=False)


def make(tmp_path, **config):
    return tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), params={"lr": LR},
                                  config=tf.estimator.RunConfig(**config))


# each run of a monitored session is a separate Dask computation: the processes mode (~18 s here,
# process start-up per run) adds nothing the threads mode does not check
@pytest.mark.program(modes=["inprocess", "dask-sync", "dask-threads"])
def test_train_resumes_evaluate_predict(tmp_path):
    est = make(tmp_path)
    est.train(train_input(), steps=3)
    assert est.get_variable_value("global_step") == 3
    w, b = numpy_gd(3, BATCHES)
    np.testing.assert_allclose(est.get_variable_value("w"), w, rtol=1e-5, atol=1e-6)
    # a second call resumes at step 3 (the input starts again, as TF1's does: batch 0 at step 3)
    est.train(train_input(), steps=2)
    assert est.get_variable_value("global_step") == 5
    w, b = numpy_gd(5, BATCHES[:3] + BATCHES[:2])
    np.testing.assert_allclose(est.get_variable_value("w"), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(est.get_variable_value("b"), b, rtol=1e-5, atol=1e-6)
    assert sorted(est.get_variable_names()) == ["b", "global_step", "w"]
    assert est.latest_checkpoint().endswith("model.ckpt-5")

    results = est.evaluate(train_input(epochs=1))
    assert set(results) == {"mae", "loss", "global_step"}
    err = X.astype(np.float64) @ w + b - Y
    np.testing.assert_allclose(results["mae"], np.abs(err).mean(), rtol=1e-5)
    per_batch = [np.mean((x @ w + b - y) ** 2) for x, y in BATCHES]
    np.testing.assert_allclose(results["loss"], np.mean(per_batch), rtol=1e-5)  # the mean of the batch losses
    assert results["global_step"] == 5

    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn({"x": X[:7]}, batch_size=3, shuffle=False)))
    assert len(preds) == 7 and set(preds[0]) == {"y", "twice"}
    np.testing.assert_allclose(np.stack([p["y"] for p in preds]), X[:7] @ w + b, rtol=1e-5, atol=1e-6)


def test_max_steps_and_input_end(tmp_path):
    est = make(tmp_path)
    est.train(train_input(epochs=1))  # the input ends after 4 batches
    assert est.get_variable_value("global_step") == 4
    est.train(train_input(), max_steps=6)
    assert est.get_variable_value("global_step") == 6
    est.train(train_input(), max_steps=5)  # already past: skipped
    assert est.get_variable_value("global_step") == 6
    w, _ = numpy_gd(6, BATCHES + BATCHES[:2])  # the second call's input starts again at batch 0
    np.testing.assert_allclose(est.get_variable_value("w"), w, rtol=1e-5, atol=1e-6)


def test_dataset_input_fn_checkpoint_steps_and_eval_summaries(tmp_path):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(10).repeat()

    est = make(tmp_path, save_checkpoints_steps=2, keep_checkpoint_max=10)
    est.train(input_fn, steps=5)
    steps = sorted(int(p.rsplit("-", 1)[1]) for p in tf.train.get_checkpoint_state(str(tmp_path))
                   .all_model_checkpoint_paths)
    assert steps == [0, 2, 4, 5]
    first = est.evaluate(input_fn, steps=2, checkpoint_path=str(tmp_path / "model.ckpt-2"), name="early")
    assert first["global_step"] == 2
    last = est.evaluate(input_fn, steps=2)
    assert last["global_step"] == 5 and last["loss"] < first["loss"]
    for name, res in (("eval_early", first), ("eval", last)):
        events = [e for f in sorted((tmp_path / name).iterdir()) for e in summary_iterator(str(f))]
        values = {v.tag: (e.step, v.simple_value) for e in events for v in e.summary.value}
        assert values["loss"][0] == res["global_step"]
        np.testing.assert_allclose(values["loss"][1], res["loss"], rtol=1e-6)
        assert set(values) >= {"loss", "mae"}


def test_predict_options(tmp_path):
    est = make(tmp_path)
    est.train(train_input(), steps=1)
    inp = tf.estimator.inputs.numpy_input_fn({"x": X[:5]}, batch_size=2, shuffle=False)
    batches = list(est.predict(inp, yield_single_examples=False))
    assert [len(b["y"]) for b in batches] == [2, 2, 1]
    only = list(est.predict(inp, predict_keys=["twice"]))
    assert set(only[0]) == {"twice"}
    np.testing.assert_allclose(only[0]["twice"], 2 * batches[0]["y"][0], rtol=1e-6)
    with pytest.raises(ValueError, match="Expected to run at least one output"):
        list(est.predict(inp, predict_keys=["nope"]))


def test_predict_without_checkpoint_uses_initial_values(tmp_path):
    est = make(tmp_path)
    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn({"x": X[:2]}, shuffle=False)))
    np.testing.assert_array_equal(np.stack([p["y"] for p in preds]), np.zeros((2, 1)))


def test_errors(tmp_path):
    est = make(tmp_path)
    with pytest.raises(ValueError, match="Can not provide both steps and max_steps"):
        est.train(train_input(), steps=1, max_steps=2)
    with pytest.raises(ValueError, match="Must specify steps > 0"):
        est.train(train_input(), steps=0)
    with pytest.raises(ValueError, match="Could not find trained model"):
        est.evaluate(train_input(epochs=1))
    with pytest.raises(ValueError, match="Could not find trained model"):
        est.get_variable_names()
    with pytest.raises(ValueError, match="must include features"):
        tf.estimator.Estimator(lambda x, labels, mode: None, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="does not include params"):
        tf.estimator.Estimator(lambda features, labels, mode: None, params={"a": 1})
    with pytest.raises(ValueError, match="different values"):
        tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "a"),
                               config=tf.estimator.RunConfig(model_dir=str(tmp_path / "b")))
    with pytest.raises(TypeError, match="SessionRunHook"):
        est.train(train_input(), steps=1, hooks=[object()])


def test_estimator_spec_and_run_config():
    with tf.Graph().as_default():
        loss = tf.constant(1.0)
        with pytest.raises(ValueError, match="Missing train_op"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=loss)
        with pytest.raises(ValueError, match="Missing loss"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL)
        with pytest.raises(ValueError, match="Missing predictions"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.PREDICT)
        with pytest.raises(ValueError, match="Loss must be scalar"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))
        with pytest.raises(TypeError, match="metric_value, update_op"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": loss})
        spec = tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=loss)
        assert spec.predictions == {} and spec.eval_metric_ops == {} and spec.training_hooks == ()
    assert (tf.estimator.ModeKeys.TRAIN, tf.estimator.ModeKeys.EVAL, tf.estimator.ModeKeys.PREDICT) == \
        ("train", "eval", "infer")
    config = tf.estimator.RunConfig()
    assert (config.save_checkpoints_secs, config.save_checkpoints_steps, config.save_summary_steps,
            config.keep_checkpoint_max, config.log_step_count_steps) == (600, None, 100, 5, 100)
    steps = config.replace(save_checkpoints_steps=10)
    assert (steps.save_checkpoints_secs, steps.save_checkpoints_steps) == (None, 10)
    with pytest.raises(ValueError, match="both save_checkpoints_steps and save_checkpoints_secs"):
        tf.estimator.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)
    with pytest.raises(ValueError, match="not in the list of allowed"):
        config.replace(nope=1)
    assert tf.compat.v1.estimator.inputs.numpy_input_fn is tf.estimator.inputs.numpy_input_fn


def test_train_summaries_and_warm_start(tmp_path):
    first = make(tmp_path / "first", save_summary_steps=1)
    first.train(train_input(), steps=3)
    events = [e for f in sorted((tmp_path / "first").glob("events.out.tfevents.*")) for e in summary_iterator(str(f))]
    losses = {e.step: v.simple_value for e in events for v in e.summary.value if v.tag == "loss"}
    assert sorted(losses) == [1, 2, 3]  # written at the global step after the run, as TF1's SummarySaverHook
    w, b = np.zeros((3, 1)), np.zeros(1)
    for step, (x, y) in enumerate(BATCHES[:3]):  # the loss computed before that run's update
        np.testing.assert_allclose(losses[step + 1], np.mean((x @ w + b - y) ** 2), rtol=1e-5)
        err = x @ w + b - y
        w, b = w - LR * 2 * x.T @ err / len(x), b - LR * 2 * err.sum(0) / len(x)

    # a new model_dir warm-started from the first: its variables start from the first's, its step from 0
    second = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "second"), params={"lr": LR},
                                    warm_start_from=str(tmp_path / "first"))
    second.train(train_input(), steps=1)
    assert second.get_variable_value("global_step") == 1
    x, y = BATCHES[0]
    err = x @ w + b - y
    np.testing.assert_allclose(second.get_variable_value("w"), w - LR * 2 * x.T @ err / len(x), rtol=1e-5, atol=1e-6)
