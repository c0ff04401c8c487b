"""`tf.io.gfile`: files over local paths and fsspec URLs, with TF1's errors.

A path with a scheme (`memory://x/a.txt`, `s3://bucket/key`, `file:///tmp/a`) goes through the
fsspec filesystem of that protocol; any other path is a local one. Names, arguments and errors are
TF's: a missing file is NotFoundError, copying or renaming onto an existing file without
`overwrite=True` AlreadyExistsError, `remove` of a directory FailedPreconditionError, an unknown
scheme UnimplementedError. Listings (`listdir`, `glob`, `walk`) come sorted; paths that come back
keep the form they were given in (relative local paths stay relative).
"""

from __future__ import annotations

import contextlib
import glob as _glob
import os
import posixpath
from collections import namedtuple

from ..errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    PermissionDeniedError,
    UnimplementedError,
    UnknownError,
)

__all__ = ["GFile", "copy", "exists", "get_registered_schemes", "glob", "isdir", "join", "listdir", "makedirs",
           "mkdir", "remove", "rename", "rmtree", "stat", "walk"]

_MODES = ("r", "w", "a", "r+", "w+", "a+")
_BLOCK = 8 << 20  # bytes per read when copying between filesystems

FileStatistics = namedtuple("FileStatistics", ["length", "mtime_nsec", "is_directory"])


def _as_path(path):
    path = os.fspath(path)
    return path.decode("utf-8") if isinstance(path, bytes) else path


def _is_url(path):
    return "://" in path


def _fs(path):
    """(filesystem, path as that filesystem names it) for a local path or an fsspec URL."""
    import fsspec

    path = _as_path(path)
    if not _is_url(path):
        return fsspec.filesystem("file"), path
    try:
        return fsspec.core.url_to_fs(path)
    except (ValueError, ImportError) as e:
        scheme = path.split("://", 1)[0]
        raise UnimplementedError(None, None, f"File system scheme '{scheme}' not implemented (file: '{path}'): "
                                 f"{e}") from None


@contextlib.contextmanager
def _errors(path):
    """OSErrors as TF's errors, naming `path`."""
    try:
        yield
    except OpError:
        raise
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None
    except FileExistsError:
        raise AlreadyExistsError(None, None, f"{path}; File exists") from None
    except IsADirectoryError:
        raise FailedPreconditionError(None, None, f"{path}; Is a directory") from None
    except NotADirectoryError:
        raise FailedPreconditionError(None, None, f"{path}; Not a directory") from None
    except PermissionError:
        raise PermissionDeniedError(None, None, f"{path}; Permission denied") from None
    except OSError as e:
        raise UnknownError(None, None, f"{path}; {e}") from None


class GFile:
    """A file (TF's `tf.io.gfile.GFile`): `GFile(name, mode="r")`, mode r, w, a, r+, w+, a+, with or
    without "b". Text modes read `str`, binary ones `bytes`; `write` takes either. The file is opened
    at the first read or write, so a missing file raises NotFoundError then, not here; `close()`
    closes it (reading again reopens it)."""

    def __init__(self, name, mode="r"):
        self._name = _as_path(name)
        if not isinstance(mode, str) or mode.replace("b", "") not in _MODES:
            raise InvalidArgumentError(None, None, f"mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+' (GFile "
                                       f"{self._name!r} got mode {mode!r})")
        self._mode = mode
        self._binary = "b" in mode
        self._f = None

    @property
    def name(self):
        return self._name

    @property
    def mode(self):
        return self._mode

    def _file(self):
        if self._f is None:
            fs, path = _fs(self._name)
            with _errors(self._name):
                base = self._mode.replace("b", "")  # the file is binary; text is decoded here
                self._f = fs.open(path, base[0] + "b" + base[1:])
        return self._f

    def _text(self, data):
        return data if self._binary else data.decode("utf-8")

    def size(self):
        """The file's length in bytes."""
        return stat(self._name).length

    def _check(self, reading):
        mode = self._mode.replace("b", "")
        if reading and mode in ("w", "a"):
            raise PermissionDeniedError(None, None, f"File isn't open for reading ({self._name}, mode {self._mode!r})")
        if not reading and mode == "r":
            raise PermissionDeniedError(None, None, f"File isn't open for writing ({self._name}, mode {self._mode!r})")

    def write(self, file_content):
        """Writes `str` (as UTF-8) or `bytes`."""
        self._check(reading=False)
        data = file_content.encode("utf-8") if isinstance(file_content, str) else bytes(file_content)
        with _errors(self._name):
            self._file().write(data)

    def read(self, n=-1):
        """`n` bytes (all with -1) from the current position: `str` in text modes."""
        self._check(reading=True)
        with _errors(self._name):
            return self._text(self._file().read(-1 if n is None else n))

    def readline(self):
        self._check(reading=True)
        with _errors(self._name):
            return self._text(self._file().readline())

    def readlines(self):
        return list(self)

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    next = __next__

    def tell(self):
        with _errors(self._name):
            return self._file().tell()

    def seek(self, offset=None, whence=0, position=None):
        """Moves to `offset` (TF's old `position=` too) relative to `whence` (0 start, 1 here, 2 end)."""
        if position is not None:
            if offset is not None:
                raise TypeError("seek() takes `offset` or `position`, not both")
            offset = position
        with _errors(self._name):
            self._file().seek(offset or 0, whence)

    def seekable(self):
        return True

    def flush(self):
        if self._f is not None:
            with _errors(self._name):
                self._f.flush()

    def close(self):
        if self._f is not None:
            try:
                with _errors(self._name):
                    self._f.close()
            finally:
                self._f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def exists(path):
    """True if a file or directory is at `path`."""
    fs, p = _fs(path)
    with _errors(path):
        return bool(fs.exists(p))


def isdir(path):
    """True if `path` is a directory."""
    fs, p = _fs(path)
    with _errors(path):
        return bool(fs.isdir(p))


def join(path, *paths):
    """Paths joined with the separator of their filesystem ("/" for URLs)."""
    path = _as_path(path)
    return posixpath.join(path, *map(_as_path, paths)) if _is_url(path) else os.path.join(path, *paths)


def makedirs(path):
    """Creates `path` and its missing parents; nothing if it is a directory already."""
    fs, p = _fs(path)
    if fs.exists(p) and not fs.isdir(p):
        raise FailedPreconditionError(None, None, f"{path} is not a directory")
    try:
        with _errors(path):
            fs.makedirs(p, exist_ok=True)
    except (AlreadyExistsError, NotFoundError) as e:  # a parent is a file
        raise FailedPreconditionError(None, None, f"{path}: a parent is not a directory ({e})") from None


def mkdir(path):
    """Creates the directory `path`, whose parent must exist (NotFoundError otherwise)."""
    fs, p = _fs(path)
    if fs.isdir(p):
        return
    parent = posixpath.dirname(p.rstrip("/")) if _is_url(_as_path(path)) else os.path.dirname(os.path.abspath(p))
    if parent and not fs.isdir(parent):
        raise NotFoundError(None, None, f"{path}; No such file or directory")
    with _errors(path):
        fs.mkdir(p, create_parents=False)


def listdir(path):
    """The names (not paths) of the entries of directory `path`, sorted; NotFoundError if it is not one."""
    fs, p = _fs(path)
    if not fs.isdir(p):
        raise NotFoundError(None, None, f"Could not find directory {path}")
    own = p.rstrip("/")
    with _errors(path):
        entries = fs.ls(p, detail=False)
    return sorted(posixpath.basename(e.rstrip("/")) for e in entries if e.rstrip("/") != own)


def glob(pattern):
    """The paths matching `pattern` (a str or a list of them), sorted; [] if none match."""
    if isinstance(pattern, (list, tuple)):
        return [m for p in pattern for m in glob(p)]
    pattern = _as_path(pattern)
    if not _is_url(pattern):
        return sorted(_glob.glob(pattern))
    fs, p = _fs(pattern)
    prefix = pattern[:pattern.index("://") + 3]
    rest = pattern[len(prefix):]
    with _errors(pattern):
        found = fs.glob(p)
    # give back the pattern's form: memory://x/a, not the filesystem's /x/a
    return sorted(prefix + (m[1:] if m.startswith("/") and not rest.startswith("/") else m) for m in found)


def remove(path):
    """Deletes the file `path` (NotFoundError if missing, FailedPreconditionError for a directory)."""
    fs, p = _fs(path)
    if not fs.exists(p):
        raise NotFoundError(None, None, f"{path}; No such file or directory")
    if fs.isdir(p):
        raise FailedPreconditionError(None, None, f"{path}; Is a directory")
    with _errors(path):
        fs.rm_file(p)


def rmtree(path):
    """Deletes `path`, a directory with everything below it or a file (NotFoundError if missing)."""
    fs, p = _fs(path)
    if not fs.exists(p):
        raise NotFoundError(None, None, f"{path} not found")
    with _errors(path):
        fs.rm(p, recursive=True)


def _check_target(src_fs, src, oldpath, dst_fs, dst, newpath, overwrite):
    if not src_fs.exists(src):
        raise NotFoundError(None, None, f"{oldpath}; No such file or directory")
    if not overwrite and dst_fs.exists(dst):
        raise AlreadyExistsError(None, None, f"file already exists: {newpath}")


def _stream(src_fs, src, dst_fs, dst, oldpath, newpath):
    with _errors(oldpath), src_fs.open(src, "rb") as fin:
        with _errors(newpath), dst_fs.open(dst, "wb") as fout:
            while block := fin.read(_BLOCK):
                fout.write(block)


def copy(oldpath, newpath, overwrite=False):
    """Copies the file `oldpath` to `newpath` (across filesystems too); AlreadyExistsError if
    `newpath` exists and `overwrite` is False."""
    src_fs, src = _fs(oldpath)
    dst_fs, dst = _fs(newpath)
    _check_target(src_fs, src, oldpath, dst_fs, dst, newpath, overwrite)
    if src_fs.isdir(src):
        raise FailedPreconditionError(None, None, f"{oldpath}; Is a directory (copy takes files)")
    if src_fs is dst_fs and not _is_url(_as_path(oldpath)):
        import shutil

        with _errors(newpath):
            shutil.copyfile(src, dst)
        return
    _stream(src_fs, src, dst_fs, dst, oldpath, newpath)


def rename(oldname, newname, overwrite=False):
    """Moves `oldname` (a file, or a directory within one filesystem) to `newname`; AlreadyExistsError
    if `newname` exists and `overwrite` is False."""
    src_fs, src = _fs(oldname)
    dst_fs, dst = _fs(newname)
    _check_target(src_fs, src, oldname, dst_fs, dst, newname, overwrite)
    if src_fs is dst_fs:
        with _errors(newname):
            if not _is_url(_as_path(oldname)):
                os.replace(src, dst)
            else:
                if overwrite and dst_fs.exists(dst):
                    dst_fs.rm(dst, recursive=True)
                src_fs.mv(src, dst, recursive=True)
        return
    if src_fs.isdir(src):
        raise UnimplementedError(None, None, f"rename of directory {oldname} to another filesystem ({newname})")
    _stream(src_fs, src, dst_fs, dst, oldname, newname)
    with _errors(oldname):
        src_fs.rm_file(src)


def _mtime_nsec(info):
    t = info.get("mtime", info.get("created", info.get("LastModified")))
    if t is None:
        return 0
    if hasattr(t, "timestamp"):
        t = t.timestamp()
    return int(float(t) * 1e9)


def stat(path):
    """FileStatistics(length, mtime_nsec, is_directory) of `path` (NotFoundError if missing)."""
    fs, p = _fs(path)
    with _errors(path):
        info = fs.info(p)
    return FileStatistics(length=int(info.get("size") or 0), mtime_nsec=_mtime_nsec(info),
                          is_directory=info.get("type") == "directory")


def walk(top, topdown=True, onerror=None):
    """(dirname, subdirectory names, file names) for `top` and each directory below it, parents first
    (`topdown=False`: children first); nothing if `top` is not a directory."""
    try:
        names = listdir(top)
    except NotFoundError as e:
        if onerror is not None:
            onerror(e)
        return
    subdirs, files = [], []
    for name in names:
        (subdirs if isdir(join(top, name)) else files).append(name)
    here = (_as_path(top), subdirs, files)
    if topdown:
        yield here
    for name in subdirs:
        yield from walk(join(top, name), topdown, onerror)
    if not topdown:
        yield here


def get_registered_schemes():
    """The URL schemes paths may use: fsspec's protocols, and "" / "file" for local paths."""
    import fsspec

    return sorted({"", "file", *fsspec.available_protocols()})


from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute("dflow.io.gfile")  # a TF1 name dflow lacks says so
