"""Nothing destroyed (#29): every directory dflow writes into may hold a user's files, and every
writer, run several times with its own cleanup triggered (max_to_keep exceeded, exports garbage
collected, caches and summaries rewritten), leaves them as they were, byte for byte. The foreign
files include ones that look like a writer's own: a TensorFlow checkpoint `model.ckpt-999.*` no
Saver here wrote, a numbered directory beside numbered exports, a subdirectory."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dflow as tf

FOREIGN = {
    "notes.txt": b"a user's notes\n",
    "model.ckpt-999.index": b"\x00not an index this Saver wrote\xff",
    "model.ckpt-999.data-00000-of-00001": b"\x01\x02\x03 someone else's weights",
    "model.ckpt-999.meta": b"a meta graph of another program",
    "mine/inner.txt": b"inside a user's directory",
    "1234/notes.txt": b"a numbered directory that is not an export",
}


def plant(directory):
    """The foreign files under `directory` (made if needed): relative path -> bytes."""
    for rel, data in FOREIGN.items():
        path = os.path.join(directory, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return {os.path.join(directory, rel): data for rel, data in FOREIGN.items()}


def assert_untouched(planted):
    for path, data in planted.items():
        assert os.path.isfile(path), f"{path} was deleted"
        with open(path, "rb") as f:
            assert f.read() == data, f"{path} was changed"


def _variable_graph():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.arange(6, dtype=np.float32), name="w")
        step = tf.train.get_or_create_global_step()
        bump = tf.group(tf.assign_add(w, tf.ones([6])), tf.assign_add(step, 1))
    return g, w, bump


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt", ["zarr", "tensorflow"])
def test_saver_and_max_to_keep_leave_foreign_files(tmp_path, fmt):
    planted = plant(tmp_path)
    g, w, bump = _variable_graph()
    with g.as_default():
        saver = tf.train.Saver(max_to_keep=2, **({} if fmt == "zarr" else {"format": "tensorflow"}))
    with tf.Session(graph=g) as sess:
        sess.run(tf.variables_initializer(g.get_collection("variables")))
        for step in range(5):
            sess.run(bump)
            saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
        assert_untouched(planted)
        assert len(saver.last_checkpoints) == 2
        with g.as_default():  # a second Saver over the same directory (a restarted program)
            again = tf.train.Saver(max_to_keep=1, **({} if fmt == "zarr" else {"format": "tensorflow"}))
        for step in range(5, 8):
            again.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
        assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-7")
        tf.train.remove_checkpoint(str(tmp_path / "model.ckpt-7"))
    assert_untouched(planted)


@pytest.mark.timeout(180)
def test_monitored_training_session_leaves_foreign_files(tmp_path):
    planted = plant(tmp_path)
    for _ in range(3):  # restarted three times: each restores, trains, saves, rotates
        g, w, bump = _variable_graph()
        with g.as_default():
            scaffold = tf.train.Scaffold(saver=tf.train.Saver(max_to_keep=1))
            with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), scaffold=scaffold,
                                                   save_checkpoint_steps=1, save_summaries_steps=1) as mts:
                for _ in range(3):
                    mts.run(bump)
    assert_untouched(planted)


@pytest.mark.timeout(60)
def test_summary_file_writers_leave_foreign_files(tmp_path):
    planted = plant(tmp_path)
    for i in range(3):
        w = tf.summary.FileWriter(str(tmp_path))
        w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=float(i))]), i)
        w.close()
    assert_untouched(planted)


@pytest.mark.timeout(120)
def test_saved_model_exports_leave_foreign_files(tmp_path):
    planted = plant(tmp_path)
    g, w, _ = _variable_graph()
    with tf.Session(graph=g) as sess:
        sess.run(tf.variables_initializer(g.get_collection("variables")))
        with pytest.raises(AssertionError, match="already exists"):  # an existing directory: TF1 refuses
            tf.saved_model.builder.SavedModelBuilder(str(tmp_path))
        for i in range(3):
            export = tmp_path / f"export_{i}"
            builder = tf.saved_model.builder.SavedModelBuilder(str(export))
            builder.add_meta_graph_and_variables(sess, ["serve"])
            builder.save()
    assert_untouched(planted)


@pytest.mark.timeout(60)
def test_write_zarr_leaves_foreign_files(tmp_path):
    planted = plant(tmp_path)
    taken = tmp_path / "mine"  # a user's directory where the output would go: refused, kept
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        writes = [tf.io.write_zarr(x * 2.0, str(tmp_path / "out.zarr"), overwrite=True) for _ in range(3)]
        with tf.Session() as sess:
            for i, write in enumerate(writes):
                sess.run(write, {x: np.full((4, 3), i, np.float32)})
            with pytest.raises(tf.errors.OpError, match="mine"):
                sess.run(tf.io.write_zarr(x, str(taken), overwrite=True), {x: np.ones((2, 3), np.float32)})
    assert_untouched(planted)


@pytest.mark.timeout(60)
def test_dataset_cache_files_leave_foreign_files(tmp_path):
    planted = plant(tmp_path)
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.range(10).map(lambda v: v * 2).cache(str(tmp_path / "cache"))
        for _ in range(2):
            it = ds.make_initializable_iterator()
            nxt = it.get_next()
            with tf.Session() as sess:
                sess.run(it.initializer)
                assert [int(sess.run(nxt)) for _ in range(10)] == list(range(0, 20, 2))
    assert_untouched(planted)


def _model_fn(features, labels, mode):
    w = tf.get_variable("w", [1], initializer=tf.zeros_initializer())
    pred = features["x"] * w
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred})
    loss = tf.reduce_mean(tf.square(pred - labels))
    step = tf.train.get_or_create_global_step()
    return tf.estimator.EstimatorSpec(mode, predictions={"y": pred}, loss=loss,
                                      train_op=tf.train.GradientDescentOptimizer(0.1).minimize(loss, step))


def _input_fn():
    return {"x": tf.constant([[1.0], [2.0]])}, tf.constant([[2.0], [4.0]])


def _serving_input_fn():
    x = tf.placeholder(tf.float32, [None, 1], name="x")
    return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})


@pytest.mark.timeout(240)
def test_estimator_model_dir_and_exports_leave_foreign_files(tmp_path):
    model_dir, export_base = tmp_path / "model", tmp_path / "exports"
    planted = plant(model_dir) | plant(export_base)
    config = tf.estimator.RunConfig(save_checkpoints_steps=1, keep_checkpoint_max=1)
    est = tf.estimator.Estimator(_model_fn, model_dir=str(model_dir), config=config)
    exporter = tf.estimator.LatestExporter("latest", _serving_input_fn, exports_to_keep=1)
    for _ in range(3):
        est.train(_input_fn, steps=2)
        exporter.export(est, str(export_base), est.latest_checkpoint(), None, False)
    assert_untouched(planted)
    exports = [n for n in os.listdir(export_base) if n.isdigit() and n != "1234"]
    assert len(exports) == 1, exports  # the exporter's own older exports were collected


@pytest.mark.timeout(120)
def test_keras_model_checkpoint_leaves_foreign_files(tmp_path):
    planted = plant(tmp_path)
    g = tf.Graph()
    with g.as_default():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        model.compile("sgd", "mse")
        callbacks = [tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "weights.{epoch:02d}.h5")),
                     tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "best.h5"), save_best_only=True),
                     tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path))]
        model.fit(np.ones((8, 2), np.float32), np.ones((8, 1), np.float32), epochs=3, verbose=0, callbacks=callbacks)
    assert_untouched(planted)


def test_a_failed_archive_extraction_removes_only_what_it_made(tmp_path):
    # keras.utils.get_file(extract=True) into the datasets folder: Keras itself removed the whole
    # folder (every earlier download) when an archive failed to extract
    import io
    import tarfile

    from dflow.keras.utils.data_utils import _extract_archive

    datasets = tmp_path / "datasets"
    planted = plant(str(datasets))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in ("newdata/a.bin", "newdata/b.bin"):
            payload = os.urandom(64 << 10)
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    archive = tmp_path / "broken.tar"
    archive.write_bytes(buf.getvalue()[: 100 << 10])  # cut inside the second member
    with pytest.raises(tarfile.TarError):
        _extract_archive(str(archive), str(datasets))
    assert_untouched(planted)
    assert not (datasets / "newdata").exists()
