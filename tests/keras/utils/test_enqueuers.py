"""keras.utils enqueuers (order, epochs, shuffle, errors, stop), HDF5Matrix (views, slicing, as
fit's input), get_source_inputs, convert_all_kernels_in_model, multi_gpu_model's checks."""

import itertools

import numpy as np
import pytest

import dflow as tf
from dflow.keras import layers, utils
from dflow.keras.models import Model

h5py = pytest.importorskip("h5py")


class Squares(utils.Sequence):
    def __init__(self, n):
        self.n, self.epochs = n, 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.array([i * i + 100 * self.epochs])

    def on_epoch_end(self):
        self.epochs += 1


def test_ordered_enqueuer_epochs():
    seq = Squares(4)
    enq = utils.OrderedEnqueuer(seq)
    enq.start(workers=3, max_queue_size=2)
    try:
        got = [int(b[0]) for b in itertools.islice(enq.get(), 8)]
    finally:
        enq.stop(timeout=5)
    assert got == [0, 1, 4, 9, 100, 101, 104, 109]
    assert not enq.is_running()


def test_ordered_enqueuer_shuffle_and_error():
    enq = utils.OrderedEnqueuer(Squares(6), shuffle=True)
    enq.start(workers=2)
    try:
        got = sorted(int(b[0]) for b in itertools.islice(enq.get(), 6))
    finally:
        enq.stop(timeout=5)
    assert got == [0, 1, 4, 9, 16, 25]

    class Bad(Squares):
        def __getitem__(self, i):
            raise RuntimeError(f"batch {i} broke")

    enq = utils.OrderedEnqueuer(Bad(2))
    enq.start()
    try:
        with pytest.raises(RuntimeError, match="batch 0 broke"):
            next(enq.get())
    finally:
        enq.stop(timeout=5)


def test_generator_enqueuer():
    enq = utils.GeneratorEnqueuer((i for i in range(20)))
    enq.start(workers=2, max_queue_size=3)
    got = list(enq.get())
    enq.stop(timeout=5)
    assert sorted(got) == list(range(20))

    def broken():
        yield 1
        raise ValueError("generator broke")

    enq = utils.GeneratorEnqueuer(broken())
    enq.start()
    with pytest.raises(ValueError, match="generator broke"):
        list(enq.get())
    enq.stop(timeout=5)
    assert isinstance(enq, utils.SequenceEnqueuer)


def test_hdf5_matrix(tmp_path):
    path = str(tmp_path / "data.h5")
    x = np.arange(40, dtype=np.float32).reshape(20, 2)
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=x, chunks=(8, 2))
        f.create_dataset("y", data=x.sum(1, keepdims=True))
    m = utils.HDF5Matrix(path, "x", start=5, end=15, normalizer=lambda a: a / 2)
    assert m.shape == (10, 2) and len(m) == 10 and m.ndim == 2 and m.size == 20 and m.dtype == np.float32
    np.testing.assert_array_equal(m[2:4], x[7:9] / 2)
    np.testing.assert_array_equal(m[0], x[5] / 2)
    np.testing.assert_array_equal(m[[1, 3]], x[[6, 8]] / 2)
    np.testing.assert_array_equal(np.asarray(m), x[5:15] / 2)
    with pytest.raises(IndexError):
        m[8:12]
    with pytest.raises(IndexError):
        m[10]
    with pytest.raises(KeyError, match="no dataset 'z'"):
        utils.HDF5Matrix(path, "z")
    # as fit/predict input: read by slices
    with tf.Graph().as_default():
        inp = layers.Input((2,))
        model = Model(inp, layers.Dense(1, kernel_initializer="ones", use_bias=False)(inp))
        xs, ys = utils.HDF5Matrix(path, "x"), utils.HDF5Matrix(path, "y")
        np.testing.assert_allclose(model.predict(xs, batch_size=6), x.sum(1, keepdims=True))
        model.compile("sgd", "mse")
        history = model.fit(xs, ys, batch_size=4, epochs=1, shuffle="batch", verbose=0)
        assert history.history["loss"][0] == pytest.approx(0.0)


def test_source_inputs_and_no_ops():
    with tf.Graph().as_default():
        a, b = layers.Input((2,)), layers.Input((2,))
        h = layers.Dense(3)(a)
        out = layers.add([h, layers.Dense(3)(b)])
        assert utils.get_source_inputs(out) == [a, b]
        assert utils.get_source_inputs(h) == [a]
        assert utils.get_source_inputs(a) == [a]
        model = Model([a, b], out)
        assert utils.convert_all_kernels_in_model(model) is None


def test_multi_gpu_model_checks():
    with pytest.raises(ValueError, match="gpus >= 2"):
        utils.multi_gpu_model(None, gpus=1)
    if tf.devices.gpu_count() < 8:
        with pytest.raises(ValueError, match="Try reducing `gpus`"):
            utils.multi_gpu_model(None, gpus=8)
