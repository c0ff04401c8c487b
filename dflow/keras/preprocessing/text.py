"""`tf.keras.preprocessing.text`: splitting text into words, hashing words to ids, and the
`Tokenizer` (a vocabulary by frequency, texts as id sequences or as count/tfidf matrices), as
Keras (keras_preprocessing 1.1) does them."""

from __future__ import annotations

import json
from collections import OrderedDict, defaultdict
from hashlib import md5

import numpy as np

__all__ = ["text_to_word_sequence", "one_hot", "hashing_trick", "Tokenizer", "tokenizer_from_json"]

_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(text, filters=_FILTERS, lower=True, split=" "):
    """The words of `text`: lowercased, each character of `filters` replaced by `split`, empty
    words dropped."""
    if lower:
        text = text.lower()
    text = text.translate(str.maketrans({c: split for c in filters}))
    return [w for w in text.split(split) if w]


def hashing_trick(text, n, hash_function=None, filters=_FILTERS, lower=True, split=" "):
    """Each word's id in [1, n): hash(word) % (n - 1) + 1 (`hash_function` None: Python's hash,
    'md5': a stable md5)."""
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        def hash_function(w):
            return int(md5(w.encode()).hexdigest(), 16)
    return [hash_function(w) % (n - 1) + 1 for w in text_to_word_sequence(text, filters=filters, lower=lower,
                                                                           split=split)]


def one_hot(text, n, filters=_FILTERS, lower=True, split=" "):
    """`hashing_trick` with Python's hash."""
    return hashing_trick(text, n, hash_function=hash, filters=filters, lower=lower, split=split)


class Tokenizer:
    """A vocabulary ranked by word count (index 1 the most frequent; `oov_token`, when given, is 1
    and stands for unknown words); `num_words` keeps only ids below it when converting."""

    def __init__(self, num_words=None, filters=_FILTERS, lower=True, split=" ", char_level=False, oov_token=None,
                 document_count=0, **kwargs):
        if "nb_words" in kwargs:
            num_words = kwargs.pop("nb_words")
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {kwargs}")
        self.word_counts = OrderedDict()
        self.word_docs = defaultdict(int)
        self.filters, self.split, self.lower = filters, split, lower
        self.num_words = num_words
        self.document_count = document_count
        self.char_level = char_level
        self.oov_token = oov_token
        self.index_docs = defaultdict(int)
        self.word_index = {}
        self.index_word = {}

    def _words(self, text):
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [t.lower() for t in text] if isinstance(text, list) else text.lower()
            return text
        return text_to_word_sequence(text, self.filters, self.lower, self.split)

    def fit_on_texts(self, texts):
        """Counts the words of `texts` (strings, or lists of words) and ranks the vocabulary."""
        for text in texts:
            self.document_count += 1
            seq = self._words(text)
            for w in seq:
                self.word_counts[w] = self.word_counts.get(w, 0) + 1
            for w in set(seq):
                self.word_docs[w] += 1
        counts = sorted(self.word_counts.items(), key=lambda x: x[1], reverse=True)  # stable: first seen first
        vocabulary = ([] if self.oov_token is None else [self.oov_token]) + [w for w, _ in counts]
        self.word_index = dict(zip(vocabulary, range(1, len(vocabulary) + 1)))
        self.index_word = {c: w for w, c in self.word_index.items()}
        for w, c in list(self.word_docs.items()):
            self.index_docs[self.word_index[w]] = c

    def fit_on_sequences(self, sequences):
        """Counts documents per id (what tfidf needs) from id sequences."""
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def texts_to_sequences(self, texts):
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts):
        num_words = self.num_words
        oov_index = self.word_index.get(self.oov_token)
        for text in texts:
            vect = []
            for w in self._words(text):
                i = self.word_index.get(w)
                if i is not None:
                    if num_words and i >= num_words:
                        if oov_index is not None:
                            vect.append(oov_index)
                    else:
                        vect.append(i)
                elif self.oov_token is not None:
                    vect.append(oov_index)
            yield vect

    def sequences_to_texts(self, sequences):
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences):
        num_words = self.num_words
        oov_index = self.word_index.get(self.oov_token)
        for seq in sequences:
            vect = []
            for num in seq:
                word = self.index_word.get(num)
                if word is not None:
                    if num_words and num >= num_words:
                        if oov_index is not None:
                            vect.append(self.index_word[oov_index])
                    else:
                        vect.append(word)
                elif self.oov_token is not None:
                    vect.append(self.index_word[oov_index])
            yield " ".join(vect)

    def texts_to_matrix(self, texts, mode="binary"):
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences, mode="binary"):
        """A (len(sequences), num_words) matrix: 'binary', 'count', 'freq' or 'tfidf' per id."""
        if not self.num_words:
            if not self.word_index:
                raise ValueError("Specify a dimension (`num_words` argument), or fit on some text data first.")
            num_words = len(self.word_index) + 1
        else:
            num_words = self.num_words
        if mode not in ("binary", "count", "freq", "tfidf"):
            raise ValueError(f"Unknown vectorization mode: {mode}")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        x = np.zeros((len(sequences), num_words))
        for i, seq in enumerate(sequences):
            if not seq:
                continue
            counts = defaultdict(int)
            for j in seq:
                if j < num_words:
                    counts[j] += 1
            for j, c in counts.items():
                if mode == "count":
                    x[i][j] = c
                elif mode == "freq":
                    x[i][j] = c / len(seq)
                elif mode == "binary":
                    x[i][j] = 1
                else:
                    idf = np.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
                    x[i][j] = (1 + np.log(c)) * idf
        return x

    def get_config(self):
        return {"num_words": self.num_words, "filters": self.filters, "lower": self.lower, "split": self.split,
                "char_level": self.char_level, "oov_token": self.oov_token, "document_count": self.document_count,
                "word_counts": json.dumps(self.word_counts), "word_docs": json.dumps(self.word_docs),
                "index_docs": json.dumps(self.index_docs), "index_word": json.dumps(self.index_word),
                "word_index": json.dumps(self.word_index)}

    def to_json(self, **kwargs):
        return json.dumps({"class_name": self.__class__.__name__, "config": self.get_config()}, **kwargs)


def tokenizer_from_json(json_string):
    """The Tokenizer `Tokenizer.to_json()` described."""
    config = dict(json.loads(json_string).get("config"))
    word_counts = json.loads(config.pop("word_counts"))
    word_docs = json.loads(config.pop("word_docs"))
    index_docs = {int(k): v for k, v in json.loads(config.pop("index_docs")).items()}
    index_word = {int(k): v for k, v in json.loads(config.pop("index_word")).items()}
    word_index = json.loads(config.pop("word_index"))
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = OrderedDict(word_counts)
    tokenizer.word_docs = defaultdict(int, word_docs)
    tokenizer.index_docs = defaultdict(int, index_docs)
    tokenizer.word_index, tokenizer.index_word = word_index, index_word
    return tokenizer
