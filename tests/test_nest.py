"""tf.nest (dflow/nest.py): structures of lists, tuples, namedtuples and dicts (sorted keys, as TF)."""

import collections

import pytest

import dflow as tf

Point = collections.namedtuple("Point", "x y")


def test_flatten_and_pack():
    s = {"b": [1, (2, 3)], "a": Point(4, 5)}
    assert tf.nest.flatten(s) == [4, 5, 1, 2, 3]  # TF: dict values in sorted key order
    assert tf.nest.flatten(7) == [7] and tf.nest.flatten(None) == [None]
    packed = tf.nest.pack_sequence_as(s, [10, 11, 12, 13, 14])
    assert packed == {"b": [12, (13, 14)], "a": Point(10, 11)} and isinstance(packed["a"], Point)
    assert list(packed) == ["b", "a"]  # the original key order is kept
    od = collections.OrderedDict([("z", 1), ("y", 2)])
    assert tf.nest.pack_sequence_as(od, [5, 6]) == collections.OrderedDict([("z", 6), ("y", 5)])
    with pytest.raises(ValueError, match="Could not pack sequence"):
        tf.nest.pack_sequence_as([1, 2], [1])
    with pytest.raises(TypeError):
        tf.nest.pack_sequence_as([1], 1)
    assert tf.nest.is_nested([]) and tf.nest.is_nested({}) and not tf.nest.is_nested("ab")


def test_map_structure_and_assert_same_structure():
    out = tf.nest.map_structure(lambda a, b: a + b, (1, [2, {"k": 3}]), (10, [20, {"k": 30}]))
    assert out == (11, [22, {"k": 33}])
    with pytest.raises(ValueError):
        tf.nest.assert_same_structure([1, 2], [1, 2, 3])
    with pytest.raises(ValueError):
        tf.nest.assert_same_structure([1, [2]], [1, 2])
    with pytest.raises(TypeError):
        tf.nest.assert_same_structure([1, 2], (1, 2))
    tf.nest.assert_same_structure([1, 2], (1, 2), check_types=False)
    with pytest.raises(ValueError, match="same set of keys"):
        tf.nest.assert_same_structure({"a": 1}, {"b": 1})
    with pytest.raises(TypeError):
        tf.nest.map_structure(1, [1])


def test_tensors_are_leaves():
    t = tf.constant([1, 2])
    assert tf.nest.flatten({"t": t, "u": [t]}) == [t, t]
