"""Every case of the op table (tests/gpu/op_cases.py) on the GPU, compared with numpy.

- the eager kernel on cupy arrays: equal to numpy's, and every output a cupy array (axes and
  shapes stay host numpy arrays, as TF keeps them in host memory);
- the Dask lowering on cupy-backed dask arrays (every plan on Dask, chunks of 2): the forward
  outputs and the gradients of their sum w.r.t. the float inputs equal the same graph fed numpy,
  and every float chunk the tasks computed is a cupy array.

Cases the CPU proxy found to break cupy (`op_cases.BREAKS_CUPY`) are strict xfails: a fix shows
as XPASS(strict) and its entry goes.
"""

from __future__ import annotations

import pytest

from tests.gpu import harness, op_cases, requires_gpu

pytestmark = requires_gpu


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


def _params(known):
    return [pytest.param(c, dt, id=op_cases.case_id(c, dt),
                         marks=[pytest.mark.xfail(strict=True, reason=known[c.name])] if c.name in known else [])
            for c, dt in op_cases.case_ids()]


@pytest.mark.parametrize("case, dt", _params(op_cases.BREAKS_CUPY))
def test_eager_kernel_on_cupy(case, dt, cp):
    import array_api_compat.cupy as cp_xp

    harness.eager_check(case, dt, cp.asarray, cp_xp, lambda a: isinstance(a, cp.ndarray), cp.asnumpy)


@pytest.mark.parametrize("case, dt", _params({n: op_cases.LEAKS[n] for n in op_cases.NUMPY_OP_CASES}))
def test_dask_lowering_and_gradient_on_cupy_chunks(case, dt, cp):
    import dask.array as da

    def to_dask(a):
        g = cp.asarray(a)
        return da.from_array(g, chunks=2, asarray=False) if a.ndim else da.from_array(g, asarray=False)

    harness.session_check(case, dt, to_dask, lambda chunk: isinstance(chunk, cp.ndarray))
