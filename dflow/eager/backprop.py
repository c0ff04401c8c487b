"""TF1.5's functional gradient API (`tfe.gradients_function`, `value_and_gradients_function`,
`implicit_gradients`, `implicit_value_and_gradients`), each a `GradientTape` around one call."""

from __future__ import annotations

import functools
import inspect

from .context import to_tensor
from .tape import GradientTape, flatten
from .tensor import EagerTensor

__all__ = ["gradients_function", "value_and_gradients_function", "implicit_gradients",
           "implicit_value_and_gradients", "val_and_grad_function", "grad"]


def _as_tensor(x):
    return x if isinstance(x, EagerTensor) else to_tensor(x)


def _param_indices(f, params):
    if params is None:
        return None
    names = list(inspect.signature(f).parameters)
    out = []
    for p in params:
        if isinstance(p, int):
            out.append(p)
        elif p in names:
            out.append(names.index(p))
        else:
            raise ValueError(f"gradients_function: {p!r} is not a parameter of {getattr(f, '__name__', f)!r}")
    return out


def _value_and_grads(f, params, args, kwargs, dy):
    indices = _param_indices(f, params)
    args = list(args)
    chosen = range(len(args)) if indices is None else indices
    for i in chosen:
        args[i] = _as_tensor(args[i])
    with GradientTape() as tape:
        for i in chosen:
            tape.watch(args[i])
        value = f(*args, **kwargs)
    targets = flatten(value)
    if not all(isinstance(t, EagerTensor) for t in targets):
        raise ValueError(f"gradients_function: the function must return Tensors, got {value!r}")
    # TF: None for a source the value does not depend on (x*x's third derivative)
    grads = tape.gradient(value, [args[i] for i in chosen], output_gradients=dy)
    return value, list(grads)


def gradients_function(f, params=None):
    """A function returning the gradients of `f`'s output with respect to its arguments (all, or
    those named or numbered in `params`), as a list, None for an argument the output does not
    depend on (TF's). Its `dy` keyword weights the output."""

    @functools.wraps(f)
    def decorated(*args, dy=None, **kwargs):
        return _value_and_grads(f, params, args, kwargs, dy)[1]

    return decorated


def value_and_gradients_function(f, params=None):
    """As `gradients_function`, returning `(f's value, gradients)`."""

    @functools.wraps(f)
    def decorated(*args, dy=None, **kwargs):
        return _value_and_grads(f, params, args, kwargs, dy)

    return decorated


val_and_grad_function = value_and_gradients_function


def implicit_value_and_gradients(f):
    """A function returning `(f's value, [(gradient, variable), ...])` for the trainable variables
    `f` reads (TF1.5's `tfe.implicit_value_and_gradients`)."""

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        with GradientTape() as tape:
            value = f(*args, **kwargs)
        variables = list(tape.watched_variables())
        if not variables:
            raise ValueError("No trainable variables were accessed while the function was being computed.")
        grads = tape.gradient(value, variables)
        return value, list(zip(grads, variables))

    return decorated


def implicit_gradients(f):
    """A function returning `[(gradient, variable), ...]` for the trainable variables `f` reads."""

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        return implicit_value_and_gradients(f)(*args, **kwargs)[1]

    return decorated


def grad(f):
    """`gradients_function` of a single-output function (TF1.5's contrib `grad`)."""
    return gradients_function(f)
