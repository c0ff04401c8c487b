"""IMDB movie reviews: 25000 + 25000 word-id sequences labelled by sentiment."""

from __future__ import annotations

import numpy as np

from ._fetch import ORIGIN_FOLDER, fetch
from ._sequences import check_kwargs, clip_words, encode, object_array, remove_long_seq, word_index

__all__ = ["load_data", "get_word_index"]

FILE_HASH = "599dadb1135973df5b59232a0e9a887c"  # TF 1.15's md5 of imdb.npz
WORD_INDEX_HASH = "bfafd718b763782e994055a2d397834f"


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1, oov_char=2,
              index_from=3, **kwargs):
    """((x_train, y_train), (x_test, y_test)): object arrays of word-id lists (see
    `_sequences.encode`), each split shuffled with `seed`; sequences of `maxlen` or more dropped."""
    num_words = check_kwargs(kwargs) or num_words
    path = fetch(path, ORIGIN_FOLDER + "imdb.npz", file_hash=FILE_HASH)
    with np.load(path, allow_pickle=True) as f:
        x_train, labels_train = f["x_train"], f["y_train"]
        x_test, labels_test = f["x_test"], f["y_test"]
    rng = np.random.RandomState(seed)
    indices = np.arange(len(x_train))
    rng.shuffle(indices)
    x_train, labels_train = x_train[indices], labels_train[indices]
    indices = np.arange(len(x_test))
    rng.shuffle(indices)
    x_test, labels_test = x_test[indices], labels_test[indices]
    xs = encode(list(x_train) + list(x_test), start_char, index_from)
    labels = np.concatenate([labels_train, labels_test])
    n_train = len(x_train)
    if maxlen:
        x_train, labels_train = remove_long_seq(maxlen, xs[:n_train], labels[:n_train])
        x_test, labels_test = remove_long_seq(maxlen, xs[n_train:], labels[n_train:])
        if not x_train or not x_test:
            raise ValueError("After filtering for sequences shorter than maxlen=" + str(maxlen) +
                             ", no sequence was kept. Increase maxlen.")
        xs, labels, n_train = x_train + x_test, np.concatenate([labels_train, labels_test]), len(x_train)
    xs = clip_words(xs, skip_top, num_words, oov_char)
    x_train, x_test = object_array(xs[:n_train]), object_array(xs[n_train:])
    return (x_train, np.asarray(labels[:n_train])), (x_test, np.asarray(labels[n_train:]))


def get_word_index(path="imdb_word_index.json"):
    """{word: index} (the data's ids are these plus index_from)."""
    return word_index(path, WORD_INDEX_HASH)
