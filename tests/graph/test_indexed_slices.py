"""dflow/graph/indexed_slices.py and the autodiff engine's handling of sparse gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

P = np.arange(12, dtype=np.float32).reshape(4, 3)


def test_gather_gradient_is_indexed_slices_and_densifies_as_numpy():
    p = tf.constant(P)
    ids = tf.constant([[0, 2], [2, 3]])
    y = tf.reduce_sum(tf.square(tf.gather(p, ids))) + tf.reduce_sum(tf.gather(p, [1]))
    (g,) = tf.gradients(y, [p])
    assert isinstance(g, tf.IndexedSlices)
    assert g.values.shape.as_list() == [5, 3] and g.shape.as_list() == [4, 3]  # two lookups' rows concatenated
    value, dense = run_modes([g, tf.convert_to_tensor(g)])
    want = np.zeros_like(P)
    np.add.at(want, [0, 2, 2, 3], 2 * P[[0, 2, 2, 3]])
    want[1] += 1
    np.testing.assert_array_equal(dense, want)
    assert value.dense_shape.tolist() == [4, 3]
    summed = np.zeros_like(P)
    np.add.at(summed, value.indices, value.values)
    np.testing.assert_array_equal(summed, want)


def test_sparse_and_dense_gradients_add_densely():
    p = tf.constant(P)
    y = tf.reduce_sum(tf.gather(p, [1, 1])) + tf.reduce_sum(p * 2.0)
    (g,) = tf.gradients(y, [p])
    assert isinstance(g, tf.Tensor)
    want = np.full_like(P, 2.0)
    want[1] += 2
    np.testing.assert_array_equal(run_modes(g), want)


def test_other_axes_and_unknown_rows():
    p = tf.constant(P)
    (g1,) = tf.gradients(tf.reduce_sum(tf.gather(p, [2, 0], axis=1)), [p])
    assert isinstance(g1, tf.Tensor)  # TF1: only axis 0 gives IndexedSlices
    q = tf.placeholder(tf.float32, [None, 3])
    (g2,) = tf.gradients(tf.reduce_sum(tf.gather(q, [1, 1])), [q])
    assert isinstance(g2, tf.IndexedSlices)
    with pytest.warns(UserWarning, match="unknown shape"):  # TF1's warning: the dense shape is unknown
        dense2 = tf.convert_to_tensor(g2)
    d1, d2 = run_modes([g1, dense2], {q: P})
    np.testing.assert_array_equal(d1, np.tile([1.0, 0.0, 1.0], (4, 1)))
    np.testing.assert_array_equal(d2, np.array([[0, 0, 0], [2, 2, 2], [0, 0, 0], [0, 0, 0]], np.float32))


def test_densifying_a_huge_one_warns_as_tf1():
    big = tf.Variable(tf.zeros([100000, 1000]))  # 1e8 elements: TF1's threshold
    (g,) = tf.gradients(tf.reduce_sum(tf.gather(big, [3])), [big])
    with pytest.warns(UserWarning, match="may consume a large amount of memory"):
        tf.convert_to_tensor(g)
    small = tf.constant(P)
    (h,) = tf.gradients(tf.reduce_sum(tf.gather(small, [3])), [small])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.convert_to_tensor(h)
    assert isinstance(-h, tf.IndexedSlices)


def test_identity_passes_indexed_slices_through():
    v = tf.Variable(P)
    (g,) = tf.gradients(tf.reduce_sum(tf.gather(tf.identity(v), [2])), [v])
    assert isinstance(g, tf.IndexedSlices)
