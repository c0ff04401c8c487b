"""Candidate samplers (TF1's `tf.nn.*_candidate_sampler`): the negatives of sampled losses.

Each sampler is one op with three outputs, TF1's: `sampled_candidates` int64 [num_sampled],
`true_expected_count` float32 [batch, num_true], `sampled_expected_count` float32 [num_sampled].
The expected count of a class of probability p is `num_sampled * p`, or with `unique=True` (draws
rejected until num_sampled distinct classes came, after `num_tries` draws)
`-expm1(num_tries * log1p(-p))` (TF1's RangeSampler).

Seeds are the random ops' (random_ops.py): a run's draw is keyed by (seed, seed2, run count), or
by the session's seed and the op's name when unseeded, so every scheduler draws the same classes;
the uniforms are the random ops' counter-based bits (SplitMix64 at each position of a stream keyed
by a hash of that key), so runs vectorize: an in-process run that follows the op's previous run
draws it and the next ones together (`_run_draws`). The op runs in one task (it is small). The
numbers are not TF's stream.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..graph import dtypes
from ..graph.graph import get_seed, name_scope
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape
from .array_ops import shape
from .common import apply_op, convert_to_tensor, ints_in_range
from .creation_ops import ones
from .creation_ops import range as _range
from .random_ops import _GAMMA, _hash_words, _material, _mix, _run_values, _unit

__all__ = ["log_uniform_candidate_sampler", "uniform_candidate_sampler", "fixed_unigram_candidate_sampler",
           "all_candidate_sampler"]


def _probabilities(kind, range_max, unigrams, distortion, num_reserved_ids):
    """p(k) for an array of classes k (computed for the classes asked, not the whole range); a new
    float64 array the caller may overwrite."""
    if kind == "log_uniform":
        return functools.partial(_log_uniform_p, math.log(range_max + 1.0))
    if kind == "uniform":
        return lambda k: np.full(np.shape(k), 1.0 / range_max)
    table = _unigram_table(unigrams, distortion, num_reserved_ids)
    return lambda k: table[k]


def _log_uniform_p(log_range, k):
    """log((k + 2) / (k + 1)) / log(range_max + 1) as log1p(1 / (k + 1)) / log(range_max + 1),
    in place on one float64 temporary."""
    p = k + 1.0
    np.reciprocal(p, out=p)
    np.log1p(p, out=p)
    p /= log_range
    return p


@functools.lru_cache(maxsize=8)
def _unigram_table(unigrams, distortion, num_reserved_ids):
    weights = np.concatenate([np.zeros(num_reserved_ids), np.power(np.asarray(unigrams, np.float64), distortion)])
    return weights / weights.sum()


_AHEAD_RUNS = 32  # runs drawn together when an op's runs come one after another
_AHEAD_VALUES = 1 << 14  # ... at most this many draws in all
_ahead = {}  # op key -> _Ahead (its draws for a range of runs)
_last_run = {}  # op key -> the run count it drew last


def _uniforms(materials, n):
    """[len(materials), n] uniforms in [0, 1): positions 0..n-1 of each run's stream, the random
    ops' counter-based bits (random_ops._bits, stream 0, 53 bits). A longer stream begins with the
    same draws, and a run drawn with others equals the run drawn alone."""
    keys = np.array([_hash_words((*m, 0)) for m in materials], np.uint64)
    idx = np.arange(n, dtype=np.uint64) * np.uint64(_GAMMA)
    return _unit(np, _mix(np, idx[None, :] + keys[:, None]), np.float64)


def _draw(materials, n, kind, range_max, probs):
    """The first n classes of each run's stream: [runs, n] int64."""
    u = _uniforms(materials, n)
    if kind == "log_uniform":  # TF1's LogUniformSampler: exp(u * log(range_max + 1)) - 1
        u *= math.log(range_max + 1.0)
        k = np.exp(u, out=u).astype(np.int64)
        k -= 1
        k %= range_max
        return k
    if kind == "uniform":
        return np.minimum((u * range_max).astype(np.int64), range_max - 1)
    cdf = np.cumsum(probs(np.arange(range_max)))
    return np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), range_max - 1).astype(np.int64)


def _first_distinct(draws, num_sampled):
    """Per run (row of `draws`): its first `num_sampled` distinct classes in draw order, the draws
    that took, and whether it has that many (rows without: zeros)."""
    runs, n = draws.shape
    order = np.argsort(draws, axis=1, kind="stable")
    s = np.take_along_axis(draws, order, axis=1)
    first = np.empty((runs, n), bool)  # first of its value, in sorted order
    first[:, :1] = True
    np.not_equal(s[:, 1:], s[:, :-1], out=first[:, 1:])
    is_first = np.empty((runs, n), bool)  # ... in draw order
    np.put_along_axis(is_first, order, first, axis=1)
    count = np.cumsum(is_first, axis=1)
    ok = count[:, -1] >= num_sampled
    tries = np.where(ok, np.argmax(count >= num_sampled, axis=1) + 1, 0) if num_sampled else np.zeros(runs, int)
    sampled = np.zeros((runs, num_sampled), np.int64)
    sampled[ok] = draws[is_first & (count <= num_sampled) & ok[:, None]].reshape(-1, num_sampled)
    return sampled, tries, ok


def _expected_counts(p, tries, num_sampled, unique, kind, range_max):
    """float32 expected counts of classes of probability p (float64, overwritten): num_sampled * p,
    or with `unique` -expm1(tries * log1p(-p)), p kept below 1 (a class of probability 1: count 1)."""
    if not unique:
        p *= num_sampled
        return p.astype(np.float32)
    if kind != "log_uniform" or range_max == 1:
        np.minimum(p, 1.0 - 1e-16, out=p)
    np.negative(p, out=p)
    np.log1p(p, out=p)
    p *= tries
    np.expm1(p, out=p)
    return np.negative(p, out=np.empty(p.shape, np.float32), casting="same_kind")


class _Ahead:
    """An op's draws for runs first..first + len(tries) - 1 (read only)."""

    __slots__ = ("first", "sampled", "tries", "counts", "ok", "unigrams")

    def __init__(self, first, sampled, tries, counts, ok, unigrams):
        self.first, self.sampled, self.tries, self.counts, self.ok = first, sampled, tries, counts, ok
        self.unigrams = unigrams


def _run_draws(counter, base, kind, num_sampled, unique, range_max, seed, seed2, op_name, probs, unigrams, ahead,
               unigram_attrs=()):
    """(sampled classes, draws taken, sampled expected counts) of run `counter`. With `ahead` (an
    in-process run) a run that follows the op's previous one draws itself and the next runs in one
    vectorized pass (a training loop's sampler: ~30 numpy calls a run, most of them on 64 to 128
    values, became a cache hit); each run's draw is the same however it was computed."""
    key = (op_name, kind, num_sampled, unique, range_max, seed, seed2, 0 if base is None else int(base), id(unigrams),
           unigram_attrs)  # (distortion, reserved ids: with the unigrams, what a unigram draw depends on)
    counter = int(counter)
    if ahead:
        entry = _ahead.get(key)
        if entry is not None and entry.unigrams is unigrams and 0 <= counter - entry.first < len(entry.ok) \
                and entry.ok[counter - entry.first]:
            i = counter - entry.first
            return entry.sampled[i].copy(), int(entry.tries[i]), entry.counts[i].copy()
        runs = 1
        if _last_run.get(key) == counter - 1:
            runs = max(1, min(_AHEAD_RUNS, _AHEAD_VALUES // max(2 * num_sampled, 16)))
        if len(_last_run) > 256:
            _last_run.clear()
        _last_run[key] = counter
    else:
        runs = 1
    base = 0 if base is None else base
    materials = [_material(seed, seed2, op_name, counter + r, base) for r in range(runs)]
    if unique:
        size = max(2 * num_sampled, 16)
        sampled, tries, ok = _first_distinct(_draw(materials, size, kind, range_max, probs), num_sampled)
    else:
        sampled = _draw(materials, num_sampled, kind, range_max, probs)
        tries, ok = np.full(runs, num_sampled), np.ones(runs, bool)
    counts = _expected_counts(probs(sampled), tries[:, None], num_sampled, unique, kind, range_max)
    if runs > 1:
        if len(_ahead) > 64:
            _ahead.clear()
        _ahead[key] = _Ahead(counter, sampled, tries, counts, ok, unigrams)
    if ok[0]:
        return sampled[0].copy(), int(tries[0]), counts[0].copy()
    # draws until num_sampled distinct classes came, the first of each kept in draw order: longer
    # prefixes of the run's stream
    while True:
        size *= 2
        sampled, tries, ok = _first_distinct(_draw(materials[:1], size, kind, range_max, probs), num_sampled)
        if ok[0]:
            counts = _expected_counts(probs(sampled[0]), tries[0], num_sampled, unique, kind, range_max)
            return sampled[0], int(tries[0]), counts


def _sample(true_classes, counter, base, *, kind, num_true, num_sampled, unique, range_max, seed, seed2, op_name,
            unigrams=(), distortion=1.0, num_reserved_ids=0, output=None, ahead=False):
    probs = _probabilities(kind, range_max, unigrams, distortion, num_reserved_ids)
    if unique and num_sampled > range_max:
        raise ValueError(f"{op_name}: range_max ({range_max}) must be >= num_sampled ({num_sampled}) when "
                         "unique is True")
    true = np.asarray(true_classes)
    if not ints_in_range(true, range_max):
        bad = true[(true < 0) | (true >= range_max)][0]
        raise ValueError(f"{op_name}: true class {int(bad)} is not in [0, {range_max})")
    sampled, tries, counts = _run_draws(counter, base, kind, num_sampled, unique, range_max, seed, seed2, op_name,
                                        probs, unigrams, ahead, (distortion, num_reserved_ids))
    true_counts = _expected_counts(probs(true.reshape(-1)), tries, num_sampled, unique, kind, range_max)
    out = (sampled, true_counts.reshape(true.shape), counts)
    return out if output is None else out[output]


def _infer(inputs, attrs):
    true = inputs[0]
    if not true.dtype.is_integer:
        raise TypeError(f"CandidateSampler: true_classes must be int64, got {true.dtype.name}")
    rows = true.shape[0] if true.shape.ndims == 2 else None
    if true.shape.ndims is not None and true.shape.ndims != 2:
        raise ValueError(f"CandidateSampler: true_classes must be a matrix [batch, num_true], got {true.shape}")
    if true.shape.ndims == 2 and true.shape[1].value not in (None, attrs["num_true"]):
        raise ValueError(f"CandidateSampler: true_classes has {true.shape[1].value} columns, num_true is "
                         f"{attrs['num_true']}")
    n = attrs["num_sampled"]
    return [(TensorShape([n]), dtypes.int64), (TensorShape([rows, attrs["num_true"]]), dtypes.float32),
            (TensorShape([n]), dtypes.float32)]


def _eager(xp, true_classes, *, ctx, **attrs):
    counter, base = _run_values(ctx, attrs["seed"], attrs["seed2"])
    return _sample(np.asarray(true_classes), counter, base, op_name=ctx.op.name, ahead=True, **attrs)


def _lower(lctx, true_classes, *, ctx=None, **attrs):
    ctx = ctx or lctx
    counter, base = _run_values(ctx, attrs["seed"], attrs["seed2"])
    true = ctx.as_dask(true_classes)
    n = attrs["num_sampled"]
    shapes = [((n,), np.int64), (tuple(true.shape), np.float32), ((n,), np.float32)]
    # three one-task arrays computing the same (deterministic) draw, one output each
    return [ctx.delayed(_SampleOutput(i, ctx.op.name, attrs), true, counter, base, shape=s, dtype=dt,
                        meta=np.empty((0,) * len(s), dt))
            for i, (s, dt) in enumerate(shapes)]


class _SampleOutput:
    """One output of a sampler's draw, as a picklable task function."""

    def __init__(self, output, op_name, attrs):
        self.output, self.op_name, self.attrs = output, op_name, attrs

    def __call__(self, true, counter, base):
        return _sample(np.asarray(true), counter, base, op_name=self.op_name, output=self.output, **self.attrs)


register_op("CandidateSampler", _infer, eager=_eager, lower=_lower, run_state=True, stateful=True, num_outputs=3)
not_differentiable("CandidateSampler")


def _sampler(kind, true_classes, num_true, num_sampled, unique, range_max, seed, name, default_name, **extra):
    if range_max <= 0:
        raise ValueError(f"{default_name}: range_max must be positive, got {range_max}")
    true = convert_to_tensor(true_classes, dtype=None if hasattr(true_classes, "dtype") else dtypes.int64)
    seed1, seed2 = get_seed(seed)
    attrs = {"kind": kind, "num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique),
             "range_max": int(range_max), "seed": seed1 or 0, "seed2": seed2 or 0, **extra}
    return tuple(apply_op("CandidateSampler", [true], attrs, name=name, default_name=default_name))


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """Classes drawn from the log-uniform (Zipfian) distribution P(k) = log((k+2)/(k+1)) / log(range_max+1).
    Returns (sampled_candidates, true_expected_count, sampled_expected_count) (see the module doc)."""
    return _sampler("log_uniform", true_classes, num_true, num_sampled, unique, range_max, seed, name,
                    "LogUniformCandidateSampler")


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """Classes drawn uniformly from [0, range_max); returns TF1's three tensors (see the module doc)."""
    return _sampler("uniform", true_classes, num_true, num_sampled, unique, range_max, seed, name,
                    "UniformCandidateSampler")


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, vocab_file="",
                                    distortion=1.0, num_reserved_ids=0, num_shards=1, shard=0, unigrams=(),
                                    seed=None, name=None):
    """Classes drawn with P(k) proportional to unigrams[k] ** distortion (the first
    `num_reserved_ids` classes never). `vocab_file` and sharding are not supported (ValueError)."""
    if vocab_file or num_shards != 1 or shard != 0:
        raise ValueError("fixed_unigram_candidate_sampler: vocab_file and sharding are not supported by dflow; "
                         "pass the counts as `unigrams`")
    unigrams = tuple(float(u) for u in unigrams)
    if len(unigrams) + num_reserved_ids != range_max:
        raise ValueError(f"fixed_unigram_candidate_sampler: {len(unigrams)} unigrams + {num_reserved_ids} reserved "
                         f"ids must equal range_max ({range_max})")
    return _sampler("unigram", true_classes, num_true, num_sampled, unique, range_max, seed, name,
                    "FixedUnigramCandidateSampler", unigrams=unigrams, distortion=float(distortion),
                    num_reserved_ids=int(num_reserved_ids))


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """Every class of [0, num_sampled) as the sampled candidates, each with expected count 1 (TF1's
    AllCandidateSampler, for testing sampled losses against the full softmax). Nothing is random."""
    if num_sampled <= 0:
        raise ValueError(f"all_candidate_sampler: num_sampled must be positive, got {num_sampled}")
    with name_scope(name, "AllCandidateSampler", [true_classes]):
        true = convert_to_tensor(true_classes, dtype=None if hasattr(true_classes, "dtype") else dtypes.int64)
        if true.dtype != dtypes.int64:
            raise TypeError(f"all_candidate_sampler: true_classes must be int64, got {true.dtype.name}")
        if true.shape.ndims not in (None, 2) or (true.shape.ndims == 2 and true.shape[1].value not in (None, num_true)):
            raise ValueError(f"all_candidate_sampler: true_classes must have shape [batch, {num_true}], got "
                             f"{true.shape}")
        sampled = _range(0, int(num_sampled), dtype=dtypes.int64)
        true_expected = ones(shape(true), dtype=dtypes.float32)
        true_expected.set_shape(true.shape)
        return sampled, true_expected, ones([int(num_sampled)], dtype=dtypes.float32)
