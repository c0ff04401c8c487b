"""matmul, tensordot and einsum against numpy, in every local mode with several chunks along the
contracted axes; static shapes, TF1 names and build-time errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf
from tests.conftest import rand, run_modes

HYP = settings(max_examples=20, deadline=None)


def check(got, want, rtol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


def _t(x, transpose, adjoint):
    if transpose or adjoint:
        x = np.swapaxes(x, -1, -2)
    return np.conj(x) if adjoint else x


# ---- matmul ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("ta,tb,aa,ab", [(False, False, False, False), (True, False, False, False),
                                         (False, True, False, False), (True, True, False, False),
                                         (False, False, True, False), (False, False, False, True),
                                         (True, False, False, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_matmul_2d_matches_numpy(ta, tb, aa, ab, dtype):
    av = rand((7, 5) if (ta or aa) else (5, 7), dtype, 1)
    bv = rand((3, 7) if (tb or ab) else (7, 3), dtype, 2)
    a = tf.placeholder(dtype, av.shape)
    b = tf.placeholder(dtype, bv.shape)
    y = tf.matmul(a, b, transpose_a=ta, transpose_b=tb, adjoint_a=aa, adjoint_b=ab)
    assert y.op.type == "MatMul" and y.shape.as_list() == [5, 3]
    check(run_modes(y, {a: av, b: bv}), _t(av, ta, aa) @ _t(bv, tb, ab))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float64, np.float16])
def test_matmul_keeps_dtype(dtype):
    av, bv = rand((4, 6), dtype, 3), rand((6, 5), dtype, 4)
    a, b = tf.placeholder(dtype, av.shape), tf.placeholder(dtype, bv.shape)
    y = tf.matmul(a, b)
    assert y.dtype.as_numpy_dtype == dtype
    check(run_modes(y, {a: av, b: bv}), av @ bv, rtol=2e-3 if dtype == np.float16 else 1e-5)


@HYP
@given(batch_a=st.lists(st.sampled_from([1, 2, 3]), max_size=3),
       batch_b=st.lists(st.sampled_from([1, 2, 3]), max_size=3),
       mkn=st.tuples(st.integers(1, 4), st.integers(1, 5), st.integers(1, 4)),
       ta=st.booleans(), tb=st.booleans())
def test_batched_matmul_broadcasts_as_numpy(batch_a, batch_b, mkn, ta, tb):
    tf.reset_default_graph()
    try:
        np.broadcast_shapes(tuple(batch_a), tuple(batch_b))
    except ValueError:
        return
    m, k, n = mkn
    av = rand(tuple(batch_a) + ((k, m) if ta else (m, k)), np.float64, 5)
    bv = rand(tuple(batch_b) + ((n, k) if tb else (k, n)), np.float64, 6)
    a, b = tf.placeholder(tf.float64, av.shape), tf.placeholder(tf.float64, bv.shape)
    y = tf.matmul(a, b, transpose_a=ta, transpose_b=tb)
    want = _t(av, ta, False) @ _t(bv, tb, False)
    assert y.shape.as_list() == list(want.shape)
    assert y.op.type == ("MatMul" if av.ndim == bv.ndim == 2 else "BatchMatMulV2")
    check(run_modes(y, {a: av, b: bv}), want, rtol=1e-12)


def test_matmul_static_shapes_and_names():
    p = tf.placeholder
    assert tf.matmul(p(tf.float32, [None, 2, 3]), p(tf.float32, [None, 3, 4])).shape.as_list() == [None, 2, 4]
    assert tf.matmul(p(tf.float32, [5, 1, 2, 3]), p(tf.float32, [7, 3, 4])).shape.as_list() == [5, 7, 2, 4]
    assert tf.matmul(p(tf.float32, [None, None]), p(tf.float32, [3, 4])).shape.as_list() == [None, 4]
    u = tf.matmul(p(tf.float32), p(tf.float32, [3, 4]))
    assert u.shape.ndims is None and u.op.type == "BatchMatMulV2"
    tf.reset_default_graph()
    a, b = p(tf.float32, [2, 3]), p(tf.float32, [3, 4])
    assert tf.matmul(a, b).op.name == "MatMul"
    assert tf.matmul(a, b, name="mm").op.name == "mm"
    y = a @ b
    assert y.op.type == "MatMul" and y.op.name.startswith("matmul")
    assert tf.matmul(a, b, a_is_sparse=True).op.type == "MatMul"


def test_matmul_operator_with_numpy_and_lists():
    av = rand((3, 4), seed=7)
    bv = rand((4, 2), seed=8)
    a = tf.placeholder(tf.float32, [3, 4])
    cv = rand((2, 3), seed=9)
    got = run_modes([a @ bv, cv @ a, tf.matmul(a, bv.tolist())], {a: av})
    check(got[0], av @ bv)
    check(got[1], cv @ av)
    check(got[2], av @ bv)


def test_matmul_build_time_errors():
    p = tf.placeholder
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 3 and 4.*\[2,3\], \[4,5\]"):
        tf.matmul(p(tf.float32, [2, 3]), p(tf.float32, [4, 5]))
    with pytest.raises(ValueError, match="but are 2 and 3"):
        tf.matmul(p(tf.float32, [2, 3]), p(tf.float32, [3, 4]), transpose_a=True)
    with pytest.raises(ValueError, match="but are 3 and 4"):
        tf.matmul(p(tf.float32, [5, 2, 3]), p(tf.float32, [5, 4, 4]))
    with pytest.raises(ValueError, match=r"Batch dimensions \[5\] and \[4\] must broadcast"):
        tf.matmul(p(tf.float32, [5, 2, 3]), p(tf.float32, [4, 3, 4]))
    with pytest.raises(ValueError, match="rank 2 but is rank 1"):
        tf.matmul(p(tf.float32, [3]), p(tf.float32, [3, 4]))
    with pytest.raises(ValueError, match="at least rank 2 but is rank 1"):
        tf.matmul(p(tf.float32, [5, 2, 3]), p(tf.float32, [3]))
    with pytest.raises(ValueError, match="broadcast"):
        tf.matmul(p(tf.float32, [2, 2, 3]), p(tf.float32, [3, 3, 4]))
    with pytest.raises(ValueError, match="Only one of `transpose_b` and `adjoint_b`"):
        tf.matmul(p(tf.float32, [2, 3]), p(tf.float32, [4, 3]), transpose_b=True, adjoint_b=True)
    with pytest.raises(TypeError, match="float64 that does not match type float32"):
        tf.matmul(p(tf.float32, [2, 3]), p(tf.float64, [3, 4]))
    for dt in (tf.bool, tf.int8, tf.int16):
        with pytest.raises(TypeError):
            tf.matmul(p(dt, [2, 3]), p(dt, [3, 4]))


def test_matmul_feed_mismatch_at_run_time_is_an_error():
    a, b = tf.placeholder(tf.float32, [None, None]), tf.placeholder(tf.float32, [None, None])
    y = tf.matmul(a, b)
    for mode in ["eager", "sync"]:
        with pytest.raises(tf.errors.OpError):
            run_modes(y, {a: np.ones((2, 3), np.float32), b: np.ones((4, 2), np.float32)}, modes=[mode])


def test_large_contraction_over_many_chunks():
    av, bv = rand((20, 300), np.float64, 9), rand((300, 10), np.float64, 10)
    a, b = tf.placeholder(tf.float64, av.shape), tf.placeholder(tf.float64, bv.shape)
    got = run_modes([tf.matmul(a, b), tf.tensordot(a, b, 1), tf.einsum("ij,jk->ik", a, b)],
                    {a: av, b: bv}, chunks=(7, 13))
    for g in got:
        check(g, av @ bv, rtol=1e-12)


# ---- tensordot ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("sa,sb,axes", [
    ((2, 3, 4), (4, 3, 5), [[1, 2], [1, 0]]),
    ((2, 3, 4), (4, 5), 1),
    ((2, 3), (4, 5), 0),
    ((3, 4), (3, 4), 2),
    ((2, 3, 4), (3, 5), [[-2], [0]]),
    ((2, 3), (3, 4), [1, 0]),
    ((4,), (4,), 1),
])
def test_tensordot_matches_numpy(sa, sb, axes):
    av, bv = rand(sa, seed=11), rand(sb, seed=12)
    a, b = tf.placeholder(tf.float32, sa), tf.placeholder(tf.float32, sb)
    y = tf.tensordot(a, b, axes)
    want = np.tensordot(av, bv, axes)
    assert y.shape.as_list() == list(want.shape)
    check(run_modes(y, {a: av, b: bv}), want)


def test_tensordot_shapes_names_and_errors():
    p = tf.placeholder
    y = tf.tensordot(p(tf.float32, [None, 3, 4]), p(tf.float32, [4, 5]), [[2], [0]])
    assert y.shape.as_list() == [None, 3, 5] and y.op.name == "Tensordot"
    assert tf.tensordot(p(tf.float32), p(tf.float32, [3, 4]), 1).shape.ndims is None
    assert tf.tensordot(p(tf.int32, [2, 3]), p(tf.int32, [3, 4]), tf.constant(np.array(1)),
                        name="td").op.name == "td"
    with pytest.raises(ValueError, match="but are 4 and 3"):
        tf.tensordot(p(tf.float32, [2, 3, 4]), p(tf.float32, [3, 5]), 1)
    with pytest.raises(ValueError, match="must not be larger"):
        tf.tensordot(p(tf.float32, [2, 3]), p(tf.float32, [3, 4]), 3)
    with pytest.raises(ValueError, match="Different number of contraction axes"):
        tf.tensordot(p(tf.float32, [2, 3]), p(tf.float32, [3, 4]), [[1, 0], [0]])
    with pytest.raises(ValueError, match="out of range"):
        tf.tensordot(p(tf.float32, [2, 3]), p(tf.float32, [3, 4]), [[2], [0]])
    with pytest.raises(TypeError):
        tf.tensordot(p(tf.float32, [2, 3]), p(tf.float64, [3, 4]), 1)


def test_tensordot_unknown_rank_runs():
    av, bv = rand((2, 3, 4), seed=13), rand((4, 5), seed=14)
    a, b = tf.placeholder(tf.float32), tf.placeholder(tf.float32, [4, 5])
    check(run_modes(tf.tensordot(a, b, 1), {a: av, b: bv}), np.tensordot(av, bv, 1))


# ---- einsum --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(4, 5), (5, 3)]),
    ("ij,jk", [(4, 5), (5, 3)]),
    ("ba", [(4, 5)]),
    ("ij->ji", [(4, 5)]),
    ("ij->", [(4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("i,i", [(6,), (6,)]),
    ("i,j->ij", [(3,), (5,)]),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 4, 5), (3, 5, 2)]),
    ("...i,...i->...", [(4, 3), (5, 1, 3)]),
    ("i...j,j...->...", [(2, 4, 5, 3), (3, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("Ba,a->B", [(3, 4), (4,)]),
    (" i j , j k -> i k ", [(4, 5), (5, 3)]),
])
def test_einsum_matches_numpy(eq, shapes):
    vals = [rand(s, np.float64, 15 + i) for i, s in enumerate(shapes)]
    ps = [tf.placeholder(tf.float64, s) for s in shapes]
    y = tf.einsum(eq, *ps)
    want = np.einsum(eq.replace(" ", ""), *vals)
    assert y.shape.as_list() == list(want.shape)
    check(run_modes(y, dict(zip(ps, vals))), want, rtol=1e-12)


def test_einsum_int_dtype_and_names():
    av, bv = rand((3, 4), np.int32, 20, hi=5), rand((4, 2), np.int32, 21, hi=5)
    a, b = tf.placeholder(tf.int32, [3, 4]), tf.placeholder(tf.int32, [4, 2])
    y = tf.einsum("ij,jk", a, b)
    assert y.op.name == "einsum/Einsum" and y.op.type == "Einsum"
    assert y.op.get_attr("equation") == "ij,jk->ik" and y.op.get_attr("N") == 2
    assert tf.einsum("ij,jk->ik", a, b, name="foo").op.name == "foo/Einsum"
    check(run_modes(y, {a: av, b: bv}), av @ bv)


def test_einsum_static_shapes():
    p = tf.placeholder
    assert tf.einsum("ij,jk->ik", p(tf.float32, [2, None]), p(tf.float32, [None, 4])).shape.as_list() == [2, 4]
    assert tf.einsum("ij,jk->ik", p(tf.float32), p(tf.float32, [3, 4])).shape.as_list() == [None, 4]
    assert tf.einsum("...j,jk->...k", p(tf.float32), p(tf.float32, [3, 4])).shape.ndims is None
    assert tf.einsum("...ij,...jk->...ik", p(tf.float32, [None, 2, 3]),
                     p(tf.float32, [7, 1, 3, 4])).shape.as_list() == [7, None, 2, 4]


def test_einsum_build_time_errors():
    p = tf.placeholder
    with pytest.raises(ValueError, match="but are 3 and 4"):
        tf.einsum("ij,jk->ik", p(tf.float32, [2, 3]), p(tf.float32, [4, 4]))
    with pytest.raises(ValueError, match="but are 3 and 1"):
        tf.einsum("ij,ij->ij", p(tf.float32, [3, 1]), p(tf.float32, [1, 4]))  # no size-1 broadcast
    with pytest.raises(ValueError, match="rank 2 but is rank 1"):
        tf.einsum("ij->ij", p(tf.float32, [3]))
    with pytest.raises(ValueError, match="label k not present"):
        tf.einsum("ij->ik", p(tf.float32, [5, 2]))
    with pytest.raises(ValueError, match="more than once"):
        tf.einsum("ij->ii", p(tf.float32, [5, 2]))
    with pytest.raises(ValueError, match="Got 1 inputs"):
        tf.einsum("ij,jk->ik", p(tf.float32, [2, 3]))
    with pytest.raises(ValueError, match="no ellipsis"):
        tf.einsum("...ij->ij", p(tf.float32, [5, 2, 3]))
    with pytest.raises(ValueError, match="invalid character"):
        tf.einsum("i1,j->ij", p(tf.float32, [2]), p(tf.float32, [3]))
    with pytest.raises(TypeError, match="don't all match"):
        tf.einsum("ij,jk->ik", p(tf.float32, [2, 3]), p(tf.float64, [3, 4]))
    with pytest.raises(TypeError):
        tf.einsum("ij->ji", p(tf.bool, [2, 3]))


# ---- every scheduler --------------------------------------------------------------------------------


def test_contractions_on_every_scheduler(any_mode, sess_factory):
    av, bv = rand((2, 6, 9), seed=22), rand((9, 4), seed=23)
    a = tf.placeholder(tf.float32, av.shape)
    b = tf.placeholder(tf.float32, bv.shape)
    fetches = [tf.matmul(a, b), tf.tensordot(a, b, 1), tf.einsum("bij,jk->bki", a, b)]
    with sess_factory(any_mode, chunks=3) as s:
        got = s.run(fetches, {a: av, b: bv})
    check(got[0], av @ bv)
    check(got[1], np.tensordot(av, bv, 1))
    check(got[2], np.einsum("bij,jk->bki", av, bv))
