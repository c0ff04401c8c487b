"""`tf.contrib.learn`'s Experiment, learn_runner.run and RunConfig, and `tf.contrib.training.HParams`,
as the seed tutorial's skeleton drives them (its main() as written, FLAGS given as values), against
the same training done by the Estimator directly."""

from __future__ import annotations

import types

import numpy as np
import pytest

import dflow as tf

RNG = np.random.RandomState(0)
X = RNG.randn(40, 3).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)


def make_model_fn():
    def model_fn(features, labels, mode, params):
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        predictions = tf.matmul(features["x"], w) + b
        loss = tf.reduce_mean(tf.square(predictions - labels))
        train_op = tf.train.GradientDescentOptimizer(params.learning_rate).minimize(
            loss, global_step=tf.train.get_global_step())
        metric_ops = {"mae": tf.metrics.mean_absolute_error(labels, predictions)}
        return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions, loss=loss, train_op=train_op,
                                          eval_metric_ops=metric_ops)
    return model_fn


def make_input_fn(mode, hparams):
    epochs = None if mode == tf.estimator.ModeKeys.TRAIN else 1
    return tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=hparams.batch_size, num_epochs=epochs,
                                              shuffle=False)


def eval_metrics_fn(hparams):
    return None  # a core Estimator's metrics are its EstimatorSpec's eval_metric_ops


@pytest.mark.program
def test_the_seeds_learn_runner_skeleton(tmp_path):
    FLAGS = types.SimpleNamespace(output_dir=str(tmp_path / "out"), schedule="train_and_evaluate",  # noqa: N806
                                  hparams="learning_rate=0.1,batch_size=10")

    # the seed's code, as written
    def experiment_fn(run_config, hparams):
        estimator = tf.estimator.Estimator(
            model_fn=make_model_fn(), config=run_config, params=hparams)
        return tf.contrib.learn.Experiment(
            estimator=estimator,
            train_input_fn=make_input_fn(tf.estimator.ModeKeys.TRAIN, hparams),
            eval_input_fn=make_input_fn(tf.estimator.ModeKeys.EVAL, hparams),
            eval_metrics=eval_metrics_fn(hparams), train_steps=40, eval_steps=None)

    def main(unused_argv):
        run_config = tf.contrib.learn.RunConfig(model_dir=FLAGS.output_dir)
        hparams = tf.contrib.training.HParams(learning_rate=0.01, batch_size=4)
        hparams.parse(FLAGS.hparams)
        estimator = tf.contrib.learn.learn_runner.run(
            experiment_fn=experiment_fn,
            run_config=run_config,
            schedule=FLAGS.schedule,
            hparams=hparams)
        return estimator

    eval_result, export_results = main(None)
    assert eval_result["global_step"] == 40 and export_results == []

    # the same training through the Estimator directly gives the same evaluation
    hp = tf.contrib.training.HParams(learning_rate=0.1, batch_size=10)
    est = tf.estimator.Estimator(make_model_fn(), model_dir=str(tmp_path / "direct"), params=hp)
    est.train(make_input_fn(tf.estimator.ModeKeys.TRAIN, hp), max_steps=40)
    direct = est.evaluate(make_input_fn(tf.estimator.ModeKeys.EVAL, hp))
    np.testing.assert_allclose(eval_result["loss"], direct["loss"], rtol=1e-6)
    np.testing.assert_allclose(eval_result["mae"], direct["mae"], rtol=1e-6)
    assert (tmp_path / "out" / "eval").is_dir()  # train_and_evaluate's evaluation: model_dir/eval


@pytest.mark.program
def test_experiment_schedules_and_errors(tmp_path):
    hp = tf.contrib.training.HParams(learning_rate=0.1, batch_size=10)
    est = tf.estimator.Estimator(make_model_fn(), config=tf.contrib.learn.RunConfig(model_dir=str(tmp_path)),
                                 params=hp)
    exp = tf.contrib.learn.Experiment(est, make_input_fn(tf.estimator.ModeKeys.TRAIN, hp),
                                      make_input_fn(tf.estimator.ModeKeys.EVAL, hp), train_steps=8, eval_steps=2,
                                      min_eval_frequency=4)
    assert exp.test()["global_step"] == 1
    exp.train()
    assert exp.evaluate()["global_step"] == 8 and (tmp_path / "eval_one_pass").is_dir()
    with pytest.raises(ValueError, match="`eval_metrics` must be `None` with `tf.estimator.Estimator`"):
        tf.contrib.learn.Experiment(est, None, None, eval_metrics={"a": None})
    with pytest.raises(ValueError, match="Schedule references non-existent task nope"):
        tf.contrib.learn.learn_runner.run(lambda c, h: exp, run_config=tf.contrib.learn.RunConfig(), schedule="nope")
    with pytest.raises(TypeError, match="did not return an Experiment"):
        tf.contrib.learn.learn_runner.run(lambda c, h: est, run_config=tf.contrib.learn.RunConfig())


def test_run_config_and_hparams():
    c = tf.contrib.learn.RunConfig(model_dir="/tmp/m", log_device_placement=True, save_checkpoints_steps=50)
    assert c.model_dir == "/tmp/m" and c.save_checkpoints_steps == 50 and c.save_checkpoints_secs is None
    assert c.session_config.log_device_placement and c.master == "" and c.is_chief
    assert c.replace(model_dir="/tmp/n").master == "" and isinstance(c, tf.estimator.RunConfig)
    hp = tf.contrib.training.HParams(lr=0.1, layers=[64, 32], name="m", use_bn=False, steps=10)
    hp.parse("lr=0.5,layers=[8,4,2],use_bn=true,steps=3,name=big")
    assert hp.values() == {"lr": 0.5, "layers": [8, 4, 2], "name": "big", "use_bn": True, "steps": 3}
    assert hp.parse("") is hp and "lr" in hp and hp.get("nope", 7) == 7
    with pytest.raises(ValueError, match="Unknown hyperparameter type for foo"):
        hp.parse("foo=1")
    with pytest.raises(ValueError, match="Could not parse hparam 'steps' of type 'int' with value 'x'"):
        hp.parse("steps=x")
    assert tf.contrib.training.HParams(a=1).parse_json('{"a": 5}').a == 5
