"""Writes tests/fixtures/tf_graphs/py_func.pb: a TensorFlow-made GraphDef with a tf.py_func node
('double_it', op PyFunc) between a placeholder 'x' and 'out' (tests/io/test_tf_graph.py: refused
at import, naming the node).

Run with a Python that has TensorFlow (not part of `make test`):
    /tmp/tfenv/bin/python tools/make_tf_py_func_fixture.py [OUT_DIR]
"""

import os
import sys

import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures",
                                                          "tf_graphs")

if __name__ == "__main__":
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.py_func(lambda a: a * 2, [x], tf.float32, name="double_it")
        tf.identity(y, name="out")
    tf.train.write_graph(g.as_graph_def(), OUT, "py_func.pb", as_text=False)
