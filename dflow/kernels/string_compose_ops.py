"""Strings composed from other strings or tensors, TF1's `tf.strings` names: `ngrams` (of dense
string tensors, along the last axis), `unsorted_segment_join`, `format` (tensors printed as TF's
summaries print them) and `unicode_transcode`.

ngrams, segment joins and format need whole rows or whole inputs and run as one task on the
host; transcoding is elementwise (chunk by chunk on Dask). None has a gradient.
"""

from __future__ import annotations

import codecs

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.ops import constant_value
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape
from .common import INT, STRING, apply_op, check_dtype, convert_to_tensor
from .string_ops import _host, _objects
from .whole_task import lower_whole

__all__: list[str] = []


def _strings(x, name):
    return convert_to_tensor(x, dtype=None if hasattr(x, "dtype") else dtypes.string, name=name)


def _b(s):
    return s if isinstance(s, bytes) else str(s).encode("utf-8")


# ---- ngrams ---------------------------------------------------------------------------------------


def _row_ngrams(row, widths, sep, pads, padding_width, preserve_short):
    out = []
    for w in widths:
        p = (w - 1 if padding_width is None else min(padding_width, w - 1)) if pads is not None else 0
        seq = [pads[0]] * p + list(row) + [pads[1]] * p if pads is not None else list(row)
        n = len(seq) - w + 1
        if n <= 0 and preserve_short and len(row):
            out.append(sep.join(seq))
        else:
            out.extend(sep.join(seq[i:i + w]) for i in range(max(n, 0)))
    return out


def _ngrams_count(n, widths, pads, padding_width, preserve_short):
    total = 0
    for w in widths:
        p = (w - 1 if padding_width is None else min(padding_width, w - 1)) if pads is not None else 0
        k = n + 2 * p - w + 1
        total += 1 if k <= 0 and preserve_short and n else max(k, 0)
    return total


def _ngrams_eager(xp, data, widths, separator, pad_values, padding_width, preserve_short_sequences):
    x = _host(data)
    rows = x.reshape(-1, x.shape[-1])
    grams = [_row_ngrams([_b(s) for s in r], widths, separator, pad_values, padding_width, preserve_short_sequences)
             for r in rows]
    n = _ngrams_count(x.shape[-1], widths, pad_values, padding_width, preserve_short_sequences)
    out = np.empty((len(rows), n), dtype=object)
    for i, g in enumerate(grams):
        out[i, :] = g
    return out.reshape(x.shape[:-1] + (n,))


def _ngrams_infer(inputs, attrs):
    x = inputs[0]
    check_dtype(x, STRING, "StringNGrams", arg="data")
    if x.shape.ndims == 0:
        raise ValueError(f"ngrams: data must have rank >= 1, got a scalar ({x.name!r})")
    if x.shape.ndims is None:
        return TensorShape(None), dtypes.string
    n = x.shape[-1].value
    k = None if n is None else _ngrams_count(n, attrs["widths"], attrs["pad_values"], attrs["padding_width"],
                                             attrs["preserve_short_sequences"])
    return TensorShape(x.shape.as_list()[:-1] + [k]), dtypes.string


register_op("StringNGrams", _ngrams_infer, eager=_ngrams_eager, lower=lower_whole(_ngrams_eager))
not_differentiable("StringNGrams")


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None, preserve_short_sequences=False,
           name=None):
    """The n-grams of each row (last axis) of a dense string tensor, joined with `separator`, for each
    width in `ngram_width` (an int or a list: outputs concatenated). `pad_values` (a string or a pair)
    pads both ends with `padding_width` (default width - 1) values. dflow takes dense tensors, not ragged."""
    widths = [int(ngram_width)] if isinstance(ngram_width, (int, np.integer)) else [int(w) for w in ngram_width]
    if not widths or min(widths) < 1:
        raise ValueError(f"ngrams: ngram_width must be positive, got {ngram_width}")
    if pad_values is not None:
        pad_values = (pad_values, pad_values) if isinstance(pad_values, (str, bytes)) else tuple(pad_values)
        if len(pad_values) != 2:
            raise ValueError("pad_values must be a string, tuple of strings, or None.")
        pad_values = tuple(_b(p) for p in pad_values)
    if padding_width is not None and (pad_values is None or padding_width < 1):
        raise ValueError("padding_width must be positive and needs pad_values" if pad_values is not None
                         else "pad_values must be set when padding_width is set")
    return apply_op("StringNGrams", [_strings(data, "data")],
                    {"widths": tuple(widths), "separator": _b(separator), "pad_values": pad_values,
                     "padding_width": None if padding_width is None else int(padding_width),
                     "preserve_short_sequences": bool(preserve_short_sequences)},
                    name=name, default_name="StringNGrams")


# ---- unsorted_segment_join -------------------------------------------------------------------------


def _segment_join_eager(xp, inputs, segment_ids, num_segments, separator):
    x, ids, n = _host(inputs), np.asarray(segment_ids), int(np.asarray(num_segments))
    if x.shape[:ids.ndim] != ids.shape:
        raise InvalidArgumentError(None, None, f"UnsortedSegmentJoin: segment_ids shape {list(ids.shape)} is not a "
                                   f"prefix of inputs shape {list(x.shape)}")
    inner = x.shape[ids.ndim:]
    parts = [[[] for _ in range(int(np.prod(inner, dtype=np.int64)))] for _ in range(n)]
    flat = x.reshape((-1,) + (int(np.prod(inner, dtype=np.int64)),))
    for k, s in enumerate(ids.reshape(-1)):
        if not 0 <= s < n:
            if s < 0:
                continue  # TF drops negative ids
            raise InvalidArgumentError(None, None, f"UnsortedSegmentJoin: segment_ids[{k}] = {s} is out of range "
                                       f"[0, {n})")
        for j, v in enumerate(flat[k]):
            parts[s][j].append(_b(v))
    out = np.empty((n, len(parts[0]) if n else 0), dtype=object)
    for s in range(n):
        for j, p in enumerate(parts[s]):
            out[s, j] = separator.join(p)
    return out.reshape((n,) + inner)


def _segment_join_infer(inputs, attrs):
    x, ids, n = inputs
    check_dtype(x, STRING, "UnsortedSegmentJoin", arg="inputs")
    check_dtype(ids, INT, "UnsortedSegmentJoin", arg="segment_ids")
    c = constant_value(n)
    if x.shape.ndims is None or ids.shape.ndims is None:
        return TensorShape(None), dtypes.string
    return TensorShape([None if c is None else int(c)] + x.shape.as_list()[ids.shape.ndims:]), dtypes.string


register_op("UnsortedSegmentJoin", _segment_join_infer, eager=_segment_join_eager,
            lower=lower_whole(_segment_join_eager))
not_differentiable("UnsortedSegmentJoin")


def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    """Strings of `inputs` joined with `separator` per segment id: [num_segments] + the inner shape;
    empty segments give ""; negative ids are dropped (TF)."""
    return apply_op("UnsortedSegmentJoin", [_strings(inputs, "inputs"), convert_to_tensor(segment_ids, name="ids"),
                                            convert_to_tensor(num_segments, name="num_segments")],
                    {"separator": _b(separator)}, name=name, default_name="UnsortedSegmentJoin")


# ---- format ---------------------------------------------------------------------------------------


def _scalar_text(v):
    if isinstance(v, (bytes, str)):
        return '"' + (v.decode("utf-8", "replace") if isinstance(v, bytes) else v) + '"'
    if isinstance(v, (float, np.floating)):
        return "%g" % v
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    return str(v)


def _summarize(arr, summarize, depth=0):
    """TF's SummarizeValue: nested brackets, `summarize` items from each end of each axis."""
    if arr.ndim == 0:
        return _scalar_text(arr[()])
    n = arr.shape[0]
    idx = list(range(n)) if summarize < 0 or n <= 2 * summarize else \
        list(range(summarize)) + [None] + list(range(n - summarize, n))
    items = ["..." if i is None else _summarize(arr[i], summarize, depth + 1) for i in idx]
    sep = " " if arr.ndim == 1 else "\n" * (arr.ndim - 1) + " " * (depth + 1)
    return "[" + sep.join(items) + "]"


def _format_eager(xp, *tensors, template, placeholder, summarize):
    pieces = template.split(placeholder)
    out = pieces[0]
    for t, rest in zip(tensors, pieces[1:]):
        out += _summarize(np.asarray(_host(t)), summarize) + rest
    return _objects(out.encode("utf-8"))


def _format_infer(inputs, attrs):
    count = attrs["template"].count(attrs["placeholder"])
    if count != len(inputs):
        raise ValueError(f"format: {count} placeholders in the template but {len(inputs)} tensors")
    return TensorShape([]), dtypes.string


register_op("StringFormat", _format_infer, eager=_format_eager, lower=lower_whole(_format_eager))
not_differentiable("StringFormat")


def format(template, inputs, placeholder="{}", summarize=3, name=None):  # noqa: A001 - TF1 name
    """A scalar string: `template` with each `placeholder` replaced by a tensor of `inputs` (one
    tensor or a list), printed as TF prints summaries (`summarize` items from each end; -1: all)."""
    ins = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    return apply_op("StringFormat", [convert_to_tensor(t) for t in ins],
                    {"template": template, "placeholder": placeholder, "summarize": int(summarize)},
                    name=name, default_name="StringFormat")


# ---- unicode_transcode ------------------------------------------------------------------------------

_CODECS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}


def _handler(replacement_char):
    name = f"dflow-replace-{replacement_char}"
    try:
        codecs.lookup_error(name)
    except LookupError:
        codecs.register_error(name, lambda e: (chr(replacement_char), e.end))
    return name


def _transcode(b, input_encoding, output_encoding, errors, replacement_char, replace_control_characters):
    src = _CODECS[input_encoding]
    if errors == "strict":
        try:
            text = b.decode(src)
        except UnicodeDecodeError:
            raise InvalidArgumentError(None, None, f"Invalid formatting on input string ({input_encoding})") from None
    else:
        text = b.decode(src, "ignore" if errors == "ignore" else _handler(replacement_char))
    if replace_control_characters:
        text = "".join(chr(replacement_char) if ord(c) < 32 else c for c in text)
    return text.encode(_CODECS[output_encoding])


def _transcode_infer(inputs, attrs):
    check_dtype(inputs[0], STRING, "UnicodeTranscode", arg="input")
    return inputs[0].shape, dtypes.string


def _transcode_eager(xp, x, **attrs):
    return _objects(np.frompyfunc(lambda b: _transcode(_b(b), **attrs), 1, 1)(_host(x)))


register_op("UnicodeTranscode", _transcode_infer, eager=_transcode_eager, elementwise=True)
not_differentiable("UnicodeTranscode")


def unicode_transcode(input, input_encoding, output_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                      replace_control_characters=False, name=None):
    """Each string re-encoded from `input_encoding` to `output_encoding` (UTF-8, UTF-16-BE,
    UTF-32-BE); invalid input replaced by `replacement_char`, dropped ("ignore") or an
    InvalidArgumentError ("strict")."""
    for enc in (input_encoding, output_encoding):
        if enc not in _CODECS:
            raise ValueError(f"unicode_transcode: encoding must be one of {sorted(_CODECS)}, got {enc!r}")
    if errors not in ("replace", "ignore", "strict"):
        raise ValueError(f"unicode_transcode: errors must be 'replace', 'ignore' or 'strict', got {errors!r}")
    return apply_op("UnicodeTranscode", [_strings(input, "input")],
                    {"input_encoding": input_encoding, "output_encoding": output_encoding, "errors": errors,
                     "replacement_char": int(replacement_char),
                     "replace_control_characters": bool(replace_control_characters)},
                    name=name, default_name="UnicodeTranscode")
