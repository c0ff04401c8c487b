"""`TextLineDataset(...).batch(B).map(fn)` where fn decodes its batch of lines with `decode_csv`
(#28): the lines' text is parsed a block of about 4 MB at a time (one C pass of pandas' tokenizer,
the next block parsed on a thread while this one's batches are used) and fn runs with its
DecodeCSV outputs fed with each batch's slice of the columns; no bytes object per line is made.

The elements are the ones the stages would make one by one: the same batches (a batch may take
lines of two blocks), the same values (`csv_ops.decode_text` is decode_records' first path, on the
same records), and a batch holding a line that path refuses (a quote, a missing field, a bad
number...) is made as before: its lines through fn, DecodeCSV and its errors in TF1's words
naming the record in the batch, the error for that batch only (ElementError).

Taken when: the map's input is a plain `batch` of a pipeline that reads its lines as text
(`Node.text_blocks`: TextLineDataset of one file at a time, skip, repeat); fn's one argument goes
to a DecodeCSV op (as its records) and nowhere else, its defaults are constants.
"""

from __future__ import annotations

import collections
import os
from concurrent.futures import ThreadPoolExecutor

from ..errors import InvalidArgumentError, OpError
from ..kernels.csv_ops import decode_text
from .batching import BatchNode, _joined
from .node import ElementError, component, int_value

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


def fused_batches(map_node, ctx):
    """The map's elements through the fused path (an iterator), or None when it does not apply."""
    batch = map_node.inputs[0]
    if type(batch) is not BatchNode or not batch.inputs[0].text_blocks:
        return None
    op = _decode_op(map_node.fn)
    if op is None:
        return None
    return _batches(batch, map_node.fn, op, ctx)


_WORKERS = max(1, min(4, os.cpu_count() or 1))  # blocks parsed at once (a block's ~4 MB, twice, each)


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
            columns = _joined([tuple(c[a:b] for c in cols) for _, cols, a, b in pieces])
            fed = dict(zip(outputs, columns))
        else:  # a line the one-pass parser refused: the batch's lines through fn, as unfused
            lines = _joined([(block.lines()[a:b],) for block, _, a, b in pieces])
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
