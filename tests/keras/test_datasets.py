"""tf.keras.datasets read from small files in Keras's formats placed in a temporary ~/.keras
cache (HOME points there; TF 1.15's load_data has no cache_dir argument). The hashes are
patched out since the stand-in files are not TF's."""

import gzip
import io
import json
import os
import pickle
import tarfile
import urllib.error

import numpy as np
import pytest

from dflow import errors
from dflow.keras import backend as K
from dflow.keras.datasets import (
    boston_housing,
    cifar10,
    cifar100,
    fashion_mnist,
    imdb,
    mnist,
    reuters,
)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for module in (mnist, imdb, reuters, boston_housing):
        monkeypatch.setattr(module, "FILE_HASH", None)
    for module in (imdb, reuters):
        monkeypatch.setattr(module, "WORD_INDEX_HASH", None)

    def offline(url, filename=None, *args, **kwargs):
        raise urllib.error.URLError("no network in tests")

    monkeypatch.setattr("urllib.request.urlretrieve", offline)
    d = tmp_path / ".keras" / "datasets"
    d.mkdir(parents=True)
    return d


def _objects(seqs):
    out = np.empty(len(seqs), dtype=object)
    for i, s in enumerate(seqs):
        out[i] = s
    return out


def test_mnist(cache):
    x = np.arange(3 * 28 * 28, dtype=np.uint8).reshape(3, 28, 28)
    np.savez(cache / "mnist.npz", x_train=x, y_train=np.array([1, 2, 3], np.uint8), x_test=x[:1],
             y_test=np.array([7], np.uint8))
    (xt, yt), (xs, ys) = mnist.load_data()
    np.testing.assert_array_equal(xt, x)
    np.testing.assert_array_equal(yt, [1, 2, 3])
    assert xs.shape == (1, 28, 28) and ys.tolist() == [7]


def test_offline_error_names_url_and_cache_path(cache):
    with pytest.raises(errors.UnavailableError) as info:
        mnist.load_data()
    message = str(info.value)
    assert "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz" in message
    assert str(cache / "mnist.npz") in message
    assert not [p for p in os.listdir(cache) if not p.startswith("fashion")]  # no temporary left behind
    with pytest.raises(errors.UnavailableError, match="cifar-10-python.tar.gz"):
        cifar10.load_data()


def test_fashion_mnist(cache):
    d = cache / "fashion-mnist"
    d.mkdir()
    images, labels = np.arange(2 * 784, dtype=np.uint8).reshape(2, 28, 28), np.array([4, 9], np.uint8)
    for prefix in ("train", "t10k"):
        with gzip.open(d / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(b"\0" * 8 + labels.tobytes())
        with gzip.open(d / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(b"\0" * 16 + images.tobytes())
    (xt, yt), (xs, ys) = fashion_mnist.load_data()
    np.testing.assert_array_equal(xt, images)
    np.testing.assert_array_equal(ys, labels)


def _tar(cache, name, members):
    with tarfile.open(cache / (name + ".tar.gz"), "w:gz") as tar:
        for member, obj in members.items():
            data = pickle.dumps(obj)
            info = tarfile.TarInfo(f"{name}/{member}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_cifar10_both_formats(cache):
    rng = np.random.RandomState(0)
    batches = {f"data_batch_{i}": {b"data": rng.randint(0, 255, (2, 3072)).astype(np.uint8), b"labels": [i, i + 1]}
               for i in range(1, 6)}
    batches["test_batch"] = {b"data": rng.randint(0, 255, (1, 3072)).astype(np.uint8), b"labels": [3]}
    _tar(cache, "cifar-10-batches-py", batches)
    (xt, yt), (xs, ys) = cifar10.load_data()
    assert xt.shape == (10, 32, 32, 3) and yt.shape == (10, 1) and xs.shape == (1, 32, 32, 3)
    np.testing.assert_array_equal(xt[2], batches["data_batch_2"][b"data"][0].reshape(3, 32, 32).transpose(1, 2, 0))
    assert yt[:, 0].tolist() == [1, 2, 2, 3, 3, 4, 4, 5, 5, 6] and ys.tolist() == [[3]]
    K.set_image_data_format("channels_first")
    try:
        (xt, _), _ = cifar10.load_data()  # extracted already: read from the directory
    finally:
        K.set_image_data_format("channels_last")
    assert xt.shape == (10, 3, 32, 32)


def test_cifar100_label_modes_and_bad_pickle(cache):
    rng = np.random.RandomState(1)
    part = {b"data": rng.randint(0, 255, (2, 3072)).astype(np.uint8), b"fine_labels": [50, 99],
            b"coarse_labels": [3, 19]}
    _tar(cache, "cifar-100-python", {"train": part, "test": part})
    (_, fine), _ = cifar100.load_data()
    (_, coarse), _ = cifar100.load_data(label_mode="coarse")
    assert fine.tolist() == [[50], [99]] and coarse.tolist() == [[3], [19]]
    with pytest.raises(ValueError, match="label_mode"):
        cifar100.load_data(label_mode="medium")
    (cache / "cifar-100-python" / "test").write_bytes(b"not a pickle")
    with pytest.raises(errors.DataLossError, match="cifar-100-python/test"):
        cifar100.load_data()


def _imdb_keras(x_train, y_train, x_test, y_test, num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1,
                oov_char=2, index_from=3):
    """Keras 1.15's imdb.load_data steps, in numpy, as the reference."""
    rng = np.random.RandomState(seed)
    i = np.arange(len(x_train))
    rng.shuffle(i)
    x_train, y_train = [x_train[k] for k in i], y_train[i]
    i = np.arange(len(x_test))
    rng.shuffle(i)
    x_test, y_test = [x_test[k] for k in i], y_test[i]
    xs = [[start_char] + [w + index_from for w in x] for x in x_train + x_test]
    labels = np.concatenate([y_train, y_test])
    n = len(x_train)
    if maxlen:
        keep_tr = [k for k in range(n) if len(xs[k]) < maxlen]
        keep_te = [k for k in range(n, len(xs)) if len(xs[k]) < maxlen]
        xs, labels, n = [xs[k] for k in keep_tr + keep_te], labels[keep_tr + keep_te], len(keep_tr)
    num_words = num_words or max(max(x) for x in xs)
    xs = [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return (xs[:n], labels[:n]), (xs[n:], labels[n:])


def test_imdb(cache):
    rng = np.random.RandomState(2)
    train = [list(rng.randint(1, 30, rng.randint(2, 9))) for _ in range(6)]
    test = [list(rng.randint(1, 30, rng.randint(2, 9))) for _ in range(4)]
    y_train, y_test = rng.randint(0, 2, 6), rng.randint(0, 2, 4)
    np.savez(cache / "imdb.npz", x_train=_objects(train), y_train=y_train, x_test=_objects(test), y_test=y_test)
    for kwargs in ({}, {"num_words": 20, "skip_top": 5}, {"maxlen": 8}, {"seed": 1, "index_from": 2}):
        (xt, yt), (xs, ys) = imdb.load_data(**kwargs)
        (wxt, wyt), (wxs, wys) = _imdb_keras(train, y_train, test, y_test, **kwargs)
        assert [list(map(int, x)) for x in xt] == wxt and [list(map(int, x)) for x in xs] == wxs, kwargs
        np.testing.assert_array_equal(yt, wyt)
        np.testing.assert_array_equal(ys, wys)
        assert xt.dtype == object
    with pytest.raises(ValueError, match="no sequence was kept"):
        imdb.load_data(maxlen=2)
    with pytest.raises(TypeError, match="Unrecognized keyword"):
        imdb.load_data(bogus=1)
    (cache / "imdb_word_index.json").write_text(json.dumps({"the": 1, "film": 2}))
    assert imdb.get_word_index() == {"the": 1, "film": 2}


def test_reuters_and_boston(cache):
    seqs = [[1, 2, 3], [4, 5], [6, 7, 8, 9], [10], [11, 12]]
    np.savez(cache / "reuters.npz", x=_objects(seqs), y=np.arange(5))
    (xt, yt), (xs, ys) = reuters.load_data(test_split=0.4, oov_char=None, num_words=10)
    order = np.arange(5)
    np.random.RandomState(113).shuffle(order)
    want = [[w for w in [1] + [v + 3 for v in seqs[k]] if w < 10] for k in order]
    assert [list(x) for x in xt] + [list(x) for x in xs] == want
    assert yt.tolist() + ys.tolist() == order.tolist() and len(xt) == 3
    x, y = np.arange(20, dtype=np.float64).reshape(10, 2), np.arange(10, dtype=np.float64)
    np.savez(cache / "boston_housing.npz", x=x, y=y)
    (xt, yt), (xs, ys) = boston_housing.load_data(test_split=0.3)
    order = np.arange(10)
    np.random.RandomState(113).shuffle(order)
    np.testing.assert_array_equal(yt, order[:7])
    np.testing.assert_array_equal(xs, x[order[7:]])
