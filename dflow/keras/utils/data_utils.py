"""Keras's data helpers: `Sequence` (batches by index, what `fit` accepts as a generator) and
`get_file` (a file from the Keras cache, fetched from its origin only when missing)."""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile

__all__ = ["Sequence", "get_file", "validate_file"]


class Sequence:
    """Base class of a dataset as batches: `__getitem__(index)` gives batch `index`, `__len__` the
    number of batches; `on_epoch_end` runs after each epoch (e.g. to shuffle)."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def on_epoch_end(self):
        pass

    def __iter__(self):
        for item in (self[i] for i in range(len(self))):
            yield item


def _hash_file(fpath, algorithm="sha256", chunk_size=65535):
    hasher = hashlib.sha256() if algorithm in ("sha256", "auto") else hashlib.md5()
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def validate_file(fpath, file_hash, algorithm="auto", chunk_size=65535):
    """True when the file's sha256 (64 hex digits, or 'sha256') or md5 is `file_hash`."""
    if algorithm == "sha256" or (algorithm == "auto" and len(file_hash) == 64):
        hasher = "sha256"
    else:
        hasher = "md5"
    return str(_hash_file(fpath, hasher, chunk_size)) == str(file_hash)


def _remove_new_entries(path, existed):
    """Deletes the entries of folder `path` not in `existed` (the whole of `path` when it did not
    exist before: `existed` None)."""
    if existed is None:
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        return
    for name in set(os.listdir(path)) - existed:
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full, ignore_errors=True)
        else:
            os.remove(full)


def _extract_archive(file_path, path=".", archive_format="auto"):
    if archive_format is None:
        return False
    formats = ["tar", "zip"] if archive_format == "auto" else \
        [archive_format] if isinstance(archive_format, str) else list(archive_format)
    for kind in formats:
        is_kind, opener = (tarfile.is_tarfile, tarfile.open) if kind == "tar" else (zipfile.is_zipfile,
                                                                                  zipfile.ZipFile)
        if is_kind(file_path):
            # a failed extraction removes what it made, never what was there: Keras's own removed
            # the whole `path` (the datasets folder with every earlier download in it)
            existed = set(os.listdir(path)) if os.path.isdir(path) else None
            with opener(file_path) as archive:
                try:
                    archive.extractall(path)
                except (tarfile.TarError, RuntimeError, KeyboardInterrupt):
                    _remove_new_entries(path, existed)
                    raise
            return True
    return False


def get_file(fname, origin, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None):
    """The path of `fname` under `cache_dir/cache_subdir` (default ~/.keras/datasets), downloaded
    from `origin` when missing or when its hash differs; Exception ('URL fetch failure on ...')
    when the download fails, e.g. offline. The download lands under a temporary name first."""
    cache_dir = os.path.expanduser(cache_dir or os.path.join("~", ".keras"))
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    datadir = os.path.join(cache_dir, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    if untar:
        untar_fpath = os.path.join(datadir, fname)
        fpath = untar_fpath + ".tar.gz"
    else:
        fpath = os.path.join(datadir, fname)
    download = not os.path.exists(fpath)
    if not download and file_hash is not None and not validate_file(fpath, file_hash, algorithm=hash_algorithm):
        download = True  # Keras re-downloads a file whose hash differs
    if download:
        error_msg = "URL fetch failure on {}: {} -- {}"
        fd, tmp = tempfile.mkstemp(dir=datadir, prefix=f".{os.path.basename(fpath)}.")
        os.close(fd)
        try:
            try:
                urllib.request.urlretrieve(origin, tmp)
            except urllib.error.HTTPError as e:
                raise Exception(error_msg.format(origin, e.code, e.msg)) from None
            except (urllib.error.URLError, OSError, ValueError) as e:
                reason = getattr(e, "reason", e)
                raise Exception(error_msg.format(origin, getattr(e, "errno", None), reason)) from None
            if file_hash is not None and not validate_file(tmp, file_hash, algorithm=hash_algorithm):
                raise ValueError(f"The file downloaded from {origin} has a different hash than {file_hash}: the "
                                 "remote file may have changed or the download was corrupted.")
            os.replace(tmp, fpath)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    if untar:
        if not os.path.exists(untar_fpath):
            _extract_archive(fpath, datadir, archive_format="tar")
        return untar_fpath
    if extract:
        _extract_archive(fpath, datadir, archive_format)
    return fpath
