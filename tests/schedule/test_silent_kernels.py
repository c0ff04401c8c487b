"""Kernels stay silent where TF1 is: log(0), sqrt(-1), x/0, 0/0 and overflows give inf/nan with no
numpy RuntimeWarning reaching the user, in process, in Dask tasks on every local scheduler, and
when the graph is built (constant folding); check_numerics still raises."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dflow as tf
from dflow.graph.ops import constant_value


def _edge_graph():
    x = tf.placeholder(tf.float32, [4])
    y = tf.placeholder(tf.float32, [4])
    fetches = {
        "log": tf.log(x),  # log(0) = -inf, log(-1) = nan
        "sqrt": tf.sqrt(x),
        "div": x / y,  # x/0 and 0/0
        "exp": tf.exp(x * 100.0),  # overflow
        "sum": tf.reduce_sum(tf.log(x)),  # through a non-elementwise op too
        "matmul": tf.matmul(tf.reshape(tf.log(x), [2, 2]), tf.reshape(tf.log(x), [2, 2])),
        "pow": tf.pow(x, -1.0),
    }
    feed = {x: np.array([0.0, -1.0, 1.0, 4.0], np.float32), y: np.array([0.0, 0.0, 2.0, 0.0], np.float32)}
    return fetches, feed


def _expected(feed):
    x, y = (np.asarray(v, np.float64) for v in feed.values())
    with np.errstate(all="ignore"):
        lg = np.log(x)
        want = {"log": lg, "sqrt": np.sqrt(x), "div": x / y, "exp": np.exp(x * 100.0), "sum": lg.sum(),
                "matmul": lg.reshape(2, 2) @ lg.reshape(2, 2), "pow": x ** -1.0}
        return {k: v.astype(np.float32) for k, v in want.items()}


@pytest.mark.program
def test_no_runtime_warning_reaches_the_user():
    fetches, feed = _edge_graph()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any RuntimeWarning would fail the run
        with tf.Session() as sess:
            got = sess.run(fetches, feed)
            again = sess.run(fetches, feed)  # a second run on the same (warm) pool threads
    want = _expected(feed)
    for k in fetches:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, err_msg=k)
        np.testing.assert_array_equal(got[k], again[k], err_msg=k)
    assert np.isneginf(got["log"][0]) and np.isnan(got["log"][1]) and np.isnan(got["div"][0])
    assert np.isinf(got["div"][3]) and np.isinf(got["exp"][3])


@pytest.mark.parametrize("mode", ["eager", "sync", "threads", "processes"])
def test_no_runtime_warning_on_each_scheduler(mode, sess_factory, capfd):
    fetches, feed = _edge_graph()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sess_factory(mode, chunks=2).run(fetches, feed)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]
    assert "RuntimeWarning" not in capfd.readouterr().err  # a worker process would print it there


def test_constant_folding_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zero = tf.constant(0.0)
        folded = tf.log(zero) - tf.constant(1.0) / zero  # -inf - inf
        assert np.isneginf(constant_value(folded))
        with tf.Session() as sess:
            assert np.isneginf(sess.run(folded))


def test_numpy_error_state_of_the_caller_is_untouched(sess_factory):
    fetches, feed = _edge_graph()
    before = np.geterr()
    for mode in ("eager", "sync", "threads"):
        sess_factory(mode).run(fetches, feed)
    assert np.geterr() == before


@pytest.mark.program
def test_check_numerics_still_raises():
    x = tf.placeholder(tf.float32, [2])
    checked = tf.check_numerics(tf.log(x), "log of x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(checked, {x: [1.0, 2.0]}), np.log([1.0, 2.0]), rtol=1e-6)
            with pytest.raises(tf.errors.InvalidArgumentError, match="log of x"):
                sess.run(checked, {x: [0.0, 1.0]})
