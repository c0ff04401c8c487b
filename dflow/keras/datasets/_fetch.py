"""The Keras cache lookup every dataset goes through: `utils.get_file` with TF 1.15's file names
and hashes; offline (the download fails) an UnavailableError names the URL and where to put the
file by hand."""

from __future__ import annotations

import os

from ... import errors
from ..utils.data_utils import get_file

ORIGIN_FOLDER = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def fetch(fname, origin, file_hash=None, cache_subdir="datasets", untar=False):
    """The cached path of `fname` (downloaded from `origin` when missing), as get_file."""
    try:
        return get_file(fname, origin=origin, file_hash=file_hash, cache_subdir=cache_subdir, untar=untar)
    except Exception as e:  # get_file's 'URL fetch failure on ...'
        if not str(e).startswith("URL fetch failure"):
            raise
        where = os.path.join(os.path.expanduser(os.path.join("~", ".keras")), cache_subdir, fname)
        if untar:
            where += ".tar.gz"
        raise errors.UnavailableError(
            None, None, f"Keras dataset file {fname!r} is not in the cache and could not be downloaded from "
                        f"{origin} ({e}); place the file at {where}") from None
