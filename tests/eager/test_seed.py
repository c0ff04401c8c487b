"""The eager-execution seed tutorial's examples, run as written (`import dflow as tf;
import dflow.contrib.eager as tfe`) in a fresh interpreter, where `enable_eager_execution()` comes
first as TF1 requires. The MNIST data is replaced by random batches (no download); x*x's third
derivative is TF's None (the seed's `assert 0 == d3f(3.)[0].numpy()` fails in TF too)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

BASICS = """
import numpy as np
import dflow as tf
import dflow.contrib.eager as tfe

tfe.enable_eager_execution()

x = [[2.]]
m = tf.matmul(x, x)
print(m)

dataset = tf.data.Dataset.from_tensor_slices([1, 2, 3, 4, 5, 6])
dataset = dataset.map(tf.square).shuffle(2).batch(2)
for x in tfe.Iterator(dataset):
    print(x)

x = tf.add(1, 1)
y = tf.add(np.array(1), np.array(1))
z = np.multiply(x, y)

np_x = np.array(2., dtype=np.float32)
x = tf.constant(np_x)
py_y = 3.
y = tf.constant(py_y)
z = x + y + 1
print(z)
print(z.numpy())

def f(x):
    return tf.multiply(x, x)
assert 9 == f(3.).numpy()
df = tfe.gradients_function(f)
assert 6 == df(3.)[0].numpy()
d2f = tfe.gradients_function(lambda x: df(x)[0])
assert 2 == d2f(3.)[0].numpy()
d3f = tfe.gradients_function(lambda x : d2f(x)[0])
assert d3f(3.)[0] is None  # the seed's `assert 0 == d3f(3.)[0].numpy()` fails in TF too: TF's None

@tfe.custom_gradient
def log1pexp(x):
    e = tf.exp(x)
    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return tf.log(1 + e), grad
grad_log1pexp = tfe.gradients_function(log1pexp)
print(grad_log1pexp(100.)[0])

x = tfe.Variable(10., name='x')
y = tfe.Variable(5., name='y')
saver = tfe.Saver([x, y])
x.assign(2.)
saver.save(CKPT)
x.assign(11.)
assert 16. == (x + y).numpy()  # 11 + 5
saver.restore(CKPT)
assert 7. == (x + y).numpy()  # 2 + 5

my_mean = tfe.metrics.Mean(name='my_mean')
my_mean(0.0)
my_mean(10.0)
assert 5.0 == my_mean.result().numpy()
print("done")
"""

MNIST = """
import numpy as np
import dflow as tf
import dflow.contrib.eager as tfe

tfe.enable_eager_execution()

class MNISTModel(object):
  def __init__(self, data_format):
    self._input_shape = [-1, 1, 28, 28] if data_format == 'channels_first' else [-1, 28, 28, 1]
    self.conv1 = tf.layers.Conv2D(32, 5, padding='same', activation=tf.nn.relu, data_format=data_format)
    self.max_pool2d = tf.layers.MaxPooling2D((2, 2), (2, 2), padding='same', data_format=data_format)
    self.conv2 = tf.layers.Conv2D(64, 5, padding='same', activation=tf.nn.relu, data_format=data_format)
    self.dense1 = tf.layers.Dense(1024, activation=tf.nn.relu)
    self.dropout = tf.layers.Dropout(0.5)
    self.dense2 = tf.layers.Dense(10)

  def predict(self, inputs):
    x = tf.reshape(inputs, self._input_shape)
    x = self.max_pool2d(self.conv1(x))
    x = self.max_pool2d(self.conv2(x))
    x = tf.layers.flatten(x)
    x = self.dropout(self.dense1(x))
    return self.dense2(x)

def loss(model, inputs, targets):
  return tf.reduce_mean(
      tf.nn.softmax_cross_entropy_with_logits(
          logits=model.predict(inputs), labels=targets))

rng = np.random.default_rng(0)
device = "gpu:0" if tfe.num_gpus() else "cpu:0"
model = MNISTModel('channels_first' if tfe.num_gpus() else 'channels_last')
optimizer = tf.train.AdamOptimizer(learning_rate=1e-3)
grad = tfe.implicit_gradients(loss)
inputs = rng.random((8, 784)).astype(np.float32)
targets = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 8)]
losses = []
for i in range(3):
  with tf.device(device):
    optimizer.apply_gradients(grad(model, inputs, targets))
    losses.append(loss(model, inputs, targets).numpy())
    print("Step %d: Loss on training set : %f" % (i, losses[-1]))
assert losses[-1] < losses[0]
"""


def _run(code, tmp_path):
    script = tmp_path / "seed.py"
    script.write_text(f"CKPT = {str(tmp_path / 'ckpt')!r}\n" + textwrap.dedent(code))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=240)


def test_the_seeds_eager_examples_run_as_written(tmp_path):
    r = _run(BASICS, tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "tf.Tensor([[4.]], shape=(1, 1), dtype=float32)"
    assert "tf.Tensor(6.0, shape=(), dtype=float32)" in lines and "6.0" in lines
    assert "tf.Tensor(1.0, shape=(), dtype=float32)" in lines
    assert lines[-1] == "done"


@pytest.mark.slow
def test_the_seeds_mnist_model_trains_eagerly(tmp_path):
    r = _run(MNIST, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Step 2: Loss on training set" in r.stdout
