"""RowPatch (storage/patch.py): a row scatter's new value, applied in place or materialized,
against numpy's unbuffered np.add.at / fancy assignment on random inputs."""

import numpy as np
import pytest

from dflow.storage import patch
from dflow.storage.patch import RowPatch


@pytest.mark.parametrize("shape", [(50,), (50, 3), (50, 2, 4)])
@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("repeats", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_patch_in_place_matches_add_at(shape, sign, repeats, dtype):
    rng = np.random.default_rng(len(shape) * 10 + sign + 3 * repeats)
    base = rng.standard_normal(shape).astype(dtype)
    idx = rng.integers(0, shape[0], 40) if repeats else rng.permutation(shape[0])[:20]
    rows = rng.standard_normal((idx.size,) + shape[1:]).astype(dtype)
    want = base.copy()
    np.add.at(want, idx, sign * rows)
    p = RowPatch(base.copy(), idx, rows, add=True, sign=sign)
    got = p.materialize()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    target = base.copy()
    p.base = target
    assert p.apply_in_place() is target
    np.testing.assert_allclose(target, want, rtol=1e-6, atol=1e-6)
    untouched = np.setdiff1d(np.arange(shape[0]), idx)
    np.testing.assert_array_equal(target[untouched], base[untouched])  # bit for bit


def test_float64_rows_into_float32_variable_and_read_only_base():
    """Rows of a wider dtype are cast on write (as `target[idx] -= rows`); a read-only committed
    array is written in place and left read-only; the counters count the rows."""
    base = np.arange(12, dtype=np.float32).reshape(6, 2)
    base.setflags(write=False)
    rows = np.full((2, 2), 0.5)
    patch.reset_counters()
    RowPatch(base, np.array([4, 1]), rows, add=True, sign=-1).apply_in_place()
    assert not base.flags.writeable and base.dtype == np.float32
    np.testing.assert_array_equal(base[[1, 4]], [[1.5, 2.5], [7.5, 8.5]])
    np.testing.assert_array_equal(base[[0, 2, 3, 5]], np.arange(12, dtype=np.float32).reshape(6, 2)[[0, 2, 3, 5]])
    assert patch.TOUCHED["rows"] == 2 and patch.TOUCHED["bytes_in_place"] == rows.nbytes


def test_set_patch_last_write_wins():
    base = np.zeros((5, 2))
    got = RowPatch(base, np.array([3, 1, 3]), np.array([[1., 1.], [2., 2.], [3., 3.]]), add=False).materialize()
    np.testing.assert_array_equal(got, [[0, 0], [2, 2], [0, 0], [3, 3], [0, 0]])
    np.testing.assert_array_equal(base, 0)  # materialize copies


def test_patches_of_one_commit_share_their_index_arrays_repeat_check():
    """Within one commit (repeat_checks) patches sharing an index array sort it once; both sum its
    repeats. A later commit checks the array again (it may have changed in between)."""
    idx = np.array([2, 0, 2, 1])
    w, b = np.zeros((3, 2)), np.zeros(3)
    with patch.repeat_checks():
        RowPatch(w, idx, np.ones((4, 2)), add=True).apply_in_place()
        RowPatch(b, idx, np.ones(4), add=True, sign=-1).apply_in_place()
    np.testing.assert_array_equal(w, [[1, 1], [1, 1], [2, 2]])
    np.testing.assert_array_equal(b, [-1, -1, -2])
    free = np.array([0, 1, 2])
    c = np.zeros(3)
    with patch.repeat_checks():
        RowPatch(c, free, np.ones(3), add=True).apply_in_place()  # (found free of repeats)
    free[:] = [1, 1, 2]  # the array changed between two commits: checked again
    with patch.repeat_checks():
        RowPatch(c, free, np.ones(3), add=True).apply_in_place()
    np.testing.assert_array_equal(c, [1, 3, 2])
