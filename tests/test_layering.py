"""Arrows point down: every import in dflow (module level or inside a function) goes to a module of
the same layer or a lower one, and there are no import cycles, between packages or between the
modules of one package. Imports of dflow sit at the module top: one inside a function or class is a
hidden arrow, allowed only where LAZY_ALLOWED names it with its reason.

The layer table below is the one place the rule is written down (docs/ARCHITECTURE.md draws it).
A module missing from it fails the test, so a new package is placed deliberately. Each check is a
function of a module map, so the self-tests at the bottom can show that it fails on a planted
violation.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "dflow"

# lowest first; a unit is a package (dflow.graph) or a top-level module (dflow.nn)
LAYERS = [
    ["dflow.errors", "dflow.dask_compat", "dflow.devices", "dflow.config", "dflow.version", "dflow.tf1_names",
     "dflow.run_options", "dflow.proto"],
    ["dflow.graph", "dflow.platform"],
    ["dflow.storage"],
    ["dflow.kernels"],
    ["dflow.state"],
    ["dflow.schedule"],
    ["dflow.io", "dflow.data", "dflow.summary", "dflow.saved_model"],
    ["dflow.train", "dflow.eager"],
    ["dflow.nn", "dflow.losses", "dflow.math", "dflow.regularizers", "dflow.debugging", "dflow.graph_util",
     "dflow.parallel", "dflow.test", "dflow.metrics", "dflow.strings", "dflow.image", "dflow.layers", "dflow.sparse",
     "dflow.python_io",
     "dflow.linalg", "dflow.random", "dflow.initializers",
     "dflow.feature_column", "dflow.rnn",
     "dflow.lookup",
     "dflow.signal", "dflow.spectral", "dflow.dtypes",
     "dflow.bitwise",
     "dflow.framework", "dflow.nest", "dflow.queue", "dflow.sets",
     "dflow.metrics_topk",
     "dflow.distributions"],
    ["dflow.estimator", "dflow.contrib", "dflow.keras"],  # contrib.learn wraps the Estimator; Keras's
    # model_to_estimator too
    ["dflow", "dflow.demo", "dflow.compat", "dflow.cli"],
]
LEVEL = {unit: i for i, units in enumerate(LAYERS) for unit in units}
# the bottom layer imports nothing else of dflow, except these
BOTTOM_ALLOWED = {"dflow.config": {"dflow.devices"}}
# function- or class-level imports of dflow modules that stay there, each with why (a cycle it breaks,
# or a heavy path loaded only when used): {importing module: {imported module: reason}}. An entry that
# matches no import fails too, so the list stays true. Optional third-party packages are not dflow
# modules and may be imported where they are used.
LAZY_ALLOWED: dict[str, dict[str, str]] = {}


def _modules(root=ROOT):
    """{dotted name: (path, is_package)} for every dflow/**/*.py."""
    out = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root.parent).with_suffix("")
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


def _where(stack):
    """How an import is reached: 'module level', 'inside a function', 'inside a class', ..."""
    for node in reversed(stack):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return "inside a function"
    for node in reversed(stack):
        if isinstance(node, ast.ClassDef):
            return "inside a class"
    if any(isinstance(node, (ast.If, ast.Try, ast.With)) for node in stack):
        return "module level, conditional"
    return "module level"


def _resolve(target, modules):
    """The module an imported name lives in: dflow.graph.ops.Tensor -> dflow.graph.ops."""
    while target not in modules and "." in target:
        target = target.rsplit(".", 1)[0]
    return target


def _imports(module, modules=None):
    """(target module, line, where) for every dflow import of `module`: `import x`, `from x import
    y` (relative levels resolved; `from . import name` is the submodule when `name` is one) and
    `importlib.import_module("...")` / `__import__("...")` with a literal name, wherever they sit."""
    modules = MODULES if modules is None else modules
    path, is_pkg = modules[module]
    package = module if is_pkg else module.rsplit(".", 1)[0]
    found = []
    for base, names, line, where in _scan(path.read_text(), str(path), package):
        targets = [f"{base}.{n}" if f"{base}.{n}" in modules else base for n in names] if names else [base]
        for t in targets:
            if t == "dflow" or t.startswith("dflow."):
                found.append((_resolve(t, modules), line, where))
    return found


@functools.lru_cache(maxsize=None)
def _scan(text, filename, package):
    """The imports of one module's source, before they are resolved against a module map: (base,
    names taken from it or None, line, where). Cached: every check walks every module, and the
    self-tests run the checks on the real tree again and again."""
    found = []

    def visit(node, stack):
        if isinstance(node, ast.Import):
            found.extend((a.name, None, node.lineno, _where(stack)) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level \
                else node.module or ""
            found.append((base, tuple(a.name for a in node.names), node.lineno, _where(stack)))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                name_arg = node.args[0].value
                target = importlib.util.resolve_name(name_arg, package) if name_arg.startswith(".") else name_arg
                found.append((target, None, node.lineno, _where(stack)))
        for child in ast.iter_child_nodes(node):
            visit(child, stack + [node])

    visit(ast.parse(text, filename), [])
    return tuple(found)


def _unplaced(modules):
    return sorted(m for m in modules if _unit(m) is None)


def _upward(modules):
    """Each import that points up the layer table (or, from the bottom layer, sideways)."""
    out = []
    for module in sorted(modules):
        here = _unit(module)
        if here is None:
            continue
        for target, line, where in _imports(module, modules):
            there = _unit(target)
            if there is None:
                continue
            if LEVEL[there] > LEVEL[here]:
                out.append(f"{module} -> {target} (line {line}, {where}): layer {LEVEL[here]} imports "
                           f"layer {LEVEL[there]}")
            elif LEVEL[here] == 0 and there != here and there not in BOTTOM_ALLOWED.get(here, ()):
                out.append(f"{module} -> {target} (line {line}, {where}): the bottom layer imports "
                           f"nothing else of dflow")
    return out


def _lazy(modules, allowed=None):
    """Each import of a dflow module inside a function or class that `allowed` does not name, and
    each entry of `allowed` that names no such import."""
    allowed = LAZY_ALLOWED if allowed is None else allowed
    out, used = [], set()
    for module in sorted(modules):
        for target, line, where in _imports(module, modules):
            if not where.startswith("inside"):
                continue
            if target in allowed.get(module, {}):
                used.add((module, target))
            else:
                out.append(f"{module} -> {target} (line {line}, {where}): import it at the module top")
    out += [f"LAZY_ALLOWED names {module} -> {target}, an import that is not there"
            for module, targets in sorted(allowed.items()) for target in sorted(targets)
            if (module, target) not in used]
    return out


def _cycles(edges):
    """One cycle per strongly connected component of more than one node (Tarjan), each written as
    'a -> b (line N) -> ... -> a'. `edges` maps node -> {successor: line}."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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
                comps.append(set(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [_a_cycle(comp, edges) for comp in comps]


def _a_cycle(comp, edges):
    """A shortest cycle through the first node of a strongly connected component (breadth first)."""
    start = min(comp)
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges.get(v, ())):
                if w not in comp:
                    continue
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    path.reverse()
                    hops = [f"{a} (line {edges[a][b]})" for a, b in zip(path, path[1:] + [start])]
                    return " -> ".join(hops + [start]) + f"   [cycle among {sorted(comp)}]"
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return str(sorted(comp))


def _package_cycles(modules):
    edges = {}
    for module in modules:
        here = _unit(module)
        if here is None:
            continue
        for target, line, _ in _imports(module, modules):
            there = _unit(target)
            if there is not None and there != here:
                edges.setdefault(here, {}).setdefault(there, line)
    return _cycles(edges)


def _module_cycles(modules):
    """Cycles among the modules of one package (its __init__ included), lazy imports counted. An
    import of a submodule passes through its package's __init__ at run time, but that is Python's
    doing, not an arrow: only a name taken from the __init__ itself is an edge to it."""
    cycles = []
    for unit in LEVEL:
        if unit == "dflow" or not modules.get(unit, (None, False))[1]:
            continue  # a single-module unit (dflow.nn), or the top package: its modules are units
        edges = {}
        for module in modules:
            if module != unit and not module.startswith(unit + "."):
                continue
            for target, line, _ in _imports(module, modules):
                if (target == unit or target.startswith(unit + ".")) and target != module:
                    edges.setdefault(module, {}).setdefault(target, line)
        cycles += _cycles(edges)
    return cycles


def test_every_module_is_in_the_layer_table():
    missing = _unplaced(MODULES)
    assert not missing, f"modules in no layer of tests/test_layering.py LAYERS: {missing}"


def test_imports_point_down():
    upward = _upward(MODULES)
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_no_cycles_between_packages():
    cycles = _package_cycles(MODULES)
    assert not cycles, "import cycles between packages:\n" + "\n".join(cycles)


def test_modules_within_a_package_import_each_other_without_cycles():
    # module-level and lazy imports alike: the modules of a package form layers of their own (in
    # dflow/kernels a gradient rule that needs an op of a module above its own makes it by its
    # registered type, `apply_op("Sum", ...)`, instead of importing that module)
    cycles = _module_cycles(MODULES)
    assert not cycles, "import cycles inside a package:\n" + "\n".join(cycles)


def test_imports_of_dflow_sit_at_module_top():
    # one in a function hides an arrow from the reader of the module's head (and the cycle checks
    # above already count it, so moving it up creates no cycle the tests would miss)
    lazy = _lazy(MODULES)
    assert not lazy, "function- or class-level imports of dflow:\n" + "\n".join(lazy)


# -- the checks can fail: each one sees a violation planted in a copy of the module map


def _new(check, modules):
    """What `check` reports for the planted module map beyond what it reports for the real one."""
    before = check(MODULES)
    return [v for v in check(modules) if v not in before]


def _plant(tmp_path, sources):
    modules = dict(MODULES)
    for name, text in sources.items():
        path = tmp_path / (name.replace(".", "_") + ".py")
        path.write_text(text)
        modules[name] = (path, False)
    return modules


def test_the_checker_sees_a_lazy_upward_import(tmp_path):
    modules = _plant(tmp_path, {"dflow.graph.fake": "def f():\n    if True:\n        from ..schedule import session\n"})
    assert _imports("dflow.graph.fake", modules) == [("dflow.schedule.session", 3, "inside a function")]
    assert _new(_upward, modules) == ["dflow.graph.fake -> dflow.schedule.session (line 3, inside a function): "
                                "layer 1 imports layer 5"]


def test_the_checker_sees_every_import_form(tmp_path):
    text = ("import dflow.kernels.common as c\n"
            "from dflow import nn\n"
            "from .. import __version__\n"
            "from ..graph.ops import Tensor\n"
            "class A:\n    import dflow.train\n"
            "try:\n    from dflow.io import checkpoint\nexcept ImportError:\n    pass\n"
            "def g():\n    import importlib\n    return importlib.import_module('dflow.state.scope')\n")
    modules = _plant(tmp_path, {"dflow.storage.fake": text})
    assert _imports("dflow.storage.fake", modules) == [
        ("dflow.kernels.common", 1, "module level"),
        ("dflow.nn", 2, "module level"),
        ("dflow", 3, "module level"),
        ("dflow.graph.ops", 4, "module level"),
        ("dflow.train", 6, "inside a class"),
        ("dflow.io.checkpoint", 8, "module level, conditional"),
        ("dflow.state.scope", 13, "inside a function"),
    ]
    assert len(_new(_upward, modules)) == 6  # all but dflow.graph.ops


def test_the_checker_sees_a_bottom_layer_import(tmp_path):
    modules = _plant(tmp_path, {"dflow.errors": "from .devices import DeviceSpec\n"})
    assert _new(_upward, modules) == ["dflow.errors -> dflow.devices (line 1, module level): the bottom layer "
                                "imports nothing else of dflow"]


def test_the_checker_sees_a_cycle_between_packages(tmp_path):
    modules = _plant(tmp_path, {"dflow.nn": "from dflow.losses import x\n",
                                "dflow.losses": "def f():\n    from dflow import nn\n"})
    assert _new(_package_cycles, modules) == ["dflow.losses (line 2) -> dflow.nn (line 1) -> dflow.losses   "
                                        "[cycle among ['dflow.losses', 'dflow.nn']]"]


def test_the_checker_sees_a_cycle_inside_a_package(tmp_path):
    modules = _plant(tmp_path, {"dflow.kernels.aaa": "from .zzz import f\n",
                                "dflow.kernels.zzz": "def f():\n    from . import aaa\n"})
    assert _new(_module_cycles, modules) == ["dflow.kernels.aaa (line 1) -> dflow.kernels.zzz (line 2) -> "
                                       "dflow.kernels.aaa   [cycle among ['dflow.kernels.aaa', "
                                       "'dflow.kernels.zzz']]"]
    # a name taken from the package's own __init__ (which imports every kernel module) closes a cycle
    modules = _plant(tmp_path, {"dflow.kernels.aaa": "def f():\n    from dflow.kernels import array_ops, common\n"
                                                     "    from dflow.kernels import __doc__\n"})
    assert _imports("dflow.kernels.aaa", modules) == [("dflow.kernels.array_ops", 2, "inside a function"),
                                                      ("dflow.kernels.common", 2, "inside a function"),
                                                      ("dflow.kernels", 3, "inside a function")]
    modules["dflow.kernels"] = (tmp_path / "kernels_init.py", True)
    modules["dflow.kernels"][0].write_text("from . import aaa\n")
    assert len(_new(_module_cycles, modules)) == 1


def test_the_checker_sees_an_unplaced_module(tmp_path):
    modules = _plant(tmp_path, {"dflow.newpkg.thing": ""})
    assert _new(_unplaced, modules) == ["dflow.newpkg.thing"]


def test_the_checker_sees_a_function_level_import(tmp_path):
    text = "from .common import apply_op\ndef f():\n    from .math_ops import cast\n    return cast\n" \
           "class A:\n    from . import array_ops\n"
    modules = _plant(tmp_path, {"dflow.kernels.fake": text})
    assert _new(_lazy, modules) == [
        "dflow.kernels.fake -> dflow.kernels.math_ops (line 3, inside a function): import it at the module top",
        "dflow.kernels.fake -> dflow.kernels.array_ops (line 6, inside a class): import it at the module top"]
    allowed = {"dflow.kernels.fake": {"dflow.kernels.math_ops": "a planted reason"},
               "dflow.kernels.gone": {"dflow.kernels.common": "an import that was removed"}}
    assert [v for v in _lazy(modules, allowed) if "fake" in v or "gone" in v] == [
        "dflow.kernels.fake -> dflow.kernels.array_ops (line 6, inside a class): import it at the module top",
        "LAZY_ALLOWED names dflow.kernels.gone -> dflow.kernels.common, an import that is not there"]
