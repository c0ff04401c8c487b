"""Static shapes (`TensorShape`, `Dimension`, `broadcast_static_shape`) against TF1's rules and,
for fully known shapes, numpy's broadcasting."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf
from dflow.graph.shape import (
    Dimension,
    TensorShape,
    as_shape,
    broadcast_static_shape,
    dimension_value,
    unknown_shape,
)

HYP = settings(max_examples=25, deadline=None)
dims = st.one_of(st.none(), st.integers(0, 4))
partial_shapes = st.one_of(st.none(), st.lists(dims, max_size=4))


# ---- Dimension ----------------------------------------------------------------------------------


def test_dimension_values_and_comparison():
    assert Dimension(3).value == 3 and Dimension(None).value is None
    assert Dimension(Dimension(4)).value == 4
    assert tf.Dimension is Dimension
    assert (Dimension(3) == 3) is True and (Dimension(3) == Dimension(4)) is False
    assert (Dimension(None) == 3) is None  # unknown: neither equal nor unequal (TF1)
    assert (Dimension(3) == Dimension(None)) is None
    assert (Dimension(3) != 4) is True
    assert Dimension(3).is_compatible_with(3) and not Dimension(3).is_compatible_with(4)
    assert Dimension(None).is_compatible_with(4)
    assert Dimension(None).merge_with(3).value == 3 and Dimension(3).merge_with(None).value == 3
    with pytest.raises(ValueError):
        Dimension(2).merge_with(3)
    with pytest.raises(ValueError):
        Dimension(2).assert_is_compatible_with(3)
    assert (str(Dimension(3)), str(Dimension(None))) == ("3", "?")
    assert hash(Dimension(3)) == hash(Dimension(3))


def test_dimension_arithmetic():
    assert (Dimension(2) + 3).value == 5 and (3 + Dimension(2)).value == 5
    assert (Dimension(5) - 3).value == 2
    assert (Dimension(2) * 3).value == 6 and (3 * Dimension(2)).value == 6
    assert (Dimension(7) // 2).value == 3
    assert (Dimension(None) + 3).value is None and (Dimension(None) * Dimension(3)).value is None
    assert int(Dimension(3)) == 3 and [0, 1, 2, 3][Dimension(2)] == 2
    with pytest.raises(TypeError):
        int(Dimension(None))


def test_dimension_errors():
    with pytest.raises(ValueError):
        Dimension(-1)
    with pytest.raises(TypeError):
        Dimension(2.5)
    with pytest.raises(TypeError):
        Dimension("a")
    assert Dimension(np.int64(4)).value == 4


def test_dimension_value():
    assert dimension_value(TensorShape([2, None])[0]) == 2
    assert dimension_value(TensorShape([2, None])[1]) is None
    assert dimension_value(5) == 5 and dimension_value(None) is None


# ---- TensorShape ------------------------------------------------------------------------------


def test_known_and_partial_shapes():
    s = TensorShape([2, None, 3])
    assert s.as_list() == [2, None, 3] and s.ndims == 3 and s.rank == 3 and len(s) == 3
    assert [str(d) for d in s.dims] == ["2", "?", "3"]
    assert s.as_tuple() == (2, None, 3)
    assert not s.is_fully_defined() and s.num_elements() is None
    assert TensorShape([2, 3]).is_fully_defined() and TensorShape([2, 3]).num_elements() == 6
    assert TensorShape([]).is_fully_defined() and TensorShape([]).num_elements() == 1
    assert TensorShape([0, 5]).num_elements() == 0
    assert TensorShape(3).as_list() == [3]  # a single int is a rank-1 shape
    assert tf.TensorShape is TensorShape
    assert (str(s), str(TensorShape([2])), str(TensorShape([]))) == ("(2, ?, 3)", "(2,)", "()")
    assert (bool(TensorShape([])), bool(TensorShape([1])), bool(TensorShape(None))) == (True, True, False)


def test_unknown_rank():
    u = TensorShape(None)
    assert u.ndims is None and u.dims is None and u.as_tuple() is None
    assert not u.is_fully_defined() and u.num_elements() is None
    assert str(u) == "<unknown>" and u == unknown_shape()
    with pytest.raises(ValueError):
        u.as_list()
    with pytest.raises(ValueError):
        len(u)
    with pytest.raises(ValueError):
        list(u)
    assert u[2].value is None  # any dim of an unknown shape is unknown
    assert u[1:].ndims is None
    assert unknown_shape(2).as_list() == [None, None]
    assert u.with_rank(2).as_list() == [None, None]
    assert u.with_rank_at_least(3) is u
    assert u.is_compatible_with([1, 2]) and TensorShape([1, 2]).is_compatible_with(u)


def test_indexing_and_slicing():
    s = TensorShape([2, None, 3])
    assert s[0].value == 2 and s[-1].value == 3 and s[1].value is None
    assert isinstance(s[0], Dimension)
    assert s[1:].as_list() == [None, 3] and isinstance(s[1:], TensorShape)
    assert s[::-1].as_list() == [3, None, 2]
    assert [d.value for d in s] == [2, None, 3]
    with pytest.raises(IndexError):
        s[5]


def test_merge_with():
    assert TensorShape([2, None]).merge_with(TensorShape([None, 3])).as_list() == [2, 3]
    assert TensorShape(None).merge_with([1, 2]).as_list() == [1, 2]
    assert TensorShape([1, 2]).merge_with(None).as_list() == [1, 2]
    assert TensorShape(None).merge_with(None).ndims is None
    with pytest.raises(ValueError):
        TensorShape([2, 3]).merge_with([3, 3])
    with pytest.raises(ValueError):
        TensorShape([2, 3]).merge_with([3])


def test_is_compatible_with():
    assert TensorShape([2, None]).is_compatible_with([2, 5])
    assert not TensorShape([2]).is_compatible_with([3])
    assert not TensorShape([1]).is_compatible_with([1, 1])
    assert TensorShape([]).is_compatible_with([]) and not TensorShape([]).is_compatible_with([1])
    with pytest.raises(ValueError):
        TensorShape([2]).assert_is_compatible_with([3])


def test_rank_helpers_and_concatenate():
    assert TensorShape([1, 2]).with_rank(2).as_list() == [1, 2]
    with pytest.raises(ValueError):
        TensorShape([1]).with_rank(2)
    with pytest.raises(ValueError):
        TensorShape([1]).with_rank_at_least(2)
    assert TensorShape([1, 2]).with_rank_at_least(1).as_list() == [1, 2]
    assert TensorShape([2]).concatenate([3, None]).as_list() == [2, 3, None]
    assert TensorShape([2]).concatenate(TensorShape(None)).ndims is None
    with pytest.raises(ValueError):
        TensorShape([2, None]).assert_is_fully_defined()


def test_equality_hash_and_pickle():
    assert TensorShape([2, 3]) == TensorShape([2, 3]) and TensorShape([2, 3]) == [2, 3]
    assert TensorShape([2, 3]) != TensorShape([2, 4]) and TensorShape([2]) != TensorShape([2, 1])
    assert TensorShape(None) == TensorShape(None) and TensorShape(None) != TensorShape([1])
    assert hash(TensorShape([1, 2])) == hash(TensorShape([1, 2]))
    s = TensorShape([2, None])
    assert pickle.loads(pickle.dumps(s)).as_list() == [2, None]
    assert as_shape(s) is s and as_shape([1]).as_list() == [1]


def test_invalid_dims():
    with pytest.raises(ValueError):
        TensorShape([-1])
    with pytest.raises(TypeError):
        TensorShape([2.5])
    with pytest.raises(TypeError):
        TensorShape(["a"])


# ---- broadcasting -------------------------------------------------------------------------------


def test_broadcast_static_shape():
    b = broadcast_static_shape
    assert b(TensorShape([2, 1, 3]), TensorShape([4, 3])).as_list() == [2, 4, 3]
    assert b([None, 3], [4, 1]).as_list() == [4, 3]
    assert b([None], [1]).as_list() == [None]
    assert b([None], [None]).as_list() == [None]
    assert b([None], [5]).as_list() == [5]  # TF1: the known dim (a 1 at run time would fail)
    assert b([], [2, 2]).as_list() == [2, 2]
    assert b(TensorShape(None), [4, 1]).ndims is None
    with pytest.raises(ValueError):
        b([2, 3], [4])


@HYP
@given(shapes=st.lists(st.lists(st.integers(1, 4), max_size=4), min_size=2, max_size=2))
def test_broadcast_static_shape_matches_numpy(shapes):
    a, c = shapes
    try:
        want = list(np.broadcast_shapes(tuple(a), tuple(c)))
    except ValueError:
        with pytest.raises(ValueError):
            broadcast_static_shape(a, c)
        return
    assert broadcast_static_shape(a, c).as_list() == want
    assert broadcast_static_shape(c, a).as_list() == want


@HYP
@given(a=partial_shapes, b=partial_shapes)
def test_merge_is_symmetric_and_agrees_with_compatibility(a, b):
    sa, sb = TensorShape(a), TensorShape(b)
    compatible = sa.is_compatible_with(sb)
    assert compatible == sb.is_compatible_with(sa)
    if not compatible:
        with pytest.raises(ValueError):
            sa.merge_with(sb)
        return
    m = sa.merge_with(sb)
    assert m.as_tuple() == sb.merge_with(sa).as_tuple()
    assert m.is_compatible_with(sa) and m.is_compatible_with(sb)
    if sa.ndims is not None:
        # merging only adds knowledge: every known dim of a stays, unknown dims may be filled
        for da, dm in zip(sa.as_list(), m.as_list()):
            assert da is None or da == dm


def test_shape_lists_holding_dimensions_convert_as_tf1():
    """`tf.reshape(x, [-1, x.shape[1] * x.shape[2]])`: Dimensions in a shape list are ints; an
    unknown one is TF1's TypeError."""
    x = tf.placeholder(tf.float32, [None, 2, 3])
    y = tf.reshape(x, [-1, x.shape[1] * x.shape[2]])
    assert y.shape.as_list() == [None, 6]
    assert tf.zeros([x.shape[1], 4]).shape.as_list() == [2, 4]
    with tf.Session() as s:
        assert s.run(y, {x: np.ones((5, 2, 3), np.float32)}).shape == (5, 6)
    with pytest.raises(TypeError, match="Failed to convert object of type"):
        tf.reshape(x, [x.shape[0], -1])


def test_tensor_shape_repr_is_tf1s():
    # TF 2.21's tf.compat.v1 with disable_v2_behavior() prints these (V1 Dimensions)
    assert repr(TensorShape([2, 3])) == "TensorShape([Dimension(2), Dimension(3)])"
    assert repr(TensorShape([None, 3])) == "TensorShape([Dimension(None), Dimension(3)])"
    assert (repr(TensorShape([])), repr(TensorShape(None))) == ("TensorShape([])", "TensorShape(None)")
