"""parse_single_sequence_example / parse_sequence_example / FixedLenSequenceFeature
(dflow/kernels/sequence_parsing_ops.py); the expected values are TF 2.21's (`tensorflow.compat.v1`)
on the same records."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


def seq(ctx_len, tokens, feats):
    e = tf.train.SequenceExample()
    e.context.feature["length"].int64_list.value.append(ctx_len)
    for t in tokens:
        e.feature_lists.feature_list["tokens"].feature.add().bytes_list.value.append(t)
    for f in feats:
        e.feature_lists.feature_list["vals"].feature.add().float_list.value.extend(f)
    return e.SerializeToString()


R1 = seq(3, [b"a", b"b", b"c"], [[1, 2], [3, 4], [5, 6]])
R2 = seq(1, [b"x"], [[7, 8]])
CF = {"length": tf.FixedLenFeature([], tf.int64), "ctxv": tf.VarLenFeature(tf.int64),
      "missing": tf.FixedLenFeature([2], tf.float32, default_value=[0.5, 1.5])}
SF = {"tokens": tf.VarLenFeature(tf.string), "vals": tf.FixedLenSequenceFeature([2], tf.float32),
      "opt": tf.FixedLenSequenceFeature([], tf.int64, allow_missing=True)}


def test_single_sequence_example_matches_tf():
    c, f = tf.parse_single_sequence_example(R1, CF, SF)
    assert f["vals"].shape.as_list() == [None, 2] and c["missing"].shape.as_list() == [2]
    out = run_modes({"c_len": c["length"], "c_missing": c["missing"], "ctxv": c["ctxv"].dense_shape,
                     "tok_i": f["tokens"].indices, "tok_v": f["tokens"].values, "tok_s": f["tokens"].dense_shape,
                     "vals": f["vals"], "opt": f["opt"]})
    assert out["c_len"] == 3 and out["c_missing"].tolist() == [0.5, 1.5] and out["ctxv"].tolist() == [0]
    assert out["tok_i"].tolist() == [[0, 0], [1, 0], [2, 0]] and out["tok_s"].tolist() == [3, 1]
    assert out["tok_v"].tolist() == [b"a", b"b", b"c"]
    assert out["vals"].tolist() == [[1, 2], [3, 4], [5, 6]] and out["opt"].tolist() == []


def test_batched_sequence_examples_pad_and_count_steps():
    p = tf.placeholder(tf.string, [None])
    c, f, lengths = tf.io.parse_sequence_example(p, CF, SF)
    out = run_modes({"c_len": c["length"], "tok_i": f["tokens"].indices, "tok_s": f["tokens"].dense_shape,
                     "vals": f["vals"], "L": lengths["vals"], "Lopt": lengths["opt"]}, {p: [R1, R2]})
    assert out["c_len"].tolist() == [3, 1] and out["L"].tolist() == [3, 1] and out["Lopt"].tolist() == [0, 0]
    assert out["tok_i"].tolist() == [[0, 0, 0], [0, 1, 0], [0, 2, 0], [1, 0, 0]] and out["tok_s"].tolist() == [2, 3, 1]
    assert out["vals"].tolist() == [[[1, 2], [3, 4], [5, 6]], [[7, 8], [0, 0], [0, 0]]]
    padded = tf.io.parse_sequence_example([R1, R2], sequence_features={
        "vals": tf.io.FixedLenSequenceFeature([2], tf.float32, default_value=-1.0)})[1]["vals"]
    assert run_modes(padded)[1].tolist() == [[7, 8], [-1, -1], [-1, -1]]


def test_sequence_example_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Feature list 'nope' is required"):
        run_modes(tf.parse_single_sequence_example(R1, sequence_features={
            "nope": tf.FixedLenSequenceFeature([], tf.int64)})[1]["nope"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Number of values != expected"):
        run_modes(tf.parse_single_sequence_example(R1, sequence_features={
            "vals": tf.FixedLenSequenceFeature([3], tf.float32)})[1]["vals"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="data types don't match"):
        run_modes(tf.parse_single_sequence_example(R1, sequence_features={
            "vals": tf.FixedLenSequenceFeature([2], tf.int64)})[1]["vals"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Context feature 'gone' is required"):
        run_modes(tf.parse_single_sequence_example(R1, {"gone": tf.FixedLenFeature([], tf.int64)})[0]["gone"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse"):
        run_modes(tf.parse_single_sequence_example(b"\xff\xff", CF)[0]["length"])
    with pytest.raises(ValueError, match="FixedLenSequenceFeature"):
        tf.parse_single_sequence_example(R1, sequence_features={"vals": tf.FixedLenFeature([2], tf.float32)})
    with pytest.raises(TypeError, match="float32, int64 or string"):
        tf.parse_single_sequence_example(R1, {"length": tf.FixedLenFeature([], tf.int32)})
    with pytest.raises(ValueError, match="scalar"):
        tf.parse_single_sequence_example(np.array([R1], object), CF)


# ---- SparseFeature in parse_example (kernels/parsing_ops.py) -------------------------------------------


def _indexed(ix, iy, v):
    e = tf.train.Example()
    e.features.feature["ix"].int64_list.value.extend(ix)
    e.features.feature["iy"].int64_list.value.extend(iy)
    e.features.feature["val"].float_list.value.extend(v)
    return e.SerializeToString()


def test_sparse_feature_matches_tf():
    r = [_indexed([3, 1], [0, 2], [0.5, 1.5]), _indexed([4], [1], [2.5])]
    p = tf.parse_example(r, {"sp": tf.SparseFeature("ix", "val", tf.float32, 6),
                             "sp2": tf.io.SparseFeature(["ix", "iy"], "val", tf.float32, [6, 3])})
    assert sorted(p) == ["sp", "sp2"]  # the index and value keys are not outputs unless asked for
    out = run_modes({k: [p[k].indices, p[k].values, p[k].dense_shape] for k in p})
    assert [x.tolist() for x in out["sp"]] == [[[0, 1], [0, 3], [1, 4]], [1.5, 0.5, 2.5], [2, 6]]  # TF's
    assert [x.tolist() for x in out["sp2"]] == [[[0, 1, 2], [0, 3, 0], [1, 4, 1]], [1.5, 0.5, 2.5], [2, 6, 3]]
    one = tf.parse_single_example(r[0], {"sp": tf.SparseFeature("ix", "val", tf.float32, 6)})["sp"]
    assert [x.tolist() for x in run_modes([one.indices, one.values, one.dense_shape])] == \
        [[[1], [3]], [1.5, 0.5], [6]]


def test_sparse_feature_errors():
    with pytest.raises(ValueError, match="2 index keys but 1 sizes"):
        tf.parse_example([b""], {"sp": tf.SparseFeature(["ix", "iy"], "val", tf.float32, 6)})
    with pytest.raises(ValueError, match="also given"):
        tf.parse_example([b""], {"sp": tf.SparseFeature("ix", "val", tf.float32, 6),
                                 "val": tf.FixedLenFeature([], tf.float32)})
