"""`tf.gfile`: TF1's names for the file functions of `tf.io.gfile` (io_gfile.py)."""

from __future__ import annotations

from . import io_gfile
from .io_gfile import GFile

__all__ = ["Copy", "DeleteRecursively", "Exists", "FastGFile", "GFile", "Glob", "IsDirectory", "ListDirectory",
           "MakeDirs", "MkDir", "Open", "Remove", "Rename", "Stat", "Walk"]

Open = GFile


class FastGFile(GFile):
    """GFile (TF1 deprecated it in favour of GFile; it is the same file object)."""


Copy = io_gfile.copy
DeleteRecursively = io_gfile.rmtree
Exists = io_gfile.exists
Glob = io_gfile.glob
IsDirectory = io_gfile.isdir
ListDirectory = io_gfile.listdir
MakeDirs = io_gfile.makedirs
MkDir = io_gfile.mkdir
Remove = io_gfile.remove
Rename = io_gfile.rename
Stat = io_gfile.stat


def Walk(top, in_order=True):  # noqa: N802 - TF1 name
    """(dirname, subdirectory names, file names) for `top` and below; `in_order=False`: children first."""
    return io_gfile.walk(top, topdown=in_order)


from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute("dflow.gfile")  # a TF1 name dflow lacks says so
