"""TF1's framework helpers of the top namespace (dflow/framework.py). Figures marked "TF1" were
printed by tensorflow.compat.v1 2.21 for the same calls."""

import numpy as np
import pytest

import dflow as tf
from dflow import errors
from tests.conftest import run_modes


@pytest.fixture(autouse=True)
def _fresh_graph():
    tf.reset_default_graph()
    yield


def test_is_tensor_and_static_value():
    v = tf.Variable(1.0)
    sp = tf.SparseTensor([[0]], [1.0], [2])
    assert tf.is_tensor(tf.constant(1)) and tf.is_tensor(v) and tf.is_tensor(sp)  # TF1: True True True
    assert not tf.is_tensor(np.ones(2)) and not tf.is_tensor(3)
    assert tf.is_symbolic_tensor(tf.constant(1)) and not tf.is_symbolic_tensor(3)
    np.testing.assert_array_equal(tf.get_static_value(tf.constant([1, 2])), [1, 2])
    assert tf.get_static_value(3) == 3
    assert tf.get_static_value(tf.placeholder(tf.float32)) is None
    assert tf.get_static_value(tf.shape(tf.zeros([2, 3]))).tolist() == [2, 3]
    assert tf.is_numeric_tensor(tf.constant(1)) and not tf.is_numeric_tensor(tf.constant(True))
    assert not tf.is_numeric_tensor(tf.constant("a")) and not tf.is_numeric_tensor(1.0)


def test_dimension_helpers():
    assert tf.dimension_value(tf.Dimension(3)) == 3 and tf.dimension_value(4) == 4
    assert tf.dimension_at_index(tf.TensorShape(None), 2).value is None  # TF1: ?
    assert tf.dimension_at_index(tf.TensorShape([2, 5]), 1).value == 5
    assert tf.compat.dimension_value is tf.dimension_value
    assert tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3])).as_list() == [2, 3]
    with pytest.raises(ValueError):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))


def test_broadcast_dynamic_shape():
    s = tf.broadcast_dynamic_shape(tf.constant([2, 1]), tf.constant([5, 1, 3]))
    np.testing.assert_array_equal(run_modes(s), [5, 2, 3])  # TF1: [5 2 3]
    a = tf.placeholder(tf.int32, [None])
    b = tf.broadcast_dynamic_shape(a, tf.constant([4]))
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(b, {a: [3, 1]}), [3, 4])
        with pytest.raises(errors.InvalidArgumentError, match="Incompatible shapes"):
            sess.run(b, {a: [3, 2]})


def test_ensure_shape():
    p = tf.placeholder(tf.float32, [None, 3])
    e = tf.ensure_shape(p, [2, None])
    assert e.shape.as_list() == [2, 3]  # TF1: (2, 3)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(e, {p: np.ones((2, 3))}), np.ones((2, 3)))
        # TF1: "Shape of tensor ... [3,3] is not compatible with expected shape [2,?]."
        with pytest.raises(errors.InvalidArgumentError, match=r"not compatible with expected shape \[2,\?\]"):
            sess.run(e, {p: np.ones((3, 3))})
    q = tf.placeholder(tf.float32)  # unknown rank: the rank is checked too
    f = tf.ensure_shape(q, [2])
    with tf.Session() as sess:
        sess.run(f, {q: [1.0, 2.0]})
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(f, {q: [[1.0, 2.0]]})
    with pytest.raises(ValueError, match="not compatible"):
        tf.ensure_shape(tf.constant([1, 2]), [3])


def test_hessians_match_analytic():
    p = tf.placeholder(tf.float32, [2, 3])
    (h,) = tf.hessians(tf.reduce_sum(p ** 3), p)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session() as sess:
        got = sess.run(h, {p: x})
    want = np.diag((6 * x).reshape(-1)).reshape(2, 3, 2, 3)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    q = tf.placeholder(tf.float32, [2])
    (hq,) = tf.hessians(q[0] * q[1], q)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(hq, {q: [1.0, 2.0]}), [[0, 1], [1, 0]])


def test_unconnected_gradients_enum_and_aggregation_method():
    x, y = tf.constant(1.0), tf.constant(2.0)
    assert tf.gradients(x * 2, y) == [None]
    (g,) = tf.gradients(x * 2, y, unconnected_gradients=tf.UnconnectedGradients.ZERO,
                        aggregation_method=tf.AggregationMethod.EXPERIMENTAL_TREE)
    with tf.Session() as sess:
        assert sess.run(g) == 0.0
    assert tf.UnconnectedGradients.ZERO.value == "zero" and tf.AggregationMethod.DEFAULT == 0
    with pytest.raises(ValueError, match="Invalid aggregation_method specified 7"):
        tf.gradients(x * 2, x, aggregation_method=7)


def test_grad_pass_through_and_recompute():
    x = tf.constant([0.3, 1.7])
    y = tf.grad_pass_through(tf.round)(x)
    (g,) = tf.gradients(y * 3.0, x)
    f = tf.recompute_grad(lambda t: t * t)
    (g2,) = tf.gradients(f(x), x)
    with tf.Session() as sess:
        yv, gv, g2v = sess.run([y, g, g2])
    np.testing.assert_array_equal(yv, [0.0, 2.0])
    np.testing.assert_array_equal(gv, [3.0, 3.0])
    np.testing.assert_allclose(g2v, [0.6, 3.4], rtol=1e-6)


def test_switch_case():
    branches = [lambda: tf.constant(1), lambda: tf.constant(2)]
    i = tf.placeholder(tf.int32, [])
    r = tf.switch_case(i, branches)
    d = tf.switch_case(i, {0: lambda: tf.constant(1), 1: lambda: tf.constant(2)}, default=lambda: tf.constant(9))
    with tf.Session() as sess:
        assert [sess.run(r, {i: k}) for k in (0, 1, 5)] == [1, 2, 2]  # TF1: an index out of range takes the last
        assert [sess.run(d, {i: k}) for k in (0, 1, 5)] == [1, 2, 9]
    with pytest.raises(ValueError, match="contiguous"):
        tf.switch_case(i, {0: branches[0], 3: branches[1]})


def test_contexts_and_aliases():
    a = tf.constant(1.0)
    with tf.control_dependencies([a]):
        with tf.init_scope():
            b = tf.constant(2.0)
        c = tf.constant(3.0)
    assert not b.op.control_inputs and c.op.control_inputs
    with tf.colocate_with(a), tf.container("c"), tf.op_scope([a], "outer") as scope:
        assert scope.startswith("outer")
    assert tf.initialize_all_tables is tf.tables_initializer
    assert tf.no_regularizer(a) is None
    assert tf.NoGradient is tf.no_gradient
    m = tf.sparse_matmul(tf.constant([[1.0, 2.0]]), tf.constant([[3.0], [4.0]]))
    g = tf.guarantee_const(a)
    with tf.Session() as sess:
        assert sess.run(m).tolist() == [[11.0]] and sess.run(g) == 1.0
    with pytest.raises(TypeError, match="float32"):
        tf.sparse_matmul(tf.constant([[1]]), tf.constant([[1]]))


def test_convert_to_tensor_or_sparse_and_slices():
    sp = tf.SparseTensorValue([[0]], [1.0], [2])
    assert isinstance(tf.convert_to_tensor_or_sparse_tensor(sp), tf.SparseTensor)
    assert isinstance(tf.convert_to_tensor_or_sparse_tensor([1.0]), tf.Tensor)
    s = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]))
    assert tf.convert_to_tensor_or_indexed_slices(s) is s
    with pytest.raises(ValueError):
        tf.convert_to_tensor_or_indexed_slices(s, dtype=tf.int32)


def test_specs_and_enums():
    spec = tf.TensorSpec([2, None], tf.int32, name="a")
    assert repr(spec) == "TensorSpec(shape=(2, ?), dtype=tf.int32, name='a')"  # TF1's repr
    assert spec.is_compatible_with(tf.zeros([2, 5], tf.int32))
    assert not spec.is_compatible_with(tf.zeros([3, 5], tf.int32))
    assert tf.TensorSpec.from_tensor(tf.zeros([1], name="z")).name == "z"
    assert spec == tf.TensorSpec([2, None], tf.int32, name="a") and isinstance(spec, tf.TypeSpec)
    assert [e.value for e in tf.VariableAggregation] == [0, 1, 2, 3]
    assert tf.VariableAggregation.ONLY_FIRST_TOWER is tf.VariableAggregation.ONLY_FIRST_REPLICA
    assert [e.name for e in tf.VariableSynchronization] == ["AUTO", "NONE", "ON_WRITE", "ON_READ"]


def test_partitioners():
    # TF1: [3, 1] and [4, 1]
    assert tf.fixed_size_partitioner(3)(shape=tf.TensorShape([10, 4]), dtype=tf.float32) == [3, 1]
    part = tf.min_max_variable_partitioner(max_partitions=4, min_slice_size=64)
    assert part(shape=tf.TensorShape([100, 4]), dtype=tf.float32) == [4, 1]
    assert tf.variable_axis_size_partitioner(400)(tf.TensorShape([100, 4]), tf.float32) == [4, 1]
    with pytest.raises(ValueError):
        tf.variable_axis_size_partitioner(0)


def test_get_seed_top_level():
    tf.set_random_seed(5)
    assert tf.get_seed(7) == (5, 7)


def test_queue_namespace():
    assert tf.queue.FIFOQueue is tf.FIFOQueue and tf.queue.QueueBase is tf.QueueBase
    q = tf.queue.FIFOQueue(2, tf.float32)
    enq = q.enqueue(1.5)
    with tf.Session() as sess:
        sess.run(enq)
        assert sess.run(q.dequeue()) == 1.5
