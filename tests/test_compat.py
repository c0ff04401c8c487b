"""`tf.compat.v1` is dflow's own TF1 namespace; TF's bytes/text helpers; the TF2 switches TF1 code calls."""

import importlib
import subprocess
import sys
import types
from pathlib import Path

import dflow.compat.v1 as tf
import numpy as np
import pytest

import dflow
from dflow.compat import v1

ROOT = Path(__file__).resolve().parents[1]


def test_import_forms_give_the_dflow_namespace_itself():
    assert tf is dflow and v1 is dflow and dflow.compat.v1 is dflow
    assert sys.modules["dflow.compat.v1"] is dflow
    assert tf.placeholder is dflow.placeholder and tf.Session is dflow.Session
    assert tf.compat.v1.nn.relu is dflow.nn.relu and tf.compat.v1.train is dflow.train
    assert tf.compat.v1.compat.v1 is dflow


def test_every_submodule_is_the_same_module_under_compat_v1():
    # whatever public modules the namespace has (nn, train, losses, layers, ... as they are added)
    subs = {n: m for n, m in vars(dflow).items() if isinstance(m, types.ModuleType) and not n.startswith("_")}
    assert {"nn", "train", "losses", "io", "math", "dtypes"} <= set(subs)
    for name, module in subs.items():
        assert getattr(dflow.compat.v1, name) is module
        assert importlib.import_module(f"dflow.compat.v1.{name}") is module, name


def test_a_fresh_interpreter_imports_compat_v1_first():
    # `import dflow.compat.v1 as tf` as the first dflow import, and a submodule by its v1 path: no second copy
    code = "\n".join([
        "import sys",
        "import dflow.compat.v1 as tf",
        "import dflow.compat.v1.nn as nn",
        "from dflow.compat.v1 import train",
        "import dflow",
        "assert tf is dflow and nn is dflow.nn and train is dflow.train",
        "copies = {id(m) for m in sys.modules.values() if getattr(m, '__file__', '') == dflow.nn.__file__}",
        "assert len(copies) == 1, copies",
        "print('ok')"])
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


@pytest.mark.program
def test_a_tf1_program_written_against_compat_v1():
    tf.disable_eager_execution()
    tf.disable_v2_behavior()
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(32, 3)).astype(np.float32)
    ys = (xs @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.25).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.variable_scope("linear"):
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.losses.mean_squared_error(y, tf.matmul(x, w) + b)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    assert w.name == "linear/w:0"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(20):
            _, got = sess.run([train_op, loss], {x: xs, y: ys})
        w_got, b_got = sess.run([w, b])
    # the same 20 steps of gradient descent in numpy (the loss fetched is the one before each step)
    wn, bn = np.zeros((3, 1)), np.zeros(1)
    for _ in range(20):
        err = xs @ wn + bn - ys
        want = np.mean(err ** 2)
        wn, bn = wn - 0.1 * 2 * xs.T @ err / len(xs), bn - 0.1 * 2 * err.mean(0)
    np.testing.assert_allclose(got, want, rtol=1e-4)
    np.testing.assert_allclose(w_got, wn, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(b_got, bn, rtol=1e-4, atol=1e-6)


def test_switches_that_ask_for_tf1_behaviour_are_accepted():
    for name in ["disable_eager_execution", "disable_v2_behavior", "disable_v2_tensorshape",
                 "disable_resource_variables", "disable_control_flow_v2", "disable_tensor_equality"]:
        assert getattr(tf, name)() is None
    for name in ["executing_eagerly", "executing_eagerly_outside_functions", "resource_variables_enabled",
                 "control_flow_v2_enabled"]:
        assert getattr(tf, name)() is False


def test_enable_v2_behavior_says_it_is_not_provided_and_eager_execution_needs_program_start():
    with pytest.raises(dflow.errors.UnimplementedError, match="TF2 behaviour is not provided"):
        tf.enable_v2_behavior()
    tf.constant(1.0)  # a graph op exists now: TF1 refuses to switch to eager execution
    with pytest.raises(ValueError, match="must be called at program startup"):
        tf.enable_eager_execution()
    assert tf.executing_eagerly() is False


def test_bytes_and_text_helpers_as_tf():
    c = tf.compat
    assert c.as_bytes("héllo") == "héllo".encode() and c.as_bytes(b"x") == b"x"
    assert c.as_bytes(bytearray(b"ab")) == b"ab" and type(c.as_bytes(bytearray(b"ab"))) is bytes
    assert c.as_bytes("é", "latin-1") == b"\xe9"
    assert c.as_text(b"h\xc3\xa9") == "hé" and c.as_text("s") == "s" and c.as_str is c.as_text
    assert c.as_str_any(b"ab") == "ab" and c.as_str_any(3) == "3"
    assert c.path_to_str(Path("a/b")) == "a/b" and c.path_to_str(7) == 7
    with pytest.raises(TypeError, match="Expected binary or unicode string, got 3"):
        c.as_bytes(3)
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        c.as_text(bytearray(b"a"))  # TF's as_text takes no bytearray
    with pytest.raises(LookupError):
        c.as_bytes("a", "no-such-codec")
    assert isinstance(np.int8(1), c.integral_types) and isinstance(2.0, c.real_types)
    assert isinstance(1j, c.complex_types) and isinstance("s", c.bytes_or_text_types)


def test_a_submodule_imported_later_is_the_same_module_under_compat_v1():
    # dflow.cli (the command) is imported only when used, after compat.v1 was installed: no second copy
    import dflow.cli

    assert importlib.import_module("dflow.compat.v1.cli") is dflow.cli
    assert importlib.import_module("dflow.compat.v1.cli.run") is importlib.import_module("dflow.cli.run")
    assert dflow.cli.__spec__.name == "dflow.cli"
