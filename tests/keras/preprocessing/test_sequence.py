"""tf.keras.preprocessing.sequence against Keras's documented behaviour."""

import random

import numpy as np
import pytest

from dflow.keras.preprocessing import sequence


def test_pad_sequences_padding_truncating_value_dtype():
    seqs = [[1], [2, 3], [4, 5, 6]]
    np.testing.assert_array_equal(sequence.pad_sequences(seqs), [[0, 0, 1], [0, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(sequence.pad_sequences(seqs, padding="post"), [[1, 0, 0], [2, 3, 0], [4, 5, 6]])
    np.testing.assert_array_equal(sequence.pad_sequences(seqs, maxlen=2), [[0, 1], [2, 3], [5, 6]])
    np.testing.assert_array_equal(sequence.pad_sequences(seqs, maxlen=2, truncating="post"),
                                  [[0, 1], [2, 3], [4, 5]])
    out = sequence.pad_sequences(seqs, maxlen=4, value=-1.5, dtype="float32")
    assert out.dtype == np.float32 and out[0].tolist() == [-1.5, -1.5, -1.5, 1]
    assert sequence.pad_sequences([[1.9]]).tolist() == [[1]]  # int32 by default, as Keras
    strings = sequence.pad_sequences([["a"], ["b", "c"]], dtype=object, value="<pad>")
    assert strings.tolist() == [["<pad>", "a"], ["b", "c"]]
    vectors = sequence.pad_sequences([np.ones((1, 2)), np.ones((2, 2))])
    assert vectors.shape == (2, 2, 2) and vectors[0, 0].tolist() == [0, 0]
    assert sequence.pad_sequences([[], [1]]).tolist() == [[0], [1]]


def test_pad_sequences_errors():
    with pytest.raises(ValueError, match='Padding type "middle" not understood'):
        sequence.pad_sequences([[1]], padding="middle")
    with pytest.raises(ValueError, match='Truncating type "x" not understood'):
        sequence.pad_sequences([[1, 2]], maxlen=1, truncating="x")
    with pytest.raises(ValueError, match="must be a list of iterables. Found non-iterable: 3"):
        sequence.pad_sequences([[1], 3])
    with pytest.raises(ValueError, match="should set `dtype=object`"):
        sequence.pad_sequences([[1]], value="x")
    with pytest.raises(ValueError, match="Shape of sample"):
        sequence.pad_sequences([np.ones((1, 2)), np.ones((1, 3))])


def test_sampling_table_and_skipgrams():
    table = sequence.make_sampling_table(10)
    assert table.shape == (10,) and np.all(table <= 1) and np.all(np.diff(table[1:]) >= 0)
    couples, labels = sequence.skipgrams([1, 2, 3, 0], vocabulary_size=5, window_size=1, negative_samples=0,
                                         shuffle=False)
    assert couples == [[1, 2], [2, 1], [2, 3], [3, 2]] and labels == [1, 1, 1, 1]
    random.seed(0)
    couples, labels = sequence.skipgrams([1, 2, 3], vocabulary_size=5, window_size=2, negative_samples=1.0,
                                         categorical=True, seed=3)
    assert len(couples) == 12 and labels.count([0, 1]) == 6 and labels.count([1, 0]) == 6
    assert all(1 <= c <= 4 for pair in couples for c in pair)


def test_timeseries_generator():
    data = np.arange(20).reshape(10, 2)
    targets = np.arange(10)
    gen = sequence.TimeseriesGenerator(data, targets, length=3, sampling_rate=1, batch_size=2)
    assert len(gen) == 4  # targets 3..9, two per batch
    x, y = gen[0]
    np.testing.assert_array_equal(x, [data[0:3], data[1:4]])
    np.testing.assert_array_equal(y, [3, 4])
    x, y = gen[3]
    assert x.shape == (1, 3, 2) and y.tolist() == [9]
    rev = sequence.TimeseriesGenerator(data, targets, length=4, sampling_rate=2, stride=2, reverse=True,
                                       batch_size=10)
    x, y = rev[0]
    np.testing.assert_array_equal(x[0], data[0:4:2][::-1])
    assert y.tolist() == [4, 6, 8]
    with pytest.raises(ValueError, match="Data and targets have to be of same length"):
        sequence.TimeseriesGenerator(data, targets[:5], length=3)
    with pytest.raises(ValueError, match="is disallowed"):
        sequence.TimeseriesGenerator(data, targets, length=10)
