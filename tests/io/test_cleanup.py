"""Temporaries of killed processes found and removed safely (`dflow.io.cleanup`, and by the next
save or session), and file errors of checkpoints and graph files as dflow errors (issue 14):
a Saver or write_graph never replaces what is not theirs, relative `../` paths work as in TF1."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
import zarr

import dflow as tf
from dflow.storage import files

from .test_publish import snapshot, temps


def dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def owned(parent, name):
    path = os.path.join(parent, name)
    os.makedirs(path)
    with open(os.path.join(path, "payload"), "w") as f:
        f.write("partial")
    return path


def _saved_model(d, **kw):
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="v")
    saver = tf.train.Saver(**kw)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    return v, saver, sess


# ---- cleanup -----------------------------------------------------------------------------------


def test_cleanup_removes_only_dead_processes_temporaries(tmp_path):
    dead, host = dead_pid(), files._HOST
    (tmp_path / "data" / "grp").mkdir(parents=True)
    gone = [owned(tmp_path / "data" / "grp", f".out.dflow-tmp-{dead}@{host}-00aa"),
            owned(tmp_path, f".model-3.dflow-tmp-{dead}@{host}-00bb")]
    kept = [owned(tmp_path / "data", f".x.dflow-tmp-{os.getpid()}@{host}-00cc"),
            owned(tmp_path / "data", f".y.dflow-tmp-{dead}@some-other-host-00dd")]
    assert sorted(tf.io.cleanup(str(tmp_path))) == sorted(gone)
    assert all(os.path.exists(p) for p in kept) and not any(os.path.exists(p) for p in gone)
    with pytest.raises(tf.errors.NotFoundError, match="not a directory"):
        tf.io.cleanup(str(tmp_path / "missing"))


def test_a_session_sweeps_dead_sessions_scratch_directories(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    host = files._HOST
    dead = owned(tmp_path, f"dflow-variables-{dead_pid()}@{host}-00aa")
    live = owned(tmp_path, f"dflow-variables-{os.getpid()}@{host}-00bb")
    v = tf.Variable(np.ones((256, 256), np.float32), name="big")  # 256 KiB: kept on disk with a 512 KiB budget
    with tf.Session(memory_budget=512 << 10, scheduler="sync") as s:
        s.run(v.initializer)
        mine = [n for n in os.listdir(tmp_path) if n.startswith(f"dflow-variables-{os.getpid()}@")]
        assert len(mine) == 2, os.listdir(tmp_path)  # the live one and this session's own
        assert not os.path.exists(dead) and os.path.exists(live)
        np.testing.assert_array_equal(s.run(v), 1.0)
    assert os.path.exists(live)
    orphan = str(tmp_path / f"dflow-variables-{dead_pid()}@{host}-00bb")  # as if its session had been killed
    os.rename(live, orphan)
    assert tf.io.cleanup() == [orphan] and not os.path.exists(orphan)


# ---- checkpoints -------------------------------------------------------------------------------


def test_a_save_sweeps_a_killed_savers_temporaries(tmp_path):
    host, dead = files._HOST, dead_pid()
    _, saver, sess = _saved_model(tmp_path)
    saver.save(sess, str(tmp_path / "model"), global_step=1, write_meta_graph=False)
    partial = owned(tmp_path, f".model-2.dflow-tmp-{dead}@{host}-00aa")
    # published data without its link (killed before the link was made, or a copy that dropped
    # links): a whole checkpoint, linked again, never swept
    unlinked = owned(tmp_path, f"model-2.dflow-data-{dead}@{host}-00bb")
    link = owned(tmp_path, f".model-2.dflow-link-{os.getpid()}@{host}-00cc")  # a live saver's: kept
    saver.save(sess, str(tmp_path / "model"), global_step=3, write_meta_graph=False)
    assert not os.path.exists(partial) and os.path.exists(unlinked) and os.path.exists(link)
    assert os.readlink(tmp_path / "model-2") == os.path.basename(unlinked)
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model-3")
    data = os.readlink(tmp_path / "model-3")  # a data directory named by its link is never swept
    assert files.parse_owned(data)[1] == "data"
    assert tf.io.cleanup(str(tmp_path)) == [] and os.path.isdir(tmp_path / data)
    sess.close()


@pytest.mark.parametrize("what", ["directory", "file", "link"])
def test_save_never_replaces_what_is_not_a_checkpoint(tmp_path, what):
    prefix = tmp_path / "model"
    if what == "directory":
        prefix.mkdir()
        (prefix / "notes.txt").write_text("keep me")
    elif what == "file":
        prefix.write_text("keep me")
    else:
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / "notes.txt").write_text("keep me")
        os.symlink("elsewhere", prefix)
    before = snapshot(tmp_path)
    _, saver, sess = _saved_model(tmp_path)
    with pytest.raises(tf.errors.FailedPreconditionError, match=f"{prefix}.*Nothing was written"):
        saver.save(sess, str(prefix))
    assert snapshot(tmp_path) == before
    sess.close()


@pytest.mark.parametrize("path", ["", ".", "d/", "d/.."])
def test_save_to_a_directory_is_refused_as_in_tf1(tmp_path, monkeypatch, path):
    """TF1 raises ValueError("no path specified") (after writing `.index` files); nothing is
    written here, and never over the directory itself (the working directory for "")."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "notes.txt").write_text("keep me")
    monkeypatch.chdir(tmp_path)
    _, saver, sess = _saved_model(tmp_path)
    before = snapshot(tmp_path)
    with pytest.raises(ValueError, match="no path specified"):
        saver.save(sess, path)
    assert snapshot(tmp_path) == before
    sess.close()


def test_save_through_a_file_is_failed_precondition(tmp_path):
    (tmp_path / "f").write_text("x")
    _, saver, sess = _saved_model(tmp_path)
    with pytest.raises(tf.errors.FailedPreconditionError, match="Saver.save.*f/ckpt"):
        saver.save(sess, str(tmp_path / "f" / "ckpt" / "model"))
    sess.close()


def test_save_again_replaces_an_old_style_checkpoint_directory(tmp_path):
    """A checkpoint written as a plain directory (before links) is replaced in one exchange."""
    v, saver, sess = _saved_model(tmp_path)
    saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    data = os.path.join(tmp_path, os.readlink(tmp_path / "model"))
    os.unlink(tmp_path / "model")
    os.rename(data, tmp_path / "model")  # the old layout: the prefix is the group itself
    sess.run(v.assign(v * 2))
    saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    assert os.path.islink(tmp_path / "model")
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path / "model"), "v"),
                                  2 * np.arange(6, dtype=np.float32).reshape(2, 3))
    assert [n for n in os.listdir(tmp_path) if ".dflow-" in n and not os.path.islink(tmp_path / n)] == \
        [os.readlink(tmp_path / "model")]
    sess.close()


def test_relative_paths_with_dotdot_work_as_in_tf1(tmp_path, monkeypatch):
    (tmp_path / "run").mkdir()
    monkeypatch.chdir(tmp_path / "run")
    v, saver, sess = _saved_model(tmp_path)
    assert saver.save(sess, "../ckpt/model", global_step=7) == "../ckpt/model-7"
    assert saver.save(sess, "../ckpt/sub/../model", global_step=8) == "../ckpt/sub/../model-8"
    sess.run(v.assign(tf.zeros_like(v)))
    saver.restore(sess, "../ckpt/model-7")
    np.testing.assert_array_equal(sess.run(v), np.arange(6, dtype=np.float32).reshape(2, 3))
    monkeypatch.chdir(tmp_path)
    assert tf.train.latest_checkpoint("ckpt") == os.path.join("ckpt", "model-8")
    monkeypatch.chdir(tmp_path / "run")
    with tf.Session(scheduler="sync") as s:  # Zarr paths too: resolved as file paths, not refused by zarr
        s.run(tf.io.write_zarr(tf.constant([1.0, 2.0]), ".", "../out/../arr"))
        s.run(tf.io.write_zarr(tf.constant([3.0]), "..", "run/../grp/arr"))
        np.testing.assert_array_equal(s.run(tf.io.read_zarr(".", "../arr")), [1.0, 2.0])
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "arr"), mode="r")[...], [1.0, 2.0])
    np.testing.assert_array_equal(zarr.open_group(str(tmp_path), mode="r")["grp/arr"][...], [3.0])
    assert temps(tmp_path) == []
    sess.close()


# ---- graph files -------------------------------------------------------------------------------


def test_write_graph_never_replaces_a_directory(tmp_path):
    (tmp_path / "g.json").mkdir()
    (tmp_path / "g.json" / "notes.txt").write_text("keep me")
    (tmp_path / "h.json.consts").mkdir()
    (tmp_path / "h.json.consts" / "notes.txt").write_text("keep me")
    tf.constant(np.zeros(5000, np.float32))  # large: kept in the constants group beside the file
    before = snapshot(tmp_path)
    with pytest.raises(tf.errors.FailedPreconditionError, match="g.json.*directory"):
        tf.io.write_graph(tf.get_default_graph(), str(tmp_path), "g.json")
    with pytest.raises(tf.errors.FailedPreconditionError, match="h.json.consts.*not a constants group"):
        tf.io.write_graph(tf.get_default_graph(), str(tmp_path), "h.json")
    (tmp_path / "f").write_text("x")
    with pytest.raises(tf.errors.FailedPreconditionError, match="write_graph"):
        tf.io.write_graph(tf.get_default_graph(), str(tmp_path / "f" / "d"), "g.json")
    assert {k: v for k, v in snapshot(tmp_path).items() if k != "f"} == before
    with pytest.raises(tf.errors.FailedPreconditionError, match="Cannot read the graph file.*Is a directory"):
        tf.io.read_graph_def(str(tmp_path / "g.json"))


def test_write_graph_again_replaces_its_constants_in_one_step(tmp_path):
    c = tf.Variable(np.zeros(5000, np.float32))
    path = tf.io.write_graph(tf.get_default_graph(), str(tmp_path), "g.json")
    tf.io.write_graph(tf.get_default_graph(), str(tmp_path), "g.json")
    assert sorted(os.listdir(tmp_path)) == ["g.json", "g.json.consts"]
    assert tf.io.read_graph_def(path) is not None and c is not None


# ---- Dataset.cache(filename) -------------------------------------------------------------------


def test_dataset_cache_file_refuses_a_directory_and_sweeps_dead_temporaries(tmp_path):
    (tmp_path / "c.dflow-cache").mkdir()
    (tmp_path / "c.dflow-cache" / "notes.txt").write_text("keep me")
    partial = tmp_path / f".d.dflow-cache.dflow-tmp-{dead_pid()}@{files._HOST}-00aa"  # a killed epoch's
    partial.write_bytes(b"partial")
    before = snapshot(tmp_path)
    with tf.Session() as s:
        it = tf.data.Dataset.range(3).cache(str(tmp_path / "c")).make_one_shot_iterator()
        with pytest.raises(tf.errors.FailedPreconditionError, match="c.dflow-cache.*not a cache file"):
            s.run(it.get_next())
        assert snapshot(tmp_path) == before
        nxt = tf.data.Dataset.range(3).cache(str(tmp_path / "d")).make_one_shot_iterator().get_next()
        assert [int(s.run(nxt)) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(nxt)
    assert not partial.exists() and (tmp_path / "d.dflow-cache").is_file()
    assert [n for n in os.listdir(tmp_path) if "dflow-tmp" in n] == []
