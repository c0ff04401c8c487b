"""`dflow graph FILE --format dot|svg [-o OUT]`: a picture of a saved graph, through graphviz.

FILE is a graph file (`tf.train.write_graph`), a meta graph (`.meta`, `Saver.save`,
`export_meta_graph`) or a SavedModel directory (`--tags` picks its meta graph; default the
first). Each op is a box "name / type" inside nested boxes of its name scopes; each edge is a
tensor, labelled with its static shape; control inputs are dashed. `--format dot` writes the DOT
text (no Graphviz program needed); `svg`/`png`/`pdf` run Graphviz's `dot` program.
"""

from __future__ import annotations

import os
import sys

from ..errors import DataLossError, NotFoundError, OpError
from ..io.graph_io import read_graph_def
from ..io.meta_graph import read_meta_graph_file
from ..io.saved_model import read_saved_model

__all__ = ["graph_def_of", "to_dot", "graph_command"]


def graph_def_of(path, tags=None):
    """The GraphDef saved at `path` (graph file, meta graph or SavedModel directory)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        metas = read_saved_model(path).meta_graphs
        if tags:
            wanted = set(tags)
            metas = [m for m in metas if set(m.meta_info_def.get("tags", [])) == wanted]
            if not metas:
                raise NotFoundError(None, None, f"no meta graph with tags {sorted(wanted)} in the SavedModel {path}")
        if not metas:
            raise DataLossError(None, None, f"the SavedModel {path} holds no meta graph")
        return metas[0].graph_def
    if not os.path.exists(path):
        raise NotFoundError(None, None, f"{path}: no such file")
    if path.endswith(".meta"):
        return read_meta_graph_file(path).graph_def
    try:
        return read_graph_def(path)
    except DataLossError:
        return read_meta_graph_file(path).graph_def  # a meta graph under another name


def _shape_text(node, index):
    shapes = node.output_shapes
    if not shapes or index >= len(shapes) or shapes[index] is None:
        return ""
    return "[" + ",".join("?" if d is None else str(d) for d in shapes[index]) + "]"


def to_dot(graph_def, title=None):
    """A graphviz.Digraph of `graph_def`: ops in boxes nested by name scope, tensors as edges."""
    import graphviz

    dot = graphviz.Digraph(name="dflow", graph_attr={"rankdir": "TB", "label": title or "", "fontsize": "12"},
                           node_attr={"shape": "box", "style": "rounded", "fontsize": "10"},
                           edge_attr={"fontsize": "8"})
    nodes = {n.name: n for n in graph_def.node}
    tree = {}  # scope -> {"ops": [...], "children": {...}}

    def scope_of(name):
        return name.split("/")[:-1]

    for n in graph_def.node:
        level = tree
        for part in scope_of(n.name):
            level = level.setdefault(part, {"__ops__": []})
        level.setdefault("__ops__", []).append(n)

    def emit(graph, level, prefix):
        for n in level.get("__ops__", []):
            graph.node(n.name, label=f"{n.name.rsplit('/', 1)[-1]}\\n{n.op}", tooltip=f"{n.name} ({n.op})")
        for part, sub in level.items():
            if part == "__ops__":
                continue
            scope = f"{prefix}/{part}" if prefix else part
            with graph.subgraph(name=f"cluster_{scope}") as c:
                c.attr(label=part, style="rounded,dashed", color="gray50")
                emit(c, sub, scope)

    emit(dot, tree, "")
    for n in graph_def.node:
        for inp in n.input:
            if inp.startswith("^"):
                src = inp[1:]
                if src in nodes:
                    dot.edge(src, n.name, style="dashed", color="gray40")
                continue
            src, _, idx = inp.partition(":")
            if src in nodes:
                dot.edge(src, n.name, label=_shape_text(nodes[src], int(idx or 0)))
    return dot


def graph_command(path, fmt="svg", out=None, tags=None):
    """Writes the picture (or DOT text) of the graph at `path`; returns the exit status."""
    try:
        gd = graph_def_of(path, tags)
    except (OpError, OSError) as e:
        print(f"dflow graph: {type(e).__name__}: {getattr(e, 'message', e)}", file=sys.stderr)
        return 1
    dot = to_dot(gd, title=os.path.basename(os.path.normpath(os.fspath(path))))
    if fmt == "dot":
        data = dot.source.encode()
    else:
        import graphviz

        try:
            data = dot.pipe(format=fmt)
        except graphviz.ExecutableNotFound:
            print(f"dflow graph: --format {fmt} needs Graphviz's `dot` program, which is not installed (e.g. "
                  "`apt install graphviz` or `conda install graphviz`); --format dot writes the DOT text "
                  "without it", file=sys.stderr)
            return 1
    if out is None or out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        with open(out, "wb") as f:
            f.write(data)
        print(f"dflow graph: wrote {out} ({len(gd.node)} ops)", file=sys.stderr)
    return 0
