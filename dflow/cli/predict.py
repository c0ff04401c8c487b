"""`dflow predict MODEL --input DATA --output OUT.zarr`: a saved model run over a dataset larger
than memory, its outputs written to a Zarr group.

MODEL is a SavedModel directory (loaded by `tf.saved_model.loader.load`; `--signature` picks the
signature, default "serving_default"), a frozen graph file (`tf.GraphDef().ParseFromString` +
`tf.import_graph_def`; `--inputs`/`--outputs` name its tensors) or a `.meta` file with the
checkpoint `--checkpoint` (default: the latest one beside it). DATA is a Zarr array or group (a
group holds one array per input key), a `.npy` file (memory-mapped) or TFRecord files of
`tf.train.Example` (a path or a glob; features parsed by the input keys).

Zarr and `.npy` data are one `Session.run`: the arrays are fed as they are (chunked by
`--batch-size` rows, default their Zarr chunks) and every output is a `tf.io.write_zarr` sink, so the
run streams chunk by chunk under `--memory-budget` and computes exactly what running the graph on
the whole array does. TFRecords are read batch by batch (`tf.data.TFRecordDataset` +
`tf.io.parse_example`), each batch run and appended. Either way the group is written under a
temporary sibling name and renamed to OUT.zarr only when everything succeeded: a failure leaves no
OUT.zarr and prints one line naming the problem.
"""

from __future__ import annotations

import contextlib
import glob as globlib
import os
import sys

import dask.array as da
import numpy as np
import zarr

from .. import (  # tf.GraphDef & co: whatever formats they read
    Graph,
    GraphDef,
    Session,
    import_graph_def,
)
from ..data import TFRecordDataset
from ..errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    OutOfRangeError,
)
from ..io import FixedLenFeature, parse_example, write_zarr
from ..io.meta_graph import read_meta_graph_file
from ..saved_model import loader, signature_constants, tag_constants
from ..storage import files
from ..train import import_meta_graph, latest_checkpoint
from .progress import TaskProgress
from .run import _local_cluster

__all__ = ["predict", "predict_command"]


# ---- the model --------------------------------------------------------------------------------


def _tensor(graph, name, what):
    """The tensor `name` ("x:0", or "x" for output 0) of `graph`; NotFoundError naming it."""
    full = name if ":" in name else f"{name}:0"
    try:
        return graph.get_tensor_by_name(full)
    except (KeyError, ValueError):
        placeholders = sorted(op.name for op in graph.get_operations() if op.type == "Placeholder")
        raise NotFoundError(None, None, f"the model has no {what} tensor {full!r} (its placeholders: "
                            f"{', '.join(placeholders) or 'none'})") from None


def _key(name):
    """The Zarr / feature key of a tensor name: "x:0" -> "x", "split:1" -> "split_1"."""
    op, _, index = name.partition(":")
    return op if index in ("", "0") else f"{op}_{index}"


def _select(signature, names, graph, what):
    """{key: Tensor} of `names` (signature keys or tensor names), or of the whole signature side."""
    side = {} if signature is None else (signature.inputs if what == "input" else signature.outputs)
    if not names:
        if signature is None:
            raise InvalidArgumentError(None, None, f"this model has no signature: name its {what} tensors with "
                                       f"--{what}s (e.g. --{what}s x:0)")
        return {k: _tensor(graph, info.name, what) for k, info in side.items()}
    out = {}
    for name in names:
        if name in side:
            out[name] = _tensor(graph, side[name].name, what)
        else:
            if side and ":" not in name and not _has_op(graph, name):
                raise NotFoundError(None, None, f"no {what} {name!r} in the signature (it has: "
                                    f"{', '.join(sorted(side))}) nor a tensor of that name in the model")
            out[_key(name)] = _tensor(graph, name, what)
    return out


def _has_op(graph, name):
    try:
        graph.get_operation_by_name(name)
        return True
    except (KeyError, ValueError):
        return False


def load_model(sess, path, signature=None, tags=None, checkpoint=None, inputs=None, outputs=None):
    """Loads MODEL into `sess.graph`; ({input key: Tensor}, {output key: Tensor})."""
    path = os.fspath(path)
    graph = sess.graph
    sig = None
    if os.path.isdir(path):
        try:
            meta = loader.load(sess, tags or [tag_constants.SERVING], path)
        except (OSError, RuntimeError) as e:
            raise NotFoundError(None, None, f"cannot load the SavedModel {path}: {e}") from None
        signatures = getattr(meta, "signature_def", None) or {}
        name = signature or signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        if name not in signatures and (signature or not (inputs and outputs)):
            raise NotFoundError(None, None, f"the SavedModel {path} has no signature {name!r} (it has: "
                                f"{', '.join(sorted(signatures)) or 'none'})")
        sig = signatures.get(name)
    elif not os.path.exists(path):
        raise NotFoundError(None, None, f"{path}: no such model (a SavedModel directory, a frozen graph .pb "
                            "or a .meta file)")
    elif path.endswith(".meta"):
        with graph.as_default():
            saver = import_meta_graph(path)
        prefix = checkpoint or latest_checkpoint(os.path.dirname(os.path.abspath(path)))
        if saver is not None:
            if prefix is None:
                raise NotFoundError(None, None, f"no checkpoint beside {path}: pass --checkpoint PREFIX")
            saver.restore(sess, prefix)
        signatures = getattr(read_meta_graph_file(path), "signature_def", None) or {}
        if signature is not None and signature not in signatures:
            raise NotFoundError(None, None, f"the meta graph {path} has no signature {signature!r} (it has: "
                                f"{', '.join(sorted(signatures)) or 'none'})")
        sig = signatures.get(signature or signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY)
    else:
        graph_def = GraphDef()
        with open(path, "rb") as f:
            graph_def.ParseFromString(f.read())
        with graph.as_default():
            import_graph_def(graph_def, name="")
    return _select(sig, inputs, graph, "input"), _select(sig, outputs, graph, "output")


# ---- the data ---------------------------------------------------------------------------------


def _data_kind(path):
    if path.endswith(".npy"):
        return "npy"
    kind = files.node_kind(path)
    if kind in ("array", "group"):
        return "zarr"
    if kind in ("directory", "empty"):
        raise NotFoundError(None, None, f"{path}: neither a Zarr array nor a Zarr group")
    return "tfrecord"


def _by_key(arrays, keys, where):
    """{input key: array}: one array for one input, else the group's array of each key."""
    if isinstance(arrays, dict):
        missing = [k for k in keys if k not in arrays]
        if missing:
            raise NotFoundError(None, None, f"{where} has no array for the model input "
                                f"{', '.join(map(repr, missing))} (it has: {', '.join(sorted(arrays)) or 'none'})")
        return {k: arrays[k] for k in keys}
    if len(keys) != 1:
        raise InvalidArgumentError(None, None, f"the model has {len(keys)} inputs ({', '.join(keys)}); {where} is one "
                                   "array: give a Zarr group with one array per input")
    return {keys[0]: arrays}


def _array_feeds(path, kind, inputs, batch_size):
    """({input Tensor: dask/zarr array}, rows per batch) of a Zarr or .npy dataset."""
    if kind == "npy":
        try:
            data = np.load(path, mmap_mode="r", allow_pickle=False)
        except FileNotFoundError:
            raise NotFoundError(None, None, f"{path}: no such file") from None
        except ValueError as e:
            raise InvalidArgumentError(None, None, f"{path}: not a .npy array ({e})") from None
        arrays = _by_key(data, list(inputs), path)
    else:
        node = zarr.open(path, mode="r")
        arrays = {k: v for k, v in node.arrays()} if isinstance(node, zarr.Group) else node
        arrays = _by_key(arrays, list(inputs), path)
    rows = {k: a.shape[0] if a.ndim else None for k, a in arrays.items()}
    if None in rows.values() or len(set(rows.values())) > 1:
        raise InvalidArgumentError(None, None, f"{path}: every input needs the same number of rows (first "
                                   f"dimension), got {rows}")
    first = next(iter(arrays.values()))
    if batch_size is None:
        batch_size = first.chunks[0] if kind == "zarr" else None
    feeds = {}
    for key, array in arrays.items():
        if kind == "zarr" and batch_size == array.chunks[0]:
            feeds[inputs[key]] = array  # fed as it is: read lazily, chunk by chunk
        else:
            chunks = (batch_size or "auto",) + tuple(array.shape[1:])
            feeds[inputs[key]] = da.from_zarr(array, chunks=chunks) if kind == "zarr" else \
                da.from_array(array, chunks=chunks, asarray=True)
    batch_size = batch_size or next(iter(feeds.values())).chunks[0][0]
    return feeds, int(batch_size)


def _tfrecord_files(path):
    names = sorted(globlib.glob(path)) if any(c in path for c in "*?[") else [path]
    if not names or not all(os.path.isfile(n) for n in names):
        raise NotFoundError(None, None, f"{path}: no such file (DATA is a Zarr array or group, a .npy file or "
                            "TFRecord files)")
    return names


# ---- writing ----------------------------------------------------------------------------------


def _out_chunks(tensor, batch_size):
    dims = tensor.shape.as_list() if tensor.shape.dims is not None else None
    if not dims:
        return None
    if any(d is None for d in dims[1:]):
        return None  # the dask chunks are kept
    return (batch_size,) + tuple(dims[1:])


def _run_arrays(sess, inputs, outputs, feeds, batch_size, tmp, progress):
    with sess.graph.as_default():
        writes = [write_zarr(t, tmp, key, chunks=_out_chunks(t, batch_size)) for key, t in outputs.items()]
    with TaskProgress() if progress else contextlib.nullcontext():
        results = sess.run(writes, feed_dict=feeds)
    rows = {r["shape"][0] if r["shape"] else 0 for r in results}
    return max(rows) if rows else 0


def _run_tfrecords(sess, inputs, outputs, names, batch_size, tmp, progress):
    spec = {}
    for key, t in inputs.items():
        dims = t.shape.as_list() if t.shape.dims is not None else None
        if not dims or any(d is None for d in dims[1:]):
            raise InvalidArgumentError(None, None, f"input {key!r} ({t.name}) has shape {t.shape}: parsing Examples "
                                       "needs a known shape after the batch dimension")
        spec[key] = FixedLenFeature(dims[1:], t.dtype)
    batch_size = batch_size or 1024
    with sess.graph.as_default():
        serialized = TFRecordDataset(names).batch(batch_size).make_one_shot_iterator().get_next()
        parsed = parse_example(serialized, spec)
    group = zarr.open_group(tmp, mode="w")
    arrays = {}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(unit="row", desc="dflow predict", file=sys.stderr, dynamic_ncols=True)
    rows = 0
    try:
        while True:
            try:
                values = sess.run(parsed)
            except OutOfRangeError:
                break
            results = sess.run(outputs, feed_dict={inputs[k]: values[k] for k in inputs})
            for key, value in results.items():
                value = np.asarray(value)
                if key not in arrays:
                    arrays[key] = group.create_array(key, shape=(0,) + value.shape[1:], dtype=value.dtype,
                                                     chunks=(batch_size,) + value.shape[1:])
                arrays[key].append(value, axis=0)
            n = len(next(iter(values.values())))
            rows += n
            if bar is not None:
                bar.update(n)
    finally:
        if bar is not None:
            bar.close()
    return rows


def predict(model, data, output, signature=None, batch_size=None, scheduler=None, workers=None, memory_budget=None,
            inputs=None, outputs=None, checkpoint=None, tags=None, overwrite=False, progress=False):
    """Runs MODEL over DATA into the Zarr group `output`; {"output", "rows", "arrays"}.

    NotFoundError for a missing model, data, signature, input or tensor; InvalidArgumentError for
    data that does not fit the model (shape, dtype, rows); FailedPreconditionError when `output`
    exists (without `overwrite`, which replaces only a Zarr group). Nothing is at `output` after a
    failure (an existing group is kept)."""
    model, data, output = os.fspath(model), os.fspath(data), os.fspath(output).rstrip("/")
    existing = files.node_kind(output)
    if existing not in ("missing", "empty") and not (overwrite and existing == "group"):
        raise FailedPreconditionError(None, None, f"{output} already exists ({existing}); pass --overwrite to "
                                      "replace a Zarr group" if existing == "group" else
                                      f"{output} already exists and is not a Zarr group; nothing was changed")
    parent = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(parent):
        raise NotFoundError(None, None, f"{parent}: no such directory for {output}")
    files.sweep(parent)  # temporaries of killed predict runs beside it
    with contextlib.ExitStack() as stack:
        if scheduler == "distributed":
            scheduler = stack.enter_context(_local_cluster(workers, memory_budget))
        graph = Graph()
        sess = stack.enter_context(Session(graph=graph, scheduler=scheduler, num_workers=workers,
                                           memory_budget=memory_budget))
        ins, outs = load_model(sess, model, signature, tags, checkpoint, inputs, outputs)
        kind = _data_kind(data)
        tmp = files.temp_path(output, "predict")
        try:
            try:
                if kind == "tfrecord":
                    rows = _run_tfrecords(sess, ins, outs, _tfrecord_files(data), batch_size, tmp, progress)
                else:
                    feeds, batch = _array_feeds(data, kind, ins, batch_size)
                    rows = _run_arrays(sess, ins, outs, feeds, batch, tmp, progress)
            except (ValueError, TypeError) as e:  # a feed the model refuses (TF1's ValueError of Session.run)
                raise InvalidArgumentError(None, None, f"{data} does not fit the model: {e}") from None
            group = zarr.open_group(tmp, mode="a")  # a group even when no row was read
            group.attrs["dflow_predict"] = {"model": os.path.abspath(model), "data": os.path.abspath(data),
                                            "signature": signature, "outputs": {k: t.name for k, t in outs.items()}}
            old = files.swap_in(tmp, output)
        except BaseException:
            files.remove(tmp)
            raise
        if old is not None:
            files.remove(old)
    return {"output": output, "rows": rows, "arrays": sorted(outs)}


def _one_line(e):
    text = " ".join(str(e).split())
    return text if len(text) <= 2000 else text[:2000] + " ..."


def predict_command(args):
    """`dflow predict`'s entry: 0, or 1 with one line on stderr for an error."""
    progress = args.progress if args.progress is not None else sys.stderr.isatty()

    def split(text):
        return [n for n in text.split(",") if n] if text else None

    try:
        result = predict(args.model, args.input, args.output, signature=args.signature, batch_size=args.batch_size,
                         scheduler=args.scheduler, workers=args.workers, memory_budget=args.memory_budget,
                         inputs=split(args.inputs), outputs=split(args.outputs), checkpoint=args.checkpoint,
                         tags=split(args.tags), overwrite=args.overwrite, progress=progress)
    except OpError as e:
        print(f"dflow predict: {type(e).__name__}: {_one_line(e)}", file=sys.stderr)
        return 1
    except (OSError, ValueError, TypeError, KeyError) as e:  # a file or value the model or data refused
        print(f"dflow predict: {type(e).__name__}: {_one_line(e)}", file=sys.stderr)
        return 1
    print(f"dflow predict: wrote {result['rows']} rows of {', '.join(result['arrays'])} to {result['output']}",
          file=sys.stderr)
    return 0
