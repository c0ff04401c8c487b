"""The graph layer against TF1: Graph, Operation, Tensor, naming, control dependencies, devices,
collections and the Tensor operators (op types, names and dtypes as `tf.compat.v1` builds them)."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

# ---- Graph: default graph, reset, finalize, lookup ---------------------------------------------


def test_as_default_and_get_default_graph():
    outer = tf.get_default_graph()
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default() as entered:
        assert entered is g1 and tf.get_default_graph() is g1
        c = tf.constant(1.0)
        with g2.as_default():
            assert tf.get_default_graph() is g2
        assert tf.get_default_graph() is g1
    assert c.graph is g1 and tf.get_default_graph() is outer
    assert g1.get_operations() == [c.op] and g2.get_operations() == []


def test_reset_default_graph():
    before = tf.get_default_graph()
    tf.constant(1.0)
    tf.reset_default_graph()
    after = tf.get_default_graph()
    assert after is not before and after.get_operations() == []
    with tf.Graph().as_default():
        with pytest.raises(AssertionError):
            tf.reset_default_graph()
    assert tf.get_default_graph() is after


def test_finalize_refuses_new_ops():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0)
    assert not g.finalized
    g.finalize()
    assert g.finalized
    with g.as_default():
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(2.0)
    assert len(g.get_operations()) == 1


def test_get_tensor_and_operation_by_name():
    a = tf.constant(1.0, name="a")
    b = tf.add(a, a, name="b")
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("b:0") is b
    assert g.get_operation_by_name("a") is a.op
    assert g.get_operations() == [a.op, b.op]
    assert g.as_graph_element("a:0") is a and g.as_graph_element("b") is b.op
    with pytest.raises(KeyError):
        g.get_tensor_by_name("nope:0")
    with pytest.raises(KeyError):
        g.get_tensor_by_name("b:3")  # the op exists but has one output
    with pytest.raises(ValueError):
        g.get_tensor_by_name("b")  # an op name, not a tensor name
    with pytest.raises(TypeError):
        g.get_tensor_by_name(3)
    with pytest.raises(KeyError):
        g.get_operation_by_name("nope")
    with pytest.raises(TypeError):
        g.get_operation_by_name(1)
    with pytest.raises(TypeError):
        g.as_graph_element(3)


def test_get_operation_by_name_with_a_tensor_name():
    tf.constant(1.0, name="b")
    with pytest.raises(ValueError):
        tf.get_default_graph().get_operation_by_name("b:0")


def test_ops_from_another_graph_are_refused():
    with tf.Graph().as_default():
        q = tf.constant(1.0)
    with pytest.raises(ValueError):
        tf.add(q, tf.constant(1.0))


# ---- collections ------------------------------------------------------------------------------


def test_collections():
    c = tf.constant(1.0)
    with tf.name_scope("scope"):
        s = tf.constant(1.0, name="a")
    tf.add_to_collection("c", c)
    tf.add_to_collection("c", s)
    tf.add_to_collection("c", 5)  # any Python value may be collected
    tf.add_to_collections(["c2", "c3"], c)
    tf.add_to_collections("c4", s)
    g = tf.get_default_graph()
    assert tf.get_collection("c") == [c, s, 5]
    assert tf.get_collection("c", scope="scope") == [s]  # by name (re.match); unnamed items drop
    assert tf.get_collection("c", scope="sc.*e") == [s]
    assert tf.get_collection("c", scope="a") == []  # match is anchored at the start
    assert tf.get_collection("missing") == []
    assert sorted(g.get_all_collection_keys()) == ["c", "c2", "c3", "c4"]
    copy = tf.get_collection("c")
    copy.append("x")
    assert tf.get_collection("c") == [c, s, 5]  # get_collection returns a copy
    ref = tf.get_collection_ref("c")
    assert ref is tf.get_collection_ref("c")
    ref.append("y")
    assert tf.get_collection("c")[-1] == "y"
    new_ref = tf.get_collection_ref("fresh")
    new_ref.append(1)
    assert tf.get_collection("fresh") == [1]
    g.clear_collection("c")
    assert tf.get_collection("c") == []


# ---- Operation and Tensor ---------------------------------------------------------------------


def test_operation_properties():
    a = tf.constant([1.0, 2.0], name="a")
    b = tf.multiply(a, a, name="m")
    op = b.op
    assert (op.name, op.type, op.graph) == ("m", "Mul", tf.get_default_graph())
    assert list(op.inputs) == [a, a] and len(op.inputs) == 2
    assert op.outputs == [b] and op.control_inputs == [] and op.device == ""
    assert a.op.get_attr("dtype") == tf.float32
    np.testing.assert_array_equal(a.op.get_attr("value"), [1.0, 2.0])
    with pytest.raises(ValueError):
        a.op.get_attr("nope")
    assert a.consumers() == [op, op]
    assert op.node_def["name"] == "m" and op.node_def["op"] == "Mul"


def test_tensor_properties():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = x + 1.0
    assert (y.name, y.op.type, y.dtype, y.value_index) == ("add:0", "Add", tf.float32, 0)
    assert y.shape.as_list() == [None, 3] and y.get_shape() is y.shape
    assert y.graph is tf.get_default_graph() and y.device == ""
    assert tf.constant(3.0).shape.as_list() == []


def test_set_shape_merges_and_refuses_conflicts():
    p = tf.placeholder(tf.float32)
    assert p.shape.ndims is None
    p.set_shape([2, None])
    assert p.shape.as_list() == [2, None]
    p.set_shape([None, 3])
    assert p.shape.as_list() == [2, 3]
    with pytest.raises(ValueError):
        p.set_shape([3, 3])
    with pytest.raises(ValueError):
        p.set_shape([2])
    assert p.shape.as_list() == [2, 3]


def test_tensor_identity_semantics():
    a, b = tf.constant(1.0), tf.constant(1.0)
    assert (a == a) is True and (a == b) is False and (a != b) is True
    assert len({a, a, b}) == 2 and hash(a) == hash(a)
    assert {a: 1}[a] == 1
    with pytest.raises(TypeError):
        bool(a)
    with pytest.raises(TypeError):
        if a:
            pass
    with pytest.raises(TypeError):
        iter(a)
    with pytest.raises(TypeError):
        for _ in a:
            pass
    with pytest.raises(TypeError):
        len(a)


def test_eval_and_run_with_default_and_explicit_sessions():
    c = tf.constant([1.0, 2.0])
    d = c * 2.0
    with pytest.raises(ValueError, match="default session"):
        d.eval()
    with pytest.raises(ValueError, match="default session"):
        d.op.run()
    s = tf.Session()
    np.testing.assert_array_equal(d.eval(session=s), [2.0, 4.0])
    assert d.op.run(session=s) is None and s.run(d.op) is None
    with s.as_default():
        assert tf.get_default_session() is s
        np.testing.assert_array_equal(d.eval(), [2.0, 4.0])
        np.testing.assert_array_equal(d.eval(feed_dict={c: [5.0, 6.0]}), [10.0, 12.0])
        assert d.op.run() is None
    assert tf.get_default_session() is None
    s.close()
    with tf.Session() as s2:
        assert tf.get_default_session() is s2
        np.testing.assert_array_equal(d.eval(), [2.0, 4.0])
    with tf.Graph().as_default():
        other = tf.constant(1.0)
    with tf.Session() as s3, pytest.raises(ValueError):
        other.eval(session=s3)


# ---- names --------------------------------------------------------------------------------------


def test_default_names_and_uniquing():
    names = [tf.constant(1.0).name, tf.constant(1.0).name, tf.add(1.0, 2.0).name]
    assert names[:2] == ["Const:0", "Const_1:0"]
    assert names[2] == "Add:0"
    # uniquing is case-insensitive, as TF1: Add then add_1 then ADD_2
    assert tf.constant(1.0, name="add").name == "add_1:0"
    assert tf.constant(1.0, name="ADD").name == "ADD_2:0"
    # a name already taken by an explicit "_N" name is skipped
    assert tf.placeholder(tf.float32, name="foo_1").name == "foo_1:0"
    assert tf.placeholder(tf.float32, name="foo").name == "foo:0"
    assert tf.placeholder(tf.float32, name="foo").name == "foo_2:0"


def test_name_scopes():
    with tf.name_scope("scope") as sc:
        assert sc == "scope/"
        a = tf.constant(1.0, name="a")
        with tf.name_scope("inner"):
            b = tf.constant(1.0, name="a")
            assert tf.get_default_graph().get_name_scope() == "scope/inner"
        c = tf.constant(1.0, name="a")
        with tf.name_scope(None):  # back to the root
            r = tf.constant(1.0, name="r")
        with tf.name_scope("abs/"):  # a name ending in "/" is used as given
            q = tf.constant(1.0, name="q")
    with tf.name_scope("scope") as sc1:  # re-entry gives a new scope
        d = tf.constant(1.0, name="a")
    with tf.name_scope(sc):  # re-entering by the returned string reuses it
        e = tf.constant(1.0, name="e")
    assert sc1 == "scope_1/"
    assert [t.name for t in (a, b, c, r, q, d, e)] == [
        "scope/a:0", "scope/inner/a:0", "scope/a_1:0", "r:0", "abs/q:0", "scope_1/a:0", "scope/e:0"]
    with pytest.raises(ValueError):
        tf.name_scope("bad name!").__enter__()


def test_name_scope_default_name():
    with tf.name_scope(None, "default", []) as s1:
        pass
    with tf.name_scope(None, "default", []) as s2:
        pass
    with tf.name_scope("given", "default", []) as s3:
        pass
    assert (s1, s2, s3) == ("default/", "default_1/", "given/")


def test_invalid_op_name_is_refused():
    with pytest.raises(ValueError):
        tf.constant(1, name="bad name")


# ---- control dependencies -----------------------------------------------------------------------


def test_control_dependencies_nesting_and_clearing():
    c0, c1 = tf.constant(1.0), tf.constant(2.0)
    a = tf.add(c0, c1)
    with tf.control_dependencies([c0.op]):
        d1 = tf.constant(1.0, name="d1")
        with tf.control_dependencies([c1]):  # tensors stand for their ops
            d2 = tf.constant(1.0, name="d2")
            with tf.control_dependencies(None):
                d3 = tf.constant(1.0, name="d3")
                with tf.control_dependencies([a]):
                    d4 = tf.constant(1.0, name="d4")
        d5 = tf.identity(c0, name="d5")  # a control input that is also a data input is dropped
        d6 = c1 * 2.0
    d7 = tf.constant(1.0, name="d7")
    assert d1.op.control_inputs == [c0.op]
    # TF1 lists outer frames first ([Const, Const_1]); the set is what matters for execution
    assert set(d2.op.control_inputs) == {c0.op, c1.op}
    assert d3.op.control_inputs == [] and d4.op.control_inputs == [a.op]
    assert d5.op.control_inputs == [] and d6.op.control_inputs == [c0.op]
    assert d7.op.control_inputs == []
    with pytest.raises(TypeError):
        tf.control_dependencies([1.0]).__enter__()


# ---- devices ----------------------------------------------------------------------------------


def test_device_stack():
    with tf.device("/job:ps/replica:0/task:0/device:CPU:0"):
        a = tf.constant(1.0, name="a")
        with tf.device(None):
            b = tf.constant(1.0, name="b")
    with tf.device(lambda op: "/device:GPU:0"):
        c = tf.constant(1.0, name="c")
    d = tf.constant(1.0, name="d")
    assert a.op.device == a.device == "/job:ps/replica:0/task:0/device:CPU:0"
    assert b.op.device == "" and c.op.device == "/device:GPU:0" and d.op.device == ""
    with tf.device("/device:CPU:0"):
        with tf.device("/device:GPU:1"):  # the inner device type wins
            e = tf.constant(1.0, name="e")
    assert e.op.device == "/device:GPU:1"


def test_device_strings_are_canonical():
    with tf.device("/cpu:0"):
        a = tf.constant(1.0)
        with tf.device("/job:w/task:1"):
            b = tf.constant(1.0)
    assert a.op.device == "/device:CPU:0"
    assert b.op.device == "/job:w/task:1/device:CPU:0"


# ---- operators ----------------------------------------------------------------------------------

X = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
I = np.array([[1, -2, 3], [4, 5, -7]], np.int32)
B = np.array([[True, False, True], [False, False, True]])

# (label, expression on (x, i, b), op type, output name, dtype, numpy expression)
OPERATORS = [
    ("add", lambda x, i, b: x + 1.0, "Add", "add:0", "float32", lambda x, i, b: x + np.float32(1)),
    ("radd", lambda x, i, b: 1.0 + x, "Add", "add:0", "float32", lambda x, i, b: np.float32(1) + x),
    ("sub", lambda x, i, b: x - 2, "Sub", "sub:0", "float32", lambda x, i, b: x - np.float32(2)),
    ("rsub", lambda x, i, b: 2 - x, "Sub", "sub:0", "float32", lambda x, i, b: np.float32(2) - x),
    ("mul", lambda x, i, b: x * x, "Mul", "mul:0", "float32", lambda x, i, b: x * x),
    ("rmul", lambda x, i, b: 3.0 * x, "Mul", "mul:0", "float32", lambda x, i, b: np.float32(3) * x),
    ("div", lambda x, i, b: x / 2.0, "RealDiv", "truediv:0", "float32", lambda x, i, b: x / np.float32(2)),
    ("rdiv", lambda x, i, b: 2.0 / x, "RealDiv", "truediv:0", "float32", lambda x, i, b: np.float32(2) / x),
    ("idiv", lambda x, i, b: i / 2, "RealDiv", "truediv:0", "float64", lambda x, i, b: i / 2),
    ("ridiv", lambda x, i, b: 2 / i, "RealDiv", "truediv:0", "float64", lambda x, i, b: 2 / i),
    ("floordiv", lambda x, i, b: x // 2.0, "FloorDiv", "floordiv:0", "float32", lambda x, i, b: x // np.float32(2)),
    ("rfloordiv", lambda x, i, b: 7 // i, "FloorDiv", "floordiv:0", "int32", lambda x, i, b: np.int32(7) // i),
    ("mod", lambda x, i, b: x % 2.0, "FloorMod", "mod:0", "float32", lambda x, i, b: x % np.float32(2)),
    ("rmod", lambda x, i, b: 7 % i, "FloorMod", "mod:0", "int32", lambda x, i, b: np.int32(7) % i),
    ("pow", lambda x, i, b: x ** 2.0, "Pow", "pow:0", "float32", lambda x, i, b: x ** np.float32(2)),
    ("rpow", lambda x, i, b: 2.0 ** x, "Pow", "pow:0", "float32", lambda x, i, b: np.float32(2) ** x),
    ("neg", lambda x, i, b: -x, "Neg", "Neg:0", "float32", lambda x, i, b: -x),
    ("abs", lambda x, i, b: abs(i), "Abs", "Abs:0", "int32", lambda x, i, b: np.abs(i)),
    ("lt", lambda x, i, b: x < 1.0, "Less", "Less:0", "bool", lambda x, i, b: x < 1),
    ("le", lambda x, i, b: x <= 1.5, "LessEqual", "LessEqual:0", "bool", lambda x, i, b: x <= 1.5),
    ("gt", lambda x, i, b: i > 1, "Greater", "Greater:0", "bool", lambda x, i, b: i > 1),
    ("ge", lambda x, i, b: x >= 0.5, "GreaterEqual", "GreaterEqual:0", "bool", lambda x, i, b: x >= 0.5),
    ("rlt", lambda x, i, b: 1.0 < x, "Greater", "Greater:0", "bool", lambda x, i, b: 1 < x),
    ("and", lambda x, i, b: b & b, "LogicalAnd", "and:0", "bool", lambda x, i, b: b & b),
    ("rand", lambda x, i, b: True & b, "LogicalAnd", "and:0", "bool", lambda x, i, b: True & b),
    ("or", lambda x, i, b: b | ~b, "LogicalOr", "or:0", "bool", lambda x, i, b: b | ~b),
    ("xor", lambda x, i, b: b ^ (x > 0), None, "xor:0", "bool", lambda x, i, b: b ^ (x > 0)),
    ("rxor", lambda x, i, b: True ^ b, None, "xor:0", "bool", lambda x, i, b: True ^ b),
    ("invert", lambda x, i, b: ~b, "LogicalNot", "LogicalNot:0", "bool", lambda x, i, b: ~b),
    ("np_radd", lambda x, i, b: np.ones(3, np.float32) + x, "Add", "add:0", "float32",
     lambda x, i, b: np.ones(3, np.float32) + x),
    ("np_rsub_f64", lambda x, i, b: np.ones(3) - x, "Sub", "sub:0", "float32",
     lambda x, i, b: np.ones(3, np.float32) - x),
    ("np_scalar", lambda x, i, b: np.float64(2) * x, "Mul", "mul:0", "float32", lambda x, i, b: 2 * x),
    ("list", lambda x, i, b: [1, 2, 3] + i, "Add", "add:0", "int32", lambda x, i, b: np.int32([1, 2, 3]) + i),
    ("int_ops", lambda x, i, b: i * 3 - i // 2, "Sub", "sub:0", "int32", lambda x, i, b: i * 3 - i // 2),
]


@pytest.mark.parametrize("case", OPERATORS, ids=[c[0] for c in OPERATORS])
def test_operator(case):
    _, expr, op_type, name, dtype, want = case
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    i = tf.placeholder(tf.int32, [2, 3], name="i")
    b = tf.placeholder(tf.bool, [2, 3], name="b")
    y = expr(x, i, b)
    assert y.name == name and y.dtype.name == dtype and y.shape.as_list() == [2, 3]
    if op_type is not None:
        assert y.op.type == op_type
    got = run_modes(y, {x: X, i: I, b: B})
    expected = want(X, I, B)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_operator_names_are_uniqued_and_scoped():
    x = tf.placeholder(tf.float32, [2], name="x")
    assert [(x + 1.0).name, (1.0 + x).name, (x + x).name] == ["add:0", "add_1:0", "add_2:0"]
    with tf.name_scope("s"):
        assert (x * 2.0).name == "s/mul:0"
        assert (x < 1.0).name == "s/Less:0"
    truediv = tf.placeholder(tf.int32, [2]) / 2
    assert [t.op.type for t in truediv.op.inputs] == ["Cast", "Cast"]
    assert truediv.op.inputs[0].op.name.startswith("truediv/")


def test_matmul_operator():
    if not hasattr(tf, "matmul"):
        pytest.skip("matmul is not available yet (linalg_ops)")
    x = tf.placeholder(tf.float32, [2, 3])
    m = tf.placeholder(tf.float32, [3, 4])
    y = x @ m
    assert (y.name, y.op.type, y.shape.as_list()) == ("matmul:0", "MatMul", [2, 4])
    mv = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(run_modes(y, {x: X, m: mv}), X @ mv, rtol=1e-6)
    z = np.ones((4, 2), np.float32) @ x  # reflected, with a numpy array
    assert z.name == "matmul_1:0" and z.shape.as_list() == [4, 3]
    with pytest.raises(ValueError):
        x @ x


@pytest.mark.parametrize("fn", [operator.and_, operator.or_, operator.xor])
def test_logical_operators_need_bool(fn):
    i = tf.placeholder(tf.int32, [2])
    with pytest.raises(TypeError):  # TF1.15: & | ^ are logical ops (bitwise came with TF2)
        fn(i, i)
    with pytest.raises(TypeError):
        _ = ~i


def test_operator_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError):
        x * tf.placeholder(tf.float32, [4])  # shapes that cannot broadcast
    b = tf.placeholder(tf.bool, [2])
    with pytest.raises(TypeError):
        _ = b + b
    with pytest.raises(TypeError):
        _ = -b
