"""Files published safely: owned temporaries, one atomic swap, several outputs published together,
and the temporaries of dead processes swept.

- Owned temporaries. Every temporary dflow makes beside a user's files (a Zarr output being
  written, a checkpoint being saved, an old array moved aside) or for a session (its variables'
  scratch directory) is named by `temp_path(final, kind)`: `.<leaf>.dflow-<kind>-<pid>@<host>-<hex>`
  beside `final`. The name says which process owns it, so `sweep` removes exactly the temporaries
  of processes that died (killed runs), never a live process's, nor one of another host (whose
  processes it cannot see).
- One atomic swap. `swap_in(tmp, final)` puts the directory `tmp` under the name `final`: a rename
  when nothing is there, else one `renameat2(RENAME_EXCHANGE)` (Linux 3.15+; ext4, xfs, btrfs,
  tmpfs...): the old directory lands at the temporary's name in the same step, so at every moment
  `final` names the old or the new directory. Where the kernel or the file system cannot exchange
  (NFS, other systems), the old directory is first renamed aside under an owned `old` name, and
  `recover(final)` (called by `sweep` and by `read_zarr`) renames it back if its process died
  before the new one was in place.
- Publishing together. `publish(items)` puts the outputs of one run in place: every item is
  prepared first (its checks may refuse: then nothing has moved), then all are swapped; a failure
  while swapping swaps the done ones back; the old directories are removed only once all are in.
  A journal lets a later process finish the publication of one killed between two swaps.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import shutil
import socket
import threading
import uuid

from .. import errors

__all__ = ["temp_path", "owner_tag", "owner_alive", "swap_in", "recover", "sweep", "sweep_tree", "discard",
           "Publication", "publish", "node_kind", "link_in", "link_data", "os_error",
           "ensure_dir"]

_HOST = re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname() or "localhost")[:64]
# `<leaf>.dflow-<kind>-<pid>@<host>-<hex>`; a temporary beside a file is hidden (leaf starts with ".")
_OWNED = re.compile(r"^(?:(?P<leaf>.+)\.)?dflow-(?P<kind>[a-z]+)-(?P<pid>\d+)@(?P<host>[A-Za-z0-9_-]+)-[0-9a-f]+$")


def owner_tag():
    """`<pid>@<host>` of this process (after a fork, the child's own pid)."""
    return f"{os.getpid()}@{_HOST}"


def temp_path(final, kind="tmp"):
    """A fresh owned name beside `final` (a path): `.<leaf>.dflow-<kind>-<pid>@<host>-<hex>`."""
    parent, leaf = os.path.split(os.fspath(final).rstrip("/\\") or ".")
    return os.path.join(parent, f".{leaf}.dflow-{kind}-{owner_tag()}-{uuid.uuid4().hex[:16]}")


def parse_owned(name):
    """(final leaf or None, kind, pid, host) of an owned temporary's base name, or None."""
    m = _OWNED.match(name)
    if m is None:
        return None
    leaf = m.group("leaf")
    if leaf is not None and leaf.startswith("."):
        leaf = leaf[1:]
    return leaf, m.group("kind"), int(m.group("pid")), m.group("host")


def owner_alive(pid, host):
    """False only when the owner is known dead: a process of this host that no longer runs (or is
    a zombie). Another host's processes cannot be seen: alive, so never swept from here."""
    if host != _HOST or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


# ---- one atomic swap ---------------------------------------------------------------------------

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_renameat2 = None


def _libc_renameat2():
    global _renameat2
    if _renameat2 is None:
        fn = False
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fn = getattr(libc, "renameat2", False)
            if fn:
                fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
                fn.restype = ctypes.c_int
        except (OSError, AttributeError):
            fn = False
        _renameat2 = fn
    return _renameat2


def exchange(a, b):
    """Swaps the directory entries `a` and `b` in one step; False where the system cannot."""
    if os.environ.get("DFLOW_NO_RENAME_EXCHANGE"):  # tests of the fallback path
        return False
    fn = _libc_renameat2()
    if not fn:
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), a, None, b)


def _pause(point):
    """A debugging hook for kill tests: DFLOW_PAUSE_AT=<point>:<seconds> sleeps here."""
    spec = os.environ.get("DFLOW_PAUSE_AT")
    if spec and spec.rpartition(":")[0] == point:
        import sys
        import time

        print(f"dflow-paused {point}", file=sys.stderr, flush=True)
        time.sleep(float(spec.rpartition(":")[2]))


def swap_in(tmp, final):
    """Puts the directory `tmp` under `final`; returns where the old `final` now is (to remove
    once the caller is done), or None if there was none. `final` names the old or the new entry
    at every moment (see the module doc for systems without an exchange)."""
    if not os.path.lexists(final):
        os.rename(tmp, final)
        return None
    _pause("swap")
    if exchange(tmp, final):
        return tmp
    old = temp_path(final, "old")
    os.rename(final, old)
    _pause("swap-fallback")
    try:
        os.rename(tmp, final)
    except BaseException:
        os.rename(old, final)  # the old entry back under its name before the error goes on
        raise
    return old


def _swap_back(final, tmp, old):
    """Undoes `swap_in(tmp, final)` that returned `old`: the new entry back at `tmp`."""
    if old is None:
        os.rename(final, tmp)
    elif old == tmp:
        if not exchange(tmp, final):
            raise OSError(errno.EIO, "cannot exchange back", final)
    else:
        os.rename(final, tmp)
        os.rename(old, final)


def recover(final):
    """Finishes the publications of dead processes in `final`'s directory (see `publish`); then,
    if nothing is at `final` but a dead process moved the old entry aside (a swap without an
    exchange, killed half way), puts it back. True if either changed `final`."""
    final = os.fspath(final)
    parent, leaf = os.path.split(final.rstrip("/\\"))
    try:
        names = os.listdir(parent or ".")
    except OSError:
        return False
    if _finish_journals(parent or ".", names):
        if os.path.lexists(final):
            return True
        names = os.listdir(parent or ".")
    if os.path.lexists(final):
        return False
    for name in sorted(names):
        info = parse_owned(name)
        if info and info[0] == leaf and info[1] == "old" and not owner_alive(info[2], info[3]):
            try:
                os.rename(os.path.join(parent, name), final)
                return True
            except OSError:
                return False
    return False


def remove(path):
    """Removes a file, link or directory tree; quietly if it is gone."""
    if os.path.islink(path) or os.path.isfile(path):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    else:
        shutil.rmtree(path, ignore_errors=True)


# ---- publishing through a symbolic link (checkpoints) ----------------------------------------


def link_data(final):
    """The data directory the link `final` names when it is one dflow made (a sibling
    `<leaf>.dflow-...`), else None."""
    if not os.path.islink(final):
        return None
    target = os.readlink(final)
    leaf = os.path.basename(os.fspath(final).rstrip("/\\"))
    if os.path.dirname(target) or not target.startswith(leaf + ".dflow-"):
        return None
    return os.path.join(os.path.dirname(os.fspath(final)), target)


def link_in(src, final):
    """Publishes the directory `src` at `final` as a symbolic link to a data directory beside it
    (`<leaf>.dflow-data-<pid>@<host>-<hex>`): the link is replaced in one `os.replace` (a directory
    left at `final` by an earlier scheme is exchanged with the link in one step), so `final` names
    the old or the new data at every moment; the old data directory is removed afterwards."""
    parent, leaf = os.path.split(os.fspath(final).rstrip("/\\"))
    data = os.path.join(parent, f"{leaf}.dflow-data-{owner_tag()}-{uuid.uuid4().hex[:16]}")
    os.rename(src, data)
    link = temp_path(final, "link")
    os.symlink(os.path.basename(data), link)
    try:
        if os.path.islink(final) or not os.path.lexists(final):
            old = link_data(final)
            os.replace(link, final)
        else:
            old = swap_in(link, final)
    except BaseException:
        remove(link)
        raise
    if old is not None:
        remove(old)


# ---- sweeping the temporaries of dead processes ----------------------------------------------


def sweep(directory, keep=()):
    """Removes the owned temporaries directly in `directory` whose process is dead (an old entry
    moved aside is first put back if its final name is empty); returns the paths removed.
    A live process's temporaries and another host's are never touched; neither are paths in `keep`."""
    directory = os.fspath(directory)
    try:
        names = os.listdir(directory)
        if _finish_journals(directory, names):  # a dead process's publication first: its temporaries finish it
            names = os.listdir(directory)
    except OSError:
        return []
    removed = []
    for name in sorted(names):
        info = parse_owned(name)
        if info is None or owner_alive(info[2], info[3]):
            continue
        path = os.path.join(directory, name)
        if path in keep:
            continue
        leaf, kind = info[0], info[1]
        if kind == "old" and leaf and recover(os.path.join(directory, leaf)):
            continue
        if kind == "data" and leaf and _linked(directory, name):
            continue  # a checkpoint's data directory, named by its link: not a temporary any more
        if kind == "data" and leaf and not os.path.lexists(os.path.join(directory, leaf)):
            # published data whose link is gone: a copy that dropped symbolic links (rsync -r, many
            # object-store syncs) or a kill between the rename and the link. It is someone's whole
            # checkpoint, never a leftover: linked again, never deleted.
            _relink(directory, leaf)
            continue
        remove(path)
        removed.append(path)
    return removed


def orphan_data(final):
    """The data directories published for `final` (`<leaf>.dflow-data-...` beside it) that no
    link names, newest first."""
    parent, leaf = os.path.split(os.fspath(final).rstrip("/\\"))
    parent = parent or "."
    try:
        names = os.listdir(parent)
    except OSError:
        return []
    found = []
    for name in names:
        info = parse_owned(name)
        if info and info[1] == "data" and info[0] == leaf and not _linked(parent, name):
            path = os.path.join(parent, name)
            try:
                found.append((os.path.getmtime(path), path))
            except OSError:
                pass
    return [p for _, p in sorted(found, reverse=True)]


def published(final):
    """`final` when something is there, else its newest unlinked data directory (a copied
    checkpoint whose link was dropped), else `final`."""
    if os.path.lexists(final):
        return final
    orphans = orphan_data(final)
    return orphans[0] if orphans else final


def _relink(directory, leaf):
    """Links `leaf` to its newest unlinked data directory again (best effort: a read-only
    directory keeps its data, unlinked)."""
    final = os.path.join(directory, leaf)
    orphans = orphan_data(final)
    if orphans and not os.path.lexists(final):
        try:
            os.symlink(os.path.basename(orphans[0]), final)
        except OSError:
            pass


def _linked(directory, name):
    for entry in os.scandir(directory):
        if entry.is_symlink():
            try:
                if os.path.basename(os.readlink(entry.path)) == name:
                    return True
            except OSError:
                pass
    return False


def sweep_tree(root):
    """`sweep` in `root` and every directory below it, except inside Zarr arrays (chunk files);
    returns the paths removed."""
    root = os.fspath(root)
    removed = sweep(root)
    for dirpath, dirnames, _ in os.walk(root):
        kept = []
        for d in dirnames:
            p = os.path.join(dirpath, d)
            if os.path.islink(p) or parse_owned(d) is not None or node_kind(p) == "array":
                continue
            removed.extend(sweep(p))
            kept.append(d)
        dirnames[:] = kept
    return removed


# ---- errors -------------------------------------------------------------------------------------


def os_error(e, what):
    """The dflow error for the OSError `e` met while `what` (a phrase naming the path), never bare."""
    if isinstance(e, PermissionError):
        cls = errors.PermissionDeniedError
    elif isinstance(e, FileNotFoundError):
        cls = errors.NotFoundError
    elif isinstance(e, (FileExistsError, NotADirectoryError, IsADirectoryError)) or e.errno == errno.ENOTEMPTY:
        cls = errors.FailedPreconditionError
    elif e.errno in (errno.ENOSPC, errno.EDQUOT):
        cls = errors.ResourceExhaustedError
    else:
        cls = errors.UnknownError
    return cls(None, None, f"{what}: {type(e).__name__}: {e.strerror or e}")


def write_file(path, data, what):
    """Writes `data` (bytes, or str as UTF-8) to `path` through an owned temporary file, synced and
    then renamed over it: a reader sees the old file or the whole new one, never a part. An
    OSError is `os_error(e, what)` and leaves no temporary behind."""
    tmp = temp_path(path, "tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        remove(tmp)
        if isinstance(e, OSError):
            raise os_error(e, what) from None
        raise


def ensure_dir(path, what):
    """`os.makedirs(path, exist_ok=True)`, a dflow error naming `what` where a file is in the way
    (FailedPreconditionError) or permission is missing (PermissionDeniedError)."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        blocker = _file_in_the_way(path)
        if blocker is not None and isinstance(e, (FileExistsError, NotADirectoryError)):
            raise errors.FailedPreconditionError(
                None, None, f"{what}: cannot create the directory {path!r}: {blocker!r} is a file, not a "
                "directory. Nothing was written.") from None
        raise os_error(e, f"{what}: cannot create the directory {path!r}") from None


def _file_in_the_way(path):
    """The nearest of `path` and its parents that exists and is not a directory, or None."""
    path = os.path.abspath(path)
    while True:
        if os.path.lexists(path):
            return None if os.path.isdir(path) else path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


# ---- what is at a path ---------------------------------------------------------------------------


def damaged_zarr_metadata(path):
    """A DataLossError naming the Zarr metadata file at `path` (zarr.json, .zarray, .zgroup,
    .zattrs) that is there but not JSON, or None: a damaged array is data loss, not a missing one."""
    for name in ("zarr.json", ".zarray", ".zgroup", ".zattrs"):
        meta = os.path.join(os.fspath(path), name)
        try:
            with open(meta, "rb") as f:
                json.load(f)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
            continue
        except (ValueError, OSError) as e:  # JSONDecodeError, bytes that are not UTF-8, a read failure
            return errors.DataLossError(None, None, f"The Zarr metadata file {meta!r} is not valid JSON ({e}): "
                                        "the file was damaged (truncated or edited); what it describes cannot be read.")
    return None


def node_kind(path):
    """What is at `path`: "missing", "empty" (an empty directory), "array" or "group" (a Zarr v3
    or v2 node), "link" (a symbolic link), "file", or "directory" (anything else)."""
    path = os.fspath(path)
    if os.path.islink(path):
        return "link"
    if not os.path.exists(path):
        return "missing"
    if not os.path.isdir(path):
        return "file"
    try:
        names = set(os.listdir(path))
    except OSError:
        return "directory"
    if not names:
        return "empty"
    if ".zarray" in names:
        return "array"
    if ".zgroup" in names:
        return "group"
    if "zarr.json" in names:
        import json

        try:
            with open(os.path.join(path, "zarr.json"), "rb") as f:
                node = json.load(f).get("node_type")
        except (OSError, ValueError, AttributeError):
            return "directory"
        if node in ("array", "group"):
            return node
    return "directory"


# ---- publishing the outputs of one run together ---------------------------------------------------

_HOLDS_OLD = set()  # temporaries that hold an old entry after a swap that could not be undone
_LOCK = threading.Lock()


def discard(tmp):
    """Removes a run's temporary (a failed run), unless a failed swap left an old entry there."""
    with _LOCK:
        if tmp in _HOLDS_OLD:
            return
    remove(tmp)


class Publication:
    """One output of a run: the written directory `tmp` goes under `final`. `prepare()` runs
    before anything moves: it may refuse (raise), or finish the temporary (mark it complete).
    An output that cannot be swapped (a Zarr array in a store object, written in place) has no
    `tmp` but a `commit()`, run after every swap (it cannot be undone)."""

    def __init__(self, tmp, final, prepare=None, commit=None):
        self.tmp = tmp
        self.final = final
        self.prepare = prepare
        self.commit = commit
        self.old = None


def publish(items):
    """Puts every item in place, all or none (see the module doc). A refusal or a failure raises
    with every name as it was; the temporaries are then the caller's to discard.

    A kill (not an error) between the swaps of several outputs: before the first swap a journal
    (`.publish.dflow-journal-<pid>@<host>-<hex>`, one copy in each output's directory) lists every
    (temporary, name, inode of the new directory); the next `sweep`, `recover` (read_zarr) or
    `cleanup` in any of those directories finds the dead process's journal and finishes the
    publication: each new directory still at its temporary (same inode) is swapped in, each old
    one left at a temporary is removed. So the outputs end up all new, never some new some old."""
    items = list(items)
    for p in items:
        if p.prepare is not None:
            p.prepare()
    swapping = [p for p in items if p.tmp is not None]
    journals = _write_journals([(p.tmp, p.final) for p in swapping]) if len(swapping) > 1 else []
    done = []
    try:
        for p in swapping:
            p.old = swap_in(p.tmp, p.final)
            done.append(p)
            _pause("publish")
        for p in items:
            if p.tmp is None and p.commit is not None:
                p.commit()
    except BaseException as e:
        for p in reversed(done):
            try:
                _swap_back(p.final, p.tmp, p.old)
            except OSError:
                if p.old == p.tmp:
                    with _LOCK:
                        _HOLDS_OLD.add(p.tmp)
        for j in journals:  # rolled back: nothing to finish
            remove(j)
        if isinstance(e, OSError):
            names = ", ".join(repr(p.final) for p in items)
            raise os_error(e, f"Publishing {names} failed; all are as they were") from None
        raise
    for p in done:
        if p.old is not None:
            remove(p.old)
    for j in journals:
        remove(j)


def _write_journals(pairs):
    """One journal copy per directory holding an output, written before the first swap."""
    import json

    dirs = sorted({os.path.dirname(final) for _, final in pairs})
    paths = [temp_path(os.path.join(d, "publish"), "journal") for d in dirs]
    doc = json.dumps({"items": [[tmp, final, os.lstat(tmp).st_ino] for tmp, final in pairs], "copies": paths})
    written = []
    try:
        for path in paths:
            written.append(path)
            with open(path, "w") as f:
                f.write(doc)
                f.flush()
                os.fsync(f.fileno())
    except BaseException:
        for path in written:
            remove(path)
        raise
    return paths


def _finish_journals(directory, names):
    """Finishes the publications whose journal in `directory` belongs to a dead process; True if
    there was any."""
    found = False
    for name in sorted(names):
        info = parse_owned(name)
        if info is None or info[1] != "journal" or owner_alive(info[2], info[3]):
            continue
        found = True
        _finish_journal(os.path.join(directory, name))
    return found


def _finish_journal(path):
    import json

    try:
        with open(path) as f:
            doc = json.load(f)
        items, copies = doc["items"], list(doc["copies"])
    except (OSError, ValueError, KeyError, TypeError):  # cut short while written: no swap had begun
        remove(path)
        return
    for tmp, final, ino in items:
        try:
            st = os.lstat(tmp)
        except OSError:
            continue  # swapped in and its old entry removed, or never there
        if st.st_ino == ino:  # the new directory, not yet in place
            old = swap_in(tmp, final)
            if old is not None:
                remove(old)
        else:  # the old directory, swapped out
            remove(tmp)
    for c in copies + [path]:
        remove(c)
