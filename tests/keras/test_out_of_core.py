"""`fit` over Zarr arrays larger than the memory budget holds a chunk at a time (slow: writes 4 GB)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import resource, sys
    import numpy as np, zarr
    import dflow as tf

    path, rows = sys.argv[1], int(sys.argv[2])
    x = zarr.open(path + "/x", mode="r")
    y = zarr.open(path + "/y", mode="r")
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu", input_shape=(x.shape[1],)),
                                 tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(x, y, batch_size=8192, epochs=1, verbose=0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("loss", history.history["loss"][0], "peak_mib", peak)
""")


@pytest.mark.slow
def test_fit_over_4gb_of_zarr_stays_under_512mb(tmp_path):
    zarr = pytest.importorskip("zarr")
    import numpy as np

    cols, rows, chunk = 256, 4 * 2**30 // (256 * 4), 65536  # 4 GiB of float32 features
    x = zarr.create_array(str(tmp_path / "d" / "x"), shape=(rows, cols), chunks=(chunk, cols), dtype="f4",
                          compressors=None)
    y = zarr.create_array(str(tmp_path / "d" / "y"), shape=(rows, 1), chunks=(chunk, 1), dtype="f4")
    rng = np.random.RandomState(0)
    w = rng.randn(cols, 1).astype(np.float32) / 16
    for start in range(0, rows, chunk):
        block = rng.rand(chunk, cols).astype(np.float32)
        x[start:start + chunk] = block
        y[start:start + chunk] = block @ w
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "d"), str(rows)], capture_output=True,
                         text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    fields = out.stdout.split()
    peak = float(fields[fields.index("peak_mib") + 1])
    assert np.isfinite(float(fields[fields.index("loss") + 1]))
    assert peak <= 512, f"fit over 4 GiB of Zarr peaked at {peak:.0f} MiB"
