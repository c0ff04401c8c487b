"""tf.keras saving: HDF5 (Keras 2.2.4-tf's layout, tf.keras's own files in tests/fixtures/keras) and
TF-format weight checkpoints.

The fixtures come from `TF_USE_LEGACY_KERAS=1 /tmp/tfenv/bin/python tools/make_keras_h5_fixture.py`:
tf.keras's `model.save`/`save_weights` files and TF's predictions on the stored inputs.
"""

import json
import logging
import os
import subprocess
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pytest

import dflow as tf
from dflow import errors, keras
from dflow.keras import models
from dflow.keras.saving import hdf5_format

K = keras.backend
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "keras"
DATA = np.load(FIXTURES / "predictions.npz")


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _predict(model, *xs):
    out = K.get_session().run(model.outputs, dict(zip(model.inputs, xs)))
    return out[0] if len(out) == 1 else out


def _mlp():
    return keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                             keras.layers.Dense(3, activation="softmax")])


def _two_input():
    a, b = keras.Input((3,), name="a"), keras.Input((2,), name="b")
    h = keras.layers.Dense(5, activation="tanh", name="ha")(a)
    g = keras.layers.Dense(5, activation="sigmoid", name="hb")(b)
    out_a = keras.layers.Dense(2, name="out_a")(h)
    out_b = keras.layers.Dense(1, name="out_b")(keras.layers.Activation("relu", name="act")(g))
    return keras.Model([a, b], [out_a, out_b], name="two_input")


def _mse(y, p):
    return tf.reduce_mean(tf.square(y - p), axis=-1)


# ---- tf.keras's files ----------------------------------------------------------------------------------
def test_load_model_of_tf_keras_sequential_file_predicts_as_tf():
    model = models.load_model(str(FIXTURES / "mlp.h5"), compile=False)
    assert [lay.name for lay in model.layers] == ["dense", "dense_1"]
    np.testing.assert_allclose(_predict(model, DATA["x"]), DATA["mlp"], atol=1e-5)


def test_load_model_of_tf_keras_functional_two_input_file_predicts_as_tf():
    model = models.load_model(str(FIXTURES / "two_input.h5"), compile=False)
    pa, pb = _predict(model, DATA["a"], DATA["b"])
    np.testing.assert_allclose(pa, DATA["two_input_a"], atol=1e-5)
    np.testing.assert_allclose(pb, DATA["two_input_b"], atol=1e-5)


def test_load_model_compiles_from_the_training_config_or_warns(caplog):
    caplog.set_level(logging.WARNING, logger="tensorflow")
    model = models.load_model(str(FIXTURES / "mlp.h5"))  # tf.keras's file: SGD, categorical_crossentropy
    np.testing.assert_allclose(_predict(model, DATA["x"]), DATA["mlp"], atol=1e-5)
    assert model._compiled and type(model.optimizer).__name__ == "SGD"



def test_load_weights_of_tf_keras_weights_file_into_same_architecture():
    model = _mlp()
    model.load_weights(str(FIXTURES / "mlp_weights.h5"))
    np.testing.assert_allclose(_predict(model, DATA["x"]), DATA["mlp"], atol=1e-5)


def test_load_weights_of_functional_model_follows_keras_layer_order():
    # tf.keras lists layers deepest first: b, a, hb, ha, act, out_a, out_b (the file's layer_names)
    model = _two_input()
    assert [lay.name for lay in hdf5_format.keras_layer_order(model)] == ["b", "a", "hb", "ha", "act", "out_a",
                                                                          "out_b"]
    model.load_weights(str(FIXTURES / "two_input_weights.h5"))
    pa, pb = _predict(model, DATA["a"], DATA["b"])
    np.testing.assert_allclose(pa, DATA["two_input_a"], atol=1e-5)
    np.testing.assert_allclose(pb, DATA["two_input_b"], atol=1e-5)


def test_load_weights_by_name_and_skip_mismatch(caplog):
    caplog.set_level(logging.WARNING, logger="tensorflow")
    model = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(4,), name="dense"),
                              keras.layers.Dense(4, name="dense_1")])  # dense_1 differs in shape
    with pytest.raises(ValueError, match=r'Layer #1 \(named "dense_1"\), weight .* has shape \(8, 4\), but the '
                                         r"saved weight has shape \(8, 3\)"):
        model.load_weights(str(FIXTURES / "mlp_weights.h5"), by_name=True)
    before = model.layers[1].get_weights()
    model.load_weights(str(FIXTURES / "mlp_weights.h5"), by_name=True, skip_mismatch=True)
    assert "Skipping loading of weights for layer dense_1 due to mismatch in shape" in caplog.text
    with h5py.File(FIXTURES / "mlp_weights.h5", "r") as f:
        np.testing.assert_array_equal(model.layers[0].get_weights()[0], f["dense/dense/kernel:0"][()])
    np.testing.assert_array_equal(model.layers[1].get_weights()[0], before[0])
    with pytest.raises(ValueError, match="skip_mismatch can only be set to True when by_name is True"):
        model.load_weights(str(FIXTURES / "mlp_weights.h5"), skip_mismatch=True)


def test_load_weights_count_and_shape_mismatch_load_nothing():
    model = keras.Sequential([keras.layers.Dense(8, input_shape=(4,)), keras.layers.Dense(3),
                              keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="You are trying to load a weight file containing 2 layers into a model "
                                         "with 3 layers."):
        model.load_weights(str(FIXTURES / "mlp_weights.h5"))
    model = keras.Sequential([keras.layers.Dense(8, input_shape=(4,)), keras.layers.Dense(5)])
    before = model.get_weights()
    with pytest.raises(ValueError, match=r"has shape \(8, 5\), but the saved weight has shape \(8, 3\)"):
        model.load_weights(str(FIXTURES / "mlp_weights.h5"))
    for old, new in zip(before, model.get_weights()):  # the first layer, which matched, was not loaded either
        np.testing.assert_array_equal(old, new)


def test_truncated_or_missing_file(tmp_path):
    bad = tmp_path / "bad.h5"
    bad.write_bytes((FIXTURES / "mlp_weights.h5").read_bytes()[:3000])
    with pytest.raises(errors.DataLossError, match="bad.h5"):
        _mlp().load_weights(str(bad))
    with pytest.raises(OSError, match="does not exist"):
        models.load_model(str(tmp_path / "nope.h5"))


# ---- dflow's own files ----------------------------------------------------------------------------------
def test_save_layout_is_keras(tmp_path):
    model = _mlp()
    model.compile(optimizer=tf.train.GradientDescentOptimizer(0.1), loss=_mse)
    path = tmp_path / "m.h5"
    model.save(str(path))
    with h5py.File(path, "r") as f:
        assert f.attrs["keras_version"] in ("2.2.4-tf", b"2.2.4-tf") and f.attrs["backend"] in ("tensorflow", b"tensorflow")
        config = json.loads(f.attrs["model_config"])
        assert config["class_name"] == "Sequential"
        assert "training_config" not in f.attrs  # a tf.train optimizer has no config (Keras 1.15 warns too)
        g = f["model_weights"]
        assert list(g.attrs["layer_names"]) == [b"dense", b"dense_1"]
        assert list(g["dense"].attrs["weight_names"]) == [b"dense/kernel:0", b"dense/bias:0"]
        np.testing.assert_array_equal(g["dense"]["dense/kernel:0"][()], model.layers[0].get_weights()[0])
    assert [p.name for p in tmp_path.iterdir()] == ["m.h5"]  # no temporary left behind


@pytest.mark.parametrize("path", ["w.h5", "ckpt/weights"])
def test_save_weights_round_trip(tmp_path, path):
    model = _mlp()
    want = _predict(model, DATA["x"])
    model.save_weights(str(tmp_path / path))
    other = _mlp()
    assert not np.allclose(_predict(other, DATA["x"]), want)
    other.load_weights(str(tmp_path / path))
    np.testing.assert_array_equal(_predict(other, DATA["x"]), want)
    if path.startswith("ckpt"):
        assert (tmp_path / "ckpt" / "checkpoint").exists()
        third = _mlp()
        third.load_weights(str(tmp_path / "ckpt"))  # the folder: its latest checkpoint
        np.testing.assert_array_equal(_predict(third, DATA["x"]), want)


def test_checkpoint_missing_weight_is_not_found(tmp_path):
    small = keras.Sequential([keras.layers.Dense(8, input_shape=(4,))])
    small.save_weights(str(tmp_path / "w"))
    with pytest.raises(errors.NotFoundError):
        _mlp().load_weights(str(tmp_path / "w"))


def test_save_and_load_model_round_trip_functional(tmp_path):
    model = _two_input()
    want = _predict(model, DATA["a"], DATA["b"])
    model.save(str(tmp_path / "two.h5"))
    again = models.load_model(str(tmp_path / "two.h5"))
    got = _predict(again, DATA["a"], DATA["b"])
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def test_to_json_round_trips_with_saved_weights(tmp_path):
    model = _mlp()
    model.save_weights(str(tmp_path / "w.h5"))
    rebuilt = models.model_from_json(model.to_json())
    rebuilt.load_weights(str(tmp_path / "w.h5"))
    np.testing.assert_array_equal(_predict(rebuilt, DATA["x"]), _predict(model, DATA["x"]))


def test_unknown_save_format():
    with pytest.raises(ValueError, match='Unknown format "zip"'):
        _mlp().save_weights("x", save_format="zip")


# ---- TensorFlow reads dflow's file -----------------------------------------------------------------------
@pytest.mark.slow
def test_tf_keras_loads_dflow_h5(tmp_path):
    tf_python = os.environ.get("TF_PYTHON")
    if not tf_python:
        pytest.skip("TF_PYTHON is not set")
    model = _mlp()
    model.load_weights(str(FIXTURES / "mlp_weights.h5"))
    model.layers[0].set_weights([w * 2 for w in model.layers[0].get_weights()])
    want = _predict(model, DATA["x"])
    model.save(str(tmp_path / "d.h5"))
    model.save_weights(str(tmp_path / "dw.h5"))
    model.save_weights(str(tmp_path / "ckpt" / "weights"))  # TensorFlow's checkpoint format
    np.save(tmp_path / "x.npy", DATA["x"])
    script = textwrap.dedent(f"""
        import numpy as np
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
        x = np.load({str(tmp_path / 'x.npy')!r})
        m = tf.keras.models.load_model({str(tmp_path / 'd.h5')!r})
        s = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                                 tf.keras.layers.Dense(3, activation="softmax")])
        s.load_weights({str(tmp_path / 'dw.h5')!r})
        c = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                                 tf.keras.layers.Dense(3, activation="softmax")])
        c.load_weights({str(tmp_path / 'ckpt' / 'weights')!r})
        np.save({str(tmp_path / 'tf.npy')!r}, np.stack([m.predict(x), s.predict(x), c.predict(x)]))
    """)
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    subprocess.run([tf_python, "-c", script], check=True, env=env, timeout=300, capture_output=True)
    got = np.load(tmp_path / "tf.npy")
    np.testing.assert_allclose(got[0], want, atol=1e-5)
    np.testing.assert_allclose(got[1], want, atol=1e-5)
    np.testing.assert_allclose(got[2], want, atol=1e-5)  # TF's load_weights of dflow's checkpoint



def test_load_weights_of_tensorflows_checkpoint_format():
    # tools/make_keras_tf_ckpt_fixture.py: tf.keras's save_weights without .h5 (TF's V2 checkpoint)
    data = np.load(FIXTURES / "tf_format" / "predictions.npz")
    model = keras.Sequential([keras.layers.Dense(3, activation="relu", input_shape=(4,)), keras.layers.Dense(2)])
    model.load_weights(str(FIXTURES / "tf_format" / "weights"))
    np.testing.assert_allclose(_predict(model, data["x"]), data["y"], rtol=1e-6, atol=1e-6)
