"""Fetch structures: nested lists, tuples, dicts and namedtuples of graph elements (a SparseTensor
is fetched as a SparseTensorValue), flattened for the compiler and rebuilt around the results."""

from __future__ import annotations

from ..errors import InvalidArgumentError
from ..graph.indexed_slices import IndexedSlices, IndexedSlicesValue
from ..graph.ops import Operation, Tensor
from ..kernels.sparse_ops import SparseTensor, SparseTensorValue


class FetchError(InvalidArgumentError, TypeError):
    """A fetch that is not a graph element (TypeError, as TF1)."""


class ForeignFetchError(InvalidArgumentError, ValueError):
    """A fetch from another graph, or an unknown name (ValueError, as TF1)."""


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def flatten_fetches(fetches, graph):
    """(list of unique graph elements, a function rebuilding the structure from their values)."""
    elements = []
    index = {}

    def resolve(f):
        if f is None:
            raise FetchError(None, None, "Fetch argument None has invalid type <class 'NoneType'>")
        try:
            if isinstance(f, (set, frozenset)):  # unordered: no structure to return the values in
                raise TypeError(f)
            el = graph.as_graph_element(f)
        except TypeError:
            raise FetchError(None, None, f"Fetch argument {f!r} has invalid type {type(f)}, must be a string "
                             f"or Tensor. (Can not convert a {type(f).__name__} into a Tensor or Operation.)") from None
        except (ValueError, KeyError) as e:
            msg = e.args[0] if e.args else str(e)
            raise ForeignFetchError(None, None, f"Fetch argument {f!r} cannot be interpreted as a Tensor. "
                                    f"({msg})") from None
        if not isinstance(el, (Tensor, Operation)):
            raise FetchError(None, None, f"Fetch argument {f!r} is not a Tensor or Operation")
        key = id(el)
        if key not in index:
            index[key] = len(elements)
            elements.append(el)
        return index[key]

    def build(f):
        if isinstance(f, SparseTensor):  # fetched as TF1's SparseTensorValue of its three tensors
            parts = [build(t) for t in (f.indices, f.values, f.dense_shape)]
            return lambda vals: SparseTensorValue(*[g(vals) for g in parts])
        if isinstance(f, IndexedSlices):  # fetched as TF1's IndexedSlicesValue
            parts = [build(t) if t is not None else (lambda vals: None)
                     for t in (f.values, f.indices, f.dense_shape)]
            return lambda vals: IndexedSlicesValue(*[g(vals) for g in parts])
        if isinstance(f, dict):
            items = {k: build(v) for k, v in f.items()}
            return lambda vals: type(f)((k, g(vals)) for k, g in items.items()) if type(f) is not dict \
                else {k: g(vals) for k, g in items.items()}
        if _is_namedtuple(f):
            parts = [build(v) for v in f]
            return lambda vals: type(f)(*[g(vals) for g in parts])
        if isinstance(f, (list, tuple)):
            parts = [build(v) for v in f]
            return lambda vals: type(f)(g(vals) for g in parts)
        i = resolve(f)
        return lambda vals: vals[i]

    rebuild = build(fetches)
    return elements, rebuild
