"""A session's committed variable values: where each lives (a read-only numpy array, per-chunk
futures on a cluster, or a Zarr array on local disk) and how it is read, replaced and loaded.

`Saver`, `Variable.load` and `graph_util` use this public interface (`Session.variables`); plans
see it only through their RunContext.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from ..errors import FailedPreconditionError, UnavailableError
from ..storage import files
from ..storage.patch import RowPatch, repeat_checks
from ..storage.values import RemoteValue, StoredValue, block_indices, block_slices


class VariableStore:
    def __init__(self, policy):
        self.policy = policy  # storage.layout.StoragePolicy: which variables live on disk
        self.values = {}  # variable op name -> committed value
        self._dir = None  # scratch directory of stored variables and spills, made on first use
        # runs on several threads: a run's commits land together, a run reads one consistent view,
        # and a StoredValue a run still reads is deleted only when that run ends
        self._lock = threading.RLock()
        self._pins = {}  # id(StoredValue) -> runs reading it
        self._retired = {}  # id(StoredValue) -> one replaced while runs read it

    @property
    def directory(self):
        """The scratch directory of values on disk (None until the first one is made)."""
        return self._dir

    def __contains__(self, name):
        return name in self.values

    def get(self, name):
        try:
            return self.values[name]
        except KeyError:
            raise FailedPreconditionError(None, None, f"Attempting to use uninitialized value {name!r}") from None

    def host_value(self, name):
        """A variable's committed value as a numpy array (gathered from a cluster, or read from disk)."""
        value = self.get(name)
        if isinstance(value, RemoteValue):
            return remote_to_host(name, value)
        return value.to_host() if isinstance(value, StoredValue) else value

    def saved_value(self, name):
        """A variable's committed value for a Saver: numpy, or the StoredValue itself (streamed)."""
        value = self.get(name)
        return remote_to_host(name, value) if isinstance(value, RemoteValue) else value

    def stores(self, shape, dtype):
        """Whether a variable of this shape and dtype is held on disk between runs."""
        return self.policy.stores(shape, dtype)

    def new_stored(self, name, shape, dtype, chunk_shape=None):
        """An empty StoredValue in the scratch directory, laid out as plans read it by default."""
        if chunk_shape is None:
            chunk_shape = self.policy.chunk_shape(shape, dtype)
        return StoredValue(self._path(name), shape, dtype, chunk_shape)

    def load(self, name, value, owned=False):
        """Sets a variable's committed value directly (`Variable.load`); a value as large as the
        session stores on disk is written there chunk by chunk. An `owned` numpy array (fresh, held
        by no one else: a restored checkpoint's) is kept as it is, read-only, not copied."""
        if not isinstance(value, StoredValue):
            value = np.asarray(value)
            if owned and type(value) is np.ndarray and value.base is None and not self.stores(value.shape, value.dtype):
                value.setflags(write=False)
            elif self.stores(value.shape, value.dtype):
                stored = self.new_stored(name, value.shape, value.dtype)
                for idx, slc in zip(block_indices(stored.chunks), block_slices(stored.chunks)):
                    stored.cio.write(idx, value[slc])
                value = stored
            else:
                value = committed(value)
        self.set(name, value)

    def commit(self, name, value):
        """A run's new value of a variable, as the session keeps it (a RemoteValue as it is: held
        by the cluster as data, its lineage cut when it was computed). A RowPatch of the committed
        array is applied to it in place when no run reads that array; otherwise materialized."""
        if isinstance(value, RowPatch):
            base = self.values.get(name)
            if value.base is base and isinstance(base, np.ndarray) and base.flags.owndata and \
                    not self._pins.get(id(base)):
                value.apply_in_place()
                return
            value = value.materialize()
            value.setflags(write=False)
            self.set(name, value)
            return
        if not isinstance(value, (RemoteValue, StoredValue)):
            value = committed(value)
        self.set(name, value)

    def commit_all(self, values, fed_bytes=0):
        """A run's new values, committed together: a concurrent run's snapshot sees all or none.
        (`fed_bytes` is unused: cluster values have their lineage cut when computed.)"""
        with self._lock, repeat_checks():
            for name, value in values.items():
                self.commit(name, value)

    def snapshot(self, names):
        """The committed values of `names` (those initialized) as one consistent view; a StoredValue
        among them stays on disk, even if a concurrent run replaces it, until `release`."""
        with self._lock:
            snap = {}
            for name in names:
                value = self.values.get(name)
                if value is None:
                    continue
                snap[name] = value
                # pinned while the run reads it: a StoredValue is not deleted, an array not
                # patched in place (`commit`), under it
                self._pins[id(value)] = self._pins.get(id(value), 0) + 1
            return snap

    def release(self, snap):
        """Ends a run's `snapshot`: a StoredValue replaced meanwhile is deleted by its last reader."""
        with self._lock:
            for value in snap.values():
                left = self._pins.pop(id(value)) - 1
                if left:
                    self._pins[id(value)] = left
                elif isinstance(value, StoredValue):
                    old = self._retired.pop(id(value), None)
                    if old is not None:
                        old.discard()

    def set(self, name, value):
        with self._lock:
            old = self.values.get(name)
            self.values[name] = value
            if old is not value:
                if isinstance(old, StoredValue) and id(old) in self._pins:
                    self._retired[id(old)] = old  # a run still reads it
                else:
                    _discard(old)

    def _path(self, name):
        import tempfile
        import uuid

        if self._dir is None:
            # named by this process (storage/files.py), so a later session sweeps it once a kill
            # left it behind, and never a live session's
            base = tempfile.gettempdir()
            files.sweep(base)
            self._dir = os.path.join(base, f"dflow-variables-{files.owner_tag()}-{uuid.uuid4().hex[:16]}")
            os.mkdir(self._dir, 0o700)
        return os.path.join(self._dir, f"{name.replace('/', '.')}-{uuid.uuid4().hex}.zarr")

    def close(self):
        """Drops every value: a cluster's are released there now, a disk's deleted."""
        for value in self.values.values():
            _discard(value)
        self.values.clear()
        if self._dir is not None:
            import shutil

            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


def unshared(values, snap):
    """`values` (a run's fetched values) with any array that shares memory with a variable's
    committed array of `snap` copied: a later row update applies to that array in place, and a
    fetched value must not change under its holder (TF1 returns copies)."""
    held = {id(v) for v in snap.values() if isinstance(v, np.ndarray)}
    if not held:
        return values
    out = []
    for v in values:
        b = v
        while isinstance(b, np.ndarray):
            if id(b) in held:
                v = np.array(v, copy=True)
                break
            b = b.base
        out.append(v)
    return out


def _discard(value):
    if isinstance(value, StoredValue):
        value.discard()
    elif isinstance(value, RemoteValue):
        value.release()


def remote_to_host(name, value):
    """A cluster-held variable value on the host; lost without a host copy, an UnavailableError
    naming the variable and how to recover (never a bare FutureCancelledError)."""
    if value.host is None and not value.available():
        raise UnavailableError(None, None, f"The value of variable {name!r} was lost with a worker of the cluster "
                               "that held it (the session keeps no copy of values that large). Restore it "
                               "from a checkpoint (Saver.restore) or run its initializer again.")
    return value.to_host()


def to_host(v):
    """A fetched value as TF1 returns it: numpy arrays, numpy scalars for 0-d, None for ops."""
    if v is None:
        return None
    if isinstance(v, bytes):
        return bytes(v)  # a scalar string: TF1 returns bytes
    if isinstance(v, np.ndarray):
        if v.dtype.kind in "SU":  # strings are returned as object arrays of bytes (TF1)
            v = np.vectorize(lambda s: s.encode() if isinstance(s, str) else bytes(s), otypes=[object])(v)
        return v[()] if v.ndim == 0 else v
    if isinstance(v, np.generic):
        return v
    if hasattr(v, "get") and type(v).__module__.startswith("cupy"):
        return to_host(v.get())
    return to_host(np.asarray(v))


def committed(v):
    """A variable's new value as the session keeps it: an array of its own, read-only (kernels
    never write their inputs; a feed the user mutates later must not change the variable)."""
    v = to_host(v)
    arr = np.array(v, copy=True)
    arr.setflags(write=False)
    return arr
