"""`dflow.custom_gradient`: a function that returns `(y, grad_fn)` gets `grad_fn` as its gradient."""

from __future__ import annotations

import functools
import itertools
import weakref

from ..graph.graph import executing_eagerly
from ..graph.registry import RegisterGradient, unregister_gradient
from .array_ops import identity_n
from .common import convert_to_tensor

__all__ = ["custom_gradient"]

_ids = itertools.count()


def custom_gradient(f):
    """Decorator: `f(*xs)` returns `(y, grad_fn)`; d/dxs of y is `grad_fn(dy)` (a tensor or list).

    The result is tied to the inputs through one `IdentityN` op whose gradient is `grad_fn`, so
    the ops inside `f` are not differentiated.
    """

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        xs = [convert_to_tensor(a) for a in args]
        y, grad_fn = f(*xs, **kwargs)
        ys = list(y) if isinstance(y, (list, tuple)) else [y]
        ys = [convert_to_tensor(t) for t in ys]
        name = f"CustomGradient-{next(_ids)}"

        @RegisterGradient(name)
        def _grad(op, *grads):
            dys = list(grads[len(xs):])
            dxs = grad_fn(*dys) if len(dys) > 1 else grad_fn(dys[0])
            dxs = list(dxs) if isinstance(dxs, (list, tuple)) else [dxs]
            if len(dxs) != len(xs):
                raise ValueError(f"custom_gradient: grad_fn returned {len(dxs)} gradients for {len(xs)} inputs")
            return dxs + [None] * len(ys)

        g = xs[0].graph if xs else ys[0].graph
        with g.gradient_override_map({"IdentityN": name}):
            outs = identity_n(xs + ys)
        outs = outs if isinstance(outs, list) else [outs]
        if executing_eagerly():  # each call registers a rule: kept only while a tape holds its op
            op = outs[0].op
            if op.type == "IdentityN":
                weakref.finalize(op, unregister_gradient, name)
            else:
                unregister_gradient(name)
        result = outs[len(xs):]
        return result if isinstance(y, (list, tuple)) else result[0]

    return decorated


