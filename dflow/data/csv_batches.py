"""CSV lines decoded a block at a time (#28), for the two orders TF1 programs write:

- `TextLineDataset(...).batch(B).map(fn)`, fn decoding its batch of lines with `decode_csv`: fn
  runs with its DecodeCSV outputs fed with each batch's slice of the block's columns;
- `TextLineDataset(...).map(fn).batch(B)`, fn decoding one line and returning (some of) the
  columns as they are (a dict of features and a label): the batches are slices of the columns;
  with other stages after the map (`shuffle`, `repeat`...) the rows go on one by one, no
  Session.run per line.

The lines' text is parsed a block of about 4 MB at a time by `csv_ops.decode_text` (one C pass of
pandas' tokenizer; the next blocks parsed on threads while this one's batches are used); no bytes
object per line is made. The elements are the ones the stages would make one by one: the same
batches (a batch may take lines of two blocks), the same values (decode_text is decode_records'
first path, on the same records), the same errors. A block that path refuses (a quote, a missing
field, a bad number...) is made as unfused: batch then map: each batch holding its lines through
fn (DecodeCSV's error in TF1's words naming the record in the batch, for that batch only); map
then batch: the block through decode_records in one call, or when that fails line by line
through fn, a bad line's error for the batch being gathered (its rows dropped, TF1's batch).

Taken when: the batch is plain (not padded); the lines come from a pipeline that reads them as
text (`Node.text_blocks`: TextLineDataset of one file at a time, skip, repeat); fn's one argument
goes to a DecodeCSV op (as its records) and nowhere else, whose defaults are constants.
"""

from __future__ import annotations

import collections
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import InvalidArgumentError, OpError
from ..kernels.csv_ops import decode_records, decode_text
from .node import ElementError, component, failed, int_value, joined

_ATTRS = ("field_delim", "use_quote_delim", "na_value", "select_cols", "out_types")


def _decode_op(fn):
    """The DecodeCSV op fn applies to its one argument when that is all fn does with it; else None."""
    if fn.returns_dataset or len(fn.args) != 1:
        return None
    arg = fn.args[0]
    users = arg.consumers()
    if len(users) != 1 or users[0].type != "DecodeCSV" or users[0].inputs[0] is not arg or \
            any(t is arg for t in users[0].inputs[1:]) or any(t is arg for t in fn.outputs):
        return None
    op = users[0]
    if any(t.op.type != "Const" for t in op.inputs[1:]):
        return None
    return op


def _decode_only(fn):
    """(DecodeCSV op, the op's output index of each fn output) when fn decodes its one scalar
    argument and returns some of the columns as they are (Identity ops between); else None."""
    op = _decode_op(fn)
    if op is None or fn.args[0].shape.ndims != 0:
        return None
    picks = []
    for t in fn.outputs:
        while t.op.type == "Identity" and t.op is not op:
            t = t.op.inputs[0]
        if t.op is not op:
            return None
        picks.append(t.value_index)
    return op, picks


def fused_rows(batch, ctx):
    """The elements of `batch` (a plain BatchNode) when its input maps lines with a decode-only fn
    (an iterator: TF1's `TextLineDataset(...).map(parse_line).batch(B)`), or None when that does
    not apply."""
    node = batch.inputs[0]
    if not getattr(node, "maps_elements", False) or not node.inputs[0].text_blocks:
        return None
    found = _decode_only(node.fn)
    if found is None:
        return None
    return _rows(batch, found[0], found[1], ctx)


def decoded_elements(map_node, ctx):
    """The elements of a map of lines by a decode-only fn (an iterator: a block decoded at once,
    then row by row, for the stages after it: shuffle, repeat...), or None when that does not
    apply."""
    if not map_node.inputs[0].text_blocks:
        return None
    found = _decode_only(map_node.fn)
    if found is None:
        return None
    return _elements(map_node, found[0], found[1], ctx)


def _elements(map_node, op, picks, ctx):
    for count, rows, results in _decoded(map_node, op, picks, ctx):
        if rows is None:
            yield from results
            continue
        for j in range(count):
            yield tuple(c[j] for c in rows)


def _decoded(map_node, op, picks, ctx):
    """(count, the fn outputs' columns, None) for each block of lines, or (count, None, fn's
    result for each line: values or ElementError) for a block neither the one-pass parser nor
    decode_records (in one call: the same values) takes."""
    fn = map_node.fn
    attrs = {k: op.get_attr(k) for k in _ATTRS}
    defaults = [np.asarray(t.op.get_attr("value")) for t in op.inputs[1:]]
    for block, cols in _parsed(map_node.inputs[0].iterate_text_blocks(ctx), attrs):
        if cols is None:
            try:
                cols = decode_records(block.lines(), defaults, **attrs)
            except InvalidArgumentError:
                cols = None
        if cols is not None:
            yield block.count, tuple(cols[i] for i in picks), None
            continue
        results = []
        for line in block.lines():
            e = np.empty((), dtype=object)
            e[()] = line
            results.append(_mapped(fn, ctx, (e,)))
        yield block.count, None, results


def _rows(batch, op, picks, ctx):
    """Batches of rows of decoded blocks; a block decoded line by line gives each bad line's
    error for the batch being gathered (dropped), as unfused."""
    size = int_value(ctx, batch.size)
    if size < 1:
        raise InvalidArgumentError(None, None, f"batch: batch_size must be positive, got {size}")
    pieces, count = [], 0
    for n, rows, results in _decoded(batch.inputs[0], op, picks, ctx):
        if rows is None:
            rows = [e if failed(e) else tuple(v[None] for v in e) for e in results]
        start = 0
        while start < n:
            if results is not None and failed(rows[start]):  # TF1: the batch being gathered is dropped
                yield rows[start]
                pieces, count, start = [], 0, start + 1
                continue
            take = min(size - count, n - start)
            if results is not None:
                take = next((k for k in range(take) if failed(rows[start + k])), take)
                pieces += rows[start:start + take]
            else:
                pieces.append(tuple(c[start:start + take] for c in rows))
            count, start = count + take, start + take
            if count == size:
                yield joined(pieces)
                pieces, count = [], 0
    if count and not batch.drop:
        yield joined(pieces)


def _mapped(fn, ctx, e):
    try:
        return tuple(component(v) for v in fn(ctx, e))
    except OpError as err:
        return ElementError(err)


def fused_batches(map_node, ctx):
    """The map's elements through the fused path (an iterator), or None when it does not apply
    (the map's input: a plain BatchNode, `plain_batch`)."""
    batch = map_node.inputs[0]
    if not getattr(batch, "plain_batch", False) or not batch.inputs[0].text_blocks:
        return None
    op = _decode_op(map_node.fn)
    if op is None:
        return None
    return _batches(batch, map_node.fn, op, ctx)


_WORKERS = 2 if (os.cpu_count() or 1) > 1 else 1  # blocks parsed at once (~4 MB each; the consumer keeps up with 2)


def _parsed(blocks, attrs):
    """(block, its columns or None) for each text block, the next blocks parsed on threads (the
    tokenizer releases the GIL) while the caller uses this one. A read error (DataLossError...)
    comes after the blocks read before it, as it would unfused."""
    pending, error, blocks = collections.deque(), None, iter(blocks)
    workers = _WORKERS
    with ThreadPoolExecutor(workers, thread_name_prefix="dflow-data-csv") as pool:
        try:
            while error is None:
                try:
                    block = next(blocks)
                except StopIteration:
                    break
                except Exception as e:  # noqa: BLE001 - raised below, in its place
                    error = e
                    break
                pending.append((block, pool.submit(decode_text, block.text(), block.count, **attrs)))
                if len(pending) > workers:
                    b, f = pending.popleft()
                    yield b, f.result()
            while pending:
                b, f = pending.popleft()
                yield b, f.result()
        finally:
            for _, f in pending:
                f.cancel()
    if error is not None:
        raise error


def _batches(batch, fn, op, ctx):
    size = int_value(ctx, batch.size)
    if size < 1:
        raise InvalidArgumentError(None, None, f"batch: batch_size must be positive, got {size}")
    attrs = {k: op.get_attr(k) for k in _ATTRS}
    outputs = op.outputs

    def make(pieces):
        if all(cols is not None for _, cols, _, _ in pieces):
            columns = joined([tuple(c[a:b] for c in cols) for _, cols, a, b in pieces])
            fed = dict(zip(outputs, columns))
        else:  # a line the one-pass parser refused: the batch's lines through fn, as unfused
            lines = joined([(block.lines()[a:b],) for block, _, a, b in pieces])
            fed = dict(zip(fn.args, lines))
        try:
            return tuple(component(v) for v in fn.run_fed(ctx, fed))
        except OpError as err:
            return ElementError(err)

    pieces, count = [], 0
    for block, cols in _parsed(batch.inputs[0].iterate_text_blocks(ctx), attrs):
        n, start = block.count, 0
        while start < n:
            take = min(size - count, n - start)
            pieces.append((block, cols, start, start + take))
            count, start = count + take, start + take
            if count == size:
                yield make(pieces)
                pieces, count = [], 0
    if count and not batch.drop:
        yield make(pieces)
