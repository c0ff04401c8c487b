"""The word-index sequence handling imdb and reuters share (start/oov chars, index_from,
skip_top, num_words, maxlen)."""

from __future__ import annotations

import json

import numpy as np

from ._fetch import ORIGIN_FOLDER, fetch


def remove_long_seq(maxlen, seq, label):
    new_seq, new_label = [], []
    for x, y in zip(seq, label):
        if len(x) < maxlen:
            new_seq.append(x)
            new_label.append(y)
    return new_seq, new_label


def encode(xs, start_char, index_from):
    """Word ids shifted by index_from behind start_char."""
    if start_char is not None:
        xs = [[start_char] + [w + index_from for w in x] for x in xs]
    elif index_from:
        xs = [[w + index_from for w in x] for x in xs]
    return xs


def clip_words(xs, skip_top, num_words, oov_char):
    """Ids outside [skip_top, num_words) become oov_char (dropped when oov_char is None)."""
    if not num_words:
        num_words = max(max(x) for x in xs if len(x)) if xs else 0
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]


def word_index(fname, file_hash):
    path = fetch(fname, ORIGIN_FOLDER + fname, file_hash=file_hash)
    with open(path) as f:
        return json.load(f)


def check_kwargs(kwargs):
    if "nb_words" in kwargs:
        kwargs = dict(kwargs)
        num_words = kwargs.pop("nb_words")
    else:
        num_words = None
    if kwargs:
        raise TypeError("Unrecognized keyword arguments: " + str(kwargs))
    return num_words


def object_array(seqs):
    """A 1-D object array of lists (numpy would make equal-length lists a 2-D array)."""
    out = np.empty(len(seqs), dtype=object)
    for i, seq in enumerate(seqs):
        out[i] = seq
    return out
