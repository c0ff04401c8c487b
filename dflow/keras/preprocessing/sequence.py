"""`tf.keras.preprocessing.sequence`: padding, skip-gram pairs, Zipf sampling tables and the
sliding-window `TimeseriesGenerator`, as Keras (keras_preprocessing 1.1) does them."""

from __future__ import annotations

import random

import numpy as np

from ..utils.data_utils import Sequence

__all__ = ["pad_sequences", "make_sampling_table", "skipgrams", "TimeseriesGenerator"]


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """A (len(sequences), maxlen) + sample_shape array: each sequence cut to `maxlen` (its start
    dropped for truncating='pre', its end for 'post') and filled with `value` before ('pre') or
    after ('post'); maxlen defaults to the longest. ValueError for a bad padding/truncating, a
    non-iterable sample, mismatched sample shapes or a string `value` with a non-object dtype."""
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    num_samples = len(sequences)
    lengths, sample_shape, first = [], (), True
    for x in sequences:
        try:
            lengths.append(len(x))
        except TypeError:
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: {x}") from None
        if first and len(x):
            sample_shape = np.asarray(x).shape[1:]
            first = False
    if maxlen is None:
        maxlen = int(np.max(lengths)) if lengths else 0
    is_dtype_str = np.issubdtype(dtype, np.str_)
    if isinstance(value, str) and dtype is not object and dtype != "object" and not is_dtype_str:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}\n"
                         "You should set `dtype=object` for variable length strings.")
    x = np.full((num_samples, maxlen) + sample_shape, value, dtype=dtype)
    for idx, s in enumerate(sequences):
        if not len(s):
            continue
        if truncating == "pre":
            trunc = s[-maxlen:]
        elif truncating == "post":
            trunc = s[:maxlen]
        else:
            raise ValueError(f'Truncating type "{truncating}" not understood')
        trunc = np.asarray(trunc, dtype=dtype)
        if trunc.shape[1:] != sample_shape:
            raise ValueError(f"Shape of sample {trunc.shape[1:]} of sequence at position {idx} is different from "
                             f"expected shape {sample_shape}")
        if padding == "post":
            x[idx, :len(trunc)] = trunc
        elif padding == "pre":
            x[idx, -len(trunc):] = trunc
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return x


def make_sampling_table(size, sampling_factor=1e-5):
    """p[i]: the probability of keeping the i-th most frequent word (word2vec's subsampling under
    a Zipf distribution)."""
    gamma = 0.577
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence, vocabulary_size, window_size=4, negative_samples=1.0, shuffle=True, categorical=False,
              sampling_table=None, seed=None):
    """(couples, labels): [word, context] pairs within `window_size` labelled 1, and
    `negative_samples` times as many [word, random word] pairs labelled 0 (index 0 is skipped)."""
    couples, labels = [], []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i:
                wj = sequence[j]
                if not wj:
                    continue
                couples.append([wi, wj])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0:
        num_negative = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[i % len(words)], random.randint(1, vocabulary_size - 1)] for i in range(num_negative)]
        labels += [[1, 0] if categorical else 0] * num_negative
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(10e6))
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels


class TimeseriesGenerator(Sequence):
    """Batches of (windows of `length` steps sampled every `sampling_rate`, the target after each
    window) from `data` and `targets`, windows `stride` apart, between start_index and end_index."""

    def __init__(self, data, targets, length, sampling_rate=1, stride=1, start_index=0, end_index=None,
                 shuffle=False, reverse=False, batch_size=128):
        if len(data) != len(targets):
            raise ValueError(f"Data and targets have to be of same length. Data length is {len(data)} while target "
                             f"length is {len(targets)}")
        self.data, self.targets = data, targets
        self.length, self.sampling_rate, self.stride = length, sampling_rate, stride
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle, self.reverse, self.batch_size = shuffle, reverse, batch_size
        if self.start_index > self.end_index:
            raise ValueError(f"`start_index+length={self.start_index} > end_index={self.end_index}` is disallowed, "
                             "as no part of the sequence would be left to be used as current step.")

    def __len__(self):
        return (self.end_index - self.start_index + self.batch_size * self.stride) // (self.batch_size * self.stride)

    def __getitem__(self, index):
        if self.shuffle:
            rows = np.random.randint(self.start_index, self.end_index + 1, size=self.batch_size)
        else:
            i = self.start_index + self.batch_size * self.stride * index
            rows = np.arange(i, min(i + self.batch_size * self.stride, self.end_index + 1), self.stride)
        samples = np.array([self.data[row - self.length:row:self.sampling_rate] for row in rows])
        targets = np.array([self.targets[row] for row in rows])
        if self.reverse:
            return samples[:, ::-1, ...], targets
        return samples, targets

    def get_config(self):
        return {"length": self.length, "sampling_rate": self.sampling_rate, "stride": self.stride,
                "start_index": self.start_index - self.length, "end_index": self.end_index,
                "shuffle": self.shuffle, "reverse": self.reverse, "batch_size": self.batch_size}
