"""tf.test (dflow/test.py): TestCase with TF's helpers (this file's TestCase subclass is collected
and run by pytest as TF's tests are), Benchmark, StubOutForTesting, assert_equal_graph_def and the
build queries."""

import os
import unittest

import numpy as np
import pytest

import dflow as tf
from dflow import errors


class TestCaseHelpers(tf.test.TestCase):
    def test_fresh_graph_and_seed(self):
        assert not tf.get_default_graph().get_operations()
        assert tf.get_default_graph().seed == 87654321

    def test_session_and_evaluate(self):
        x = tf.constant([1.0, 2.0])
        with self.session() as sess:
            assert tf.get_default_session() is sess
            self.assertAllClose(sess.run(x), [1.0, 2.0])
        assert self.evaluate({"a": x, "b": [x * 2]})["b"][0].tolist() == [2.0, 4.0]
        with self.cached_session() as s1, self.cached_session() as s2:
            assert s1 is s2

    def test_array_assertions(self):
        x = tf.constant([[1.0, 2.0]])
        self.assertAllClose(x, [[1.0, 2.0 + 1e-7]])
        self.assertAllClose({"a": (1.0, [2.0])}, {"a": (1.0, [2.0])})
        self.assertAllEqual(tf.constant([1, 2]), np.array([1, 2]))
        self.assertAllEqual([b"a"], [b"a"])
        with self.assertRaises(AssertionError):
            self.assertAllClose(x, [[1.0, 2.1]])
        with self.assertRaises(AssertionError):
            self.assertAllEqual([1, 2], [1, 2, 3])
        self.assertNotAllClose([1.0], [2.0])
        self.assertAllCloseAccordingToType(np.float16([1.0]), np.float16([1.0005]))
        self.assertNear(1.0, 1.05, 0.1)
        self.assertArrayNear([1.0, 2.0], [1.0, 2.01], 0.1)
        self.assertAllInRange([1, 2], 1, 2)
        with self.assertRaises(AssertionError):
            self.assertAllInRange([1, 2], 1, 2, open_upper_bound=True)
        self.assertAllGreater([2, 3], 1)
        self.assertAllLessEqual([2, 3], 3)
        self.assertAllInSet([1, 2, 1], {1, 2})
        self.assertShapeEqual(np.zeros((2, 1)), x[:, :1] + tf.zeros([2, 1]))
        self.assertDTypeEqual(np.float32([1]), tf.float32)
        self.assertStartsWith("dflow", "df")

    def test_raises_op_error(self):
        p = tf.placeholder(tf.float32)
        check = tf.debugging.assert_positive(p)
        with self.cached_session() as sess:
            with self.assertRaisesOpError("x > 0"):
                sess.run(check, {p: -1.0})
            with self.assertRaisesWithPredicateMatch(errors.InvalidArgumentError, lambda e: e.op is not None):
                sess.run(check, {p: -1.0})
        with pytest.raises(AssertionError):
            with self.assertRaisesOpError("x"):
                pass

    def test_temp_dir(self):
        d = self.get_temp_dir()
        assert os.path.isdir(d) and d.startswith(tf.test.get_temp_dir())

    @tf.test.disable_with_predicate(lambda: True, "always skipped")
    def test_skipped(self):
        raise AssertionError("not reached")


def test_gradient_checker_still_there():
    with tf.Graph().as_default(), tf.Session():
        x = tf.placeholder(tf.float64, [3])
        err = tf.test.compute_gradient_error(x, [3], x * x, [3])
    assert err < 1e-6


def test_build_queries():
    assert tf.test.is_built_with_rocm() is False and tf.test.is_built_with_xla() is False
    assert tf.test.is_built_with_gpu_support() == tf.test.is_built_with_cuda()
    assert tf.test.gpu_device_name() in ("", "/device:GPU:0")
    assert tf.test.mock is unittest.mock
    assert isinstance(tf.test.benchmark_config(), tf.ConfigProto)


def test_benchmark():
    class B(tf.test.Benchmark):
        pass

    with tf.Graph().as_default(), tf.Session() as sess:
        r = B().run_op_benchmark(sess, tf.constant(1.0) + 1.0, burn_iters=1, min_iters=3, name="add")
    assert r["name"] == "add" and r["iters"] == 3 and r["wall_time"] >= 0


def test_stub_out():
    class Obj:
        value = 1

    stubs = tf.test.StubOutForTesting()
    stubs.Set(Obj, "value", 2)
    o = Obj()
    stubs.SmartSet(o, "extra", 5) if hasattr(o, "extra") else None
    assert Obj.value == 2
    stubs.CleanUp()
    assert Obj.value == 1
    with tf.test.StubOutForTesting() as s:
        s.SmartSet(os.path, "sep", "!")
        assert os.path.sep == "!"
    assert os.path.sep == "/"


def test_assert_equal_graph_def():
    def build(c):
        g = tf.Graph()
        with g.as_default():
            tf.add(tf.constant(1.0, name="a"), tf.constant(c, name="b"), name="s")
        return g.as_graph_def()

    tf.test.assert_equal_graph_def(build(2.0), build(2.0))
    with pytest.raises(AssertionError, match="node 'b'"):
        tf.test.assert_equal_graph_def(build(2.0), build(3.0))
    with pytest.raises(TypeError):
        tf.test.assert_equal_graph_def(build(2.0), 1)
