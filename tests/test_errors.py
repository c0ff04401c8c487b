"""tf.errors' code lookups (dflow/errors.py)."""

import pytest

from dflow import errors


def test_code_lookups():
    assert errors.error_code_from_exception_type(errors.NotFoundError) == 5  # TF1: 5
    assert errors.exception_type_from_error_code(3) is errors.InvalidArgumentError  # TF1: InvalidArgumentError
    for code in range(1, 17):
        cls = errors.exception_type_from_error_code(code)
        assert errors.error_code_from_exception_type(cls) == code
    with pytest.raises(KeyError):
        errors.exception_type_from_error_code(99)
    with pytest.raises(KeyError):
        errors.error_code_from_exception_type(ValueError)
