"""TF1's `tf.bitwise` ops: BitwiseAnd/Or/Xor, Invert, LeftShift, RightShift on integer tensors.

All are elementwise (fused on chunks on Dask) over int8..int64 and uint8..uint64, with numpy
broadcasting and operands of one dtype, as TF1 (TypeError naming the op otherwise). Shifts clamp
the shift amount to [0, bits - 1] as TF's kernels do (TF 2.21: `int8(-1) << 9` is -128, `5 >> -1`
is 5); right_shift is arithmetic for signed types. None has a gradient (integer ops).
"""

from __future__ import annotations

from ..graph.registry import not_differentiable, register_op
from .common import INT, apply_op, broadcast_infer, convert_pair, convert_to_tensor, unary_infer

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]


def _clamped(xp, x, y):
    return xp.clip(y, 0, xp.iinfo(x.dtype).bits - 1)


_BINARY = {
    "BitwiseAnd": ("bitwise_and", lambda xp, x, y: xp.bitwise_and(x, y)),
    "BitwiseOr": ("bitwise_or", lambda xp, x, y: xp.bitwise_or(x, y)),
    "BitwiseXor": ("bitwise_xor", lambda xp, x, y: xp.bitwise_xor(x, y)),
    "LeftShift": ("left_shift", lambda xp, x, y: xp.bitwise_left_shift(x, _clamped(xp, x, y))),
    "RightShift": ("right_shift", lambda xp, x, y: xp.bitwise_right_shift(x, _clamped(xp, x, y))),
}

for _type, (_pub, _fn) in _BINARY.items():
    register_op(_type, broadcast_infer(INT, None, _type), eager=_fn, elementwise=True)
register_op("Invert", unary_infer(INT, None, "Invert"), eager=lambda xp, x: xp.bitwise_invert(x), elementwise=True)
not_differentiable(*_BINARY, "Invert")


def _binary(op_type):
    def fn(x, y, name=None):
        x, y = convert_pair(x, y, op_type)
        return apply_op(op_type, [x, y], name=name, default_name=op_type)

    fn.__name__ = _BINARY[op_type][0]
    fn.__doc__ = (f"Elementwise {fn.__name__} (op `{op_type}`) of integer tensors of one dtype, numpy "
                  "broadcasting; TypeError for other dtypes.")
    return fn


bitwise_and = _binary("BitwiseAnd")
bitwise_or = _binary("BitwiseOr")
bitwise_xor = _binary("BitwiseXor")
left_shift = _binary("LeftShift")
right_shift = _binary("RightShift")


def invert(x, name=None):
    """Flips every bit of integer `x` (op `Invert`): ~x, same shape and dtype; TypeError for others."""
    return apply_op("Invert", [convert_to_tensor(x, name="x")], name=name, default_name="Invert")
