"""storage/files.py: what is at a path, owned temporaries and who may sweep them, the atomic swap
(with and without the kernel's exchange), and publishing several directories all or none."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
import zarr

from dflow import errors
from dflow.storage import files


def dead_pid():
    """The pid of a process of this host that has ended (and been reaped)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@pytest.fixture
def live_pid():
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield p.pid
    finally:
        p.kill()
        p.wait()


def owned(parent, leaf, pid, host=None, kind="tmp", hidden=True):
    host = host or files._HOST
    name = f"{'.' if hidden else ''}{leaf}.dflow-{kind}-{pid}@{host}-0123456789abcdef"
    path = os.path.join(parent, name)
    os.makedirs(path)
    with open(os.path.join(path, "payload"), "w") as f:
        f.write("x")
    return path


def _array(path, value):
    z = zarr.create_array(str(path), shape=(4,), dtype="f8", chunks=(2,), overwrite=True)
    z[...] = value
    return z


def test_node_kind(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("keep me")
    (tmp_path / "file").write_text("x")
    os.symlink("plain", tmp_path / "link")
    _array(tmp_path / "arr", 1.0)
    zarr.open_group(str(tmp_path / "grp"), mode="w")
    zarr.create_array(str(tmp_path / "v2"), shape=(2,), dtype="f8", zarr_format=2)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "zarr.json").write_text("not json")
    kinds = {n: files.node_kind(tmp_path / n) for n in
             ["missing", "empty", "plain", "file", "link", "arr", "grp", "v2", "bad"]}
    assert kinds == {"missing": "missing", "empty": "empty", "plain": "directory", "file": "file", "link": "link",
                     "arr": "array", "grp": "group", "v2": "array", "bad": "directory"}


def test_temp_names_carry_their_owner(tmp_path):
    p = files.temp_path(str(tmp_path / "out"), "tmp")
    leaf, kind, pid, host = files.parse_owned(os.path.basename(p))
    assert (leaf, kind, pid, host) == ("out", "tmp", os.getpid(), files._HOST)
    assert os.path.dirname(p) == str(tmp_path) and os.path.basename(p).startswith(".out.dflow-tmp-")
    assert files.parse_owned("out.dflow-tmp-1234") is None  # no owner: never swept
    assert files.parse_owned(f"dflow-variables-12@{files._HOST}-00ff")[1:3] == ("variables", 12)


def test_owner_alive(live_pid):
    assert files.owner_alive(os.getpid(), files._HOST)
    assert files.owner_alive(live_pid, files._HOST)
    assert not files.owner_alive(dead_pid(), files._HOST)
    assert files.owner_alive(dead_pid(), "another-host")  # cannot be seen from here: kept


def test_sweep_removes_only_the_temporaries_of_dead_processes(tmp_path, live_pid):
    dead = dead_pid()
    gone = owned(tmp_path, "a", dead)
    kept = [owned(tmp_path, "b", live_pid), owned(tmp_path, "c", os.getpid()),
            owned(tmp_path, "d", dead, host="elsewhere"), owned(tmp_path, "e", dead, kind="data", hidden=False)]
    os.symlink(os.path.basename(kept[-1]), tmp_path / "e")  # a checkpoint's data directory, linked: not a temp
    (tmp_path / "f.dflow-tmp-1234").mkdir()  # the old unowned form: nobody can tell whose it is
    (tmp_path / "user").mkdir()
    assert files.sweep(tmp_path) == [gone]
    assert not os.path.exists(gone)
    for p in kept + [str(tmp_path / "f.dflow-tmp-1234"), str(tmp_path / "user")]:
        assert os.path.exists(p), p


def test_sweep_tree_goes_below_but_not_into_arrays(tmp_path):
    dead = dead_pid()
    (tmp_path / "a" / "b").mkdir(parents=True)
    deep = owned(tmp_path / "a" / "b", "out", dead)
    _array(tmp_path / "arr", 1.0)
    inside = owned(tmp_path / "arr", "x", dead)  # never looked at: chunk directories of an array
    assert files.sweep_tree(tmp_path) == [deep]
    assert os.path.exists(inside)


@pytest.mark.parametrize("exchange", [True, False])
def test_swap_in_replaces_in_one_step(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setenv("DFLOW_NO_RENAME_EXCHANGE", "1")
    final, tmp = tmp_path / "out", tmp_path / ".out.new"
    _array(final, 1.0)
    _array(tmp, 2.0)
    old = files.swap_in(str(tmp), str(final))
    np.testing.assert_array_equal(zarr.open_array(str(final), mode="r")[...], 2.0)
    np.testing.assert_array_equal(zarr.open_array(old, mode="r")[...], 1.0)
    assert (old == str(tmp)) == exchange
    files.remove(old)
    _array(tmp, 3.0)
    files._swap_back(str(final), str(tmp), files.swap_in(str(tmp), str(final)))  # and undone
    np.testing.assert_array_equal(zarr.open_array(str(final), mode="r")[...], 2.0)
    np.testing.assert_array_equal(zarr.open_array(str(tmp), mode="r")[...], 3.0)


def test_recover_puts_back_an_old_array_moved_aside_by_a_dead_process(tmp_path, live_pid):
    final = tmp_path / "out"
    aside = owned(tmp_path, "out", dead_pid(), kind="old")
    assert files.recover(str(final)) and os.path.exists(final / "payload") and not os.path.exists(aside)
    # a live process between its two renames is left alone
    os.rename(final, tmp_path / "elsewhere")
    owned(tmp_path, "out", live_pid, kind="old")
    assert not files.recover(str(final)) and not os.path.exists(final)


@pytest.mark.parametrize("exchange", [True, False])
def test_publish_all_or_none(tmp_path, monkeypatch, exchange):
    """The third of three swaps fails: the two done are swapped back, every name holds its old
    array (without an exchange: the third's old array, already moved aside, comes back too)."""
    for n in ("a", "b", "c"):
        _array(tmp_path / n, 1.0)
        _array(tmp_path / f".{n}.new", 2.0)
    items = [files.Publication(str(tmp_path / f".{n}.new"), str(tmp_path / n)) for n in ("a", "b", "c")]
    third = str(tmp_path / "c")
    if exchange:
        real = files.exchange

        def failing(a, b):
            if b == third:
                raise OSError(errno.EIO, "I/O error", b)
            return real(a, b)

        monkeypatch.setattr(files, "exchange", failing)
    else:
        monkeypatch.setenv("DFLOW_NO_RENAME_EXCHANGE", "1")
        real = os.rename

        def failing(src, dst):
            if dst == third and src.endswith(".new"):
                raise OSError(errno.EIO, "I/O error", dst)
            return real(src, dst)

        monkeypatch.setattr(files.os, "rename", failing)
    with pytest.raises(errors.UnknownError, match="Publishing .*all are as they were"):
        files.publish(items)
    monkeypatch.undo()
    for n in ("a", "b", "c"):  # every name as it was, every new array back at its temporary
        np.testing.assert_array_equal(zarr.open_array(str(tmp_path / n), mode="r")[...], 1.0)
        np.testing.assert_array_equal(zarr.open_array(str(tmp_path / f".{n}.new"), mode="r")[...], 2.0)
    assert len(os.listdir(tmp_path)) == 6
    files.publish(items)
    for n in ("a", "b", "c"):
        np.testing.assert_array_equal(zarr.open_array(str(tmp_path / n), mode="r")[...], 2.0)
    assert sorted(os.listdir(tmp_path)) == ["a", "b", "c"]  # the old arrays removed once all were in


def test_a_refusal_in_prepare_moves_nothing(tmp_path):
    _array(tmp_path / "a", 1.0)
    _array(tmp_path / ".a.new", 2.0)

    def refuse():
        raise errors.FailedPreconditionError(None, None, "no")

    with pytest.raises(errors.FailedPreconditionError):
        files.publish([files.Publication(str(tmp_path / ".a.new"), str(tmp_path / "a")),
                       files.Publication(str(tmp_path / ".b.new"), str(tmp_path / "b"), refuse)])
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"), mode="r")[...], 1.0)


def test_ensure_dir_through_a_file_is_a_dflow_error(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(errors.FailedPreconditionError, match="f/sub"):
        files.ensure_dir(str(tmp_path / "f" / "sub"), "test")


def test_host_name_is_sanitized():
    assert files._HOST and all(c.isalnum() or c in "_-" for c in files._HOST)
    assert files.parse_owned(os.path.basename(files.temp_path(f"/x/{socket.gethostname()}")))[3] == files._HOST


def test_a_journal_cut_short_is_dropped_and_its_temporaries_swept(tmp_path):
    """A writer killed while writing its journal had swapped nothing: the journal goes, and its
    temporaries are swept like any dead process's (the names keep their old arrays)."""
    dead, host = dead_pid(), files._HOST
    _array(tmp_path / "a", 1.0)
    new = owned(tmp_path, "a", dead)
    journal = tmp_path / f".publish.dflow-journal-{dead}@{host}-00aa"
    journal.write_text('{"items": [["' + new)  # cut short
    assert sorted(files.sweep(tmp_path)) == [new]
    assert sorted(os.listdir(tmp_path)) == ["a"]
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"), mode="r")[...], 1.0)


def test_a_live_writers_journal_is_left_alone(tmp_path, live_pid):
    _array(tmp_path / "a", 1.0)
    new = owned(tmp_path, "a", live_pid)
    journal = tmp_path / f".publish.dflow-journal-{live_pid}@{files._HOST}-00aa"
    journal.write_text(f'{{"items": [["{new}", "{tmp_path / "a"}", {os.lstat(new).st_ino}]], "copies": []}}')
    assert files.sweep(tmp_path) == [] and not files.recover(str(tmp_path / "a"))
    assert os.path.exists(new) and journal.exists()
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"), mode="r")[...], 1.0)
