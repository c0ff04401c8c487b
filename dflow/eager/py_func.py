"""`tfe.py_func` (TF1's `tf.contrib.eager.py_func`, TF 1.15's `tf.py_function`): a Python function
run eagerly inside a graph.

The op ("EagerPyFunc") is py_func's (dflow/kernels/py_ops.py: one task on whole values, outputs of
unknown shape, errors naming the op); its function is the user's wrapped in `_EagerCall`, which
enters eager mode (context.py's `eager_mode`) for the call: the arguments are `EagerTensor`s, the
`tf.*` calls inside run at once, and each result (an EagerTensor, numpy value or Python number) is
converted to its `Tout` dtype by TF1's rules (`convert_to_tensor(value, dtype)`: a Python float or
numpy array becomes float32 when asked; an EagerTensor of another dtype is refused). Unlike
`py_func`, TF1 differentiates it: the gradient op runs the function again under a GradientTape
(`_EagerGradCall`) with the output gradients as the tape's seeds.
"""

from __future__ import annotations

from ..graph.dtypes import as_dtype
from ..graph.gradients import differentiable
from ..graph.graph import outside_entered_graphs
from ..graph.registry import def_grad
from ..kernels.creation_ops import zeros_like
from ..kernels.py_ops import apply_py_func
from .context import eager_mode, to_tensor
from .tape import GradientTape
from .tensor import EagerTensor

__all__ = ["py_func", "py_function"]


def _values(result, tout):
    """`result` as host values of the `tout` dtypes (TF1's conversion rules, in eager mode)."""
    if not tout and result is None:
        return []
    single = not isinstance(result, (list, tuple))
    values = [result] if single else list(result)
    if len(values) != len(tout):
        raise ValueError(f"the function returned {len(values)} values, but Tout has {len(tout)} dtypes")
    return [to_tensor(v, dt).numpy() for v, dt in zip(values, tout)]


class _EagerCall:
    """The user's function called in eager mode on EagerTensors (picklable when it is)."""

    def __init__(self, func, tout):
        self.func, self.tout = func, tout

    def __call__(self, *arrays):
        with outside_entered_graphs(), eager_mode():
            out = _values(self.func(*[to_tensor(a) for a in arrays]), self.tout)
        return out if len(out) != 1 else out[0]


class _EagerGradCall:
    """The gradient of an EagerPyFunc: the function again under a tape, seeded with the output
    gradients; zeros for an input the outputs do not depend on."""

    def __init__(self, func, tout, n_in, wrt):
        self.func, self.tout, self.n_in, self.wrt = func, tout, n_in, wrt

    def __call__(self, *arrays):
        with outside_entered_graphs(), eager_mode():
            xs = [to_tensor(a) for a in arrays[:self.n_in]]
            dys = [to_tensor(a) for a in arrays[self.n_in:]]
            with GradientTape() as tape:
                for i in self.wrt:
                    tape.watch(xs[i])
                ys = self.func(*xs)
                ys = [ys] if not isinstance(ys, (list, tuple)) else list(ys)
                ys = [to_tensor(y, dt) if not isinstance(y, EagerTensor) else y for y, dt in zip(ys, self.tout)]
            pairs = [(y, dy) for y, dy, dt in zip(ys, dys, self.tout) if differentiable(dt)]
            grads = tape.gradient([y for y, _ in pairs], [xs[i] for i in self.wrt],
                                  output_gradients=[dy for _, dy in pairs], unconnected_gradients="zero")
            out = [to_tensor(g).numpy() for g in grads]
        return out if len(out) != 1 else out[0]


def py_func(func, inp, Tout, name=None):  # noqa: N803 - TF1 signature
    """An op running `func` eagerly on the values of `inp` (TF1's `tf.contrib.eager.py_func`).

    `func(*EagerTensors)` may call `tf.*` ops (they run at once) and returns one value per dtype of
    `Tout` (a dtype, or a list; an empty list when it returns None): EagerTensors, numpy values or
    Python numbers, converted to the `Tout` dtype as `tf.convert_to_tensor(value, dtype)` would
    (an EagerTensor of another dtype is an error). Returns a Tensor when `Tout` is a dtype, a list
    when it is a list (the Operation for an empty list); shapes unknown. Op type "EagerPyFunc".
    Differentiable: the gradient runs `func` again under a GradientTape. At run time an exception
    in `func`, a wrong number of values or a refused conversion is an InvalidArgumentError naming
    the op.
    """
    tout = [as_dtype(t) for t in (Tout if isinstance(Tout, (list, tuple)) else [Tout])]
    return apply_py_func("EagerPyFunc", _EagerCall(func, tout), inp, Tout, name)


py_function = py_func  # TF 1.15's name (`tf.py_function`)


@def_grad("EagerPyFunc")
def _eager_py_func_grad(op, *grads):
    call = op.get_attr("func")
    tout = list(op.get_attr("Tout"))
    xs = list(op.inputs)
    wrt = [i for i, x in enumerate(xs) if differentiable(x.dtype)]
    if not tout or not wrt or not isinstance(call, _EagerCall):
        return [None] * len(xs)
    dys = [g if g is not None else zeros_like(y) for g, y in zip(grads, op.outputs)]
    out = apply_py_func("EagerPyFunc", _EagerGradCall(call.func, tout, len(xs), wrt), xs + dys,
                        [xs[i].dtype for i in wrt], name=op.name.rpartition("/")[2] + "_grad")
    result = [None] * len(xs)
    for k, i in enumerate(wrt):
        result[i] = out[k]
        result[i].set_shape(xs[i].shape)
    return result
