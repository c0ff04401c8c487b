"""Summary ops: TF1's tags, names and values, the same on the in-process path and on Dask (sync,
threads, processes), on chunked inputs. Figures marked "TF 2.21" were printed by
tensorflow-cpu 2.21 (`tensorflow.compat.v1`, graph mode) for the same inputs."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import dflow as tf
from dflow.summary.histogram import default_bucket_limits
from tests.conftest import make_session

MODES = ["eager", "sync", "threads"]
ALL = MODES + ["processes"]  # a process pool per Session costs ~1-2 s: only where it adds something


def _run(fetch, feed=None, modes=MODES, chunks=2):
    """The parsed Summary of `fetch` in each mode (chunks=2: dask inputs of several chunks)."""
    out = []
    for m in modes:
        with make_session(m, chunks=chunks) as s:
            value = s.run(fetch, feed)
        assert isinstance(value, bytes), f"{m}: a summary op gives bytes, got {type(value)}"
        out.append(tf.Summary.FromString(value))
    return out


def _png(value):
    return np.asarray(Image.open(io.BytesIO(value.image.encoded_image_string)))


# ---- scalar, names, collections -----------------------------------------------------------------


def test_scalar_tags_names_and_collection():
    x = tf.placeholder(tf.float32, [])
    with tf.name_scope("outer"):
        s = tf.summary.scalar("loss", x)
        s2 = tf.summary.scalar("loss", x * 2, family="fam")
    n = tf.summary.scalar("a b*c", tf.cast(x, tf.int64))
    # TF 2.21: op outer/loss (ScalarSummary, inputs outer/loss/tags:0), tag fam/outer/fam/loss, a_b_c
    assert (s.op.name, s.op.type, s.op.inputs[0].name) == ("outer/loss", "ScalarSummary", "outer/loss/tags:0")
    assert s2.op.name == "outer/fam/loss" and s.dtype == tf.string and s.shape.ndims == 0
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [s, s2, n]
    for summ in _run(tf.summary.merge([s, s2, n]), {x: 1.25}, modes=ALL):
        assert [(v.tag, v.simple_value) for v in summ.value] == [("outer/loss", 1.25), ("fam/outer/fam/loss", 2.5),
                                                                 ("a_b_c", 1.0)]


def test_scalar_errors():
    with pytest.raises(TypeError, match="bool"):
        tf.summary.scalar("b", tf.constant(True))
    v = tf.summary.scalar("v", tf.placeholder(tf.float32, [None]))
    for m in ["eager", "sync"]:
        with make_session(m) as s, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match=r"tags and values are not the same shape: \[\] != \[2\]"):
            s.run(v, {v.op.inputs[1]: [1.0, 2.0]})


def test_collections_merge_all_and_merge_names():
    assert tf.summary.merge_all() is None
    a = tf.summary.scalar("a", 1.0, collections=["mine"])
    b = tf.summary.scalar("b", 2.0, collections=[])
    assert tf.get_collection("mine") == [a] and tf.get_collection(tf.GraphKeys.SUMMARIES) == []
    assert tf.summary.merge_all("mine").op.name == "Merge/MergeSummary"  # TF 2.21
    assert tf.summary.merge_all("mine", name="foo").op.name == "foo/foo"  # TF 2.21
    m = tf.summary.merge([a, b], collections=["merged"])
    assert tf.get_collection("merged") == [m]
    with pytest.raises(TypeError):
        tf.summary.merge(a)


def test_merge_refuses_a_duplicate_tag():
    a = tf.summary.scalar("d", tf.placeholder(tf.float32, []))
    m = tf.summary.merge([a, a])
    with make_session("sync") as s, pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag d"):
        s.run(m, {a.op.inputs[1]: 1.0})


# ---- histogram --------------------------------------------------------------------------------------

# TF 2.21, tf.summary.histogram of this float32 vector:
_H_INPUT = np.array([-3.0, -1e-13, 0.0, 0.5, 1.0, 1.0, 2.5, 100.0, 1e-12], np.float32)
_H_LIMITS = [-3.1665833053880363, -2.8787120958073054, -1e-12, 0, 1e-12, 0.47069243095356195, 0.51776167404891815,
             0.917246389039776, 1.0089710279437536, 2.3791009056258718, 2.6170109961884593, 97.88757810018231,
             107.67633591020055, 1.7976931348623157e+308]
_H_COUNTS = [0, 1, 0, 1, 2, 0, 1, 0, 2, 0, 1, 0, 1, 0]


def test_histogram_matches_tf():
    x = tf.placeholder(tf.float32, [None])
    h = tf.summary.histogram("h", x)
    assert (h.op.type, h.op.inputs[0].name) == ("HistogramSummary", "h/tag:0")
    for summ in _run(h, {x: _H_INPUT}, modes=ALL):
        (v,) = summ.value
        assert v.tag == "h"
        np.testing.assert_allclose(list(v.histo.bucket_limit), _H_LIMITS, rtol=1e-14)
        assert list(v.histo.bucket) == _H_COUNTS
        assert (v.histo.min, v.histo.max, v.histo.num) == (-3, 100, 9)
        np.testing.assert_allclose([v.histo.sum, v.histo.sum_squares], [102.0000000000009, 10017.5], rtol=1e-12)


def test_default_bucket_limits_are_tfs():
    limits = default_bucket_limits()
    half = len(limits) // 2
    assert limits[half] == 0.0 and limits[-1] == np.finfo(np.float64).max
    np.testing.assert_allclose(limits[half + 1: half + 4], [1e-12, 1.1e-12, 1.21e-12])
    np.testing.assert_array_equal(limits[:half], -limits[half + 1:][::-1])  # mirrored
    assert np.all(np.diff(limits) > 0) and limits[-2] < 1e20 <= limits[-2] * 1.1


def _reference_counts(values):
    """TF's bucket of each value: the first limit > v, counted (numpy's searchsorted)."""
    limits = default_bucket_limits()
    return limits, np.bincount(np.searchsorted(limits, values.astype(np.float64).ravel(), side="right"),
                               minlength=len(limits))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_histogram_counts_against_numpy(dtype):
    rs = np.random.RandomState(1)
    data = (rs.standard_normal((7, 5)) * 10).astype(dtype)
    x = tf.placeholder(tf.as_dtype(dtype), [None, 5])
    h = tf.summary.histogram("h", x)
    limits, ref = _reference_counts(data)
    for summ in _run(h, {x: data}, chunks=(3, 2)):
        histo = summ.value[0].histo
        assert histo.num == data.size and sum(histo.bucket) == data.size
        assert (histo.min, histo.max) == (data.min(), data.max())
        np.testing.assert_allclose(histo.sum, data.astype(np.float64).sum(), rtol=1e-12)
        np.testing.assert_allclose(histo.sum_squares, (data.astype(np.float64) ** 2).sum(), rtol=1e-12)
        for limit, count in zip(histo.bucket_limit, histo.bucket):
            i = int(np.searchsorted(limits, limit))
            assert limits[i] == limit and ref[i] == count
        assert len([c for c in histo.bucket if c]) == np.count_nonzero(ref)


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=0, max_size=3), chunk=st.integers(1, 4),
       scale=st.sampled_from([1e-14, 1.0, 1e6]), seed=st.integers(0, 99))
def test_histogram_of_any_shape_and_chunking(shape, chunk, scale, seed):
    tf.reset_default_graph()
    data = (np.random.RandomState(seed).standard_normal(shape) * scale).astype(np.float32)
    x = tf.placeholder(tf.float32, shape)
    h = tf.summary.histogram("h", x)
    limits, ref = _reference_counts(data)
    for summ in _run(h, {x: data}, modes=["eager", "sync"], chunks=chunk):
        histo = summ.value[0].histo
        assert histo.num == data.size
        if data.size:
            assert (histo.min, histo.max) == (data.min(), data.max())
        got = {lim: c for lim, c in zip(histo.bucket_limit, histo.bucket) if c}
        assert got == {limits[i]: ref[i] for i in np.flatnonzero(ref)}
        assert sum(histo.bucket) == data.size


def test_histogram_of_a_big_chunk_goes_by_slabs(monkeypatch):
    import sys

    monkeypatch.setattr(sys.modules["dflow.summary.histogram"], "_SLAB", 7)  # 1 MiB elements normally
    data = np.random.RandomState(4).standard_normal(50).astype(np.float32)
    data[[3, 30]] = [1e30, -0.0]
    limits, ref = _reference_counts(data)
    (summ,) = _run(tf.summary.histogram("h", tf.placeholder_with_default(data, [50])), modes=["eager"])
    histo = summ.value[0].histo
    assert (histo.num, histo.min, histo.max) == (50, data.min(), data.max())
    assert {lim: c for lim, c in zip(histo.bucket_limit, histo.bucket) if c} == \
        {limits[i]: ref[i] for i in np.flatnonzero(ref)}


def test_histogram_of_nothing_and_of_nan():
    x = tf.placeholder(tf.float32, [None])
    h = tf.summary.histogram("he", x)
    # TF 2.21 for an empty tensor: min DBL_MAX, max -DBL_MAX, one bucket (DBL_MAX, 0)
    for summ in _run(h, {x: np.zeros(0, np.float32)}, modes=["eager", "sync"]):
        histo = summ.value[0].histo
        big = np.finfo(np.float64).max
        assert (histo.min, histo.max, histo.num, list(histo.bucket_limit), list(histo.bucket)) == \
            (big, -big, 0, [big], [0])
    for m in ["eager", "threads"]:
        with make_session(m, chunks=2) as s:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Nan in summary histogram for: he"):
                s.run(h, {x: [1.0, 2.0, np.nan]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="Infinity in summary histogram for: he"):
                s.run(h, {x: [1.0, np.inf, 2.0]})
    with pytest.raises(TypeError, match="bool"):
        tf.summary.histogram("hb", tf.constant([True]))


def test_histogram_of_a_chunked_zarr_array_streams(tmp_path):
    zarr = pytest.importorskip("zarr")
    data = np.random.RandomState(0).standard_normal((2000, 500)).astype(np.float32)  # 4 MB
    z = zarr.create_array(str(tmp_path / "x.zarr"), shape=data.shape, chunks=(100, 500), dtype="float32")
    z[:] = data
    x = tf.io.read_zarr(str(tmp_path / "x.zarr")) * 2.0
    h = tf.summary.histogram("h", x)
    # a budget of half the array: a summary that holds the whole tensor in one task (as
    # tensor_summary must) is refused before it runs; the histogram goes chunk by chunk (a 200 KB
    # chunk's task projects ~1.4 MB: the chunk, its float64 copy, bucket indices)
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="2MB") as s:
        with pytest.raises(tf.errors.ResourceExhaustedError, match="TensorSummaryV2"):
            s.run(tf.summary.tensor_summary("whole", x))
        histo = tf.Summary.FromString(s.run(h)).value[0].histo
    limits, ref = _reference_counts(data * 2.0)
    assert histo.num == data.size and histo.max == (data * 2).max()
    got = {lim: c for lim, c in zip(histo.bucket_limit, histo.bucket) if c}
    assert got == {limits[i]: ref[i] for i in np.flatnonzero(ref)}


# ---- image, audio --------------------------------------------------------------------------------------


def test_image_normalization_matches_tf():
    x = tf.placeholder(tf.float32, [None, None, None, None])
    one = tf.summary.image("im", x, max_outputs=1)
    three = tf.summary.image("im2", x)
    a = np.array([[[[-2.0], [0.3]], [[np.nan], [1.0]]]], np.float32)
    b = np.array([[[[0.1, 0.2, 0.3], [0.5, np.inf, 1.7]]]], np.float32)
    for summ in _run(one, {x: a}, modes=ALL):
        (v,) = summ.value
        assert (v.tag, v.image.height, v.image.width, v.image.colorspace) == ("im/image", 2, 2, 1)
        assert _png(v).tolist() == [[1, 147], [255, 191]]  # TF 2.21
    for summ in _run(three, {x: b}):
        (v,) = summ.value
        assert v.tag == "im2/image/0" and v.image.colorspace == 3
        assert _png(v).tolist() == [[[84, 169, 254], [255, 0, 0]]]  # TF 2.21
    for summ in _run(one, {x: np.array([[[[-1e-7], [5e-7]]]], np.float32)}, modes=["eager"]):
        assert _png(summ.value[0]).tolist() == [[128, 128]]  # TF 2.21: a range below 1e-6 scales by 0


def test_image_uint8_batch_and_max_outputs():
    rs = np.random.RandomState(2)
    data = rs.randint(0, 256, size=(5, 3, 4, 4)).astype(np.uint8)
    x = tf.placeholder(tf.uint8, [None, 3, 4, 4])
    s = tf.summary.image("im3", x, max_outputs=2)
    for summ in _run(s, {x: data}, chunks=(1, 3, 4, 4)):
        assert [v.tag for v in summ.value] == ["im3/image/0", "im3/image/1"]  # TF 2.21
        for i, v in enumerate(summ.value):
            assert (v.image.height, v.image.width, v.image.colorspace) == (3, 4, 4)
            np.testing.assert_array_equal(_png(v), data[i])


def test_image_bad_channels():
    x = tf.placeholder(tf.float32, None)
    s = tf.summary.image("bad", x)
    with make_session("eager") as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"4-D with last dim 1, 3, or 4, not \[1,2,2,2\]"):
            sess.run(s, {x: np.zeros((1, 2, 2, 2), np.float32)})
    with pytest.raises(TypeError, match="int32"):
        tf.summary.image("i", tf.zeros([1, 2, 2, 1], tf.int32))


def test_audio_matches_tf():
    x = tf.placeholder(tf.float32, None)
    one = tf.summary.audio("au", x, 16000, max_outputs=1)
    three = tf.summary.audio("au3", x, 100)
    assert [t.name for t in one.op.inputs] == ["au/tag:0", "Placeholder:0", "au/sample_rate:0"]
    for summ in _run(one, {x: np.array([[0.5, -1.5, 1.0, -1.0, 0.00002, 1e-5]], np.float32)}):
        (v,) = summ.value
        assert (v.tag, v.audio.num_channels, v.audio.length_frames, v.audio.content_type) == \
            ("au/audio", 1, 6, "audio/wav")
        assert v.audio.sample_rate == 16000
        assert v.audio.encoded_audio_string[44:] == b"\x00@\x00\x80\xff\x7f\x00\x80\x01\x00\x00\x00"  # TF 2.21
    tf_wav = (b"RIFF<\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x04\x00d\x00\x00\x00 \x03\x00\x00\x08\x00\x10\x00"
              b"data\x18\x00\x00\x00\x00\x00f\x06\xcd\x0c3\x13\x9a\x19\x00 f&\xcd,33\x9a9\x00@fF")  # TF 2.21
    for summ in _run(three, {x: np.arange(12, dtype=np.float32).reshape(1, 3, 4) / 20}):
        (v,) = summ.value
        assert (v.tag, v.audio.num_channels, v.audio.length_frames) == ("au3/audio/0", 4, 3)
        assert v.audio.encoded_audio_string == tf_wav
    bad = tf.summary.audio("au4", x, -5.0)
    with make_session("eager") as s, pytest.raises(tf.errors.InvalidArgumentError, match="sample_rate must be > 0"):
        s.run(bad, {x: np.zeros((1, 3), np.float32)})


def test_audio_samples_as_wav_frames():
    data = np.random.RandomState(3).uniform(-1, 1, size=(4, 50, 2)).astype(np.float32)
    s = tf.summary.audio("stereo", tf.placeholder_with_default(data, [None, 50, 2]), 8000, max_outputs=2)
    import wave

    for summ in _run(s, modes=["eager", "threads"], chunks=(1, 10, 2)):
        assert len(summ.value) == 2
        for i, v in enumerate(summ.value):
            with wave.open(io.BytesIO(v.audio.encoded_audio_string)) as w:
                assert (w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()) == (2, 2, 8000, 50)
                frames = np.frombuffer(w.readframes(50), "<i2").reshape(50, 2)
            np.testing.assert_array_equal(frames, np.clip(np.round(data[i] * 32768), -32768, 32767))


# ---- text, tensor_summary ---------------------------------------------------------------------------


def test_text_and_tensor_summary():
    words = tf.placeholder(tf.string, [None, 2])
    t = tf.summary.text("tx", words)
    n = tf.summary.tensor_summary("ts", tf.placeholder_with_default(np.array([[1.5], [2.5]], np.float32), None),
                                  summary_description="desc")
    assert [i.name for i in t.op.inputs] == ["tx/tag:0", "Placeholder:0", "tx/serialized_summary_metadata:0"]
    for summ in _run(tf.summary.merge([t, n]), {words: [["a", "b"]]}):
        tv, nv = summ.value
        assert (tv.tag, tv.metadata.plugin_data.plugin_name) == ("tx", "text")
        assert list(tv.tensor.string_val) == [b"a", b"b"] and [d.size for d in tv.tensor.tensor_shape.dim] == [1, 2]
        assert nv.tag == "ts" and nv.metadata.summary_description == "desc"
        assert np.frombuffer(nv.tensor.tensor_content, "<f4").tolist() == [1.5, 2.5]
    with pytest.raises(ValueError, match="to have dtype string"):
        tf.summary.text("tx", tf.constant(1))


def test_summary_protos_as_tf1_writes_them():
    s = tf.Summary(value=[tf.Summary.Value(tag="acc", simple_value=0.5)])
    assert tf.summary.Summary is tf.Summary and s.value[0].simple_value == 0.5
    assert tf.Summary.FromString(s.SerializeToString()) == s
    assert tf.summary.SessionLog.START == tf.SessionLog.START


def test_all_v2_summary_ops_is_the_v2_collection():
    assert tf.summary.all_v2_summary_ops() == []
    t = tf.constant(1.0)
    tf.add_to_collection("_SUMMARY_V2", t)  # TF1's GraphKeys._SUMMARY_COLLECTION
    assert tf.summary.all_v2_summary_ops() == [t]
