"""Canned estimators over numeric columns: TF1's variable names, prediction keys and metric keys,
and accuracy on separable synthetic data."""

import numpy as np
import pytest

import dflow as tf

RNG = np.random.RandomState(1)
X = RNG.randn(300, 2).astype(np.float32)
FEATURES = {"a": X[:, 0], "b": X[:, 1]}
COLUMNS = [tf.feature_column.numeric_column("b"), tf.feature_column.numeric_column("a")]
BINARY = (X[:, 0] - X[:, 1] > 0).astype(np.int64)
THREE = np.digitize(X[:, 0] + X[:, 1], [-0.7, 0.7]).astype(np.int64)
TARGET = (2.0 * X[:, 0] - X[:, 1] + 1.0).astype(np.float32)

BINARY_METRICS = {"accuracy", "accuracy_baseline", "auc", "auc_precision_recall", "average_loss", "label/mean",
                  "loss", "precision", "prediction/mean", "recall", "global_step"}
CLASS_KEYS = {"logits", "probabilities", "class_ids", "classes", "all_class_ids", "all_classes"}


def fit(est, y, steps):
    est.train(tf.estimator.inputs.numpy_input_fn(FEATURES, y, batch_size=50, num_epochs=None, shuffle=True),
              steps=steps)
    results = est.evaluate(tf.estimator.inputs.numpy_input_fn(FEATURES, y, batch_size=100, shuffle=False))
    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn({"a": X[:5, 0], "b": X[:5, 1]}, shuffle=False)))
    return results, preds


def config():
    return tf.estimator.RunConfig(tf_random_seed=3, save_checkpoints_steps=1000)


def test_linear_classifier(tmp_path):
    est = tf.estimator.LinearClassifier(COLUMNS, model_dir=str(tmp_path), config=config())
    results, preds = fit(est, BINARY, 60)
    assert set(results) == BINARY_METRICS
    assert results["accuracy"] >= 0.97 and results["auc"] >= 0.99
    np.testing.assert_allclose(results["label/mean"], BINARY.mean(), rtol=1e-6)
    np.testing.assert_allclose(results["accuracy_baseline"], max(BINARY.mean(), 1 - BINARY.mean()), rtol=1e-6)
    # SUM reduction (TF1's v1 default): the loss is average_loss times the batch size
    np.testing.assert_allclose(results["loss"], results["average_loss"] * 100, rtol=1e-4)
    names = [n for n in est.get_variable_names() if "Ftrl" not in n]
    assert names == ["global_step", "linear/linear_model/a/weights", "linear/linear_model/b/weights",
                     "linear/linear_model/bias_weights"]
    assert "linear/linear_model/a/weights/Ftrl_1" in est.get_variable_names()
    assert set(preds[0]) == CLASS_KEYS | {"logistic"}
    w_a, w_b = (est.get_variable_value(f"linear/linear_model/{k}/weights")[0, 0] for k in "ab")
    bias = est.get_variable_value("linear/linear_model/bias_weights")[0]
    for i, p in enumerate(preds):
        logit = X[i, 0] * w_a + X[i, 1] * w_b + bias
        np.testing.assert_allclose(p["logits"], [logit], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(p["logistic"], [1 / (1 + np.exp(-logit))], rtol=1e-5)
        np.testing.assert_allclose(p["probabilities"], [1 / (1 + np.exp(logit)), 1 / (1 + np.exp(-logit))],
                                   rtol=1e-5)
        assert p["class_ids"].tolist() == [int(logit > 0)] and p["classes"].tolist() == [str(int(logit > 0)).encode()]
        assert p["all_classes"].tolist() == [b"0", b"1"]


def test_dnn_classifier_multiclass(tmp_path):
    est = tf.estimator.DNNClassifier([16, 8], COLUMNS, n_classes=3, model_dir=str(tmp_path), config=config(),
                                     optimizer=tf.train.AdamOptimizer(0.05))
    results, preds = fit(est, THREE, 150)
    assert set(results) == {"accuracy", "average_loss", "loss", "global_step"}
    assert results["accuracy"] >= 0.9
    names = [n for n in est.get_variable_names() if "Adam" not in n and "power" not in n]
    assert names == ["dnn/hiddenlayer_0/bias", "dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_1/bias",
                     "dnn/hiddenlayer_1/kernel", "dnn/logits/bias", "dnn/logits/kernel", "global_step"]
    assert est.get_variable_value("dnn/logits/kernel").shape == (8, 3)
    assert set(preds[0]) == CLASS_KEYS
    for p in preds:
        np.testing.assert_allclose(p["probabilities"].sum(), 1.0, rtol=1e-5)
        assert p["class_ids"][0] == np.argmax(p["logits"])


def test_dnn_classifier_binary_default_adagrad(tmp_path):
    est = tf.estimator.DNNClassifier([8], COLUMNS, model_dir=str(tmp_path), config=config())
    results, _ = fit(est, BINARY, 80)
    assert results["accuracy"] >= 0.95
    assert "dnn/hiddenlayer_0/kernel/Adagrad" in est.get_variable_names()


@pytest.mark.parametrize("canned", ["linear", "dnn"])
def test_regressors(tmp_path, canned):
    if canned == "linear":
        est = tf.estimator.LinearRegressor(COLUMNS, model_dir=str(tmp_path), config=config())
    else:
        est = tf.estimator.DNNRegressor([16], COLUMNS, model_dir=str(tmp_path), config=config(),
                                        optimizer=tf.train.AdamOptimizer(0.05))
    results, preds = fit(est, TARGET, 150)
    assert set(results) == {"average_loss", "label/mean", "prediction/mean", "loss", "global_step"}
    assert results["average_loss"] < 0.1 * TARGET.var()
    np.testing.assert_allclose(results["label/mean"], TARGET.mean(), rtol=1e-5)
    assert set(preds[0]) == {"predictions"}
    got = np.concatenate([p["predictions"] for p in preds])
    assert np.abs(got - TARGET[:5]).max() < 1.0


def test_canned_errors(tmp_path):
    with pytest.raises(ValueError, match="n_classes"):
        tf.estimator.LinearClassifier(COLUMNS, n_classes=1)
    with pytest.raises(ValueError, match="feature_columns"):
        tf.estimator.DNNClassifier([4], [])
    est = tf.estimator.LinearClassifier(COLUMNS, model_dir=str(tmp_path), optimizer="Nope")
    with pytest.raises(ValueError, match="Unsupported optimizer name"):
        est.train(tf.estimator.inputs.numpy_input_fn(FEATURES, BINARY, shuffle=False), steps=1)


@pytest.mark.parametrize("n_classes,bad", [(2, 2), (3, 3), (3, -1)])
def test_labels_out_of_range(tmp_path, n_classes, bad):
    est = tf.estimator.LinearClassifier(COLUMNS, n_classes=n_classes, model_dir=str(tmp_path))
    labels = np.zeros(len(X), np.int64)
    labels[7] = bad
    with pytest.raises(tf.errors.InvalidArgumentError, match="Label IDs must"):
        est.train(tf.estimator.inputs.numpy_input_fn(FEATURES, labels, batch_size=50, shuffle=False), steps=1)


def test_dnn_writes_tf1_summaries(tmp_path):
    from dflow.summary import summary_iterator

    est = tf.estimator.DNNRegressor([4], COLUMNS, model_dir=str(tmp_path),
                                    config=tf.estimator.RunConfig(save_summary_steps=1))
    est.train(tf.estimator.inputs.numpy_input_fn(FEATURES, TARGET, batch_size=50, shuffle=False), steps=2)
    tags = {v.tag for f in tmp_path.glob("events.out.tfevents.*") for e in summary_iterator(str(f))
            for v in e.summary.value}
    assert tags >= {"loss", "average_loss", "dnn/dnn/hiddenlayer_0/fraction_of_zero_values",
                    "dnn/dnn/hiddenlayer_0/activation", "dnn/dnn/logits/activation"}


def _census(n=200, seed=0):
    """A census-like in-memory set: a vocabulary, a hashed and a bucketized feature, string labels."""
    rng = np.random.RandomState(seed)
    edu = rng.choice(["bachelors", "hs-grad", "masters", "doctorate"], n)
    job = rng.choice(["tech", "sales", "admin", "farming"], n)
    age = rng.uniform(18, 80, n).astype(np.float32)
    rich = (np.isin(edu, ["masters", "doctorate"]) | (age > 60))
    return {"education": edu, "occupation": job, "age": age, "w": np.ones(n, np.float32)}, \
        np.where(rich, ">50K", "<=50K")


def test_canned_over_categorical_columns_with_label_vocabulary(tmp_path):
    fc = tf.feature_column
    feats, labels = _census()
    edu = fc.categorical_column_with_vocabulary_list("education", ["bachelors", "hs-grad", "masters", "doctorate"])
    job = fc.categorical_column_with_hash_bucket("occupation", 20)
    age = fc.bucketized_column(fc.numeric_column("age"), [30.0, 45.0, 60.0])
    for est in [tf.estimator.LinearClassifier([edu, job, age], model_dir=str(tmp_path / "lin"), weight_column="w",
                                              label_vocabulary=["<=50K", ">50K"]),
                tf.estimator.DNNClassifier([16], [fc.indicator_column(edu), fc.embedding_column(job, 4), age],
                                           model_dir=str(tmp_path / "dnn"), label_vocabulary=["<=50K", ">50K"])]:
        est.train(tf.estimator.inputs.numpy_input_fn(feats, labels, batch_size=50, num_epochs=None, shuffle=True),
                  steps=200)
        res = est.evaluate(tf.estimator.inputs.numpy_input_fn(feats, labels, batch_size=100, shuffle=False))
        assert res["accuracy"] > 0.9
        preds = list(est.predict(tf.estimator.inputs.numpy_input_fn({k: v[:4] for k, v in feats.items()},
                                                                    shuffle=False)))
        assert [p["classes"][0] for p in preds] == [s.encode() for s in labels[:4]]
    names = tf.train.list_variables(str(tmp_path / "lin"))
    assert "linear/linear_model/education/weights" in dict(names)


def test_label_vocabulary_errors(tmp_path):
    fc = tf.feature_column
    feats, labels = _census(20)
    edu = fc.categorical_column_with_vocabulary_list("education", ["bachelors", "hs-grad", "masters", "doctorate"])
    with pytest.raises(ValueError, match="label_vocabulary"):
        tf.estimator.LinearClassifier([edu], label_vocabulary=["a", "b", "c"])
    est = tf.estimator.LinearClassifier([edu], model_dir=str(tmp_path), label_vocabulary=["<=50K", "other"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Label IDs must >= 0"):
        est.train(tf.estimator.inputs.numpy_input_fn(feats, labels, batch_size=20, shuffle=False), steps=1)
