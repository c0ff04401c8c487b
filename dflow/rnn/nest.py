"""Nested structures of RNN states and outputs (TF1's `nest` as rnn_cell_impl uses it).

Tuples, namedtuples (`LSTMStateTuple`) and lists are structure; everything else (a tensor, an int
size, a TensorShape) is a leaf. Dicts are not used by the cells and are leaves here.
"""

from __future__ import annotations

from ..graph.shape import TensorShape


def is_sequence(x):
    return isinstance(x, (tuple, list)) and not isinstance(x, TensorShape)


def flatten(x):
    """The leaves of `x`, depth first."""
    if is_sequence(x):
        return [leaf for item in x for leaf in flatten(item)]
    return [x]


def pack_sequence_as(structure, flat):
    """`flat` (a list of leaves) put back into `structure`'s shape. ValueError on a count mismatch."""
    flat = list(flat)
    it = iter(flat)

    def build(s):
        if not is_sequence(s):
            return next(it)
        items = [build(e) for e in s]
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            return type(s)(*items)
        return type(s)(items)

    count = len(flatten(structure))
    if count != len(flat):
        raise ValueError(f"Structure had {count} elements, but flat_sequence had {len(flat)} elements. "
                         f"Structure: {structure!r}.")
    return build(structure)


def map_structure(fn, *structures):
    """`fn` applied leafwise to structures of one shape (ValueError otherwise)."""
    for s in structures[1:]:
        assert_same_structure(structures[0], s)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*leaves) for leaves in zip(*flats)])


def assert_same_structure(a, b):
    """ValueError when `a` and `b` nest differently (TF1's words)."""
    def same(x, y):
        if is_sequence(x) != is_sequence(y):
            return False
        if not is_sequence(x):
            return True
        return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))

    if not same(a, b):
        raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: {a!r}"
                         f"\n\nSecond structure: {b!r}")
