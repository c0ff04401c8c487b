"""Versions (a bottom-level module: anything may read it).

`__version__` here is dflow's own release (the package metadata reads it). `VERSION` is the
TensorFlow 1.x release whose API dflow follows: what a TF1 program sees as `tf.VERSION`,
`tf.__version__` and `tf.version.VERSION`, so version checks written for TF1 take the TF1 path.
"""

__version__ = "0.1.0"
VERSION = "1.15.5"
