"""str/repr of tensors, operations, variables and dtypes as TF1 prints them (tutorials print them).

Expected texts are TF's own, from tensorflow 2.21.0 `tensorflow.compat.v1` with
`disable_v2_behavior()` (RefVariables), except that unknown dimensions print as `?` as in TF 1.x
(TF 2's TensorShape prints `None`)."""

from __future__ import annotations

import pytest

import dflow as tf


def test_tensor_str_and_repr():
    b = tf.matmul(tf.ones([10, 10]), tf.ones([10, 10]))
    assert str(b) == 'Tensor("MatMul:0", shape=(10, 10), dtype=float32)'
    assert repr(b) == "<tf.Tensor 'MatMul:0' shape=(10, 10) dtype=float32>"
    x = tf.placeholder("float", [None, 784], name="x")
    assert str(x) == 'Tensor("x:0", shape=(?, 784), dtype=float32)'
    assert repr(x) == "<tf.Tensor 'x:0' shape=(?, 784) dtype=float32>"
    u = tf.placeholder(tf.int64)
    assert str(u) == 'Tensor("Placeholder:0", dtype=int64)'  # unknown rank: no shape, as TF1
    assert repr(u) == "<tf.Tensor 'Placeholder:0' shape=<unknown> dtype=int64>"
    s = tf.reduce_sum(b)
    assert str(s) == 'Tensor("Sum:0", shape=(), dtype=float32)'
    v = tf.zeros([3])
    assert str(v) == 'Tensor("zeros:0", shape=(3,), dtype=float32)'
    assert f"{b}" == str(b) and "%s" % (b,) == str(b)


def test_operation_repr_and_node_def_text():
    b = tf.matmul(tf.ones([10, 10]), tf.ones([10, 10]))
    assert repr(b.op) == "<tf.Operation 'MatMul' type=MatMul>"
    text = str(b.op)
    assert text.startswith('name: "MatMul"\nop: "MatMul"\ninput: "ones"\ninput: "ones_1"\n')
    assert 'attr {\n  key: "transpose_a"\n  value {\n    b: false\n  }\n}' in text


def test_node_def_text_of_placeholder_const_and_control_inputs():
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    assert str(x.op) == "\n".join([
        'name: "x"', 'op: "Placeholder"',
        'attr {', '  key: "dtype"', '  value {', '    type: DT_FLOAT', '  }', '}',
        'attr {', '  key: "shape"', '  value {', '    shape {',
        '      dim {', '        size: -1', '      }', '      dim {', '        size: 784', '      }',
        '    }', '  }', '}'])
    c = tf.constant("Hello, TensorFlow!")
    assert 'string_val: "Hello, TensorFlow!"' in str(c.op) and "type: DT_STRING" in str(c.op)
    k = tf.constant([1, 2, 3])
    assert "dtype: DT_INT32" in str(k.op) and "int_val: 3" in str(k.op)
    m = tf.matmul(tf.ones([2, 2]), tf.ones([2, 2]))
    with tf.control_dependencies([m]):
        i = tf.identity(x, name="idf")
    assert str(i.op).startswith('name: "idf"\nop: "Identity"\ninput: "x"\ninput: "^MatMul"')
    assert str(tf.no_op(name="noop")) == 'name: "noop"\nop: "NoOp"'
    with tf.device("/cpu:0"):
        d = tf.identity(x, name="placed")
    assert 'device: "/device:CPU:0"' in str(d.op)


def test_variable_repr_is_tf1_ref_variable():
    v = tf.Variable([1.0, 2.0], name="v")
    assert repr(v) == "<tf.Variable 'v:0' shape=(2,) dtype=float32_ref>"
    assert str(v) == repr(v)
    g = tf.get_variable("gv", shape=[3], dtype=tf.float64)
    assert repr(g) == "<tf.Variable 'gv:0' shape=(3,) dtype=float64_ref>"
    step = tf.train.get_or_create_global_step()
    assert repr(step) == "<tf.Variable 'global_step:0' shape=() dtype=int64_ref>"


@pytest.mark.parametrize("dtype, text", [(tf.float32, "float32"), (tf.string, "string"), (tf.int64, "int64")])
def test_dtype_str_and_repr(dtype, text):
    assert repr(dtype) == f"tf.{text}"
    assert str(dtype) == f"<dtype: '{text}'>"


def test_a_tensor_or_variable_as_a_python_bool_is_tf1s_type_error():
    with tf.Graph().as_default():
        x, v = tf.constant(1.0), tf.Variable(1.0)
        with pytest.raises(TypeError, match=r"Using a `tf.Tensor` as a Python `bool` is not allowed\. "
                                            r"Use `if t is not None:`"):
            bool(x > 0)
        with pytest.raises(TypeError, match=r"Using a `tf.Variable` as a Python `bool`"):
            bool(v)
