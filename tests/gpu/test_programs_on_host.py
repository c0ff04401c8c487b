"""The GPU suite's programs (tests/gpu/test_gpu_programs.py) run on the host (not marked `gpu`):
the programs themselves are valid, and the probe reports numpy chunks, so on a GPU only where
the data is differs."""

from __future__ import annotations

import numpy as np

from tests.gpu import test_gpu_programs as programs


def test_the_training_program_on_the_host():
    losses, out = programs._train("/cpu:0")
    assert losses[-1] < losses[0] and out["probe"] == 0.0 and abs(float(out["back"])) < 1e-4
    assert float(out["text"]) > 0


def test_the_tf_data_program_on_the_host():
    losses, _, probe = programs.tf_data_program("/cpu:0")
    assert losses[-1] < losses[0] and probe == 0.0


def test_the_zarr_program_on_the_host(tmp_path):
    total, written, want, probe = programs.zarr_program(tmp_path, "")
    np.testing.assert_allclose(written, want, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(total, np.full(total.shape, want.shape[0], np.float32), rtol=1e-3)
    assert probe == 0.0


def test_the_checkpoint_program_on_the_host(tmp_path):
    saved, restored, probe = programs.checkpoint_program(tmp_path, "/cpu:0")
    for r in restored:
        np.testing.assert_array_equal(r, saved)
    assert probe == 0.0
