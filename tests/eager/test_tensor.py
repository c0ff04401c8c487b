"""Eager tensors: values at once, printing as TF, numpy interop, Python conversions, errors."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from dflow import errors


def test_ops_run_at_once_and_print_as_tf(eager):
    m = tf.matmul([[2.]], [[2.]])
    assert str(m) == "tf.Tensor([[4.]], shape=(1, 1), dtype=float32)"
    assert repr(m) == "<tf.Tensor: shape=(1, 1), dtype=float32, numpy=array([[4.]], dtype=float32)>"
    assert str(tf.constant(3.5)) == "tf.Tensor(3.5, shape=(), dtype=float32)"
    assert str(tf.constant([1, 2])) == "tf.Tensor([1 2], shape=(2,), dtype=int32)"
    assert str(tf.constant("ab")) == "tf.Tensor(b'ab', shape=(), dtype=string)"
    assert tf.executing_eagerly() and tfe.in_eager_mode() and not tfe.in_graph_mode()


def test_value_protocols(eager):
    x = tf.constant([[1., 2.], [3., 4.]])
    assert isinstance(x.numpy(), np.ndarray) and x.numpy().dtype == np.float32
    assert x.shape == (2, 2) and x.shape.as_list() == [2, 2] and x.dtype == tf.float32
    assert x.device.endswith("CPU:0")
    np.testing.assert_array_equal(np.asarray(x), [[1, 2], [3, 4]])
    assert isinstance(np.multiply(x, x), np.ndarray)
    np.testing.assert_array_equal((x * 2 + 1).numpy(), [[3, 5], [7, 9]])
    np.testing.assert_array_equal((-x)[1].numpy(), [-3, -4])
    np.testing.assert_array_equal(x[:, 1].numpy(), [2, 4])
    assert float(tf.reduce_sum(x)) == 10.0 and int(tf.constant(3)) == 3 and bool(tf.constant(True))
    assert len(x) == 2 and [r.numpy().tolist() for r in x] == [[1, 2], [3, 4]]
    assert f"{tf.constant(2.5):.1f}" == "2.5"
    with pytest.raises(ValueError):
        bool(x)
    assert "eager tensor" in x.name
    assert tf.constant(2.).numpy() == np.float32(2.0)


def test_numpy_and_python_values_convert(eager):
    assert tf.add(1, 1).numpy() == 2 and tf.add(1, 1).dtype == tf.int32
    assert tf.add(np.array(1), np.array(1)).dtype == tf.int64
    z = tf.constant(np.array(2., dtype=np.float32)) + tf.constant(3.) + 1
    assert z.numpy() == 6.0


def test_errors_name_the_op_as_tf_eager(eager):
    with pytest.raises(errors.InvalidArgumentError, match=r"MatMul.*\[2,3\], \[4,5\]"):
        tf.matmul(tf.ones([2, 3]), tf.ones([4, 5]))
    with pytest.raises(errors.InvalidArgumentError, match="Integer division by zero"):
        tf.floordiv(tf.constant([1, 2]), tf.constant([1, 0]))
    with pytest.raises(errors.InvalidArgumentError) as e:
        tf.add(tf.constant(1), tf.constant(1.0))
    assert isinstance(e.value, TypeError)  # also graph mode's class
    with pytest.raises(errors.InvalidArgumentError, match="NaN"):
        tf.check_numerics(tf.constant([np.nan]), "bad")
    with pytest.raises(errors.InvalidArgumentError):
        tf.reshape(tf.ones([6]), [4, 2])
    tf.reshape(tf.ones([6]), [3, 2])  # a cached shape rule: the next reshape of a new value is checked too
    with pytest.raises(errors.InvalidArgumentError):
        tf.reshape(tf.ones([6]), [5, 2])
    with pytest.raises(RuntimeError, match="placeholder"):
        tf.placeholder(tf.float32)
    with pytest.raises(RuntimeError, match="GradientTape"):
        tf.gradients(tf.constant(1.), tf.constant(1.))


def test_eager_and_graph_mode_switch_with_contexts():
    assert not tf.executing_eagerly()
    with tfe.eager_mode():
        assert tf.executing_eagerly()
        with tfe.graph_mode():
            t = tf.constant(1.0)
            assert not tf.executing_eagerly() and "Const" in t.name
        with tf.Graph().as_default():
            assert not tf.executing_eagerly()
        assert tf.executing_eagerly()
    assert not tf.executing_eagerly()


def test_control_flow_runs_python_branches(eager):
    assert tf.cond(tf.constant(True), lambda: tf.constant(1), lambda: tf.constant(2)).numpy() == 1
    assert tf.cond(tf.constant(False), lambda: tf.constant(1), lambda: tf.constant(2)).numpy() == 2
    i, s = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), [tf.constant(0), tf.constant(0)])
    assert i.numpy() == 5 and s.numpy() == 10


def test_random_ops_draw_new_values_and_follow_seeds(eager):
    a, b = tf.random_normal([3]), tf.random_normal([3])
    assert a.shape == (3,) and not np.array_equal(a.numpy(), b.numpy())
    c, d = tf.random_uniform([2], seed=3), tf.random_uniform([2], seed=3)
    assert not np.array_equal(c.numpy(), d.numpy())  # one op type, one counter: TF's eager draws differ too


def test_graph_tensors_build_in_their_graph_and_eager_tensors_are_captured_there():
    g = tf.Graph()
    with g.as_default():
        t = tf.constant(1.0)
    with tfe.eager_mode():
        e = tf.constant(2.0)
        out = tf.add(t, e)  # an op on a graph tensor goes into its graph; the eager value is a constant there
        assert out.graph is g and not hasattr(out, "numpy")
    with tf.Session(graph=g) as sess:
        assert sess.run(out) == 3.0


def test_gpu_tensors_or_a_clean_refusal(eager):
    x = tf.constant([1., 2.])
    if tfe.num_gpus() == 0:
        with pytest.raises(errors.InvalidArgumentError, match="GPU:0"):
            x.gpu()
        assert x.cpu() is x
        return
    y = x.gpu()
    assert y.device.endswith("GPU:0")
    z = (y * 2).cpu()
    np.testing.assert_array_equal(z.numpy(), [2., 4.])


def test_enable_eager_execution_after_a_graph_op_is_a_value_error():
    tf.constant(1.0)
    with pytest.raises(ValueError, match="program startup"):
        tf.enable_eager_execution()


def test_eager_mode_is_per_thread():
    import threading

    seen = []
    with tfe.eager_mode():
        t = threading.Thread(target=lambda: seen.append(tf.executing_eagerly()))
        t.start()
        t.join()
        assert tf.executing_eagerly()
    assert seen == [False]


def test_eager_argument_errors_pickle_as_invalid_argument_errors(eager):
    import pickle

    with pytest.raises(errors.InvalidArgumentError) as e:
        tf.matmul(tf.ones([2, 3]), tf.ones([4, 5]))
    back = pickle.loads(pickle.dumps(e.value))
    assert type(back) is errors.InvalidArgumentError and "MatMul" in str(back)


def test_numpy_values_on_the_left_of_an_operator_defer_to_the_tensor(eager):
    """As TF's EagerTensor: `np_array * x` is a tensor of x's dtype (numpy's float64 converted),
    numpy's unary functions still give numpy arrays."""
    x = tf.constant([1.0, 2.0, 3.0])
    for value, want in ((np.ones(3) * x, [1.0, 2.0, 3.0]), (np.float64(2.0) * x, [2.0, 4.0, 6.0]),
                        (np.ones(3, np.float32) - x, [0.0, -1.0, -2.0]), (np.ones(3) / x, [1.0, 0.5, 1 / 3])):
        assert isinstance(value, type(x)) and value.dtype == tf.float32
        np.testing.assert_allclose(value.numpy(), want, rtol=1e-6)
    root = np.sqrt(x)
    assert type(root) is np.ndarray and root.dtype == np.float32
