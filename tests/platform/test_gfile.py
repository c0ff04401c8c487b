"""tf.gfile / tf.io.gfile over a local directory and an fsspec `memory://` URL, with TF's errors.

Expected behaviours are TF 2.21's `tf.compat.v1.gfile` on local files (probed by hand: e.g. copying
onto an existing file is AlreadyExistsError, `Remove` of a directory FailedPreconditionError,
`Walk` of a missing directory yields nothing, `MkDir` of an existing directory is accepted).
"""

from __future__ import annotations

import os
import uuid

import pytest

import dflow as tf
from dflow import errors

gfile = tf.gfile
io_gfile = tf.io.gfile


@pytest.fixture(params=["local", "memory"])
def root(request, tmp_path):
    """A fresh empty directory: a tmp dir, or a `memory://` URL removed afterwards."""
    if request.param == "local":
        yield str(tmp_path)
        return
    url = f"memory://dflow-test-{uuid.uuid4().hex}"
    io_gfile.makedirs(url)
    yield url
    if io_gfile.exists(url):
        io_gfile.rmtree(url)


def j(root, *names):
    return io_gfile.join(root, *names)


def write(path, data):
    with gfile.GFile(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def test_write_read_text_and_binary(root):
    p = j(root, "a.txt")
    assert not gfile.Exists(p)
    write(p, "hello\nworld\n")
    assert gfile.Exists(p)
    assert gfile.GFile(p).read() == "hello\nworld\n"
    assert gfile.GFile(p, "rb").read() == b"hello\nworld\n"
    assert gfile.GFile(p).readlines() == ["hello\n", "world\n"]
    assert list(gfile.GFile(p)) == ["hello\n", "world\n"]
    assert gfile.GFile(p).readline() == "hello\n"
    assert gfile.GFile(p).size() == 12
    with gfile.GFile(p, "a") as f:
        f.write(b"!")  # a text-mode file takes bytes too, as TF's
    assert gfile.Open(p, "rb").read() == b"hello\nworld\n!"
    assert gfile.FastGFile(p, "rb").read() == b"hello\nworld\n!"


def test_seek_tell_and_reopen_after_close(root):
    p = j(root, "s.bin")
    write(p, b"abcdef")
    f = gfile.GFile(p, "rb")
    f.seek(2)
    assert f.tell() == 2 and f.read(2) == b"cd" and f.tell() == 4
    assert f.read(-1) == b"ef"
    f.seek(position=1)
    assert f.read(1) == b"b"
    assert f.name == p and f.mode == "rb"
    f.close()
    assert f.read() == b"abcdef"  # TF reopens a closed GFile on read
    f.close()


def test_missing_file_and_bad_mode(root):
    p = j(root, "missing.txt")
    f = gfile.GFile(p)  # opening is lazy, as TF
    with pytest.raises(errors.NotFoundError, match="missing.txt"):
        f.read()
    with pytest.raises(errors.InvalidArgumentError, match="mode"):
        gfile.GFile(p, "z")
    with pytest.raises(errors.NotFoundError):
        gfile.Stat(p)
    write(p, "x")
    with pytest.raises(errors.PermissionDeniedError, match="open for writing"):
        gfile.GFile(p).write("y")
    with pytest.raises(errors.PermissionDeniedError, match="open for reading"):
        gfile.GFile(p, "a").read()


def test_makedirs_mkdir_isdir(root):
    deep = j(root, "x", "y", "z")
    gfile.MakeDirs(deep)
    gfile.MakeDirs(deep)  # already there: nothing
    assert gfile.IsDirectory(deep) and gfile.IsDirectory(root)
    assert gfile.Stat(deep).is_directory
    gfile.MkDir(j(root, "x"))  # existing: accepted (TF 2.21)
    gfile.MkDir(j(root, "m"))
    assert gfile.IsDirectory(j(root, "m"))
    with pytest.raises(errors.NotFoundError):
        gfile.MkDir(j(root, "n", "m"))
    p = j(root, "f.txt")
    write(p, "x")
    assert not gfile.IsDirectory(p) and not gfile.IsDirectory(j(root, "nope"))
    with pytest.raises(errors.FailedPreconditionError):
        gfile.MakeDirs(p)


def test_listdir_glob(root):
    for name in ["b.txt", "a.txt", "c.dat"]:
        write(j(root, name), name)
    gfile.MakeDirs(j(root, "sub"))
    assert gfile.ListDirectory(root) == ["a.txt", "b.txt", "c.dat", "sub"]
    assert io_gfile.listdir(j(root, "sub")) == []
    with pytest.raises(errors.NotFoundError, match="Could not find directory"):
        gfile.ListDirectory(j(root, "nope"))
    with pytest.raises(errors.NotFoundError):
        gfile.ListDirectory(j(root, "a.txt"))
    assert gfile.Glob(j(root, "*.txt")) == [j(root, "a.txt"), j(root, "b.txt")]
    assert io_gfile.glob([j(root, "c*"), j(root, "a*")]) == [j(root, "c.dat"), j(root, "a.txt")]
    assert gfile.Glob(j(root, "zz*")) == [] and gfile.Glob(j(root, "nope", "*")) == []
    # the paths it gives are usable as they are
    assert all(gfile.Exists(p) for p in gfile.Glob(j(root, "*")))


def test_remove_and_delete_recursively(root):
    p = j(root, "f.txt")
    write(p, "x")
    gfile.MakeDirs(j(root, "d", "e"))
    write(j(root, "d", "e", "g.txt"), "y")
    with pytest.raises(errors.FailedPreconditionError, match="directory"):
        gfile.Remove(j(root, "d"))
    gfile.Remove(p)
    assert not gfile.Exists(p)
    with pytest.raises(errors.NotFoundError):
        gfile.Remove(p)
    gfile.DeleteRecursively(j(root, "d"))
    assert not gfile.Exists(j(root, "d")) and not gfile.Exists(j(root, "d", "e", "g.txt"))
    with pytest.raises(errors.NotFoundError, match="not found"):
        gfile.DeleteRecursively(j(root, "d"))
    write(p, "x")
    io_gfile.rmtree(p)  # a file too, as TF
    assert not gfile.Exists(p)


def test_copy_and_rename(root):
    src, dst = j(root, "a.txt"), j(root, "c.txt")
    write(src, "one")
    gfile.Copy(src, dst)
    assert gfile.GFile(dst).read() == "one"
    write(src, "two")
    with pytest.raises(errors.AlreadyExistsError):
        gfile.Copy(src, dst)
    gfile.Copy(src, dst, overwrite=True)
    assert gfile.GFile(dst).read() == "two"
    with pytest.raises(errors.NotFoundError):
        gfile.Copy(j(root, "nope"), j(root, "x"))
    r = j(root, "r.txt")
    gfile.Rename(dst, r)
    assert not gfile.Exists(dst) and gfile.GFile(r).read() == "two"
    with pytest.raises(errors.AlreadyExistsError):
        gfile.Rename(src, r)
    gfile.Rename(r, src, overwrite=True)
    assert gfile.GFile(src).read() == "two" and not gfile.Exists(r)
    with pytest.raises(errors.NotFoundError):
        gfile.Rename(r, j(root, "q"))
    gfile.MakeDirs(j(root, "d1"))
    write(j(root, "d1", "f"), "z")
    io_gfile.rename(j(root, "d1"), j(root, "d2"))
    assert gfile.GFile(j(root, "d2", "f")).read() == "z" and not gfile.Exists(j(root, "d1"))


def test_stat(root):
    p = j(root, "a.bin")
    write(p, b"12345")
    s = gfile.Stat(p)
    assert s.length == 5 and not s.is_directory and isinstance(s.mtime_nsec, int)


def test_walk(root):
    gfile.MakeDirs(j(root, "x", "y"))
    gfile.MakeDirs(j(root, "m"))
    write(j(root, "a.txt"), "1")
    write(j(root, "x", "b.txt"), "2")
    top_down = list(gfile.Walk(root))
    assert top_down == [(root, ["m", "x"], ["a.txt"]), (j(root, "m"), [], []), (j(root, "x"), ["y"], ["b.txt"]),
                        (j(root, "x", "y"), [], [])]
    assert list(gfile.Walk(root, in_order=False)) == [top_down[1], top_down[3], top_down[2], top_down[0]]
    assert list(io_gfile.walk(root, topdown=False)) == list(gfile.Walk(root, in_order=False))
    assert list(gfile.Walk(j(root, "nope"))) == []


def test_local_walk_matches_os_walk(tmp_path):
    for d in ["a/b", "a/c", "d"]:
        os.makedirs(tmp_path / d)
    (tmp_path / "a" / "f").write_text("x")
    ours = [(d, sorted(s), sorted(f)) for d, s, f in gfile.Walk(str(tmp_path))]
    theirs = [(d, sorted(s), sorted(f)) for d, s, f in os.walk(str(tmp_path))]
    assert sorted(ours) == sorted(theirs)


def test_relative_local_paths_stay_relative(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    gfile.MakeDirs("r/s")
    write("r/s/t.txt", "x")
    assert gfile.Glob("r/*/*.txt") == [os.path.join("r", "s", "t.txt")]
    assert list(gfile.Walk("r"))[0][0] == "r"


def test_copy_and_rename_across_filesystems(tmp_path):
    url = f"memory://dflow-test-{uuid.uuid4().hex}"
    local = str(tmp_path / "a.bin")
    payload = os.urandom(1 << 16)
    write(local, payload)
    try:
        gfile.Copy(local, j(url, "b.bin"))
        assert gfile.GFile(j(url, "b.bin"), "rb").read() == payload
        gfile.Rename(j(url, "b.bin"), str(tmp_path / "c.bin"))
        assert (tmp_path / "c.bin").read_bytes() == payload and not gfile.Exists(j(url, "b.bin"))
    finally:
        if gfile.Exists(url):
            gfile.DeleteRecursively(url)


def test_unknown_scheme_is_unimplemented():
    with pytest.raises(errors.UnimplementedError, match="nosuchfs"):
        gfile.Exists("nosuchfs://bucket/key")


def test_names_are_tf1s():
    assert gfile.Open is gfile.GFile and issubclass(gfile.FastGFile, gfile.GFile)
    assert gfile.Exists is io_gfile.exists and gfile.Glob is io_gfile.glob and gfile.Copy is io_gfile.copy
    assert tf.compat.v1.gfile is gfile and tf.compat.v1.io.gfile is io_gfile
    for name in ["GFile", "copy", "exists", "glob", "isdir", "join", "listdir", "makedirs", "mkdir", "remove",
                 "rename", "rmtree", "stat", "walk", "get_registered_schemes"]:
        assert hasattr(io_gfile, name), name
    assert "memory" in io_gfile.get_registered_schemes()
