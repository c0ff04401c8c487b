"""cond, case, while_loop and TensorArray: TF1's examples on every scheduler, gradients, errors."""

import numpy as np
import pytest

import dflow as tf


def test_cond_tf1_example(any_mode, sess_factory):
    x = tf.constant(2)
    y = tf.constant(5)
    r = tf.cond(tf.less(x, y), lambda: tf.multiply(x, 17), lambda: tf.add(y, 23))
    a, b = tf.constant(1), tf.constant(2)
    p = tf.placeholder(tf.bool, [])
    c = tf.cond(p, lambda: a + b, lambda: a * b)
    s = sess_factory(any_mode, chunks=2)
    assert s.run(r) == 34
    assert s.run(c, {p: True}) == 3
    assert s.run(c, {p: False}) == 2
    assert s.run(tf.where([True, False], [a + b, a + b], [a * b, a * b])).tolist() == [3, 2]


def test_only_the_taken_branch_runs(any_mode, sess_factory):
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])
    bad = tf.placeholder(tf.float32, [])  # never fed: the false branch must not need it
    out = tf.cond(p, lambda: tf.assign_add(v, 1.0), lambda: v + bad)
    s = sess_factory(any_mode, chunks=2)
    s.run(v.initializer)
    for _ in range(3):
        s.run(out, {p: True})
    assert s.run(v) == 3.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="must feed"):
        s.run(out, {p: False})
    assert s.run(v) == 3.0


def test_cond_nested_structures_and_shapes():
    x = tf.placeholder(tf.float32, [None, 3])
    p = tf.placeholder(tf.bool, [])
    out = tf.cond(p, lambda: {"a": x * 2, "b": (x[:, 0], tf.constant(1))},
                  lambda: {"a": x - 1, "b": (x[:, 1], tf.constant(2))})
    assert out["a"].shape.as_list() == [None, 3]
    xv = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    with tf.Session() as s:
        r = s.run(out, {x: xv, p: False})
    np.testing.assert_allclose(r["a"], xv - 1)
    np.testing.assert_allclose(r["b"][0], xv[:, 1])
    assert r["b"][1] == 2
    with pytest.raises(ValueError):
        tf.cond(p, lambda: x, lambda: (x, x))
    with pytest.raises(TypeError):
        tf.cond(p, lambda: tf.constant(1), lambda: tf.constant(1.0))


def test_case():
    x = tf.placeholder(tf.int32, [])
    r = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)), (tf.equal(x, 0), lambda: tf.constant(0))],
                default=lambda: tf.constant(1))
    with tf.Session() as s:
        assert [s.run(r, {x: v}) for v in (-5, 0, 7)] == [-1, 0, 1]


def test_while_loop_fibonacci_and_growing_concat(any_mode, sess_factory):
    i, a, b = tf.while_loop(lambda i, a, b: i < 5, lambda i, a, b: (i + 1, b, a + b),
                            [tf.constant(0), tf.constant(0), tf.constant(1)])
    i0, m0 = tf.constant(0), tf.ones([1, 1], dtype=tf.int32)

    def grow(i, m):
        return [i + 1, tf.concat([m, tf.reshape(tf.reduce_sum(m[-2:]), [1, 1])], axis=0)]

    _, m = tf.while_loop(lambda i, m: i < 4, grow, [i0, m0],
                         shape_invariants=[i0.get_shape(), tf.TensorShape([None, 1])])
    assert m.shape.as_list() == [None, 1]
    s = sess_factory(any_mode, chunks=2)
    assert s.run(a) == 5
    assert s.run(m).reshape(-1).tolist() == [1, 1, 2, 3, 5]


def test_while_loop_with_tensor_array(any_mode, sess_factory):
    def fb(i, a, b, t):
        return i + 1, b, a + b, t.write(i, a)

    out = tf.while_loop(lambda i, a, b, t: i < 5, fb, [0, 1, 1, tf.TensorArray(tf.int32, size=5)])
    s = sess_factory(any_mode, chunks=2)
    assert s.run(out[3].stack()).tolist() == [1, 1, 2, 3, 5]


def test_shape_changing_loop_var_without_invariant_is_a_value_error():
    i0, m0 = tf.constant(0), tf.ones([2, 2])
    with pytest.raises(ValueError, match="enters the loop with shape"):
        tf.while_loop(lambda i, m: i < 3, lambda i, m: [i + 1, tf.concat([m, m], 0)], [i0, m0])


def test_while_loop_maximum_iterations_and_captured_large_input():
    A = np.random.default_rng(0).standard_normal((60, 60))
    A = A @ A.T
    a = tf.placeholder(tf.float64, [60, 60])

    def step(k, v):
        w = tf.reshape(tf.matmul(a, tf.reshape(v, [60, 1])), [60])
        return k + 1, w / tf.sqrt(tf.reduce_sum(w * w))

    _, v = tf.while_loop(lambda k, v: k < 1000, step, [tf.constant(0), tf.ones([60], tf.float64)],
                         maximum_iterations=200)
    with tf.Session(scheduler="threads", small_plan_bytes=0, chunks=20) as s:
        got = s.run(v, {a: A})
    top = np.linalg.eigh(A)[1][:, -1]
    assert abs(abs(float(got @ top)) - 1) < 1e-6


def test_gradients_through_cond_and_while():
    x = tf.placeholder(tf.float64, [3])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.reduce_sum(tf.sin(x)), lambda: tf.reduce_sum(x * x))
    (g,) = tf.gradients(y, [x])
    w = tf.placeholder(tf.float64, [])
    _, v = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v * w), [tf.constant(0), x])
    gx, gw = tf.gradients(tf.reduce_sum(v), [x, w])
    xv = np.array([0.5, 1.0, 1.2])

    def f(xx, ww):
        for _ in range(3):
            xx = xx * xx * ww
        return xx.sum()

    eps = 1e-6
    num_gx = [(f(xv + eps * e, 1.1) - f(xv - eps * e, 1.1)) / (2 * eps) for e in np.eye(3)]
    num_gw = (f(xv, 1.1 + eps) - f(xv, 1.1 - eps)) / (2 * eps)
    for sched in (None, "threads"):
        with tf.Session(scheduler=sched, **({} if sched is None else {"small_plan_bytes": 0})) as s:
            np.testing.assert_allclose(s.run(g, {x: xv, p: True}), np.cos(xv))
            np.testing.assert_allclose(s.run(g, {x: xv, p: False}), 2 * xv)
            np.testing.assert_allclose(s.run(gx, {x: xv, w: 1.1}), num_gx, rtol=1e-5)
            assert s.run(gw, {x: xv, w: 1.1}) == pytest.approx(num_gw, rel=1e-5)


def test_state_changes_inside_loops_are_refused():
    v = tf.Variable(0.0)
    with pytest.raises(tf.errors.UnimplementedError, match="state changes inside loops"):
        tf.while_loop(lambda i: i < 3, lambda i: i + tf.cast(tf.assign_add(v, 1.0), tf.int32), [tf.constant(0)])


def test_single_loop_var_in_a_list_comes_back_bare_as_tf1():
    r = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    assert isinstance(r, tf.Tensor)
    assert isinstance(tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], return_same_structure=True), list)
    with tf.Session() as s:
        assert s.run(r) == 3


def test_norm():
    x = tf.constant([[3.0, -4.0], [1.0, 0.0]])
    with tf.Session() as s:
        assert s.run(tf.norm(x)) == pytest.approx(np.sqrt(26.0))
        np.testing.assert_allclose(s.run(tf.norm(x, ord=1, axis=1)), [7.0, 1.0])
        np.testing.assert_allclose(s.run(tf.norm(x, ord=np.inf, axis=0)), [3.0, 4.0])


def test_outputs_carry_tf1_names_merge_and_exit(any_mode, sess_factory):
    """TF1 (TF 2.21 compat.v1 with disable_control_flow_v2) printed these names for the same
    program: `cond/Merge:0`, `cond/Merge_1:0`, `while/Exit:0` ... `while/Exit_2:0`, under a name
    scope `outer/cond/Merge:0`, a named cond's nested dict `outer/mycond/Merge_2:0`, a case
    `case/cond/Merge:0`, a one-element list from a cond comes back bare (not strict)."""
    x = tf.constant(1.0)
    r = tf.cond(x > 0, lambda: (x, x * 2), lambda: (x * 3, x * 4))
    assert [t.name for t in r] == ["cond/Merge:0", "cond/Merge_1:0"]
    assert "cond/Merge_1:0" in repr(r[1])
    assert tf.cond(x > 0, lambda: x, lambda: x * 3).name == "cond_1/Merge:0"
    w = tf.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * 2, b + 1), [0, x, x])
    assert [t.name for t in w] == ["while/Exit:0", "while/Exit_1:0", "while/Exit_2:0"]
    assert str(tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])) == 'Tensor("while_1/Exit:0", shape=(), dtype=int32)'
    with tf.name_scope("outer"):
        assert tf.cond(x > 0, lambda: (x, x), lambda: (x, x))[1].name == "outer/cond/Merge_1:0"
        assert tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a), [0, x])[1].name == "outer/while/Exit_1:0"
        d = tf.cond(x > 0, lambda: {"a": x, "b": [x, x]}, lambda: {"a": x, "b": [x, x]}, name="mycond")
        assert d["b"][1].name == "outer/mycond/Merge_2:0"
    assert tf.cond(x > 0, lambda: [x], lambda: [x]).name == "cond_2/Merge:0"
    assert isinstance(tf.cond(x > 0, lambda: [x], lambda: [x], strict=True), list)
    assert tf.case([(x > 0, lambda: x)], default=lambda: x * 2).name == "case/cond/Merge:0"
    ta = tf.TensorArray(tf.float32, 3)
    _, ta = tf.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t.write(i, x)), [0, ta])
    assert ta.flow.name == "while_2/Exit_1:0"
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("while/Exit_2:0") is w[2]
    assert g.get_operation_by_name("cond/Merge").type == "Identity"
    s = sess_factory(any_mode, chunks=2)
    assert s.run(["cond/Merge:0", "while/Exit_2:0", "outer/while/Exit_1:0"]) == [1.0, 4.0, 1.0]
    assert s.run(ta.stack()).tolist() == [1.0, 1.0, 1.0]


def test_cond_gradient_when_one_capture_is_computed_from_another():
    """A branch's gradient is taken with the captured tensors held constant: y = 2x and x both
    captured, d(y * x)/dx is 4x (the branch gave 4x and y's 2x again before: 6x, silently)."""
    x = tf.placeholder(tf.float64, [3])
    p = tf.placeholder(tf.bool, [])
    y = x * 2.0
    c = tf.cond(p, lambda: y * x, lambda: y + x)
    (g,) = tf.gradients(tf.reduce_sum(c), x)
    xv = np.array([0.5, 1.0, 2.0])
    from tests.conftest import run_modes

    assert run_modes(g, {x: xv, p: True}).tolist() == (4 * xv).tolist()
    assert run_modes(g, {x: xv, p: False}).tolist() == [3.0, 3.0, 3.0]
    # the same through a TensorArray written outside and inside the branches, both capturing x
    part = tf.TensorArray(tf.float64, 3).write(0, x[0]).write(2, x[2])
    ta = tf.cond(p, lambda: part.write(1, part.read(0) * 5.0), lambda: part.write(1, x[1]))
    (gt,) = tf.gradients(tf.reduce_sum(ta.stack() * [1.0, 2.0, 3.0]), x)
    assert run_modes(gt, {x: xv, p: True}).tolist() == [11.0, 0.0, 3.0]
    assert run_modes(gt, {x: xv, p: False}).tolist() == [1.0, 2.0, 3.0]


def test_stop_gradients_hold_tensors_constant_and_give_their_partials():
    # TF1's documented example: b = 2a; total derivatives [3, 1], partials with stop_gradients [1, 1]
    a = tf.constant(0.0)
    b = 2.0 * a
    with tf.Session() as s:
        assert s.run(tf.gradients(a + b, [a, b])) == [3.0, 1.0]
        assert s.run(tf.gradients(a + b, [a, b], stop_gradients=[a, b])) == [1.0, 1.0]
        assert s.run(tf.gradients(a + b, [a], stop_gradients=[b])) == [1.0]


def test_while_gradient_when_one_capture_is_computed_from_another():
    """The body's VJP holds loop vars and captures constant: with y = 2x and x both captured,
    two steps of a += y * x give d/dx = 8x (12x before, silently); a = a * x + y three times from
    1 gives 3x^3 + 2x^2 + 2x, d/dx = 9x^2 + 4x + 2."""
    from tests.conftest import run_modes

    x = tf.placeholder(tf.float64, [3])
    y = x * 2.0
    _, acc = tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, a + y * x),
                           [tf.constant(0), tf.zeros([3], tf.float64)])
    _, poly = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x + y),
                            [tf.constant(0), tf.ones([3], tf.float64)])
    g1, g2 = tf.gradients(tf.reduce_sum(acc), x)[0], tf.gradients(tf.reduce_sum(poly), x)[0]
    xv = np.array([0.5, 1.0, 2.0])
    got1, got2 = run_modes([g1, g2], {x: xv})
    np.testing.assert_allclose(got1, 8 * xv)
    np.testing.assert_allclose(got2, 9 * xv ** 2 + 4 * xv + 2)
