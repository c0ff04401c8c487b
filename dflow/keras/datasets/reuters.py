"""Reuters newswires: 11228 word-id sequences in 46 topics, split by test_split."""

from __future__ import annotations

import numpy as np

from ._fetch import ORIGIN_FOLDER, fetch
from ._sequences import check_kwargs, clip_words, encode, object_array, remove_long_seq, word_index

__all__ = ["load_data", "get_word_index"]

FILE_HASH = "87aedbeb0cb229e378797a632c1997b6"  # TF 1.15's md5 of reuters.npz
WORD_INDEX_HASH = "4d44cc38712099c9e383dc6e5f11a921"


def load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2, seed=113, start_char=1,
              oov_char=2, index_from=3, **kwargs):
    """((x_train, y_train), (x_test, y_test)) as imdb's, the first 1 - test_split of a seeded
    shuffle training."""
    num_words = check_kwargs(kwargs) or num_words
    path = fetch(path, ORIGIN_FOLDER + "reuters.npz", file_hash=FILE_HASH)
    with np.load(path, allow_pickle=True) as f:
        xs, labels = f["x"], f["y"]
    indices = np.arange(len(xs))
    np.random.RandomState(seed).shuffle(indices)
    xs, labels = xs[indices], labels[indices]
    xs = encode(list(xs), start_char, index_from)
    if maxlen:
        xs, labels = remove_long_seq(maxlen, xs, labels)
    xs = clip_words(xs, skip_top, num_words, oov_char)
    cut = int(len(xs) * (1 - test_split))
    x_train, x_test = object_array(xs[:cut]), object_array(xs[cut:])
    labels = np.asarray(labels)
    return (x_train, labels[:cut]), (x_test, labels[cut:])


def get_word_index(path="reuters_word_index.json"):
    return word_index(path, WORD_INDEX_HASH)
