"""How a Session takes a feed's value: TF1's conversions of numpy feeds, string feeds as bytes,
and the Session's `chunks=` argument checked. Used by schedule/session.py."""

from __future__ import annotations

import numpy as np
from dask.utils import parse_bytes

from ..errors import InvalidArgumentError


class FeedError(InvalidArgumentError, ValueError):
    """A feed that contradicts its tensor's static shape or dtype."""


def all_bytes(value):
    """Whether an object array holds bytes only (b"".join checks that in C: ~40x a Python loop
    over a batch of CSV lines); large arrays are checked element by element (no joined copy)."""
    flat = value.reshape(-1)
    if flat.size <= 1 << 16:
        try:
            b"".join(flat)
            return True
        except TypeError:
            return False
    return not any(isinstance(v, str) for v in flat)


def check_chunks(chunks):
    """Session(chunks=...) as dask takes it ("auto", a positive int or byte size, a tuple of those,
    -1 or None per axis, or a dict); ValueError naming the argument otherwise (0 was a
    ZeroDivisionError at the first feed)."""
    def ok(c, depth=0):
        if c is None or c == "auto" or c == -1:
            return True
        if isinstance(c, str):
            try:
                return parse_bytes(c) > 0
            except (ValueError, TypeError):
                return False
        if isinstance(c, (bool, np.bool_)):
            return False
        if isinstance(c, (int, np.integer)):
            return c > 0
        if isinstance(c, (tuple, list)) and depth < 2:
            return all(ok(x, depth + 1) for x in c)
        if isinstance(c, dict) and depth == 0:
            return all(ok(x, 1) for x in c.values())
        return False

    if not ok(chunks):
        raise ValueError(f"Session: chunks must be 'auto', a positive int or size such as '64MB', or a tuple of "
                         f"those (-1 or None: the whole axis) as dask's chunks= takes them, got {chunks!r}")


def tf1_feed_cast(t, original, value, target):
    """A numpy feed as TF1's Session converts it: `np.asarray(value, dtype)`, numpy's casts
    (floats truncated into ints, numeric strings parsed, object arrays of numbers, ints wrapped
    into narrower ints) after TF1's one check, a Python int that the dtype cannot hold (TypeError,
    TF1's words); a value numpy cannot convert is the feed's error."""
    np_dtype = target.np_dtype
    if type(original) is int and target.is_integer:
        info = np.iinfo(np_dtype)
        if not info.min <= original <= info.max:
            raise TypeError(f"Type of feed value {original} with type {type(original)} is not compatible with "
                            f"Tensor type {np_dtype.type}. Try explicitly setting the type of the feed tensor to a "
                            "larger type (e.g. int64).")
    try:
        with np.errstate(all="ignore"):
            return np.asarray(value).astype(np_dtype)
    except (ValueError, TypeError, OverflowError) as e:
        raise FeedError(None, t.op, f"Cannot feed value of dtype {value.dtype} for Tensor {t.name!r}, which has "
                        f"dtype {target.name}: {e}") from None


def holds_bytes(value):
    """Whether a fed Python value is bytes or a (nested) list/tuple whose first leaf is bytes."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return isinstance(value, bytes)
