"""dflow.storage.chunks: whole chunks streamed between Zarr chunk files and numpy, checked against zarr-python."""

import os

import numpy as np
import pytest
import zarr

import dflow as tf
from dflow.errors import DataLossError
from dflow.storage.chunks import block_sizes, chunk_io, read_all

LAYOUTS = {
    "v3-zstd": dict(zarr_format=3),
    "v3-zstd-level5-checksum": dict(zarr_format=3, compressors=zarr.codecs.ZstdCodec(level=5, checksum=True)),
    "v3-raw": dict(zarr_format=3, compressors=None),
    "v3-dot-keys": dict(zarr_format=3, chunk_key_encoding={"name": "default", "separator": "."}),
    "v2-zstd": dict(zarr_format=2),
    "v2-raw": dict(zarr_format=2, compressors=None),
}


def _make(tmp_path, layout, shape, chunks, dtype="float32", name="a.zarr", fill_value=None):
    rng = np.random.default_rng(len(shape) + sum(shape))
    value = (rng.standard_normal(shape) * 100).astype(dtype)
    z = zarr.create_array(str(tmp_path / name), shape=shape, chunks=chunks, dtype=dtype,
                          fill_value=fill_value, **LAYOUTS[layout])
    z[...] = value
    return z, value


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("shape,chunks", [((37, 11), (10, 4)), ((50,), (50,)), ((7, 3, 5), (2, 3, 2))])
def test_reads_every_chunk_as_zarr_does(tmp_path, layout, shape, chunks):
    z, value = _make(tmp_path, layout, shape, chunks)
    cio = chunk_io(zarr.open_array(str(tmp_path / "a.zarr"), mode="r"))
    assert cio is not None
    sizes = block_sizes(cio)
    offsets = [np.cumsum((0,) + s) for s in sizes]
    for coords in np.ndindex(*[len(s) for s in sizes]):
        where = tuple(slice(o[i], o[i + 1]) for o, i in zip(offsets, coords))
        np.testing.assert_array_equal(cio.read(coords), value[where])
    np.testing.assert_array_equal(read_all(z), value)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_written_chunks_read_back_by_zarr(tmp_path, layout):
    z, _ = _make(tmp_path, layout, (23, 9), (8, 4), dtype="int32", fill_value=-1)
    cio = chunk_io(z)
    new = np.arange(23 * 9, dtype=np.int32).reshape(23, 9)
    for coords in np.ndindex(3, 3):
        block = new[coords[0] * 8:(coords[0] + 1) * 8, coords[1] * 4:(coords[1] + 1) * 4]
        cio.write(coords, block)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a.zarr"), mode="r")[...], new)


def test_missing_chunk_reads_the_fill_value(tmp_path):
    z = zarr.create_array(str(tmp_path / "a.zarr"), shape=(10, 4), chunks=(4, 4), dtype="float64", fill_value=2.5)
    z[4:8] = 1.0
    np.testing.assert_array_equal(read_all(z), z[...])
    np.testing.assert_array_equal(chunk_io(z).read((2, 0)), np.full((2, 4), 2.5))


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("rows", [1, 3, 10, 64])
def test_read_slabs_gives_the_chunk_a_few_rows_at_a_time(tmp_path, layout, rows):
    z, value = _make(tmp_path, layout, (37, 2, 3), (10, 2, 3))
    cio = chunk_io(z)
    for i, start in enumerate(range(0, 37, 10)):  # the last chunk is an edge chunk (7 rows, padded in the file)
        slabs = list(cio.read_slabs((i, 0, 0), rows))
        assert [len(s) for s in slabs[:-1]] == [rows] * (len(slabs) - 1) and 0 < len(slabs[-1]) <= rows
        np.testing.assert_array_equal(np.concatenate(slabs), value[start:start + 10])


def test_read_slabs_fill_value_damage_and_cut_rows(tmp_path):
    z = zarr.create_array(str(tmp_path / "f.zarr"), shape=(10, 4), chunks=(4, 4), dtype="float64", fill_value=2.5)
    z[4:8] = 1.0
    np.testing.assert_array_equal(np.concatenate(list(chunk_io(z).read_slabs((2, 0), 1))), np.full((2, 4), 2.5))
    z, _ = _make(tmp_path, "v3-zstd", (20, 5), (10, 5))
    cio = chunk_io(z)
    path = cio.path((1, 0))
    data = open(path, "rb").read()
    import zstandard

    for damaged, match in [(zstandard.ZstdCompressor().compress(data[:10]), "decodes to"),
                           (b"not zstd at all", "not valid zstd")]:
        with open(path, "wb") as f:
            f.write(damaged)
        with pytest.raises(DataLossError, match=match):
            list(cio.read_slabs((1, 0), 3))
    cut, value = _make(tmp_path, "v3-zstd", (6, 3), (3, 2), name="cut.zarr")
    np.testing.assert_array_equal(np.concatenate(list(chunk_io(cut).read_slabs((1, 0), 2))), value[3:, :2])
    with pytest.raises(ValueError, match="trailing dimension"):  # padded along axis 1 in the file
        next(chunk_io(cut).read_slabs((0, 1), 1))


def test_damaged_chunk_is_data_loss(tmp_path):
    z, _ = _make(tmp_path, "v3-zstd", (20, 5), (10, 5))
    cio = chunk_io(z)
    path = cio.path((1, 0))
    data = open(path, "rb").read()
    with open(path, "wb") as f:  # a valid zstd frame of the wrong size
        import zstandard

        f.write(zstandard.ZstdCompressor().compress(data[:10]))
    with pytest.raises(DataLossError, match="decodes to"):
        cio.read((1, 0))
    with open(path, "wb") as f:
        f.write(b"not zstd at all")
    with pytest.raises(DataLossError, match="not valid zstd"):
        cio.read((1, 0))


def test_other_layouts_fall_back_to_zarr(tmp_path):
    blosc = zarr.create_array(str(tmp_path / "b.zarr"), shape=(8,), chunks=(4,), dtype="f4",
                              compressors=zarr.codecs.BloscCodec())
    sharded = zarr.create_array(str(tmp_path / "s.zarr"), shape=(8,), chunks=(2,), shards=(4,), dtype="f4")
    mem = zarr.create_array(zarr.storage.MemoryStore(), shape=(8,), chunks=(4,), dtype="f4")
    big_endian = zarr.create_array(str(tmp_path / "e.zarr"), shape=(8,), chunks=(4,), dtype=">f4", zarr_format=2)
    for z in (blosc, sharded, mem, big_endian):
        assert chunk_io(z) is None
        z[...] = np.arange(8)
        np.testing.assert_array_equal(read_all(z), np.arange(8))


def test_read_zarr_inside_a_group_streams_the_right_files(tmp_path):
    g = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    sub = g.require_group("inner")
    value = np.random.default_rng(1).standard_normal((30, 6)).astype(np.float32)
    sub.create_array("x", shape=value.shape, chunks=(7, 6), dtype="float32")[...] = value
    assert os.path.isdir(chunk_io(g["inner/x"]).root)
    x = tf.io.read_zarr(g, "inner/x")
    with tf.Session(scheduler="threads", small_plan_bytes=0) as sess:
        np.testing.assert_allclose(sess.run(tf.reduce_sum(x, 0)), value.sum(0), rtol=1e-5)
        np.testing.assert_array_equal(sess.run(x), value)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("shape,chunks", [((37, 11), (10, 11)), ((37, 11), (10, 4)), ((50,), (16,))])
def test_write_slabs_streams_rows_that_zarr_reads_back(tmp_path, layout, shape, chunks):
    # a chunk written from row slabs (as a fused chain computes it) is the file zarr-python reads,
    # edge chunks padded as zarr pads them
    z, _ = _make(tmp_path, layout, shape, chunks)
    value = np.random.default_rng(3).standard_normal(shape).astype("float32")
    cio = chunk_io(zarr.open_array(str(tmp_path / "a.zarr"), mode="r+"))
    sizes = block_sizes(cio)
    offsets = [np.cumsum((0,) + s) for s in sizes]
    for coords in np.ndindex(*[len(s) for s in sizes]):
        where = tuple(slice(o[c], o[c + 1]) for o, c in zip(offsets, coords))
        block = value[where]
        slabs = (block[i:i + 3] for i in range(0, block.shape[0], 3))
        assert cio.write_slabs(coords, slabs, block.shape) == block.nbytes
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a.zarr"), mode="r")[...], value)


def test_write_slabs_refuses_a_short_block(tmp_path):
    _make(tmp_path, "v3-zstd", (20, 4), (10, 4))
    cio = chunk_io(zarr.open_array(str(tmp_path / "a.zarr"), mode="r+"))
    with pytest.raises(ValueError, match="rows"):
        cio.write_slabs((0, 0), iter([np.zeros((4, 4), np.float32)]), (10, 4))


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_a_fused_chain_is_written_by_slabs(tmp_path, scheduler):
    # chunks over 16 MiB: the write task computes (x - m) * 2 slab by slab into the chunk file
    n, d = 5000, 1000  # 20 MB chunks of float32
    xv = np.random.default_rng(0).standard_normal((2 * n, d)).astype(np.float32)
    zx = zarr.create_array(str(tmp_path / "x.zarr"), shape=xv.shape, chunks=(n, d), dtype="float32")
    zx[...] = xv
    x = tf.io.read_zarr(str(tmp_path / "x.zarr"))
    m = tf.placeholder(tf.float32, [d])
    w = tf.io.write_zarr((x - m) * 2.0, str(tmp_path / "z.zarr"))
    mv = np.linspace(-1, 1, d, dtype=np.float32)
    with tf.Session(scheduler=scheduler, **({} if scheduler is None else {"small_plan_bytes": 0})) as s:
        info = s.run(w, {m: mv})
    assert info["bytes"] == xv.nbytes
    np.testing.assert_allclose(zarr.open_array(str(tmp_path / "z.zarr"))[...], (xv - mv) * 2, rtol=1e-6)
