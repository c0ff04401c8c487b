"""`dflow.debugging`: TF1's checks under one name (tf.debugging)."""

from .kernels.check_ops import (  # noqa: F401
    Assert,
    add_check_numerics_ops,
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_rank,
    assert_rank_at_least,
    assert_scalar,
    assert_type,
    check_numerics,
)
from .kernels.check_ops import verify_tensor_all_finite as assert_all_finite  # noqa: F401
from .kernels.math_ops import is_finite, is_inf, is_nan  # noqa: F401
