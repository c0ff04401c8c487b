"""`dflow.nest`: TF's `tf.nest`, functions over nested structures of values.

Structure is lists, tuples, namedtuples and dicts (and OrderedDicts, defaultdicts: any Mapping);
everything else is a leaf (a tensor, a numpy array, a string, None). Dict entries are visited in
sorted key order, as TF does, and packed back into the same dict type. dflow/rnn/nest.py is the
smaller helper the RNN cells use (no dicts).
"""

from __future__ import annotations

import collections.abc

__all__ = ["is_nested", "flatten", "pack_sequence_as", "map_structure", "assert_same_structure"]


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def is_nested(seq):
    """True for a list, tuple, namedtuple or Mapping (a structure); False for a leaf."""
    return isinstance(seq, (list, tuple, collections.abc.Mapping))


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError as e:
        raise TypeError(f"nest only supports dicts with sortable keys, got {list(d)!r}") from e


def _children(x):
    if isinstance(x, collections.abc.Mapping):
        return [x[k] for k in _sorted_keys(x)]
    return list(x)


def flatten(structure, expand_composites=False):
    """The leaves of `structure`, depth first (dict values in sorted key order); a leaf gives [leaf]."""
    if not is_nested(structure):
        return [structure]
    return [leaf for child in _children(structure) for leaf in flatten(child)]


def _rebuild(like, items):
    if isinstance(like, collections.abc.Mapping):
        keys = _sorted_keys(like)
        values = dict(zip(keys, items))
        if isinstance(like, collections.defaultdict):
            out = collections.defaultdict(like.default_factory)
            for k in like:
                out[k] = values[k]
            return out
        try:
            return type(like)((k, values[k]) for k in like)  # the original key order
        except TypeError:
            return {k: values[k] for k in like}
    if _is_namedtuple(like):
        return type(like)(*items)
    return type(like)(items)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """`flat_sequence` (a list of leaves) put back into the nesting of `structure`; ValueError when
    the counts differ, TypeError when flat_sequence is not a list."""
    if not is_nested(flat_sequence):
        raise TypeError(f"Attempted to pack value:\n  {flat_sequence!r}\ninto a structure, but found incompatible "
                        f"type `{type(flat_sequence)}` instead.")
    flat = list(flat_sequence)
    if not is_nested(structure):
        if len(flat) != 1:
            raise ValueError(f"The target structure is of type `{type(structure)}`\n  {structure!r}\nHowever the "
                             f"input is a sequence ({type(flat_sequence)}) of length {len(flat)}.\n  "
                             f"{flat_sequence!r}\nnest cannot guarantee that it is safe to map one to the other.")
        return flat[0]
    count = len(flatten(structure))
    if count != len(flat):
        raise ValueError(f"Could not pack sequence. Structure had {count} atoms, but flat_sequence had "
                         f"{len(flat)} items.  Structure: {structure!r}, flat_sequence: {flat_sequence!r}.")
    it = iter(flat)

    def build(s):
        if not is_nested(s):
            return next(it)
        return _rebuild(s, [build(c) for c in _children(s)])

    return build(structure)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """ValueError when the two nest differently (different lengths, keys or leaf/structure), and
    TypeError when `check_types` and a sequence's type differs (list vs tuple, other namedtuple)."""

    def walk(a, b):
        if is_nested(a) != is_nested(b):
            raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: "
                             f"{nest1!r}\n\nSecond structure: {nest2!r}\n\nMore specifically: Substructure "
                             f'"{a!r}" is a sequence, while substructure "{b!r}" is not' if is_nested(a) else
                             f"The two structures don't have the same nested structure.\n\nFirst structure: "
                             f"{nest1!r}\n\nSecond structure: {nest2!r}\n\nMore specifically: Substructure "
                             f'"{b!r}" is a sequence, while substructure "{a!r}" is not')
        if not is_nested(a):
            return
        if check_types and type(a) is not type(b):
            both_maps = isinstance(a, collections.abc.Mapping) and isinstance(b, collections.abc.Mapping)
            if not both_maps:
                raise TypeError(f"The two structures don't have the same sequence type. Input structure has type "
                                f"{type(a)}, while shallow structure has type {type(b)}.")
        if isinstance(a, collections.abc.Mapping) and set(a) != set(b):
            raise ValueError(f"The two dictionaries don't have the same set of keys. First structure has keys "
                             f"{sorted(a)!r}, while second structure has keys {sorted(b)!r}.")
        ca, cb = _children(a), _children(b)
        if len(ca) != len(cb):
            raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: "
                             f"{nest1!r}\n\nSecond structure: {nest2!r}\n\nMore specifically: The two namedtuples "
                             f"don't have the same sequence type or length: {len(ca)} vs {len(cb)} elements")
        for x, y in zip(ca, cb):
            walk(x, y)

    walk(nest1, nest2)


def map_structure(func, *structure, **kwargs):
    """`func` applied to the leaves of structures that nest alike, packed like the first.
    kwargs: check_types (default True), expand_composites (accepted)."""
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func!r}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError(f"Only valid keyword arguments are `check_types` and `expand_composites`, not: "
                         f"`{', '.join(kwargs)}`")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])
