"""write_zarr never destroys and never half-publishes (issue 14): it replaces only Zarr arrays and
groups (anything else is FailedPreconditionError, nothing on disk touched); the outputs of one run
go in place together or not at all; an overwrite is one atomic exchange, so a process killed at any
moment leaves the old or the new array under the name, and the next run removes its temporaries."""

from __future__ import annotations

import errno
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import zarr

import dflow as tf
from dflow.io import graph_io
from dflow.storage import files

REPO = Path(__file__).resolve().parents[2]
SCHEDULERS = ["sync", "threads", "processes"]
X = np.arange(32, dtype=np.float32).reshape(8, 4)


def snapshot(root):
    """Every entry under `root`: kind, and a file's bytes and mtime, a link's target."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir",)
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", f.read(), os.stat(p).st_mtime_ns)
    return out


def temps(root):
    """The temporaries under `root` (not a checkpoint's data directories, which are linked)."""
    return [n for _, dirs, fs in os.walk(root) for n in dirs + fs
            if ".dflow-" in n and ".dflow-data-" not in n]


def _array(path, value, chunks=(4, 4)):
    z = zarr.create_array(str(path), shape=X.shape, dtype=X.dtype, chunks=chunks, overwrite=True)
    z[...] = value
    return z


def _value(path):
    return zarr.open_array(str(path), mode="r")[...]


def _project(d):
    """An ordinary directory of a user's files."""
    (d / "src").mkdir(parents=True)
    (d / "README").write_text("my project")
    (d / "src" / "main.py").write_text("print('hi')")
    return d


# ---- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("form", ["path", "dir+path"])
def test_overwrite_refuses_an_ordinary_directory(tmp_path, scheduler, form):
    proj = _project(tmp_path / "proj")
    before = snapshot(tmp_path)
    store, path = (str(proj), None) if form == "path" else (str(tmp_path), "proj")
    w = tf.io.write_zarr(tf.constant(X), store, path, overwrite=True)
    with tf.Session(scheduler=scheduler) as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match=f"{proj}.*not a Zarr array or group.*Nothing"):
            s.run(w)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("overwrite", [True, False])
def test_a_file_or_a_link_at_the_name_is_refused(tmp_path, overwrite):
    (tmp_path / "f").write_text("data")
    _array(tmp_path / "real", 1.0)
    os.symlink("real", tmp_path / "link")
    before = snapshot(tmp_path)
    with tf.Session(scheduler="sync") as s:
        for name, what in [("f", "a file"), ("link", "a symbolic link")]:
            with pytest.raises(tf.errors.FailedPreconditionError, match=f"{tmp_path / name} is {what}"):
                s.run(tf.io.write_zarr(tf.constant(X), str(tmp_path / name), overwrite=overwrite))
    assert snapshot(tmp_path) == before


def test_a_path_through_a_file_or_an_array_is_refused(tmp_path):
    (tmp_path / "f").write_text("data")
    _array(tmp_path / "arr", 1.0)
    before = snapshot(tmp_path)
    with tf.Session(scheduler="sync") as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="arr is a Zarr array"):
            s.run(tf.io.write_zarr(tf.constant(X), str(tmp_path), "arr/inner", overwrite=True))
        with pytest.raises(tf.errors.FailedPreconditionError, match=f"{tmp_path / 'f'} is a file"):
            s.run(tf.io.write_zarr(tf.constant(X), str(tmp_path / "f"), "out"))
        with pytest.raises(tf.errors.FailedPreconditionError, match=f"{tmp_path / 'f'} is a file"):
            s.run(tf.io.write_zarr(tf.constant(X), str(tmp_path / "f" / "deeper" / "out")))
    assert snapshot(tmp_path) == before


def test_what_overwrite_may_replace(tmp_path):
    (tmp_path / "empty").mkdir()
    g = zarr.open_group(str(tmp_path / "grp"), mode="w")
    g.create_array("inner", shape=(2,), dtype="f8")
    _array(tmp_path / "arr", 1.0)
    with tf.Session(scheduler="threads", small_plan_bytes=0) as s:
        s.run(tf.io.write_zarr(tf.constant(X), str(tmp_path / "empty")))  # an empty directory holds nothing
        with pytest.raises(tf.errors.FailedPreconditionError, match="already exists.*overwrite=True"):
            s.run(tf.io.write_zarr(tf.constant(X), str(tmp_path / "grp")))
        s.run([tf.io.write_zarr(tf.constant(X) + 1, str(tmp_path / "grp"), overwrite=True),
               tf.io.write_zarr(tf.constant(X) + 2, str(tmp_path / "arr"), overwrite=True)])
    np.testing.assert_array_equal(_value(tmp_path / "empty"), X)
    np.testing.assert_array_equal(_value(tmp_path / "grp"), X + 1)
    np.testing.assert_array_equal(_value(tmp_path / "arr"), X + 2)
    assert temps(tmp_path) == []


def test_a_graph_file_whose_sink_names_a_directory(tmp_path):
    out = tmp_path / "out"
    with tf.Graph().as_default() as g:
        tf.io.write_zarr(tf.constant(X), str(tmp_path), "out", overwrite=True, name="sink")
    path = graph_io.write_graph(g, str(tmp_path / "graphs"), "g.json")
    _project(out)  # by the time the file is run, the name holds someone's files
    before = snapshot(tmp_path)
    with tf.Graph().as_default():
        graph_io.import_graph_def(graph_io.read_graph_def(path), name="")
        with tf.Session(scheduler="threads", small_plan_bytes=0) as s:
            with pytest.raises(tf.errors.FailedPreconditionError, match=f"{out} is a directory"):
                s.run("sink:0")
    assert snapshot(tmp_path) == before


# ---- outputs of one run: together or not at all ------------------------------------------------


def _old_outputs(d):
    _array(d / "o1", 1.0)
    _array(d / "o2", 1.0)
    return snapshot(d)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_a_refusal_at_commit_publishes_no_output(tmp_path, scheduler):
    """The second output's name becomes a Zarr group during the run (a third output creates it as
    its parent group), so the second output, written without overwrite, is refused at commit:
    the first is not published either, and every earlier array is intact."""
    before = _old_outputs(tmp_path)
    x = tf.constant(X)
    w1 = tf.io.write_zarr(x * 2, str(tmp_path), "o1", overwrite=True)
    w2 = tf.io.write_zarr(x * 3, str(tmp_path), "new")
    w3 = tf.io.write_zarr(x * 4, str(tmp_path), "new/inner")
    with tf.Session(scheduler=scheduler) as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="new appeared during the run"):
            s.run([w1, w2, w3])
    np.testing.assert_array_equal(_value(tmp_path / "o1"), 1.0)
    after = snapshot(tmp_path)  # the run made the directory a Zarr group (zarr.json) for "new/inner"
    assert {k: v for k, v in after.items() if not k.startswith("new") and k != "zarr.json"} == before
    assert temps(tmp_path) == [] and "inner" not in os.listdir(tmp_path / "new")


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_a_directory_appearing_during_the_run_is_never_replaced(tmp_path, scheduler):
    before = _old_outputs(tmp_path)

    def make_dir(v):
        _project(tmp_path / "o3")
        return v

    x = tf.py_func(make_dir, [tf.constant(X)], tf.float32)
    x.set_shape(X.shape)
    with tf.Session(scheduler=scheduler) as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="o3 is a directory"):
            s.run([tf.io.write_zarr(x, str(tmp_path), "o1", overwrite=True),
                   tf.io.write_zarr(x, str(tmp_path), "o3", overwrite=True)])
    assert {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("o3") and k != "zarr.json"} == before
    assert (tmp_path / "o3" / "README").read_text() == "my project"
    assert temps(tmp_path) == []


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_a_failure_while_swapping_puts_every_output_back(tmp_path, scheduler, monkeypatch):
    before = _old_outputs(tmp_path)
    real, calls = files.exchange, []

    def failing_second(a, b):  # the file system fails the second output's exchange
        calls.append(b)
        if len(calls) == 2:
            raise OSError(errno.EIO, "Input/output error", b)
        return real(a, b)

    monkeypatch.setattr(files, "exchange", failing_second)
    x = tf.constant(X)
    ws = [tf.io.write_zarr(x * 2, str(tmp_path), "o1", overwrite=True),
          tf.io.write_zarr(x * 2, str(tmp_path), "o2", overwrite=True)]
    with tf.Session(scheduler=scheduler) as s:
        with pytest.raises(tf.errors.UnknownError, match="Publishing .*o1.*o2.*as they were.*Input/output"):
            s.run(ws)
        assert {k: v for k, v in snapshot(tmp_path).items() if k != "zarr.json"} == before
        monkeypatch.setattr(files, "exchange", real)
        s.run(ws)  # and the same run then succeeds
    np.testing.assert_array_equal(_value(tmp_path / "o1"), X * 2)
    np.testing.assert_array_equal(_value(tmp_path / "o2"), X * 2)
    assert temps(tmp_path) == []


# ---- a writer killed at the critical moments ---------------------------------------------------

_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import dflow as tf
    d, n = sys.argv[1], int(sys.argv[2])
    x = tf.constant(np.full((8, 4), 2.0, np.float32))
    with tf.Session(scheduler="sync") as s:
        s.run([tf.io.write_zarr(x, d, f"o{i}", overwrite=True) for i in range(1, n + 1)])
    print("done", flush=True)
""")


def _killed_writer(d, outputs, point, no_exchange=False, code=_CHILD):
    """Runs a child overwriting o1..oN (all 1.0) with 2.0, pausing at `point` of the publication
    (storage/files.py `_pause`), and SIGKILLs it there."""
    env = dict(os.environ, PYTHONPATH=str(REPO), DFLOW_PAUSE_AT=f"{point}:60")
    if no_exchange:
        env["DFLOW_NO_RENAME_EXCHANGE"] = "1"
    proc = subprocess.Popen([sys.executable, "-c", code, str(d), str(outputs)], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, env=env)
    try:
        deadline, seen = time.time() + 60, ""
        while f"dflow-paused {point}" not in seen:
            assert time.time() < deadline and proc.poll() is None, seen[-2000:]
            if select.select([proc.stderr], [], [], 1.0)[0]:
                seen += proc.stderr.readline()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL


def _readers(path):
    """The array under `path` as read_zarr, zarr-python and Dataset.from_zarr see it."""
    with tf.Graph().as_default(), tf.Session(scheduler="sync") as s:
        by_read = s.run(tf.io.read_zarr(str(path)))
        it = tf.data.Dataset.from_zarr(str(path)).batch(8).make_one_shot_iterator()
        by_dataset = s.run(it.get_next())
    by_zarr = _value(path)
    np.testing.assert_array_equal(by_read, by_zarr)
    np.testing.assert_array_equal(by_dataset, by_zarr)
    return float(by_zarr.flat[0]) if (by_zarr == by_zarr.flat[0]).all() else "mixed"


def test_killed_before_the_swap_leaves_the_old_array(tmp_path):
    _array(tmp_path / "o1", 1.0)
    _killed_writer(tmp_path, 1, "swap")
    assert _readers(tmp_path / "o1") == 1.0
    left = temps(tmp_path)
    assert len(left) == 1 and left[0].startswith(".o1.dflow-tmp-")
    assert tf.io.cleanup(str(tmp_path)) == [str(tmp_path / left[0])]  # its process is dead
    assert temps(tmp_path) == [] and _readers(tmp_path / "o1") == 1.0


@pytest.mark.parametrize("finisher", ["read_zarr", "next_write", "cleanup"])
def test_killed_between_two_outputs_the_publication_is_finished(tmp_path, finisher):
    """A kill (not an error) between the swaps of two outputs: each name holds a whole array (the
    first the new one, the second still the old one), and the dead writer's journal lets the next
    dflow reader, writer or clean-up in the directory finish the publication: both new."""
    _array(tmp_path / "o1", 1.0)
    _array(tmp_path / "o2", 1.0)
    _killed_writer(tmp_path, 2, "publish")
    assert float(_value(tmp_path / "o1").flat[0]) == 2.0 and float(_value(tmp_path / "o2").flat[0]) == 1.0
    assert any(".dflow-journal-" in n for n in temps(tmp_path))
    if finisher == "read_zarr":
        assert _readers(tmp_path / "o2") == 2.0
    elif finisher == "next_write":
        with tf.Session(scheduler="threads", small_plan_bytes=0) as s:
            s.run(tf.io.write_zarr(tf.constant(X), str(tmp_path), "other"))
    else:
        tf.io.cleanup(str(tmp_path))
    assert temps(tmp_path) == []
    assert _readers(tmp_path / "o1") == 2.0 and _readers(tmp_path / "o2") == 2.0


def test_killed_between_outputs_in_two_directories(tmp_path):
    """Outputs in two directories: a journal copy in each, so finishing from either is whole."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _array(tmp_path / "a" / "o1", 1.0)
    _array(tmp_path / "b" / "o2", 1.0)
    child = _CHILD.replace('f"o{i}"', 'f"{\'ab\'[i - 1]}/o{i}"')
    _killed_writer(tmp_path, 2, "publish", code=child)
    assert float(_value(tmp_path / "b" / "o2").flat[0]) == 1.0
    tf.io.cleanup(str(tmp_path / "b"))  # the directory of the output not yet swapped
    assert temps(tmp_path) == []
    assert _readers(tmp_path / "a" / "o1") == 2.0 and _readers(tmp_path / "b" / "o2") == 2.0


def test_killed_mid_swap_without_an_exchange_the_old_array_comes_back(tmp_path):
    """Where the file system cannot exchange, a swap is two renames; killed between them, the
    name is empty on disk and the old array aside: the next reader puts it back."""
    _array(tmp_path / "o1", 1.0)
    _killed_writer(tmp_path, 1, "swap-fallback", no_exchange=True)
    assert not os.path.exists(tmp_path / "o1")
    assert _readers(tmp_path / "o1") == 1.0  # read_zarr recovered it first
    tf.io.cleanup(str(tmp_path))
    assert temps(tmp_path) == []


def test_a_live_writers_temporary_is_never_swept(tmp_path):
    _array(tmp_path / "o1", 1.0)
    env = dict(os.environ, PYTHONPATH=str(REPO), DFLOW_PAUSE_AT="swap:60")
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path), "1"], stderr=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        while "dflow-paused swap" not in proc.stderr.readline():
            assert proc.poll() is None
        left = temps(tmp_path)
        assert tf.io.cleanup(str(tmp_path)) == []
        with tf.Session(scheduler="sync") as s:
            s.run(tf.io.write_zarr(tf.constant(X), str(tmp_path), "other"))
        assert temps(tmp_path) == left
    finally:
        proc.kill()
        proc.wait()
