"""tf.keras.utils: to_categorical, normalize, Sequence, get_file (cache, hashes, offline), the
Progbar's lines, plot_model's ImportError without pydot."""

import hashlib
import importlib.util
import io
import os
import sys

import numpy as np
import pytest

from dflow.keras import utils


def test_to_categorical_and_normalize():
    np.testing.assert_array_equal(utils.to_categorical([[1], [2], [0]]), np.eye(3)[[1, 2, 0]])
    out = utils.to_categorical(np.array([[0, 1], [2, 1]]), num_classes=4, dtype="int32")
    assert out.shape == (2, 2, 4) and out.dtype == np.int32 and out[1, 0, 2] == 1
    with pytest.raises(ValueError, match="class ids must lie in"):
        utils.to_categorical([0, 5], num_classes=3)
    x = np.random.RandomState(0).randn(4, 3)
    np.testing.assert_allclose(utils.normalize(x), x / np.linalg.norm(x, axis=-1, keepdims=True))
    np.testing.assert_allclose(utils.normalize(np.zeros((2, 2))), np.zeros((2, 2)))
    np.testing.assert_allclose(utils.normalize(x, axis=0, order=1), x / np.abs(x).sum(0, keepdims=True))


def test_sequence_iterates_batches():
    class Squares(utils.Sequence):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return i * i

    assert list(Squares()) == [0, 1, 4]
    with pytest.raises(NotImplementedError):
        len(utils.Sequence())


def test_get_file_cache_hash_and_offline(tmp_path):
    source = tmp_path / "src.txt"
    source.write_bytes(b"hello keras")
    digest = hashlib.sha256(b"hello keras").hexdigest()
    path = utils.get_file("data.txt", source.as_uri(), file_hash=digest, cache_dir=str(tmp_path / "cache"))
    assert path == str(tmp_path / "cache" / "datasets" / "data.txt") and open(path, "rb").read() == b"hello keras"
    # cached: the origin is not read again
    assert utils.get_file("data.txt", "http://unreachable.invalid/x", cache_dir=str(tmp_path / "cache")) == path
    assert utils.validate_file(path, hashlib.md5(b"hello keras").hexdigest())
    with pytest.raises(Exception, match="URL fetch failure on .*missing.txt"):
        utils.get_file("other.txt", (tmp_path / "missing.txt").as_uri(), cache_dir=str(tmp_path / "cache"))
    with pytest.raises(ValueError, match="different hash"):
        utils.get_file("bad.txt", source.as_uri(), file_hash="0" * 64, cache_dir=str(tmp_path / "cache"))
    assert sorted(os.listdir(tmp_path / "cache" / "datasets")) == ["data.txt"]  # nothing half-written


def _capture(monkeypatch, tty):
    out = io.StringIO()
    out.isatty = lambda: tty
    monkeypatch.setattr(sys, "stdout", out)
    return out


def test_progbar_not_a_tty_prints_only_the_final_line(monkeypatch):
    out = _capture(monkeypatch, tty=False)
    bar = utils.Progbar(10)
    for i in range(10):
        bar.update(i + 1, [("loss", float(i))])
    text = out.getvalue()
    assert text.count("\n") == 1 and "\r" not in text
    assert text.startswith("10/10 [==============================] - ")
    assert text.rstrip().endswith(" - loss: 4.5000")  # averaged over the steps


def test_progbar_tty_rewrites_the_line(monkeypatch):
    out = _capture(monkeypatch, tty=True)
    bar = utils.Progbar(10, interval=0.0, stateful_metrics=["acc"])
    bar.update(4, [("loss", 4.8078), ("acc", 0.5)])
    assert out.getvalue() == "\r 4/10 [===========>..................] - ETA: 0s - loss: 4.8078 - acc: 0.5"
    bar.add(6, [("loss", 0.0), ("acc", 0.75)])
    last = out.getvalue().split("\r")[-1]
    assert last.startswith("10/10 [==============================] - ") and last.endswith(" - acc: 0.75\n")
    assert "loss: 1.9231" in last  # (4.8078 * 4 + 0 * 6) / 10


@pytest.mark.skipif(importlib.util.find_spec("pydot") is not None, reason="pydot is installed")
def test_plot_model_without_pydot_says_so():
    with pytest.raises(ImportError, match="Failed to import pydot. You must install pydot and graphviz"):
        utils.plot_model(object(), to_file="never.png")
    assert not os.path.exists("never.png")
