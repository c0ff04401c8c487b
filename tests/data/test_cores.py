"""While a pipeline's background threads run, numpy's BLAS keeps off their cores (kernels/cores.py)."""

from __future__ import annotations

import numpy as np
import pytest
import zarr

import dflow as tf
from dflow.data.node import IterContext
from dflow.kernels import cores


@pytest.fixture
def blas_threads():
    n = cores.blas_threads()
    if n is None:
        pytest.skip("numpy's BLAS is not OpenBLAS: nothing is limited")
    return n


def test_prefetch_and_read_ahead_threads_take_cores_from_blas(tmp_path, blas_threads):
    z = zarr.create_array(str(tmp_path / "X.zarr"), shape=(40, 3), dtype="float32", chunks=(10, 3))
    z[...] = np.arange(120, dtype=np.float32).reshape(40, 3)
    ds = tf.data.Dataset.from_zarr(str(tmp_path / "X.zarr")).shuffle(8, seed=1).batch(4).prefetch(1)
    it = ds._node.iterate(IterContext({}, 0))
    next(it)
    # the prefetch thread and the chunk reader's threads (one per block read ahead, up to the cores)
    taken = 1 + min(2, cores.cpu_count())
    assert cores.blas_threads() == max(1, min(blas_threads, cores.cpu_count() - taken))
    rest = list(it)
    assert len(rest) == 9
    assert cores.blas_threads() == blas_threads  # given back at the end


def test_an_abandoned_iterator_gives_the_cores_back(blas_threads):
    ds = tf.data.Dataset.range(100).prefetch(2)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(nxt) == 0
        assert cores.blas_threads() == max(1, min(blas_threads, cores.cpu_count() - 1))
    assert cores.blas_threads() == blas_threads  # closing the session closed the pipeline
