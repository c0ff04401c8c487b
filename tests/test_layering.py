"""Arrows point down: every import in dflow (module level or inside a function) goes to a module of
the same layer or a lower one, and packages import each other without cycles.

The layer table below is the one place the rule is written down (docs/ARCHITECTURE.md draws it).
A module missing from it fails the test, so a new package is placed deliberately.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "dflow"

# lowest first; a unit is a package (dflow.graph) or a top-level module (dflow.nn)
LAYERS = [
    ["dflow.errors", "dflow.dask_compat", "dflow.devices", "dflow.config", "dflow.version"],
    ["dflow.graph"],
    ["dflow.storage"],
    ["dflow.kernels"],
    ["dflow.state"],
    ["dflow.schedule"],
    ["dflow.io"],
    ["dflow.train"],
    ["dflow.nn", "dflow.losses", "dflow.math", "dflow.regularizers", "dflow.debugging", "dflow.graph_util",
     "dflow.parallel", "dflow.test"],
    ["dflow", "dflow.demo"],
]
LEVEL = {unit: i for i, units in enumerate(LAYERS) for unit in units}


def _modules():
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)
    return out


MODULES = _modules()


def _unit(module):
    """The layer unit of a module: dflow.graph.ops -> dflow.graph; dflow.nn -> dflow.nn."""
    parts = module.split(".")
    if len(parts) >= 2 and ".".join(parts[:2]) in LEVEL:
        return ".".join(parts[:2])
    return module if module in LEVEL else None


def _imports(module):
    """(target module, line, nested) for every dflow import of `module`."""
    path, is_pkg = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    package = module if is_pkg else module.rsplit(".", 1)[0]
    nested_lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    nested_lines.add(sub.lineno)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from . import name` imports a submodule when `name` is one
            targets = [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names]
        else:
            continue
        for t in targets:
            if t == "dflow" or t.startswith("dflow."):
                while t not in MODULES and "." in t:  # `from dflow.graph.ops import Tensor` -> the module
                    t = t.rsplit(".", 1)[0]
                found.append((t, node.lineno, node.lineno in nested_lines))
    return found


def test_every_module_is_in_the_layer_table():
    missing = sorted(m for m in MODULES if _unit(m) is None)
    assert not missing, f"modules in no layer of tests/test_layering.py LAYERS: {missing}"


def test_imports_point_down():
    upward = []
    for module in sorted(MODULES):
        here = _unit(module)
        for target, line, nested in _imports(module):
            there = _unit(target)
            if there is not None and LEVEL[there] > LEVEL[here]:
                where = "inside a function" if nested else "module level"
                upward.append(f"{module} -> {target} (line {line}, {where}): layer {LEVEL[here]} imports "
                              f"layer {LEVEL[there]}")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def _cycles(edges):
    """The strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_cycles_between_packages():
    edges = {}
    for module in MODULES:
        here = _unit(module)
        for target, _, _ in _imports(module):
            there = _unit(target)
            if there is not None and there != here and here != "dflow":
                edges.setdefault(here, set()).add(there)
    assert not _cycles(edges), f"import cycles between packages: {_cycles(edges)}"


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    # the test itself can fail: a lazy import of dflow.schedule from dflow.graph is reported
    fake = tmp_path / "fake.py"
    fake.write_text("def f():\n    from ..schedule import session\n")
    monkeypatch.setitem(MODULES, "dflow.graph.fake", (fake, False))
    found = _imports("dflow.graph.fake")
    assert found == [("dflow.schedule.session", 2, True)]
    assert LEVEL[_unit(found[0][0])] > LEVEL[_unit("dflow.graph.fake")]


def test_modules_within_a_package_import_each_other_without_cycles():
    # module-level and lazy imports alike: the modules of a package form layers of their own (in
    # dflow/kernels a gradient rule that needs an op of a module above its own makes it by its
    # registered type, `apply_op("Sum", ...)`, instead of importing that module)
    cycles = []
    for unit in LEVEL:
        edges = {}
        for module in MODULES:
            if not module.startswith(unit + "."):
                continue
            for target, _, _ in _imports(module):
                if target.startswith(unit + ".") and target != module:
                    edges.setdefault(module, set()).add(target)
        cycles += _cycles(edges)
    assert not cycles, f"import cycles inside a package: {cycles}"
