"""A session's committed variable values: where each lives (a read-only numpy array, per-chunk
futures on a cluster, or a Zarr array on local disk) and how it is read, replaced and loaded.

`Saver`, `Variable.load` and `graph_util` use this public interface (`Session.variables`); plans
see it only through their RunContext.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from ..errors import FailedPreconditionError
from ..storage.values import RemoteValue, StoredValue, block_indices, block_slices


class VariableStore:
    LINEAGE_LIMIT = 64

    def __init__(self, policy):
        self.policy = policy  # storage.layout.StoragePolicy: which variables live on disk
        self.values = {}  # variable op name -> committed value
        self._remote_age = {}  # variable op name -> (commits, bytes fed) since it was last shipped whole
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
        return value.to_host() if isinstance(value, (RemoteValue, StoredValue)) else value

    def saved_value(self, name):
        """A variable's committed value for a Saver: numpy, or the StoredValue itself (streamed)."""
        value = self.get(name)
        return value.to_host() if isinstance(value, RemoteValue) else value

    def stores(self, shape, dtype):
        """Whether a variable of this shape and dtype is held on disk between runs."""
        return self.policy.stores(shape, dtype)

    def new_stored(self, name, shape, dtype, chunk_shape=None):
        """An empty StoredValue in the scratch directory, laid out as plans read it by default."""
        if chunk_shape is None:
            chunk_shape = self.policy.chunk_shape(shape, dtype)
        return StoredValue(self._path(name), shape, dtype, chunk_shape)

    def load(self, name, value):
        """Sets a variable's committed value directly (`Variable.load`); a value as large as the
        session stores on disk is written there chunk by chunk."""
        if not isinstance(value, StoredValue):
            value = np.asarray(value)
            if self.stores(value.shape, value.dtype):
                stored = self.new_stored(name, value.shape, value.dtype)
                for idx, slc in zip(block_indices(stored.chunks), block_slices(stored.chunks)):
                    stored.cio.write(idx, value[slc])
                value = stored
            else:
                value = committed(value)
        self.set(name, value)

    def commit(self, name, value, fed_bytes=0):
        """A run's new value of a variable, as the session keeps it."""
        if isinstance(value, RemoteValue):
            value = self._remote_commit(name, value, fed_bytes)
        elif not isinstance(value, StoredValue):
            value = committed(value)
        self.set(name, value)

    def commit_all(self, values, fed_bytes=0):
        """A run's new values, committed together: a concurrent run's snapshot sees all or none."""
        with self._lock:
            for name, value in values.items():
                self.commit(name, value, fed_bytes)

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
                if isinstance(value, StoredValue):
                    self._pins[id(value)] = self._pins.get(id(value), 0) + 1
            return snap

    def release(self, snap):
        """Ends a run's `snapshot`: a StoredValue replaced meanwhile is deleted by its last reader."""
        with self._lock:
            for value in snap.values():
                if not isinstance(value, StoredValue):
                    continue
                left = self._pins.pop(id(value)) - 1
                if left:
                    self._pins[id(value)] = left
                else:
                    old = self._retired.pop(id(value), None)
                    if old is not None:
                        old.discard()

    def set(self, name, value):
        with self._lock:
            old = self.values.get(name)
            self.values[name] = value
            if isinstance(old, StoredValue) and old is not value:
                if id(old) in self._pins:
                    self._retired[id(old)] = old  # a run still reads it
                else:
                    old.discard()

    def _remote_commit(self, name, value, fed_bytes):
        """A value kept on the cluster depends on the previous run's value, and the scheduler keeps
        that whole history, fed data included; every LINEAGE_LIMIT commits, or once the data fed
        since the last cut outweighs the variable, the value is re-shipped (gather and scatter: no
        history) so the scheduler's state stays bounded."""
        age, fed = self._remote_age.get(name, (0, 0))
        age, fed = age + 1, fed + fed_bytes
        size = int(np.prod(value.shape, dtype=np.int64)) * np.dtype(value.dtype or np.float64).itemsize
        if age >= self.LINEAGE_LIMIT or fed > size:
            value = RemoteValue.scatter(value.client, value.to_host(), value.chunks)
            age, fed = 0, 0
        self._remote_age[name] = (age, fed)
        return value

    def _path(self, name):
        import tempfile
        import uuid

        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="dflow-variables-")
        return os.path.join(self._dir, f"{name.replace('/', '.')}-{uuid.uuid4().hex}.zarr")

    def close(self):
        self.values.clear()
        if self._dir is not None:
            import shutil

            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


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
