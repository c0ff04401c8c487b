"""`dflow.test`: TF1's `tf.test`: `TestCase` (unittest's, with TF's session helpers and array
assertions), `main`, gradient checking (`compute_gradient*`), `Benchmark`, `StubOutForTesting`,
`assert_equal_graph_def` and the build/device queries (a GPU is cupy's; dflow has no ROCm or XLA
build).
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import tempfile
import time
import unittest
from unittest import mock

import numpy as np

from .devices import ConfigProto, DeviceSpec
from .errors import OpError
from .graph.gradients import gradients
from .graph.graph import (
    get_default_graph,
    get_default_session,
    reset_default_graph,
    set_random_seed,
)
from .graph.indexed_slices import IndexedSlices
from .graph.ops import Operation, Tensor
from .kernels.array_ops import placeholder
from .kernels.common import convert_to_tensor
from .kernels.sparse_ops import SparseTensor, SparseTensorValue
from .schedule.session import Session

__all__ = ["compute_gradient", "compute_gradient_error", "is_gpu_available", "is_built_with_cuda", "TestCase", "main",
           "get_temp_dir", "gpu_device_name", "is_built_with_gpu_support", "is_built_with_rocm", "is_built_with_xla",
           "Benchmark", "benchmark_config", "StubOutForTesting", "assert_equal_graph_def", "mock",
           "disable_with_predicate", "with_eager_op_as_function"]


def _session(x):
    sess = get_default_session()
    if sess is None:
        raise ValueError("compute_gradient needs a default session: use `with tf.Session():`")
    return sess


def _jacobians(x, x_shape, y, y_shape, x_init_value, delta, extra_feed_dict):
    sess = _session(x)
    x_shape, y_shape = tuple(x_shape), tuple(y_shape)
    xdt = x.dtype.np_dtype
    if x_init_value is None:
        x_init_value = np.random.default_rng(0).standard_normal(x_shape).astype(xdt)
    x0 = np.asarray(x_init_value, dtype=xdt).reshape(x_shape)
    feed = dict(extra_feed_dict or {})
    nx, ny = int(np.prod(x_shape)), int(np.prod(y_shape))
    dy = placeholder(y.dtype, y_shape)
    (dx,) = gradients(y, x, grad_ys=dy)
    if isinstance(dx, IndexedSlices):  # a gather's sparse gradient: compared densified
        dx = convert_to_tensor(dx)
    theoretical = np.zeros((nx, ny), dtype=xdt)
    if dx is not None:
        for j in range(ny):
            e = np.zeros(ny, dtype=y.dtype.np_dtype)
            e[j] = 1
            feed_j = {**feed, x: x0, dy: e.reshape(y_shape)}
            theoretical[:, j] = np.asarray(sess.run(dx, feed_j)).reshape(-1)
    numerical = np.zeros((nx, ny), dtype=xdt)
    for i in range(nx):
        xp, xm = x0.copy().reshape(-1), x0.copy().reshape(-1)
        xp[i] += delta
        xm[i] -= delta
        yp = np.asarray(sess.run(y, {**feed, x: xp.reshape(x_shape)}), dtype=np.float64).reshape(-1)
        ym = np.asarray(sess.run(y, {**feed, x: xm.reshape(x_shape)}), dtype=np.float64).reshape(-1)
        numerical[i, :] = (yp - ym) / (2 * delta)
    return theoretical, numerical


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                     extra_feed_dict=None):
    """(theoretical, numerical) Jacobians of y w.r.t. x, each of shape (x size, y size), using the
    default session; x is fed (any tensor can be), so it needs no initializer."""
    if isinstance(x, (list, tuple)):
        return [compute_gradient(xi, si, y, y_shape, None if x_init_value is None else x_init_value[i], delta,
                                 init_targets, extra_feed_dict) for i, (xi, si) in enumerate(zip(x, x_shape))]
    if init_targets:
        _session(x).run(init_targets)
    return _jacobians(x, x_shape, y, y_shape, x_init_value, delta, extra_feed_dict)


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                           extra_feed_dict=None):
    """The largest absolute difference between the theoretical and numerical Jacobians."""
    res = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets, extra_feed_dict)
    pairs = res if isinstance(res, list) else [res]
    return max(float(np.max(np.abs(t - n))) if t.size else 0.0 for t, n in pairs)


def is_built_with_cuda():
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """True when cupy is installed and sees a GPU."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no cupy, no driver or no device all mean "no GPU"
        return False


def is_built_with_gpu_support():
    """True when dflow can run on a GPU (cupy is installed), as `is_built_with_cuda`."""
    return is_built_with_cuda()


def is_built_with_rocm():
    """False: dflow's GPU arrays are cupy's CUDA ones."""
    return False


def is_built_with_xla():
    """False: dflow compiles graphs to Dask plans, not XLA."""
    return False


def gpu_device_name():
    """'/device:GPU:0' when a GPU is available, else ''."""
    return "/device:GPU:0" if is_gpu_available() else ""


_TEMP_DIR = []


def get_temp_dir():
    """A temporary directory for the test program (made once per process; TF's tf.test.get_temp_dir)."""
    if not _TEMP_DIR:
        _TEMP_DIR.append(tempfile.mkdtemp(prefix="dflow_test_"))
    return _TEMP_DIR[0]


def main(argv=None):
    """Runs the tests of `__main__` (unittest's runner), as `tf.test.main()`."""
    return unittest.main(module="__main__", argv=argv if argv is not None else sys.argv)


def benchmark_config():
    """The ConfigProto TF's benchmarks use (graph optimizations off changes nothing in dflow)."""
    return ConfigProto()


def disable_with_predicate(pred, skip_message):
    """A test decorator: the test is skipped (with `skip_message`) when `pred()` is true."""

    def decorator(fn):
        @functools.wraps(fn)
        def wrapped(self, *args, **kwargs):
            if pred():
                self.skipTest(skip_message)
            return fn(self, *args, **kwargs)

        return wrapped

    return decorator


def with_eager_op_as_function(cls=None, only_as_function=False):
    """The test class unchanged: TF runs it again with a runtime option dflow does not have."""
    if cls is None:
        return lambda c: c
    return cls


def _is_structure(x):
    return isinstance(x, (list, tuple, dict))


def _numeric_lists(a, b):
    """Both convert to numeric arrays of one shape (then they are compared as arrays)."""
    try:
        x, y = np.asarray(a), np.asarray(b)
    except ValueError:
        return False
    return x.dtype != object and y.dtype != object and x.shape == y.shape


class TestCase(unittest.TestCase):
    """unittest.TestCase with TF1's helpers: each test starts with a fresh default graph (graph seed
    87654321, as TF's); `session()`/`cached_session()` give a Session on it, `evaluate` runs tensors
    (nested structures too) in the default or cached session, and the assertions compare arrays."""

    def __init__(self, methodName="runTest"):  # noqa: N803 - unittest's name
        super().__init__(methodName)
        self._cached_session = None
        self._tempdir = None

    def setUp(self):
        super().setUp()
        self._clear_cached_session()
        np.random.seed(87654321)
        reset_default_graph()
        set_random_seed(87654321)

    def tearDown(self):
        self._clear_cached_session()
        super().tearDown()

    def _clear_cached_session(self):
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None

    def get_temp_dir(self):
        """A temporary directory of this test (removed with the process's temp dir, never shared)."""
        if self._tempdir is None:
            self._tempdir = tempfile.mkdtemp(dir=get_temp_dir())
        return self._tempdir

    def create_tempdir(self):
        return tempfile.mkdtemp(dir=self.get_temp_dir())

    # ---- sessions ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """A new Session on `graph` (default: the default graph), entered as default with its graph."""
        if force_gpu and not is_gpu_available():
            self.skipTest("force_gpu: no GPU available")
        graph = get_default_graph() if graph is None else graph
        sess = Session(graph=graph, config=config)
        with sess:
            yield sess

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """One Session per test (closed in tearDown), entered as default with its graph."""
        if force_gpu and not is_gpu_available():
            self.skipTest("force_gpu: no GPU available")
        graph = get_default_graph() if graph is None else graph
        if self._cached_session is None or self._cached_session.graph is not graph:
            self._clear_cached_session()
            self._cached_session = Session(graph=graph, config=config)
        sess = self._cached_session
        with graph.as_default(), sess.as_default():
            yield sess

    def test_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """TF1's older name of `cached_session` (not a test: runners skip it)."""
        return self.cached_session(graph, config, use_gpu, force_gpu)

    test_session.__test__ = False

    def evaluate(self, tensors):
        """The numpy values of `tensors` (a tensor, op, SparseTensor or a nested structure of them):
        in the default session, else in this test's cached session."""
        sess = get_default_session()
        if sess is None:
            with self.cached_session() as sess:
                return sess.run(tensors)
        return sess.run(tensors)

    # ---- assertions --------------------------------------------------------------------------
    def _value(self, a):
        if isinstance(a, (Tensor, Operation, SparseTensor)) or hasattr(a, "_as_graph_element"):
            a = self.evaluate(a)
        if isinstance(a, SparseTensorValue):
            return a
        return np.asarray(a) if not isinstance(a, np.ndarray) else a

    def _assert_close(self, a, b, rtol, atol, msg, path):
        if isinstance(a, (Tensor, SparseTensor)) or hasattr(a, "_as_graph_element"):
            a = self.evaluate(a)
        if isinstance(b, (Tensor, SparseTensor)) or hasattr(b, "_as_graph_element"):
            b = self.evaluate(b)
        if _is_structure(a) and _is_structure(b) and (isinstance(a, dict) or isinstance(b, dict)
                                                      or not _numeric_lists(a, b)):
            if isinstance(a, dict) != isinstance(b, dict):
                self.fail(f"{path}: one is a dict and the other is not: {a!r} vs {b!r}. {msg or ''}")
            if isinstance(a, dict):
                self.assertEqual(set(a), set(b), f"{path}: mismatched keys. {msg or ''}")
                for k in a:
                    self._assert_close(a[k], b[k], rtol, atol, msg, f"{path}[{k!r}]")
                return
            self.assertEqual(len(a), len(b), f"{path}: mismatched lengths {len(a)} vs {len(b)}. {msg or ''}")
            for i, (x, y) in enumerate(zip(a, b)):
                self._assert_close(x, y, rtol, atol, msg, f"{path}[{i}]")
            return
        a, b = self._value(a), self._value(b)
        self.assertEqual(a.shape, b.shape, f"{path}: shape mismatch: expected {a.shape}, got {b.shape}. "
                                           f"{msg or ''}")
        if a.dtype.kind in "OSUb" or b.dtype.kind in "OSUb":
            np.testing.assert_array_equal(a, b, err_msg=f"{path} {msg or ''}")
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{path} {msg or ''}")

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802 - TF's names
        """Every entry of a and b (arrays, tensors, nested lists/tuples/dicts of them) within
        atol + rtol * |b|; NaNs match NaNs."""
        self._assert_close(a, b, rtol, atol, msg, "")

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6,  # noqa: N802
                                      float_atol=1e-6, half_rtol=1e-3, half_atol=1e-3, bfloat16_rtol=1e-2,
                                      bfloat16_atol=1e-2, msg=None):
        """assertAllClose with the tolerance of the lower precision of a and b (TF's rule)."""
        a, b = self._value(a), self._value(b)
        kinds = {a.dtype.type, b.dtype.type}
        if np.float16 in kinds:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        elif np.float32 in kinds or np.complex64 in kinds:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        self.fail(msg or "The two values are close at all elements")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        """a and b have the same shape and equal entries."""
        a, b = self._value(a), self._value(b)
        self.assertEqual(a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got {b.shape}. {msg or ''}")
        np.testing.assert_array_equal(a, b, err_msg=msg or "")

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        try:
            self.assertAllEqual(a, b, msg)
        except AssertionError:
            return
        self.fail(msg or "The two values are equal at all elements")

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        self.assertTrue(f1 == f2 or abs(f1 - f2) <= err, f"{f1!r} != {f2!r} +/- {err!r}{' (' + msg + ')' if msg else ''}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):  # noqa: N802
        self.assertTrue(np.linalg.norm(np.asarray(ndarray1) - np.asarray(ndarray2)) <= err, msg)

    def _all_cmp(self, a, comparison, what):
        a = self._value(a)
        if not np.all(comparison(a)):
            self.fail(f"Not all entries are {what}: {a!r}")

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self._all_cmp(a, lambda x: x > comparison_target, f"> {comparison_target}")

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self._all_cmp(a, lambda x: x < comparison_target, f"< {comparison_target}")

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self._all_cmp(a, lambda x: x >= comparison_target, f">= {comparison_target}")

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self._all_cmp(a, lambda x: x <= comparison_target, f"<= {comparison_target}")

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        t = self._value(target)
        lo = t > lower_bound if open_lower_bound else t >= lower_bound
        hi = t < upper_bound if open_upper_bound else t <= upper_bound
        if not np.all(lo & hi):
            self.fail(f"{t!r} is not in the range {'(' if open_lower_bound else '['}{lower_bound}, {upper_bound}"
                      f"{')' if open_upper_bound else ']'}")

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        t = self._value(target)
        diff = set(np.unique(t).tolist()) - set(expected_set)
        if diff:
            self.fail(f"{sorted(diff)!r} unexpected values not in {set(expected_set)!r}")

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        t = self._value(target)
        self.assertEqual(t.dtype, np.dtype(getattr(expected_dtype, "np_dtype", expected_dtype)))

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        """The numpy array's shape equals the tensor's static shape."""
        self.assertEqual(list(np.shape(np_array)), tf_tensor.get_shape().as_list(), msg)

    def assertDeviceEqual(self, device1, device2, msg=None):  # noqa: N802
        self.assertEqual(DeviceSpec.from_string(device1 or "").to_string(),
                         DeviceSpec.from_string(device2 or "").to_string(), msg)

    def assertStartsWith(self, actual, expected_start, msg=None):  # noqa: N802
        if not actual.startswith(expected_start):
            self.fail(f"{actual!r} does not start with {expected_start!r}{' : ' + msg if msg else ''}")

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):  # noqa: N802
        """The block raises `exception_type` whose message matches the regex (or the predicate holds)."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(e):
                text = getattr(e, "message", None) or str(e)
                return re.search(expected_err_re_or_predicate, text) is not None
        try:
            yield
        except exception_type as e:
            if not predicate(e):
                raise AssertionError(f"Exception of type {type(e).__name__}: {e}") from e
        else:
            self.fail(f"{exception_type.__name__} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        """The block raises an OpError (any dflow.errors class) whose message matches."""
        return self.assertRaisesWithPredicateMatch(OpError, expected_err_re_or_predicate)

    def assertProtoEquals(self, expected_message_maybe_ascii, message, msg=None):  # noqa: N802
        """Two protobuf messages equal (the expected one may be text format)."""
        if isinstance(expected_message_maybe_ascii, str):
            from google.protobuf import text_format

            expected = type(message)()
            text_format.Parse(expected_message_maybe_ascii, expected)
        else:
            expected = expected_message_maybe_ascii
        self.assertEqual(expected, message, msg)


class Benchmark:
    """TF's benchmark base: `run_op_benchmark` times `sess.run` and `report_benchmark` records (and
    prints) the figures; subclasses name methods `benchmark*`."""

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None, extras=None,
                         name=None, metrics=None):
        entry = {"name": name or type(self).__name__, "iters": iters, "cpu_time": cpu_time,
                 "wall_time": wall_time, "throughput": throughput, "extras": extras or {},
                 "metrics": metrics or []}
        self.__dict__.setdefault("_reports", []).append(entry)
        print(f"benchmark {entry['name']}: iters={iters} wall_time={wall_time}", file=sys.stderr)
        return entry

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters=2, min_iters=10,
                         store_trace=False, store_memory_usage=True, name=None, extras=None, mbs=0):
        """Runs `op_or_tensor` burn_iters times, then min_iters timed times; the report's dict with
        the median wall time per run in seconds."""
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        deltas = []
        for _ in range(min_iters):
            start = time.perf_counter()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            deltas.append(time.perf_counter() - start)
        wall = float(np.median(deltas)) if deltas else 0.0
        extras = dict(extras or {})
        if mbs and wall:
            extras["throughput_mb_per_sec"] = mbs / wall
        return self.report_benchmark(iters=min_iters, wall_time=wall, extras=extras, name=name)

    def evaluate(self, tensors):
        sess = get_default_session()
        if sess is None:
            raise ValueError("Benchmark.evaluate needs a default session")
        return sess.run(tensors)


class StubOutForTesting:
    """TF's stubout: `Set`/`SmartSet` replace an attribute, `UnsetAll`/`SmartUnsetAll` (and
    `CleanUp`) put every replaced attribute back, last first."""

    def __init__(self):
        self.cache = []
        self.stubs = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.CleanUp()

    def CleanUp(self):  # noqa: N802 - TF's names
        self.SmartUnsetAll()
        self.UnsetAll()

    def SmartSet(self, obj, attr_name, new_attr):  # noqa: N802
        self.stubs.append((obj, attr_name, getattr(obj, attr_name), attr_name in vars(obj)))
        setattr(obj, attr_name, new_attr)

    def SmartUnsetAll(self):  # noqa: N802
        for obj, attr_name, old, own in reversed(self.stubs):
            if own:
                setattr(obj, attr_name, old)
            else:
                delattr(obj, attr_name)
        self.stubs = []

    def Set(self, parent, child_name, new_child):  # noqa: N802
        old_child = getattr(parent, child_name)
        old_attribute = parent.__dict__.get(child_name)
        if old_attribute is not None and isinstance(old_attribute, staticmethod):
            old_child = staticmethod(old_child)
        self.cache.append((parent, old_child, child_name))
        setattr(parent, child_name, new_child)

    def UnsetAll(self):  # noqa: N802
        for parent, old_child, child_name in reversed(self.cache):
            setattr(parent, child_name, old_child)
        self.cache = []


def assert_equal_graph_def(actual, expected, checkpoint_v2=False, hash_table_shared_name=False):
    """AssertionError (naming the first differing node) unless the two GraphDefs have the same nodes,
    by name, op, inputs, device and attrs, in any order."""
    def nodes(gd, which):
        if not hasattr(gd, "node"):
            raise TypeError(f"assert_equal_graph_def: {which} must be a GraphDef, got {type(gd).__name__}")
        return {n.name: n.to_json() if hasattr(n, "to_json") else n for n in gd.node}

    a, e = nodes(actual, "actual"), nodes(expected, "expected")
    if set(a) != set(e):
        raise AssertionError(f"Graphs differ in nodes: only in actual: {sorted(set(a) - set(e))}, only in expected: "
                             f"{sorted(set(e) - set(a))}")
    for name in sorted(a):
        if a[name] != e[name]:
            raise AssertionError(f"Graphs differ at node {name!r}:\n  actual:   {a[name]}\n  expected: {e[name]}")



