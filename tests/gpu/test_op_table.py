"""The op table of the GPU suite, checked without a GPU (not marked `gpu`: runs everywhere).

- every registered op type with an eager kernel has a case in `op_cases.CASES` or a reason in
  `op_cases.NOT_ON_GPU` (a new op type fails here until it is given one);
- the GPU harness's Dask half (`harness.session_check`) runs every case on numpy-backed dask feeds:
  the forward outputs and the gradients through the Dask lowering equal the in-process run's, and
  its device check (every float chunk a task computed) sees numpy chunks here, so on a GPU the same
  code differs only in the namespace it is given.
"""

from __future__ import annotations

import numpy as np
import pytest

from dflow.graph.registry import get_opdef, registered_op_types
from tests.gpu import harness, op_cases


def test_the_table_covers_every_registered_op():
    with_kernel = {t for t in registered_op_types() if get_opdef(t).eager is not None}
    in_table = {c.op_type for c in op_cases.CASES}
    excluded = set(op_cases.NOT_ON_GPU)
    assert not in_table & excluded, f"both in the table and excluded: {sorted(in_table & excluded)}"
    missing = with_kernel - in_table - excluded
    assert not missing, f"op types with an eager kernel but no case and no reason: {sorted(missing)}"
    assert not (in_table | excluded) - with_kernel, "cases for op types that have no eager kernel"
    names = [c.name for c in op_cases.CASES]
    assert len(names) == len(set(names)), "case names must be unique (they key the xfail tables)"
    assert set(op_cases.LEAKS) <= set(names) and op_cases.HOST_OUTPUTS <= in_table
    dtypes = {dt for c in op_cases.CASES for dt in c.dtypes}
    assert {"float32", "float64", "int32"} <= dtypes


def test_the_table_has_edge_shapes():
    names = {c.name for c in op_cases.CASES}
    assert {"Exp/scalar", "Exp/empty", "Add/bcast", "Add/scalar", "Sum/empty", "Reshape/empty"} <= names


@pytest.mark.parametrize("case, dt", [pytest.param(c, dt, id=op_cases.case_id(c, dt)) for c, dt in op_cases.case_ids()])
def test_dask_lowering_matches_in_process(case, dt):
    harness.session_check(case, dt, harness.numpy_dask, lambda chunk: isinstance(chunk, np.ndarray))


def test_the_device_check_sees_chunks_off_the_device():
    case = next(c for c in op_cases.CASES if c.name == "Exp")
    with pytest.raises(AssertionError, match="off the device"):
        harness.session_check(case, "float32", harness.numpy_dask, lambda chunk: False)
