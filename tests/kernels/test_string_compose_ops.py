"""tf.strings.ngrams, unsorted_segment_join, format and unicode_transcode
(dflow/kernels/string_compose_ops.py); expected values are TF 2.21's on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

D = np.array([[b"a", b"b", b"c"], [b"d", b"e", b"f"]], object)


def test_ngrams_match_tf():
    out = run_modes([tf.strings.ngrams(D, 2), tf.strings.ngrams(D, [1, 3], separator=b"_", pad_values=(b"<", b">")),
                     tf.strings.ngrams(D, 5, preserve_short_sequences=True), tf.strings.ngrams(D, 5),
                     tf.strings.ngrams([b"a", b"b"], 2, pad_values=b"#", padding_width=1)])
    assert out[0].tolist() == [[b"a b", b"b c"], [b"d e", b"e f"]]
    assert out[1].tolist() == [[b"a", b"b", b"c", b"<_<_a", b"<_a_b", b"a_b_c", b"b_c_>", b"c_>_>"],
                               [b"d", b"e", b"f", b"<_<_d", b"<_d_e", b"d_e_f", b"e_f_>", b"f_>_>"]]
    assert out[2].tolist() == [[b"a b c"], [b"d e f"]]
    assert out[3].shape == (2, 0)
    assert out[4].tolist() == [b"# a", b"a b", b"b #"]
    assert tf.strings.ngrams(D, [1, 3], pad_values=b"x").shape.as_list() == [2, 8]


def test_ngrams_errors():
    with pytest.raises(ValueError, match="positive"):
        tf.strings.ngrams(D, 0)
    with pytest.raises(ValueError, match="pad_values"):
        tf.strings.ngrams(D, 2, pad_values=(b"a", b"b", b"c"))
    with pytest.raises(ValueError, match="rank >= 1"):
        tf.strings.ngrams(b"abc", 2)


def test_unsorted_segment_join():
    out = run_modes(tf.strings.unsorted_segment_join([b"a", b"b", b"c"], [1, 0, 1], 3, separator=b":"))
    assert out.tolist() == [b"b", b"a:c", b""]  # TF's
    two = run_modes(tf.strings.unsorted_segment_join(D, [0, 0], 1, separator="-"))
    assert two.tolist() == [[b"a-d", b"b-e", b"c-f"]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        run_modes(tf.strings.unsorted_segment_join([b"a"], [4], 2))


def test_format_prints_like_tf():
    out = run_modes([tf.strings.format("x={} y={}", [tf.constant([1.5, 2]), tf.constant("s")]),
                     tf.strings.format("{}", tf.range(12), summarize=2),
                     tf.strings.format("{}", tf.reshape(tf.range(12), [3, 4])),
                     tf.strings.format("<>", tf.range(3), placeholder="<>", summarize=-1)])
    assert out == [b'x=[1.5 2] y="s"', b"[0 1 ... 10 11]", b"[[0 1 2 3]\n [4 5 6 7]\n [8 9 10 11]]", b"[0 1 2]"]
    with pytest.raises(ValueError, match="placeholders"):
        tf.strings.format("{} {}", tf.range(3))


def test_unicode_transcode():
    out = run_modes(tf.strings.unicode_transcode([b"h\xc3\xa9", b"\xff"], "UTF-8", "UTF-16-BE"))
    assert out.tolist() == [b"\x00h\x00\xe9", b"\xff\xfd"]  # TF's
    back = run_modes(tf.strings.unicode_transcode(out, "UTF-16-BE", "UTF-8"))
    assert back.tolist() == ["hé".encode(), "\ufffd".encode()]
    assert run_modes(tf.strings.unicode_transcode([b"a\xffb"], "UTF-8", "UTF-8", errors="ignore")).tolist() == [b"ab"]
    assert run_modes(tf.strings.unicode_transcode([b"a\xff"], "UTF-8", "UTF-8", replacement_char=ord("?"))).tolist() \
        == [b"a?"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid formatting"):
        run_modes(tf.strings.unicode_transcode([b"\xff"], "UTF-8", "UTF-8", errors="strict"))
    with pytest.raises(ValueError, match="encoding"):
        tf.strings.unicode_transcode([b"a"], "latin-1", "UTF-8")
