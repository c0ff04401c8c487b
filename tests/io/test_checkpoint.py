"""Checkpoints: Saver round trips (scopes, dtypes, scalars), max_to_keep and
keep_checkpoint_every_n_hours, the index functions, reading a checkpoint's variables, restore
errors (missing, shape, dtype, corrupted chunks), init_from_checkpoint and the plain-Zarr view."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
import zarr

import dflow as tf
from dflow.io import saver as saver_mod

RNG = np.random.default_rng(0)



def _visible(d):
    """The names a user sees: checkpoints are links to `<prefix>.dflow-<id>` data directories."""
    return sorted(n for n in os.listdir(d) if ".dflow-" not in n)

def _model(seed=0):
    """A few variables (scoped, scalar, several dtypes); returns {name: (variable, value)}."""
    rng = np.random.default_rng(seed)
    values = {
        "scope/w": rng.standard_normal((6, 4)).astype(np.float32),
        "scope/inner/b": rng.standard_normal(4),
        "count": np.int64(rng.integers(100)),
        "half": rng.standard_normal(3).astype(np.float16),
        "flags": rng.random(5) > 0.5,
    }
    out = {}
    with tf.variable_scope("scope"):
        out["scope/w"] = tf.get_variable("w", [6, 4], initializer=tf.constant_initializer(values["scope/w"]))
        with tf.variable_scope("inner"):
            out["scope/inner/b"] = tf.Variable(values["scope/inner/b"], name="b")
    out["count"] = tf.Variable(values["count"], name="count")
    out["half"] = tf.Variable(values["half"], name="half")
    out["flags"] = tf.Variable(values["flags"], name="flags")
    return {k: (out[k], values[k]) for k in values}


def _check_values(sess, model, scale=1):
    for name, (v, value) in model.items():
        got = sess.run(v)
        assert np.asarray(got).dtype == np.asarray(value).dtype, name
        np.testing.assert_array_equal(got, value if scale == 1 else value * scale, err_msg=name)


def _save(tmp_path, steps=(None,), **saver_kw):
    """Builds the model, initializes it and saves it at each of `steps`; returns (model, saver, prefixes)."""
    model = _model()
    saver = tf.train.Saver(**saver_kw)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        prefixes = [saver.save(s, os.path.join(tmp_path, "model"), global_step=step, write_meta_graph=False)
                    for step in steps]
    return model, saver, prefixes


# ---- round trips -------------------------------------------------------------------------------

def test_round_trip_scopes_dtypes_scalars(tmp_path):
    model, saver, [prefix] = _save(tmp_path)
    assert prefix == os.path.join(tmp_path, "model")
    with tf.Session() as s:  # a fresh session: every variable uninitialized
        saver.restore(s, prefix)
        _check_values(s, model)
        assert not s.run(tf.report_uninitialized_variables()).size


def test_restore_overwrites_changed_values(tmp_path):
    model, saver, [prefix] = _save(tmp_path, steps=[3])
    w = model["scope/w"][0]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(w.assign(w * 0.0 + 5.0))
        saver.restore(s, prefix)
        _check_values(s, model)
        s.run(w.assign_add(tf.ones_like(w)))  # restored values are ordinary variable values
        np.testing.assert_array_equal(s.run(w), model["scope/w"][1] + 1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int8, np.int16, np.int32, np.int64,
                                   np.uint8, np.bool_, np.complex64])
def test_round_trip_each_dtype(dtype, tmp_path):
    value = (RNG.standard_normal((3, 5)) * 50).astype(dtype)
    v = tf.Variable(value, name="v")
    s0 = tf.Variable(np.array(7, dtype=dtype), name="s")
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        prefix = saver.save(s, os.path.join(tmp_path, "m"), write_meta_graph=False)
    with tf.Session() as s:
        saver.restore(s, prefix)
        got, scalar = s.run([v, s0])
    assert got.dtype == dtype and np.asarray(scalar).dtype == dtype
    np.testing.assert_array_equal(got, value)
    assert scalar == np.array(7, dtype=dtype)


def test_large_variable_is_chunked_and_round_trips(tmp_path):
    value = RNG.standard_normal((3000, 2000)).astype(np.float32)  # 24 MB: more than one 16 MB chunk
    v = tf.Variable(value, name="big")
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        prefix = saver.save(s, os.path.join(tmp_path, "m"), write_meta_graph=False)
    arr = zarr.open_group(prefix, mode="r")["big"]
    assert arr.chunks[0] < 3000
    with tf.Session() as s:
        saver.restore(s, prefix)
        np.testing.assert_array_equal(s.run(v), value)


def test_var_list_as_dict_renames(tmp_path):
    a = tf.Variable(np.arange(4.0), name="a")
    saver = tf.train.Saver({"renamed/a": a})
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        prefix = saver.save(s, os.path.join(tmp_path, "m"), write_meta_graph=False)
    assert tf.train.list_variables(prefix) == [("renamed/a", [4])]
    tf.reset_default_graph()
    b = tf.Variable(np.zeros(4), name="b")
    with tf.Session() as s:
        tf.train.Saver({"renamed/a": b}).restore(s, prefix)
        np.testing.assert_array_equal(s.run(b), np.arange(4.0))


def test_a_name_that_is_also_a_scope(tmp_path):
    a = tf.Variable(1.0, name="a")
    ab = tf.Variable(2.0, name="a/b")
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        prefix = saver.save(s, os.path.join(tmp_path, "m"), write_meta_graph=False)
    with tf.Session() as s:
        saver.restore(s, prefix)
        assert s.run([a, ab]) == [1.0, 2.0]
    assert dict(tf.train.list_variables(prefix)) == {"a": [], "a/b": []}


def test_save_of_an_uninitialized_variable_writes_nothing(tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="v"):
            saver.save(s, os.path.join(tmp_path, "m"), write_meta_graph=False)
    assert _visible(tmp_path) == []


def test_saving_twice_to_one_prefix_replaces_it(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        saver.save(s, os.path.join(tmp_path, "m"), write_meta_graph=False)
        s.run(v.assign(2.0))
        prefix = saver.save(s, os.path.join(tmp_path, "m"), write_meta_graph=False)
    assert tf.train.load_variable(prefix, "v") == 2.0
    assert _visible(tmp_path) == ["checkpoint", "m"]
    assert tf.train.get_checkpoint_state(tmp_path).all_model_checkpoint_paths == [prefix]


def test_global_step_tensor_names_the_checkpoint(tmp_path):
    gs = tf.train.get_or_create_global_step()
    inc = tf.assign_add(gs, 1)
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(inc)
        s.run(inc)
        prefix = saver.save(s, os.path.join(tmp_path, "model"), global_step=gs, write_meta_graph=False)
    assert prefix.endswith("model-2")
    assert zarr.open_group(prefix, mode="r").attrs["global_step"] == 2
    padded = tf.train.Saver(pad_step_number=True)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert padded.save(s, os.path.join(tmp_path, "p"), global_step=7, write_meta_graph=False).endswith(
            "p-00000007")


# ---- keeping and the index ---------------------------------------------------------------------

def test_max_to_keep_two_keeps_exactly_two(tmp_path):
    _, saver, prefixes = _save(tmp_path, steps=range(5), max_to_keep=2)
    assert _visible(tmp_path) == ["checkpoint", "model-3", "model-4"]
    assert saver.last_checkpoints == prefixes[-2:]
    state = tf.train.get_checkpoint_state(tmp_path)
    assert state.model_checkpoint_path == prefixes[-1]
    assert state.all_model_checkpoint_paths == prefixes[-2:]
    assert tf.train.latest_checkpoint(tmp_path) == prefixes[-1]


def test_max_to_keep_zero_keeps_every_file(tmp_path):
    _save(tmp_path, steps=range(4), max_to_keep=0)
    assert _visible(tmp_path) == ["checkpoint"] + [f"model-{i}" for i in range(4)]


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def time(self):
        return self.now


def test_keep_checkpoint_every_n_hours(tmp_path, monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(saver_mod, "time", clock)
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=2, keep_checkpoint_every_n_hours=1.0)  # next preserved after t=3600
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for step, t in enumerate([0, 1000, 2000, 4000, 5000, 8000]):
            clock.now = t
            saver.save(s, os.path.join(tmp_path, "m"), global_step=step, write_meta_graph=False)
    # as TF1: step 3 (saved at t=4000 > 3600) is preserved when it leaves the window; 0, 1, 2 are deleted
    assert _visible(tmp_path) == ["checkpoint", "m-3", "m-4", "m-5"]
    assert [os.path.basename(p) for p in tf.train.get_checkpoint_state(tmp_path).all_model_checkpoint_paths] \
        == ["m-4", "m-5"]


def test_recover_last_checkpoints_continues_the_window(tmp_path):
    _, _, prefixes = _save(tmp_path, steps=[0, 1], max_to_keep=2)
    tf.reset_default_graph()
    _model()
    saver = tf.train.Saver(max_to_keep=2)
    saver.recover_last_checkpoints(tf.train.get_checkpoint_state(tmp_path).all_model_checkpoint_paths)
    assert saver.last_checkpoints == prefixes
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        saver.save(s, os.path.join(tmp_path, "model"), global_step=2, write_meta_graph=False)
    assert _visible(tmp_path) == ["checkpoint", "model-1", "model-2"]


def test_index_functions(tmp_path):
    assert tf.train.latest_checkpoint(tmp_path) is None
    assert tf.train.get_checkpoint_state(tmp_path) is None
    _, _, prefixes = _save(tmp_path, steps=[10, 20])
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[-1]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert isinstance(state, tf.train.CheckpointState)
    assert state.model_checkpoint_path == prefixes[-1] and state.all_model_checkpoint_paths == prefixes
    assert all(os.path.isabs(p) for p in state.all_model_checkpoint_paths)
    index = open(os.path.join(tmp_path, "checkpoint")).read()
    assert 'model_checkpoint_path: "model-20"' in index  # relative paths, TF1's text format
    assert tf.train.checkpoint_exists(prefixes[0]) and tf.train.checkpoint_exists(prefixes[1])
    assert not tf.train.checkpoint_exists(os.path.join(tmp_path, "model-30"))
    assert not tf.train.checkpoint_exists(str(tmp_path))
    # the index naming a checkpoint that is gone (link and data): no latest. (Data left without its
    # link is a copy that dropped links: still the checkpoint, see test_a_copy_that_dropped_...)
    if os.path.islink(prefixes[-1]):
        shutil.rmtree(os.path.join(tmp_path, os.readlink(prefixes[-1])))
        os.unlink(prefixes[-1])
    else:
        shutil.rmtree(prefixes[-1])
    assert tf.train.latest_checkpoint(tmp_path) is None


def test_update_checkpoint_state_and_latest_filename(tmp_path):
    _, _, [prefix] = _save(tmp_path, steps=[1])
    tf.train.update_checkpoint_state(str(tmp_path), prefix, latest_filename="other")
    assert tf.train.latest_checkpoint(tmp_path, latest_filename="other") == prefix
    assert tf.train.get_checkpoint_state(tmp_path, "other").all_model_checkpoint_paths == [prefix]


# ---- reading a checkpoint ----------------------------------------------------------------------

def test_list_variables_load_variable_and_reader(tmp_path):
    model, _, [prefix] = _save(tmp_path, steps=[5])
    expected = sorted((n, list(np.shape(v))) for n, (_, v) in model.items())
    assert tf.train.list_variables(prefix) == expected
    assert tf.train.list_variables(str(tmp_path)) == expected  # a directory means its latest
    for name, (_, value) in model.items():
        got = tf.train.load_variable(str(tmp_path), name)
        assert got.dtype == np.asarray(value).dtype
        np.testing.assert_array_equal(got, value)
    with pytest.raises(tf.errors.NotFoundError, match="nope"):
        tf.train.load_variable(prefix, "nope")
    reader = tf.train.load_checkpoint(prefix)
    assert reader.has_tensor("scope/w") and not reader.has_tensor("w")
    assert reader.get_variable_to_shape_map() == dict(expected)
    assert reader.get_variable_to_dtype_map()["half"] == tf.float16
    np.testing.assert_array_equal(reader.get_tensor("flags"), model["flags"][1])


def test_plain_zarr_shows_each_variable_as_an_array(tmp_path):
    model, _, [prefix] = _save(tmp_path, steps=[4])
    g = zarr.open_group(prefix, mode="r")
    assert g.attrs["global_step"] == 4
    for name, (_, value) in model.items():
        arr = g[name]
        assert isinstance(arr, zarr.Array), name
        np.testing.assert_array_equal(arr[...], value)
    arrays = {p for p, _ in g.arrays()} | {f"scope/{p}" for p, _ in g["scope"].arrays()} \
        | {f"scope/inner/{p}" for p, _ in g["scope/inner"].arrays()}
    assert arrays == set(model)


def test_read_zarr_of_a_checkpoint_array(tmp_path):
    model, _, [prefix] = _save(tmp_path)
    t = tf.io.read_zarr(prefix, "scope/w")
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(t), model["scope/w"][1])


# ---- restore errors -----------------------------------------------------------------------------

def test_missing_variable_is_not_found_naming_it(tmp_path):
    _, _, [prefix] = _save(tmp_path)
    tf.reset_default_graph()
    model = _model(seed=1)
    extra = tf.Variable(np.zeros(2), name="extra")
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.NotFoundError, match="extra"):
            saver.restore(s, prefix)
        _check_values(s, model)  # all or nothing: nothing was restored
        assert not s.run(extra).any()


@pytest.mark.parametrize("change", ["shape", "dtype"])
def test_shape_or_dtype_mismatch_is_invalid_argument(change, tmp_path):
    _, _, [prefix] = _save(tmp_path)
    tf.reset_default_graph()
    value = np.zeros((4, 6) if change == "shape" else (6, 4), np.float32 if change == "shape" else np.float64)
    with tf.variable_scope("scope"):
        tf.Variable(value, name="w")
    saver = tf.train.Saver()
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="scope/w"):
            saver.restore(s, prefix)


def test_restore_of_a_missing_checkpoint(tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as s:
        with pytest.raises(ValueError):
            saver.restore(s, None)
        # TF1 raises ValueError ("not a valid checkpoint"); dflow raises NotFoundError
        with pytest.raises((tf.errors.NotFoundError, ValueError)):
            saver.restore(s, os.path.join(tmp_path, "nothing"))
        with pytest.raises((tf.errors.NotFoundError, ValueError)):
            saver.restore(s, str(tmp_path))


def _corrupt(prefix, name, position):
    """Flips one byte of the first chunk file of variable `name` in place."""
    path = None
    for root, _, files in os.walk(os.path.join(prefix, name, "c")):
        if files:
            path = os.path.join(root, sorted(files)[0])
            break
    data = bytearray(open(path, "rb").read())
    pos = {"start": 0, "header": 5, "middle": len(data) // 2}[position]
    data[pos] ^= 0xFF
    with open(path, "wb") as f:
        f.write(bytes(data))


@pytest.mark.parametrize("position", [
    "middle",
    pytest.param("start"),
    pytest.param("header"),
])
def test_a_flipped_byte_on_disk_is_data_loss(position, tmp_path):
    model, saver, [prefix] = _save(tmp_path)
    _corrupt(prefix, "scope/w", position)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.DataLossError, match="scope/w"):
            saver.restore(s, prefix)
        _check_values(s, model)  # nothing restored, the session's values unchanged
    with pytest.raises(tf.errors.DataLossError):
        tf.train.load_variable(prefix, "scope/w")


def test_a_missing_chunk_file_is_data_loss(tmp_path):
    _, saver, [prefix] = _save(tmp_path)
    shutil.rmtree(os.path.join(prefix, "scope", "w", "c"))
    with tf.Session() as s:
        with pytest.raises(tf.errors.DataLossError, match="scope/w"):
            saver.restore(s, prefix)


# ---- init_from_checkpoint -----------------------------------------------------------------------

def test_init_from_checkpoint_by_scope_and_by_name(tmp_path):
    model, _, [prefix] = _save(tmp_path)
    tf.reset_default_graph()
    with tf.variable_scope("new"):
        w = tf.get_variable("w", [6, 4], initializer=tf.zeros_initializer())
        with tf.variable_scope("inner"):
            b = tf.get_variable("b", [4], dtype=tf.float64, initializer=tf.zeros_initializer())
    other = tf.Variable(np.zeros(3, np.float16), name="other")
    obj = tf.Variable(np.int64(0), name="obj")
    untouched = tf.Variable(np.ones(2, np.float32), name="untouched")
    tf.train.init_from_checkpoint(str(tmp_path), {"scope/": "new/", "half": "other", "count": obj})
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(s.run(w), model["scope/w"][1])
        np.testing.assert_array_equal(s.run(b), model["scope/inner/b"][1])
        np.testing.assert_array_equal(s.run(other), model["half"][1])
        assert s.run(obj) == model["count"][1]
        np.testing.assert_array_equal(s.run(untouched), np.ones(2, np.float32))


def test_init_from_checkpoint_errors(tmp_path):
    _, _, [prefix] = _save(tmp_path)
    tf.reset_default_graph()
    v = tf.Variable(np.zeros((2, 2), np.float32), name="v")
    with pytest.raises(tf.errors.NotFoundError, match="nope"):
        tf.train.init_from_checkpoint(prefix, {"nope": v})
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.train.init_from_checkpoint(prefix, {"scope/w": v})
    with pytest.raises(ValueError):
        tf.train.init_from_checkpoint(prefix, {"scope/w": "no_such_variable"})
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.init_from_checkpoint(os.path.join(tmp_path, "empty"), {"scope/w": v})


# ---- save/restore on every scheduler ------------------------------------------------------------

def test_save_and_restore_on_every_scheduler(any_mode, sess_factory, tmp_path):
    v = tf.Variable(RNG.standard_normal((12, 5)).astype(np.float32), name="v")
    step = tf.assign_add(v, tf.ones_like(v))
    saver = tf.train.Saver()
    with sess_factory(any_mode, chunks=4) as s:
        s.run(tf.global_variables_initializer())
        s.run(step)
        expected = s.run(v)
        prefix = saver.save(s, os.path.join(tmp_path, "m"), global_step=1, write_meta_graph=False)
        s.run(step)
        saver.restore(s, prefix)
        np.testing.assert_array_equal(s.run(v), expected)
        np.testing.assert_array_equal(s.run(step), expected + 1)


# ---- relative and absolute save paths (issue #13: "./ckpt/m" was joined to the directory twice) ---


def _saved_model():
    v = tf.Variable(np.arange(3, dtype=np.float32), name="v")
    return v, tf.train.Saver()


def _restored(saver, v, path):
    with tf.Session() as sess:
        saver.restore(sess, path)
        return sess.run(v)


@pytest.mark.parametrize("save_path, dir_forms", [
    ("./ckpt/m", ["./ckpt", "ckpt", "ckpt/", "./ckpt/"]),
    ("ckpt/m", ["ckpt", "./ckpt/"]),
    ("m", [".", "./", ""]),
])
def test_relative_save_path_restores_through_latest_checkpoint(tmp_path, monkeypatch, save_path, dir_forms):
    monkeypatch.chdir(tmp_path)
    v, saver = _saved_model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, save_path, global_step=1)
    assert prefix == save_path + "-1"  # as given, as TF1
    index = (tmp_path / os.path.dirname(save_path) / "checkpoint").read_text()
    assert 'model_checkpoint_path: "m-1"' in index  # relative to the index's directory, as TF1
    for d in dir_forms:
        latest = tf.train.latest_checkpoint(d)
        assert latest is not None and os.path.abspath(latest) == os.path.abspath(prefix), d
        np.testing.assert_array_equal(_restored(saver, v, latest), [0, 1, 2])
    # from another working directory, the directory named absolutely
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    latest = tf.train.latest_checkpoint(str(tmp_path / os.path.dirname(save_path)))
    assert latest == str(tmp_path / (save_path + "-1")).replace("/./", "/")
    np.testing.assert_array_equal(_restored(saver, v, latest), [0, 1, 2])


@pytest.mark.parametrize("relative", [True, False])
def test_absolute_save_path(tmp_path, monkeypatch, relative):
    monkeypatch.chdir(tmp_path)
    v = tf.Variable(np.arange(3, dtype=np.float32), name="v")
    saver = tf.train.Saver(save_relative_paths=relative)  # dflow's default: True (TF1's: False)
    path = str(tmp_path / "abs" / "m")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, path, global_step=2)
    index = (tmp_path / "abs" / "checkpoint").read_text()
    assert f'model_checkpoint_path: "{"m" if relative else path}-2"' in index
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    for d in (str(tmp_path / "abs"), str(tmp_path / "abs") + "/", "../abs"):
        latest = tf.train.latest_checkpoint(d)
        assert os.path.abspath(latest) == path + "-2", d
        assert os.path.isabs(latest) == (os.path.isabs(d) or not relative), d
        np.testing.assert_array_equal(_restored(saver, v, latest), [0, 1, 2])


def test_latest_checkpoint_follows_saves_and_max_to_keep(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    v = tf.Variable(0.0, name="v")
    inc = v.assign_add(1.0)
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(1, 4):
            sess.run(inc)
            saver.save(sess, "./ckpt/model.ckpt", global_step=step)
        assert tf.train.latest_checkpoint("./ckpt") == "./ckpt/model.ckpt-3"
        state = tf.train.get_checkpoint_state("ckpt")
        assert state.all_model_checkpoint_paths == ["ckpt/model.ckpt-2", "ckpt/model.ckpt-3"]
        assert not tf.train.checkpoint_exists("./ckpt/model.ckpt-1")
    assert _restored(saver, v, tf.train.latest_checkpoint("ckpt")) == 3.0


@pytest.mark.parametrize("fmt", ["dflow", "tensorflow"])
def test_a_saver_saves_the_variables_that_existed_when_it_was_built(tmp_path, fmt):
    """TF1: `Saver()` fixes its variables when it is built; one made afterwards is not saved (a
    `defer_build` Saver takes them at `build()`)."""
    a = tf.Variable(1.0, name="a")
    saver = tf.train.Saver(format=fmt)
    deferred = tf.train.Saver(defer_build=True, format=fmt)
    later = tf.Variable(777, name="later")
    deferred.build()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        p1 = saver.save(s, str(tmp_path / "one"), write_meta_graph=False)
        p2 = deferred.save(s, str(tmp_path / "two"), write_meta_graph=False)
    assert [n for n, _ in tf.train.list_variables(p1)] == ["a"]
    assert [n for n, _ in tf.train.list_variables(p2)] == ["a", "later"]
    assert a is not None and later is not None


def test_a_copy_that_dropped_symbolic_links_is_restored_and_never_deleted(tmp_path):
    """`rsync -r` and object-store syncs drop symbolic links: a copied dflow checkpoint directory
    holds its data directories without their links. Restoring from it works, and the next save
    there (its old owners dead) links them again instead of sweeping them as leftovers."""
    v = tf.Variable([1.0, 2.0], name="v")
    saver = tf.train.Saver(max_to_keep=5)
    src, dst = tmp_path / "src", tmp_path / "dst"
    with tf.Session() as s:
        s.run(v.initializer)
        for step in (1, 2):
            s.run(tf.assign_add(v, [10.0, 10.0]))
            saver.save(s, str(src / "model"), global_step=step, write_meta_graph=False)
    dst.mkdir()
    for entry in os.scandir(src):  # a copy without links, as by a dead process on this host
        if entry.is_symlink():
            continue
        name = entry.name.replace(f"-{os.getpid()}@", "-999999999@")  # no process has this pid
        (shutil.copytree if entry.is_dir() else shutil.copy)(entry.path, str(dst / name))
    prefix = tf.train.latest_checkpoint(str(dst))
    assert prefix is not None and prefix.endswith("model-2")
    with tf.Session() as s:
        saver.restore(s, prefix)
        assert s.run(v).tolist() == [21.0, 22.0]
        before = sorted(n for n in os.listdir(dst) if "dflow-data" in n)
        saver.save(s, str(dst / "model"), global_step=3, write_meta_graph=False)
    after = os.listdir(dst)
    assert all(n in after for n in before), "a copied checkpoint's data was deleted"
    assert os.path.islink(dst / "model-1") and os.path.islink(dst / "model-2")
    with tf.Session() as s:
        saver.restore(s, str(dst / "model-1"))
        assert s.run(v).tolist() == [11.0, 12.0]


@pytest.mark.parametrize("entry", [
    {"array": "v", "dtype": 5, "shape": [2], "checksum": "x"},
    {"array": "v"},
    {"array": 7, "dtype": "float32", "shape": [2], "checksum": "x"},
    {"array": "v", "dtype": "nope", "shape": [2], "checksum": "x"},
    {"array": "../../etc", "dtype": "float32", "shape": [2], "checksum": "x"},
    {"array": "v", "dtype": "float32", "shape": ["a"], "checksum": "x"},
])
def test_tampered_checkpoint_metadata_is_data_loss_naming_the_variable(tmp_path, entry):
    """#29: tampered variable tables leaked TypeError / KeyError / ValueError."""
    import json

    v = tf.Variable([1.0, 2.0], name="v")
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(v.initializer)
        prefix = saver.save(s, str(tmp_path / "m"), write_meta_graph=False)
    meta = os.path.join(os.path.realpath(prefix), "zarr.json")
    doc = json.load(open(meta))
    doc["attributes"]["variables"]["v"] = entry
    json.dump(doc, open(meta, "w"))
    for act in (lambda: saver.restore(tf.Session(), prefix), lambda: tf.train.list_variables(prefix),
                lambda: tf.train.load_variable(prefix, "v")):
        with pytest.raises(tf.errors.DataLossError, match="entry of variable 'v'"):
            act()


def test_a_garbage_checkpoint_index_warns_naming_it(tmp_path, caplog):
    """TF1 returns None for an index it cannot parse, with a warning; so does dflow (#29: silent)."""
    (tmp_path / "checkpoint").write_bytes(b"\x00\x01 garbage that is no checkpoint state\n")
    with caplog.at_level("WARNING"):
        assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert str(tmp_path / "checkpoint") in caplog.text and "not a valid checkpoint state file" in caplog.text
