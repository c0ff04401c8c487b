"""`RowPatch`: a variable's new value as its old value with a few rows set or added to.

A row scatter (`ScatterUpdate`/`ScatterAdd`/`ScatterSub`, what optimizers apply sparse gradients
with) returns one instead of a copy of the whole variable. Whoever reads the new value as data
gets it materialized (`materialize`: one copy, as the scatter made before); the session's commit
applies it to the committed array in place when no other run reads that array (schedule/store.py),
so a step that updates 128 rows of a 1,000,000-row embedding writes 128 rows, not 512 MB.

`TOUCHED` counts what patches cost, for tests and benchmarks: rows written in place, bytes
written in place, and bytes copied where a patch had to be materialized.
"""

from __future__ import annotations

import contextvars
import threading

import numpy as np

TOUCHED = {"rows": 0, "bytes_in_place": 0, "bytes_copied": 0}
_count_lock = threading.Lock()


def _count(**deltas):
    with _count_lock:
        for k, v in deltas.items():
            TOUCHED[k] += v


def reset_counters():
    """Zeroes `TOUCHED` (tests and benchmarks measure one step)."""
    with _count_lock:
        for k in TOUCHED:
            TOUCHED[k] = 0


class RowPatch:
    """`base` with rows `indices` (1-D int) set to, or (`add`) incremented by, `rows`
    ([len(indices)] + base.shape[1:]), or with `add` and `sign` -1 decremented by them (a
    ScatterSub's rows, not negated first); repeated indices add up (`add`) or the last wins."""

    __slots__ = ("base", "indices", "rows", "add", "sign")

    def __init__(self, base, indices, rows, add, sign=1):
        self.base, self.indices, self.rows, self.add, self.sign = base, indices, rows, add, sign

    shape = property(lambda self: self.base.shape)
    dtype = property(lambda self: self.base.dtype)
    ndim = property(lambda self: self.base.ndim)

    def apply_to(self, target):
        """Writes the patch into `target` (an array of the base's shape) in place."""
        if self.add:
            if isinstance(target, np.ndarray):
                idx, rows = _summed(np.asarray(self.indices), self.rows)
                # the rows read once (`take`: a plain row copy, ~25% faster than `target[idx] -= rows`,
                # whose fancy read of cold rows is most of a row update's time), updated, written back
                cur = target.take(idx, axis=0)
                if self.sign < 0:
                    np.subtract(cur, rows, out=cur)
                else:
                    np.add(cur, rows, out=cur)
                target[idx] = cur
            else:  # cupy
                target.scatter_add(self.indices, -self.rows if self.sign < 0 else self.rows)
        else:
            target[self.indices] = self.rows

    def materialize(self):
        """The whole new value, as a new array."""
        new = self.base.copy()
        self.apply_to(new)
        _count(bytes_copied=int(new.nbytes))
        return new

    def apply_in_place(self):
        """Applies the patch to `base` itself (the caller owns it: no reader may see the change)."""
        writeable = self.base.flags.writeable
        if not writeable:
            self.base.setflags(write=True)
        try:
            self.apply_to(self.base)
        finally:
            if not writeable:
                self.base.setflags(write=False)
        _count(rows=int(np.size(self.indices)), bytes_in_place=int(self.rows.nbytes))
        return self.base

    def __array__(self, dtype=None, copy=None):
        out = self.materialize()
        return out if dtype is None else out.astype(dtype, copy=False)


def _summed(idx, rows):
    """(unique indices, rows summed per index): repeated rows added in index order (np.add.at's
    order), by one sort and np.add.reduceat instead of np.add.at's slow unbuffered loop."""
    if idx.size < 2:
        return idx, rows
    memo = _REPEATS.get()
    seen = memo.get(id(idx)) if memo is not None else None
    if seen is not None and seen[0] is idx:
        repeats = seen[1]
    else:
        sorted_idx = np.sort(idx)
        repeats = bool(np.count_nonzero(sorted_idx[1:] == sorted_idx[:-1]))
        if memo is not None:
            memo[id(idx)] = (idx, repeats)
    if not repeats:  # (a batch's usual case)
        return idx, rows
    order = np.argsort(idx, kind="stable")
    sorted_idx = idx[order]
    starts = np.concatenate([[0], np.nonzero(sorted_idx[1:] != sorted_idx[:-1])[0] + 1])
    if starts.size == idx.size:
        return idx, rows
    return sorted_idx[starts], np.add.reduceat(rows[order], starts, axis=0)


_REPEATS = contextvars.ContextVar("dflow_index_repeats", default=None)


class repeat_checks:  # noqa: N801 - used as a function, like contextlib's managers
    """A commit's memo of which index arrays hold repeated indices: the row updates of one commit
    that share an index array (nce_loss's weights and biases) sort it once. Only while the arrays
    cannot change (one commit of one run's values)."""

    __slots__ = ("token",)

    def __enter__(self):
        self.token = _REPEATS.set({})

    def __exit__(self, *exc):
        _REPEATS.reset(self.token)


def materialized(v):
    """`v`, or the whole value of a RowPatch."""
    return v.materialize() if type(v) is RowPatch else v


def patched(base, indices, rows, add, sign=1):
    """A RowPatch of `base`; a patch of a patch is materialized first (two scatters of one variable
    in one run, ordered by control dependencies)."""
    return RowPatch(materialized(base), indices, rows, add, sign)
