"""Whole tf.keras programs as TF 1.x users wrote them (`import dflow as tf`), in every program mode:
a Sequential MNIST-style MLP, a functional two-input model, the TF 1.x eager guide's subclassed
model, an LSTM text classifier, a CNN with batch norm, and `fit` on a tf.data pipeline."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf

pytestmark = pytest.mark.program


def _digits(n=256, seed=0):
    """A learnable 10-class problem shaped like flattened MNIST (n x 64)."""
    rng = np.random.RandomState(seed)
    centers = rng.randn(10, 64).astype(np.float32) * 2
    labels = rng.randint(0, 10, n)
    images = centers[labels] + rng.randn(n, 64).astype(np.float32)
    return images, labels


def test_sequential_mlp_mnist_style(capsys):
    x_train, y_train = _digits()
    model = tf.keras.models.Sequential([
        tf.keras.layers.Dense(32, activation=tf.nn.relu, input_shape=(64,)),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(10, activation=tf.nn.softmax),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x_train, y_train, epochs=20, batch_size=32, verbose=1)
    out = capsys.readouterr().out
    assert "Train on 256 samples" in out and "Epoch 20/20" in out and " - loss: " in out and " - acc: " in out
    assert model.metrics_names == ["loss", "acc"]  # TF 1.x names 'accuracy' 'acc'
    assert sorted(history.history) == ["acc", "loss"]
    loss, acc = model.evaluate(x_train, y_train, verbose=0)
    assert acc > 0.9 and loss < history.history["loss"][0]
    probs = model.predict(x_train[:8])
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    assert (probs.argmax(1) == model.predict_classes(x_train[:8])).all()
    np.testing.assert_allclose(model.predict_proba(x_train[:8]), probs)


def test_functional_two_input_model():
    rng = np.random.RandomState(1)
    a = rng.randn(128, 3).astype(np.float32)
    b = rng.randn(128, 5).astype(np.float32)
    target = (a.sum(1) - b[:, :2].sum(1) > 0).astype(np.float32)[:, None]
    in_a = tf.keras.Input(shape=(3,), name="a")
    in_b = tf.keras.Input(shape=(5,), name="b")
    merged = tf.keras.layers.concatenate([tf.keras.layers.Dense(8, activation="relu")(in_a),
                                          tf.keras.layers.Dense(8, activation="relu")(in_b)])
    out = tf.keras.layers.Dense(1, activation="sigmoid", name="out")(merged)
    model = tf.keras.Model(inputs=[in_a, in_b], outputs=out)
    model.compile(tf.keras.optimizers.Adam(0.02), "binary_crossentropy", metrics=["acc"])
    model.fit({"a": a, "b": b}, target, epochs=20, batch_size=32, verbose=0)
    loss, acc = model.evaluate([a, b], target, verbose=0)
    assert acc > 0.9


def test_eager_guide_subclassed_model():
    """The TF 1.x eager guide's MNISTModel and its GradientTape loop, in a subprocess-free eager scope."""
    import dflow.contrib.eager as tfe

    x, labels = _digits(128)
    with tfe.eager_mode():
        tf.keras.backend.clear_session()  # layer names count from 0 again in the eager context

        class MNISTModel(tf.keras.Model):
            def __init__(self):
                super(MNISTModel, self).__init__()
                self.dense1 = tf.keras.layers.Dense(units=32, activation="relu")
                self.dense2 = tf.keras.layers.Dense(units=10)

            def call(self, input):  # noqa: A002 - the guide's name
                return self.dense2(self.dense1(input))

        model = MNISTModel()
        optimizer = tf.train.AdamOptimizer(0.01)
        dataset = tf.data.Dataset.from_tensor_slices((x, labels)).shuffle(128, seed=1).batch(32)

        def loss(model, x, y):
            return tf.losses.sparse_softmax_cross_entropy(labels=y, logits=model(x))

        first = None
        for _epoch in range(5):
            for xs, ys in dataset:
                with tf.GradientTape() as tape:
                    value = loss(model, xs, ys)
                grads = tape.gradient(value, model.variables)
                optimizer.apply_gradients(zip(grads, model.variables),
                                          global_step=tf.train.get_or_create_global_step())
                first = first if first is not None else value.numpy()
        assert loss(model, x, labels).numpy() < first / 4
        tf.get_collection_ref(tf.GraphKeys.GLOBAL_STEP).clear()  # the eager global step is this test's
        assert [v.name for v in model.variables] == [
            "mnist_model/dense/kernel:0", "mnist_model/dense/bias:0",
            "mnist_model/dense_1/kernel:0", "mnist_model/dense_1/bias:0"]


def test_lstm_text_classifier():
    tf.set_random_seed(2)  # the initial weights and the shuffles are the same in every mode
    np.random.seed(2)
    rng = np.random.RandomState(2)
    vocab, length = 30, 12
    sequences = [list(rng.randint(1, vocab, rng.randint(4, length))) for _ in range(160)]
    labels = np.array([int(s[0] < vocab // 2) for s in sequences])  # depends on the first real word
    padded = tf.keras.preprocessing.sequence.pad_sequences(sequences, maxlen=length)
    model = tf.keras.Sequential([
        tf.keras.layers.Embedding(vocab, 8, input_length=length, mask_zero=True),
        tf.keras.layers.LSTM(16),
        tf.keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.02), loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(padded, labels, epochs=8, batch_size=32, verbose=0)
    assert history.history["acc"][-1] > 0.8
    assert [w.name for w in model.weights][:2] == ["embedding/embeddings:0", "lstm/kernel:0"]


def test_cnn_with_batch_norm_and_callbacks(tmp_path):
    rng = np.random.RandomState(3)
    images = rng.rand(96, 8, 8, 1).astype(np.float32)
    labels = (images[:, :4].mean((1, 2, 3)) > images[:, 4:].mean((1, 2, 3))).astype(np.int64)
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(4, 3, activation="relu", input_shape=(8, 8, 1)),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(2, activation="softmax"),
    ])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    callbacks = [tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=50),
                 tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "best.h5"), save_best_only=True)]
    history = model.fit(images, labels, epochs=6, batch_size=16, validation_split=0.25, callbacks=callbacks,
                        verbose=0)
    assert set(history.history) == {"loss", "acc", "val_loss", "val_acc"}
    assert (tmp_path / "best.h5").exists()
    moving_mean = [w for w in model.weights if w.name == "batch_normalization/moving_mean:0"][0]
    assert np.abs(tf.keras.backend.get_value(moving_mean)).sum() > 0  # the updates ran while training


def test_fit_on_a_tf_data_pipeline():
    x, labels = _digits(192)
    dataset = tf.data.Dataset.from_tensor_slices((x, labels)).shuffle(192, seed=0).batch(32).repeat()
    model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax", input_shape=(64,))])
    model.compile(tf.train.AdamOptimizer(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(dataset, epochs=4, steps_per_epoch=6, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert model.evaluate(x, labels, verbose=0)[1] > 0.8
