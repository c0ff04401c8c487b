"""tf.keras.preprocessing.text: word splitting, hashing, and the Tokenizer."""

import numpy as np
import pytest

from dflow.keras.preprocessing import text

TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "the cat"]


def test_text_to_word_sequence_and_hashing():
    assert text.text_to_word_sequence("Hello, World! Hi-there\tyou") == ["hello", "world", "hi", "there", "you"]
    assert text.text_to_word_sequence("a;b;C", filters="", lower=False, split=";") == ["a", "b", "C"]
    ids = text.hashing_trick("the cat the", 10, hash_function="md5")
    assert ids[0] == ids[2] and all(1 <= i < 10 for i in ids)
    assert ids == text.hashing_trick("The Cat THE", 10, hash_function="md5")
    assert all(1 <= i < 5 for i in text.one_hot("a b c d e", 5))


def test_tokenizer_vocabulary_and_sequences():
    tok = text.Tokenizer()
    tok.fit_on_texts(TEXTS)
    assert tok.word_index["the"] == 1 and tok.word_index["cat"] == 2 and tok.document_count == 3
    assert tok.word_counts["the"] == 4 and tok.word_docs["the"] == 3 and tok.index_docs[1] == 3
    assert tok.texts_to_sequences(["the cat ate a fish"]) == [[1, 2, tok.word_index["ate"]]]
    assert tok.sequences_to_texts([[1, 2, 99]]) == ["the cat"]
    capped = text.Tokenizer(num_words=3, oov_token="<unk>")
    capped.fit_on_texts(TEXTS)
    assert capped.word_index["<unk>"] == 1 and capped.word_index["the"] == 2
    assert capped.texts_to_sequences(["the dog zebra"]) == [[2, 1, 1]]
    assert capped.sequences_to_texts([[2, 7]]) == ["the <unk>"]


def test_tokenizer_matrices():
    tok = text.Tokenizer(num_words=4)
    tok.fit_on_texts(TEXTS)
    seqs = tok.texts_to_sequences(["the the cat dog"])  # 'dog' is id 5 >= 4: dropped
    assert seqs == [[1, 1, 2]]
    np.testing.assert_array_equal(tok.texts_to_matrix(["the the cat"], mode="count"), [[0, 2, 1, 0]])
    np.testing.assert_array_equal(tok.texts_to_matrix(["the the cat"], mode="binary"), [[0, 1, 1, 0]])
    np.testing.assert_allclose(tok.texts_to_matrix(["the the cat"], mode="freq"), [[0, 2 / 3, 1 / 3, 0]])
    tfidf = tok.texts_to_matrix(["the the cat"], mode="tfidf")
    np.testing.assert_allclose(tfidf[0, 1], (1 + np.log(2)) * np.log(1 + 3 / (1 + 3)))
    np.testing.assert_allclose(tfidf[0, 2], np.log(1 + 3 / (1 + 2)))
    with pytest.raises(ValueError, match="Unknown vectorization mode"):
        tok.texts_to_matrix(["the"], mode="nope")
    with pytest.raises(ValueError, match="fit on some text data first"):
        text.Tokenizer().texts_to_matrix(["x"])


def test_tokenizer_char_level_and_json_round_trip():
    tok = text.Tokenizer(char_level=True)
    tok.fit_on_texts(["abca"])
    assert tok.word_index == {"a": 1, "b": 2, "c": 3}
    assert tok.texts_to_sequences(["cab"]) == [[3, 1, 2]]
    again = text.tokenizer_from_json(tok.to_json())
    assert again.word_index == tok.word_index and again.texts_to_sequences(["cab"]) == [[3, 1, 2]]
    with pytest.raises(TypeError, match="Unrecognized keyword arguments"):
        text.Tokenizer(bogus=1)
