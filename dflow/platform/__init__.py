"""TF1's platform modules: `tf.app`, `tf.flags`, `tf.logging`, `tf.gfile` (and `tf.io.gfile`).

What a TF1 batch job is made of around its graph: command-line flags parsed by `tf.app.run`
(absl-py, as TF1 itself), log lines through the `tensorflow` logger, and file access over local
paths and fsspec URLs (`memory://`, `s3://`, `gs://` ... where fsspec has the protocol). Nothing
here knows about graphs or sessions, so the layers above (checkpoints, summaries) may use it.
"""

from . import app, flags, gfile, io_gfile, tf_logging

__all__ = ["app", "flags", "gfile", "io_gfile", "tf_logging"]
