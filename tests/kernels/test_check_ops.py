"""Debugging ops: Assert and assert_*, check_numerics, add_check_numerics_ops, Print and print.

Build-time outcomes (static ranks, dtypes, constant values) raise when the graph is built, as
TF1; the rest raise InvalidArgumentError with TF1's message when they run, only when a fetch
depends on them, on every scheduler. Message formats are TF1's (checked against TF 1.x output).
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import dflow as tf
from dflow.kernels import check_ops as co
from tests.conftest import LOCAL_MODES, make_session, run_modes

IAE = tf.errors.InvalidArgumentError


def _each_mode(fetch, feed=None, modes=LOCAL_MODES):
    """The results of `fetch` in each mode (dask modes with chunks of 2)."""
    out = []
    for m in modes:
        with make_session(m, chunks=2) as s:
            out.append(s.run(fetch, feed))
    return out


def _raises(fetch, feed, match, modes=LOCAL_MODES):
    """The error's TF1 message (before the op's "Original stack trace") matches `match`."""
    for m in modes:
        with make_session(m, chunks=2) as s, pytest.raises(IAE) as caught:
            s.run(fetch, feed)
        head, _, origin = str(caught.value).partition("\n\nOriginal stack trace for ")
        assert re.search(match, head), f"{match!r} does not match {head!r}"
        assert "test_check_ops.py" in origin


# ---- Assert guarding an add, on every scheduler --------------------------------------------------


def test_assert_guarding_an_add_and_print_passing_through(any_mode, sess_factory):
    x, y = tf.placeholder(tf.float32, [6]), tf.placeholder(tf.float32, [6])
    check = co.assert_less(x, y, message="x must stay below y", summarize=4)
    with tf.control_dependencies([check]):
        total = x + y
    unused = co.Assert(tf.constant(False), ["nobody depends on me"])
    printed = co.Print(x * 2.0, [x, "text"], "values: ", summarize=2)
    (g,) = tf.gradients(tf.reduce_sum(printed), [x])
    assert isinstance(check, tf.Operation) and isinstance(unused, tf.Operation)
    assert printed.shape.as_list() == [6] and printed.op.type == "Print"
    a = np.arange(6, dtype=np.float32)
    with sess_factory(any_mode, chunks=2) as s:
        got = s.run([total, printed, g], {x: a, y: a + 1})
        assert s.run(check, {x: a, y: a + 1}) is None
        with pytest.raises(IAE) as err:
            s.run(total, {x: a, y: a})
        with pytest.raises(IAE, match="nobody depends on me"):
            s.run(unused)
    np.testing.assert_array_equal(got[0], 2 * a + 1)
    np.testing.assert_array_equal(got[1], 2 * a)
    np.testing.assert_array_equal(got[2], np.full(6, 2.0))
    expected = ("assertion failed: [x must stay below y] [Condition x < y did not hold element-wise:] "
                "[x (Placeholder:0) = ] [0 1 2 3...] [y (Placeholder_1:0) = ] [0 1 2 3...]")
    # TF1 names the node, and the error's op is it (a cluster's too: executors note the failing task)
    message, origin = str(err.value).split("\n\nOriginal stack trace for 'assert_less/Assert':\n")
    assert message == expected + "\n\t [[node assert_less/Assert]]"
    assert "test_check_ops.py" in origin  # where the user made the assert
    assert err.value.op is not None and err.value.op.name == "assert_less/Assert"


def test_assert_messages_summarize_like_tf1():
    """Nested summaries and float formats as TF1 prints them (the dask path cuts the data first)."""
    cube = tf.reshape(tf.range(60), [3, 4, 5])
    floats = tf.constant([0.1, 1 / 3, 2.0, 1e10], tf.float32)
    cases = [
        (co.Assert(False, ["data:", cube], summarize=7), r"^assertion failed: \[data:\] \[\[\[0 1 2 3 4\]\[5 6\.\.\.\]\]\.\.\.\]\n\t \[\[node Assert(_\d+)?\]\]$"),
        (co.Assert(False, [cube], summarize=30), r"\[\[20 21 22 23 24\]\[25 26 27 28 29\]\]\.\.\.\]\n\t \[\[node Assert_\d+\]\]$"),
        (co.Assert(False, [floats, tf.constant([True, False]), 3], summarize=-1),
         r"^assertion failed: \[0\.1 0\.333333343 2 1e\+10\] \[1 0\] \[3\]\n\t \[\[node Assert_\d+\]\]$"),
    ]
    for op, match in cases:
        _raises(op, None, match)


def test_assert_condition_must_be_a_bool_scalar():
    with pytest.raises(TypeError, match="bool"):
        co.Assert(tf.constant(1.0), ["x"])
    p = tf.placeholder(tf.bool, [None])
    _raises(co.Assert(p, ["x"]), {p: [True, True]}, r"should be a scalar: \[2\]")


# ---- the assert_* family -------------------------------------------------------------------------------


@pytest.mark.parametrize("fn,ok,bad,sym", [
    (co.assert_equal, ([1, 2], [1, 2]), ([1, 2], [1, 3]), "=="),
    (co.assert_none_equal, ([1, 2], [2, 1]), ([1, 2], [1, 3]), "!="),
    (co.assert_less, ([1, 2], [2, 3]), ([1, 2], [2, 2]), "<"),
    (co.assert_less_equal, ([1, 2], [1, 3]), ([1, 4], [2, 3]), "<="),
    (co.assert_greater, ([2, 3], [1, 2]), ([2, 2], [1, 2]), ">"),
    (co.assert_greater_equal, ([2, 3], [2, 2]), ([2, 1], [2, 2]), ">="),
])
def test_binary_asserts(fn, ok, bad, sym):
    x, y = tf.placeholder(tf.int32, [2]), tf.placeholder(tf.int32, [2])
    op = fn(x, y)
    assert op.type == "Assert" and op.name.startswith(fn.__name__)
    _each_mode(op, {x: ok[0], y: ok[1]})
    _raises(op, {x: bad[0], y: bad[1]}, f"Condition x {sym} y did not hold element-wise")
    with pytest.raises(IAE, match=f"Condition x {sym} y"):  # constants: decided when the graph is built
        fn(tf.constant(bad[0]), tf.constant(bad[1]))
    assert fn(tf.constant(ok[0]), tf.constant(ok[1])).type == "Assert"


def test_binary_assert_broadcasts_and_checks_dtypes():
    x = tf.placeholder(tf.float32, [3])
    _each_mode(co.assert_equal(x, 1.0), {x: [1, 1, 1]})
    with pytest.raises(TypeError):
        co.assert_equal(tf.constant([1, 1]), tf.constant(1.0))
    assert co.assert_equal(x, x).type == "NoOp"


@pytest.mark.parametrize("fn,sym,ok,bad", [
    (co.assert_positive, "> 0", [1, 2], [1, 0]),
    (co.assert_negative, "< 0", [-1, -2], [-1, 0]),
    (co.assert_non_negative, ">= 0", [0, 2], [0, -1]),
    (co.assert_non_positive, "<= 0", [0, -2], [0, 1]),
])
def test_unary_asserts(fn, sym, ok, bad):
    x = tf.placeholder(tf.float32, [2])
    op = fn(x, message="M")
    _each_mode(op, {x: ok})
    _raises(op, {x: bad}, rf"^assertion failed: \[M\.  \] \[Condition x {sym} did not hold")
    with pytest.raises(IAE, match=f"Condition x {sym}"):
        fn(tf.constant(bad, tf.float32))


def test_rank_asserts_static_and_dynamic():
    x = tf.placeholder(tf.float32, [3, None])
    with pytest.raises(ValueError, match=r"must have rank 1\.  Received rank 2"):
        co.assert_rank(x, 1)
    with pytest.raises(ValueError, match="must have rank at least 3"):
        co.assert_rank_at_least(x, 3)
    assert co.assert_rank(x, 2).type == "NoOp" and co.assert_rank_at_least(x, 1).type == "NoOp"
    with pytest.raises(TypeError, match="must be of type tf.int32"):
        co.assert_rank(x, tf.constant(2, tf.int64))
    z = tf.placeholder(tf.float32)
    exact, least = co.assert_rank(z, 2, message="RANK"), co.assert_rank_at_least(z, 2)
    _each_mode([exact, least], {z: np.ones((2, 2), np.float32)})
    _raises(exact, {z: [1.0, 2.0]}, r"^assertion failed: \[RANK\.  \] \[Tensor Placeholder_1:0 must have rank\] "
                                    r"\[2\] \[Received shape: \] \[2\]\n\t \[\[node assert_rank_\d+/Assert\]\]$")
    _raises(least, {z: [1.0, 2.0]}, "must have rank at least")


def test_type_asserts():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(TypeError, match=r"^M\.  Const:0 must be of type tf.float64; got tf.float32$"):
        co.assert_type(x, tf.float64, message="M")
    assert co.assert_type(x, tf.float32).type == "NoOp"
    with pytest.raises(TypeError, match=r"Expected \"x\" to be integer type"):
        co.assert_integer(x)
    assert co.assert_integer(tf.constant(1)).type == "NoOp"
    assert co.assert_scalar(tf.constant(1.0)).shape.ndims == 0
    with pytest.raises(ValueError, match="Expected scalar shape"):
        co.assert_scalar(x)


# ---- check_numerics ---------------------------------------------------------------------------------------


def test_check_numerics():
    x = tf.placeholder(tf.float32, [4])
    c = co.check_numerics(x * 2.0, "bad")
    assert c.shape.as_list() == [4] and c.op.type == "CheckNumerics"
    np.testing.assert_array_equal(run_modes(c, {x: np.arange(4, dtype=np.float32)}), 2 * np.arange(4))
    _raises(c, {x: [1, np.nan, 2, 3]}, r"^bad : Tensor had NaN values\n\t \[\[node CheckNumerics\]\]$")
    _raises(c, {x: [1, 2, np.inf, 3]}, r"^bad : Tensor had Inf values\n\t \[\[node CheckNumerics\]\]$")
    _raises(c, {x: [1, np.nan, np.inf, 3]}, r"^bad : Tensor had Inf and NaN values\n\t \[\[node CheckNumerics\]\]$", modes=["eager"])
    _raises(co.verify_tensor_all_finite(x, "all finite?"), {x: [1, np.inf, 2, 3]}, r"^all finite\? : Tensor had Inf")
    with pytest.raises(TypeError):
        co.check_numerics(tf.constant([1]), "ints")
    (g,) = tf.gradients(tf.reduce_sum(co.check_numerics(x, "m") * 3.0), [x])
    np.testing.assert_array_equal(run_modes(g, {x: np.arange(4, dtype=np.float32)}), np.full(4, 3.0))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log of a negative number, on purpose
def test_add_check_numerics_ops():
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.log(x)
    check = co.add_check_numerics_ops()
    assert check.type == "NoOp"
    np.testing.assert_allclose(_each_mode([y, check], {x: [1, 2, 3]})[0][0], np.log([1, 2, 3]), rtol=1e-6)
    _raises(check, {x: [1, -1, 3]}, r"Log:0 : Tensor had NaN values")


# ---- Print and print -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", LOCAL_MODES)
def test_print_writes_to_stderr(mode, capsys):
    x = tf.placeholder(tf.float32, [5])
    p = co.Print(x, [x, "text", tf.constant([[1, 2], [3, 4]])], "values: ", summarize=3)
    once = co.Print(x + 1.0, [x], "once: ", first_n=1)
    with make_session(mode, chunks=2) as s:
        for _ in range(2):
            s.run([p, once], {x: np.arange(5, dtype=np.float32)})
    err = capsys.readouterr().err
    assert err.count("values: [0 1 2...][text][[1 2][3...]...]\n") == 2
    assert err.count("once: [0 1 2...]\n") == 1


@pytest.mark.parametrize("mode", LOCAL_MODES)
def test_print_v2(mode, capsys, tmp_path):
    x = tf.placeholder(tf.int32, [10])
    op = co.print("x:", x, {"k": x[:2]}, tf.reshape(tf.range(6), [2, 3]), sep="|", output_stream=sys.stdout)
    path = tmp_path / "log.txt"
    to_file = co.print("to file", tf.constant(2.5), output_stream=f"file://{path}")
    with tf.control_dependencies([op]):
        y = x + 1
    assert isinstance(op, tf.Operation) and op.type == "PrintV2"
    with make_session(mode, chunks=3) as s:
        np.testing.assert_array_equal(s.run(y, {x: np.arange(10, dtype=np.int32)}), np.arange(1, 11))
        s.run(to_file)
    assert capsys.readouterr().out == "x:|[0 1 2 ... 7 8 9]|{'k': [0 1]}|[[0 1 2]\n [3 4 5]]\n"
    assert path.read_text() == "to file 2.5\n"
