"""`dflow.io.cleanup`: removes what killed dflow processes left on disk.

A run or a save that is killed (SIGKILL, a lost node) cannot remove its temporaries: a Zarr output
written under `.<name>.dflow-tmp-<pid>@<host>-<hex>`, a checkpoint being saved, an old array moved
aside, a session's `dflow-variables-<pid>@<host>-<hex>` scratch directory. Their names say which
process owns them (dflow/storage/files.py). The next run that writes beside them removes them
(write_zarr sweeps its target's directory, Saver.save its checkpoint directory, a session its
scratch directory's parent); `cleanup` does it for a whole tree on demand.
"""

from __future__ import annotations

import os
import tempfile

from ..errors import NotFoundError
from ..storage import files

__all__ = ["cleanup"]


def cleanup(path=None):
    """Removes the temporaries of dead dflow processes under the directory `path` (and below it,
    except inside Zarr arrays); with no path, the sessions' scratch directories in the system's
    temporary directory. Returns the paths removed.

    Only temporaries whose owner (the pid and host in their name) is a process of this host that
    has ended are removed: a running process's, and another host's, are kept. An old array a killed
    overwrite had moved aside (on file systems without an atomic exchange) is put back under its
    name instead. NotFoundError if `path` is not a directory."""
    if path is None:
        return files.sweep(tempfile.gettempdir())
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise NotFoundError(None, None, f"cleanup: {path!r} is not a directory")
    return files.sweep_tree(path)
